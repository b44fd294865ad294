package dev.weft.backends.comm.exec;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.backends.comm.ReduceFunction;
import dev.weft.backends.comm.ReduceOp;
import dev.weft.spi.Aval;
import dev.weft.spi.Errors;
import dev.weft.spi.Shape;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import java.lang.foreign.MemorySegment;

/** Maps the user-facing {@link dev.weft.comm.ReduceOp} to the runtime's {@link ReduceOp}. */
public final class ReduceOps {
    private ReduceOps() {
    }

    /** The runtime operator: a built-in, or {@code custom} under the op's name. */
    public static ReduceOp of(dev.weft.comm.ReduceOp op, ReduceFunction custom) {
        return op.isCustom() ? ReduceOp.custom(op.name(), custom) : builtin(op.name());
    }

    /** A built-in operator by its IR name ({@code sum prod min max}). */
    public static ReduceOp builtin(String name) {
        return switch (name) {
            case "sum" -> ReduceOp.SUM;
            case "prod" -> ReduceOp.PROD;
            case "min" -> ReduceOp.MIN;
            case "max" -> ReduceOp.MAX;
            default -> throw new IllegalArgumentException("no built-in reduce op '" + name + "'");
        };
    }

    /**
     * A reduce function computing the custom {@code op}'s function {@code fn(in, inout)} on 1-D tensors over the
     * buffers and storing it in {@code inout} (MPI's argument order: {@code in} is the left operand). A result of
     * another dtype or shape raises a {@link dev.weft.WeftException} naming the op, which the runtime reports at
     * the collective's line.
     */
    public static ReduceFunction viaTensors(dev.weft.comm.ReduceOp op) {
        return (inout, in, count, dtype) -> {
            Tensor r = op.function().apply(wrap(in, count, dtype), wrap(inout, count, dtype));
            Aval operand = new Aval(dtype, Shape.of(count));
            if (r == null || r.isTraced() || !TensorAccess.aval(r).equals(operand)) {
                throw Errors.customReduceResult(SourceLocation.UNKNOWN, op.name(), operand,
                        r == null ? "null" : r.isTraced() ? "a traced tensor" : TensorAccess.aval(r).toString());
            }
            MemorySegment.copy(TensorAccess.data(r), 0, inout, 0, count * dtype.byteSize());
        };
    }

    static Tensor wrap(MemorySegment seg, long count, DType dtype) {
        return TensorAccess.concrete(new Aval(dtype, Shape.of(count)), seg.asSlice(0, count * dtype.byteSize()));
    }
}
