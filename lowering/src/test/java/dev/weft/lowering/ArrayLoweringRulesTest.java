package dev.weft.lowering;

import java.lang.foreign.MemorySegment;
import dev.weft.spi.Params;
import static dev.weft.lowering.Ops.names;
import static dev.weft.lowering.Ops.only;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.prim.AxesParams;
import dev.weft.prim.BroadcastParams;
import dev.weft.prim.ConcatParams;
import dev.weft.prim.ConstantParams;
import dev.weft.prim.ConvertParams;
import dev.weft.prim.ElementwiseOp;
import dev.weft.prim.IotaParams;
import dev.weft.prim.PadParams;
import dev.weft.prim.Prims;
import dev.weft.prim.ReshapeParams;
import dev.weft.prim.SliceParams;
import dev.weft.prim.TransposeParams;
import dev.weft.spi.Aval;
import dev.weft.spi.Primitive;
import dev.weft.spi.Shape;
import dev.weft.graph.Var;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ArrayLoweringRulesTest {
    private static final Aval F23 = Aval.of(DType.F32, 2, 3);
    private final Lowerer lowerer = new Lowerer(LoweringRules.discover());

    /** Lowers {@code prim(params)} applied to fresh parameters of {@code inputs}; returns main's body. */
    private Block lowerOne(Primitive<?> prim, Params params, Aval... inputs) {
        GraphBuilder g = new GraphBuilder();
        Var[] args = new Var[inputs.length];
        for (int i = 0; i < inputs.length; i++) {
            args[i] = g.param(inputs[i]);
        }
        Module m = lowerer.lower(g.graph(g.op(prim, params, args)), TestTarget.CPU);
        return m.main().body();
    }

    private Block lowerOne(Primitive<?> prim, Aval... inputs) {
        return lowerOne(prim, Params.NONE, inputs);
    }

    @Test
    void elementwisePrimitivesBecomeTheMatchingOp() {
        Map<Primitive<?>, String> binary = Map.of(Prims.ADD, "stablehlo.add", Prims.SUB, "stablehlo.subtract",
                Prims.MUL, "stablehlo.multiply", Prims.DIV, "stablehlo.divide", Prims.POW, "stablehlo.power",
                Prims.MAX, "stablehlo.maximum", Prims.MIN, "stablehlo.minimum", Prims.REM, "stablehlo.remainder");
        binary.forEach((prim, op) -> {
            Block b = lowerOne(prim, F23, F23);
            assertThat(names(b)).containsExactly(op, StableHlo.FUNC_RETURN);
            Op lowered = b.ops().getFirst();
            assertThat(lowered.operands()).containsExactlyElementsOf(b.arguments());
            assertThat(lowered.result().type()).isEqualTo(TensorType.of(DType.F32, 2, 3));
            assertThat(lowered.location().toString()).isEqualTo("Test.java:1");
            assertThat(b.results()).containsExactly(lowered.result());
        });
        Map<Primitive<?>, String> unary = Map.of(Prims.NEG, "stablehlo.negate", Prims.ABS, "stablehlo.abs",
                Prims.EXP, "stablehlo.exponential", Prims.LOG, "stablehlo.log", Prims.SQRT, "stablehlo.sqrt",
                Prims.RSQRT, "stablehlo.rsqrt", Prims.TANH, "stablehlo.tanh", Prims.SIN, "stablehlo.sine",
                Prims.COS, "stablehlo.cosine");
        unary.forEach((prim, op) -> assertThat(names(lowerOne(prim, F23))).containsExactly(op, StableHlo.FUNC_RETURN));
    }

    @Test
    void comparisonsCarryTheirDirection() {
        Map<Primitive<?>, String> dirs = Map.of(Prims.LT, "LT", Prims.LE, "LE", Prims.GT, "GT", Prims.GE, "GE",
                Prims.EQ, "EQ", Prims.NE, "NE");
        dirs.forEach((prim, dir) -> {
            Op cmp = only(lowerOne(prim, F23, F23), "stablehlo.compare");
            assertThat(cmp.attr("comparison_direction"))
                    .isEqualTo(new Attr.Enum("stablehlo", "comparison_direction", dir));
            assertThat(cmp.attr("comparison_direction").mlir()).isEqualTo("#stablehlo<comparison_direction " + dir + ">");
            assertThat(cmp.result().type()).isEqualTo(TensorType.of(DType.BOOL, 2, 3));
        });
    }

    @Test
    void selectAndConvert() {
        Block sel = lowerOne(Prims.SELECT, Aval.of(DType.BOOL, 2, 3), F23, F23);
        assertThat(only(sel, ElementwiseOp.SELECT.mlirName()).operands()).containsExactlyElementsOf(sel.arguments());
        Op cvt = only(lowerOne(Prims.CONVERT, new ConvertParams(DType.I64), F23), ElementwiseOp.CONVERT.mlirName());
        assertThat(cvt.result().type()).isEqualTo(TensorType.of(DType.I64, 2, 3));
        assertThat(cvt.attributes()).isEmpty();
    }

    @Test
    void reductionsUseTheirIdentityAndCombiner() {
        Block b = lowerOne(Prims.REDUCE_MAX, new AxesParams(List.of(1)), F23);
        assertThat(names(b)).containsExactly(StableHlo.CONSTANT, StableHlo.REDUCE, StableHlo.FUNC_RETURN);
        Op reduce = only(b, StableHlo.REDUCE);
        assertThat(reduce.operands()).containsExactly(b.arguments().getFirst(), b.ops().getFirst().result());
        assertThat(reduce.attr("dimensions")).isEqualTo(Attr.I64Array.of(1));
        assertThat(reduce.result().type()).isEqualTo(TensorType.of(DType.F32, 2));
        Block combiner = reduce.regions().getFirst();
        assertThat(combiner.arguments()).extracting(v -> v.type()).containsExactly(TensorType.of(DType.F32),
                TensorType.of(DType.F32));
        assertThat(names(combiner)).containsExactly(ElementwiseOp.MAX.mlirName(), StableHlo.RETURN);
        assertThat(combiner.ops().getFirst().operands()).containsExactlyElementsOf(combiner.arguments());
        assertThat(initOf(b).get(ValueLayout.JAVA_FLOAT, 0)).isEqualTo(Float.NEGATIVE_INFINITY);

        assertThat(initOf(lowerOne(Prims.REDUCE_SUM, new AxesParams(List.of(0, 1)), F23))
                .get(ValueLayout.JAVA_FLOAT, 0)).isEqualTo(0f);
        assertThat(initOf(lowerOne(Prims.REDUCE_PROD, new AxesParams(List.of(0)), Aval.of(DType.F64, 4)))
                .get(ValueLayout.JAVA_DOUBLE, 0)).isEqualTo(1.0);
        assertThat(initOf(lowerOne(Prims.REDUCE_MIN, new AxesParams(List.of(0)), Aval.of(DType.I32, 4)))
                .get(ValueLayout.JAVA_INT, 0)).isEqualTo(Integer.MAX_VALUE);
        assertThat(initOf(lowerOne(Prims.REDUCE_MAX, new AxesParams(List.of(0)), Aval.of(DType.I64, 4)))
                .get(ValueLayout.JAVA_LONG, 0)).isEqualTo(Long.MIN_VALUE);
        assertThat(initOf(lowerOne(Prims.REDUCE_MIN, new AxesParams(List.of(0)), Aval.of(DType.F64, 4)))
                .get(ValueLayout.JAVA_DOUBLE, 0)).isEqualTo(Double.POSITIVE_INFINITY);
        assertThat(names(only(lowerOne(Prims.REDUCE_PROD, new AxesParams(List.of(0)), F23), StableHlo.REDUCE)
                .regions().getFirst())).containsExactly(ElementwiseOp.MUL.mlirName(), StableHlo.RETURN);
    }

    private static MemorySegment initOf(Block b) {
        Op init = b.ops().getFirst();
        assertThat(init.result().type()).isEqualTo(TensorType.of(init.result().tensorType().dtype()));
        return ((Attr.Dense) init.attr("value")).data();
    }

    @Test
    void matmulBecomesDotGeneralWithNumPyDimensions() {
        assertDot(Aval.of(DType.F32, 3), Aval.of(DType.F32, 3, 4), List.of(), List.of(0L), List.of(0L), 4);
        assertDot(Aval.of(DType.F32, 2, 3), Aval.of(DType.F32, 3), List.of(), List.of(1L), List.of(0L), 2);
        assertDot(Aval.of(DType.F32, 2, 3), Aval.of(DType.F32, 3, 4), List.of(), List.of(1L), List.of(0L), 2, 4);
        assertDot(Aval.of(DType.F32, 5, 2, 3), Aval.of(DType.F32, 5, 3, 4), List.of(0L), List.of(2L), List.of(1L),
                5, 2, 4);
        assertDot(Aval.of(DType.F32, 3), Aval.of(DType.F32, 3), List.of(), List.of(0L), List.of(0L));
    }

    private void assertDot(Aval a, Aval b, List<Long> batch, List<Long> lhs, List<Long> rhs, long... out) {
        Op dot = only(lowerOne(Prims.MATMUL, a, b), StableHlo.DOT_GENERAL);
        assertThat(dot.attr("dot_dimension_numbers")).isEqualTo(new Attr.DotDimensions(batch, batch, lhs, rhs));
        assertThat(dot.result().type()).isEqualTo(TensorType.of(DType.F32, out));
    }

    @Test
    void shapeOpsCarryTheirAttributes() {
        Op reshape = only(lowerOne(Prims.RESHAPE, new ReshapeParams(Shape.of(3, 2)), F23), StableHlo.RESHAPE);
        assertThat(reshape.result().type()).isEqualTo(TensorType.of(DType.F32, 3, 2));

        Op transpose = only(lowerOne(Prims.TRANSPOSE, new TransposeParams(List.of(1, 0)), F23), StableHlo.TRANSPOSE);
        assertThat(transpose.attr("permutation").mlir()).isEqualTo("array<i64: 1, 0>");
        assertThat(transpose.result().type()).isEqualTo(TensorType.of(DType.F32, 3, 2));

        Op bcast = only(lowerOne(Prims.BROADCAST_IN_DIM, new BroadcastParams(Shape.of(4, 2, 3), List.of(1, 2)), F23),
                StableHlo.BROADCAST_IN_DIM);
        assertThat(bcast.attr("broadcast_dimensions")).isEqualTo(Attr.I64Array.of(1, 2));

        Op slice = only(lowerOne(Prims.SLICE, new SliceParams(List.of(0L, 1L), List.of(2L, 3L)), F23),
                StableHlo.SLICE);
        assertThat(slice.attributes()).containsExactly(Map.entry("start_indices", Attr.I64Array.of(0L, 1L)),
                Map.entry("limit_indices", Attr.I64Array.of(2L, 3L)), Map.entry("strides", Attr.I64Array.of(1L, 1L)));
        assertThat(slice.result().type()).isEqualTo(TensorType.of(DType.F32, 2, 2));

        Op concat = only(lowerOne(Prims.CONCAT, new ConcatParams(1), F23, F23), StableHlo.CONCATENATE);
        assertThat(concat.attr("dimension")).isEqualTo(Attr.Int.i64(1));
        assertThat(concat.result().type()).isEqualTo(TensorType.of(DType.F32, 2, 6));

        Op iota = only(lowerOne(Prims.IOTA, new IotaParams(DType.I32, 5)), StableHlo.IOTA);
        assertThat(iota.attr("iota_dimension")).isEqualTo(Attr.Int.i64(0));
        assertThat(iota.result().type()).isEqualTo(TensorType.of(DType.I32, 5));
    }

    @Test
    void padTakesAScalarPaddingValue() {
        Block b = lowerOne(Prims.PAD, new PadParams(List.of(1L, 0L), List.of(0L, 2L), 7.5), F23);
        Op pad = only(b, StableHlo.PAD);
        Op value = b.ops().getFirst();
        assertThat(pad.operands()).containsExactly(b.arguments().getFirst(), value.result());
        assertThat(((Attr.Dense) value.attr("value")).data().get(ValueLayout.JAVA_FLOAT, 0)).isEqualTo(7.5f);
        assertThat(pad.attributes()).containsExactly(Map.entry("edge_padding_low", Attr.I64Array.of(1L, 0L)),
                Map.entry("edge_padding_high", Attr.I64Array.of(0L, 2L)),
                Map.entry("interior_padding", Attr.I64Array.of(0L, 0L)));
        assertThat(pad.result().type()).isEqualTo(TensorType.of(DType.F32, 3, 5));
    }

    @Test
    void constantsEmbedTheirData() {
        Tensor t = Tensor.of(new int[] {4, -5, 6}, 3);
        Op c = only(lowerOne(Prims.CONSTANT, new ConstantParams(t)), StableHlo.CONSTANT);
        assertThat(c.attr("value").mlir()).isEqualTo("dense<[4, -5, 6]> : tensor<3xi32>");
    }
}
