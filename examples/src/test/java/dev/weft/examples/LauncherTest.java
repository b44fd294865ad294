package dev.weft.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code bin/weft}'s command line: help, wrong options refused with one line and status 2 before anything is
 * built or started, and the JVM command lines {@code run} starts.
 */
class LauncherTest {
    private static final Path WEFT = Path.of(System.getProperty("user.dir")).getParent().resolve("bin/weft");

    private record Run(int status, String out, String err) {
    }

    private static Run weft(String... args) throws IOException, InterruptedException {
        return weft(WEFT, Map.of(), args);
    }

    private static Run weft(Path launcher, Map<String, String> env, String... args)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("bash", launcher.toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().putAll(env);
        Process p = pb.start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        byte[] err = p.getErrorStream().readAllBytes();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Run(p.exitValue(), new String(out, StandardCharsets.UTF_8), new String(err, StandardCharsets.UTF_8));
    }

    @Test
    void helpListsEveryCommandOnStandardOutput() throws Exception {
        Run r = weft("--help");
        assertThat(r.status()).isZero();
        assertThat(r.out()).contains("weft test", "weft run [-np N]", "weft ir [--target cpu|gpu] [-cp PATH]",
                "weft doctor DIR", "weft timeline DIR",
                "weft bench");
        assertThat(r.err()).isEmpty();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "run -np 0 Pi        | -np needs a positive number of ranks, got '0'",
        "run -np abc Pi      | -np needs a positive number of ranks, got 'abc'",
        "run -np -2 Pi       | -np needs a positive number of ranks, got '-2'",
        "run -np             | -np needs a value",
        "run --comm tcp Pi   | unknown --comm tcp (fake or mpi)",
        "run --mpi lam Pi    | unknown --mpi lam (openmpi or mpich)",
        "run --frob Pi       | unknown option --frob for run",
        "run -J Pi           | -J needs the JVM option joined to it, as in -J-Dweft.check=strict",
        "run --jvm-opt       | --jvm-opt needs a value",
        "run                 | run needs a CLASS",
        "ir                  | ir needs CLASS#METHOD and the SPEC of each argument",
        "ir -cp              | -cp needs a value",
        "frob                | unknown command frob"})
    void aWrongCommandLineIsOneLineAndStatusTwo(String args, String message) throws Exception {
        Run r = weft(args.trim().split(" +"));
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("weft: " + message + " (weft --help for usage)\n");
        assertThat(r.out()).isEmpty();
    }

    @ParameterizedTest
    @CsvSource({"fake", "mpi"})
    void runPassesJvmOptionsToEveryRanksJvm(String comm, @TempDir Path tree) throws Exception {
        Map<String, String> env = builtTreeWithCommandsThatPrintTheirArguments(tree);
        Run r = weft(tree.resolve("bin/weft"), env, "run", "-np", "2", "--comm", comm, "--mpi", "openmpi",
                "-J-Dweft.check=strict", "--jvm-opt", "-Xmx3g", "-cp", tree.resolve("classes").toString(),
                "-J-Dweft.x=a b", "com.example.App", "arg");
        assertThat(r.status()).as(r.err()).isZero();
        List<String> argv = r.out().lines().toList();
        int cp = argv.indexOf("-cp");
        assertThat(argv.subList(0, cp)).containsSubsequence(tree.resolve("jdk/bin/java").toString(),
                "-javaagent:" + tree.resolve("tracer/target/weft-tracer-0.jar"), "-Dweft.check=strict", "-Xmx3g",
                "-Dweft.x=a b");
        assertThat(argv.subList(cp, argv.size())).containsSubsequence("com.example.App", "arg")
                .doesNotContain("-Dweft.check=strict", "-Xmx3g");
        if (comm.equals("mpi")) {
            assertThat(argv).containsSubsequence("-np", "2", "env", tree.resolve("jdk/bin/java").toString());
        } else {
            assertThat(argv.subList(cp, argv.size())).contains("dev.weft.backends.cli.FakeRanks");
        }
    }

    /**
     * A copy of the launcher in {@code tree} whose build is up to date (a class path file and no sources), a JDK whose
     * {@code java} and an Open MPI whose {@code mpirun.openmpi} print their arguments one per line, and the class
     * {@code com.example.App} in {@code tree/classes}; returns the environment that selects them.
     */
    private static Map<String, String> builtTreeWithCommandsThatPrintTheirArguments(Path tree) throws IOException {
        Files.createDirectories(tree.resolve("bin"));
        Files.copy(WEFT, tree.resolve("bin/weft"));
        Files.createDirectories(tree.resolve("examples/target"));
        Files.writeString(tree.resolve("examples/target/weft.classpath"), tree.resolve("weft.jar").toString());
        Files.createDirectories(tree.resolve("tracer/target"));
        Files.createFile(tree.resolve("tracer/target/weft-tracer-0.jar"));
        Files.createDirectories(tree.resolve("classes/com/example"));
        Files.createFile(tree.resolve("classes/com/example/App.class"));
        Files.createDirectories(tree.resolve("jdk/bin"));
        Files.writeString(tree.resolve("jdk/release"), "JAVA_VERSION=\"25\"\n");
        Files.createDirectories(tree.resolve("path"));
        for (Path command : List.of(tree.resolve("jdk/bin/java"), tree.resolve("path/mpirun.openmpi"))) {
            Files.writeString(command, "#!/bin/sh\nprintf '%s\\n' \"$0\" \"$@\"\n");
            Files.setPosixFilePermissions(command, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        return Map.of("JAVA_HOME", tree.resolve("jdk").toString(), "WEFT_AOT", "0",
                "PATH", tree.resolve("path") + ":" + System.getenv("PATH"));
    }
}
