package dev.weft.bench;

import dev.weft.bench.weft.ColdBench;
import dev.weft.bench.weft.TrainBench;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;

/**
 * The benchmark cases. Each runs its Weft program and its references, one program at a time (but the C
 * allreduce under MPI, which Weft's program times in turn with its own), with the same sizes, and returns its
 * table rows. Every program does its own warm-up and timed repetitions and reports seconds
 * per unit of work (call, allreduce, step).
 */
public final class Cases {
    /** Case names in the order they run, as given on the command line. */
    public static final List<String> NAMES = List.of("chain", "matmul", "dispatch", "compile", "allreduce", "heat",
            "cold", "fresh", "late", "eager", "overlap", "train");

    /** Case 9's work on rank 1 before each receive, so that the receive is posted after its send. */
    static final int LATE_RECEIVE_MICROS = 20;

    /** Cold-start processes per kind: each sample is a fresh JVM of one to three seconds. */
    static final int COLD_REPS = 7;

    private static final int RANKS = 2;

    /** Case 11's gradient: 8 MiB of f32. */
    static final int OVERLAP_COUNT = 2 << 20;
    /**
     * Case 11's products: matrices of this order, this many, each a kernel after which the executor lets the
     * allreduce progress; about the allreduce's time together on this machine (2 cores).
     */
    static final int OVERLAP_N = 160;
    static final int OVERLAP_MATMULS = 24;
    /** Case 12: the relative difference allowed between Weft's and PyTorch's f32 loss at the first step. */
    static final double TRAIN_LOSS_TOLERANCE = 1e-5;
    private static final String NOT_COMPARABLE = "Weft on fake ranks (threads of one JVM), not MPI: not compared";

    /**
     * Problem sizes and repetition counts.
     *
     * @param chainN        case 1 vector length
     * @param matmulN       case 2 matrix order
     * @param dispatchCalls case 3 calls per sample
     * @param compileOps    case 4 Tensor calls in the compiled program
     * @param smallIters    case 5 allreduce steps per sample for 8 B
     * @param largeIters    case 5 allreduce steps per sample for 8 MiB
     * @param smallCold     case 5 steps measured cold, right after compiling, for 8 B (in {@link #COLD_WINDOWS})
     * @param largeCold     case 5 steps measured cold for 8 MiB
     * @param heatRows      case 6 grid rows (split over the ranks)
     * @param heatCols      case 6 grid columns
     * @param heatSteps     case 6 steps per sample
     * @param freshCalls    case 8 timed calls per series (cold, then warm)
     * @param trainSteps    case 12 training steps per run, each timed (at least {@link StepSeries#MIN_STEPS})
     * @param reps          timed repetitions per program
     * @param warmup        untimed repetitions before them
     */
    public record Sizes(int chainN, int matmulN, int dispatchCalls, int compileOps, int smallIters, int largeIters,
                        int smallCold, int largeCold, int heatRows, int heatCols, int heatSteps, int freshCalls,
                        int trainSteps, int reps, int warmup) {
        /** The sizes the issue asks for. */
        public static final Sizes FULL = new Sizes(16 << 20, 1024, 50_000, 1000, 10_000, 20, 60_000, 240, 1024, 1024,
                20, 40, 1200, 20, 10);
        /** Small and few, for a check that everything runs: minutes, not tens of minutes. */
        public static final Sizes QUICK = new Sizes(1 << 20, 256, 10_000, 1000, 1000, 2, 6000, 12, 256, 256, 10, 10,
                StepSeries.MIN_STEPS, 3, 1);
    }

    /**
     * Cases 1, 2, 3, 5 and 6 (and their references) warm up this many times longer than the others: microsecond
     * calls need C2 to have compiled the whole call path; the matmul's two BLAS threads and the multi-rank
     * programs' two ranks busy-polling MPI reach their steady state only after the JIT threads that compete with
     * them for the two cores are done, Heat only after the large-buffer pool has been refilled by its first
     * pacing collection, and the chain, which drops a 64 MiB result per call on both cores, only after its first
     * pacing collection has filled the pool with a budget's worth of buffers (~20 calls at the default budget; see
     * {@code NativeMemory}).
     */
    static final int LONG_WARMUP_FACTOR = 10;

