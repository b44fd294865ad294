/* Case 11 reference: OverlapBench's two steps in C. The overlapped step starts MPI_Iallreduce(SUM) of COUNT f32
 * values, computes MATMULS chained products of an N x N matrix (OpenBLAS sgemm, one thread per rank, as Weft sizes
 * it) testing the request after each (MPI_Test), then waits; the blocking step calls MPI_Allreduce before the same
 * products. Both take turns in every repetition, as in OverlapBench, so their ratio shows what overlap this MPI
 * gets on this machine. usage: mpirun -np P overlap COUNT N MATMULS REPS WARMUP; rank 0 prints the overlapped
 * step's seconds ("sample") and the blocking step's ("[blocking] sample"). */
#include <dlfcn.h>
#include <mpi.h>
#include "timing.h"

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *, int, float,
                         float *, int);
enum { ROW_MAJOR = 101, NO_TRANS = 111 };

static sgemm_fn sgemm;

/* The product chain p = p a / n, MATMULS times, testing the request (if any) after each product. */
static float products(const float *a, float *p, float *q, int n, int matmuls, MPI_Request *request) {
    for (int i = 0; i < n * n; i++) {
        p[i] = a[i];
    }
    for (int m = 0; m < matmuls; m++) {
        sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, n, n, n, 1.0f / (float) n, p, n, a, n, 0.0f, q, n);
        float *t = p;
        p = q;
        q = t;
        if (request != NULL) {
            int done;
            MPI_Test(request, &done, MPI_STATUS_IGNORE);
        }
    }
    return p[0];
}

static double step(const float *grad, float *sum, int count, const float *a, float *p, float *q, int n,
                   int matmuls, int overlapped) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_seconds();
    if (overlapped) {
        MPI_Request request;
        MPI_Iallreduce(grad, sum, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request);
        products(a, p, q, n, matmuls, &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
    } else {
        MPI_Allreduce(grad, sum, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        products(a, p, q, n, matmuls, NULL);
    }
    return now_seconds() - t0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const char *usage = "COUNT N MATMULS REPS WARMUP";
    int count = (int) arg_long(argc, argv, 1, usage), n = (int) arg_long(argc, argv, 2, usage);
    int matmuls = (int) arg_long(argc, argv, 3, usage);
    long reps = arg_long(argc, argv, 4, usage), warmup = arg_long(argc, argv, 5, usage);
    void *blas = dlopen("libopenblas.so.0", RTLD_NOW);
    sgemm = blas == NULL ? NULL : (sgemm_fn) dlsym(blas, "cblas_sgemm");
    if (sgemm == NULL) {
        fprintf(stderr, "overlap: cannot load cblas_sgemm from libopenblas.so.0 (Debian: apt-get install "
                        "libopenblas0)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    void (*threads)(int) = (void (*)(int)) dlsym(blas, "openblas_set_num_threads");
    if (threads != NULL) {
        threads(1);
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    float *grad = malloc(count * sizeof(float)), *sum = malloc(count * sizeof(float));
    float *a = malloc((size_t) n * n * sizeof(float)), *p = malloc((size_t) n * n * sizeof(float));
    float *q = malloc((size_t) n * n * sizeof(float));
    for (int i = 0; i < count; i++) {
        grad[i] = (float) (rank + 1);
    }
    for (int i = 0; i < n * n; i++) {
        a[i] = (float) i / ((float) n * (float) n);
    }
    for (long r = 0; r < warmup + reps; r++) {
        /* the two ways take turns going first */
        int swap = r % 2 == 1;
        double blocking = swap ? step(grad, sum, count, a, p, q, n, matmuls, 0) : 0;
        double overlapped = step(grad, sum, count, a, p, q, n, matmuls, 1);
        if (!swap) {
            blocking = step(grad, sum, count, a, p, q, n, matmuls, 0);
        }
        if (r >= warmup && rank == 0) {
            printf("sample %.9e\n[blocking] sample %.9e\n", overlapped, blocking);
        }
    }
    double total = 0;
    for (int i = 0; i < count; i++) {
        total += sum[i];
    }
    if (rank == 0) {
        printf("check %.17g\n[blocking] check %.17g\n", total, total);
    }
    MPI_Finalize();
    return 0;
}
