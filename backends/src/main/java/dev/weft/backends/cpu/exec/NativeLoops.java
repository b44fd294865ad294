package dev.weft.backends.cpu.exec;

import dev.weft.backends.cpu.cc.CCompiler;
import dev.weft.spi.Setting;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Fused loops as native code, so that they run at full speed from their first calls instead of after the JIT has
 * compiled them (the MLP training step's fused loops ran in the JVM's profiling tier at 75-90 ns an element for
 * its first tens of steps; docs/performance.md, "Warm-up"). Each fused loop starts as the JVM's
 * ({@link FusedLoopGenerator}) and switches to its C form ({@link CLoopEmitter}) once that is loaded; the two
 * compute the same bits, so when the switch happens changes no result. An executable's loops that are not native
 * yet are prepared when it is built ({@link #prepare}): those whose library is on disk from an earlier run load at
 * once; the rest compile as one library on a background thread, while the JVM's loops run. Loops are shared by
 * the whole JVM (fake ranks compile once).
 *
 * <p>{@link Setting#CC} chooses the compiler ({@link CCompiler}). With none (off, or no {@code cc} on the
 * {@code PATH}) every loop is the JVM's, which {@code WEFT_DEBUG=1} says once; a compiler that fails is a warning
 * on stderr, once, and its loops stay the JVM's.
 */
final class NativeLoops {
    private static final Map<FusedLoopSpec, Tiered> LOOPS = new ConcurrentHashMap<>();
    /** The compilers by the setting's value, so that tests and a changed property pick theirs. */
    private static final Map<String, Optional<CCompiler>> COMPILERS = new ConcurrentHashMap<>();
    private static final AtomicBoolean WARNED = new AtomicBoolean();
    private static final AtomicBoolean TOLD_NONE = new AtomicBoolean();
    /** One background compile at a time: on a machine with few cores, the ranks' own work comes first. */
    private static final ExecutorService BACKGROUND = Executors.newSingleThreadExecutor(
            r -> Thread.ofPlatform().daemon().name("weft-cc").unstarted(r));
    private static final String PLACEHOLDER = "weft_loop";
    /**
     * Elements a call of a loop covers from which it is made native when its executable is built. A smaller loop
     * (from {@link #CALL_MIN}) is made native then only if its library is on disk ({@link #loadIfOnDisk}); else it
     * starts on the JVM, whose code for it costs little, and is made native once it has run {@link #HOT} elements:
     * a tiny program's first call pays neither a compile nor native calls from interpreted code (a 2-16-1 network's
     * 50 training steps: 470 against 330 ms when every loop was made native at once), and a long loop over small
     * vectors (conjugate gradients) still gets native code early.
     */
    static final long PREPARE_MIN = 4096;
    static final long HOT = 1 << 16;
    /**
     * Elements from which a call counts toward {@link #HOT}: a call of 4 elements costs 5 ns in C2's code and about
     * 150 in a native call's checks (a compiled {@code x+1} on {@code f32[4]}: 137 against 294 ns a call).
     */
    static final long CALL_MIN = 128;

    private NativeLoops() {
    }

    /** The loop of {@code spec}: the JVM's, made native by {@link #prepare} when a C compiler is configured. */
    static FusedLoop loop(FusedLoopSpec spec) {
        Optional<CCompiler> cc = compiler();
        if (cc.isEmpty()) {
            return FusedLoopGenerator.loop(spec);
        }
        return LOOPS.computeIfAbsent(spec, s -> new Tiered(s, cc.get()));
    }

    /**
     * The loop of {@code spec} when it will run as native code (a compiler is configured and every op of it has a
     * C form); else empty, and the caller keeps its own kernels. For ops the executor would otherwise run one kernel
     * call at a time, which the JIT compiles late.
     */
    static Optional<FusedLoop> nativeOnly(FusedLoopSpec spec) {
        FusedLoop loop = loop(spec);
        return loop instanceof Tiered t && t.key != null ? Optional.of(loop) : Optional.empty();
    }

    /**
     * Makes {@code loops} (of one executable) native: those on disk now, the rest as one library compiled in the
     * background. Loops already native, being compiled, or without a C form are left as they are.
     */
    static void prepare(List<FusedLoop> loops) {
        List<Tiered> missing = loadOrClaim(loops);
        if (!missing.isEmpty()) {
            BACKGROUND.execute(() -> compile(missing.getFirst().compiler, missing));
        }
    }

    /**
     * Makes {@code loops}, one executable's loops left on the JVM when it was built (small, with no library on disk),
     * siblings: the first of them to run hot ({@link #HOT}) makes them all native, in one compile. Their calls come
     * at the same rate, so they run hot together, and each compile is a run of the C compiler (the MLP training
     * step's seven small loops, made native one by one, were seven compiles of 0.1-0.3 s of a core each beside the
     * ranks on a machine with no libraries yet). A loop keeps the siblings of the first executable that groups it.
     */
    static void group(List<FusedLoop> loops) {
        List<Tiered> siblings = loops.stream().filter(l -> l instanceof Tiered t && t.key != null)
                .map(l -> (Tiered) l).distinct().toList();
        if (siblings.size() > 1) {
            siblings.forEach(t -> t.siblings.compareAndSet(null, siblings));
        }
    }

    /**
     * Claims the loops of {@code loops} with a C form that no one has claimed, and loads each whose library is on
     * disk; the rest, to compile.
     */
    private static List<Tiered> loadOrClaim(List<FusedLoop> loops) {
        List<Tiered> missing = new ArrayList<>();
        for (FusedLoop l : loops) {
            if (!(l instanceof Tiered t) || t.key == null || !t.claimed.compareAndSet(false, true)) {
                continue;
            }
            Optional<Path> library = t.compiler.library(t.key);
            if (library.isEmpty() || !t.load(library.get())) {
                missing.add(t);
            }
        }
        return missing;
    }

    /**
     * Makes {@code loop} native now if its library is on disk from an earlier run, compiling nothing: for a loop under
     * {@link #PREPARE_MIN} elements a call, whose JVM code would otherwise be generated and interpreted over the
     * first calls (a training step's 8 small fusions: 10-24 ms each in its first call at 2 ranks). True when the
     * loop is native.
     */
    static boolean loadIfOnDisk(FusedLoop loop) {
        if (!(loop instanceof Tiered t) || t.key == null) {
            return false;
        }
        if (!t.isNative() && !t.claimed.get()) {
            Optional<Path> library = t.compiler.library(t.key);
            if (library.isPresent() && t.claimed.compareAndSet(false, true)) {
                t.load(library.get());
            }
        }
        return t.isNative();
    }

    /** Compiles {@code batch} as one library, then loads each loop of it. */
    static void compile(CCompiler cc, List<Tiered> batch) {
        StringBuilder source = new StringBuilder();
        Map<String, Tiered> functions = new LinkedHashMap<>();
        batch.forEach(t -> functions.putIfAbsent(t.key, t));
        for (Tiered t : functions.values()) {
            source.append('\n').append(t.source(symbol(t.key)));
        }
        long start = System.nanoTime();
        try {
            String key = cc.key(CLoopEmitter.PRELUDE, source.toString());
            String text = CLoopEmitter.PRELUDE + source;
            Path library = cc.compile(key, text);
            for (Tiered t : batch) {
                cc.alias(library, t.key);
                t.load(library);
            }
            cc.done(library);
            if (Setting.DEBUG.on()) {
                System.err.printf("weft: %d fused loop(s) compiled by %s in %.2f s (kept in %s)%n", batch.size(),
                        cc.compiler(), (System.nanoTime() - start) / 1e9,
                        cc.directory() == null ? "none: " + Setting.CACHE_DIR.setBy() + " is off" : cc.directory());
            }
        } catch (IOException | RuntimeException | LinkageError e) {
            // only an optimisation fails: the loops stay the JVM's, and an exiting JVM needs no word of it
            if (!CCompiler.exiting()) {
                warn("could not compile fused loops to native code, they run on the JVM: " + e);
            }
        }
    }

    /** Waits until the background compiles submitted so far have finished (for tests). */
    static void awaitBackground() throws InterruptedException, ExecutionException {
        BACKGROUND.submit(() -> { }).get();
    }

    private static String symbol(String key) {
        return "weft_" + key;
    }

    /** Finds the compiler the setting names now, ahead of the first loop (see {@link NativeLoopLinking}). */
    static void warmUp() {
        compiler();
    }

    /** Whether a C compiler is configured, so that hot fused loops become native code. */
    static boolean hasCompiler() {
        return compiler().isPresent();
    }

    /** The compiler the setting names now, if any (for {@link NativeRowKernels}). */
    static Optional<CCompiler> configuredCompiler() {
        return compiler();
    }

    /** Runs {@code task} on the background compile thread, after the compiles submitted before it. */
    static void inBackground(Runnable task) {
        BACKGROUND.execute(task);
    }

    /** The compiler the setting names now, found once per value. */
    private static Optional<CCompiler> compiler() {
        String value = Objects.requireNonNullElse(Setting.CC.text(), "");
        return COMPILERS.computeIfAbsent(value, v -> {
            Optional<CCompiler> cc;
            try {
                cc = CCompiler.configured();
            } catch (IllegalStateException e) {
                warn(e.getMessage());
                return Optional.empty();
            }
            if (cc.isEmpty() && Setting.DEBUG.on() && TOLD_NONE.compareAndSet(false, true)) {
                System.err.println("weft: fused loops run on the JVM only (" + (v.isEmpty()
                        ? "no cc on the PATH; " + Setting.CC.setBy() + " names a C compiler" : Setting.CC.setBy()
                        + "=" + v) + ")");
            }
            return cc;
        });
    }

    /** Prints {@code message} as a warning, the first time any native-code warning is given. */
    static void warn(String message) {
        if (WARNED.compareAndSet(false, true)) {
            System.err.println("weft: warning: " + message);
        }
    }

    /**
     * The JVM's loop until the native one is loaded; then the native one, which falls back per call. The JVM's loop
     * is generated when first needed: a loop whose library is on disk never needs it, which saves a first call
     * generating its class.
     */
    static final class Tiered implements FusedLoop {
        private final FusedLoopSpec spec;
        private final CCompiler compiler;
        /** The C function with {@link #PLACEHOLDER} as its name, or null when the spec has no C form. */
        private final String function;
        /** The key of the function's library, or null. */
        final String key;
        final AtomicBoolean claimed = new AtomicBoolean();
        private final AtomicBoolean hot = new AtomicBoolean();
        /** The loops made native with this one when it runs hot ({@link #group}), or null. */
        private final AtomicReference<List<Tiered>> siblings = new AtomicReference<>();
        private volatile FusedLoop fast;
        private volatile FusedLoop java;
        /** Elements the JVM's loop has run (racy: a count to compare with {@link #HOT}, not a total). */
        private long work;

        Tiered(FusedLoopSpec spec, CCompiler compiler) {
            this.spec = spec;
            this.compiler = compiler;
            this.function = CLoopEmitter.function(spec, PLACEHOLDER).orElse(null);
            this.key = function == null ? null : compiler.key(CLoopEmitter.PRELUDE, function);
        }

        /** The JVM's loop ({@link FusedLoopGenerator} caches it: every thread gets the same). */
        FusedLoop jvm() {
            FusedLoop j = java;
            if (j == null) {
                j = FusedLoopGenerator.loop(spec);
                java = j;
            }
            return j;
        }

        String source(String name) {
            return function.replaceFirst(PLACEHOLDER, name);
        }

        /** Loads this loop from {@code library}; false when it cannot be (the JVM's loop stays). */
        boolean load(Path library) {
            try {
                SymbolLookup lookup = SymbolLookup.libraryLookup(library, Arena.global());
                MethodHandle handle = NativeLoopLinking.UNBOUND.bindTo(lookup.findOrThrow(symbol(key)));
                fast = new NativeFusedLoop(spec, handle, this::jvm);
                return true;
            } catch (IllegalArgumentException | java.util.NoSuchElementException e) {
                warn("could not load the fused loop library " + library + ", its loops run on the JVM: "
                        + e.getMessage());
                return false;
            }
        }

        /**
         * Counts a call of {@code elements} elements run on the JVM; past {@link #HOT} in all, makes this loop
         * native. Calls under {@link #CALL_MIN} elements do not count: the JIT's code for them soon costs less than
         * a native call's checks.
         */
        private void ranOnTheJvm(long elements) {
            if (elements < CALL_MIN) {
                return;
            }
            long w = work + elements;
            work = w;
            if (w >= HOT && key != null && !claimed.get() && hot.compareAndSet(false, true)) {
                BACKGROUND.execute(this::promote);
            }
        }

        /**
         * On the background thread: loads or compiles this loop and its siblings, where a failure costs only the
         * optimisation.
         */
        private void promote() {
            try {
                List<FusedLoop> batch = new ArrayList<>(List.of(this));
                List<Tiered> others = siblings.get();
                if (others != null) {
                    others.stream().filter(t -> t != this).forEach(batch::add);
                }
                List<Tiered> missing = loadOrClaim(batch);
                if (!missing.isEmpty()) {
                    compile(compiler, missing);
                }
            } catch (RuntimeException | LinkageError e) {
                if (!CCompiler.exiting()) {
                    warn("could not make a fused loop native, it runs on the JVM: " + e);
                }
            }
        }

        /** Whether the native loop runs. */
        boolean isNative() {
            return fast != null;
        }

        @Override
        public void run(MemorySegment[] inputs, long[] inputOffsets, MemorySegment[] results, long[] resultOffsets,
                long from, long to) {
            FusedLoop f = fast;
            if (f == null) {
                ranOnTheJvm(to - from);
                jvm().run(inputs, inputOffsets, results, resultOffsets, from, to);
                return;
            }
            f.run(inputs, inputOffsets, results, resultOffsets, from, to);
        }

        @Override
        public void runRows(MemorySegment[] inputs, long[] inputOffsets, long[] inputRowStrides,
                MemorySegment[] results, long[] resultOffsets, long[] resultRowStrides, long rows, long from,
                long to) {
            FusedLoop f = fast;
            if (f == null) {
                ranOnTheJvm(rows * (to - from));
                jvm().runRows(inputs, inputOffsets, inputRowStrides, results, resultOffsets, resultRowStrides, rows,
                        from, to);
                return;
            }
            f.runRows(inputs, inputOffsets, inputRowStrides, results, resultOffsets, resultRowStrides, rows, from,
                    to);
        }
    }
}