    /**
     * The 8 B allreduce and Heat cases warm up this many times longer again: their long warm-up is only half a
     * second to a second of two ranks busy-polling MPI on the two cores, in which C2 has not finished compiling
     * (the allreduce loop then ran at up to twice its steady time per iteration at one rank; Heat's samples ranged
     * from 400 to 3200 steps/s, against 3000-3500 after ten times more). The references get the same warm-up, but
     * mpi4py + NumPy's Heat, which has no JIT to wait for and whose steps take twenty times longer.
     */
    static final int JIT_WARMUP_FACTOR = 10;

    /** Case 5's cold steps are reported in this many windows, in the order they ran. */
    static final int COLD_WINDOWS = 6;

    private final Toolchain tools;
    private final Function<List<String>, Outcome> runner;
    private final Sizes s;

    /**
     * @param tools  the programs' command lines
     * @param runner runs one command line (and reports progress)
     * @param sizes  problem sizes
     */
    public Cases(Toolchain tools, Function<List<String>, Outcome> runner, Sizes sizes) {
        this.tools = tools;
        this.runner = runner;
        this.s = sizes;
    }

    /** The rows of case {@code name}, one of {@link #NAMES}. */
    public List<Row> run(String name) {
        return switch (name) {
            case "chain" -> chain();
            case "matmul" -> matmul();
            case "dispatch" -> dispatch();
            case "compile" -> compile();
            case "allreduce" -> allreduce();
            case "heat" -> heat();
            case "cold" -> cold();
            case "fresh" -> fresh();
            case "late" -> lateReceive();
            case "eager" -> eagerCheck();
            case "overlap" -> overlap();
            case "train" -> train();
            default -> throw new IllegalArgumentException("unknown case " + name + "; cases: " + NAMES);
        };
    }

    private List<Row> chain() {
        String what = "1 chain |sin(x*2+1)*x-0.5| f32[" + s.chainN + "]";
        int warmup = LONG_WARMUP_FACTOR * s.warmup;
        Outcome weft = runner.apply(tools.weft(1, "ChainBench", s.chainN, s.reps, warmup));
        Outcome c = runner.apply(tools.c("chain", s.chainN, s.reps, warmup));
        Outcome numpy = runner.apply(tools.python("chain", s.chainN, s.reps, warmup));
        return List.of(
                row(what, weft, "C gcc -O3 -march=native", c, Unit.TIME, 1e-5,
                        "C: one fused loop, scalar glibc sinf, 1 thread, output buffer reused"),
                row(what, weft, "NumPy", numpy, Unit.TIME, 1e-5, "NumPy: one pass and one temporary per op"));
    }

    private List<Row> matmul() {
        String what = "2 matmul f32[" + s.matmulN + "," + s.matmulN + "]";
        int warmup = LONG_WARMUP_FACTOR * s.warmup;
        Outcome weft = runner.apply(tools.weft(1, "MatmulBench", s.matmulN, s.reps, warmup));
        Outcome numpy = runner.apply(tools.python("matmul", s.matmulN, s.reps, warmup));
        return List.of(row(what, weft, "NumPy a @ b", numpy, Unit.TIME, 1e-9));
    }

