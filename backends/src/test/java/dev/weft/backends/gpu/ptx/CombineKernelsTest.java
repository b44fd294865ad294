package dev.weft.backends.gpu.ptx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.it.gpu.NcclPrograms;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.spi.SourceLocation;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Kernels folding ranks' contributions with a traced custom reduce op. */
class CombineKernelsTest {
    private static final List<DType> NUMERIC = List.of(DType.F32, DType.F64, DType.I32, DType.I64);
    private static final ReduceOp TWICE_PLUS = ReduceOp.custom("twice_plus", (a, b) -> a.mul(2).add(b));
    private static final ReduceOp WHERE_MIN = ReduceOp.custom("where_min",
            (a, b) -> Tensor.where(b.lt(a), b, a));

    @BeforeAll
    static void install() {
        Weft.install();
    }

    /** The private reduction function of {@code op} on {@code count} elements of {@code t}, as lowered for the GPU. */
    static Func reduction(ReduceOp op, DType t, long count) {
        Module m = (Module) Weft.lower("gpu", NcclPrograms.class, "allreduce", TensorSpec.of(t, count),
                Comm.world(), op);
        return m.functions().get(1);
    }

    @Test
    void tracedReduceOpsAssembleForEveryDtypeAndRankCount() throws Exception {
        List<Kernel> ks = new ArrayList<>();
        for (ReduceOp op : List.of(NcclPrograms.XPLUS, NcclPrograms.WHERE_MAX, WHERE_MIN, TWICE_PLUS)) {
            for (DType t : NUMERIC) {
                Func f = reduction(op, t, 6);
                for (int ranks : new int[] {1, 2, 5}) {
                    ks.add(CombineKernels.inRankOrder(f, 6, ranks, f.name() + "_" + ranks));
                }
            }
        }
        assertThat(ks).hasSize(4 * 4 * 3);
        Ptxas.assembleForEachTarget(ks);
    }

    /**
     * The first rank's element is loaded, then each further rank's block, {@code count · size} bytes on, is
     * combined into the accumulator in a loop that runs {@code ranks - 1} times; one store at the end.
     */
    @Test
    void theRankLoopStepsByOneBlockPerRank() {
        Func f = reduction(NcclPrograms.XPLUS, DType.F64, 6);
        String three = CombineKernels.inRankOrder(f, 10, 3, "k").ptx();
        assertThat(three).contains(".param .u64 p0", ".param .u64 p1", "add.s64 %rd", ", 80;",
                "setp.lt.s32", ", 3;", "mul.rn.f64", "add.rn.f64").doesNotContain(".param .u64 p2");
        assertThat(count(three, "ld.global.f64")).isEqualTo(2);
        assertThat(count(three, "st.global.f64")).isEqualTo(1);
        String one = CombineKernels.inRankOrder(f, 10, 1, "k").ptx();
        assertThat(one).doesNotContain("setp.lt.s32", "mul.rn.f64");
        assertThat(CombineKernels.inRankOrder(f, 10, 3, "k").launch()).isEqualTo(Launch.gridStride(10));
    }

    @Test
    void aFunctionThatIsNotElementwiseIsRejected() {
        Func f = reduction(NcclPrograms.PLUS_TOTAL, DType.F32, 4);
        assertThatThrownBy(() -> CombineKernels.inRankOrder(f, 4, 2, "k"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("non-elementwise op stablehlo.reduce in an elementwise body");
        Block body = Block.withArgs(List.of(TensorType.of(DType.F32, 4), TensorType.of(DType.F32, 4),
                TensorType.of(DType.F32, 4)));
        body.ops().add(new Op(StableHlo.FUNC_RETURN, List.of(body.arguments().getFirst()), List.of(), Map.of(),
                List.of(), SourceLocation.UNKNOWN));
        Func three = new Func("three", body);
        assertThatThrownBy(() -> CombineKernels.dtype(three))
                .hasMessageStartingWith("reduce function three must take two tensors and return one");
    }

    private static int count(String text, String what) {
        return text.split(Pattern.quote(what), -1).length - 1;
    }
}
