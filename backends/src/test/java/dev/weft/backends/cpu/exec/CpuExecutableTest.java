package dev.weft.backends.cpu.exec;

import static dev.weft.backends.cpu.exec.Ir.args;
import static dev.weft.backends.cpu.exec.Ir.t;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.TokenType;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.ElementwiseOp;
import dev.weft.spi.TensorAccess;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.params.ParameterizedTest;

class CpuExecutableTest {
    private static final TensorType F32_4 = t(DType.F32, 4);

    @Test
    void elementwiseChainWithCompareSelectConvert() {
        Ir ir = new Ir();
        List<Value> a = args(F32_4, F32_4);
        Value x = a.get(0), y = a.get(1);
        Value s = ir.binary(ElementwiseOp.ADD, x, y);
        Value p = ir.binary(ElementwiseOp.MUL, s, x);
        Value gt = ir.compare("GT", p, y);
        Value r = ir.op(ElementwiseOp.SELECT, F32_4, gt, p, y);
        Value c = ir.op(ElementwiseOp.CONVERT, t(DType.I32, 4), r);
        CpuExecutable exe = new CpuExecutable(ir.module(a, r, c));
        List<Tensor> out = exe.run(List.of(Tensor.of(new float[] {1, -2, 3, 0.5f}),
                Tensor.of(new float[] {2, 1, -1, 10})));
        // s = [3, -1, 2, 10.5]; p = [3, 2, 6, 5.25]; p > y = [T, T, T, F]
        assertThat(out.get(0).toFloatArray()).containsExactly(3, 2, 6, 10);
        assertThat(out.get(1).dtype()).isEqualTo(DType.I32);
        assertThat(out.get(1).toIntArray()).containsExactly(3, 2, 6, 10);
    }

    private static Block libraryBody(Ir ir, ElementwiseOp combiner, DType d) {
        ir.begin();
        List<Value> ba = args(t(d), t(d));
        return ir.close(ba, ir.binary(combiner, ba.get(0), ba.get(1)));
    }

    @Test
    void reduceWithLibraryBodyUsesTheInitValue() {
        Ir ir = new Ir();
        List<Value> a = args(t(DType.F32, 2, 3));
        Value init = ir.f32(10);
        Block body = libraryBody(ir, ElementwiseOp.ADD, DType.F32);
        Value sum = ir.op(StableHlo.REDUCE, List.of(a.get(0), init), List.of(t(DType.F32, 2)),
                Map.of("dimensions", Attr.I64Array.of(1)), List.of(body)).result();
        Value lo = ir.f32(Float.NEGATIVE_INFINITY);
        Block maxBody = libraryBody(ir, ElementwiseOp.MAX, DType.F32);
        Value max = ir.op(StableHlo.REDUCE, List.of(a.get(0), lo), List.of(t(DType.F32, 3)),
                Map.of("dimensions", Attr.I64Array.of(0)), List.of(maxBody)).result();
        List<Tensor> out = new CpuExecutable(ir.module(a, sum, max))
                .run(List.of(Tensor.of(new float[] {1, 2, 3, 4, -5, 6}, 2, 3)));
        assertThat(out.get(0).toFloatArray()).containsExactly(16, 15);
        assertThat(out.get(1).toFloatArray()).containsExactly(4, 2, 6);
    }

    @Test
    void reduceWithCustomBodyEvaluatesTheRegion() {
        Ir ir = new Ir();
        List<Value> a = args(t(DType.I64, 2, 3));
        Value init = ir.constant(t(DType.I64), MemorySegment.ofArray(new long[] {0}));
        ir.begin();
        List<Value> ba = args(t(DType.I64), t(DType.I64));
        Value sq = ir.binary(ElementwiseOp.MUL, ba.get(1), ba.get(1));
        Block body = ir.close(ba, ir.binary(ElementwiseOp.ADD, ba.get(0), sq));
        Value r = ir.op(StableHlo.REDUCE, List.of(a.get(0), init), List.of(t(DType.I64, 2)),
                Map.of("dimensions", Attr.I64Array.of(1)), List.of(body)).result();
        Tensor out = new CpuExecutable(ir.module(a, r)).run(List.of(Tensor.of(new long[] {1, 2, 3, 4, 5, 6}, 2, 3)))
                .getFirst();
        assertThat(out.toLongArray()).containsExactly(14, 77);
    }

    @Test
    void dotGeneralInCanonicalForm() {
        Ir ir = new Ir();
        List<Value> a = args(t(DType.F64, 2, 2, 3), t(DType.F64, 2, 3, 2));
        Value d = ir.op(StableHlo.DOT_GENERAL, List.of(a.get(0), a.get(1)), List.of(t(DType.F64, 2, 2, 2)),
                Map.of("dot_dimension_numbers", new Attr.DotDimensions(List.of(0L), List.of(0L), List.of(2L),
                        List.of(1L))), List.of()).result();
        Tensor lhs = Tensor.of(new double[] {1, 2, 3, 4, 5, 6, 1, 0, 0, 0, 1, 0}, 2, 2, 3);
        Tensor rhs = Tensor.of(new double[] {1, 0, 0, 1, 1, 1, 2, 3, 4, 5, 6, 7}, 2, 3, 2);
        assertThat(new CpuExecutable(ir.module(a, d)).run(List.of(lhs, rhs)).getFirst().toDoubleArray())
                .containsExactly(4, 5, 10, 11, 2, 3, 4, 5);
    }

