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
import dev.weft.prim.DynamicSliceParams;
import dev.weft.prim.ConstantParams;
import dev.weft.prim.PadParams;
import dev.weft.prim.Prims;
import dev.weft.prim.SliceParams;
import dev.weft.prim.TransposeParams;
import dev.weft.spi.Primitive;
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
        oneToOne(rules, Prims.ADD, StableHlo.ADD);
        oneToOne(rules, Prims.SUB, StableHlo.SUBTRACT);
        oneToOne(rules, Prims.MUL, StableHlo.MULTIPLY);
        oneToOne(rules, Prims.DIV, StableHlo.DIVIDE);
        oneToOne(rules, Prims.POW, StableHlo.POWER);
        oneToOne(rules, Prims.MAX, StableHlo.MAXIMUM);
        oneToOne(rules, Prims.MIN, StableHlo.MINIMUM);
        oneToOne(rules, Prims.REM, StableHlo.REMAINDER);
        oneToOne(rules, Prims.NEG, StableHlo.NEGATE);
        oneToOne(rules, Prims.ABS, StableHlo.ABS);
        oneToOne(rules, Prims.EXP, StableHlo.EXP);
        oneToOne(rules, Prims.LOG, StableHlo.LOG);
        oneToOne(rules, Prims.SQRT, StableHlo.SQRT);
        oneToOne(rules, Prims.RSQRT, StableHlo.RSQRT);
        oneToOne(rules, Prims.TANH, StableHlo.TANH);
        oneToOne(rules, Prims.SIN, StableHlo.SINE);
        oneToOne(rules, Prims.COS, StableHlo.COSINE);
        oneToOne(rules, Prims.SELECT, StableHlo.SELECT);
        oneToOne(rules, Prims.CONVERT, StableHlo.CONVERT);
        oneToOne(rules, Prims.RESHAPE, StableHlo.RESHAPE);

        compare(rules, Prims.LT, "LT");
        compare(rules, Prims.LE, "LE");
        compare(rules, Prims.GT, "GT");
        compare(rules, Prims.GE, "GE");
        compare(rules, Prims.EQ, "EQ");
        compare(rules, Prims.NE, "NE");

        reduce(rules, Prims.REDUCE_SUM, StableHlo.ADD, Init.ZERO);
        reduce(rules, Prims.REDUCE_PROD, StableHlo.MULTIPLY, Init.ONE);
        reduce(rules, Prims.REDUCE_MAX, StableHlo.MAXIMUM, Init.LOWEST);
        reduce(rules, Prims.REDUCE_MIN, StableHlo.MINIMUM, Init.HIGHEST);

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

    /** Identity elements of the reductions. */
    private enum Init {
        ZERO, ONE, LOWEST, HIGHEST;

        Value emit(LoweringContext ctx, DType dtype) {
            return switch (this) {
                case ZERO -> ctx.scalar(dtype, 0L);
                case ONE -> ctx.scalar(dtype, 1L);
                case LOWEST -> dtype.isFloating() ? ctx.scalar(dtype, Double.NEGATIVE_INFINITY)
                        : ctx.scalar(dtype, dtype == DType.I32 ? Integer.MIN_VALUE : Long.MIN_VALUE);
                case HIGHEST -> dtype.isFloating() ? ctx.scalar(dtype, Double.POSITIVE_INFINITY)
                        : ctx.scalar(dtype, dtype == DType.I32 ? Integer.MAX_VALUE : Long.MAX_VALUE);
            };
        }
    }

    private static void oneToOne(LoweringRules rules, Primitive<?> prim, String op) {
        rules.register(prim, ANY_TARGET, (ctx, node, in) -> single(ctx, node, op, in, Map.of()));
    }

    private static void compare(LoweringRules rules, Primitive<?> prim, String direction) {
        Attr dir = new Attr.Enum("stablehlo", "comparison_direction", direction);
        rules.register(prim, ANY_TARGET, (ctx, node, in) -> single(ctx, node, StableHlo.COMPARE, in,
                Map.of("comparison_direction", dir)));
    }

    private static void reduce(LoweringRules rules, Primitive<AxesParams> prim, String combiner, Init init) {
        rules.register(prim, ANY_TARGET, (ctx, node, in) -> {
            DType dtype = in.getFirst().tensorType().dtype();
            TensorType scalar = TensorType.of(dtype);
            Value initValue = init.emit(ctx, dtype);
            Block body = ctx.block(List.of(scalar, scalar),
                    args -> List.of(ctx.emit(combiner, args, scalar, Map.of())));
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
