package dev.weft.nn;

import dev.weft.DType;
import dev.weft.DTypeException;
import dev.weft.Tensor;
import dev.weft.spi.Args;
import dev.weft.spi.SourceLocation;

/**
 * Neural-network functions built from {@link Tensor} operations, so they run eagerly and inside {@code @Compile},
 * differentiate, batch and shard like any other code. Each follows PyTorch's definition (named where it differs
 * from JAX's) and avoids forms whose gradient turns an overflow in an unused branch into NaN: no {@code where}
 * between two computed formulas.
 */
public final class Nn {
    private Nn() {
    }

    /** {@code max(x, 0)}; its derivative at 0 is 0 (PyTorch's). */
    public static Tensor relu(Tensor x) {
        Args.notNull(x, Nn.class, "relu", "x");
        return x.maximum(0);
    }

    /**
     * GELU in its tanh form, {@code 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))}: JAX's default and PyTorch's
     * {@code approximate='tanh'} (PyTorch's default is the erf form, which differs by up to ~1e-3).
     */
    public static Tensor gelu(Tensor x) {
        Args.notNull(x, Nn.class, "gelu", "x");
        floating("gelu", x);
        Tensor inner = x.add(x.mul(x).mul(x).mul(0.044715)).mul(Math.sqrt(2 / Math.PI));
        return x.mul(0.5).mul(inner.tanh().add(1));
    }

    /** {@code 1 / (1 + exp(-x))}, as {@code (1 + tanh(x/2)) / 2}: no overflow at either end, nor in its gradient. */
    public static Tensor sigmoid(Tensor x) {
        Args.notNull(x, Nn.class, "sigmoid", "x");
        floating("sigmoid", x);
        return x.mul(0.5).tanh().add(1).mul(0.5);
    }

    /** {@code log(sum(exp(x)))} over {@code axis}, shifted by the maximum so it does not overflow; the axis is dropped. */
    public static Tensor logsumexp(Tensor x, int axis) {
        Args.notNull(x, Nn.class, "logsumexp", "x");
        floating("logsumexp", x);
        Tensor m = shift(x, axis);
        return x.sub(m).exp().sum(true, axis).log().add(m).sum(axis);
    }

    /** {@code exp(x) / sum(exp(x))} over {@code axis} (PyTorch's {@code softmax(x, dim)}). */
    public static Tensor softmax(Tensor x, int axis) {
        Args.notNull(x, Nn.class, "softmax", "x");
        floating("softmax", x);
        Tensor e = x.sub(shift(x, axis)).exp();
        return e.div(e.sum(true, axis));
    }

    /** {@code x - logsumexp(x)} over {@code axis} (PyTorch's {@code log_softmax(x, dim)}). */
    public static Tensor logSoftmax(Tensor x, int axis) {
        Args.notNull(x, Nn.class, "logSoftmax", "x");
        floating("logSoftmax", x);
        Tensor shifted = x.sub(shift(x, axis));
        return shifted.sub(shifted.exp().sum(true, axis).log());
    }

    /**
     * {@code indices} (integers) as one-hot vectors of {@code classes} entries of {@code dtype}, along a new last
     * axis; an index outside {@code [0, classes)} gives a row of zeros (PyTorch raises, JAX gives zeros).
     */
    public static Tensor oneHot(Tensor indices, int classes, DType dtype) {
        Args.notNull(indices, Nn.class, "oneHot", "indices");
        Args.notNull(dtype, Nn.class, "oneHot", "dtype");
        if (!indices.dtype().isInteger()) {
            throw new DTypeException(SourceLocation.capture(), "oneHot: indices must be i32 or i64, got "
                    + indices.dtype().specName());
        }
        long[] shape = indices.shape();
        long[] column = java.util.Arrays.copyOf(shape, shape.length + 1);
        column[shape.length] = 1;
        return indices.cast(DType.I64).reshape(column).eq(Tensor.arange(DType.I64, classes)).cast(dtype);
    }

    /**
     * The mean over the batch of {@code -log softmax(logits)[label]} (PyTorch's {@code cross_entropy} with its
     * default mean reduction): {@code logits} {@code [N, C]}, {@code labels} {@code [N]} integer classes.
     */
    public static Tensor crossEntropy(Tensor logits, Tensor labels) {
        Args.notNull(logits, Nn.class, "crossEntropy", "logits");
        Args.notNull(labels, Nn.class, "crossEntropy", "labels");
        floating("crossEntropy", logits);
        if (logits.rank() != 2 || labels.rank() != 1 || labels.shape()[0] != logits.shape()[0]) {
            throw new dev.weft.ShapeException(SourceLocation.capture(), "crossEntropy: logits must be [N, C] and"
                    + " labels [N], got " + java.util.Arrays.toString(logits.shape()) + " and "
                    + java.util.Arrays.toString(labels.shape()));
        }
        Tensor hit = oneHot(labels, (int) logits.shape()[1], DType.BOOL);
        Tensor picked = Tensor.where(hit, logSoftmax(logits, 1), 0).sum(1);
        return picked.mean().neg();
    }

    /**
     * Normalises {@code x} over its last axis to mean 0 and variance 1 (the biased variance, with {@code eps} added
     * before the square root): PyTorch's {@code layer_norm(x, [d], eps=eps)}.
     */
    public static Tensor layerNorm(Tensor x, double eps) {
        Args.notNull(x, Nn.class, "layerNorm", "x");
        floating("layerNorm", x);
        Tensor centred = x.sub(x.mean(true, -1));
        return centred.mul(centred.mul(centred).mean(true, -1).add(eps).rsqrt());
    }

    /**
     * {@link #layerNorm(Tensor, double)} scaled by {@code gamma} and shifted by {@code beta} (each broadcast against
     * the last axis): PyTorch's {@code layer_norm(x, [d], gamma, beta, eps)}.
     */
    public static Tensor layerNorm(Tensor x, Tensor gamma, Tensor beta, double eps) {
        Args.notNull(x, Nn.class, "layerNorm", "x");
        Args.notNull(gamma, Nn.class, "layerNorm", "gamma");
        Args.notNull(beta, Nn.class, "layerNorm", "beta");
        return layerNorm(x, eps).mul(gamma).add(beta);
    }

    /** The maximum over {@code axis} kept as a dimension, 0 where it is infinite (all -inf, or an inf present). */
    private static Tensor shift(Tensor x, int axis) {
        Tensor m = x.max(true, axis);
        return Tensor.where(m.abs().eq(Double.POSITIVE_INFINITY), 0, m);
    }

    private static void floating(String op, Tensor x) {
        if (!x.dtype().isFloating()) {
            throw new DTypeException(SourceLocation.capture(), op + ": needs f32 or f64, got " + x.dtype().specName()
                    + " (cast first)");
        }
    }
}