    private List<Row> dispatch() {
        String what = "3 dispatch: x+1 on f32[4], per call";
        int warmup = LONG_WARMUP_FACTOR * s.warmup;
        Outcome compiled = runner.apply(tools.weft(1, "DispatchBench", "compiled", s.dispatchCalls, s.reps, warmup));
        Outcome loop = runner.apply(tools.weft(1, "DispatchBench", "loop", s.dispatchCalls, s.reps, warmup));
        Outcome eager = runner.apply(tools.weft(1, "DispatchBench", "eager", s.dispatchCalls, s.reps, warmup));
        List<String> overhead = new ArrayList<>();
        if (compiled instanceof Measurement w && loop instanceof Measurement l) {
            overhead.add("overhead of a compiled call = " + Unit.TIME.format(w.median() - l.median()));
        }
        overhead.add("each call consumes the previous result");
        String tree = "3 dispatch: x+1 on each of a record of four f32[4] (a tree argument and result), per call";
        Outcome record = runner.apply(tools.weft(1, "DispatchBench", "record", s.dispatchCalls, s.reps, warmup));
        Outcome recordLoop = runner.apply(tools.weft(1, "DispatchBench", "recordLoop", s.dispatchCalls, s.reps,
                warmup));
        return List.of(
                row(what, compiled, "plain Java loop on a new float[4]", loop, Unit.TIME, 0, overhead),
                row(what, compiled, "Weft eager Tensor.add", eager, Unit.TIME, 0),
                row(tree, record, "plain Java loop on a new record of four float[4]", recordLoop, Unit.TIME, 0));
    }

    private List<Row> compile() {
        String what = "4 trace+lower+compile, " + s.compileOps + " Tensor calls";
        Outcome weft = runner.apply(tools.weft(1, "CompileBench", s.compileOps, s.reps, s.warmup));
        return List.of(new Row(what, weft, "", new Outcome.Missing("no reference"), Unit.TIME, Optional.empty(), 0,
                List.of("first call per new input shape, including one run on f32[<100]")));
    }

    private List<Row> allreduce() {
        List<Row> rows = new ArrayList<>();
        boolean alongside = tools.weftOnMpi() && tools.noMpi().isEmpty();
        for (int bytes : new int[] {8, 8 << 20}) {
            int count = bytes / 4;
            int iters = bytes == 8 ? s.smallIters : s.largeIters;
            int cold = bytes == 8 ? s.smallCold : s.largeCold;
            int warmup = LONG_WARMUP_FACTOR * s.warmup * (bytes == 8 ? JIT_WARMUP_FACTOR : 1);
            String what = "5 allreduce SUM + scale " + (bytes == 8 ? "8 B" : "8 MiB") + " in Weft.fori, " + RANKS
                    + " ranks, per step";
            String whatCold = what + String.format(Locale.ROOT, ", cold: the first %,d steps after compiling", cold);
            Outcome weft;
            Outcome c;
            Outcome cCold;
            String cNote;
            if (alongside) {
                weft = runner.apply(tools.weft(RANKS, "AllreduceBench", count, iters, s.reps, warmup, cold,
                        COLD_WINDOWS, tools.mpiLibrary("allreduce")));
                c = weft instanceof Measurement m ? m.alongside("C") : new Outcome.Missing("runs inside Weft's job");
                cCold = weft instanceof Measurement m ? m.alongside("C cold")
                        : new Outcome.Missing("runs inside Weft's job");
                cNote = "C's loop runs in Weft's job, in turn with Weft's in every repetition (same rank placement)";
            } else {
                weft = runner.apply(tools.weft(RANKS, "AllreduceBench", count, iters, s.reps, warmup, cold,
                        COLD_WINDOWS));
                c = tools.noMpi().<Outcome>map(Outcome.Missing::new)
                        .orElseGet(() -> runner.apply(tools.mpiC(RANKS, "allreduce", count, iters, s.reps, warmup)));
                cCold = new Outcome.Missing("C's cold windows are timed only inside Weft's MPI job");
                cNote = "C runs as its own MPI job";
            }
            Outcome weftCold = weft instanceof Measurement m ? m.alongside("cold") : weft;
            Outcome py = tools.noMpi4py().<Outcome>map(Outcome.Missing::new).orElseGet(() ->
                    runner.apply(tools.mpiPython(RANKS, "allreduce", count, iters, s.reps, warmup)));
            rows.add(commRow(what, weft, "C MPI_Allreduce + scale", c, Unit.TIME, 0, cNote));
            rows.add(commRow(whatCold, weftCold, "C MPI_Allreduce + scale", cCold, Unit.TIME, 0,
                    "windows of " + cold / COLD_WINDOWS + " steps; shown: median window (min–max), in turn with C's"));
            rows.add(commRow(what, weft, "mpi4py Allreduce + scale", py, Unit.TIME, 0,
                    "mpi4py runs as its own MPI job"));
        }
        return rows;
    }

