/* Case 5 reference: ITERS steps of MPI_Allreduce(SUM) of COUNT f32 values then a scale by 1/P (P ranks) back into
 * the input, rank r starting from r+1 (so every step after the first reduces P copies of (P+1)/2).
 * usage: mpirun -np P allreduce COUNT ITERS REPS WARMUP; rank 0 prints seconds per step and the sum of the
 * result. Also built as a shared library: the Weft program calls allreduce_seconds through FFM to time C and
 * Weft alternately in one MPI job (see AllreduceBench). */
#include <mpi.h>
#include "timing.h"

/* Seconds per step of ITERS steps (allreduce of in into out, then in = out * scale), the ranks having entered
 * together. */
double allreduce_seconds(float *in, float *out, int count, long iters, float scale) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_seconds();
    for (long i = 0; i < iters; i++) {
        MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        for (int j = 0; j < count; j++) {
            in[j] = out[j] * scale;
        }
    }
    return (now_seconds() - t0) / (double) iters;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const char *usage = "COUNT ITERS REPS WARMUP";
    int count = (int) arg_long(argc, argv, 1, usage);
    long iters = arg_long(argc, argv, 2, usage), reps = arg_long(argc, argv, 3, usage);
    long warmup = arg_long(argc, argv, 4, usage);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    float *in = malloc(count * sizeof(float)), *out = malloc(count * sizeof(float));
    for (int i = 0; i < count; i++) {
        in[i] = (float) (rank + 1);
    }
    float scale = 1.0f / (float) size;
    for (long r = 0; r < warmup; r++) {
        allreduce_seconds(in, out, count, iters, scale);
    }
    for (long r = 0; r < reps; r++) {
        double t = allreduce_seconds(in, out, count, iters, scale);
        if (rank == 0) {
            printf("sample %.9e\n", t);
        }
    }
    double sum = 0;
    for (int i = 0; i < count; i++) {
        sum += in[i];
    }
    if (rank == 0) {
        printf("check %.17g\n", sum);
    }
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
