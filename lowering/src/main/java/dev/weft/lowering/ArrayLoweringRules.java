package dev.weft.lowering;

import static dev.weft.lowering.LoweringContext.outputTypes;
import static dev.weft.lowering.LoweringRules.ANY_TARGET;

import dev.weft.DType;
import dev.weft.graph.Node;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.AxesParams;
import dev.weft.prim.BroadcastParams;
import dev.weft.prim.ConcatParams;
import dev.weft.prim.ConstantParams;
import dev.weft.prim.DynamicSliceParams;
import dev.weft.prim.ElementwiseOp;
import dev.weft.prim.PadParams;
import dev.weft.prim.Prims;
import dev.weft.prim.SliceParams;
import dev.weft.prim.TransposeParams;
import dev.weft.spi.TensorAccess;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;

/** Target-independent rules for the array primitives of {@link Prims}: each becomes one StableHLO op. */
public final class ArrayLoweringRules implements LoweringRuleProvider {
    @Override
    public void register(LoweringRules rules) {
        for (ElementwiseOp op : ElementwiseOp.values()) {
            rules.register(op.primitive(), ANY_TARGET, (ctx, node, in) -> ctx.emit(op, in, outputTypes(node))
                    .results());
            if (op.isReducible()) {
                reduce(rules, op);
            }
        }
        rules.register(Prims.RESHAPE, ANY_TARGET, (ctx, node, in) -> single(ctx, node, StableHlo.RESHAPE, in,
                Map.of()));

        rules.register(Prims.MATMUL, ANY_TARGET, ArrayLoweringRules::matmul);
        rules.register(Prims.TRANSPOSE, ANY_TARGET, (ctx, node, in) -> single(ctx, node, StableHlo.TRANSPOSE, in,
                Map.of("permutation", Attr.I64Array.of(((TransposeParams) node.params()).toArray()))));
        rules.register(Prims.BROADCAST_IN_DIM, ANY_TARGET, (ctx, node, in) -> single(ctx, node,
                StableHlo.BROADCAST_IN_DIM, in,
                Map.of("broadcast_dimensions", Attr.I64Array.of(((BroadcastParams) node.params()).dimsArray()))));
        rules.register(Prims.SLICE, ANY_TARGET, ArrayLoweringRules::slice);
        rules.register(Prims.CONCAT, ANY_TARGET, (ctx, node, in) -> single(ctx, node, StableHlo.CONCATENATE, in,
                Map.of("dimension", Attr.Int.i64(((ConcatParams) node.params()).axis()))));
        rules.register(Prims.PAD, ANY_TARGET, ArrayLoweringRules::pad);
        rules.register(Prims.DYNAMIC_SLICE, ANY_TARGET, (ctx, node, in) -> single(ctx, node, StableHlo.DYNAMIC_SLICE,
                in, Map.of("slice_sizes", Attr.I64Array.of(((DynamicSliceParams) node.params()).sizesArray()))));
        rules.register(Prims.DYNAMIC_UPDATE_SLICE, ANY_TARGET, (ctx, node, in) -> single(ctx, node,
                StableHlo.DYNAMIC_UPDATE_SLICE, in, Map.of()));
        rules.register(Prims.IOTA, ANY_TARGET, (ctx, node, in) -> single(ctx, node, StableHlo.IOTA, in,
                Map.of("iota_dimension", Attr.Int.i64(0))));
        rules.register(Prims.CONSTANT, ANY_TARGET, (ctx, node, in) -> {
            TensorType type = (TensorType) outputTypes(node).getFirst();
            return List.of(ctx.constant(type, TensorAccess.data(((ConstantParams) node.params()).value())));
        });
    }

    /** The reduction primitive folding with {@code combiner}, whose identity is the init value. */
    private static void reduce(LoweringRules rules, ElementwiseOp combiner) {
        rules.register(combiner.reduction(), ANY_TARGET, (ctx, node, in) -> {
            DType dtype = in.getFirst().tensorType().dtype();
            TensorType scalar = TensorType.of(dtype);
            Number identity = combiner.identity(dtype);
            Value initValue = identity instanceof Long l ? ctx.scalar(dtype, l)
                    : ctx.scalar(dtype, identity.doubleValue());
            Block body = ctx.block(List.of(scalar, scalar),
                    args -> List.of(ctx.emit(combiner, args, List.of(scalar)).result()));
            return ctx.emit(StableHlo.REDUCE, List.of(in.getFirst(), initValue), outputTypes(node),
                    Map.of("dimensions", Attr.I64Array.of(((AxesParams) node.params()).toArray())),
                    List.of(body)).results();
        });
    }

    /**
     * NumPy matmul as {@code dot_general}: batch axes {@code 0..r-3} on both sides, the lhs contracts its last
     * axis and the rhs its first (rank 1) or second-to-last; the result order (batch, lhs free, rhs free) is
     * NumPy's.
     */
    private static List<Value> matmul(LoweringContext ctx, Node node, List<Value> in) {
        int ra = in.get(0).tensorType().shape().rank();
        int rb = in.get(1).tensorType().shape().rank();
        List<Long> batch = LongStream.range(0, Math.max(0, ra - 2)).boxed().toList();
        Attr dims = new Attr.DotDimensions(batch, batch, List.of((long) ra - 1), List.of(rb == 1 ? 0L : rb - 2L));
        return single(ctx, node, StableHlo.DOT_GENERAL, in, Map.of("dot_dimension_numbers", dims));
    }

    private static List<Value> slice(LoweringContext ctx, Node node, List<Value> in) {
        SliceParams p = (SliceParams) node.params();
        long[] strides = new long[p.startArray().length];
        Arrays.fill(strides, 1);
        Map<String, Attr> attrs = new LinkedHashMap<>();
        attrs.put("start_indices", Attr.I64Array.of(p.startArray()));
        attrs.put("limit_indices", Attr.I64Array.of(p.limitArray()));
        attrs.put("strides", Attr.I64Array.of(strides));
        return single(ctx, node, StableHlo.SLICE, in, attrs);
    }

    private static List<Value> pad(LoweringContext ctx, Node node, List<Value> in) {
        PadParams p = (PadParams) node.params();
        Value padding = ctx.scalar(in.getFirst().tensorType().dtype(), p.value());
        Map<String, Attr> attrs = new LinkedHashMap<>();
        attrs.put("edge_padding_low", Attr.I64Array.of(p.lowArray()));
        attrs.put("edge_padding_high", Attr.I64Array.of(p.highArray()));
        attrs.put("interior_padding", Attr.I64Array.of(new long[p.lowArray().length]));
        return single(ctx, node, StableHlo.PAD, List.of(in.getFirst(), padding), attrs);
    }

    private static List<Value> single(LoweringContext ctx, Node node, String op, List<Value> operands,
                                      Map<String, Attr> attrs) {
        return ctx.emit(op, operands, outputTypes(node), attrs, List.of()).results();
    }
}
