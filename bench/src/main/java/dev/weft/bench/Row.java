package dev.weft.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * One line of the results table: Weft's measurement of a case next to one reference's.
 *
 * @param benchCase  what was measured, with its sizes
 * @param weft       Weft's outcome
 * @param reference  the reference's name ("NumPy", ...); empty when the case has none
 * @param ref        the reference's outcome
 * @param unit       how samples are shown
 * @param noRatio    when present, why the two must not be compared (the ratio is then not shown)
 * @param tolerance  the relative difference allowed between the two check values
 * @param notes      what a reader needs to interpret the row
 */
public record Row(String benchCase, Outcome weft, String reference, Outcome ref, Unit unit,
                  Optional<String> noRatio, double tolerance, List<String> notes) {
    public Row {
        notes = List.copyOf(notes);
    }

    /** Reference time over Weft time (so above 1 means Weft is faster), when both ran and may be compared. */
    public OptionalDouble ratio() {
        if (noRatio.isPresent() || !(weft instanceof Measurement w) || !(ref instanceof Measurement r)) {
            return OptionalDouble.empty();
        }
        return OptionalDouble.of(r.median() / w.median());
    }

    /** A description of the disagreement when both printed a check value and they differ beyond the tolerance. */
    public Optional<String> checkMismatch() {
        if (weft instanceof Measurement w && ref instanceof Measurement r && w.check().isPresent()
                && r.check().isPresent()) {
            double a = w.check().getAsDouble(), b = r.check().getAsDouble();
            if (!(Math.abs(a - b) <= tolerance * Math.max(Math.abs(a), Math.abs(b)))) {
                return Optional.of("CHECK MISMATCH: Weft " + a + ", " + reference + " " + b);
            }
        }
        return Optional.empty();
    }

    /** The notes cell: the row's notes, whether the checks agree, the programs' info lines and why any is missing. */
    public List<String> allNotes() {
        List<String> all = new ArrayList<>(notes);
        noRatio.ifPresent(all::add);
        checkMismatch().ifPresentOrElse(all::add, () -> {
            if (weft instanceof Measurement w && ref instanceof Measurement r && w.check().isPresent()
                    && r.check().isPresent()) {
                all.add("results agree");
            }
        });
        describe("Weft", weft, all);
        if (!reference.isEmpty()) {
            describe(reference, ref, all);
        }
        return all;
    }

    private static void describe(String who, Outcome o, List<String> into) {
        switch (o) {
            case Measurement m -> m.info().forEach(i -> into.add(who + ": " + i));
            case Outcome.Missing(String reason) -> into.add(who + " not measured: " + reason);
        }
    }
}
