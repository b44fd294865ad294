package dev.weft.it.mpi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.spi.Setting;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every setting of {@link Setting} that has rules, set to a value it does not accept, in a JVM of its own running
 * {@link SettingsProbe} (a setting may be read once per process): the error names the setting, the value and what
 * it accepts, and never arrives as an {@link ExceptionInInitializerError} or a {@link NoClassDefFoundError}. The
 * environment variable is used when the setting has one, else the system property. The program fails, but for a bad
 * {@code weft.jit.directives}: the agent that reads it must not end the JVM, so it says so and runs without them.
 */
class BadSettingsTest {
    private static final Duration LIMIT = Duration.ofSeconds(120);

    static Stream<Setting> checkedSettings() {
        return Stream.of(Setting.values()).filter(s -> s.badValue() != null);
    }

    @ParameterizedTest
    @MethodSource("checkedSettings")
    void aBadValueIsAnErrorNamingIt(Setting setting, @TempDir Path dir) throws Exception {
        List<String> flags = new ArrayList<>(Mpirun.JVM_FLAGS);
        Map<String, String> env = Map.of();
        String name;
        if (setting.env() != null) {
            name = setting.env();
            env = Map.of(name, setting.badValue());
        } else {
            name = setting.property();
            flags.add("-D" + name + "=" + setting.badValue());
        }
        Mpirun.Result r = Mpirun.plain(LIMIT, flags, env, SettingsProbe.class, dir.toString());
        assertThat(r.output()).as("output:%n%s", r.output())
                .contains(name + " must be " + setting.accepts() + ", got '" + setting.badValue() + "'")
                .doesNotContain("ExceptionInInitializerError", "NoClassDefFoundError");
        if (setting != Setting.JIT_DIRECTIVES) {
            assertThat(r.exitCode()).as("output:%n%s", r.output()).isEqualTo(1);
        }
    }
}
