package dev.weft.backends.cpu.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Reductions over trailing axes of fused elementwise values ({@code weft.fused_reduce}) give bit for bit what eager
 * mode gives, which materialises the value and runs the library reduction: every dtype, reduce op, producer
 * (chains with scalar broadcasts, one elementwise op, slices read as views) and shape around the block size, the
 * floating ones through native folds where a C compiler is configured.
 */
class FusedReductionTest {
    private static final String[] PRODUCERS = {"mul", "absdiff", "affine", "abs", "diff"};
    private static final long[][] SHAPES = {{1}, {7}, {4096}, {4097}, {10_000}, {1, 1}, {3, 1}, {3, 5}, {5, 4097},
        {3, 2000}, {2, 3, 1500}, {4, 3, 7}};

    /** With a C compiler, the native folds are loaded first, so that floating blocks of whole runs go through them. */
    @BeforeAll
    static void install() throws Exception {
        Weft.install();
        NativeRowKernels.prepare();
        NativeLoops.awaitBackground();
    }

    /** A producer of {@code x}'s shape (less one column for {@code diff}, whose slices fusions read as views). */
    static Tensor produce(Tensor x, Tensor y, String producer) {
        return switch (producer) {
            case "mul" -> x.mul(y);
            case "absdiff" -> x.sub(y).abs();
            case "affine" -> x.mul(3).add(y).sub(2);
            case "abs" -> x.abs();
            case "diff" -> {
                long[] shape = x.shape();
                int last = shape.length - 1;
                long[] zero = new long[shape.length];
                long[] one = zero.clone();
                one[last] = 1;
                long[] shorter = shape.clone();
                shorter[last]--;
                yield x.slice(one, shape).sub(y.slice(zero, shorter)).abs();
            }
            default -> throw new IllegalArgumentException(producer);
        };
    }

    /** {@code op} over the last {@code trailing} axes of {@code v} (all of them when it is the rank). */
    static Tensor reduce(Tensor v, String op, int trailing) {
        int[] axes = trailing == v.rank() ? new int[0]
                : IntStream.range(v.rank() - trailing, v.rank()).toArray();
        return switch (op) {
            case "sum" -> v.sum(axes);
            case "max" -> v.max(axes);
            case "min" -> v.min(axes);
            case "prod" -> v.prod(axes);
            case "mean" -> v.mean(axes);
            default -> throw new IllegalArgumentException(op);
        };
    }

    @Compile
    static Tensor fused(Tensor x, Tensor y, String producer, String op, int trailing) {
        return reduce(produce(x, y, producer), op, trailing);
    }

    /** The producer's value reduced twice, so it has two uses and stays materialised. */
    @Compile
    static Tensor reusedProducer(Tensor x, Tensor y) {
        Tensor v = x.mul(y).add(1);
        return v.sum().add(v.max());
    }

    /** A reduction over the leading axis, which is not fused. */
    @Compile
    static Tensor leadingAxis(Tensor x, Tensor y) {
        return x.mul(y).sub(1).sum(0);
    }

    record Case(DType dtype, String producer, String op, long[] shape, int trailing) {
        Object[] args() {
            return new Object[] {TensorSpec.of(dtype, shape), TensorSpec.of(dtype, shape), producer, op, trailing};
        }

        @Override
        public String toString() {
            return dtype + " " + op + " over " + trailing + " trailing of " + producer + Arrays.toString(shape);
        }
    }

