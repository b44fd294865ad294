package dev.weft.it.batching;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.prim.Prims;
import dev.weft.prim.reference.AllPrimitives;
import dev.weft.spi.Primitive;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every array primitive batched equals a loop over the batch elements: each case runs under {@code Weft.vmap} with
 * every choice of its arguments' batch axes (first, last, or unbatched, at least one batched) and with the output's
 * batch axis first and last (inside {@code @Compile}: the backends' VmapCompiledTest).
 */
class VmapTest {
    private static final long BATCH = 3;
    static final double TOLERANCE = 1e-12;

    /** A function of one batch element's arguments, of the given shapes (f64, drawn from [0.5, 2]). */
    record Case(String name, Primitive<?> prim, Function<List<Tensor>, Tensor> f, List<long[]> shapes) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static Case c(String name, Primitive<?> prim, Function<List<Tensor>, Tensor> f, long[]... shapes) {
        return new Case(name, prim, f, List.of(shapes));
    }

    private static long[] s(long... dims) {
        return dims;
    }

    private static Tensor i32(long v) {
        return Tensor.scalar(DType.I32, v);
    }

    static List<Case> cases() {
        long[] m = {2, 3};
        return List.of(
                c("add", Prims.ADD, x -> x.get(0).add(x.get(1)), m, m),
                c("add broadcast", Prims.BROADCAST_IN_DIM, x -> x.get(0).add(x.get(1)), m, s(3)),
                c("sub", Prims.SUB, x -> x.get(0).sub(x.get(1)), m, m),
                c("mul", Prims.MUL, x -> x.get(0).mul(x.get(1)), m, m),
                c("div", Prims.DIV, x -> x.get(0).div(x.get(1)), m, m),
                c("pow", Prims.POW, x -> x.get(0).pow(x.get(1)), m, m),
                c("maximum", Prims.MAX, x -> x.get(0).maximum(x.get(1)), m, m),
                c("minimum", Prims.MIN, x -> x.get(0).minimum(x.get(1)), m, m),
                c("rem", Prims.REM, x -> x.get(0).mul(3).rem(x.get(1)), m, m),
                c("atan2", Prims.ATAN2, x -> x.get(0).sub(1.2).atan2(x.get(1).sub(1.3)), m, m),
                c("neg", Prims.NEG, x -> x.get(0).neg(), m),
                c("abs", Prims.ABS, x -> x.get(0).sub(1.2).abs(), m),
                c("exp", Prims.EXP, x -> x.get(0).exp(), m),
                c("log", Prims.LOG, x -> x.get(0).log(), m),
                c("sqrt", Prims.SQRT, x -> x.get(0).sqrt(), m),
                c("rsqrt", Prims.RSQRT, x -> x.get(0).rsqrt(), m),
                c("tanh", Prims.TANH, x -> x.get(0).tanh(), m),
                c("sin", Prims.SIN, x -> x.get(0).sin(), m),
                c("cos", Prims.COS, x -> x.get(0).cos(), m),
                c("lt", Prims.LT, x -> Tensor.where(x.get(0).lt(x.get(1)), x.get(0), x.get(1).mul(2)), m, m),
                c("le", Prims.LE, x -> Tensor.where(x.get(0).le(x.get(1)), x.get(0), x.get(1).mul(2)), m, m),
                c("gt", Prims.GT, x -> Tensor.where(x.get(0).gt(x.get(1)), x.get(0), x.get(1).mul(2)), m, m),
                c("ge", Prims.GE, x -> Tensor.where(x.get(0).ge(x.get(1)), x.get(0), x.get(1).mul(2)), m, m),
                c("eq of rounded", Prims.EQ, x -> x.get(0).mul(2).cast(DType.I32).eq(x.get(1).mul(2)
                        .cast(DType.I32)).cast(DType.F64), m, m),
                c("ne", Prims.NE, x -> x.get(0).ne(x.get(1)).cast(DType.F64), m, m),
                c("where with a scalar", Prims.SELECT, x -> Tensor.where(x.get(0).gt(1.2), x.get(1), x.get(0).sum()),
                        m, s()),
                c("cast to i32", Prims.CONVERT, x -> x.get(0).mul(4).cast(DType.I32).cast(DType.F64), m),
                c("sum of one axis", Prims.REDUCE_SUM, x -> x.get(0).sum(1), m),
                c("sum of two axes of three", Prims.REDUCE_SUM, x -> x.get(0).sum(0, 2), s(2, 3, 4)),
                c("prod", Prims.REDUCE_PROD, x -> x.get(0).prod(0), m),
                c("max of all", Prims.REDUCE_MAX, x -> x.get(0).max(), m),
                c("min", Prims.REDUCE_MIN, x -> x.get(0).min(1), m),
                c("matmul 2x2", Prims.MATMUL, x -> x.get(0).matmul(x.get(1)), s(3, 4), s(4, 2)),
                c("matmul 1x2", Prims.MATMUL, x -> x.get(0).matmul(x.get(1)), s(4), s(4, 2)),
                c("matmul 2x1", Prims.MATMUL, x -> x.get(0).matmul(x.get(1)), s(3, 4), s(4)),
                c("matmul 1x1", Prims.MATMUL, x -> x.get(0).matmul(x.get(1)), s(4), s(4)),
                c("matmul of batches", Prims.MATMUL, x -> x.get(0).matmul(x.get(1)), s(2, 3, 4), s(2, 4, 5)),
                c("reshape", Prims.RESHAPE, x -> x.get(0).reshape(3, 2), m),
                c("reshape to a scalar", Prims.RESHAPE, x -> x.get(0).reshape().mul(2), s(1)),
                c("transpose", Prims.TRANSPOSE, x -> x.get(0).transpose(2, 0, 1), s(2, 3, 4)),
                c("broadcastTo", Prims.BROADCAST_IN_DIM, x -> x.get(0).broadcastTo(2, 3, 4), s(3, 1)),
                c("slice", Prims.SLICE, x -> x.get(0).slice(new long[] {1, 0}, new long[] {3, 3}), s(3, 4)),
                c("pad", Prims.PAD, x -> x.get(0).pad(new long[] {1, 0}, new long[] {0, 2}, 1.5), m),
                c("concat", Prims.CONCAT, x -> Tensor.concat(1, x.get(0), x.get(1).exp()), m, s(2, 2)),
                c("dynamic_slice at fixed starts", Prims.DYNAMIC_SLICE, x -> x.get(0).dynamicSlice(List.of(i32(1),
                        Tensor.scalar(DType.I64, 7)), 2, 2), s(3, 4)),
                c("dynamic_slice at computed starts", Prims.DYNAMIC_SLICE, x -> x.get(0).dynamicSlice(
                        List.of(x.get(1).mul(2).cast(DType.I32)), 2), s(5), s()),
                c("dynamic_update_slice at fixed starts", Prims.DYNAMIC_UPDATE_SLICE, x -> x.get(0)
                        .dynamicUpdateSlice(x.get(1).exp(), List.of(i32(2), i32(-1))), s(3, 4), s(1, 3)),
                c("dynamic_update_slice at computed starts", Prims.DYNAMIC_UPDATE_SLICE, x -> x.get(0)
                        .dynamicUpdateSlice(x.get(1).reshape(1).exp(), List.of(x.get(1).mul(2).cast(DType.I64))),
                        s(5), s()),
                c("iota", Prims.IOTA, x -> x.get(0).add(Tensor.arange(DType.F64, 3)), s(3)),
                c("constant", Prims.CONSTANT, x -> x.get(0).mul(Tensor.of(new double[] {1, -2, 3})), s(3)),
                c("fori, carry and capture", Prims.FORI, x -> Weft.fori(0, 3, x.get(0),
                        (i, c) -> c.mul(x.get(1)).add(c.sin())), m, m),
                c("fori, a carry that becomes batched", Prims.FORI, x -> Weft.fori(0, 3, x.get(1),
                        (i, c) -> c.mul(0.5).add(x.get(0)).add(i.cast(DType.F64))), m, m),
                c("fori, a carry that stays unbatched", Prims.FORI, x -> {
                    List<Tensor> r = Weft.fori(1, 4, List.of(x.get(0), Tensor.ones(DType.F64, 2, 3)),
                            (i, c) -> List.of(c.get(0).mul(c.get(1)).add(1), c.get(1).mul(1.5)));
                    return r.get(0).add(r.get(1));
                }, m),
                c("cond", Prims.COND, x -> Weft.cond(x.get(1).sum().gt(7),
                        () -> x.get(0).mul(x.get(1)), () -> x.get(1).exp()), m, m),
                c("cond, one branch batched", Prims.COND, x -> Weft.cond(x.get(1).sum().gt(7),
                        () -> x.get(0).mul(2), () -> x.get(1).exp()), m, m),
                c("whileLoop", Prims.WHILE, x -> Weft.whileLoop(s -> s.get(0).sum().lt(x.get(1).sum().mul(4)),
                        s -> List.of(s.get(0).mul(1.5).add(x.get(1).abs())), List.of(x.get(0).abs().add(1)))
                        .getFirst(), m, m),
                c("customJvp", Prims.CUSTOM_JVP_CALL, x -> Weft.customJvp(xs -> List.of(xs.get(0).mul(xs.get(1))
                        .sin()), (p, t) -> new dev.weft.Jvp(List.of(p.get(0).mul(p.get(1)).sin()), List.of(t.get(0)
                        .mul(p.get(1)).add(p.get(0).mul(t.get(1))).mul(p.get(0).mul(p.get(1)).cos()))))
                        .apply(x).getFirst(), m, m),
                c("customVjp", Prims.CUSTOM_VJP_CALL, x -> Weft.customVjp(xs -> List.of(xs.get(0).exp()
                        .add(xs.get(1))), xs -> new dev.weft.CustomVjpForward(List.of(xs.get(0).exp().add(xs.get(1))),
                        List.of(xs.get(0).exp())), (r, g) -> List.of(g.get(0).mul(r.get(0)), g.get(0)))
                        .apply(x).getFirst(), m, m));
    }

    /** Every choice of batch axes: first, last or none for each argument, at least one batched. */
    static List<int[]> inAxes(Case c) {
        List<int[]> out = new ArrayList<>(List.of(new int[0]));
        for (long[] shape : c.shapes()) {
            List<int[]> next = new ArrayList<>();
            Set<Integer> options = new LinkedHashSet<>(List.of(0, shape.length, -1));
            for (int[] prefix : out) {
                for (int a : options) {
                    int[] more = Arrays.copyOf(prefix, prefix.length + 1);
                    more[prefix.length] = a;
                    next.add(more);
                }
            }
            out = next;
        }
        return out.stream().filter(a -> Arrays.stream(a).anyMatch(v -> v >= 0)).toList();
    }

    static List<Tensor> inputs(Case c, int[] in, long seed) {
        Random rnd = new Random(seed);
        List<Tensor> xs = new ArrayList<>();
        for (int i = 0; i < in.length; i++) {
            xs.add(Batches.input(rnd, 0.5, 2, c.shapes().get(i), in[i], BATCH));
        }
        return xs;
    }

    static Function<List<Tensor>, List<Tensor>> listed(Case c) {
        return x -> List.of(c.f().apply(x));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void batchedEqualsALoopOverTheElements(Case c) {
        for (int[] in : inAxes(c)) {
            List<Tensor> xs = inputs(c, in, c.name().hashCode());
            int rank = c.f().apply(elementOf(xs, in)).rank();
            for (int out : new int[] {0, rank}) {
                Tensor expected = Batches.loop(listed(c), in, new int[] {out}, xs, BATCH).getFirst();
                Tensor actual = Weft.vmap(listed(c), in, new int[] {out}).apply(xs).getFirst();
                String what = "%s, inAxes %s, outAxes [%d]".formatted(c, Arrays.toString(in), out);
                assertThat(actual.dtype()).as(what).isEqualTo(expected.dtype());
                assertThat(actual.shape()).as(what).containsExactly(expected.shape());
                assertThat(actual.toDoubleArray()).as(what).containsExactly(expected.toDoubleArray(), within(TOLERANCE));
            }
        }
    }

    /** Batch element 0 of the arguments. */
    private static List<Tensor> elementOf(List<Tensor> xs, int[] in) {
        List<Tensor> one = new ArrayList<>();
        for (int i = 0; i < xs.size(); i++) {
            one.add(in[i] < 0 ? xs.get(i) : Batches.element(xs.get(i), in[i], 0));
        }
        return one;
    }

    @Test
    void everyArrayPrimitiveHasACaseHere() {
        Set<Primitive<?>> covered = cases().stream().map(Case::prim).collect(Collectors.toSet());
        List<String> missing = new ArrayList<>();
        for (Primitive<?> p : AllPrimitives.array()) {
            if (!covered.contains(p)) {
                missing.add(p.name());
            }
        }
        assertThat(missing).as("array primitives without a vmap case").isEmpty();
    }
}
