package dev.weft.backends.cache;

import dev.weft.lowering.Targets;
import dev.weft.lowering.Target;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.ModuleCodec;
import dev.weft.lowering.passes.Pass;
import dev.weft.lowering.passes.StageListener;
import dev.weft.spi.OutputDirectory;
import dev.weft.spi.Setting;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;

/**
 * Optimized modules kept on disk across processes, as JAX's persistent compilation cache keeps executables: the
 * second process to compile a program skips its target's pipeline. The directory is {@link Setting#CACHE_DIR}
 * ({@code -Dweft.cache.dir} or {@code WEFT_CACHE_DIR}; default {@code ~/.cache/weft}; {@code off} for none).
 *
 * <p><b>What is cached, and why.</b> On the CPU a cold compile (a fresh JVM) spends its time lowering the traced
 * graph, in the target's passes, and in building the executor's instructions, where most of the time is the JVM
 * loading and interpreting the executor's classes and the Vector API's for the first time, which no cache can
 * skip; generating and defining the fused loops' classes is a tenth of it. The pipeline is the stage that is both
 * expensive and keyed soundly: its output is a function of its input module and the pipeline's code alone. So an
 * entry maps the lowered module, before the passes, to the module after them. What must match is the lowered
 * module's bytes ({@link ModuleCodec}: every op, attribute, constant, location and effect, so that two modules with
 * the same bytes are the same program; the MLIR text leaves out the locations' methods and the ops' effects) and the
 * <em>identity</em>: the target's name and passes, Weft's version and build ({@code BuildIdentity}), and the JVM's
 * feature version. The key, which names the entry's file, is a 64-bit checksum of both (CRC-32C and CRC-32, which
 * the JVM computes with the processor's instructions even in the interpreter: a SHA-256 of the training step's
 * 39 KB module took 14-35 ms of each rank's first call, 2 ranks on 2 cores); since checksums can collide, an entry
 * holds the lowered module too and is used only when that is byte for byte the one being compiled, so a collision
 * costs a compile, never a wrong module.
 * Tracing runs anyway, lowering too: the lowered module is the key's source. The executor is built from the cached
 * module as from a fresh one, so results are bit-identical, and settings read there ({@code weft.vector},
 * {@code weft.blas}) take effect whatever the entry. A module holding what bytes cannot carry (a custom reduce op's
 * Java function) is not cached. With {@code WEFT_DUMP} set every compile runs the passes, to dump them.
 *
 * <p><b>Entries.</b> One file per key, {@code <key>.weftc}: a magic number, the format, the key, the identity the
 * key was made of (target, passes, build, JVM), the lowered module's bytes, the optimized module's bytes and a
 * CRC-32C of all of these. An entry that is truncated, corrupt, of another format or identity, or does not decode is
 * ignored and replaced by a fresh compile's, with one warning on stderr for the life of this cache (later problems
 * are not reported); one that holds another lowered module is replaced without a warning. Entries are
 * written as {@link OutputDirectory} writes files: to a new file of a random name in the directory, then renamed
 * onto the entry's name, so ranks compiling the same program at once each write a whole entry and a reader sees
 * one of them whole. A directory that cannot be made or written turns the cache off for this process, with one
 * warning. Nothing evicts entries; delete the directory to empty it.
 */
public final class PersistentCompileCache {
    /** The value of {@link Setting#CACHE_DIR} that keeps no cache. */
    public static final String OFF = "off";
    private static final byte[] MAGIC = "WEFTCC\r\n".getBytes(StandardCharsets.US_ASCII);
    /** Changes whenever the entry's layout does. */
    private static final int FORMAT = 2;
    private static final String SUFFIX = ".weftc";
    private static final Map<String, PersistentCompileCache> BY_SETTING = new ConcurrentHashMap<>();

    private final OutputDirectory directory;
    private final AtomicBoolean warned = new AtomicBoolean();
    private volatile boolean disabled;
    private final LongAdder hits = new LongAdder();
    private final LongAdder writes = new LongAdder();

    /** A cache in {@code directory}, made when first written; {@code chosenBy} names what chose it, for messages. */
    public PersistentCompileCache(Path directory, String chosenBy) {
        this.directory = new OutputDirectory(directory, chosenBy);
    }

    /** The cache {@link Setting#CACHE_DIR} names now (one instance per value), or null when it is {@code off}. */
    public static PersistentCompileCache configured() {
        String dir = Setting.CACHE_DIR.text();
        if (dir != null && dir.toLowerCase(Locale.ROOT).equals(OFF)) {
            return null;
        }
        String key = dir == null ? "" : dir;
        return BY_SETTING.computeIfAbsent(key, k -> k.isEmpty()
                ? new PersistentCompileCache(Path.of(System.getProperty("user.home"), ".cache", "weft"),
                        "the default of " + Setting.CACHE_DIR.setBy())
                : new PersistentCompileCache(Path.of(k), Setting.CACHE_DIR.setBy()));
    }

    public Path directory() {
        return directory.path();
    }

    /** Compiles that read their module from this cache so far. */
    public long hits() {
        return hits.sum();
    }

    /** Entries this cache has written so far. */
    public long writes() {
        return writes.sum();
    }

