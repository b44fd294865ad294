package dev.weft.backends.cpu.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.lowering.ir.IrWalk;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Windows of a padded concatenation ({@code slice(pad(concat(a, u, b)))}) that a fusion reads as pieces of
 * {@code a}, {@code u}, {@code b} and the pad value, never materialised: the generated loop (row by row, split at
 * every piece's edge) and the chunked interpreter (which assembles each piecewise argument first) give exactly the
 * eager result, which materialises every op, and a plain-Java reference.
 */
class PiecewiseFusionTest {
    /**
     * Where the windows lie: {@code a}, {@code u}, {@code b} are concatenated along {@code axis}, padded by
     * {@code low}/{@code high} with {@code value}; the windows of {@code size} start at {@code first} and
     * {@code second}. Spelled as a string so that it is one compile-time constant.
     */
    record Geometry(DType dtype, int axis, long[] a, long[] u, long[] b, long[] low, long[] high, double value,
                    long[] first, long[] second, long[] size) {
        static Geometry parse(String s) {
            String[] f = s.split(";");
            return new Geometry(DType.valueOf(f[0]), Integer.parseInt(f[1]), longs(f[2]), longs(f[3]), longs(f[4]),
                    longs(f[5]), longs(f[6]), Double.parseDouble(f[7]), longs(f[8]), longs(f[9]), longs(f[10]));
        }

        private static long[] longs(String s) {
            return Arrays.stream(s.split(",")).mapToLong(Long::parseLong).toArray();
        }

        private static String text(long[] v) {
            return String.join(",", LongStream.of(v).mapToObj(Long::toString).toList());
        }

        String spelled() {
            return String.join(";", dtype.name(), Integer.toString(axis), text(a), text(u), text(b), text(low),
                    text(high), Double.toString(value), text(first), text(second), text(size));
        }

        long[] concatenated() {
            long[] c = u.clone();
            c[axis] = a[axis] + u[axis] + b[axis];
            return c;
        }

        long[] padded() {
            long[] c = concatenated();
            for (int k = 0; k < c.length; k++) {
                c[k] += low[k] + high[k];
            }
            return c;
        }

        @Override
        public String toString() {
            return spelled();
        }
    }

    @BeforeAll
    static void install() {
        Weft.install();
    }

    static Tensor body(Tensor a, Tensor u, Tensor b, Geometry g) {
        Tensor p = Tensor.concat(g.axis(), a, u, b).pad(g.low(), g.high(), g.value());
        Tensor w1 = p.slice(g.first(), plus(g.first(), g.size()));
        Tensor w2 = p.slice(g.second(), plus(g.second(), g.size()));
        return w1.mul(w2).add(w1);
    }

    @Compile
    static Tensor windows(Tensor a, Tensor u, Tensor b, String geometry) {
        return body(a, u, b, Geometry.parse(geometry));
    }

    /** One heat-like step with pad value {@code edge}: the four neighbours of every element of {@code u}. */
    static Tensor stencil(Tensor u, double edge) {
        long n = u.shape()[0], m = u.shape()[1];
        Tensor rim = Tensor.full(u.dtype(), edge, 1, m);
        Tensor p = Tensor.concat(0, rim, u, rim).pad(new long[] {0, 1}, new long[] {0, 1}, edge);
        Tensor up = p.slice(new long[] {0, 1}, new long[] {n, m + 1});
        Tensor down = p.slice(new long[] {2, 1}, new long[] {n + 2, m + 1});
        Tensor left = p.slice(new long[] {1, 0}, new long[] {n + 1, m});
        Tensor right = p.slice(new long[] {1, 2}, new long[] {n + 1, m + 2});
        return u.add(up.add(down).add(left).add(right).sub(u.mul(4)).mul(0.125));
    }

    @Compile
    static Tensor diffuse(Tensor u, int steps, double edge) {
        return Weft.fori(0, steps, u, (i, v) -> stencil(v, edge));
    }

    private static long[] plus(long[] a, long[] b) {
        long[] out = a.clone();
        Arrays.setAll(out, k -> a[k] + b[k]);
        return out;
    }

    static Stream<Geometry> randomPlacements() {
        Random rnd = new Random(20261202);
        DType[] dtypes = {DType.F32, DType.F64, DType.I32};
        List<Geometry> out = new ArrayList<>();
        for (int rank = 1; rank <= 3; rank++) {
            for (int c = 0; c < 30; c++) {
                int axis = rnd.nextInt(rank);
                long[] u = new long[rank], low = new long[rank], high = new long[rank];
                for (int k = 0; k < rank; k++) {
                    u[k] = 1 + rnd.nextInt(k == rank - 1 ? 5 : 3);
                    low[k] = rnd.nextInt(3);
                    high[k] = rnd.nextInt(3);
                }
                long[] a = u.clone(), b = u.clone();
                a[axis] = 1 + rnd.nextInt(2);
                b[axis] = 1 + rnd.nextInt(2);
                DType dtype = dtypes[(rank * 30 + c) % dtypes.length];
                Geometry shapeOnly = new Geometry(dtype, axis, a, u, b, low, high, 0, u, u, u);
                long[] padded = shapeOnly.padded();
                long[] size = new long[rank], first = new long[rank], second = new long[rank];
                for (int k = 0; k < rank; k++) {
                    size[k] = 1 + rnd.nextInt((int) padded[k]);
                    first[k] = rnd.nextInt((int) (padded[k] - size[k] + 1));
                    second[k] = rnd.nextInt((int) (padded[k] - size[k] + 1));
                }
                out.add(new Geometry(dtype, axis, a, u, b, low, high, dtype.isFloating() ? 2.5 : -3, first, second,
                        size));
            }
        }
        return out.stream();
    }

    /**
     * Every placement of a window in a padded concatenation along {@code axis} of a 2-D grid: it starts in each
     * pad, each part and at each edge between them; the second window is the first mirrored.
     */
    static Stream<Geometry> everyPlacement(int axis, DType dtype) {
        long[] u = {4, 5}, a = u.clone(), b = u.clone();
        a[axis] = 1;
        b[axis] = 2;
        long[] low = axis == 0 ? new long[] {1, 2} : new long[] {2, 0};
        long[] high = axis == 0 ? new long[] {2, 1} : new long[] {1, 2};
        long[] size = {4, 5};
        long[] padded = new Geometry(dtype, axis, a, u, b, low, high, 0, u, u, u).padded();
        List<Geometry> out = new ArrayList<>();
        for (long r = 0; r + size[0] <= padded[0]; r++) {
            for (long c = 0; c + size[1] <= padded[1]; c++) {
                long[] first = {r, c};
                long[] second = {padded[0] - size[0] - r, padded[1] - size[1] - c};
                out.add(new Geometry(dtype, axis, a, u, b, low, high, dtype.isFloating() ? -1.75 : 9, first,
                        second, size));
            }
        }
        return out.stream();
    }

    static Stream<Geometry> everyPlacement() {
        return Stream.of(everyPlacement(0, DType.F64), everyPlacement(1, DType.I32), everyPlacement(1, DType.F32))
                .flatMap(s -> s);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("randomPlacements")
    void randomWindowsEqualEagerAndLoops(Geometry g) {
        check(g);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyPlacement")
    void windowsAtEveryPlacementEqualEagerAndLoops(Geometry g) {
        check(g);
    }

    private static void check(Geometry g) {
        Random rnd = new Random(g.spelled().hashCode());
        Tensor a = tensor(g.dtype(), rnd, g.a()), u = tensor(g.dtype(), rnd, g.u()), b = tensor(g.dtype(), rnd, g.b());
        Module m = (Module) Weft.lower(PiecewiseFusionTest.class, "windows", TensorSpec.of(g.dtype(), g.a()),
                TensorSpec.of(g.dtype(), g.u()), TensorSpec.of(g.dtype(), g.b()), g.spelled());
        assertThat(m.main().body().ops()).extracting(Op::name).doesNotContain(StableHlo.CONCATENATE,
                StableHlo.PAD, StableHlo.SLICE).contains(StableHlo.FUSION);
        long[] want = reference(g, a, u, b);
        List<Tensor> in = List.of(a, u, b);
        assertThat(TensorBits.of(new CpuExecutable(m).run(in).getFirst())).as("generated loop").containsExactly(want);
        assertThat(TensorBits.of(chunked(m).run(in).getFirst())).as("chunked interpreter").containsExactly(want);
        assertThat(TensorBits.of(body(a, u, b, g))).as("eager").containsExactly(want);
    }

    @Test
    void aStencilOverManyRowsRunsInParallelAndEqualsEager() {
        Tensor u = tensor(DType.F64, new Random(7), 1100, 1000);
        Module m = (Module) Weft.lower(PiecewiseFusionTest.class, "diffuse", TensorSpec.of(DType.F64, 1100, 1000),
                1, 0.5);
        assertThat(IrWalk.ops(m.main().body()).toList()).extracting(Op::name).doesNotContain(StableHlo.CONCATENATE,
                StableHlo.PAD, StableHlo.SLICE).contains(StableHlo.WHILE, StableHlo.FUSION);
        assertThat(Arrays.mismatch(TensorBits.of(diffuse(u, 1, 0.5)), TensorBits.of(stencil(u, 0.5))))
                .as("first differing element")
                .isEqualTo(-1);
    }

    @Test
    void aLoopCarryReadAsPiecesIsNeverOverwrittenInPlace() {
        Tensor u = tensor(DType.F32, new Random(11), 6, 7);
        Tensor want = u;
        for (int step = 0; step < 5; step++) {
            want = stencil(want, -2);
        }
        assertThat(TensorBits.of(diffuse(u, 5, -2))).containsExactly(TensorBits.of(want));
    }

    @Test
    void theLoweredModuleParsesAsIsAndNamesEachPiece() {
        Geometry g = everyPlacement(0, DType.F64).skip(5).findFirst().orElseThrow();
        String mlir = Weft.lower(PiecewiseFusionTest.class, "windows", TensorSpec.of(g.dtype(), g.a()),
                TensorSpec.of(g.dtype(), g.u()), TensorSpec.of(g.dtype(), g.b()), g.spelled()).toMlir();
        // rows 1-4 of the padded 10x8 grid are row 0 of a and rows 0-2 of u; of columns 1-5, the first is padding
        assertThat(g.first()).containsExactly(1, 1);
        assertThat(mlir).contains("weft.pieces = [[{operand = 0 : i64, at = array<i64: 0, 1>, from = "
                + "array<i64: 0, 0>, size = array<i64: 1, 4>}, {operand = 1 : i64, at = array<i64: 1, 1>, from = "
                + "array<i64: 0, 0>, size = array<i64: 3, 4>}, {operand = 2 : i64, at = array<i64: 0, 0>, from = "
                + "array<i64>, size = array<i64: 4, 1>}]");
    }

    private static CpuExecutable chunked(Module m) {
        Map<String, OpCompiler> compilers = new HashMap<>(OpCompilers.standard());
        compilers.put(StableHlo.FUSION, FusionInstruction::chunked);
        return new CpuExecutable(m, new CustomCallRegistry(), compilers);
    }

    /** Values every dtype holds exactly: quarters in [-4, 4] for floats, whole numbers in [-9, 9] otherwise. */
    private static Tensor tensor(DType dtype, Random rnd, long... shape) {
        int n = (int) LongStream.of(shape).reduce(1, (x, y) -> x * y);
        return switch (dtype) {
            case F32 -> {
                float[] v = new float[n];
                for (int i = 0; i < n; i++) {
                    v[i] = (rnd.nextInt(33) - 16) / 4f;
                }
                yield Tensor.of(v, shape);
            }
            case F64 -> Tensor.of(rnd.doubles(n).map(x -> Math.floor(x * 33 - 16) / 4).toArray(), shape);
            case I32 -> Tensor.of(rnd.ints(n, -9, 10).toArray(), shape);
            default -> throw new IllegalArgumentException(dtype.name());
        };
    }


    /** {@code w1 * w2 + w1} over the windows of the padded concatenation, built element by element in Java. */
    private static long[] reference(Geometry g, Tensor a, Tensor u, Tensor b) {
        double[] av = a.toDoubleArray(), uv = u.toDoubleArray(), bv = b.toDoubleArray();
        int n = (int) LongStream.of(g.size()).reduce(1, (x, y) -> x * y);
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            long[] at = unravel(i, g.size());
            double w1 = padded(g, av, uv, bv, plus(at, g.first()));
            double w2 = padded(g, av, uv, bv, plus(at, g.second()));
            out[i] = switch (g.dtype()) {
                case F32 -> Float.floatToRawIntBits((float) w1 * (float) w2 + (float) w1);
                case F64 -> Double.doubleToRawLongBits(w1 * w2 + w1);
                case I32 -> (int) w1 * (int) w2 + (int) w1;
                default -> throw new IllegalArgumentException(g.dtype().name());
            };
        }
        return out;
    }

    /** Element {@code at} of the padded concatenation: the pad value outside it, else the part that holds it. */
    private static double padded(Geometry g, double[] a, double[] u, double[] b, long[] at) {
        long[] c = new long[at.length];
        long[] concatenated = g.concatenated();
        for (int k = 0; k < at.length; k++) {
            c[k] = at[k] - g.low()[k];
            if (c[k] < 0 || c[k] >= concatenated[k]) {
                return g.dtype() == DType.I32 ? (int) g.value() : g.value();
            }
        }
        long along = c[g.axis()];
        if (along < g.a()[g.axis()]) {
            return a[(int) ravel(c, g.a())];
        }
        c[g.axis()] = along - g.a()[g.axis()];
        if (c[g.axis()] < g.u()[g.axis()]) {
            return u[(int) ravel(c, g.u())];
        }
        c[g.axis()] -= g.u()[g.axis()];
        return b[(int) ravel(c, g.b())];
    }

    private static long[] unravel(long flat, long[] shape) {
        long[] idx = new long[shape.length];
        for (int k = shape.length - 1; k >= 0; k--) {
            idx[k] = flat % shape[k];
            flat /= shape[k];
        }
        return idx;
    }

    private static long ravel(long[] idx, long[] shape) {
        long flat = 0;
        for (int k = 0; k < shape.length; k++) {
            flat = flat * shape[k] + idx[k];
        }
        return flat;
    }
}
