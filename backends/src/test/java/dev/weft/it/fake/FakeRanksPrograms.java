package dev.weft.it.fake;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import java.util.ArrayList;
import java.util.List;

/**
 * Programs that {@link FakeRanksTest} runs on fake ranks through {@link dev.weft.backends.cli.FakeRanks}, one JVM
 * each.
 */
public final class FakeRanksPrograms {
    private FakeRanksPrograms() {
    }

    /** Rank 1 calls {@code System.exit(0)} while rank 0 waits for a message from it. */
    public static final class ExitWhileAnotherRankRuns {
        public static void main(String[] args) {
            Comm world = Comm.world();
            if (world.rank() == 0) {
                world.recv(DType.I32, new long[] {1}, 1, 0);
            } else {
                System.exit(0);
            }
        }
    }

    /** Every rank calls {@code System.exit(0)} after a barrier, as MPI programs may end. */
    public static final class EveryRankExits {
        public static void main(String[] args) {
            Comm.world().barrier();
            System.exit(0);
        }
    }

    /**
     * {@code System.exit(3)} inside a custom reduce op: the last rank to join the allreduce runs it, while the
     * other waits in the allreduce for its result.
     */
    public static final class ExitInCustomReduceOp {
        public static void main(String[] args) {
            ReduceOp quit = ReduceOp.custom("quit", (a, b) -> {
                System.exit(3);
                return a;
            });
            Comm.world().allreduce(Tensor.ones(DType.F32, 4), quit);
        }
    }

    /** Rank 1 fills the heap while rank 0 waits for it in an allreduce. */
    public static final class HeapHog {
        public static void main(String[] args) {
            Comm world = Comm.world();
            if (world.rank() == 1) {
                List<long[]> hog = new ArrayList<>();
                while (hog.size() >= 0) {
                    hog.add(new long[1 << 16]);
                }
            }
            world.allreduce(Tensor.ones(DType.F64, 1), ReduceOp.SUM);
        }
    }

    /** Rank 0 starts a million sends to rank 1 and waits for none of them. */
    public static final class TooManyRequests {
        public static void main(String[] args) {
            Comm world = Comm.world();
            if (world.rank() == 0) {
                Tensor x = Tensor.ones(DType.F32, 1);
                for (int i = 0; i < 1_000_000; i++) {
                    world.isend(x, 1, 0);
                }
            }
        }
    }

    /** Rank 0 starts five sends that rank 1 receives, and waits for none of them. */
    public static final class NeverWaited {
        public static void main(String[] args) {
            Comm world = Comm.world();
            for (int i = 0; i < 5; i++) {
                if (world.rank() == 0) {
                    world.isend(Tensor.of(new int[] {i}), 1, 0);
                } else {
                    world.recv(DType.I32, new long[] {1}, 0, 0);
                }
            }
        }
    }

    /** The last rank running calls {@code System.exit(3)}. */
    public static final class ExitAlone {
        public static void main(String[] args) {
            System.exit(3);
        }
    }

    /** Rank 1 throws from a method of its own while rank 0 waits for a message from it. */
    public static final class RankThrows {
        public static void main(String[] args) {
            Comm world = Comm.world();
            if (world.rank() == 0) {
                world.recv(DType.I32, new long[] {1}, 1, 0);
            } else {
                computeSomething();
            }
        }

        private static void computeSomething() {
            throw new IllegalStateException("rank 1 gave up");
        }
    }
}
