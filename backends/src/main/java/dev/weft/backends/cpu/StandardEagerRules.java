package dev.weft.backends.cpu;

import dev.weft.DType;
import dev.weft.backends.cpu.kernels.DataMovement;
import dev.weft.backends.cpu.kernels.DotGeneral;
import dev.weft.backends.cpu.kernels.DynamicSlices;
import dev.weft.backends.cpu.kernels.Elementwise;
import dev.weft.backends.cpu.kernels.Reductions;
import dev.weft.backends.cpu.kernels.Scalars;
import dev.weft.prim.ElementwiseOp;
import dev.weft.prim.Prims;
import dev.weft.spi.Aval;
import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import dev.weft.spi.Shape;
import dev.weft.spi.TensorAccess;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;

/** The eager rules of the primitives in {@link Prims}, each a call to a kernel. */
final class StandardEagerRules {
    private StandardEagerRules() {
    }

    static void registerAll(CpuEagerInterpreter interp) {
        registerElementwise(interp);
        registerReductions(interp);
        registerStructural(interp);
    }

    /** Every elementwise primitive runs its op's kernel ({@link Elementwise#kernel}). */
    private static void registerElementwise(CpuEagerInterpreter interp) {
        for (ElementwiseOp op : ElementwiseOp.values()) {
            elementwise(interp, op.primitive(), op);
        }
    }

    private static <P extends Params> void elementwise(CpuEagerInterpreter interp, Primitive<P> prim,
                                                       ElementwiseOp op) {
        interp.register(prim, (p, ia, in, oa, out) -> Elementwise.kernel(op, ia.getFirst().dtype(),
                oa.getFirst().dtype()).apply(in[0], in.length > 1 ? in[1] : null, in.length > 2 ? in[2] : null,
                out[0], size(oa.getFirst())));
    }

    /** Every reduction primitive fills with its combiner's identity, then folds with it. */
    private static void registerReductions(CpuEagerInterpreter interp) {
        for (ElementwiseOp op : ElementwiseOp.values()) {
            if (op.isReducible()) {
                interp.register(op.reduction(), (p, ia, in, oa, out) -> {
                    DType t = ia.getFirst().dtype();
                    Reductions.fillIdentity(op, t, out[0], size(oa.getFirst()));
                    Reductions.accumulate(op, t, in[0], ia.getFirst().shape().dims(), p.toArray(), out[0]);
                });
            }
        }
    }

    private static void registerStructural(CpuEagerInterpreter interp) {
        interp.register(Prims.MATMUL, (p, ia, in, oa, out) -> matmul(ia.get(0), ia.get(1), in, out[0]));
        interp.register(Prims.RESHAPE, (p, ia, in, oa, out) ->
                DataMovement.copy(ia.getFirst().dtype(), in[0], out[0], size(oa.getFirst())));
        interp.register(Prims.TRANSPOSE, (p, ia, in, oa, out) ->
                DataMovement.transpose(ia.getFirst().dtype(), in[0], dims(ia.getFirst()), p.toArray(), out[0]));
        interp.register(Prims.BROADCAST_IN_DIM, (p, ia, in, oa, out) ->
                DataMovement.broadcastInDim(ia.getFirst().dtype(), in[0], dims(ia.getFirst()), p.dimsArray(),
                        p.shape().dims(), out[0]));
        interp.register(Prims.SLICE, (p, ia, in, oa, out) -> {
            long[] step = new long[ia.getFirst().shape().rank()];
            Arrays.fill(step, 1);
            DataMovement.slice(ia.getFirst().dtype(), in[0], dims(ia.getFirst()), p.startArray(), p.limitArray(),
                    step, out[0]);
        });
        interp.register(Prims.DYNAMIC_SLICE, (p, ia, in, oa, out) -> {
            long[] dims = dims(ia.getFirst()), sizes = p.sizesArray();
            long[] start = DynamicSlices.starts(dtypes(ia), in, 1, dims, sizes);
            long[] limit = new long[dims.length], step = new long[dims.length];
            for (int i = 0; i < dims.length; i++) {
                limit[i] = start[i] + sizes[i];
                step[i] = 1;
            }
            DataMovement.slice(ia.getFirst().dtype(), in[0], dims, start, limit, step, out[0]);
        });
        interp.register(Prims.DYNAMIC_UPDATE_SLICE, (p, ia, in, oa, out) -> {
            DType t = ia.getFirst().dtype();
            long[] dims = dims(ia.getFirst()), update = dims(ia.get(1));
            DataMovement.copy(t, in[0], out[0], size(oa.getFirst()));
            DataMovement.insert(t, in[1], update, out[0], dims, DynamicSlices.starts(dtypes(ia), in, 2, dims, update));
        });
        interp.register(Prims.CONCAT, (p, ia, in, oa, out) -> {
            long[][] partDims = ia.stream().map(StandardEagerRules::dims).toArray(long[][]::new);
            DataMovement.concatenate(oa.getFirst().dtype(), in, partDims, p.axis(), dims(oa.getFirst()), out[0]);
        });
        interp.register(Prims.PAD, (p, ia, in, oa, out) -> {
            DType t = ia.getFirst().dtype();
            MemorySegment value = Arena.ofAuto().allocate(Long.BYTES, Long.BYTES);
            Scalars.setDouble(t, value, 0, p.value());
            DataMovement.pad(t, in[0], dims(ia.getFirst()), value, p.lowArray(), p.highArray(),
                    new long[ia.getFirst().shape().rank()], out[0]);
        });
        interp.register(Prims.IOTA, (p, ia, in, oa, out) ->
                DataMovement.iota(p.dtype(), new long[] {p.n()}, 0, out[0]));
        interp.register(Prims.CONSTANT, (p, ia, in, oa, out) ->
                DataMovement.copy(p.value().dtype(), TensorAccess.data(p.value()), out[0], p.value().size()));
    }

    /** NumPy matmul as a batched product: a rank-1 lhs is one row, a rank-1 rhs one column. */
    private static void matmul(Aval a, Aval b, MemorySegment[] in, MemorySegment out) {
        Shape sa = a.shape(), sb = b.shape();
        int ra = sa.rank(), rb = sb.rank();
        long batch = 1;
        for (int i = 0; i < ra - 2; i++) {
            batch *= sa.dim(i);
        }
        int m = ra >= 2 ? Math.toIntExact(sa.dim(ra - 2)) : 1;
        int k = Math.toIntExact(sa.dim(ra - 1));
        int n = rb >= 2 ? Math.toIntExact(sb.dim(rb - 1)) : 1;
        DotGeneral.matmul(a.dtype(), in[0], in[1], out, batch, m, k, n);
    }

    private static long size(Aval a) {
        return a.shape().size();
    }

    private static DType[] dtypes(List<Aval> avals) {
        return avals.stream().map(Aval::dtype).toArray(DType[]::new);
    }

    private static long[] dims(Aval a) {
        return a.shape().dims();
    }
}
