package dev.weft.backends.cpu.exec;

import dev.weft.WeftException;
import dev.weft.lowering.ir.Op;

/**
 * An instruction together with its op and the slots whose values die at it, released once it has run. Any
 * failure other than a {@link WeftException} is reported as one at the op's source location.
 */
record CpuStep(Op op, Instruction instruction, int[] dying) {
    void execute(CpuFrame f) {
        try {
            instruction.execute(f);
        } catch (WeftException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new WeftException(op.location(), op.name() + ": " + e.getMessage(), e);
        }
        for (int s : dying) {
            f.release(s);
        }
    }
}
