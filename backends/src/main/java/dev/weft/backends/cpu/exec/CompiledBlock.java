package dev.weft.backends.cpu.exec;

import java.util.Arrays;

/**
 * A region ready to run: its argument slots, steps, result slots, and every slot it defines (arguments and op
 * results, not those of nested regions), which are released when the region's scope ends.
 */
record CompiledBlock(int[] argSlots, CpuStep[] steps, int[] resultSlots, int[] localSlots) {
    /** Binds the arguments to {@code values}, each taking a reference. */
    void bindArguments(CpuFrame f, Buffer[] values) {
        for (int i = 0; i < argSlots.length; i++) {
            f.define(argSlots[i], values[i]);
        }
    }

    /** Binds arguments {@code which} to the matching {@code values}, each taking a reference. */
    void bindArguments(CpuFrame f, Buffer[] values, int[] which) {
        for (int i : which) {
            f.define(argSlots[i], values[i]);
        }
    }

    void run(CpuFrame f) {
        for (CpuStep s : steps) {
            s.execute(f);
        }
    }

    /** The buffer of result {@code i}, with a new reference taken for the caller. */
    Buffer takeResult(CpuFrame f, int i) {
        Buffer b = f.slots[resultSlots[i]];
        b.refs++;
        return b;
    }

    /** Releases every value this region defined that is still live. */
    void exitScope(CpuFrame f) {
        for (int s : localSlots) {
            f.release(s);
        }
    }

    /**
     * This block with {@code pinned} slots never released, neither by a step where their value dies nor by
     * {@link #exitScope}: their owner binds them before running the block, possibly many times, and releases them.
     */
    CompiledBlock pinning(int[] pinned) {
        CpuStep[] kept = Arrays.stream(steps).map(s -> new CpuStep(s.op(), s.instruction(), without(s.dying(), pinned)))
                .toArray(CpuStep[]::new);
        return new CompiledBlock(argSlots, kept, resultSlots, without(localSlots, pinned));
    }

    private static int[] without(int[] slots, int[] removed) {
        return Arrays.stream(slots).filter(s -> Arrays.stream(removed).noneMatch(r -> r == s)).toArray();
    }
}