    @Test
    void whileLoopSumsWithACapture() {
        Ir ir = new Ir();
        TensorType i32 = t(DType.I32);
        List<Value> a = args(i32);
        Value x = a.getFirst();
        Value zero = ir.i32(0), one = ir.i32(1);
        ir.begin();
        List<Value> ca = args(i32, i32);
        Block cond = ir.close(ca, ir.compare("LT", ca.get(0), ir.i32(10)));
        ir.begin();
        List<Value> ba = args(i32, i32);
        Value acc = ir.binary(ElementwiseOp.ADD, ba.get(1), ir.binary(ElementwiseOp.ADD, ba.get(0), x));
        Block body = ir.close(ba, ir.binary(ElementwiseOp.ADD, ba.get(0), one), acc);
        var loop = ir.op(StableHlo.WHILE, List.of(zero, zero), List.of(i32, i32), Map.of(), List.of(cond, body));
        Module m = ir.module(a, loop.results().get(1), loop.results().get(0));
        List<Tensor> out = new CpuExecutable(m).run(List.of(Tensor.scalar(DType.I32, 100)));
        assertThat(out.get(0).item()).isEqualTo(45 + 1000);
        assertThat(out.get(1).item()).isEqualTo(10);
    }

    @Test
    void whileLoopOverwritesItsCarryInPlace() {
        Ir ir = new Ir();
        TensorType vec = t(DType.F32, 1000), i32 = t(DType.I32);
        List<Value> a = args(vec);
        Value start = ir.i32(0), one = ir.i32(1), half = ir.constant(vec, MemorySegment.ofArray(fill(1000, 0.5f)));
        ir.begin();
        List<Value> ca = args(i32, vec);
        Block cond = ir.close(ca, ir.compare("LT", ca.get(0), ir.i32(20)));
        ir.begin();
        List<Value> ba = args(i32, vec);
        Value next = ir.binary(ElementwiseOp.ADD, ba.get(1), half, 0);
        Block body = ir.close(ba, ir.binary(ElementwiseOp.ADD, ba.get(0), one, 0), next);
        var loop = ir.op(StableHlo.WHILE, List.of(start, a.getFirst()), List.of(i32, vec), counted(0, 20, 1),
                List.of(cond, body));
        CpuExecutable exe = new CpuExecutable(ir.module(a, loop.results().get(1)));
        Tensor x = Tensor.of(fill(1000, 1));
        assertThat(exe.run(List.of(x)).getFirst().toFloatArray()).containsOnly(11f);
        assertThat(x.toFloatArray()).containsOnly(1f);
        long perRun = exe.allocationCount();
        assertThat(perRun).as("buffers for 20 iterations").isLessThan(10);
    }

    /**
     * A while loop that is not marked counted runs its condition region, whatever its shape. Both loops sum the
     * counter values they see: Σ_{i=3}^{11} i = 63 counting up, Σ_{i=4}^{11} i = 60 counting down while
     * {@code i > 3}; the counter is the second carry.
     */
    @ParameterizedTest
    @ValueSource(strings = {"LT", "GT"})
    void whileLoopsOverACounterCarry(String direction) {
        Ir ir = new Ir();
        TensorType i32 = t(DType.I32);
        List<Value> a = args(i32);
        boolean up = direction.equals("LT");
        ir.begin();
        List<Value> ca = args(i32, i32);
        Block cond = ir.close(ca, ir.compare(direction, ca.get(1), ir.i32(up ? 12 : 3)));
        ir.begin();
        List<Value> ba = args(i32, i32);
        Value sum = ir.binary(ElementwiseOp.ADD, ba.get(0), ba.get(1));
        Block body = ir.close(ba, sum, ir.binary(up ? ElementwiseOp.ADD : ElementwiseOp.SUB, ba.get(1), ir.i32(1)));
        var loop = ir.op(StableHlo.WHILE, List.of(ir.i32(0), a.getFirst()), List.of(i32, i32), Map.of(),
                List.of(cond, body));
        CpuExecutable exe = new CpuExecutable(ir.module(a, loop.results().get(0)));
        assertThat(exe.run(List.of(Tensor.scalar(DType.I32, up ? 3 : 11))).getFirst().item())
                .isEqualTo(up ? 63 : 60);
        assertThat(exe.run(List.of(Tensor.scalar(DType.I32, up ? 12 : 3))).getFirst().item())
                .as("no iteration").isEqualTo(0);
    }

