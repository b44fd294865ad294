package dev.weft.batching;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.prim.AxesParams;
import dev.weft.prim.BroadcastParams;
import dev.weft.prim.ConcatParams;
import dev.weft.prim.DynamicSliceParams;
import dev.weft.prim.ElementwiseOp;
import dev.weft.prim.PadParams;
import dev.weft.prim.Prims;
import dev.weft.prim.SliceParams;
import dev.weft.prim.TransposeParams;
import dev.weft.spi.Bind;
import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import dev.weft.spi.Shape;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.LongStream;

/**
 * Batching rules of the array primitives, one block per primitive. A rule keeps the batch axis where it is when
 * the primitive allows (elementwise operations whose batched operands agree on it, reductions, slices, pads) and
 * moves it first otherwise. An unbatched operand of an operation with a batched one is broadcast along the batch
 * (JAX's {@code bdim_at_front}), except a matrix times a batch, which folds the batch into the other operand.
 * {@code dynamicSlice} and {@code dynamicUpdateSlice} with batched start indices, which would need a gather, run
 * {@link PerElement per element}.
 */
final class ArrayBatchRules {
    private ArrayBatchRules() {
    }

    static void register() {
        for (ElementwiseOp op : ElementwiseOp.values()) {
            elementwiseRule(op.primitive());
        }

        for (Primitive<AxesParams> prim : List.of(Prims.REDUCE_SUM, Prims.REDUCE_PROD, Prims.REDUCE_MAX,
                Prims.REDUCE_MIN)) {
            BatchRules.rule(prim, (p, app) -> {
                int d = app.dim(0);
                List<Integer> axes = p.axes().stream().map(a -> a < d ? a : a + 1).toList();
                int before = (int) p.axes().stream().filter(a -> a < d).count();
                return BatchRule.Result.of(bind(prim, new AxesParams(axes), app.arg(0)), d - before);
            });
        }

        BatchRules.rule(Prims.MATMUL, (p, app) -> matmul(app));

        BatchRules.rule(Prims.RESHAPE, (p, app) -> BatchRule.Result.of(app.front(0).reshape(
                BatchAxes.insert(p.shape().dims(), 0, app.size())), 0));

        BatchRules.rule(Prims.TRANSPOSE, (p, app) -> {
            int d = app.dim(0);
            List<Integer> perm = new ArrayList<>(List.of(d));
            for (int a : p.permutation()) {
                perm.add(a < d ? a : a + 1);
            }
            return BatchRule.Result.of(bind(Prims.TRANSPOSE, new TransposeParams(perm), app.arg(0)), 0);
        });

        // broadcast_in_dim's dims must increase, so the batch axis goes first, to output axis 0
        BatchRules.rule(Prims.BROADCAST_IN_DIM, (p, app) -> {
            List<Integer> dims = new ArrayList<>(List.of(0));
            for (int d : p.dims()) {
                dims.add(d + 1);
            }
            Shape shape = Shape.of(BatchAxes.insert(p.shape().dims(), 0, app.size()));
            return BatchRule.Result.of(bind(Prims.BROADCAST_IN_DIM, new BroadcastParams(shape, dims), app.front(0)),
                    0);
        });

        BatchRules.rule(Prims.SLICE, (p, app) -> {
            int d = app.dim(0);
            SliceParams q = new SliceParams(insert(p.start(), d, 0), insert(p.limit(), d, app.size()));
            return BatchRule.Result.of(bind(Prims.SLICE, q, app.arg(0)), d);
        });

        BatchRules.rule(Prims.PAD, (p, app) -> {
            int d = app.dim(0);
            PadParams q = new PadParams(insert(p.low(), d, 0), insert(p.high(), d, 0), p.value());
            return BatchRule.Result.of(bind(Prims.PAD, q, app.arg(0)), d);
        });

        BatchRules.rule(Prims.CONCAT, (p, app) -> {
            Aligned a = align(app);
            int axis = p.axis() < a.dim() ? p.axis() : p.axis() + 1;
            return BatchRule.Result.of(bind(Prims.CONCAT, new ConcatParams(axis), a.values()), a.dim());
        });

        BatchRules.rule(Prims.DYNAMIC_SLICE, (p, app) -> {
            if (app.anyBatchedFrom(1)) {
                return PerElement.apply(Prims.DYNAMIC_SLICE, p, app);
            }
            List<Tensor> in = new ArrayList<>(List.of(app.front(0)));
            in.addAll(startsFromZero(app, 1));
            DynamicSliceParams q = new DynamicSliceParams(insert(p.sizes(), 0, app.size()));
            return BatchRule.Result.of(bind(Prims.DYNAMIC_SLICE, q, in), 0);
        });

        BatchRules.rule(Prims.DYNAMIC_UPDATE_SLICE, (p, app) -> {
            if (app.anyBatchedFrom(2)) {
                return PerElement.apply(Prims.DYNAMIC_UPDATE_SLICE, p, app);
            }
            List<Tensor> in = new ArrayList<>(List.of(app.front(0), app.front(1)));
            in.addAll(startsFromZero(app, 2));
            return BatchRule.Result.of(bind(Prims.DYNAMIC_UPDATE_SLICE, p, in), 0);
        });

        BatchRules.unbatched(Prims.IOTA, "it has no operands");
        BatchRules.unbatched(Prims.CONSTANT, "it has no operands");
    }

