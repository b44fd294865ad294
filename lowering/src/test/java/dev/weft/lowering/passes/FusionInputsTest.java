package dev.weft.lowering.passes;

import static dev.weft.lowering.Ops.names;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.FusionPiece;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.ElementwiseOp;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Slices, concatenations and pads that only fusions read are absorbed: the fusion reads views and pieces of their
 * sources ({@link StableHlo#FUSION_SLICE_STARTS}, {@link StableHlo#FUSION_PIECES}); the boxes here are derived by
 * hand.
 */
class FusionInputsTest {
    private static final TensorType ROW = f32(1, 4);
    private static final TensorType GRID = f32(3, 4);

    private static TensorType f32(long... dims) {
        return TensorType.of(DType.F32, dims);
    }

    private static Module fused(Module m) {
        new ElementwiseFusion(ElementwiseFusion.Inputs.VIEWS).run(m);
        new Verifier().run(m);
        return m;
    }

    private static Value slice(ModuleBuilder b, Value source, long[] start, long... size) {
        long[] limit = new long[start.length];
        Arrays.setAll(limit, k -> start[k] + size[k]);
        Map<String, Attr> attrs = Map.of("start_indices", Attr.I64Array.of(start), "limit_indices",
                Attr.I64Array.of(limit), "strides", Attr.I64Array.of(new long[] {1, 1}));
        return b.op(StableHlo.SLICE, List.of(source), List.of(f32(size)), attrs, List.of()).result();
    }

    private static Value concatRows(ModuleBuilder b, Value... parts) {
        long rows = Arrays.stream(parts).mapToLong(v -> v.tensorType().shape().dim(0)).sum();
        return b.op(StableHlo.CONCATENATE, List.of(parts), List.of(f32(rows, 4)),
                Map.of("dimension", Attr.Int.i64(0)), List.of()).result();
    }

    /** Pads {@code x} by one column on each side; {@code interiorRows} between rows. */
    private static Value padColumns(ModuleBuilder b, Value x, Value value, long interiorRows) {
        long[] dims = x.tensorType().shape().dims();
        Map<String, Attr> attrs = Map.of("edge_padding_low", Attr.I64Array.of(new long[] {0, 1}),
                "edge_padding_high", Attr.I64Array.of(new long[] {0, 1}),
                "interior_padding", Attr.I64Array.of(new long[] {interiorRows, 0}));
        TensorType out = f32(dims[0] + (dims[0] - 1) * interiorRows, dims[1] + 2);
        return b.op(StableHlo.PAD, List.of(x, value), List.of(out), attrs, List.of()).result();
    }

    private static Attr boxes(FusionPiece... pieces) {
        return new Attr.Array(Arrays.stream(pieces).map(p -> (Attr) p.attr()).toList());
    }

    private static FusionPiece piece(int operand, long[] at, long[] from, long[] size) {
        return new FusionPiece(operand, at, from, size);
    }

    private static long[] ix(long... v) {
        return v;
    }

    private static Op onlyFusion(Module m) {
        return m.main().body().ops().stream().filter(o -> o.name().equals(StableHlo.FUSION)).findFirst()
                .orElseThrow();
    }

    @Test
    void windowsOfAPaddedConcatenationArePiecesOfItsParts() {
        ModuleBuilder b = new ModuleBuilder(ROW, GRID, ROW);
        Value zero = b.constant(0.5f);
        Value p = padColumns(b, concatRows(b, b.arg(0), b.arg(1), b.arg(2)), zero, 0);
        Value up = slice(b, p, ix(0, 1), 3, 4);
        Value left = slice(b, p, ix(1, 0), 3, 4);
        Value sum = b.op(ElementwiseOp.ADD.mlirName(), GRID, up, left);
        Module m = fused(b.module(b.op(ElementwiseOp.MUL.mlirName(), GRID, sum, b.arg(1))));

        assertThat(names(m)).containsExactly(StableHlo.CONSTANT, StableHlo.FUSION, StableHlo.FUNC_RETURN);
        Op fusion = onlyFusion(m);
        assertThat(fusion.operands()).containsExactly(b.arg(0), b.arg(1), b.arg(1), zero);
        assertThat(fusion.regions().getFirst().arguments()).extracting(Value::type)
                .containsExactly(GRID, GRID, GRID);
        // up: row 0 is the row above, rows 1-2 are the grid's rows 0-1; the padded columns lie outside the window
        // left: every row of the grid, shifted one column right, after a column of the pad value
        assertThat(fusion.attr(StableHlo.FUSION_PIECES)).isEqualTo(new Attr.Array(List.of(
                boxes(piece(0, ix(0, 0), ix(0, 0), ix(1, 4)), piece(1, ix(1, 0), ix(0, 0), ix(2, 4))),
                boxes(piece(1, ix(0, 1), ix(0, 0), ix(3, 3)), piece(3, ix(0, 0), ix(), ix(3, 1))),
                new Attr.Array(List.of()))));
        assertThat(fusion.attr(StableHlo.FUSION_SLICE_STARTS)).isNull();
        assertThat(StableHlo.fusionPieces(fusion, 1)).containsExactly(piece(1, ix(0, 1), ix(0, 0), ix(3, 3)),
                piece(3, ix(0, 0), ix(), ix(3, 1)));
        assertThat(StableHlo.fusionPieces(fusion, 2)).isEmpty();
    }

    @Test
    void aWindowInsideOnePartIsAViewOfThatPart() {
        ModuleBuilder b = new ModuleBuilder(ROW, GRID, ROW);
        Value below = slice(b, concatRows(b, b.arg(0), b.arg(1), b.arg(2)), ix(2, 1), 2, 3);
        Value inside = slice(b, b.arg(1), ix(0, 0), 2, 3);
        Module m = fused(b.module(b.op(ElementwiseOp.NEG.mlirName(), f32(2, 3), b.op(ElementwiseOp.ADD.mlirName(),
                f32(2, 3), below, inside))));

        assertThat(names(m)).containsExactly(StableHlo.FUSION, StableHlo.FUNC_RETURN);
        Op fusion = onlyFusion(m);
        assertThat(fusion.operands()).containsExactly(b.arg(1), b.arg(1));
        assertThat(StableHlo.fusionSliceStarts(fusion, 0)).containsExactly(1, 1);
        assertThat(StableHlo.fusionSliceStarts(fusion, 1)).containsExactly(0, 0);
        assertThat(fusion.attr(StableHlo.FUSION_PIECES)).isNull();
    }

    @Test
    void aConcatenationUsedElsewhereStaysAndFusionsReadIt() {
        ModuleBuilder b = new ModuleBuilder(ROW, GRID, ROW);
        Value zero = b.constant(0f);
        Value whole = concatRows(b, b.arg(0), b.arg(1), b.arg(2));
        Value p = padColumns(b, whole, zero, 0);
        Value right = slice(b, p, ix(1, 2), 3, 4);
        Value sum = b.op(ElementwiseOp.ADD.mlirName(), GRID, right, b.arg(1));
        Module m = fused(b.module(b.op(ElementwiseOp.NEG.mlirName(), GRID, sum), b.op("test.opaque", f32(5, 4),
                whole)));

        assertThat(names(m)).containsExactly(StableHlo.CONSTANT, StableHlo.CONCATENATE, StableHlo.FUSION,
                "test.opaque", StableHlo.FUNC_RETURN);
        Op fusion = onlyFusion(m);
        assertThat(fusion.operands()).containsExactly(whole, b.arg(1), zero);
        assertThat(fusion.attr(StableHlo.FUSION_PIECES)).isEqualTo(new Attr.Array(List.of(
                boxes(piece(0, ix(0, 0), ix(1, 1), ix(3, 3)), piece(2, ix(0, 3), ix(), ix(3, 1))),
                new Attr.Array(List.of()))));
    }

    @Test
    void aPadWithInteriorPaddingStaysAndFusionsViewIt() {
        ModuleBuilder b = new ModuleBuilder(GRID);
        Value p = padColumns(b, b.arg(0), b.constant(0f), 1);
        Value window = slice(b, p, ix(2, 1), 3, 4);
        Module m = fused(b.module(b.op(ElementwiseOp.NEG.mlirName(), GRID, b.op(ElementwiseOp.ADD.mlirName(), GRID,
                window, b.arg(0)))));

        assertThat(names(m)).containsExactly(StableHlo.CONSTANT, StableHlo.PAD, StableHlo.FUSION,
                StableHlo.FUNC_RETURN);
        Op fusion = onlyFusion(m);
        assertThat(fusion.operands()).containsExactly(p, b.arg(0));
        assertThat(StableHlo.fusionSliceStarts(fusion, 0)).containsExactly(2, 1);
        assertThat(fusion.attr(StableHlo.FUSION_PIECES)).isNull();
    }

    @Test
    void aWindowEntirelyInThePaddingIsOnePieceOfThePadValue() {
        ModuleBuilder b = new ModuleBuilder(GRID);
        Value seven = b.constant(7f);
        Value column = slice(b, padColumns(b, b.arg(0), seven, 0), ix(0, 5), 3, 1);
        Value own = slice(b, b.arg(0), ix(0, 3), 3, 1);
        Module m = fused(b.module(b.op(ElementwiseOp.NEG.mlirName(), f32(3, 1),
                b.op(ElementwiseOp.ADD.mlirName(), f32(3, 1), column, own))));

        Op fusion = onlyFusion(m);
        assertThat(names(m)).containsExactly(StableHlo.CONSTANT, StableHlo.FUSION, StableHlo.FUNC_RETURN);
        assertThat(fusion.operands()).containsExactly(seven, b.arg(0));
        assertThat(StableHlo.fusionPieces(fusion, 0)).containsExactly(piece(0, ix(0, 0), ix(), ix(3, 1)));
        assertThat(StableHlo.fusionSliceStarts(fusion, 1)).containsExactly(0, 3);
    }

    @Test
    void thePadOfTwoFusionsIsReadByBoth() {
        ModuleBuilder b = new ModuleBuilder(GRID);
        Value p = padColumns(b, b.arg(0), b.constant(0f), 0);
        Value first = b.op(ElementwiseOp.NEG.mlirName(), GRID, b.op(ElementwiseOp.EXP.mlirName(), GRID, slice(b, p,
                ix(0, 0), 3, 4)));
        Value barrier = b.op("test.opaque", GRID, first);
        Value second = b.op(ElementwiseOp.NEG.mlirName(), GRID, b.op(ElementwiseOp.ADD.mlirName(), GRID, slice(b, p,
                ix(0, 2), 3, 4), barrier));
        Module m = fused(b.module(second));

        assertThat(names(m)).containsExactly(StableHlo.CONSTANT, StableHlo.FUSION, "test.opaque", StableHlo.FUSION,
                StableHlo.FUNC_RETURN);
        List<Op> fusions = m.main().body().ops().stream().filter(o -> o.name().equals(StableHlo.FUSION)).toList();
        assertThat(StableHlo.fusionPieces(fusions.get(0), 0)).hasSize(2);
        assertThat(StableHlo.fusionPieces(fusions.get(1), 0)).hasSize(2);
    }

    @Test
    void wholeInputsKeepConcatenationsAndPads() {
        ModuleBuilder b = new ModuleBuilder(ROW, GRID, ROW);
        Value p = padColumns(b, concatRows(b, b.arg(0), b.arg(1), b.arg(2)), b.constant(0f), 0);
        Value up = slice(b, p, ix(0, 1), 3, 4);
        Module m = b.module(b.op(ElementwiseOp.NEG.mlirName(), GRID, b.op(ElementwiseOp.ADD.mlirName(), GRID, up,
                b.arg(1))));
        new ElementwiseFusion(ElementwiseFusion.Inputs.WHOLE).run(m);

        assertThat(names(m)).containsExactly(StableHlo.CONCATENATE, StableHlo.CONSTANT, StableHlo.PAD,
                StableHlo.SLICE, StableHlo.FUSION, StableHlo.FUNC_RETURN);
        assertThat(onlyFusion(m).attributes()).isEmpty();
    }
}