    private List<Row> heat() {
        String what = String.format(Locale.ROOT, "6 Heat f64[%d,%d], %d ranks, %d steps/sample", s.heatRows,
                s.heatCols, RANKS, s.heatSteps);
        int warmup = JIT_WARMUP_FACTOR * LONG_WARMUP_FACTOR * s.warmup;
        Object[] args = {s.heatRows, s.heatCols, s.heatSteps, s.reps, warmup};
        Object[] pyArgs = {s.heatRows, s.heatCols, s.heatSteps, s.reps, LONG_WARMUP_FACTOR * s.warmup};
        Outcome weft = runner.apply(tools.weft(RANKS, "HeatBench", args));
        Outcome global = runner.apply(tools.weft(RANKS, "HeatGlobalBench", args));
        Outcome c = tools.noMpi().<Outcome>map(Outcome.Missing::new)
                .orElseGet(() -> runner.apply(tools.mpiC(RANKS, "heat", args)));
        Outcome py = tools.noMpi4py().<Outcome>map(Outcome.Missing::new)
                .orElseGet(() -> runner.apply(tools.mpiPython(RANKS, "heat", pyArgs)));
        String whatGlobal = what.replace("6 Heat", "6 HeatGlobal (sharded global grid)");
        Outcome inTurn = global instanceof Measurement m ? m.alongside("Heat") : global;
        return List.of(commRow(what, weft, "C + MPI_Sendrecv", c, Unit.STEPS_PER_SECOND, 1e-9),
                commRow(what, weft, "mpi4py + NumPy", py, Unit.STEPS_PER_SECOND, 1e-9),
                commRow(whatGlobal, global, "Weft Heat (halos by hand)", inTurn, Unit.STEPS_PER_SECOND, 1e-9,
                        "Heat runs in HeatGlobal's job, in turn with it in every repetition"));
    }

    /** Case 7: fresh processes, from {@code bin/weft run} to the first compiled call (see {@link ColdBench}). */
    private List<Row> cold() {
        Outcome run = runner.apply(tools.weft(1, "ColdBench", Math.min(COLD_REPS, s.reps)));
        Function<String, Outcome> series = name -> run instanceof Measurement m ? m.alongside(name) : run;
        String agentNote = "attach before it: " + median(series.apply(ColdBench.ATTACH)) + " by Byte Buddy's attacher"
                + " (a JVM of its own), " + median(series.apply(ColdBench.ATTACH_SELF)) + " in-process with"
                + " -Djdk.attach.allowAttachSelf=true; none with -javaagent, whose premain does this installation";
        return List.of(
                row("7 cold start: bin/weft run -np 1 --comm fake Pi, end to end", run,
                        "the same without the AOT cache (WEFT_AOT=0)", series.apply(ColdBench.NO_ARCHIVE_RUN),
                        Unit.TIME, 0, "fresh processes without the heap options above, median of "
                                + Math.min(COLD_REPS, s.reps)),
                row("7 cold start: java -javaagent:weft-tracer.jar ... Pi, AOT cache",
                        series.apply(ColdBench.JAVA_ARCHIVE), "without the cache", series.apply(ColdBench.JAVA),
                        Unit.TIME, 0),
                new Row("7 cold start: agent installation, Weft.install() once attached", series.apply(ColdBench.AGENT),
                        "", new Outcome.Missing("no reference"), Unit.TIME, Optional.empty(), 0, List.of(agentNote)),
                row("7 cold start: first compiled call of 6 ops on f32[1000], fresh JVM, AOT cache",
                        series.apply(ColdBench.FIRST_CALL_ARCHIVE), "without the cache",
                        series.apply(ColdBench.FIRST_CALL), Unit.TIME, 0,
                        "trace, lower, compile and run |sin(x*2+1)*x-0.5| (ColdStartProbe)"),
                cacheRow(series, "chain", "6 ops on f32[1000]"),
                cacheRow(series, "mlp", "50 gradient steps of a 2-16-1 network"),
                cacheRow(series, "cg", "30 conjugate-gradient steps on f64[48,48]"));
    }