    /** Every dtype, op and shape, with each trailing-axes count; the producers take turns. */
    static Stream<Case> cases() {
        List<Case> out = new ArrayList<>();
        int turn = 0;
        for (DType dtype : List.of(DType.F32, DType.F64, DType.I32)) {
            for (String op : dtype.isFloating() ? List.of("sum", "max", "min", "prod", "mean")
                    : List.of("sum", "max", "min", "prod")) {
                for (long[] shape : SHAPES) {
                    for (int trailing = 1; trailing <= shape.length; trailing++) {
                        String producer = PRODUCERS[turn++ % PRODUCERS.length];
                        if (producer.equals("diff") && shape[shape.length - 1] < 2) {
                            producer = "mul";
                        }
                        out.add(new Case(dtype, producer, op, shape, trailing));
                    }
                }
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void compiledEqualsEagerBitForBit(Case c) {
        Random rnd = new Random(c.toString().hashCode());
        Tensor x = tensor(c.dtype(), c.op(), rnd, c.shape());
        Tensor y = tensor(c.dtype(), c.op(), rnd, c.shape());
        Module m = (Module) Weft.lower(FusedReductionTest.class, "fused", c.args());
        assertThat(names(m.main().body())).as(m.toMlir()).contains(StableHlo.FUSED_REDUCE)
                .doesNotContain(StableHlo.REDUCE);
        Tensor compiled = fused(x, y, c.producer(), c.op(), c.trailing());
        assertThat(TensorBits.of(compiled))
                .containsExactly(TensorBits.of(reduce(produce(x, y, c.producer()), c.op(), c.trailing())));
    }

    @Test
    void nanPropagatesThroughAFusedMaximum() {
        float[] v = new float[9000];
        Arrays.fill(v, 1f);
        v[8000] = Float.NaN;
        Tensor x = Tensor.of(v, 9000);
        Tensor y = Tensor.full(DType.F32, 2, 9000);
        assertThat(fused(x, y, "mul", "max", 1).item()).isNaN();
        assertThat(TensorBits.of(fused(x, y, "affine", "min", 1)))
                .containsExactly(TensorBits.of(x.mul(3).add(y).sub(2).min()));
    }

    @Test
    void aProducerWithAnotherUseIsNotFusedAndStillCorrect() {
        Random rnd = new Random(3);
        Tensor x = tensor(DType.F32, "sum", rnd, 5000);
        Tensor y = tensor(DType.F32, "sum", rnd, 5000);
        Module m = (Module) Weft.lower(FusedReductionTest.class, "reusedProducer", TensorSpec.of(DType.F32, 5000),
                TensorSpec.of(DType.F32, 5000));
        assertThat(names(m.main().body())).contains(StableHlo.FUSION, StableHlo.REDUCE)
                .doesNotContain(StableHlo.FUSED_REDUCE);
        Tensor v = x.mul(y).add(1);
        assertThat(TensorBits.of(reusedProducer(x, y))).containsExactly(TensorBits.of(v.sum().add(v.max())));
    }

    @Test
    void aLeadingAxisReductionIsNotFusedAndStillCorrect() {
        Random rnd = new Random(5);
        Tensor x = tensor(DType.F64, "sum", rnd, 6, 700);
        Tensor y = tensor(DType.F64, "sum", rnd, 6, 700);
        Module m = (Module) Weft.lower(FusedReductionTest.class, "leadingAxis", TensorSpec.of(DType.F64, 6, 700),
                TensorSpec.of(DType.F64, 6, 700));
        assertThat(names(m.main().body())).contains(StableHlo.FUSION, StableHlo.REDUCE)
                .doesNotContain(StableHlo.FUSED_REDUCE);
        assertThat(TensorBits.of(leadingAxis(x, y))).containsExactly(TensorBits.of(x.mul(y).sub(1).sum(0)));
    }

    private static List<String> names(Block b) {
        return b.ops().stream().map(Op::name).toList();
    }

    /**
     * Random values: arbitrary floats in [-1, 1) (so that the order of a sum shows in its bits), near 1 for
     * products; whole numbers in [-9, 9] for i32.
     */
    private static Tensor tensor(DType dtype, String op, Random rnd, long... shape) {
        int n = (int) LongStream.of(shape).reduce(1, (a, b) -> a * b);
        boolean product = op.equals("prod");
        return switch (dtype) {
            case F32 -> {
                float[] v = new float[n];
                for (int i = 0; i < n; i++) {
                    float r = rnd.nextFloat() * 2 - 1;
                    v[i] = product ? 1 + r / 64 : r;
                }
                yield Tensor.of(v, shape);
            }
            case F64 -> Tensor.of(rnd.doubles(n).map(r -> product ? 1 + (r - 0.5) / 32 : r * 2 - 1).toArray(), shape);
            case I32 -> Tensor.of(rnd.ints(n, -9, 10).toArray(), shape);
            default -> throw new IllegalArgumentException(dtype.name());
        };
    }

}
