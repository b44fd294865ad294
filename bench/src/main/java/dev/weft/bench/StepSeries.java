package dev.weft.bench;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * A training run's step times, one sample per step in the order they ran (case 12), split into what its table
 * shows (the run's check value and info lines go with the steady window only): the first step (tracing and compiling included, for Weft), steps 2 to {@link #EARLY_END} (the warm-up a
 * user sees), the steady window (the second half of the steps) and how many steps it took to get there.
 *
 * @param first         the first step
 * @param early         steps 2 to {@link #EARLY_END}
 * @param steady        the steady window: the last half of the steps (its median is the steady step time)
 * @param stepsToSteady the number (from 1) of the first step within {@link #STEADY_FACTOR} of the steady median
 */
public record StepSeries(Measurement first, Measurement early, Measurement steady, int stepsToSteady) {
    /** The last step of the early window. */
    public static final int EARLY_END = 20;
    /** A step is steady when it takes at most this times the steady median. */
    public static final double STEADY_FACTOR = 1.2;
    /** The fewest steps a run can have: the early window and as many again. */
    public static final int MIN_STEPS = 2 * EARLY_END;

    /**
     * The series of {@code run}, whose samples are its step times in order.
     *
     * @throws IllegalArgumentException if it has fewer than {@link #MIN_STEPS} samples
     */
    public static StepSeries of(Measurement run) {
        double[] steps = run.samples();
        if (steps.length < MIN_STEPS) {
            throw new IllegalArgumentException("a training run needs at least " + MIN_STEPS + " steps, got "
                    + steps.length);
        }
        Measurement steady = new Measurement(Arrays.copyOfRange(steps, steps.length / 2, steps.length), run.check(),
                run.info(), Map.of());
        double limit = STEADY_FACTOR * steady.median();
        int to = 0;
        while (steps[to] > limit) {
            to++;
        }
        return new StepSeries(new Measurement(new double[] {steps[0]}, OptionalDouble.empty(), List.of(), Map.of()),
                new Measurement(Arrays.copyOfRange(steps, 1, EARLY_END), OptionalDouble.empty(), List.of(), Map.of()),
                steady, to + 1);
    }
}
