package dev.weft.it.mpi;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.WeftException;

/**
 * A program that never installs Weft's agent, run in a plain JVM by {@link AgentAutoInstallTest}.
 * <ul>
 *   <li>{@code compiled}: makes a tensor, then calls a {@code @Compile} method, and prints whether its body ran
 *       traced ({@code traced=true}) and the result.</li>
 *   <li>{@code inside}: calls a {@code @Compile} method whose body makes the program's first tensor; prints the
 *       line of that statement ({@code expect <file>:<line>}), the error of that call, then whether the next call
 *       ran traced.</li>
 *   <li>{@code twice-thrice}: calls a {@code @Compile} method twice, then prints as {@code compiled}.</li>
 * </ul>
 */
public final class AutoInstallProgram {
    private static boolean traced;
    private static int line;

    private AutoInstallProgram() {
    }

    @Compile
    static Tensor twice(Tensor x) {
        traced = x.isTraced();
        return x.mul(2);
    }

    @Compile
    static Tensor ones(int n) {
        line = new Throwable().getStackTrace()[0].getLineNumber(); Tensor t = Tensor.ones(DType.F32, n);
        traced = t.isTraced() || t.add(0).isTraced();
        return t;
    }

    public static void main(String[] args) {
        switch (args[0]) {
            case "compiled" -> {
                Tensor y = twice(Tensor.of(new float[] {1, 2}));
                System.out.println("traced=" + traced + " result=" + y);
            }
            case "twice-thrice" -> {
                Tensor y = twice(Tensor.of(new float[] {1, 2}));
                twice(y);
                System.out.println("traced=" + traced + " result=" + y);
            }
            case "inside" -> {
                try {
                    ones(2);
                    System.out.println("no error");
                } catch (WeftException e) {
                    System.out.println("expect AutoInstallProgram.java:" + line);
                    System.out.println("error " + e.getMessage());
                }
                traced = false;
                ones(3);
                System.out.println("traced=" + traced);
            }
            default -> throw new IllegalArgumentException(args[0]);
        }
    }
}
