package dev.weft.it.mpi;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.it.check.MismatchPrograms;
import dev.weft.it.check.ValidPrograms;
import java.util.Arrays;
import java.util.List;
import java.util.function.BiFunction;

/**
 * The schedule check under {@code mpirun}. {@code compiled}: runs every case of {@link MismatchPrograms} inside
 * {@code @Compile}, printing {@code rank R: <case>: <message>} for each mismatch, then rethrows the first, which
 * ends the job non-zero. {@code eager}: the same for eager operations that disagree (run it with {@code WEFT_CHECK=off}
 * too: collectives are still checked). No mismatched operation
 * runs (the check comes first), so the cases run one after another. {@code valid}: programs MPI accepts whose ranks
 * split their communication into compiled programs differently; each rank prints {@code rank R: valid <sums>}.
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
            },
            (c, x) -> c.rank() == 0 ? sent(c, x) : c.recv(DType.I32, new long[] {4}, 0, 5),
            (c, x) -> c.rank() == 0 ? sent(c, x) : c.recv(DType.F32, new long[] {3}, 0, 5),
            (c, x) -> c.rank() == 0 ? c.bcast(x, 0) : c.bcast(Tensor.zeros(DType.F32, 100_000), 0));

    private ScheduleCheckProgram() {
    }

    @Compile
    static Tensor compiled(Comm c, Tensor x, int index) {
        return MismatchPrograms.CASES.get(index).program().apply(c, x);
    }

    private static Tensor sent(Comm c, Tensor x) {
        c.send(x, 1, 5);
        return x;
    }

    public static void main(String[] args) {
        Comm world = Comm.world();
        if (args[0].equals("valid")) {
            System.out.println("rank " + world.rank() + ": valid " + valid(world));
            return;
        }
        boolean eager = args[0].equals("eager");
        int cases = eager ? EAGER.size() : MismatchPrograms.CASES.size();
        WeftException first = null;
        for (int i = 0; i < cases; i++) {
            Tensor x = Tensor.of(new float[] {1, 2, 3, 4});
            String name = eager ? "eager " + i : MismatchPrograms.CASES.get(i).name();
            int index = i;
            WeftException e = MismatchPrograms.outcome(world,
                    () -> (eager ? EAGER.get(index).apply(world, x) : compiled(world, x, index)).toFloatArray());
            System.out.println("rank " + world.rank() + ": " + name + ": " + (e == null ? "passed" : e.getMessage()));
            first = first == null ? e : first;
        }
        System.out.flush();
        world.barrier();
        if (first != null) {
            throw first;
        }
    }

    /**
     * The patterns of {@code ScheduleCheckTest}'s valid programs: compiled on rank 0 and eager elsewhere, two
     * allreduces in one program on rank 0 and in two elsewhere, a last batch of another shape on rank 0, a
     * send/recv program only ranks 0 and 1 call, a receive program per peer on rank 0.
     */
    private static String valid(Comm c) {
        Tensor x = Tensor.of(new float[] {1, 2, 3, 4});
        Tensor a = c.rank() == 0 ? ValidPrograms.sum(c, x) : c.allreduce(x, ReduceOp.SUM);
        Tensor b = c.rank() == 0 ? ValidPrograms.twoSums(c, x) : ValidPrograms.sum(c, ValidPrograms.sum(c, x));
        double last = 0;
        for (int batch = 0; batch < 3; batch++) {
            Tensor batchOnes = Tensor.ones(DType.F32, batch == 2 && c.rank() == 0 ? 5 : 4);
            last = ValidPrograms.total(c, batchOnes).item();
        }
        Tensor p = x;
        if (c.rank() == 0) {
            ValidPrograms.sendTo(c, x.mul(3), 1, 1);
        } else if (c.rank() == 1) {
            p = ValidPrograms.recvFrom(c, 0, 1);
        }
        double fromPeers = 0;
        if (c.rank() == 0) {
            for (int peer = 1; peer < c.size(); peer++) {
                fromPeers += ValidPrograms.recvFrom(c, peer, 10 + peer).sum().item();
            }
        } else {
            ValidPrograms.sendTo(c, x.mul(c.rank()), 0, 10 + c.rank());
        }
        c.barrier();
        return Arrays.toString(a.toFloatArray()) + " " + Arrays.toString(b.toFloatArray()) + " " + last + " "
                + Arrays.toString(p.toFloatArray()) + " " + fromPeers;
    }
}