    /**
     * A counted loop takes its count from its attribute and never runs its condition region (here a call that
     * fails), whichever carry counts and whether or not the body reads the counter: the loops sum the counter
     * values they see, Σ_{i=3}^{11} i = 63, or count 9 iterations.
     */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aCountedLoopNeverRunsItsCondition(boolean readsCounter) {
        CustomCallRegistry calls = new CustomCallRegistry().register("test.fail", (op, in, results) -> {
            throw new AssertionError("the condition of a counted loop ran");
        });
        Ir ir = new Ir();
        TensorType i32 = t(DType.I32);
        List<Value> a = args(i32);
        ir.begin();
        List<Value> ca = args(i32, i32);
        Value pred = ir.op(StableHlo.CUSTOM_CALL, List.of(ca.get(1)), List.of(t(DType.BOOL)),
                Map.of("call_target_name", new Attr.Str("test.fail")), List.of()).result();
        Block cond = ir.close(ca, pred);
        ir.begin();
        List<Value> ba = args(i32, i32);
        Value sum = ir.binary(ElementwiseOp.ADD, ba.get(0), readsCounter ? ba.get(1) : ir.i32(1));
        Block body = ir.close(ba, sum, ir.binary(ElementwiseOp.ADD, ba.get(1), ir.i32(1)));
        var loop = ir.op(StableHlo.WHILE, List.of(a.getFirst(), ir.i32(3)), List.of(i32, i32),
                Map.of(Attr.CountedLoop.KEY, new Attr.CountedLoop(1, 3, 12, 1)), List.of(cond, body));
        CpuExecutable exe = new CpuExecutable(ir.module(a, loop.results().get(0), loop.results().get(1)), calls);
        List<Tensor> out = exe.run(List.of(Tensor.scalar(DType.I32, 0)));
        assertThat(out.get(0).item()).isEqualTo(readsCounter ? 63 : 9);
        assertThat(out.get(1).item()).as("the last counter").isEqualTo(12);
    }

    @Test
    void ifRunsOneBranchOverOuterValues() {
        Ir ir = new Ir();
        List<Value> a = args(t(DType.F64));
        Value x = a.getFirst();
        Value pred = ir.compare("GT", x, ir.constant(t(DType.F64), MemorySegment.ofArray(new double[] {0})));
        ir.begin();
        Block onTrue = ir.close(List.of(), ir.binary(ElementwiseOp.MUL, x, x));
        ir.begin();
        Block onFalse = ir.close(List.of(), ir.op(ElementwiseOp.NEG, t(DType.F64), x));
        Value r = ir.op(StableHlo.IF, List.of(pred), List.of(t(DType.F64)), Map.of(), List.of(onTrue, onFalse))
                .result();
        CpuExecutable exe = new CpuExecutable(ir.module(a, r));
        assertThat(exe.run(List.of(Tensor.scalar(DType.F64, 3))).getFirst().item()).isEqualTo(9);
        assertThat(exe.run(List.of(Tensor.scalar(DType.F64, -2))).getFirst().item()).isEqualTo(2);
    }

