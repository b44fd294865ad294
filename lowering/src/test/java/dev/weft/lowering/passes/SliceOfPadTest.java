package dev.weft.lowering.passes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code slice(pad(x))} becomes the padded window of {@code x}; the pad keeps only its other users. */
class SliceOfPadTest {
    private static final TensorType X = TensorType.of(DType.F64, 4, 5);

    /** x padded by (1, 1) low and (1, 1) high (6x7), a slice [start, limit) of it, and an opaque use of the pad. */
    private static Module program(long[] start, long[] limit, long[] strides) {
        ModuleBuilder b = new ModuleBuilder(X);
        Value zero = b.op(StableHlo.CONSTANT, TensorType.of(DType.F64));
        Value padded = b.op(StableHlo.PAD, List.of(b.arg(0), zero), List.of(TensorType.of(DType.F64, 6, 7)),
                SliceOfPad.attrs("edge_padding_low", new long[] {1, 1}, "edge_padding_high", new long[] {1, 1},
                        "interior_padding", new long[] {0, 0}), List.of()).result();
        long[] size = {(limit[0] - start[0] + strides[0] - 1) / strides[0], (limit[1] - start[1] + strides[1] - 1)
                / strides[1]};
        Value window = b.op(StableHlo.SLICE, List.of(padded), List.of(TensorType.of(DType.F64, size)),
                SliceOfPad.attrs("start_indices", start, "limit_indices", limit, "strides", strides), List.of()).result();
        Value other = b.op("test.opaque", TensorType.of(DType.F64, 6, 7), padded);
        return b.module(window, other);
    }

    private static List<String> names(Module m) {
        return m.main().body().ops().stream().map(Op::name).toList();
    }

    private static Op returned(Module m, int i) {
        Value v = m.main().body().terminator().operand(i);
        return m.main().body().ops().stream().filter(op -> op.results().contains(v)).findFirst().orElseThrow();
    }

    @Test
    void aWindowReachingIntoThePaddingIsThePaddedWindowOfTheOperand() {
        Module m = program(new long[] {4, 0}, new long[] {6, 7}, new long[] {1, 1});
        new SliceOfPad().run(m);
        new Verifier().run(m);
        Op pad = returned(m, 0);
        assertThat(pad.name()).isEqualTo(StableHlo.PAD);
        assertThat(((Attr.I64Array) pad.attr("edge_padding_low")).toArray()).containsExactly(0, 1);
        assertThat(((Attr.I64Array) pad.attr("edge_padding_high")).toArray()).containsExactly(1, 1);
        Op cut = m.main().body().ops().stream().filter(op -> op.results().contains(pad.operand(0))).findFirst()
                .orElseThrow();
        assertThat(cut.name()).isEqualTo(StableHlo.SLICE);
        assertThat(cut.operand(0)).isSameAs(m.main().body().arguments().getFirst());
        assertThat(((Attr.I64Array) cut.attr("start_indices")).toArray()).containsExactly(3, 0);
        assertThat(((Attr.I64Array) cut.attr("limit_indices")).toArray()).containsExactly(4, 5);
        assertThat(pad.result().tensorType().shape().dims()).containsExactly(2, 7);
    }

    @Test
    void aWindowInsideTheOperandIsASliceOfIt() {
        Module m = program(new long[] {1, 2}, new long[] {3, 6}, new long[] {1, 1});
        new SliceOfPad().run(m);
        new Verifier().run(m);
        Op cut = returned(m, 0);
        assertThat(cut.name()).isEqualTo(StableHlo.SLICE);
        assertThat(cut.operand(0)).isSameAs(m.main().body().arguments().getFirst());
        assertThat(((Attr.I64Array) cut.attr("start_indices")).toArray()).containsExactly(0, 1);
        assertThat(((Attr.I64Array) cut.attr("limit_indices")).toArray()).containsExactly(2, 5);
    }

    @Test
    void stridedSlicesAndWindowsOfPaddingOnlyStay() {
        for (Module m : List.of(program(new long[] {0, 0}, new long[] {6, 7}, new long[] {2, 1}),
                program(new long[] {0, 0}, new long[] {1, 7}, new long[] {1, 1}))) {
            List<String> before = names(m);
            new SliceOfPad().run(m);
            assertThat(names(m)).isEqualTo(before);
        }
    }

    @Test
    void aPadLeftWithoutUsersIsDroppedByDce() {
        ModuleBuilder b = new ModuleBuilder(X);
        Value zero = b.op(StableHlo.CONSTANT, TensorType.of(DType.F64));
        Value padded = b.op(StableHlo.PAD, List.of(b.arg(0), zero), List.of(TensorType.of(DType.F64, 6, 7)),
                SliceOfPad.attrs("edge_padding_low", new long[] {1, 1}, "edge_padding_high", new long[] {1, 1},
                        "interior_padding", new long[] {0, 0}), List.of()).result();
        Value window = b.op(StableHlo.SLICE, List.of(padded), List.of(TensorType.of(DType.F64, 2, 3)),
                SliceOfPad.attrs("start_indices", new long[] {1, 1}, "limit_indices", new long[] {3, 4}, "strides",
                        new long[] {1, 1}), List.of()).result();
        Module m = b.module(window);
        new SliceOfPad().run(m);
        new DeadCodeElimination().run(m);
        assertThat(names(m)).containsExactly(StableHlo.SLICE, StableHlo.FUNC_RETURN);
    }
}
