/* Case 5 reference: ITERS calls of MPI_Allreduce(SUM) of COUNT f32 values, rank r contributing r+1.
 * usage: mpirun -np P allreduce COUNT ITERS REPS WARMUP; rank 0 prints seconds per allreduce and the sum of
 * the result. Also built as a shared library: the Weft program calls allreduce_seconds through FFM to time C and
 * Weft alternately in one MPI job (see AllreduceBench). */
#include <mpi.h>
#include "timing.h"

/* Seconds per allreduce of ITERS allreduces, the ranks having entered together. */
double allreduce_seconds(const float *in, float *out, int count, long iters) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_seconds();
    for (long i = 0; i < iters; i++) {
        MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    return (now_seconds() - t0) / (double) iters;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const char *usage = "COUNT ITERS REPS WARMUP";
    int count = (int) arg_long(argc, argv, 1, usage);
    long iters = arg_long(argc, argv, 2, usage), reps = arg_long(argc, argv, 3, usage);
    long warmup = arg_long(argc, argv, 4, usage);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    float *in = malloc(count * sizeof(float)), *out = malloc(count * sizeof(float));
    for (int i = 0; i < count; i++) {
        in[i] = (float) (rank + 1);
    }
    for (long r = 0; r < warmup; r++) {
        allreduce_seconds(in, out, count, iters);
    }
    for (long r = 0; r < reps; r++) {
        double t = allreduce_seconds(in, out, count, iters);
        if (rank == 0) {
            printf("sample %.9e\n", t);
        }
    }
    double sum = 0;
    for (int i = 0; i < count; i++) {
        sum += out[i];
    }
    if (rank == 0) {
        printf("check %.17g\n", sum);
    }
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