    /** The operands, batched along one axis, and that axis. */
    private record Aligned(List<Tensor> values, int dim) {
    }

    /**
     * The operands of an operation on equally shaped elements (or, for concat, equal but for one axis) along one
     * batch axis: the batched operands' own when they agree (no transpose), else the first; unbatched ones are
     * broadcast along it.
     */
    private static Aligned align(Application app) {
        Set<Integer> dims = new HashSet<>();
        for (int i = 0; i < app.args().size(); i++) {
            if (app.batched(i)) {
                dims.add(app.dim(i));
            }
        }
        int d = dims.size() == 1 ? dims.iterator().next() : 0;
        List<Tensor> values = new ArrayList<>(app.args().size());
        for (int i = 0; i < app.args().size(); i++) {
            values.add(app.at(i, d));
        }
        return new Aligned(values, d);
    }

    private static <P extends Params> void elementwiseRule(Primitive<P> prim) {
        BatchRules.rule(prim, (p, app) -> elementwise(prim, p, app));
    }

    private static BatchRule.Result elementwise(Primitive<?> prim, Params p, Application app) {
        Aligned a = align(app);
        return BatchRule.Result.of(bind(prim, p, a.values()), a.dim());
    }

    /**
     * {@code a @ b} per element. A batch of rows or matrices times one matrix is one product with the batch folded
     * into the rows; one matrix times a batch of columns or matrices is one product with the batch folded into the
     * columns (batch axis 1 of the result). Otherwise both operands go batch first, vectors become a row and a
     * column, and the batched product of equal ranks does the rest.
     */
    private static BatchRule.Result matmul(Application app) {
        long n = app.size();
        int ra = app.arg(0).rank() - (app.batched(0) ? 1 : 0), rb = app.arg(1).rank() - (app.batched(1) ? 1 : 0);
        long[] out = app.outAvals().getFirst().shape().dims();
        if (!app.batched(1) && rb == 2 && ra <= 2) {
            Tensor b = app.arg(1);
            long rows = n * (ra == 2 ? out[0] : 1);
            return BatchRule.Result.of(app.front(0).reshape(rows, b.shape()[0]).matmul(b)
                    .reshape(BatchAxes.insert(out, 0, n)), 0);
        }
        if (!app.batched(0) && ra == 2 && rb <= 2) {
            Tensor a = app.arg(0);
            long columns = n * (rb == 2 ? out[1] : 1);
            return BatchRule.Result.of(a.matmul(app.at(1, 1).reshape(a.shape()[1], columns))
                    .reshape(BatchAxes.insert(out, 1, n)), 1);
        }
        Tensor a = app.front(0), b = app.front(1);
        if (ra == 1) {
            a = a.reshape(n, 1, a.shape()[1]);
        }
        if (rb == 1) {
            b = b.reshape(n, b.shape()[1], 1);
        }
        return BatchRule.Result.of(a.matmul(b).reshape(BatchAxes.insert(out, 0, n)), 0);
    }

    /** The start operands from {@code from} on, after a zero start for a batch axis put first. */
    private static List<Tensor> startsFromZero(Application app, int from) {
        DType index = app.args().size() > from ? app.arg(from).dtype() : DType.I32;
        List<Tensor> starts = new ArrayList<>(List.of(Tensor.scalar(index, 0)));
        starts.addAll(app.args().subList(from, app.args().size()));
        return starts;
    }

    private static List<Long> insert(List<Long> values, int at, long value) {
        return LongStream.of(BatchAxes.insert(values.stream().mapToLong(Long::longValue).toArray(), at, value))
                .boxed().toList();
    }

    private static Tensor bind(Primitive<?> prim, Params params, Tensor arg) {
        return Bind.bind(prim, params, arg).getFirst();
    }

    private static Tensor bind(Primitive<?> prim, Params params, List<Tensor> args) {
        return Bind.bind(prim, params, args.toArray(Tensor[]::new)).getFirst();
    }
}
