package dev.weft.backends.gpu.ptx;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.prim.ElementwiseOp;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every kernel kind × dtype the generator makes assembles with {@code ptxas} for each of {@link Ptxas#TARGETS}. */
class KernelAssemblyTest {
    private static final List<DType> NUMERIC = List.of(DType.F32, DType.F64, DType.I32, DType.I64);
    private static final List<DType> ALL = List.of(DType.F32, DType.F64, DType.I32, DType.I64, DType.BOOL);

    private static String name(String op, Object... parts) {
        StringBuilder b = new StringBuilder(op.substring(op.indexOf('.') + 1));
        for (Object p : parts) {
            b.append('_').append(p.toString().toLowerCase());
        }
        return b.toString();
    }

    @Test
    void everyElementwiseOpOnEveryDtypeItAccepts() throws Exception {
        List<Kernel> ks = new ArrayList<>();
        for (ElementwiseOp op : ElementwiseOp.values()) {
            for (DType t : ALL) {
                if (!op.accepts(t)) {
                    continue;
                }
                List<DType> outs = op.form() == ElementwiseOp.Form.CONVERT ? ALL
                        : List.of(op.form() == ElementwiseOp.Form.COMPARISON ? DType.BOOL : t);
                for (DType out : outs) {
                    ks.add(ElementwiseKernels.single(HandBuiltOps.elementwise(op, t, out), name(op.primitiveName(), t, out)));
                }
            }
        }
        assertThat(ks).hasSize(8 * 4 + 1 * 2 + 2 * 4 + 7 * 2 + 5 * (6 + 1 + 5));
        Ptxas.assembleForEachTarget(ks);
    }

    @Test
    void reductionsOverAnyAxes() throws Exception {
        List<Kernel> ks = new ArrayList<>();
        long[] small = {3, 4, 5}, large = {3, 70000, 5};
        for (ElementwiseOp op : List.of(ElementwiseOp.ADD, ElementwiseOp.MUL, ElementwiseOp.MAX, ElementwiseOp.MIN)) {
            String n = op.primitiveName();
            for (DType t : NUMERIC) {
                for (long[] dims : List.of(small, large)) {
                    String size = dims == small ? "small" : "large";
                    ks.addAll(ReduceKernels.reduce(name(n, t, "all", size), op, t, dims, new int[] {0, 1, 2})
                            .passes());
                    ks.addAll(ReduceKernels.reduce(name(n, t, "mid", size), op, t, dims, new int[] {1}).passes());
                    ks.addAll(ReduceKernels.reduce(name(n, t, "outer", size), op, t, dims, new int[] {0, 2})
                            .passes());
                }
            }
        }
        assertThat(ks).hasSize(4 * 4 * (3 + 5));
        Ptxas.assembleForEachTarget(ks);
    }

    @Test
    void dataMovementOnEveryDtype() throws Exception {
        List<Kernel> ks = new ArrayList<>();
        for (DType t : ALL) {
            ks.add(CopyKernels.affine(name("transpose", t), t, new long[] {4, 3}, new long[] {1, 4}, 0,
                    new long[] {3, 1}, 0));
            ks.add(CopyKernels.affine(name("scatter", t), t, new long[] {2, 3}, new long[] {3, 1}, 0,
                    new long[] {5, 1}, 2));
            ks.add(CopyKernels.pad(name("pad", t), t, new long[] {2, 3}, new long[] {1, 0}, new long[] {0, 1},
                    new long[] {4, 5}));
            ks.add(CopyKernels.iota(name("iota", t), t, new long[] {3, 4}, 1));
            DType[] starts = {DType.I32, DType.I64};
            ks.add(CopyKernels.dynamicSlice(name("dynamic_slice", t), t, new long[] {4, 5}, new long[] {2, 3},
                    starts));
            ks.add(CopyKernels.dynamicUpdate(name("dynamic_update", t), t, new long[] {4, 5}, new long[] {1, 5},
                    starts));
        }
        for (DType t : NUMERIC) {
            ks.add(GemmKernel.generate(name("gemm", t), t, 33, 17, 40, 3));
        }
        Ptxas.assembleForEachTarget(ks);
    }

    @Test
    void fusionWithScalarArgumentAndSplatConstant() throws Exception {
        Ptxas.assembleForEachTarget(List.of(ElementwiseKernels.fusion(HandBuiltOps.scaleAndShift(), "fused")));
    }
}
