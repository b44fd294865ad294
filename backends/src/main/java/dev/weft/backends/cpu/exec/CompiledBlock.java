package dev.weft.backends.cpu.exec;

/**
 * A region ready to run: its argument slots, steps, result slots, and every slot it defines (arguments and op
 * results, not those of nested regions), which are released when the region's scope ends.
 */
record CompiledBlock(int[] argSlots, Step[] steps, int[] resultSlots, int[] localSlots) {
    /** Binds the arguments to {@code values}, each taking a reference. */
    void bindArguments(Frame f, Buffer[] values) {
        for (int i = 0; i < argSlots.length; i++) {
            f.define(argSlots[i], values[i]);
        }
    }

    void run(Frame f) {
        for (Step s : steps) {
            s.execute(f);
        }
    }

    /** The buffer of result {@code i}, with a new reference taken for the caller. */
    Buffer takeResult(Frame f, int i) {
        Buffer b = f.slots[resultSlots[i]];
        b.refs++;
        return b;
    }

    /** Releases every value this region defined that is still live. */
    void exitScope(Frame f) {
        for (int s : localSlots) {
            f.release(s);
        }
    }
}
