package dev.weft.backends.comm.exec;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.backends.comm.ReduceFunction;
import dev.weft.backends.comm.RuntimeReduceOp;
import dev.weft.spi.Aval;
import dev.weft.spi.Errors;
import dev.weft.spi.Shape;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import java.lang.foreign.MemorySegment;
import java.util.function.Supplier;

/** Maps the user-facing {@link dev.weft.comm.ReduceOp} to the runtime's {@link RuntimeReduceOp}. */
public final class ReduceOps {
    private ReduceOps() {
    }

    /**
     * The runtime operator: the library's built-in for a built-in {@code op}, else a custom one under the op's
     * name running the function {@code custom} gives (asked for only then).
     */
    public static RuntimeReduceOp of(dev.weft.comm.ReduceOp op, Supplier<ReduceFunction> custom) {
        return op.isCustom() ? RuntimeReduceOp.custom(op.name(), custom.get()) : builtin(op);
    }

    /** The library's operator of the built-in {@code op} ({@code sum prod min max}). */
    public static RuntimeReduceOp.Builtin builtin(dev.weft.comm.ReduceOp op) {
        return switch (op.name()) {
            case "sum" -> RuntimeReduceOp.Builtin.SUM;
            case "prod" -> RuntimeReduceOp.Builtin.PROD;
            case "min" -> RuntimeReduceOp.Builtin.MIN;
            case "max" -> RuntimeReduceOp.Builtin.MAX;
            default -> throw new IllegalArgumentException("no built-in reduce op '" + op.name() + "'");
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
            Tensor r = op.apply(wrap(in, count, dtype), wrap(inout, count, dtype));
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