    @Test
    void fusionComputesChunkByChunk() {
        int n = 10_000;
        TensorType vec = t(DType.F32, n);
        Ir ir = new Ir();
        List<Value> a = args(vec, vec);
        ir.begin();
        List<Value> fa = args(vec, vec);
        Value prod = ir.binary(ElementwiseOp.MUL, fa.get(0), fa.get(1));
        Value sum = ir.binary(ElementwiseOp.ADD, prod, fa.get(0));
        Value pos = ir.compare("GT", sum, ir.constant(vec, MemorySegment.ofArray(new float[n])));
        Value relu = ir.op(ElementwiseOp.SELECT, vec, pos, sum, ir.op(ElementwiseOp.NEG, vec, fa.get(1)));
        Block region = ir.close(fa, sum, relu);
        var fusion = ir.op(StableHlo.FUSION, a, List.of(vec, vec), Map.of(StableHlo.LAST_USE, Attr.I64Array.of()),
                List.of(region));
        CpuExecutable exe = new CpuExecutable(ir.module(a, fusion.results().get(0), fusion.results().get(1)));
        float[] x = new float[n], y = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (i % 17) - 8;
            y[i] = (i % 5) - 2;
        }
        List<Tensor> out = exe.run(List.of(Tensor.of(x), Tensor.of(y)));
        float[] s = out.get(0).toFloatArray(), r = out.get(1).toFloatArray();
        for (int i = 0; i < n; i++) {
            float want = x[i] * y[i] + x[i];
            assertThat(s[i]).isEqualTo(want);
            assertThat(r[i]).isEqualTo(want > 0 ? want : -y[i]);
        }
    }

    @Test
    void fusionBroadcastsAScalarArgumentAcrossChunks() {
        int n = 2 * FusionInstruction.CHUNK + 3;
        TensorType vec = t(DType.F32, n), scalar = t(DType.F32);
        Ir ir = new Ir();
        List<Value> a = args(vec, scalar);
        ir.begin();
        List<Value> fa = args(scalar, vec);
        Value wide = ir.op(StableHlo.BROADCAST_IN_DIM, List.of(fa.get(0)), List.of(vec),
                Map.of("broadcast_dimensions", Attr.I64Array.of()), List.of()).result();
        Block region = ir.close(fa, ir.binary(ElementwiseOp.MUL, ir.binary(ElementwiseOp.ADD, fa.get(1), wide), wide));
        Value r = ir.op(StableHlo.FUSION, List.of(a.get(1), a.get(0)), List.of(vec), Map.of(), List.of(region))
                .result();
        CpuExecutable exe = new CpuExecutable(ir.module(a, r));
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = i % 100 - 50;
        }
        float[] got = exe.run(List.of(Tensor.of(x), Tensor.full(DType.F32, 3))).getFirst().toFloatArray();
        for (int i = 0; i < n; i++) {
            assertThat(got[i]).isEqualTo((x[i] + 3) * 3);
        }
    }

    @Test
    void fusionWritesOverADyingInputAcrossChunks() {
        int n = 3 * FusionInstruction.CHUNK + 5;
        TensorType vec = t(DType.I32, n);
        Ir ir = new Ir();
        List<Value> a = args(vec);
        Value v = ir.op(ElementwiseOp.NEG, vec, a.getFirst());
        ir.begin();
        List<Value> fa = args(vec, vec);
        Block region = ir.close(fa, ir.binary(ElementwiseOp.SUB, ir.binary(ElementwiseOp.MUL, fa.get(0), fa.get(0)),
                fa.get(1)));
        Value r = ir.op(StableHlo.FUSION, List.of(v, a.getFirst()), List.of(vec),
                Map.of(StableHlo.LAST_USE, Attr.I64Array.of(0)), List.of(region)).result();
        CpuExecutable exe = new CpuExecutable(ir.module(a, r));
        int[] x = new int[n];
        for (int i = 0; i < n; i++) {
            x[i] = i % 1000 - 500;
        }
        int[] got = exe.run(List.of(Tensor.of(x))).getFirst().toIntArray();
        for (int i = 0; i < n; i++) {
            assertThat(got[i]).isEqualTo(x[i] * x[i] - x[i]);
        }
        assertThat(exe.allocationCount()).as("negate's buffer only: the fusion writes over it").isEqualTo(1);
    }

    /** {@code v_{k+1} = v_k + x}, 50 times, so the result is {@code 51 x}. */
    private static Module chain(boolean annotated) {
        Ir ir = new Ir();
        TensorType vec = t(DType.F32, 1000);
        List<Value> a = args(vec);
        Value v = ir.op(ElementwiseOp.NEG, vec, a.getFirst());
        v = ir.op(ElementwiseOp.NEG, vec, v);
        for (int k = 0; k < 50; k++) {
            v = annotated ? ir.binary(ElementwiseOp.ADD, v, a.getFirst(), 0)
                    : ir.binary(ElementwiseOp.ADD, v, a.getFirst());
        }
        return ir.module(a, v);
    }

    @Test
    void lastUseAnnotationsLetBuffersBeReused() {
        Tensor x = Tensor.of(fill(1000, 2));
        CpuExecutable plain = new CpuExecutable(chain(false)), reusing = new CpuExecutable(chain(true));
        assertThat(plain.run(List.of(x)).getFirst().toFloatArray()).containsOnly(102f);
        assertThat(reusing.run(List.of(x)).getFirst().toFloatArray()).containsOnly(102f);
        assertThat(plain.allocationCount()).isEqualTo(52);
        assertThat(reusing.allocationCount()).isLessThanOrEqualTo(2);
        assertThat(x.toFloatArray()).containsOnly(2f);
    }

    @Test
    void aLastUseMarkOnAValueStillInUseIsIgnored() {
        Ir ir = new Ir();
        List<Value> a = args(F32_4);
        Value v = ir.op(ElementwiseOp.NEG, F32_4, a.getFirst());
        Value twice = ir.binary(ElementwiseOp.ADD, v, v, 0, 1);
        Value r = ir.binary(ElementwiseOp.MUL, v, twice);
        Tensor out = new CpuExecutable(ir.module(a, r)).run(List.of(Tensor.of(new float[] {1, 2, 3, 4}))).getFirst();
        assertThat(out.toFloatArray()).containsExactly(2, 8, 18, 32);
    }

    /**
     * An argument returned unchanged is that tensor itself, as JAX forwards it (no copy, no fresh buffer); any other
     * result over an argument's bytes (here a reshape) is a copy, so that no two tensors share a buffer.
     */
    @Test
    void anArgumentReturnedUnchangedIsForwardedAndNoOtherResultAliasesOne() {
        Ir ir = new Ir();
        List<Value> a = args(F32_4, F32_4);
        Value reshaped = ir.op(StableHlo.RESHAPE, t(DType.F32, 2, 2), a.getFirst());
        Tensor x = Tensor.of(new float[] {1, 2, 3, 4});
        Tensor y = Tensor.of(new float[] {5, 6, 7, 8});
        CpuExecutable exe = new CpuExecutable(ir.module(a, a.getFirst(), reshaped, a.getFirst(), a.get(1)));
        long allocations = exe.allocationCount();
        List<Tensor> out = exe.run(List.of(x, y));
        assertThat(out.get(0)).isSameAs(x);
        assertThat(out.get(2)).isSameAs(x);
        assertThat(out.get(3)).isSameAs(y);
        assertThat(TensorAccess.data(out.get(1)).address()).isNotEqualTo(TensorAccess.data(x).address());
        assertThat(out.get(1).shape()).containsExactly(2, 2);
        assertThat(out.get(1).toFloatArray()).containsExactly(1, 2, 3, 4);
        assertThat(exe.allocationCount()).isEqualTo(allocations);
    }

    /** A donated argument returned unchanged is not forwarded: its buffer becomes the result's. */
    @Test
    void aDonatedArgumentReturnedUnchangedIsNotForwarded() {
        Ir ir = new Ir();
        List<Value> a = args(F32_4);
        Tensor x = Tensor.of(new float[] {1, 2, 3, 4});
        List<Tensor> out = new CpuExecutable(ir.module(a, a.getFirst())).run(List.of(x.donate()));
        assertThat(out.getFirst()).isNotSameAs(x);
        assertThat(out.getFirst().toFloatArray()).containsExactly(1, 2, 3, 4);
    }

    @Test
    void runTimeErrorsNameTheOpsLocation() {
        Ir ir = new Ir();
        List<Value> a = args(t(DType.I32, 2), t(DType.I32, 2));
        Value q = ir.binary(ElementwiseOp.DIV, a.get(0), a.get(1));
        CpuExecutable exe = new CpuExecutable(ir.module(a, q));
        assertThat(exe.run(List.of(Tensor.of(new int[] {7, -7}), Tensor.of(new int[] {2, 2}))).getFirst().toIntArray())
                .containsExactly(3, -3);
        assertThatThrownBy(() -> exe.run(List.of(Tensor.of(new int[] {1, 1}), Tensor.of(new int[] {1, 0}))))
                .isInstanceOf(WeftException.class).hasMessageStartingWith("Prog.java:42: ")
                .hasMessageContaining("integer division by zero");
    }

    @Test
    void argumentsAreChecked() {
        Ir ir = new Ir();
        List<Value> a = args(F32_4);
        CpuExecutable exe = new CpuExecutable(ir.module(a, ir.op(ElementwiseOp.NEG, F32_4, a.getFirst())));
        assertThatThrownBy(() -> exe.run(List.of(Tensor.of(new double[] {1, 2, 3, 4}))))
                .isInstanceOf(WeftException.class).hasMessageContaining("dtype");
        assertThatThrownBy(() -> exe.run(List.of(Tensor.of(new float[] {1, 2, 3, 4}, 2, 2))))
                .isInstanceOf(WeftException.class);
    }

    @Test
    void dataMovementOps() {
        Ir ir = new Ir();
        List<Value> a = args(t(DType.I32, 2, 3));
        Value x = a.getFirst();
        Value tr = ir.op(StableHlo.TRANSPOSE, List.of(x), List.of(t(DType.I32, 3, 2)),
                Map.of("permutation", Attr.I64Array.of(1, 0)), List.of()).result();
        Value bc = ir.op(StableHlo.BROADCAST_IN_DIM, List.of(x), List.of(t(DType.I32, 2, 2, 3)),
                Map.of("broadcast_dimensions", Attr.I64Array.of(1, 2)), List.of()).result();
        Value sl = ir.op(StableHlo.SLICE, List.of(x), List.of(t(DType.I32, 2, 2)),
                Map.of("start_indices", Attr.I64Array.of(0, 0), "limit_indices", Attr.I64Array.of(2, 3),
                        "strides", Attr.I64Array.of(1, 2)), List.of()).result();
        Value cat = ir.op(StableHlo.CONCATENATE, List.of(x, sl), List.of(t(DType.I32, 2, 5)),
                Map.of("dimension", Attr.Int.i64(1)), List.of()).result();
        Value pd = ir.op(StableHlo.PAD, List.of(sl, ir.i32(-1)), List.of(t(DType.I32, 3, 3)),
                Map.of("edge_padding_low", Attr.I64Array.of(0, 1), "edge_padding_high", Attr.I64Array.of(0, 0),
                        "interior_padding", Attr.I64Array.of(1, 0)), List.of()).result();
        Value io = ir.op(StableHlo.IOTA, List.of(), List.of(t(DType.I64, 2, 3)),
                Map.of("iota_dimension", Attr.Int.i64(1)), List.of()).result();
        List<Tensor> out = new CpuExecutable(ir.module(a, tr, bc, sl, cat, pd, io))
                .run(List.of(Tensor.of(new int[] {1, 2, 3, 4, 5, 6}, 2, 3)));
        assertThat(out.get(0).toIntArray()).containsExactly(1, 4, 2, 5, 3, 6);
        assertThat(out.get(1).toIntArray()).containsExactly(1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6);
        assertThat(out.get(2).toIntArray()).containsExactly(1, 3, 4, 6);
        assertThat(out.get(3).toIntArray()).containsExactly(1, 2, 3, 1, 3, 4, 5, 6, 4, 6);
        assertThat(out.get(4).toIntArray()).containsExactly(-1, 1, 3, -1, -1, -1, -1, 4, 6);
        assertThat(out.get(5).toLongArray()).containsExactly(0, 1, 2, 0, 1, 2);
    }

    @Test
    void customCallsDispatchByTargetAndThreadTokens() {
        List<String> seen = new ArrayList<>();
        CustomCallRegistry calls = new CustomCallRegistry().register("test.twice", (op, in, results) -> {
            seen.add(((Attr.Str) op.attr("backend_config")).value());
            assertThat(in[1]).isEqualTo(CustomCallRegistry.TOKEN);
            MemorySegment out = Arena.ofAuto().allocate(16);
            for (int i = 0; i < 4; i++) {
                out.setAtIndex(ValueLayout.JAVA_FLOAT, i, 2 * in[0].getAtIndex(ValueLayout.JAVA_FLOAT, i));
            }
            results[0] = out;
        }).register("test.token", (op, in, results) -> { });
        Ir ir = new Ir();
        List<Value> a = args(F32_4);
        Value token = ir.op("stablehlo.custom_call", List.of(), List.of(TokenType.INSTANCE),
                Map.of("call_target_name", new Attr.Str("test.token")), List.of()).result();
        var call = ir.op(StableHlo.CUSTOM_CALL, List.of(a.getFirst(), token), List.of(F32_4, TokenType.INSTANCE),
                Map.of("call_target_name", new Attr.Str("test.twice"), "backend_config", new Attr.Str("cfg")),
                List.of());
        Value r = ir.binary(ElementwiseOp.ADD, call.results().getFirst(), a.getFirst());
        CpuExecutable exe = new CpuExecutable(ir.module(a, r), calls);
        assertThat(exe.run(List.of(Tensor.of(new float[] {1, 2, 3, 4}))).getFirst().toFloatArray())
                .containsExactly(3, 6, 9, 12);
        assertThat(seen).containsExactly("cfg");
    }

    /**
     * A counted loop whose body is a custom call threading a token (the shape of a compiled allreduce loop) that
     * does not retain its operands, like the communication handlers, allocates no Java objects per iteration once
     * compiled by C2: a run of 100 000 iterations allocates at most a few bytes per iteration more than a run of 10
     * (it was ~200 before dead buffers were pooled with their {@code Buffer} objects and the call's arrays were
     * reused). Both ways a handler can run: through the arrays of {@link CustomCallHandler#call}, and as a direct
     * operand/result call, which then runs every iteration.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void aCountedLoopAroundACustomCallAllocatesNothingPerIteration(boolean direct) {
        long[] directCalls = {0};
        CustomCallRegistry calls = new CustomCallRegistry().register("test.negate", new CustomCallHandler() {
            @Override
            public void call(Op op, MemorySegment[] in, MemorySegment[] results) {
                if (direct) {
                    throw new AssertionError("array call of a handler with a direct call");
                }
                negateFirst(in[0], results[0]);
            }

            @Override
            public boolean retainsOperands(Op op) {
                return false;
            }

            @Override
            public OperandResultCall operandResultCall(Op op) {
                return direct ? (in, result) -> {
                    directCalls[0]++;
                    negateFirst(in, result);
                } : null;
            }
        });
        int[] iterations = {10, 100_000};
        CpuExecutable[] exes = {negateLoop(calls, iterations[0]), negateLoop(calls, iterations[1])};
        Tensor x = Tensor.of(new float[] {1, -2, 3, -4});
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long[] bytes = new long[2];
        for (int warm = 0; warm < 20; warm++) {
            for (int k = 0; k < 2; k++) {
                long before = threads.getCurrentThreadAllocatedBytes();
                Tensor r = exes[k].run(List.of(x)).getFirst();
                bytes[k] = threads.getCurrentThreadAllocatedBytes() - before;
                assertThat(r.toFloatArray()).containsExactly(1, -2, 3, -4);
            }
        }
        assertThat((double) (bytes[1] - bytes[0]) / (iterations[1] - iterations[0]))
                .as("bytes allocated per iteration").isLessThan(4);
        assertThat(directCalls[0]).isEqualTo(direct ? 20L * (iterations[0] + iterations[1]) : 0);
    }

    /**
     * A direct custom call whose handler writes over its operand (a collective: {@code MPI_IN_PLACE}) takes the
     * buffer of an operand that dies at it, so it allocates none of its own; a handler that may not is offered a
     * buffer of its own. Either way the result is the call's.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aDirectCallThatWritesOverItsOperandTakesTheDyingOperandsBuffer(boolean writesOver) {
        long[] seen = new long[2];
        CustomCallRegistry calls = new CustomCallRegistry().register("test.negate", new CustomCallHandler() {
            @Override
            public void call(Op op, MemorySegment[] in, MemorySegment[] results) {
                throw new AssertionError("array call of a handler with a direct call");
            }

            @Override
            public boolean retainsOperands(Op op) {
                return false;
            }

            @Override
            public OperandResultCall operandResultCall(Op op) {
                return (in, result) -> {
                    seen[0] = in.address();
                    seen[1] = result.address();
                    negateFirst(in, result);
                };
            }

            @Override
            public boolean writesOverOperand(Op op) {
                return writesOver;
            }
        });
        Ir ir = new Ir();
        List<Value> a = args(F32_4);
        Value twice = ir.binary(ElementwiseOp.ADD, a.getFirst(), a.getFirst());
        Value neg = ir.op(StableHlo.CUSTOM_CALL, List.of(twice), List.of(F32_4),
                Map.of("call_target_name", new Attr.Str("test.negate"), StableHlo.LAST_USE, Attr.I64Array.of(0)),
                List.of()).result();
        CpuExecutable exe = new CpuExecutable(ir.module(a, neg), calls);
        Tensor x = Tensor.of(new float[] {1, -2, 3, -4});
        assertThat(exe.run(List.of(x)).getFirst().toFloatArray()).containsExactly(-2, -4, 6, -8);
        assertThat(seen[1] == seen[0]).as("the result written over the operand").isEqualTo(writesOver);
        assertThat(exe.allocationCount()).isEqualTo(writesOver ? 1 : 2);
        assertThat(x.toFloatArray()).containsExactly(1, -2, 3, -4);
    }

    private static void negateFirst(MemorySegment in, MemorySegment result) {
        MemorySegment.copy(in, 0, result, 0, result.byteSize());
        result.setAtIndex(ValueLayout.JAVA_FLOAT, 0, -in.getAtIndex(ValueLayout.JAVA_FLOAT, 0));
    }

    /**
     * A loop body that replaces a carry without reading it ({@code acc = x + x}) frees the carry's buffer as it
     * starts, so the new value takes that buffer: after the first iteration nothing more is allocated (two buffers
     * would alternate otherwise), and the results are the ops' own, including for a loop that never runs.
     */
    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 5})
    void aCarryTheBodyNeverReadsLendsItsBufferToTheNewValue(int n) {
        CpuExecutable exe = replacingLoop(n);
        float[] x = {1, -2, 3.5f, 0};
        float[] acc = {9, 9, 9, 9};
        float[] got = exe.run(List.of(Tensor.of(acc), Tensor.of(x))).getFirst().toFloatArray();
        assertThat(got).containsExactly(n == 0 ? acc : new float[] {2, -4, 7, 0});
        if (n >= 1) {
            CpuExecutable once = replacingLoop(1);
            once.run(List.of(Tensor.of(acc), Tensor.of(x)));
            assertThat(exe.allocationCount()).as("buffers allocated by %d iterations", n)
                    .isEqualTo(once.allocationCount());
        }
    }

    /** {@code for (i = 0; i < n; i++) acc = x + x}, returning acc. */
    private static CpuExecutable replacingLoop(int n) {
        Ir ir = new Ir();
        TensorType i32 = t(DType.I32);
        List<Value> a = args(F32_4, F32_4);
        ir.begin();
        List<Value> ca = args(i32, F32_4, F32_4);
        Block cond = ir.close(ca, ir.compare("LT", ca.get(0), ir.i32(n)));
        ir.begin();
        List<Value> ba = args(i32, F32_4, F32_4);
        Block body = ir.close(ba, ir.binary(ElementwiseOp.ADD, ba.get(0), ir.i32(1)),
                ir.binary(ElementwiseOp.ADD, ba.get(2), ba.get(2)), ba.get(2));
        var loop = ir.op(StableHlo.WHILE, List.of(ir.i32(0), a.get(0), a.get(1)), List.of(i32, F32_4, F32_4),
                counted(0, n, 1), List.of(cond, body));
        return new CpuExecutable(ir.module(a, loop.results().get(1)));
    }

    /**
     * A counted loop whose body reads the counter only to step it is counted in Java: the final counter and the
     * number of iterations (an accumulator doubled once per iteration) are those of the ops' own semantics, for
     * i32 and i64 counters, steps above one, and loops that never run.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"I32, 0, 10, 1, 10, 10", "I32, 0, 10, 3, 12, 4", "I32, 5, 5, 1, 5, 0",
            "I32, 7, 3, 2, 7, 0", "I64, -4, 5, 2, 6, 5", "I64, 0, 1, 1, 1, 1"})
    void aLoopThatOnlyIncrementsItsCounterCountsInJava(DType dtype, long start, long bound, long step, long last,
                                                       int iterations) {
        Ir ir = new Ir();
        TensorType counter = t(dtype), f64 = t(DType.F64);
        List<Value> a = args(f64);
        ir.begin();
        List<Value> ca = args(counter, f64);
        Block cond = ir.close(ca, ir.compare("LT", ca.get(0), scalar(ir, dtype, bound)));
        ir.begin();
        List<Value> ba = args(counter, f64);
        Block body = ir.close(ba, ir.binary(ElementwiseOp.ADD, ba.get(0), scalar(ir, dtype, step)),
                ir.binary(ElementwiseOp.ADD, ba.get(1), ba.get(1)));
        var loop = ir.op(StableHlo.WHILE, List.of(scalar(ir, dtype, start), a.getFirst()), List.of(counter, f64),
                counted(start, bound, step), List.of(cond, body));
        List<Tensor> out = new CpuExecutable(ir.module(a, loop.results().get(0), loop.results().get(1)))
                .run(List.of(Tensor.scalar(DType.F64, 1)));
        assertThat((long) out.get(0).item()).isEqualTo(last);
        assertThat(out.get(1).item()).isEqualTo(Math.pow(2, iterations));
    }

    /**
     * A loop body longer than {@link LoopGenerator#MAX_UNROLLED} steps runs as a block rather than step by step,
     * with the same result: {@code adds} additions of 1 per iteration, 3 iterations.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, LoopGenerator.MAX_UNROLLED, LoopGenerator.MAX_UNROLLED + 1})
    void longLoopBodiesRunAsABlock(int adds) {
        Ir ir = new Ir();
        TensorType i32 = t(DType.I32), f64 = t(DType.F64);
        List<Value> a = args(f64);
        ir.begin();
        List<Value> ca = args(i32, f64);
        Block cond = ir.close(ca, ir.compare("LT", ca.get(0), ir.i32(3)));
        ir.begin();
        List<Value> ba = args(i32, f64);
        Value one = ir.constant(f64, MemorySegment.ofArray(new double[] {1}));
        Value x = ba.get(1);
        for (int k = 0; k < adds; k++) {
            x = ir.binary(ElementwiseOp.ADD, x, one);
        }
        Block body = ir.close(ba, ir.binary(ElementwiseOp.ADD, ba.get(0), ir.i32(1)), x);
        var loop = ir.op(StableHlo.WHILE, List.of(ir.i32(0), a.getFirst()), List.of(i32, f64), counted(0, 3, 1),
                List.of(cond, body));
        Tensor out = new CpuExecutable(ir.module(a, loop.results().get(1)))
                .run(List.of(Tensor.scalar(DType.F64, 0.5))).getFirst();
        assertThat(out.item()).isEqualTo(0.5 + 3.0 * adds);
    }

    /** The attribute of a loop whose first carry counts from {@code lo} to {@code hi} by {@code step}. */
    private static Map<String, Attr> counted(long lo, long hi, long step) {
        return Map.of(Attr.CountedLoop.KEY, new Attr.CountedLoop(0, lo, hi, step));
    }

    private static Value scalar(Ir ir, DType dtype, long v) {
        return dtype == DType.I64 ? ir.constant(t(DType.I64), MemorySegment.ofArray(new long[] {v}))
                : ir.i32((int) v);
    }

    /** {@code for i < n: x = negate-first(x)}, threading a token through a custom call. */
    private static CpuExecutable negateLoop(CustomCallRegistry calls, int n) {
        Ir ir = new Ir();
        TensorType i32 = t(DType.I32);
        List<Value> a = args(F32_4);
        Value token = ir.op(StableHlo.AFTER_ALL, List.of(), List.of(TokenType.INSTANCE), Map.of(), List.of())
                .result();
        ir.begin();
        List<Value> ca = args(i32, F32_4, TokenType.INSTANCE);
        Block cond = ir.close(ca, ir.compare("LT", ca.get(0), ir.i32(n)));
        ir.begin();
        List<Value> ba = args(i32, F32_4, TokenType.INSTANCE);
        var call = ir.op(StableHlo.CUSTOM_CALL, List.of(ba.get(1), ba.get(2)), List.of(F32_4, TokenType.INSTANCE),
                Map.of("call_target_name", new Attr.Str("test.negate")), List.of());
        Block body = ir.close(ba, ir.binary(ElementwiseOp.ADD, ba.get(0), ir.i32(1)), call.results().get(0),
                call.results().get(1));
        var loop = ir.op(StableHlo.WHILE, List.of(ir.i32(0), a.get(0), token),
                List.of(i32, F32_4, TokenType.INSTANCE), counted(0, n, 1), List.of(cond, body));
        return new CpuExecutable(ir.module(a, loop.results().get(1)), calls);
    }

    @Test
    void customCallsMayFillTheOfferedPooledBuffer() {
        CustomCallRegistry calls = new CustomCallRegistry().register("test.negate", (op, in, results) -> {
            for (int i = 0; i < 4; i++) {
                results[0].setAtIndex(ValueLayout.JAVA_FLOAT, i, -in[0].getAtIndex(ValueLayout.JAVA_FLOAT, i));
            }
        });
        Ir ir = new Ir();
        List<Value> a = args(F32_4);
        Value neg = ir.op(StableHlo.CUSTOM_CALL, List.of(a.getFirst()), List.of(F32_4),
                Map.of("call_target_name", new Attr.Str("test.negate")), List.of()).result();
        Value r = ir.binary(ElementwiseOp.MUL, neg, a.getFirst());
        CpuExecutable exe = new CpuExecutable(ir.module(a, r), calls);
        Tensor first = exe.run(List.of(Tensor.of(new float[] {1, 2, 3, 4}))).getFirst();
        Tensor second = exe.run(List.of(Tensor.of(new float[] {5, 6, 7, 8}))).getFirst();
        assertThat(first.toFloatArray()).as("a result survives later runs").containsExactly(-1, -4, -9, -16);
        assertThat(second.toFloatArray()).containsExactly(-25, -36, -49, -64);
    }

    @Test
    void unknownCustomCallTargetFailsAtConstructionWithTheLocation() {
        Ir ir = new Ir();
        List<Value> a = args(F32_4);
        Value r = ir.op(StableHlo.CUSTOM_CALL, List.of(a.getFirst()), List.of(F32_4),
                Map.of("call_target_name", new Attr.Str("weft.mpi.nope")), List.of()).result();
        Module m = ir.module(a, r);
        assertThatThrownBy(() -> new CpuExecutable(m)).isInstanceOf(WeftException.class)
                .hasMessageContaining("Prog.java:42").hasMessageContaining("weft.mpi.nope");
    }

    private static float[] fill(int n, float v) {
        float[] a = new float[n];
        Arrays.fill(a, v);
        return a;
    }
}