    /** A CompileCacheProbe program's first call with the persistent compile cache warm, against it empty. */
    private static Row cacheRow(Function<String, Outcome> series, String program, String what) {
        Outcome warm = series.apply(ColdBench.warmCache(program));
        Outcome empty = series.apply(ColdBench.emptyCache(program));
        String share = warm instanceof Measurement w && empty instanceof Measurement e
                ? String.format(Locale.ROOT, "the second process's first call takes %.0f%% of the first's",
                        100 * w.median() / e.median())
                : "not measured";
        return row("7 cold start: first compiled call, persistent compile cache warm: " + program + " (" + what + ")",
                warm, "the cache empty (the process before)", empty, Unit.TIME, 0,
                "two fresh JVMs on one new WEFT_CACHE_DIR, AOT cache; " + share);
    }

    private static String median(Outcome o) {
        return o instanceof Measurement m ? Unit.TIME.format(m.median()) : "not measured";
    }

    /**
     * Case 8: case 1's chain in a user's loop that drops each result, plain (the garbage collector frees the
     * results), with a scope per call, and donating each result to the next call; against the C loop (which reuses
     * one output buffer) and against the bandwidth limit: a C pass over the same bytes on two threads that only
     * scales (bench/c/stream.c). The notes give each series' median, p90 and mean, cold and warm, and the ratio of
     * means to the bandwidth limit.
     */
    private List<Row> fresh() {
        String what = "8 fresh-result loop: chain f32[" + s.chainN + "], " + s.freshCalls + " calls, ";
        Outcome c = runner.apply(tools.c("chain", s.chainN, s.freshCalls, s.warmup));
        Outcome stream = runner.apply(tools.c("stream", s.chainN, s.freshCalls, s.warmup));
        List<Row> rows = new ArrayList<>();
        for (String[] mode : new String[][] {
            {"plain", "y = chain(x), result dropped"},
            {"scope", "each call in a Weft.scope()"},
            {"donate", "y = chainInto(x, y.donate())"}}) {
            Outcome weft = runner.apply(tools.weft(1, "FreshLoopBench", mode[0], s.chainN, s.freshCalls, s.warmup));
            rows.add(row(what + mode[1], weft, "C gcc -O3 -march=native", c, Unit.TIME, 1e-5,
                    "C: one fused loop, output buffer reused"));
            List<String> notes = new ArrayList<>(List.of("C: y = x * 0.5 on 2 threads, output buffer reused: the"
                    + " chain's memory traffic without its arithmetic"));
            if (weft instanceof Measurement w && stream instanceof Measurement b) {
                notes.add(String.format(Locale.ROOT, "means: %s against %s, %.2fx the bandwidth limit",
                        Unit.TIME.format(mean(w)), Unit.TIME.format(mean(b)), mean(b) / mean(w)));
            }
            rows.add(row(what + mode[1], weft, "bandwidth limit, C 2 threads", stream, Unit.TIME, 0, notes));
        }
        return rows;
    }

