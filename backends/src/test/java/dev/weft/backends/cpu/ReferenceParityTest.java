package dev.weft.backends.cpu;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.prim.AxesParams;
import dev.weft.prim.ConvertParams;
import dev.weft.prim.ElementwiseOp;
import dev.weft.prim.Prims;
import dev.weft.prim.reference.ReferenceInterpreter;
import dev.weft.spi.Aval;
import dev.weft.spi.Interpreter;
import dev.weft.spi.Interpreters;
import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import dev.weft.spi.Shape;
import dev.weft.spi.SourceLocation;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The CPU eager interpreter computes what dsl's reference interpreter (on which dsl's own tests run) computes: every
 * elementwise op on every dtype it accepts, on values with the edge cases of each dtype (wrapping integers, NaN,
 * infinities, signed zeros), and a sample of reductions and structural primitives. Integers and bools compare
 * exactly; floating results within 2 ulps, since the backend's f32 exp, sin and cos are its own functions and its
 * matrix products may run on BLAS.
 */
class ReferenceParityTest {
    private static final long[] SHAPE = {3, 5};
    private final Interpreter reference = new ReferenceInterpreter();

    static Stream<Arguments> elementwise() {
        List<Arguments> out = new ArrayList<>();
        for (ElementwiseOp op : ElementwiseOp.values()) {
            for (DType t : DType.values()) {
                if (op.accepts(t)) {
                    out.add(Arguments.of(op, t));
                }
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("elementwise")
    void everyElementwiseOpOnEveryDtype(ElementwiseOp op, DType t) {
        Random rnd = new Random(op.ordinal() * 31L + t.ordinal());
        List<Tensor> args = switch (op.form()) {
            case UNARY -> List.of(values(t, rnd, false));
            case BINARY, COMPARISON -> List.of(values(t, rnd, false), values(t, rnd,
                    (op == ElementwiseOp.DIV || op == ElementwiseOp.REM) && !t.isFloating()));
            case SELECT -> List.of(values(DType.BOOL, rnd, false), values(t, rnd, false), values(t, rnd, false));
            case CONVERT -> List.of(values(t, rnd, false));
        };
        if (op == ElementwiseOp.POW && !t.isFloating()) {
            args = List.of(args.get(0), Tensor.of(new long[] {-2, -1, 0, 1, 2, 3, 5, 7, 31, 63, 2, 3, 4, 1, 0}, SHAPE)
                    .cast(t));
        }
        if (op == ElementwiseOp.CONVERT) {
            for (DType to : DType.values()) {
                same(op.primitive(), new ConvertParams(to), args);
            }
        } else {
            same(op.primitive(), Params.NONE, args);
        }
    }

    @Test
    void reductionsOverEachSetOfAxes() {
        Random rnd = new Random(3);
        for (DType t : List.of(DType.F32, DType.F64, DType.I32, DType.I64)) {
            Tensor x = values(t, rnd, false).reshape(3, 5, 1);
            for (ElementwiseOp op : ElementwiseOp.values()) {
                if (op.isReducible()) {
                    for (List<Integer> axes : List.of(List.of(0), List.of(1), List.of(0, 1, 2), List.<Integer>of())) {
                        same(op.reduction(), new AxesParams(axes), List.of(x));
                    }
                }
            }
        }
    }

    @Test
    void structuralPrimitives() {
        Random rnd = new Random(4);
        for (DType t : List.of(DType.F32, DType.F64, DType.I32, DType.I64)) {
            Tensor a = values(t, rnd, false), b = values(t, rnd, false);
            sameAsReference(a.matmul(b.transpose(1, 0)), run(() -> a.matmul(b.transpose(1, 0))));
            sameAsReference(a.reshape(5, 3).transpose(1, 0), run(() -> a.reshape(5, 3).transpose(1, 0)));
            sameAsReference(a.reshape(3, 1, 5).broadcastTo(3, 2, 5), run(() -> a.reshape(3, 1, 5).broadcastTo(3, 2, 5)));
            sameAsReference(a.slice(new long[] {1, 2}, new long[] {3, 4}), run(() -> a.slice(new long[] {1, 2}, new long[] {3, 4})));
            sameAsReference(a.pad(new long[] {1, 0}, new long[] {0, 2}, 7), run(() -> a.pad(new long[] {1, 0}, new long[] {0, 2}, 7)));
            sameAsReference(Tensor.concat(0, a, b), run(() -> Tensor.concat(0, a, b)));
            List<Tensor> starts = List.of(Tensor.scalar(DType.I32, 2), Tensor.scalar(DType.I64, -4));
            sameAsReference(a.dynamicSlice(starts, 2, 2), run(() -> a.dynamicSlice(starts, 2, 2)));
            Tensor update = b.slice(new long[] {0, 0}, new long[] {2, 3});
            sameAsReference(a.dynamicUpdateSlice(update, starts), run(() -> a.dynamicUpdateSlice(update, starts)));
        }
    }

    /** {@code prim} bound on both interpreters to the same arguments gives the same result. */
    private void same(Primitive<?> prim, Params params, List<Tensor> args) {
        List<Aval> in = args.stream().map(x -> new Aval(x.dtype(), Shape.of(x.shape()))).toList();
        List<Aval> out = prim.infer(in, params, SourceLocation.UNKNOWN);
        Tensor backend = Interpreters.eager().bind(prim, params, args, out, null).getFirst();
        Tensor ref = reference.bind(prim, params, args, out, null).getFirst();
        assertThat(backend.dtype()).isEqualTo(ref.dtype());
        compare(ref, backend, prim.name() + params + " of " + args);
    }

    /** {@code body} with the reference as the innermost interpreter. */
    private Tensor run(Supplier<Tensor> body) {
        return Interpreters.with(reference, body);
    }

    private static void sameAsReference(Tensor backend, Tensor ref) {
        compare(ref, backend, "");
    }

    private static void compare(Tensor ref, Tensor backend, String what) {
        assertThat(backend.shape()).as(what).containsExactly(ref.shape());
        if (!ref.dtype().isFloating()) {
            assertThat(backend.cast(DType.I64).toLongArray()).as(what).containsExactly(ref.cast(DType.I64).toLongArray());
            return;
        }
        double[] r = ref.toDoubleArray(), b = backend.toDoubleArray();
        for (int i = 0; i < r.length; i++) {
            double ulp = ref.dtype() == DType.F32 ? Math.ulp((float) r[i]) : Math.ulp(r[i]);
            boolean close = Double.isNaN(r[i]) ? Double.isNaN(b[i])
                    : r[i] == b[i] || Math.abs(r[i] - b[i]) <= 2 * ulp;
            assertThat(close).as("%s: element %d, reference %s, backend %s", what, i, r[i], b[i]).isTrue();
        }
    }

    /**
     * 15 values of {@code t}: the dtype's edge cases (extremes, NaN, infinities, signed zeros), then random ones;
     * with {@code nonZero}, no zeros (integer divisors).
     */
    private static Tensor values(DType t, Random rnd, boolean nonZero) {
        double[] edges = switch (t) {
            case F32, F64 -> new double[] {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, -0.0, 0.0,
                1e30, -1e-30};
            case I32 -> new double[] {Integer.MAX_VALUE, Integer.MIN_VALUE, -1, 0, 1};
            case I64 -> new double[] {Long.MAX_VALUE, Long.MIN_VALUE, -1, 0, 1};
            case BOOL -> new double[] {0, 1};
        };
        long[] ints = new long[15];
        double[] reals = new double[15];
        for (int i = 0; i < 15; i++) {
            double v = i < edges.length ? edges[i] : t == DType.BOOL ? rnd.nextInt(2)
                    : t.isFloating() ? (rnd.nextDouble() - 0.5) * 8 : rnd.nextInt(-9, 10);
            reals[i] = v;
            ints[i] = t == DType.I64 && i < 2 ? (i == 0 ? Long.MAX_VALUE : Long.MIN_VALUE) : (long) v;
            if (nonZero && ints[i] == 0) {
                ints[i] = 3;
            }
        }
        return switch (t) {
            case F32 -> Tensor.of(reals, SHAPE).cast(DType.F32);
            case F64 -> Tensor.of(reals, SHAPE);
            case I32 -> Tensor.of(Arrays.stream(ints).mapToInt(v -> (int) v).toArray(), SHAPE);
            case I64 -> Tensor.of(ints, SHAPE);
            case BOOL -> Tensor.of(ints, SHAPE).cast(DType.BOOL);
        };
    }
}
