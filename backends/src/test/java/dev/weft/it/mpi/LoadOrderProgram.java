package dev.weft.it.mpi;

import dev.weft.Compile;
import dev.weft.Tensor;
import dev.weft.Weft;

/**
 * A {@code @Compile} class ({@link Helper}) that is first loaded while the agent installs: reflecting on this
 * class's methods (one names {@code Helper}) loads it. Prints whether {@code Helper.probe}'s body ran traced.
 */
public final class LoadOrderProgram {
    private LoadOrderProgram() {
    }

    @Compile
    static Tensor twice(Tensor x) {
        return x.mul(2);
    }

    static Helper helper(Helper h) {
        return h;
    }

    public static void main(String[] args) {
        Weft.install();
        Helper.probe(Tensor.of(new float[] {1, 2}));
        System.out.println("helper traced=" + Helper.traced);
    }

    /** Its {@code @Compile} method records whether its body ran traced. */
    static final class Helper {
        static boolean traced;

        private Helper() {
        }

        @Compile
        static Tensor probe(Tensor x) {
            traced = x.isTraced();
            return x.add(1);
        }
    }
}