    /**
     * Case 9: blocking sends whose receives are posted late, on two fake ranks, against the same program on two MPI
     * ranks: how soon a fake rank blocked in a send wakes when its receive is posted.
     */
    private List<Row> lateReceive() {
        String what = String.format(Locale.ROOT, "9 late receive: send f32[2], received %d µs later, 2 fake ranks,"
                + " per message", LATE_RECEIVE_MICROS);
        int messages = Math.max(100, s.dispatchCalls / 100);
        Object[] args = {messages, LATE_RECEIVE_MICROS, s.reps, s.warmup};
        Outcome fake = runner.apply(tools.weftFake(RANKS, "LateReceiveBench", args));
        Outcome mpi = tools.noMpi().<Outcome>map(Outcome.Missing::new)
                .orElseGet(() -> tools.weftOnMpi() ? runner.apply(tools.weft(RANKS, "LateReceiveBench", args))
                        : new Outcome.Missing("bin/weft bench --comm fake: no MPI run"));
        return List.of(row(what, fake, "the same on 2 MPI ranks", mpi, Unit.TIME, 0,
                "both with the schedule check on (each message travels with its envelope)"));
    }

    /**
     * Case 10: what the schedule check adds to an eager 8 B allreduce on two MPI ranks: the runtime's allreduce with
     * and without the check, a user's {@code Comm.allreduce}, and C's loop of case 5, in turn in one job.
     */
    private List<Row> eagerCheck() {
        String what = "10 eager allreduce SUM + scale 8 B, " + RANKS + " ranks, per step";
        int warmup = LONG_WARMUP_FACTOR * JIT_WARMUP_FACTOR * s.warmup;
        int iters = Math.max(100, s.smallIters / 10);
        boolean alongside = tools.weftOnMpi() && tools.noMpi().isEmpty();
        Outcome weft = alongside
                ? runner.apply(tools.weft(RANKS, "EagerAllreduceBench", 2, iters, s.reps, warmup,
                        tools.mpiLibrary("allreduce")))
                : runner.apply(tools.weft(RANKS, "EagerAllreduceBench", 2, iters, s.reps, warmup));
        Function<String, Outcome> series = name -> weft instanceof Measurement m ? m.alongside(name) : weft;
        Outcome c = alongside ? series.apply("C") : new Outcome.Missing("C's loop runs only inside Weft's MPI job");
        String inTurn = "in turn in every repetition of one job";
        return List.of(
                commRow(what.replace("10 eager", "10 runtime") + ", schedule check before each",
                        series.apply("checked"), "the same without the check", series.apply("unchecked"),
                        Unit.TIME, 0, inTurn, "Communicator.allreduce on native buffers: the check's own cost"),
                commRow(what + ", Comm.allreduce(x).mul(s) (checked)", weft, "C MPI_Allreduce + scale", c,
                        Unit.TIME, 0, inTurn));
    }

