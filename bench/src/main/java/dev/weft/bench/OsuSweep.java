package dev.weft.bench;

import dev.weft.bench.weft.OsuRoutine;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * {@code bin/weft bench osu}: each routine of {@link OsuRoutine} on {@value #RANKS} ranks at message sizes from 8 B
 * to 8 MiB in powers of 4, one MPI job per routine running {@code OsuBench}, which times C's MPI call
 * ({@code bench/c/osu.c}, loaded as a shared library) in turn with Weft's in the same job; under Open MPI, and
 * under MPICH where it is installed (the C library then built with MPICH's mpicc).
 */
final class OsuSweep {
    static final int RANKS = 2;
    /** The routines in the order they run, as named on the command line. */
    static final List<String> ROUTINES = Arrays.stream(OsuRoutine.values()).map(OsuRoutine::cName).toList();

    /**
     * Sizes and repetitions.
     *
     * @param minBytes     the smallest message
     * @param maxBytes     the largest (the sizes are the powers of 4 times minBytes up to it)
     * @param sampleMicros about how long one sample takes (calls per sample scale with the size)
     * @param reps         timed repetitions per size
     * @param warmup       untimed repetitions before them
     * @param firstWarmup  untimed repetitions at a routine's first size, while the JIT compiles the call path
     */
    record Settings(long minBytes, long maxBytes, long sampleMicros, int reps, int warmup, int firstWarmup) {
        /**
         * Short samples, many of them: on a loaded machine a rank busy-polling MPI waits out whole time slices of its
         * partner's; the shorter the samples, the more of them escape that, and the median is one of those.
         */
        static final Settings FULL = new Settings(8, 8 << 20, 5_000, 15, 3, 60);
        /** Few, shorter samples: checks that everything runs. */
        static final Settings QUICK = new Settings(8, 8 << 20, 1_000, 3, 1, 5);

        /** The message sizes. */
        List<Long> sizes() {
            List<Long> out = new ArrayList<>();
            for (long b = minBytes; b <= maxBytes; b *= 4) {
                out.add(b);
            }
            return out;
        }
    }

    private final Toolchain tools;
    private final Function<List<String>, Outcome> runner;
    private final Settings settings;

    OsuSweep(Toolchain tools, Function<List<String>, Outcome> runner, Settings settings) {
        this.tools = tools;
        this.runner = runner;
        this.settings = settings;
    }

    /** The MPIs a sweep may run on, by their {@code --mpi} names. */
    enum Mpi {
        OPENMPI("Open MPI"),
        MPICH("MPICH");

        final String label;

        Mpi(String label) {
            this.label = label;
        }
    }

    /** The rows of {@code routine} under {@code mpi}, one per size. */
    List<OsuRow> run(String routine, Mpi mpi) {
        boolean mpich = mpi == Mpi.MPICH;
        boolean alongside = tools.weftOnMpi() && (mpich ? tools.noMpich() : tools.noMpi()).isEmpty();
        List<Object> args = new ArrayList<>(List.of(routine, settings.minBytes, settings.maxBytes,
                settings.sampleMicros, settings.reps, settings.warmup, settings.firstWarmup));
        if (alongside) {
            args.add(mpich ? tools.mpichLibrary("osu") : tools.mpiLibrary("osu"));
        }
        Outcome job = mpich && tools.noMpich().isPresent() ? new Outcome.Missing(tools.noMpich().get())
                : runner.apply(mpich ? tools.weftOnMpich(RANKS, "OsuBench", args.toArray())
                        : tools.weft(RANKS, "OsuBench", args.toArray()));
        Optional<String> noRatio = tools.weftOnMpi() ? Optional.empty()
                : Optional.of("Weft on fake ranks (threads of one JVM), not MPI: not compared");
        String noC = tools.weftOnMpi() ? tools.noMpi().orElse("") : "C runs only inside Weft's MPI job";
        List<OsuRow> rows = new ArrayList<>();
        for (long bytes : settings.sizes()) {
            Function<String, Outcome> series = name -> job instanceof Measurement m ? m.alongside(bytes + " " + name)
                    : job;
            Outcome c = alongside ? series.apply("C") : new Outcome.Missing(noC);
            Outcome cFirst = alongside ? series.apply("C first") : new Outcome.Missing(noC);
            rows.add(new OsuRow(routine, mpi.label, bytes, c, series.apply("fori"), series.apply("call"), series.apply("first"),
                    cFirst, noRatio));
        }
        return rows;
    }
}
