package dev.weft.it.mpi;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.backends.comm.check.ScheduleMismatchException;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.it.check.MismatchPrograms;
import java.util.List;
import java.util.function.BiFunction;

/**
 * The schedule check under {@code mpirun}. {@code compiled}: runs every case of {@link MismatchPrograms} inside
 * {@code @Compile}, printing {@code rank R: <case>: <message>} for each mismatch, then rethrows the first, which
 * ends the job non-zero. {@code eager} (run with {@code WEFT_CHECK=strict}): the same for eager collectives that
 * disagree. The world is left clean after each mismatch (the check runs before any of the user's operations),
 * so the cases run one after another. {@code mixed}: rank 0 calls a compiled allreduce, the others the same allreduce
 * eagerly, which the check cannot pair.
 */
public final class ScheduleCheckProgram {
    private static final List<BiFunction<Comm, Tensor, Tensor>> EAGER = List.of(
            (c, x) -> c.rank() == 0 ? c.allreduce(x, ReduceOp.SUM)
                    : c.allreduce(Tensor.zeros(DType.F32, 100_000), ReduceOp.SUM),
            (c, x) -> c.allreduce(x, c.rank() == 0 ? ReduceOp.SUM : ReduceOp.MAX),
            (c, x) -> c.bcast(x, c.rank()),
            (c, x) -> c.rank() == 0 ? c.allreduce(x, ReduceOp.SUM) : c.bcast(x, 0),
            (c, x) -> {
                if (c.rank() == 0) {
                    c.barrier();
                }
                return c.allreduce(x, ReduceOp.SUM);
            });

    private ScheduleCheckProgram() {
    }

    @Compile
    static Tensor compiled(Comm c, Tensor x, int index) {
        return MismatchPrograms.CASES.get(index).program().apply(c, x);
    }

    /** An allreduce, compiled on rank 0 only by {@code mixed}. */
    @Compile
    static Tensor sum(Comm c, Tensor x) {
        return c.allreduce(x, ReduceOp.SUM);
    }

    public static void main(String[] args) {
        Comm world = Comm.world();
        if (args[0].equals("mixed")) {
            Tensor x = Tensor.of(new float[] {1, 2, 3, 4});
            Tensor y = world.rank() == 0 ? sum(world, x) : world.allreduce(x, ReduceOp.SUM);
            System.out.println("rank " + world.rank() + ": " + y);
            return;
        }
        boolean eager = args[0].equals("eager");
        int cases = eager ? EAGER.size() : MismatchPrograms.CASES.size();
        WeftException first = null;
        for (int i = 0; i < cases; i++) {
            Tensor x = Tensor.of(new float[] {1, 2, 3, 4});
            String name = eager ? "eager " + i : MismatchPrograms.CASES.get(i).name();
            try {
                Tensor unused = eager ? EAGER.get(i).apply(world, x) : compiled(world, x, i);
                System.out.println("rank " + world.rank() + ": " + name + ": no mismatch found, got " + unused);
            } catch (ScheduleMismatchException e) {
                System.out.println("rank " + world.rank() + ": " + name + ": " + e.getMessage());
                first = first == null ? e : first;
            }
        }
        System.out.flush();
        world.barrier();
        if (first != null) {
            throw first;
        }
    }
}
