package dev.weft.backends.cpu.cc;

import dev.weft.backends.cache.PersistentCompileCache;
import dev.weft.spi.OutputDirectory;
import dev.weft.spi.Setting;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The system's C compiler, making shared libraries of generated C source, kept on disk by a key: a SHA-256 of the
 * source, the flags, the compiler (its resolved path, size and time) and this machine's CPU, so that a library is
 * only reused by the same compiler for the same CPU ({@code -march=native}). The libraries live in
 * {@code loops/} of the persistent compile cache's directory ({@link Setting#CACHE_DIR}); with that cache
 * {@code off}, each compile has a temporary directory, removed once its library is loaded. A library is written under a random name and renamed
 * onto its key's, so a process always loads a whole file, and a process compiling a key holds a lock that makes
 * other processes wait for its library rather than compile it too ({@link #compile}); a file there is loaded only
 * when the user who runs Weft owns it and no one else may write it.
 *
 * <p>{@link Setting#CC} ({@code weft.cc} / {@code WEFT_CC}) names the compiler: unset, {@code cc} on the
 * {@code PATH}; {@code off}, none.
 */
public final class CCompiler {
    /**
     * No fast-math: IEEE results, no contraction into fused multiply-adds, wrapping integers; {@code sqrt} without
     * {@code errno} so that it is the instruction. 256-bit vectors: with 512-bit ones every load of a stream shifted by
     * an element splits a cache line (the heat stencil's fused loop ran 14% slower than the JVM's, and 12% faster
     * with 256-bit ones).
     */
    static final List<String> FLAGS = List.of("-O3", "-march=native", "-fPIC", "-shared", "-pipe", "-w",
            "-ffp-contract=off", "-fno-math-errno", "-fwrapv", "-fno-strict-aliasing", "-mprefer-vector-width=256");
    private static final long TIMEOUT_SECONDS = 120;
    /** How often a compile waiting for another process's lock looks again. */
    private static final long LOCK_POLL_MILLIS = 10;
    private static final Set<Running> IN_FLIGHT = ConcurrentHashMap.newKeySet();
    private static volatile boolean exiting;

    static {
        // registered when the compiler is first found, long before an exit, so that a compile started late never
        // has to register a hook while the JVM shuts down
        try {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                exiting = true;
                IN_FLIGHT.forEach(Running::abandon);
            }, "weft-cc-cleanup"));
        } catch (IllegalStateException shuttingDown) {
            exiting = true;
        }
    }
    private static final Set<PosixFilePermission> OTHERS_WRITE = Set.of(PosixFilePermission.GROUP_WRITE,
            PosixFilePermission.OTHERS_WRITE);

    private final Path compiler;
    /** Where libraries are kept, or null: each compile then has a directory of its own, removed by {@link #done}. */
    private final OutputDirectory directory;
    private final String identity;
    /** The last prelude {@link #key(String, String)} hashed; racy: a thread may hash one again. */
    private volatile Prefix prefix;

    /**
     * The compiler {@code compiler} (an executable), keeping its libraries in {@code directory}, or with a null
     * directory keeping none.
     */
    public CCompiler(Path compiler, OutputDirectory directory) {
        this.compiler = compiler;
        this.directory = directory;
        this.identity = identity(compiler);
    }

    /**
     * The compiler {@link Setting#CC} names, or empty when it is {@code off} or (unset) no {@code cc} is on the
     * {@code PATH}.
     *
     * @throws IllegalStateException naming the setting when the compiler it names is not an executable
     */
    public static Optional<CCompiler> configured() {
        String named = Setting.CC.text();
        if (named != null && named.toLowerCase(Locale.ROOT).equals("off")) {
            return Optional.empty();
        }
        Optional<Path> found = executable(named == null ? "cc" : named);
        if (found.isEmpty()) {
            if (named != null) {
                throw new IllegalStateException(Setting.CC.setBy() + "=" + named + " is not an executable C compiler"
                        + " (on the PATH or as a path); set it to off to run fused loops on the JVM");
            }
            return Optional.empty();
        }
        return Optional.of(new CCompiler(found.get(), libraries()));
    }

    /** The directory of the compiled libraries under the persistent compile cache, or null when it is off. */
    private static OutputDirectory libraries() {
        PersistentCompileCache cache = PersistentCompileCache.configured();
        return cache == null ? null : new OutputDirectory(cache.directory().resolve("loops"),
                Setting.CACHE_DIR.setBy());
    }

    /** {@code name} as a path, or found on the {@code PATH}, when it is an executable file. */
    public static Optional<Path> executable(String name) {
        if (name.contains("/")) {
            Path p = Path.of(name);
            return Files.isRegularFile(p) && Files.isExecutable(p) ? Optional.of(p) : Optional.empty();
        }
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String dir : path.split(java.io.File.pathSeparator)) {
            if (dir.isEmpty()) {
                continue;
            }
            Path p = Path.of(dir, name);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    public Path compiler() {
        return compiler;
    }

    /** Where libraries are kept, or null when none are. */
    public Path directory() {
        return directory == null ? null : directory.path();
    }

    /** The key of {@code source}: 32 hex digits, a prefix of a SHA-256 of this compiler's identity and the source. */
    public String key(String source) {
        return key("", source);
    }

    /**
     * The key of {@code prelude + rest}, as {@link #key(String)} gives it, with the digest of this compiler's
     * identity and {@code prelude} computed once and copied for each key: every library starts with the same
     * helpers, and the JVM's interpreter computes SHA-256 slowly (a training step's first call hashed 56 KB, two
     * thirds of it the prelude again and again).
     */
    public String key(String prelude, String rest) {
        Prefix p = prefix;
        if (p == null || !p.text().equals(prelude)) {
            MessageDigest digest = sha256();
            digest.update(identity.getBytes(StandardCharsets.UTF_8));
            digest.update(prelude.getBytes(StandardCharsets.UTF_8));
            p = new Prefix(prelude, digest);
            prefix = p;
        }
        MessageDigest digest;
        try {
            digest = (MessageDigest) p.digest().clone();
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException("the JDK's SHA-256 cannot be copied", e);
        }
        digest.update(rest.getBytes(StandardCharsets.UTF_8));
        return HexFormat.of().formatHex(digest.digest()).substring(0, 32);
    }

    /** A digest of this compiler's identity and {@code text}, never updated: {@link #key} updates copies. */
    private record Prefix(String text, MessageDigest digest) {
    }

    /** The library of {@code key} when one is on disk that is safe to load. */
    public Optional<Path> library(String key) {
        if (directory == null) {
            return Optional.empty();
        }
        Path file = directory.path().resolve(key + ".so");
        return isOurs(file) ? Optional.of(file) : Optional.empty();
    }

    /**
     * The library of {@code key}: where libraries are kept, the one on disk once no other process is compiling it
     * (another rank on this node may have made it meanwhile), else {@code source} compiled into it; with none kept,
     * {@code source} compiled into a directory of its own. A compile of a key holds a lock on a file of its own
     * ({@code .KEY.lock}, an {@code fcntl} lock: the system releases it when the process ends, however it ends), and
     * a process that finds it held waits for the library instead of compiling it too:
     * the ranks of a job starting on a machine with no libraries yet compiled each executable's loops once, not once
     * per rank (2 ranks on 2 cores: two compilers beside the two ranks). A lock held longer than a compile may take
     * (two minutes) is passed by, and a failed compile leaves the waiter to compile.
     *
     * @return the library
     * @throws IOException when the JVM is exiting, the directory or the source cannot be written, or the compiler
     *                     fails (with its first lines of output) or runs past two minutes
     */
    public Path compile(String key, String source) throws IOException {
        if (exiting) {
            throw new IOException("the JVM is exiting");
        }
        if (directory == null) {
            return compileNow(key, source);
        }
        directory.prepare();
        FileChannel lockFile;
        try {
            lockFile = FileChannel.open(directory.path().resolve("." + key + ".lock"), StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException notOurs) {
            // another user's file, or a link: no lock, as before there were locks (the rename keeps files whole)
            return compileNow(key, source);
        }
        try (lockFile; FileLock held = awaitLock(lockFile)) {
            Optional<Path> made = library(key);
            return made.isPresent() ? made.get() : compileNow(key, source);
        }
    }

    /**
     * The lock of {@code lockFile} once no other process (or thread of this one) holds it; null when it is still
     * held after a compile's time limit, the file system has no locks (an NFS mount without a lock manager), or the
     * JVM is exiting or the thread interrupted: then the caller compiles beside any holder, and the rename onto the
     * key's name keeps each library whole.
     */
    private static FileLock awaitLock(FileChannel lockFile) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS + 10);
        while (true) {
            try {
                FileLock lock = lockFile.tryLock();
                if (lock != null) {
                    return lock;
                }
            } catch (OverlappingFileLockException thisProcess) {
                // another thread of this JVM compiles the key: wait for it as for another process
            } catch (IOException noLocks) {
                return null;
            }
            if (exiting || System.nanoTime() > deadline) {
                return null;
            }
            try {
                Thread.sleep(LOCK_POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
        }
    }

    private Path compileNow(String key, String source) throws IOException {
        OutputDirectory into = directory != null ? directory
                : new OutputDirectory(Files.createTempDirectory("weft-loops-"), "this compile");
        Path c = into.write(key + ".c", out -> out.write(source));
        Path temporary = into.path().resolve("." + key + "." + Long.toHexString(
                ThreadLocalRandom.current().nextLong()) + ".so");
        List<String> command = new ArrayList<>();
        command.add(compiler.toString());
        command.addAll(FLAGS);
        command.addAll(List.of("-o", temporary.toString(), c.toString(), "-lm"));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        Running running = new Running(p, temporary, directory == null ? into.path() : null);
        IN_FLIGHT.add(running);
        try {
            p.getOutputStream().close();
            byte[] output = p.getInputStream().readAllBytes();
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(compiler + " ran past " + TIMEOUT_SECONDS + " s on " + c);
            }
            if (p.exitValue() != 0 || !Files.isRegularFile(temporary)) {
                String text = new String(output, StandardCharsets.UTF_8).lines().limit(5)
                        .reduce((a, b) -> a + "\n" + b).orElse("");
                throw new IOException(compiler + " failed (exit " + p.exitValue() + ") on " + c + ": " + text);
            }
            Path library = into.path().resolve(key + ".so");
            Files.move(temporary, library, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return library;
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while " + compiler + " compiled " + c, e);
        } finally {
            IN_FLIGHT.remove(running);
            Files.deleteIfExists(temporary);
            if (directory == null && !Files.exists(into.path().resolve(key + ".so"))) {
                removeAll(into.path());
            }
        }
    }

    /**
     * Says that {@code library}, made by {@link #compile}, is loaded: when none are kept its directory is removed
     * (a loaded library needs no file).
     */
    public void done(Path library) {
        if (directory == null) {
            removeAll(library.getParent());
        }
    }

    /**
     * Makes {@code library} also the library of {@code key} (a hard link, else a copy), unless {@code key} has one:
     * one compile of many functions serves each function's key.
     */
    public void alias(Path library, String key) throws IOException {
        if (directory == null) {
            return;
        }
        Path name = directory.path().resolve(key + ".so");
        if (name.equals(library) || Files.exists(name, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try {
            Files.createLink(name, library);
        } catch (FileAlreadyExistsException raced) {
            // another process made it
        } catch (IOException | UnsupportedOperationException noLinks) {
            directory.writeBytes(key + ".so", Files.readAllBytes(library));
        }
    }

    /** A compile under way: a JVM exiting stops it and removes its partial output (and its own directory). */
    private record Running(Process process, Path output, Path directory) {
        void abandon() {
            process.destroyForcibly();
            try {
                process.waitFor(1, TimeUnit.SECONDS);
                Files.deleteIfExists(output);
            } catch (IOException | InterruptedException ignored) {
                // exiting: nothing more to do
            }
            if (directory != null) {
                removeAll(directory);
            }
        }
    }

    /** Whether the JVM is exiting: no compile starts then (its library could not be used). */
    public static boolean exiting() {
        return exiting;
    }

    private static void removeAll(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f);
            }
            Files.deleteIfExists(dir);
        } catch (IOException ignored) {
            // a temporary directory: the system's cleaner removes what is left
        }
    }

    /** A regular file (not a link) owned by this process's user, which nobody else may write. */
    private static boolean isOurs(Path file) {
        try {
            if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
                return false;
            }
            String user = System.getProperty("user.name");
            if (!Files.getOwner(file, LinkOption.NOFOLLOW_LINKS).getName().equals(user)) {
                return false;
            }
            try {
                Set<PosixFilePermission> mode = Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS);
                return mode.stream().noneMatch(OTHERS_WRITE::contains);
            } catch (UnsupportedOperationException noPosix) {
                return true;
            }
        } catch (IOException e) {
            return false;
        }
    }

    /** The resolved compiler's path, size and time, the flags, and the CPU's model and features. */
    private static String identity(Path compiler) {
        StringBuilder b = new StringBuilder();
        try {
            Path real = compiler.toRealPath();
            b.append(real).append(' ').append(Files.size(real)).append(' ')
                    .append(Files.getLastModifiedTime(real).toMillis()).append('\n');
        } catch (IOException e) {
            b.append(compiler).append('\n');
        }
        b.append(String.join(" ", FLAGS)).append('\n').append(System.getProperty("os.name")).append(' ')
                .append(System.getProperty("os.arch")).append('\n');
        try (Stream<String> lines = Files.lines(Path.of("/proc/cpuinfo"))) {
            lines.filter(l -> l.startsWith("model name") || l.startsWith("flags") || l.startsWith("Features")
                    || l.startsWith("CPU part")).distinct().forEach(l -> b.append(l).append('\n'));
        } catch (IOException | UncheckedIOException noCpuInfo) {
            b.append("no /proc/cpuinfo\n");
        }
        return b.toString();
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
