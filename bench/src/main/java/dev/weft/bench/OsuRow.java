package dev.weft.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * One message size of one routine in {@code bin/weft bench osu}: the C loop, Weft's compiled loop and Weft's
 * compiled single call, warm (seconds per call), and the first call of each at that size.
 *
 * @param routine  the routine's name
 * @param mpi      the MPI both ran on ({@code Open MPI}, {@code MPICH})
 * @param bytes    the message size
 * @param c        C's MPI call in a loop
 * @param fori     Weft: one compiled program calling the routine in a {@code Weft.fori}
 * @param call     Weft: a compiled program of one call, called from a Java loop
 * @param first    Weft's first call of the single-call program (trace, lower, compile, run)
 * @param cFirst   C's first call at this size
 * @param noRatio  when present, why Weft and C must not be compared (Weft on fake ranks)
 */
public record OsuRow(String routine, String mpi, long bytes, Outcome c, Outcome fori, Outcome call, Outcome first,
                     Outcome cFirst, Optional<String> noRatio) {
    /** Weft's compiled loop over C, median over median (above 1: Weft slower), when both ran and may be compared. */
    public OptionalDouble foriRatio() {
        return ratio(fori);
    }

    /** Weft's compiled single call over C, median over median, when both ran and may be compared. */
    public OptionalDouble callRatio() {
        return ratio(call);
    }

    private OptionalDouble ratio(Outcome weft) {
        if (noRatio.isPresent() || !(weft instanceof Measurement w) || !(c instanceof Measurement r)) {
            return OptionalDouble.empty();
        }
        return OptionalDouble.of(w.median() / r.median());
    }

    /**
     * What disagrees: each Weft series' check against C's (the sums of the results, which move or add the same
     * f32 values in the same order, so they agree exactly), and Weft's series among themselves.
     */
    public List<String> mismatches() {
        List<String> out = new ArrayList<>();
        Outcome reference = c instanceof Measurement ? c : fori;
        String name = c instanceof Measurement ? "C" : "fori";
        compare(reference, name, fori, "fori", out);
        compare(reference, name, call, "call", out);
        compare(reference, name, first, "first call", out);
        compare(reference, name, cFirst, "C first call", out);
        return out;
    }

    private void compare(Outcome a, String aName, Outcome b, String bName, List<String> out) {
        if (a != b && a instanceof Measurement x && b instanceof Measurement y && x.check().isPresent()
                && y.check().isPresent() && x.check().getAsDouble() != y.check().getAsDouble()) {
            out.add(String.format("CHECK MISMATCH %s (%s) %d B: %s %s, %s %s", routine, mpi, bytes, aName,
                    x.check().getAsDouble(), bName, y.check().getAsDouble()));
        }
    }

    /** Whether every Weft series ran (a reference may be missing for want of a tool; Weft's may not). */
    public boolean weftRan() {
        return fori instanceof Measurement && call instanceof Measurement && first instanceof Measurement;
    }
}
