package dev.weft.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code bin/weft}'s command line: help, and wrong options refused with one line and status 2 before anything is
 * built or started.
 */
class LauncherTest {
    private static final Path WEFT = Path.of(System.getProperty("user.dir")).getParent().resolve("bin/weft");

    private record Run(int status, String out, String err) {
    }

    private static Run weft(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("bash", WEFT.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).start();
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
        assertThat(r.out()).contains("weft test", "weft run [-np N]", "[-JOPT | --jvm-opt OPT]", "weft ir [--target cpu|gpu] [-cp PATH]",
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
        "run --jvm-opt       | --jvm-opt needs a value",
        "run -J              | unknown option -J for run",
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
}
