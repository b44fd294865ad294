package dev.weft.backends.cpu.exec;

import dev.weft.DType;
import dev.weft.backends.cpu.kernels.FloatMathBlock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * How a {@link FusedLoopSpec} holding f32 sine, cosine or exponential runs block by block, so that those run as
 * {@link FloatMathBlock} kernels, which C2 vectorizes. For each block its full-size inputs are copied into
 * arrays, a sequence of element loops and kernel calls computes the nodes, and the results are copied out of
 * their arrays. Loop {@code s} computes the nodes of stage {@code s}: a kernel node is one stage after its
 * argument and runs between loops, every other node is in the stage of its latest argument. A node lives in a
 * local within its own loop and in an array of the block where it is needed later: inputs, kernel arguments
 * and results, values of a later loop.
 */
final class BlockedLoopPlan {
    private final FusedLoopSpec spec;
    private final int[] stage;
    private final boolean[] kernel;
    private final boolean[] array;

    private BlockedLoopPlan(FusedLoopSpec spec) {
        this.spec = spec;
        List<FusedLoopSpec.Node> nodes = spec.nodes();
        stage = new int[nodes.size()];
        kernel = new boolean[nodes.size()];
        array = new boolean[nodes.size()];
        for (int k = 0; k < nodes.size(); k++) {
            switch (nodes.get(k)) {
                case FusedLoopSpec.Element e -> array[k] = true;
                case FusedLoopSpec.Scalar s -> {
                    // a local set before the loops
                }
                case FusedLoopSpec.Apply a -> {
                    kernel[k] = isKernel(a);
                    array[k] = kernel[k];
                    for (int arg : a.args()) {
                        stage[k] = Math.max(stage[k], stage[arg] + (kernel[k] ? 1 : 0));
                    }
                }
            }
        }
        for (int k = 0; k < nodes.size(); k++) {
            if (nodes.get(k) instanceof FusedLoopSpec.Apply a) {
                for (int arg : a.args()) {
                    // a kernel reads an array; a later loop reloads the value
                    boolean later = kernel[k] ? stage[k] - 1 > stage[arg] : stage[k] > stage[arg];
                    array[arg] |= later && !(nodes.get(arg) instanceof FusedLoopSpec.Scalar);
                }
            }
        }
        for (int r : spec.results()) {
            array[r] = true;
        }
    }

    /** The plan of {@code spec}, or empty when it holds no f32 sine, cosine or exponential. */
    static Optional<BlockedLoopPlan> of(FusedLoopSpec spec) {
        return spec.nodes().stream().anyMatch(n -> n instanceof FusedLoopSpec.Apply a && isKernel(a))
                ? Optional.of(new BlockedLoopPlan(spec))
                : Optional.empty();
    }

    /** The {@link FloatMathBlock} method computing {@code a}, or null when an element loop computes it. */
    static String kernelMethod(FusedLoopSpec.Apply a) {
        if (a.operand() != DType.F32) {
            return null;
        }
        return switch (a.op()) {
            case SIN -> "sin";
            case COS -> "cos";
            case EXP -> "exp";
            default -> null;
        };
    }

    private static boolean isKernel(FusedLoopSpec.Apply a) {
        return kernelMethod(a) != null;
    }

    /** Element loops per block. */
    int loops() {
        int last = 0;
        for (int s : stage) {
            last = Math.max(last, s);
        }
        return last + 1;
    }

    boolean isKernel(int node) {
        return kernel[node];
    }

    /** Whether {@code node} has an array of one block: inputs, kernels, results and values a later loop reads. */
    boolean hasArray(int node) {
        return array[node];
    }

    /** The kernels that run before loop {@code loop}, in node order. */
    List<Integer> kernels(int loop) {
        List<Integer> ks = new ArrayList<>();
        for (int k = 0; k < stage.length; k++) {
            if (kernel[k] && stage[k] == loop) {
                ks.add(k);
            }
        }
        return ks;
    }

    /** The node whose array kernel {@code k} reads: its argument's, else its own, filled by the loop before. */
    int kernelSource(int k) {
        int arg = argument(k);
        return array[arg] ? arg : k;
    }

    /** The argument of kernel {@code k}. */
    int argument(int k) {
        return ((FusedLoopSpec.Apply) spec.nodes().get(k)).args().getFirst();
    }

    /** The nodes loop {@code loop} reads from their arrays: arguments of its nodes computed elsewhere. */
    List<Integer> loads(int loop) {
        boolean[] load = new boolean[stage.length];
        for (int k : computed(loop)) {
            for (int arg : ((FusedLoopSpec.Apply) spec.nodes().get(k)).args()) {
                load[arg] |= array[arg] && !computedIn(arg, loop);
            }
        }
        return indices(load);
    }

    /** The nodes loop {@code loop} computes, in evaluation order: its stage's nodes but kernels. */
    List<Integer> computed(int loop) {
        List<Integer> ks = new ArrayList<>();
        for (int k = 0; k < stage.length; k++) {
            if (computedIn(k, loop)) {
                ks.add(k);
            }
        }
        return ks;
    }

    /**
     * The nodes whose value loop {@code loop} stores into an array: its computed nodes that have one, rank-0
     * results (in loop 0), and the kernel nodes of the next stage whose argument has no array (their argument's
     * value goes into the kernel's array).
     */
    List<Integer> stores(int loop) {
        boolean[] store = new boolean[stage.length];
        for (int k = 0; k < stage.length; k++) {
            boolean scalar = spec.nodes().get(k) instanceof FusedLoopSpec.Scalar;
            store[k] = array[k] && (computedIn(k, loop) || scalar && loop == 0)
                    || kernel[k] && stage[k] == loop + 1 && !array[argument(k)];
        }
        return indices(store);
    }

    /** Whether loop {@code loop} computes anything, loads or stores. */
    boolean hasWork(int loop) {
        return !computed(loop).isEmpty() || !stores(loop).isEmpty();
    }

    private boolean computedIn(int node, int loop) {
        return spec.nodes().get(node) instanceof FusedLoopSpec.Apply && !kernel[node] && stage[node] == loop;
    }

    private static List<Integer> indices(boolean[] set) {
        List<Integer> ks = new ArrayList<>();
        for (int k = 0; k < set.length; k++) {
            if (set[k]) {
                ks.add(k);
            }
        }
        return ks;
    }
}
