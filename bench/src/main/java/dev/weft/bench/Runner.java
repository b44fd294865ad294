package dev.weft.bench;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs one benchmark program as a child process, one at a time, and reads its {@link Measurement}. A program that
 * fails, times out or prints no sample yields {@link Outcome.Missing} with the reason and the end of its stderr.
 */
public final class Runner {
    private final Path workDir;
    private final Map<String, String> env;
    private final long timeoutSeconds;

    /**
     * @param workDir        where programs run
     * @param env            variables added to every program's environment
     * @param timeoutSeconds after this long a program is killed and reported as failed
     */
    public Runner(Path workDir, Map<String, String> env, long timeoutSeconds) {
        this.workDir = workDir;
        this.env = Map.copyOf(env);
        this.timeoutSeconds = timeoutSeconds;
    }

    public Outcome run(List<String> command) {
        Path out = null;
        Path err = null;
        try {
            out = Files.createTempFile("weft-bench", ".out");
            err = Files.createTempFile("weft-bench", ".err");
            ProcessBuilder pb = new ProcessBuilder(command).directory(workDir.toFile())
                    .redirectOutput(out.toFile()).redirectError(err.toFile())
                    .redirectInput(new File("/dev/null"));
            pb.environment().putAll(env);
            Process p = pb.start();
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                return new Outcome.Missing("timed out after " + timeoutSeconds + " s");
            }
            if (p.exitValue() != 0) {
                return new Outcome.Missing("exit status " + p.exitValue() + ": " + tail(err));
            }
            try {
                return Measurement.parse(Files.readString(out));
            } catch (IllegalArgumentException e) {
                return new Outcome.Missing(e.getMessage() + ": " + tail(err));
            }
        } catch (IOException e) {
            return new Outcome.Missing("could not run " + command.getFirst() + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Outcome.Missing("interrupted");
        } finally {
            delete(out);
            delete(err);
        }
    }

    /** The last few non-blank lines of a program's stderr, joined. */
    private static String tail(Path err) throws IOException {
        List<String> lines = Files.readAllLines(err).stream().filter(l -> !l.isBlank()).toList();
        return String.join(" / ", lines.subList(Math.max(0, lines.size() - 3), lines.size()));
    }

    private static void delete(Path p) {
        if (p != null) {
            try {
                Files.deleteIfExists(p);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
