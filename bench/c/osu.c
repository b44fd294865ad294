/* bin/weft bench osu reference: ITERS calls of one MPI routine on COUNT f32 values per rank (the OSU
 * micro-benchmarks' message size: what each rank sends, and for alltoall and scatter what goes to each rank), on
 * buffers made once. Rank r's input, COUNT values (COUNT per rank for alltoall, and the root's COUNT per rank
 * for scatter): value i is r + 1 + (i % 16) / 16. ROUTINE is one of allreduce bcast allgather alltoall gather
 * scatter scan sendrecv (root 0, SUM, sendrecv to rank r+1 and from rank r-1).
 * usage: mpirun -np P osu ROUTINE COUNT ITERS REPS WARMUP; rank 0 prints seconds per call and, as the check, the
 * sum over the ranks of each rank's result (gather's: the root's only).
 * Also built as a shared library: OsuBench calls osu_seconds through FFM to time C and Weft in turn in one job. */
#include <mpi.h>
#include <string.h>
#include "timing.h"

/* Seconds per call of ITERS calls of ROUTINE from in into out (sizes as above), the ranks having entered
 * together; -1 for an unknown routine. bcast sends the root's in, copied into out before the clock starts. */
double osu_seconds(const char *routine, float *in, float *out, int count, long iters) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    int kind = strcmp(routine, "allreduce") == 0 ? 0 : strcmp(routine, "bcast") == 0 ? 1
            : strcmp(routine, "allgather") == 0 ? 2 : strcmp(routine, "alltoall") == 0 ? 3
            : strcmp(routine, "gather") == 0 ? 4 : strcmp(routine, "scatter") == 0 ? 5
            : strcmp(routine, "scan") == 0 ? 6 : strcmp(routine, "sendrecv") == 0 ? 7 : -1;
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
            default: MPI_Sendrecv(in, count, MPI_FLOAT, to, 0, out, count, MPI_FLOAT, from, 0, MPI_COMM_WORLD,
                                  MPI_STATUS_IGNORE); break;
        }
    }
    return (now_seconds() - t0) / (double) iters;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const char *usage = "ROUTINE COUNT ITERS REPS WARMUP";
    if (argc < 2) {
        fprintf(stderr, "usage: %s %s\n", argv[0], usage);
        return 2;
    }
    const char *routine = argv[1];
    int count = (int) arg_long(argc, argv, 2, usage);
    long iters = arg_long(argc, argv, 3, usage), reps = arg_long(argc, argv, 4, usage);
    long warmup = arg_long(argc, argv, 5, usage);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = (long) count * size;
    float *in = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
    for (long i = 0; i < n; i++) {
        in[i] = (float) (rank + 1) + (float) (i % 16) / 16.0f;
    }
    for (long r = 0; r < warmup + reps; r++) {
        double t = osu_seconds(routine, in, out, count, iters);
        if (t < 0) {
            fprintf(stderr, "osu: unknown routine %s\n", routine);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (rank == 0 && r >= warmup) {
            printf("sample %.9e\n", t);
        }
    }
    int whole = strcmp(routine, "allgather") == 0 || strcmp(routine, "alltoall") == 0;
    long results = whole ? n : strcmp(routine, "gather") == 0 ? (rank == 0 ? n : 0) : count;
    double sum = 0, total = 0;
    for (long i = 0; i < results; i++) {
        sum += out[i];
    }
    MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("check %.17g\n", total);
    }
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