    /**
     * Case 11: a compiled step that allreduces an 8 MiB gradient while it multiplies matrices on other data, with
     * {@code iallreduce} started before the products and waited after them, against the same step with a blocking
     * {@code allreduce}, in turn in one job; then the step's parts alone (see {@code OverlapBench}).
     */
    private List<Row> overlap() {
        String products = String.format(Locale.ROOT, "%d matmuls f32[%d,%d]", OVERLAP_MATMULS, OVERLAP_N, OVERLAP_N);
        String what = "11 overlap: iallreduce SUM f32[2M] (8 MiB) during " + products + ", " + RANKS + " ranks, per step";
        Outcome weft = runner.apply(tools.weft(RANKS, "OverlapBench", OVERLAP_COUNT, OVERLAP_N, OVERLAP_MATMULS,
                s.reps, LONG_WARMUP_FACTOR * s.warmup));
        Function<String, Outcome> series = name -> weft instanceof Measurement m ? m.alongside(name) : weft;
        Outcome c = tools.noMpi().<Outcome>map(Outcome.Missing::new).orElseGet(() -> runner.apply(tools.mpiC(RANKS,
                "overlap", OVERLAP_COUNT, OVERLAP_N, OVERLAP_MATMULS, s.reps, LONG_WARMUP_FACTOR * s.warmup)));
        Outcome cBlocking = c instanceof Measurement m ? m.alongside("blocking") : c;
        String inTurn = "in turn in every repetition of one job";
        return List.of(
                commRow(what, weft, "the same step with a blocking allreduce", series.apply("blocking"), Unit.TIME, 0,
                        inTurn, "the executor tests the request between the products (MPI_Test); target: at most"
                                + " 0.7 of the blocking step"),
                // what overlap this MPI gives a C program on this machine: the bound for Weft's first row
                commRow("11 overlap: C, MPI_Iallreduce during OpenBLAS sgemm products, " + products, c,
                        "C, the same step with a blocking MPI_Allreduce", cBlocking, Unit.TIME, 0, inTurn,
                        "bench/c/overlap.c: MPI_Test after every product, one BLAS thread per rank"),
                commRow("11 overlap: the products alone, " + products, series.apply("compute"),
                        "the blocking allreduce alone", series.apply("allreduce"), Unit.TIME, 0, inTurn),
                commRow("11 overlap: iallreduce then wait at once, 8 MiB", series.apply("iallreduce"),
                        "the blocking allreduce alone", series.apply("allreduce"), Unit.TIME, 0, inTurn));
    }

    /**
     * Case 12: a data-parallel MLP training step written with Weft's API ({@code TrainBench}) against PyTorch's
     * ({@code bench/python/train.py}), on {@value #RANKS} ranks (DistributedDataParallel, gloo) and on one, both
     * from the parameters and data {@code TrainData} writes once; every step timed, split by {@link StepSeries}.
     */
    private List<Row> train() {
        String dir = tools.out("train").toString();
        Outcome data = runner.apply(tools.weft(1, "TrainData", dir, RANKS));
        List<Row> rows = new ArrayList<>();
        for (int ranks : new int[] {RANKS, 1}) {
            Outcome weft = data instanceof Outcome.Missing(String why)
                    ? new Outcome.Missing("TrainData could not write the inputs: " + why)
                    : runner.apply(tools.weft(ranks, "TrainBench", dir, s.trainSteps));
            Outcome donated = data instanceof Outcome.Missing ? new Outcome.Missing("no inputs")
                    : runner.apply(tools.weft(ranks, "TrainBench", dir, s.trainSteps, TrainBench.DONATE));
            Outcome torch = data instanceof Outcome.Missing ? new Outcome.Missing("no inputs")
                    : tools.noTorch().<Outcome>map(Outcome.Missing::new)
                            .orElseGet(() -> runner.apply(tools.python("train", dir, ranks, s.trainSteps)));
            rows.addAll(trainRows(ranks, weft, donated, torch));
        }
        return rows;
    }

    /** Part {@code part} of a training run's step series, or why there is none. */
    private static Outcome part(Outcome run, Function<StepSeries, Measurement> part) {
        if (run instanceof Measurement m) {
            try {
                return part.apply(StepSeries.of(m));
            } catch (IllegalArgumentException e) {
                return new Outcome.Missing(e.getMessage());
            }
        }
        return run;
    }

    private static String stepsToSteady(Outcome run) {
        return run instanceof Measurement m && m.samples().length >= StepSeries.MIN_STEPS
                ? Integer.toString(StepSeries.of(m).stepsToSteady()) : "—";
    }

