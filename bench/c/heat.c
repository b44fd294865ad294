/* Case 6 reference: the dev.weft.examples.Heat step (explicit 2-D diffusion, zero boundaries, rows split over
 * ranks, one halo row exchanged with each neighbour per step) on a ROWS x COLS f64 grid.
 * usage: mpirun -np P heat ROWS COLS STEPS REPS WARMUP; rank 0 prints seconds per step and the grid's sum. */
#include <math.h>
#include <mpi.h>
#include <string.h>
#include "timing.h"

#define ALPHA 0.1

/* u and v are (n+2) x (m+2), row-major, with a zero border; rows 1..n are this rank's. */
static void run(double **u, double **v, long n, long m, long steps, int rank, int size) {
    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    long w = m + 2;
    for (long s = 0; s < steps; s++) {
        double *a = *u, *b = *v;
        MPI_Sendrecv(a + w + 1, (int) m, MPI_DOUBLE, up, 0, a + (n + 1) * w + 1, (int) m, MPI_DOUBLE, down, 0,
                MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(a + n * w + 1, (int) m, MPI_DOUBLE, down, 1, a + 1, (int) m, MPI_DOUBLE, up, 1,
                MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (long i = 1; i <= n; i++) {
            const double *r = a + i * w;
            double *o = b + i * w;
            for (long j = 1; j <= m; j++) {
                double c = r[j];
                o[j] = c + (r[j - w] + r[j + w] + r[j - 1] + r[j + 1] - c * 4.0) * ALPHA;
            }
        }
        *u = b;
        *v = a;
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const char *usage = "ROWS COLS STEPS REPS WARMUP";
    long rows = arg_long(argc, argv, 1, usage), m = arg_long(argc, argv, 2, usage);
    long steps = arg_long(argc, argv, 3, usage), reps = arg_long(argc, argv, 4, usage);
    long warmup = arg_long(argc, argv, 5, usage);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rows % size != 0) {
        if (rank == 0) {
            fprintf(stderr, "%ld rows do not split over %d ranks\n", rows, size);
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long n = rows / size, first = rank * n, w = m + 2;
    size_t bytes = (size_t) (n + 2) * (size_t) w * sizeof(double);
    double *init = malloc(bytes), *u = malloc(bytes), *v = malloc(bytes);
    memset(init, 0, bytes);
    for (long i = 0; i < n; i++) {
        for (long j = 0; j < m; j++) {
            double y = (first + i + 0.5) / rows, x = (j + 0.5) / m;
            init[(i + 1) * w + j + 1] = exp(-40 * ((x - 0.3) * (x - 0.3) + (y - 0.6) * (y - 0.6)));
        }
    }
    for (long r = 0; r < warmup + reps; r++) {
        memcpy(u, init, bytes);
        memset(v, 0, bytes);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now_seconds();
        run(&u, &v, n, m, steps, rank, size);
        MPI_Barrier(MPI_COMM_WORLD);
        double t = (now_seconds() - t0) / (double) steps;
        if (rank == 0 && r >= warmup) {
            printf("sample %.9e\n", t);
        }
    }
    double local = 0, sum = 0;
    for (long i = 1; i <= n; i++) {
        for (long j = 1; j <= m; j++) {
            local += u[i * w + j];
        }
    }
    MPI_Reduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("check %.17g\n", sum);
    }
    free(init);
    free(u);
    free(v);
    MPI_Finalize();
    return 0;
}
