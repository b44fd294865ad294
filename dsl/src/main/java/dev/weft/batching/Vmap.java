package dev.weft.batching;

import dev.weft.NullArgumentException;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.spi.Args;
import dev.weft.spi.Interpreters;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/** The transform behind {@code Weft.vmap}: a function of one element applied to a batch at once. */
public final class Vmap {
    private Vmap() {
    }

    /**
     * {@code f} batched along {@code inAxes} (an axis of each argument, or -1 for an unbatched one), with output
     * {@code j}'s batch along {@code outAxes[j]}.
     *
     * @throws ShapeException naming the caller's line for an axis below -1 (or an output axis below 0)
     */
    public static Function<List<Tensor>, List<Tensor>> vmap(Function<List<Tensor>, List<Tensor>> f, int[] inAxes,
                                                          int[] outAxes) {
        int[] in = inAxes.clone(), out = outAxes.clone();
        for (int a : in) {
            if (a < -1) {
                throw new ShapeException(SourceLocation.capture(), "vmap: inAxes " + Arrays.toString(in) + " holds "
                        + a + "; an argument's batch axis is 0 or more, or -1 for an unbatched argument");
            }
        }
        for (int a : out) {
            if (a < 0) {
                throw new ShapeException(SourceLocation.capture(), "vmap: outAxes " + Arrays.toString(out)
                        + " holds " + a + "; an output's batch axis is 0 or more");
            }
        }
        return xs -> apply(f, in, out, xs);
    }

    private static List<Tensor> apply(Function<List<Tensor>, List<Tensor>> f, int[] in, int[] out,
                                      List<Tensor> xs) {
        Args.noNulls(xs, Weft.class, "vmap", "arguments");
        SourceLocation where = SourceLocation.capture();
        long size = batchSize(in, xs, where);
        BatchInterpreter level = new BatchInterpreter(size);
        List<Tensor> args = new ArrayList<>(xs.size());
        for (int i = 0; i < xs.size(); i++) {
            args.add(level.wrap(xs.get(i), in[i]));
        }
        List<Tensor> outs = Interpreters.with(level, () -> results(f.apply(args), where));
        if (outs.size() != out.length) {
            throw new ShapeException(where, "vmap: the function returned " + outs.size() + " tensors but outAxes "
                    + Arrays.toString(out) + " has " + out.length + " entries");
        }
        for (int j = 0; j < outs.size(); j++) {
            int rank = outs.get(j).rank();
            if (out[j] > rank) {
                throw new ShapeException(where, "vmap: outAxes[" + j + "] = " + out[j] + " is out of range for"
                        + " output " + j + ", " + TensorAccess.aval(outs.get(j)) + " per element (its batch axis can"
                        + " be 0 to " + rank + ")");
            }
        }
        List<Tensor> batched = new ArrayList<>(outs.size());
        for (int j = 0; j < outs.size(); j++) {
            Tensor o = outs.get(j);
            batched.add(BatchAxes.materialize(level.value(o), level.dim(o), size, out[j]));
        }
        return batched;
    }

    /** The batch size the batched arguments agree on. */
    private static long batchSize(int[] in, List<Tensor> xs, SourceLocation where) {
        if (xs.size() != in.length) {
            throw new ShapeException(where, "vmap: the function was given " + xs.size() + " arguments but inAxes "
                    + Arrays.toString(in) + " has " + in.length + " entries");
        }
        long size = -1;
        int first = -1;
        for (int i = 0; i < in.length; i++) {
            if (in[i] < 0) {
                continue;
            }
            Tensor x = xs.get(i);
            if (in[i] >= x.rank()) {
                throw new ShapeException(where, "vmap: inAxes[" + i + "] = " + in[i] + " is out of range for"
                        + " argument " + i + ", " + TensorAccess.aval(x) + " (rank " + x.rank() + ")");
            }
            long n = x.shape()[in[i]];
            if (first < 0) {
                size = n;
                first = i;
            } else if (n != size) {
                throw new ShapeException(where, "vmap: argument " + i + " has " + n + " elements along its batch"
                        + " axis " + in[i] + " but argument " + first + " has " + size + " along axis " + in[first]
                        + "; the batched arguments must agree");
            }
        }
        if (first < 0) {
            throw new ShapeException(where, "vmap: no argument is batched (inAxes " + Arrays.toString(in)
                    + "); batch at least one, or call the function directly");
        }
        return size;
    }

    private static List<Tensor> results(List<Tensor> outs, SourceLocation where) {
        if (outs == null) {
            throw new NullArgumentException(where, "Weft.vmap: the function returned null");
        }
        for (int j = 0; j < outs.size(); j++) {
            if (outs.get(j) == null) {
                throw new NullArgumentException(where, "Weft.vmap: the function returned null as output " + j);
            }
        }
        return List.copyOf(outs);
    }
}