    private List<Row> trainRows(int ranks, Outcome weft, Outcome donated, Outcome torch) {
        String what = String.format(Locale.ROOT, "12 train MLP 784-512-512-10 relu, cross-entropy, SGD, f32, batch %d"
                + " per rank, %d %s", TrainBench.BATCH, ranks, ranks == 1 ? "rank" : "ranks");
        String reference = ranks == 1 ? "PyTorch, 1 process × 1 thread"
                : "PyTorch DDP gloo, " + ranks + " processes × 1 thread";
        String steady = String.format(Locale.ROOT, "steps until steady (the first within %.1fx of the steady median):"
                + " Weft %s, PyTorch %s", StepSeries.STEADY_FACTOR, stepsToSteady(weft), stepsToSteady(torch));
        String window = String.format(Locale.ROOT, ", steady: median of steps %d–%d", s.trainSteps / 2 + 1,
                s.trainSteps);
        String same = "check: the first step's loss, both from the same parameters and data (.npy files)"
                + firstLosses(weft, torch);
        return List.of(
                trainRow(ranks, what + window, part(weft, StepSeries::steady), reference,
                        part(torch, StepSeries::steady), Unit.STEPS_PER_SECOND, steady, same),
                trainRow(ranks, what + ", first step (Weft: tracing and compiling included)",
                        part(weft, StepSeries::first), reference, part(torch, StepSeries::first), Unit.TIME),
                trainRow(ranks, what + ", steps 2–" + StepSeries.EARLY_END + ", per step",
                        part(weft, StepSeries::early), reference, part(torch, StepSeries::early), Unit.TIME),
                trainRow(ranks, what + ", steps 2–" + StepSeries.EARLY_END + ", per step, parameters donated",
                        part(donated, StepSeries::early), reference, part(torch, StepSeries::early), Unit.TIME,
                        "each step's parameters donated to it (Trees.map(params, Tensor::donate)), so the next ones"
                                + " take their buffers instead of fresh memory; steady: " + steadyOf(donated)
                                + ", first step " + firstOf(donated)));
    }

    private static String steadyOf(Outcome run) {
        return part(run, StepSeries::steady) instanceof Measurement m ? Unit.STEPS_PER_SECOND.format(m.median())
                : "—";
    }

    private static String firstOf(Outcome run) {
        return part(run, StepSeries::first) instanceof Measurement m ? Unit.TIME.format(m.median()) : "—";
    }

    /** Both first-step losses and their relative difference, when both runs printed one. */
    private static String firstLosses(Outcome weft, Outcome torch) {
        if (weft instanceof Measurement w && torch instanceof Measurement t && w.check().isPresent()
                && t.check().isPresent()) {
            double a = w.check().getAsDouble(), b = t.check().getAsDouble();
            return String.format(Locale.ROOT, ": Weft %.9g, PyTorch %.9g, relative difference %.2g (at most %.0e)", a,
                    b, Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b)), TRAIN_LOSS_TOLERANCE);
        }
        return "";
    }

    private Row trainRow(int ranks, String what, Outcome weft, String reference, Outcome ref, Unit unit,
                         String... notes) {
        return ranks > 1 ? commRow(what, weft, reference, ref, unit, TRAIN_LOSS_TOLERANCE, notes)
                : row(what, weft, reference, ref, unit, TRAIN_LOSS_TOLERANCE, notes);
    }

    private static double mean(Measurement m) {
        return Arrays.stream(m.samples()).average().orElse(Double.NaN);
    }

    private Row commRow(String what, Outcome weft, String reference, Outcome ref, Unit unit, double tolerance,
                        String... notes) {
        List<String> all = new ArrayList<>(List.of("Weft on MPI"));
        all.addAll(List.of(notes));
        return tools.weftOnMpi()
                ? row(what, weft, reference, ref, unit, tolerance, all)
                : new Row(what + " (fake)", weft, reference, ref, unit, Optional.of(NOT_COMPARABLE), tolerance,
                        List.of());
    }

    private static Row row(String what, Outcome weft, String reference, Outcome ref, Unit unit, double tolerance,
                           String... notes) {
        return row(what, weft, reference, ref, unit, tolerance, List.of(notes));
    }

    private static Row row(String what, Outcome weft, String reference, Outcome ref, Unit unit, double tolerance,
                           List<String> notes) {
        return new Row(what, weft, reference, ref, unit, Optional.empty(), tolerance, notes);
    }
}
