/* bin/weft bench osu reference, built as a shared library only: OsuBench calls osu_seconds through FFM to time
 * C and Weft in turn in one MPI job, on the input it gives both, and checks C's result against Weft's. */
#include <mpi.h>
#include <string.h>
#include "timing.h"

/* Seconds per call of ITERS calls of ROUTINE (allreduce bcast allgather alltoall gather scatter scan sendrecv
 * iallreduce: root 0, SUM, iallreduce an MPI_Iallreduce waited at once, sendrecv to rank r+1 and from rank r-1)
 * on COUNT f32 values per rank (the OSU micro-benchmarks' message size: what each rank sends; alltoall: to each
 * rank; scatter: what each rank gets) from in into out, the ranks having entered together; -1 for an unknown
 * routine. bcast sends the root's in, copied into out before the clock starts. */
double osu_seconds(const char *routine, float *in, float *out, int count, long iters) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    int kind = strcmp(routine, "allreduce") == 0 ? 0 : strcmp(routine, "bcast") == 0 ? 1
            : strcmp(routine, "allgather") == 0 ? 2 : strcmp(routine, "alltoall") == 0 ? 3
            : strcmp(routine, "gather") == 0 ? 4 : strcmp(routine, "scatter") == 0 ? 5
            : strcmp(routine, "scan") == 0 ? 6 : strcmp(routine, "sendrecv") == 0 ? 7
            : strcmp(routine, "iallreduce") == 0 ? 8 : -1;
    if (kind < 0) {
        return -1;
    }
    if (kind == 1 && rank == 0) {
        memcpy(out, in, (size_t) count * sizeof(float));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_seconds();
    for (long i = 0; i < iters; i++) {
        switch (kind) {
            case 0: MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
            case 1: MPI_Bcast(out, count, MPI_FLOAT, 0, MPI_COMM_WORLD); break;
            case 2: MPI_Allgather(in, count, MPI_FLOAT, out, count, MPI_FLOAT, MPI_COMM_WORLD); break;
            case 3: MPI_Alltoall(in, count, MPI_FLOAT, out, count, MPI_FLOAT, MPI_COMM_WORLD); break;
            case 4: MPI_Gather(in, count, MPI_FLOAT, out, count, MPI_FLOAT, 0, MPI_COMM_WORLD); break;
            case 5: MPI_Scatter(in, count, MPI_FLOAT, out, count, MPI_FLOAT, 0, MPI_COMM_WORLD); break;
            case 6: MPI_Scan(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
            case 7: MPI_Sendrecv(in, count, MPI_FLOAT, to, 0, out, count, MPI_FLOAT, from, 0, MPI_COMM_WORLD,
                                 MPI_STATUS_IGNORE); break;
            default: {
                MPI_Request request;
                MPI_Iallreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request);
                MPI_Wait(&request, MPI_STATUS_IGNORE);
                break;
            }
        }
    }
    return (now_seconds() - t0) / (double) iters;
}
