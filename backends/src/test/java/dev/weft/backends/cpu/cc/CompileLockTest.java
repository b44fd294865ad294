package dev.weft.backends.cpu.cc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.weft.spi.OutputDirectory;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One compile per key however many compile it at once: a compile of a key that another thread or process is
 * compiling waits for that library and takes it, and compiles only when the other made none; a lock file that is a
 * link is never opened through it. The compiler here is a script that counts its runs, then runs {@code cc}.
 */
class CompileLockTest {
    private static final String SOURCE = "int weft_lock_test(int x) { return x + 1; }\n";

    @TempDir
    Path dir;
    private Path runs;
    private CCompiler cc;

    @BeforeEach
    void counting() throws Exception {
        assumeThat(CCompiler.executable("cc")).as("a C compiler").isPresent();
        runs = dir.resolve("runs");
        Files.createFile(runs);
        Path script = dir.resolve("counting-cc");
        Files.writeString(script, "#!/bin/sh\necho run >> '" + runs + "'\nsleep 0.5\nexec cc \"$@\"\n");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        Path loops = dir.resolve("loops");
        cc = new CCompiler(script, new OutputDirectory(loops, "the test"));
    }

    private long compilerRuns() throws Exception {
        return Files.readAllLines(runs).size();
    }

    @Test
    void threadsCompilingOneKeyAtOnceRunTheCompilerOnce() throws Exception {
        String key = cc.key(SOURCE);
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            Callable<Path> compile = () -> cc.compile(key, SOURCE);
            List<Future<Path>> made = pool.invokeAll(List.of(compile, compile, compile));
            for (Future<Path> f : made) {
                assertThat(f.get(60, TimeUnit.SECONDS)).isEqualTo(cc.library(key).orElseThrow());
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(compilerRuns()).isEqualTo(1);
    }

    @Test
    void aKeyAnotherProcessIsCompilingIsWaitedForAndItsLibraryTaken() throws Exception {
        String key = cc.key(SOURCE);
        // a library of that key made the ordinary way, set aside for the other process to put in place
        Path made = new CCompiler(CCompiler.executable("cc").orElseThrow(),
                new OutputDirectory(dir.resolve("elsewhere"), "the test")).compile(key, SOURCE);
        Files.writeString(runs, "");
        Path library = dir.resolve("loops").resolve(key + ".so");
        try (Holder other = holdLock(dir.resolve("loops").resolve("." + key + ".lock"), 1500, made, library)) {
            assertThat(cc.compile(key, SOURCE)).isEqualTo(library);
            // had it not waited for the lock, it would have compiled: the library is there only once the other lets go
            assertThat(compilerRuns()).as("the other process's library, no compile").isZero();
        }
    }

    @Test
    void whenTheOtherProcessMakesNoLibraryTheWaiterCompilesIt() throws Exception {
        String key = cc.key(SOURCE);
        try (Holder other = holdLock(dir.resolve("loops").resolve("." + key + ".lock"), 1000, null, null)) {
            assertThat(cc.compile(key, SOURCE)).isEqualTo(dir.resolve("loops").resolve(key + ".so"));
            assertThat(compilerRuns()).isEqualTo(1);
        }
    }

    /** The other process of a test, ended with it. */
    private record Holder(Process process) implements AutoCloseable {
        @Override
        public void close() throws InterruptedException {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aLockFileThatIsALinkIsNotFollowedAndTheCompileGoesOn() throws Exception {
        String key = cc.key(SOURCE);
        Path loops = dir.resolve("loops");
        Files.createDirectories(loops);
        Path target = dir.resolve("not-a-lock");
        Files.writeString(target, "kept");
        Files.createSymbolicLink(loops.resolve("." + key + ".lock"), target);
        assertThat(cc.compile(key, SOURCE)).isEqualTo(loops.resolve(key + ".so"));
        assertThat(compilerRuns()).isEqualTo(1);
        assertThat(Files.readString(target)).as("the link's target untouched").isEqualTo("kept");
    }

    /**
     * Another JVM that takes the lock of {@code lock}, holds it {@code millis}, then (when {@code from} is not null)
     * moves {@code from} onto {@code to} before it lets go, as a compiling rank does; returns once it holds the lock.
     */
    private Holder holdLock(Path lock, long millis, Path from, Path to) throws Exception {
        Files.createDirectories(lock.getParent());
        Path program = dir.resolve("HoldLock.java");
        Files.writeString(program, """
                import java.nio.channels.FileChannel;
                import java.nio.file.*;
                public class HoldLock {
                    public static void main(String[] a) throws Exception {
                        try (FileChannel c = FileChannel.open(Path.of(a[0]), StandardOpenOption.CREATE,
                                StandardOpenOption.WRITE); var held = c.lock()) {
                            System.out.println("locked");
                            System.out.flush();
                            Thread.sleep(Long.parseLong(a[1]));
                            if (a.length > 2) {
                                Files.move(Path.of(a[2]), Path.of(a[3]), StandardCopyOption.ATOMIC_MOVE);
                            }
                        }
                    }
                }
                """);
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> command = from == null
                ? List.of(java.toString(), program.toString(), lock.toString(), Long.toString(millis))
                : List.of(java.toString(), program.toString(), lock.toString(), Long.toString(millis),
                        from.toString(), to.toString());
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        assertThat(line).as("the other process took the lock").isEqualTo("locked");
        return new Holder(p);
    }
}
