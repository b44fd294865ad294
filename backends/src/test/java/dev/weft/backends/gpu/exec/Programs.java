package dev.weft.backends.gpu.exec;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import java.util.List;

/** Traced programs shared by the planner tests and the device tests. */
public final class Programs {
    private Programs() {
    }

    @Compile
    public static Tensor flatten(Tensor x) {
        return x.reshape(-1);
    }

    @Compile
    public static Tensor smooth(Tensor x) {
        return x.mul(2).add(1).exp().sub(x.tanh()).maximum(x.sin().mul(x.cos()));
    }

    @Compile
    public static Tensor logistic(Tensor x, Tensor w) {
        Tensor z = x.matmul(w);
        return z.neg().exp().add(1).pow(-1).sum(1);
    }

    @Compile
    public static Tensor reductions(Tensor x) {
        return x.max(0).add(x.min(0)).add(x.sum(0)).add(x.mean(0)).mul(x.prod(0).abs().add(1).log());
    }

    @Compile
    public static Tensor shuffle(Tensor x) {
        return Tensor.concat(0, x.transpose(), x.slice(new long[] {0, 0}, new long[] {1, 4})).reshape(-1)
                .pad(new long[] {1}, new long[] {2}, 3);
    }

    @Compile
    public static Tensor total(Tensor x) {
        return x.sum();
    }

    @Compile
    public static Tensor loop(Tensor x, int steps) {
        return Weft.fori(0, steps, x, (i, c) -> Weft.cond(c.sum().gt(0), () -> c.mul(0.5), () -> c.sub(1)));
    }

    /** A counted loop whose body uses its index: {@code c ← c/2 + i}. */
    @Compile
    public static Tensor iterate(Tensor x, int steps) {
        return Weft.fori(0, steps, x, (i, c) -> c.mul(0.5).add(i.cast(x.dtype())));
    }

    /** Row i of the result holds the running sum of x's rows 0..i (clamped reads past the end): dynamic slices. */
    @Compile
    public static Tensor prefixRows(Tensor x) {
        long n = x.shape()[0], k = x.shape()[1];
        Tensor zero = Tensor.scalar(DType.I32, 0);
        List<Tensor> out = Weft.fori(0, (int) n + 2, List.of(Tensor.zeros(x.dtype(), n, k), Tensor.zeros(x.dtype(), 1, k)),
                (i, c) -> {
                    Tensor sum = c.get(1).add(x.dynamicSlice(List.of(i, zero), 1, k));
                    return List.of(c.get(0).dynamicUpdateSlice(sum, List.of(i.cast(DType.I64), zero.cast(DType.I64))),
                            sum);
                });
        return out.getFirst();
    }

    @Compile
    public static Tensor integers(Tensor a, Tensor b) {
        return Tensor.where(a.lt(b), a.rem(b.abs().add(1)), b.div(a.abs().add(1))).add(Tensor.arange(DType.I32, 8));
    }

    @Compile
    public static Tensor casts(Tensor x) {
        return x.cast(DType.I64).cast(DType.F64).sqrt().add(x.cast(DType.F64).rsqrt()).cast(DType.F32);
    }

    /** A data-dependent loop (a general while on the GPU: its condition read back each step). */
    @Compile
    public static Tensor halveUntilSmall(Tensor x) {
        return dev.weft.Weft.whileLoop(v -> v.abs().sum().gt(1), v -> v.mul(0.5), x);
    }

    /** Softmax, argmax and take: compositions of selects, reductions and iotas. */
    @Compile
    public static Tensor lookups(Tensor x) {
        Tensor p = dev.weft.nn.Nn.softmax(x, 1);
        Tensor best = x.argmax(1);
        return p.take(best, 1).sum().add(x.take(best.slice(0, 0, 2), 0).sum());
    }
}
