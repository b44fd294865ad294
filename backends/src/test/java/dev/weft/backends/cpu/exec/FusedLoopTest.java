package dev.weft.backends.cpu.exec;

import static dev.weft.backends.cpu.exec.Ir.args;
import static dev.weft.backends.cpu.exec.Ir.t;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.backends.cpu.kernels.FloatMath;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.ElementwiseOp;
import dev.weft.spi.TensorAccess;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Fusions run as generated loops ({@link FusedLoopGenerator}) give the same elements as the chunked interpreter,
 * which runs the eager kernels: every elementwise op on every dtype it accepts, special values included, with
 * full-size and scalar operands, several results, results written over inputs, and sizes around the chunk.
 * Elements are compared bit for bit (so -0.0 differs from 0.0), except that all NaNs are equal: which NaN an op on
 * two NaNs returns depends on the operand order the JIT picks for a commutative op, even between runs of the
 * eager kernels.
 */
class FusedLoopTest {
    /** An op of the cases: {@code op} on operands of {@code in} giving {@code out}. */
    record Case(ElementwiseOp op, DType in, DType out) {
        int arity() {
            return op.arity();
        }

        /** Operand {@code i}'s dtype ({@code select}'s condition is BOOL). */
        DType operand(int i) {
            return op == ElementwiseOp.SELECT && i == 0 ? DType.BOOL : in;
        }

        @Override
        public String toString() {
            return op + " " + in.specName() + "->" + out.specName();
        }
    }

    /** Every elementwise op on every dtype it accepts (and, for convert, to every dtype). */
    static Stream<Arguments> everyOp() {
        List<Case> cases = new ArrayList<>();
        for (ElementwiseOp op : ElementwiseOp.values()) {
            for (DType t : DType.values()) {
                if (!op.accepts(t)) {
                    continue;
                }
                switch (op.form()) {
                    case CONVERT -> {
                        for (DType to : DType.values()) {
                            cases.add(new Case(op, t, to));
                        }
                    }
                    case COMPARISON -> cases.add(new Case(op, t, DType.BOOL));
                    default -> cases.add(new Case(op, t, t));
                }
            }
        }
        return cases.stream().map(Arguments::of);
    }

    @ParameterizedTest
    @MethodSource("everyOp")
    void everyOpMatchesTheChunkedInterpreter(Case c) {
        int n = FusionInstruction.CHUNK + 1;
        Module m = singleOpFusion(c, n);
        assertGeneratedMatchesChunked(m, inputs(m, new Random(c.toString().hashCode()), !isDivision(c)));
    }

    /**
     * {@code op(x_0..x_k)} and {@code op(x_0..x_{k-1}, broadcast(s))}: two results, full-size and scalar operands.
     */
    private static Module singleOpFusion(Case c, long n) {
        Ir ir = new Ir();
        List<TensorType> types = new ArrayList<>();
        for (int i = 0; i < c.arity(); i++) {
            types.add(t(c.operand(i), n));
        }
        types.add(t(c.operand(c.arity() - 1)));
        List<Value> a = args(types.toArray(TensorType[]::new));
        ir.begin();
        List<Value> fa = args(types.toArray(TensorType[]::new));
        List<Value> full = fa.subList(0, c.arity());
        List<Value> withScalar = new ArrayList<>(full.subList(0, c.arity() - 1));
        withScalar.add(broadcast(ir, fa.getLast(), n));
        Block region = ir.close(fa, apply(ir, c, full, n), apply(ir, c, withScalar, n));
        TensorType out = t(c.out(), n);
        Op fusion = ir.op(StableHlo.FUSION, a, List.of(out, out), Map.of(), List.of(region));
        return ir.module(a, fusion.results().get(0), fusion.results().get(1));
    }

    private static Value apply(Ir ir, Case c, List<Value> operands, long n) {
        Map<String, Attr> attrs = c.op().direction() == null ? Map.of()
                : Map.of("comparison_direction",
                        new Attr.Enum("stablehlo", "comparison_direction", c.op().direction()));
        return ir.op(c.op().mlirName(), operands, List.of(t(c.out(), n)), attrs, List.of()).result();
    }