    /**
     * {@code lowered} (a module just lowered for its target) run through its target's pipeline: read from this
     * cache when an entry holds it, else run and written there. Never fails for the cache's sake: an unusable entry
     * or directory costs a warning and the pipeline's run.
     */
    public Module optimize(Module lowered) {
        Target target = Targets.named(lowered.target());
        if (disabled || Setting.DUMP.text() != null) {
            return run(lowered);
        }
        byte[] input = ModuleCodec.encode(lowered).orElse(null);
        if (input == null) {
            return run(lowered);
        }
        String identity = identity(target);
        String key = key(identity, input);
        Path file = directory.path().resolve(key + SUFFIX);
        Module cached = read(file, key, identity, input, target);
        if (cached != null) {
            hits.increment();
            return cached;
        }
        Module optimized = run(lowered);
        ModuleCodec.encode(optimized).ifPresent(output -> write(key, entry(key, identity, input, output)));
        return optimized;
    }

    private static Module run(Module lowered) {
        return Targets.named(lowered.target()).pipeline().run(lowered, StageListener.NONE);
    }

    /** What, besides the lowered module, determines the optimized one. */
    static String identity(Target target) {
        return "target=" + target.name() + " passes="
                + target.pipeline().passes().stream().map(Pass::name).collect(Collectors.joining(","))
                + " weft=" + BuildIdentity.get() + " java=" + Runtime.version().feature();
    }

    /** 16 hex digits: CRC-32C and CRC-32 of the format, {@code identity} and the lowered {@code module}. */
    static String key(String identity, byte[] module) {
        byte[] head = ("weft compile cache " + FORMAT + "\n" + identity + "\n").getBytes(StandardCharsets.UTF_8);
        CRC32C c = new CRC32C();
        CRC32 d = new CRC32();
        c.update(head);
        c.update(module);
        d.update(head);
        d.update(module);
        return HexFormat.of().toHexDigits((c.getValue() << 32) | d.getValue());
    }

    /**
     * The optimized module of entry {@code file}, or null when there is none, it holds another lowered module than
     * {@code input} (a collision of keys), or it is unusable (then warned).
     */
    private Module read(Path file, String key, String identity, byte[] input, Target target) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            if (e instanceof NoSuchFileException || !Files.exists(file)) {
                return null; // no entry, or no directory: writing says why
            }
            warn("the compile cache entry " + file + " cannot be read (" + e.getMessage() + "); compiling afresh");
            return null;
        }
        try {
            Payload p = payload(bytes, key, identity);
            return Arrays.equals(p.input(), input) ? ModuleCodec.decode(p.output(), target.name()) : null;
        } catch (IllegalArgumentException e) {
            warn("ignoring the compile cache entry " + file + ": " + e.getMessage() + "; compiling afresh and"
                    + " replacing it");
            return null;
        }
    }

    /** An entry's lowered module and the optimized one, as bytes. */
    private record Payload(byte[] input, byte[] output) {
    }

    /** The module bytes of entry {@code bytes}, checked. */
    private static Payload payload(byte[] bytes, String key, String identity) {
        if (bytes.length < MAGIC.length + Long.BYTES) {
            throw new IllegalArgumentException("it is truncated (" + bytes.length + " bytes)");
        }
        ByteBuffer b = ByteBuffer.wrap(bytes);
        byte[] magic = new byte[MAGIC.length];
        b.get(magic);
        if (!Arrays.equals(magic, MAGIC)) {
            throw new IllegalArgumentException("it is not a Weft compile cache entry");
        }
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, bytes.length - Long.BYTES);
        if (crc.getValue() != b.getLong(bytes.length - Long.BYTES)) {
            throw new IllegalArgumentException("its checksum does not match (truncated or corrupt)");
        }
        try {
            int format = b.getInt();
            if (format != FORMAT) {
                throw new IllegalArgumentException("it is of format " + format + ", not " + FORMAT);
            }
            String storedKey = string(b);
            String storedIdentity = string(b);
            if (!storedKey.equals(key) || !storedIdentity.equals(identity)) {
                throw new IllegalArgumentException("it was written for " + storedIdentity + ", not " + identity);
            }
            byte[] input = bytes(b);
            byte[] module = bytes(b);
            if (b.remaining() != Long.BYTES) {
                throw new IllegalArgumentException("its length does not match");
            }
            return new Payload(input, module);
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("it is truncated", e);
        }
    }

    private static String string(ByteBuffer b) {
        return new String(bytes(b), StandardCharsets.UTF_8);
    }

    /** A length, then that many bytes, which must be there: a forged length neither allocates nor reads past. */
    private static byte[] bytes(ByteBuffer b) {
        int n = b.getInt();
        if (n < 0 || n > b.remaining()) {
            throw new IllegalArgumentException("it is truncated");
        }
        byte[] out = new byte[n];
        b.get(out);
        return out;
    }

    /** The bytes of the entry of {@code key}: {@code input} (the lowered module) optimized into {@code module}. */
    static byte[] entry(String key, String identity, byte[] input, byte[] module) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(input.length + module.length + 256);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.write(MAGIC);
            out.writeInt(FORMAT);
            for (String s : new String[] {key, identity}) {
                byte[] b = s.getBytes(StandardCharsets.UTF_8);
                out.writeInt(b.length);
                out.write(b);
            }
            out.writeInt(input.length);
            out.write(input);
            out.writeInt(module.length);
            out.write(module);
            CRC32C crc = new CRC32C();
            byte[] sofar = bytes.toByteArray();
            crc.update(sofar);
            out.writeLong(crc.getValue());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    private void write(String key, byte[] entry) {
        try {
            directory.writeBytes(key + SUFFIX, entry);
            writes.increment();
        } catch (IOException e) {
            disabled = true;
            warn(e.getMessage() + "; compiling without a persistent compile cache");
        }
    }

    /** Says {@code what} on stderr, the first time only. */
    private void warn(String what) {
        if (warned.compareAndSet(false, true)) {
            System.err.println("weft: " + what + " (further compile cache problems are not reported)");
        }
    }
}
