package dev.weft.bench.weft;

import dev.weft.Tensor;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;

/**
 * The routines of {@code bin/weft bench osu}: each a {@link Comm} call on {@code count} f32 values per rank (the
 * OSU micro-benchmarks' message size) and the MPI call of {@code bench/c/osu.c} it is compared with, which has a
 * case of the same {@link #cName}. Roots are rank 0, reductions SUM, {@code sendrecv} sends to rank r+1 and
 * receives from rank r-1. Adding a routine is a constant here and a case in {@code osu.c}.
 */
public enum OsuRoutine {
    ALLREDUCE("allreduce", false) {
        @Override
        Tensor apply(Comm comm, Tensor x) {
            return comm.allreduce(x, ReduceOp.SUM);
        }
    },
    BCAST("bcast", false) {
        @Override
        Tensor apply(Comm comm, Tensor x) {
            return comm.bcast(x, 0);
        }
    },
    ALLGATHER("allgather", false) {
        @Override
        Tensor apply(Comm comm, Tensor x) {
            return comm.allgather(x);
        }

        @Override
        long resultCount(long count, int rank, int size) {
            return count * size;
        }
    },
    ALLTOALL("alltoall", true) {
        @Override
        Tensor apply(Comm comm, Tensor x) {
            return comm.alltoall(x);
        }

        @Override
        long resultCount(long count, int rank, int size) {
            return count * size;
        }
    },
    GATHER("gather", false) {
        @Override
        Tensor apply(Comm comm, Tensor x) {
            return comm.gather(x, 0);
        }

        @Override
        long resultCount(long count, int rank, int size) {
            return rank == 0 ? count * size : 0;
        }
    },
    SCATTER("scatter", true) {
        @Override
        Tensor apply(Comm comm, Tensor x) {
            return comm.scatter(x, 0);
        }
    },
    SCAN("scan", false) {
        @Override
        Tensor apply(Comm comm, Tensor x) {
            return comm.scan(x, ReduceOp.SUM);
        }
    },
    SENDRECV("sendrecv", false) {
        @Override
        Tensor apply(Comm comm, Tensor x) {
            int size = comm.size();
            return comm.sendrecv(x, (comm.rank() + 1) % size, (comm.rank() + size - 1) % size, 0);
        }
    },
    /** A nonblocking allreduce waited at once: what a start and its wait cost beyond the blocking call. */
    IALLREDUCE("iallreduce", false) {
        @Override
        Tensor apply(Comm comm, Tensor x) {
            return comm.wait(comm.iallreduce(x, ReduceOp.SUM));
        }
    };

    private final String cName;
    private final boolean inputPerRank;

    OsuRoutine(String cName, boolean inputPerRank) {
        this.cName = cName;
        this.inputPerRank = inputPerRank;
    }

    /** The routine's name on the command line, in the table and in {@code osu.c}. */
    public String cName() {
        return cName;
    }

    /** The routine by its {@link #cName}. */
    public static OsuRoutine of(String name) {
        for (OsuRoutine r : values()) {
            if (r.cName.equals(name)) {
                return r;
            }
        }
        throw new IllegalArgumentException("unknown routine " + name);
    }

    /** The call on this rank's input, as a user writes it. */
    abstract Tensor apply(Comm comm, Tensor x);

    /** The f32 values of a rank's input: {@code count}, or {@code count} per rank for alltoall and scatter. */
    long inputCount(long count, int size) {
        return inputPerRank ? count * size : count;
    }

    /** The f32 values of rank {@code rank}'s result. */
    long resultCount(long count, int rank, int size) {
        return count;
    }
}
