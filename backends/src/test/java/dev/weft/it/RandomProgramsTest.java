package dev.weft.it;

import static org.assertj.core.api.Assertions.fail;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Seeded random op graphs run eagerly and compiled give identical results (exactly: compiled programs use the
 * eager kernels' arithmetic and evaluation order, fused or not). A program is a text of {@code ;}-separated
 * instructions, each appending one register to {@code r0 = x, r1 = y}; the result is the last register. It is a
 * compile-time constant of the {@code @Compile} interpreter, so each program compiles once.
 */
class RandomProgramsTest {
    private static final int PROGRAMS = 200;
    private static final String[] FLOAT_UNARY = {"neg", "abs", "tanh", "sin", "cos", "sqrt1"};
    private static final String[] INT_UNARY = {"neg", "abs"};
    private static final String[] BINARY = {"add", "sub", "mul", "maximum", "minimum"};
    private static final String[] REDUCE = {"sum", "max", "min"};

    @BeforeAll
    static void install() {
        Weft.install();
    }

    /** Runs {@code program} on {@code x} and {@code y} with Tensor operations. */
    static Tensor interpret(String program, Tensor x, Tensor y) {
        List<Tensor> r = new ArrayList<>(List.of(x, y));
        for (String ins : program.split(";")) {
            String[] f = ins.split(":");
            Tensor a = r.get(Integer.parseInt(f[1]));
            r.add(switch (f[0]) {
                case "neg" -> a.neg();
                case "abs" -> a.abs();
                case "tanh" -> a.tanh();
                case "sin" -> a.sin();
                case "cos" -> a.cos();
                case "sqrt1" -> a.abs().add(1).sqrt();
                case "add" -> a.add(r.get(Integer.parseInt(f[2])));
                case "sub" -> a.sub(r.get(Integer.parseInt(f[2])));
                case "mul" -> a.mul(r.get(Integer.parseInt(f[2])));
                case "maximum" -> a.maximum(r.get(Integer.parseInt(f[2])));
                case "minimum" -> a.minimum(r.get(Integer.parseInt(f[2])));
                case "sum" -> f.length > 2 ? a.sum(Integer.parseInt(f[2])) : a.sum();
                case "max" -> f.length > 2 ? a.max(Integer.parseInt(f[2])) : a.max();
                case "min" -> f.length > 2 ? a.min(Integer.parseInt(f[2])) : a.min();
                case "flatten" -> a.reshape(-1);
                case "transpose" -> a.transpose();
                case "slice" -> {
                    long[] start = new long[a.rank()], limit = a.shape();
                    start[0] = 1;
                    yield a.slice(start, limit);
                }
                case "where" -> Tensor.where(a.gt(0), r.get(Integer.parseInt(f[2])), r.get(Integer.parseInt(f[3])));
                default -> throw new IllegalArgumentException(ins);
            });
        }
        return r.getLast();
    }

    @Compile
    static Tensor compiled(String program, Tensor x, Tensor y) {
        return interpret(program, x, y);
    }

    /** One generated case: dtype, input shapes and values, and the program. */
    record Case(int seed, DType dtype, long[] xs, long[] ys, double[] xv, double[] yv, String program) {
        @Override
        public String toString() {
            return "seed " + seed + " " + dtype + " x" + Arrays.toString(xs) + " y" + Arrays.toString(ys) + " {"
                    + program + "}";
        }
    }

    static Stream<Case> cases() {
        return IntStream.range(0, PROGRAMS).mapToObj(RandomProgramsTest::generate);
    }

    private static Case generate(int seed) {
        Random rnd = new Random(seed);
        DType t = List.of(DType.F32, DType.F64, DType.I32, DType.I64).get(rnd.nextInt(4));
        int rank = 1 + rnd.nextInt(3);
        long[] xs = new long[rank];
        for (int i = 0; i < rank; i++) {
            xs[i] = 1 + rnd.nextInt(4);
        }
        long[] ys = Arrays.copyOfRange(xs, rnd.nextInt(rank + 1), rank);
        for (int i = 0; i < ys.length; i++) {
            if (rnd.nextInt(3) == 0) {
                ys[i] = 1;
            }
        }
        List<long[]> shapes = new ArrayList<>(List.of(xs, ys));
        List<String> prog = new ArrayList<>();
        int length = 1 + rnd.nextInt(8);
        while (prog.size() < length) {
            String ins = instruction(rnd, t, shapes);
            if (ins != null) {
                prog.add(ins);
            }
        }
        return new Case(seed, t, xs, ys, Ref.values(rnd, t, Ref.size(xs), 3), Ref.values(rnd, t, Ref.size(ys), 3),
                String.join(";", prog));
    }

    /** A random valid instruction, recording its result shape in {@code shapes}; null when the pick does not fit. */
    private static String instruction(Random rnd, DType t, List<long[]> shapes) {
        int n = shapes.size();
        int i = rnd.nextInt(n), j = rnd.nextInt(n), k = rnd.nextInt(n);
        long[] a = shapes.get(i);
        switch (rnd.nextInt(7)) {
            case 0 -> {
                String[] ops = t.isFloating() ? FLOAT_UNARY : INT_UNARY;
                shapes.add(a);
                return ops[rnd.nextInt(ops.length)] + ":" + i;
            }
            case 1, 2 -> {
                if (!broadcastable(a, shapes.get(j))) {
                    return null;
                }
                shapes.add(Ref.broadcastShape(a, shapes.get(j)));
                return BINARY[rnd.nextInt(BINARY.length)] + ":" + i + ":" + j;
            }
            case 3 -> {
                String op = REDUCE[rnd.nextInt(REDUCE.length)];
                if (a.length == 0 || rnd.nextBoolean()) {
                    shapes.add(new long[0]);
                    return op + ":" + i;
                }
                int axis = rnd.nextInt(a.length);
                long[] out = new long[a.length - 1];
                for (int d = 0, o = 0; d < a.length; d++) {
                    if (d != axis) {
                        out[o++] = a[d];
                    }
                }
                shapes.add(out);
                return op + ":" + i + ":" + (rnd.nextBoolean() ? axis : axis - a.length);
            }
            case 4 -> {
                long[] rev = new long[a.length];
                for (int d = 0; d < a.length; d++) {
                    rev[d] = a[a.length - 1 - d];
                }
                boolean flatten = rnd.nextBoolean();
                shapes.add(flatten ? new long[] {Ref.size(a)} : rev);
                return (flatten ? "flatten:" : "transpose:") + i;
            }
            case 5 -> {
                if (a.length == 0 || a[0] < 2) {
                    return null;
                }
                long[] out = a.clone();
                out[0]--;
                shapes.add(out);
                return "slice:" + i;
            }
            default -> {
                long[] bj = shapes.get(j), bk = shapes.get(k);
                if (!broadcastable(a, bj) || !broadcastable(Ref.broadcastShape(a, bj), bk)) {
                    return null;
                }
                shapes.add(Ref.broadcastShape(Ref.broadcastShape(a, bj), bk));
                return "where:" + i + ":" + j + ":" + k;
            }
        }
    }

    private static boolean broadcastable(long[] a, long[] b) {
        for (int d = 1; d <= Math.min(a.length, b.length); d++) {
            long da = a[a.length - d], db = b[b.length - d];
            if (da != db && da != 1 && db != 1) {
                return false;
            }
        }
        return true;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void compiledEqualsEager(Case c) {
        Tensor x = Ref.make(c.dtype(), c.xv(), c.xs()), y = Ref.make(c.dtype(), c.yv(), c.ys());
        Tensor eager = interpret(c.program(), x, y);
        Tensor got;
        try {
            got = compiled(c.program(), x, y);
        } catch (RuntimeException e) {
            throw new AssertionError("compiling " + c + " failed: " + e, e);
        }
        try {
            Ref.assertExact(c.toString(), got, eager);
        } catch (AssertionError e) {
            fail("program " + c + " differs: " + e.getMessage());
        }
    }
}
