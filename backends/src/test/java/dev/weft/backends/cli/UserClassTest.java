package dev.weft.backends.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** How {@code bin/weft} resolves and starts CLASS, and how it says that it cannot. */
class UserClassTest {
    @Test
    void aClassWithoutAPackageIsTheUsersAndMayHaveAnInstanceMain() throws Throwable {
        UserClass.Entry entry = UserClass.entry("DefaultPackageMain");
        assertThat(entry.method().getDeclaringClass().getName()).isEqualTo("DefaultPackageMain");
        DefaultPackageMainCalls.reset();
        entry.run(new String[] {"a"});
        entry.run(new String[0]);
        assertThat(DefaultPackageMainCalls.count()).isEqualTo(2);
    }

    @Test
    void aStaticMainGetsItsArguments() throws Throwable {
        UserClass.Entry entry = UserClass.entry(StaticMain.class.getName());
        entry.run(new String[] {"x", "y"});
        assertThat(StaticMain.seen).containsExactly("x", "y");
    }

    @Test
    void aMissingClassOrMainIsOneSentence() {
        assertThatThrownBy(() -> UserClass.entry("NoSuchClass")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("class NoSuchClass is not on the class path and is not an example (Pi, Ring, Heat,"
                        + " DataParallel, ...); pass the directory or jar that holds it with -cp");
        assertThatThrownBy(() -> UserClass.entry("com.acme.Nope")).hasMessage("class com.acme.Nope is not on the"
                + " class path; pass the directory or jar that holds it with -cp");
        assertThatThrownBy(() -> UserClass.entry(UserClassTest.class.getName()))
                .hasMessageContaining("has no main method");
    }

    @Test
    void theMpiPreCheckAndFakeRanksSayOneLineAndExitTwo() throws Exception {
        assertThat(java("dev.weft.backends.cli.UserClass", "NoSuchClass")).isEqualTo("2 weft: class NoSuchClass is"
                + " not on the class path and is not an example (Pi, Ring, Heat, DataParallel, ...); pass the"
                + " directory or jar that holds it with -cp\n");
        assertThat(java("dev.weft.backends.cli.UserClass", StaticMain.class.getName())).isEqualTo("0 ");
        assertThat(java("dev.weft.backends.cli.FakeRanks", "2", "com.acme.Nope")).isEqualTo("2 weft: class"
                + " com.acme.Nope is not on the class path; pass the directory or jar that holds it with -cp\n");
    }

    private static String java(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-XX:TieredStopAtLevel=1", "-cp",
                System.getProperty("java.class.path")));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return p.exitValue() + " " + new String(out, StandardCharsets.UTF_8);
    }

    /** A class with a static main. */
    public static final class StaticMain {
        static List<String> seen = List.of();

        public static void main(String[] args) {
            seen = List.of(args);
        }
    }
}