    private static Value broadcast(Ir ir, Value scalar, long n) {
        return ir.op(StableHlo.BROADCAST_IN_DIM, List.of(scalar), List.of(t(scalar.tensorType().dtype(), n)),
                Map.of("broadcast_dimensions", Attr.I64Array.of()), List.of()).result();
    }

    private static boolean isDivision(Case c) {
        return !c.in().isFloating() && (c.op() == ElementwiseOp.DIV || c.op() == ElementwiseOp.REM);
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, FusionInstruction.CHUNK - 1, FusionInstruction.CHUNK + 1, (1 << 20) + 1, (1 << 20) + 3})
    void aMixedFusionMatchesAtEverySize(int n) {
        Module m = mixedFusion(n);
        List<Tensor> in = inputs(m, new Random(n), true);
        List<Tensor> got = assertGeneratedMatchesChunked(m, in);
        float[] x = in.get(0).toFloatArray();
        int[] k = in.get(1).toIntArray();
        double s = TensorAccess.data(in.get(2)).get(ValueLayout.JAVA_DOUBLE_UNALIGNED, 0);
        double[] wide = got.get(0).toDoubleArray();
        long[] count = got.get(1).toLongArray();
        for (int i = 0; i < n; i++) {
            double y = (double) FloatMath.sin(x[i]) * s;
            assertThat(Double.compare(wide[i], x[i] < k[i] ? y : -y)).as("element %d", i).isZero();
            assertThat(count[i]).isEqualTo(x[i] < k[i] ? (long) k[i] * k[i] : 0);
        }
    }

    /**
     * {@code (x, k, s) -> (where(x < k, y, -y) with y = f64(sin x) * s, where(x < k, i64(k) * i64(k), 0))} for
     * {@code x: f32[n], k: i32[n], s: f64}: converts, a compare across dtypes, selects, a scalar, two results.
     */
    private static Module mixedFusion(long n) {
        Ir ir = new Ir();
        TensorType f32 = t(DType.F32, n), i32 = t(DType.I32, n), f64 = t(DType.F64, n), i64 = t(DType.I64, n);
        List<Value> a = args(f32, i32, t(DType.F64));
        ir.begin();
        List<Value> fa = args(f32, i32, t(DType.F64));
        Value less = ir.compare("LT", fa.get(0), ir.op(ElementwiseOp.CONVERT, f32, fa.get(1)));
        Value y = ir.binary(ElementwiseOp.MUL,
                ir.op(ElementwiseOp.CONVERT, f64, ir.op(ElementwiseOp.SIN, f32, fa.get(0))),
                broadcast(ir, fa.get(2), n));
        Value wide = ir.op(ElementwiseOp.SELECT, f64, less, y, ir.op(ElementwiseOp.NEG, f64, y));
        Value k = ir.op(ElementwiseOp.CONVERT, i64, fa.get(1));
        Value count = ir.op(ElementwiseOp.SELECT, i64, less, ir.binary(ElementwiseOp.MUL, k, k),
                ir.binary(ElementwiseOp.SUB, k, k));
        Block region = ir.close(fa, wide, count);
        Op fusion = ir.op(StableHlo.FUSION, a, List.of(f64, i64), Map.of(), List.of(region));
        return ir.module(a, fusion.results().get(0), fusion.results().get(1));
    }

    @Test
    void aResultOverwritesADyingInput() {
        int n = 3 * FusionInstruction.CHUNK + 5;
        TensorType vec = t(DType.F32, n);
        Ir ir = new Ir();
        List<Value> a = args(vec);
        Value v = ir.op(ElementwiseOp.NEG, vec, a.getFirst());
        ir.begin();
        List<Value> fa = args(vec, vec);
        Value sum = ir.binary(ElementwiseOp.ADD, ir.binary(ElementwiseOp.MUL, fa.get(0), fa.get(0)), fa.get(1));
        Block region = ir.close(fa, sum, ir.op(ElementwiseOp.ABS, vec, fa.get(0)));
        Op fusion = ir.op(StableHlo.FUSION, List.of(v, a.getFirst()), List.of(vec, vec),
                Map.of(StableHlo.LAST_USE, Attr.I64Array.of(0)), List.of(region));
        Module m = ir.module(a, fusion.results().get(0), fusion.results().get(1));
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = i % 1000 - 500.5f;
        }
        CpuExecutable exe = new CpuExecutable(m);
        List<Tensor> got = exe.run(List.of(Tensor.of(x)));
        float[] sum0 = got.get(0).toFloatArray(), abs1 = got.get(1).toFloatArray();
        for (int i = 0; i < n; i++) {
            assertThat(sum0[i]).isEqualTo(x[i] * x[i] + x[i]);
            assertThat(abs1[i]).isEqualTo(Math.abs(x[i]));
        }
        assertThat(exe.allocationCount()).as("negate's buffer, overwritten, and the second result").isEqualTo(2);
    }

    @Test
    void equalFusionsShareOneLoop() {
        Op first = fusionOp(singleOpFusion(new Case(ElementwiseOp.ADD, DType.F32, DType.F32), 10));
        Op second = fusionOp(singleOpFusion(new Case(ElementwiseOp.ADD, DType.F32, DType.F32), 10));
        Op other = fusionOp(singleOpFusion(new Case(ElementwiseOp.ADD, DType.F64, DType.F64), 10));
        FusedLoop loop = FusedLoopGenerator.loop(FusedLoopSpec.of(first, 10, new ArrayList<>()).orElseThrow());
        assertThat(FusedLoopGenerator.loop(FusedLoopSpec.of(second, 10, new ArrayList<>()).orElseThrow()))
                .isSameAs(loop);
        assertThat(FusedLoopGenerator.loop(FusedLoopSpec.of(other, 10, new ArrayList<>()).orElseThrow()))
                .isNotSameAs(loop);
    }

    @Test
    void opsTheKernelsRejectKeepTheChunkedPath() {
        Module m = singleOpFusion(new Case(ElementwiseOp.SIN, DType.I32, DType.I32), 10);
        assertThat(FusedLoopSpec.of(fusionOp(m), 10, new ArrayList<>())).isEmpty();
        List<Tensor> in = inputs(m, new Random(3), true);
        assertThatThrownBy(() -> new CpuExecutable(m).run(in)).isInstanceOf(WeftException.class)
                .hasMessageStartingWith("Prog.java:42: ").hasMessageContaining("not defined on i32");
    }

    @ParameterizedTest
    @EnumSource(value = ElementwiseOp.class, names = {"DIV", "REM"})
    void integerDivisionByZeroFailsAtTheOpsLine(ElementwiseOp op) {
        for (DType t : List.of(DType.I32, DType.I64)) {
            Module m = singleOpFusion(new Case(op, t, t), FusionInstruction.CHUNK + 1);
            List<Tensor> in = inputs(m, new Random(7), true);
            MemorySegment divisor = TensorAccess.data(in.get(1));
            divisor.fill((byte) 0);
            assertThatThrownBy(() -> new CpuExecutable(m).run(in)).isInstanceOf(WeftException.class)
                    .hasMessageStartingWith("Prog.java:42: ").hasMessageContaining("integer division by zero");
        }
    }

    @Test
    void aDivisionByZeroInAPooledBlockFailsAtTheOpsLine() {
        int n = (int) FusedLoopRunner.PARALLEL_MIN + 3;
        Module m = singleOpFusion(new Case(ElementwiseOp.DIV, DType.I32, DType.I32), n);
        List<Tensor> in = inputs(m, new Random(5), false);
        TensorAccess.data(in.get(1)).setAtIndex(ValueLayout.JAVA_INT, n - 1, 0);
        assertThatThrownBy(() -> new CpuExecutable(m).run(in)).isInstanceOf(WeftException.class)
                .hasMessageStartingWith("Prog.java:42: ").hasMessageContaining("integer division by zero");
    }

    @Test
    void aLargeFusionOverThreadConfinedBuffersRunsOnTheCallingThread() {
        int n = (int) FusedLoopRunner.PARALLEL_MIN + 3;
        Module m = singleOpFusion(new Case(ElementwiseOp.MUL, DType.F32, DType.F32), n);
        try (Arena arena = Arena.ofConfined()) {
            List<Tensor> in = new ArrayList<>();
            for (float v : new float[] {1.5f, 2f, 4f}) {
                MemorySegment s = arena.allocate(4L * (in.size() < 2 ? n : 1), 4);
                for (long i = 0; i < s.byteSize() / 4; i++) {
                    s.setAtIndex(ValueLayout.JAVA_FLOAT, i, v);
                }
                in.add(TensorAccess.concrete(((TensorType) m.main().argumentTypes().get(in.size())).aval(), s));
            }
            List<Tensor> got = new CpuExecutable(m).run(in);
            assertThat(got.get(0).toFloatArray()).containsOnly(3f);
            assertThat(got.get(1).toFloatArray()).containsOnly(6f);
        }
    }

    private static Op fusionOp(Module m) {
        return m.main().body().ops().stream().filter(o -> o.name().equals(StableHlo.FUSION)).findFirst().orElseThrow();
    }

    /** Runs {@code m} generated and chunked on {@code in}; asserts equal bytes and returns the generated results. */
    private static List<Tensor> assertGeneratedMatchesChunked(Module m, List<Tensor> in) {
        Map<String, OpCompiler> chunked = new HashMap<>(OpCompilers.standard());
        chunked.put(StableHlo.FUSION, FusionInstruction::chunked);
        List<Tensor> want = new CpuExecutable(m, new CustomCallRegistry(), chunked).run(in);
        List<Tensor> got = new CpuExecutable(m).run(in);
        for (int r = 0; r < want.size(); r++) {
            assertThat(bits(got.get(r))).as("result %d", r).isEqualTo(bits(want.get(r)));
        }
        return got;
    }

    /** The elements' bits, every NaN made the canonical one. */
    private static long[] bits(Tensor t) {
        MemorySegment s = TensorAccess.data(t);
        long[] out = new long[(int) t.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = switch (t.dtype()) {
                case F32 -> Float.floatToIntBits(s.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i));
                case F64 -> Double.doubleToLongBits(s.getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i));
                case I32 -> s.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i);
                case I64 -> s.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i);
                case BOOL -> s.get(ValueLayout.JAVA_BYTE, i);
            };
        }
        return out;
    }

    /** Random arguments for {@code m}'s {@code @main}, special values included; no zero when {@code zeros} is off. */
    private static List<Tensor> inputs(Module m, Random rnd, boolean zeros) {
        List<Tensor> out = new ArrayList<>();
        for (var type : m.main().argumentTypes()) {
            TensorType tt = (TensorType) type;
            long n = tt.shape().size();
            MemorySegment s = Arena.ofAuto().allocate(tt.byteSize(), 8);
            for (long i = 0; i < n; i++) {
                switch (tt.dtype()) {
                    case F32 -> s.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) someDouble(rnd));
                    case F64 -> s.setAtIndex(ValueLayout.JAVA_DOUBLE, i, someDouble(rnd));
                    case I32 -> s.setAtIndex(ValueLayout.JAVA_INT, i, (int) nonZero(someLong(rnd), zeros));
                    case I64 -> s.setAtIndex(ValueLayout.JAVA_LONG, i, nonZero(someLong(rnd), zeros));
                    case BOOL -> s.set(ValueLayout.JAVA_BYTE, i, (byte) rnd.nextInt(2));
                }
            }
            out.add(TensorAccess.concrete(tt.aval(), s));
        }
        return out;
    }

    private static long nonZero(long v, boolean zeros) {
        return zeros || v != 0 && (int) v != 0 ? v : 3;
    }

    private static double someDouble(Random rnd) {
        return switch (rnd.nextInt(12)) {
            case 0 -> Double.NaN;
            case 1 -> rnd.nextBoolean() ? Double.POSITIVE_INFINITY : Double.NEGATIVE_INFINITY;
            case 2 -> rnd.nextBoolean() ? 0.0 : -0.0;
            case 3 -> rnd.nextBoolean() ? 1e-310 : 1e300;
            case 4 -> rnd.nextInt(9) - 4;
            case 5 -> 3e9 * rnd.nextGaussian();
            default -> 10 * rnd.nextGaussian();
        };
    }

    private static long someLong(Random rnd) {
        return switch (rnd.nextInt(8)) {
            case 0 -> rnd.nextBoolean() ? Long.MIN_VALUE : Integer.MIN_VALUE;
            case 1 -> rnd.nextBoolean() ? Long.MAX_VALUE : Integer.MAX_VALUE;
            case 2 -> rnd.nextInt(3) - 1;
            case 3 -> rnd.nextLong();
            default -> rnd.nextInt(41) - 20;
        };
    }
}
