package dev.weft.it.batching;

import dev.weft.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Function;

/** The reference for {@code vmap}: a plain loop over batch elements, with slicing and stacking by hand. */
final class Batches {
    private Batches() {
    }

    /** Elements drawn from {@code [lo, hi]}. */
    static Tensor random(Random rnd, double lo, double hi, long... shape) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        double[] v = new double[(int) n];
        for (int i = 0; i < v.length; i++) {
            v[i] = lo + (hi - lo) * rnd.nextDouble();
        }
        return Tensor.of(v).reshape(shape);
    }

    /** Element {@code b} of {@code x} along {@code axis}, without that axis. */
    static Tensor element(Tensor x, int axis, long b) {
        long[] start = new long[x.rank()], limit = x.shape();
        start[axis] = b;
        limit[axis] = b + 1;
        return x.slice(start, limit).reshape(remove(x.shape(), axis));
    }

    /** {@code parts} (of one shape) stacked along a new axis {@code axis}. */
    static Tensor stack(List<Tensor> parts, int axis) {
        Tensor[] lifted = new Tensor[parts.size()];
        for (int i = 0; i < lifted.length; i++) {
            lifted[i] = parts.get(i).reshape(insert(parts.get(i).shape(), axis, 1));
        }
        return Tensor.concat(axis, lifted);
    }

    /** What {@code vmap(f, in, out)} computes, by applying {@code f} to each of the {@code n} elements in turn. */
    static List<Tensor> loop(Function<List<Tensor>, List<Tensor>> f, int[] in, int[] out, List<Tensor> xs, long n) {
        List<List<Tensor>> results = new ArrayList<>();
        for (long b = 0; b < n; b++) {
            List<Tensor> one = new ArrayList<>(xs.size());
            for (int i = 0; i < xs.size(); i++) {
                one.add(in[i] < 0 ? xs.get(i) : element(xs.get(i), in[i], b));
            }
            results.add(f.apply(one));
        }
        List<Tensor> stacked = new ArrayList<>(out.length);
        for (int j = 0; j < out.length; j++) {
            int k = j;
            stacked.add(stack(results.stream().map(r -> r.get(k)).toList(), out[j]));
        }
        return stacked;
    }

    /** A batch of {@code n} elements of {@code shape}, batched along {@code axis} (or one element for -1). */
    static Tensor input(Random rnd, double lo, double hi, long[] shape, int axis, long n) {
        return random(rnd, lo, hi, axis < 0 ? shape : insert(shape, axis, n));
    }

    static long[] insert(long[] dims, int at, long value) {
        long[] out = new long[dims.length + 1];
        System.arraycopy(dims, 0, out, 0, at);
        out[at] = value;
        System.arraycopy(dims, at, out, at + 1, dims.length - at);
        return out;
    }

    static long[] remove(long[] dims, int at) {
        long[] out = new long[dims.length - 1];
        System.arraycopy(dims, 0, out, 0, at);
        System.arraycopy(dims, at + 1, out, at, out.length - at);
        return out;
    }
}
