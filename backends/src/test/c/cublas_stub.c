/*
 * A stand-in for libcublas.so.12 (or .13) with the signatures of cuBLAS's cublas_api.h (the _v2 entry points):
 * records each call (see stub_log.h) and succeeds unless a failure was injected. Pointers print as unsigned
 * decimals, scalars as their values (cuBLAS's default host pointer mode).
 */
#include "stub_log.h"
#include <stdint.h>

typedef void *cublasHandle_t;
typedef void *cudaStream_t;

static int stub_handle;

int cublasCreate_v2(cublasHandle_t *handle) {
    stub_record("cublasCreate_v2");
    *handle = &stub_handle;
    return stub_result("cublasCreate_v2");
}

int cublasDestroy_v2(cublasHandle_t handle) {
    stub_record("cublasDestroy_v2 ok=%d", handle == &stub_handle);
    return stub_result("cublasDestroy_v2");
}

int cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
    stub_record("cublasSetStream_v2 ok=%d stream=%lu", handle == &stub_handle, (uintptr_t) stream);
    return stub_result("cublasSetStream_v2");
}

int cublasSgemm_v2(cublasHandle_t handle, int transa, int transb, int m, int n, int k, const float *alpha,
                   const float *a, int lda, const float *b, int ldb, const float *beta, float *c, int ldc) {
    stub_record("cublasSgemm_v2 ok=%d transa=%d transb=%d m=%d n=%d k=%d alpha=%g A=%lu lda=%d B=%lu ldb=%d"
                " beta=%g C=%lu ldc=%d", handle == &stub_handle, transa, transb, m, n, k, *alpha, (uintptr_t) a,
                lda, (uintptr_t) b, ldb, *beta, (uintptr_t) c, ldc);
    return stub_result("cublasSgemm_v2");
}

int cublasDgemm_v2(cublasHandle_t handle, int transa, int transb, int m, int n, int k, const double *alpha,
                   const double *a, int lda, const double *b, int ldb, const double *beta, double *c, int ldc) {
    stub_record("cublasDgemm_v2 ok=%d transa=%d transb=%d m=%d n=%d k=%d alpha=%g A=%lu lda=%d B=%lu ldb=%d"
                " beta=%g C=%lu ldc=%d", handle == &stub_handle, transa, transb, m, n, k, *alpha, (uintptr_t) a,
                lda, (uintptr_t) b, ldb, *beta, (uintptr_t) c, ldc);
    return stub_result("cublasDgemm_v2");
}

int cublasSgemmStridedBatched(cublasHandle_t handle, int transa, int transb, int m, int n, int k,
                              const float *alpha, const float *a, int lda, long long stride_a, const float *b,
                              int ldb, long long stride_b, const float *beta, float *c, int ldc, long long stride_c,
                              int batch) {
    stub_record("cublasSgemmStridedBatched ok=%d transa=%d transb=%d m=%d n=%d k=%d alpha=%g A=%lu lda=%d"
                " strideA=%lld B=%lu ldb=%d strideB=%lld beta=%g C=%lu ldc=%d strideC=%lld batch=%d",
                handle == &stub_handle, transa, transb, m, n, k, *alpha, (uintptr_t) a, lda, stride_a,
                (uintptr_t) b, ldb, stride_b, *beta, (uintptr_t) c, ldc, stride_c, batch);
    return stub_result("cublasSgemmStridedBatched");
}

int cublasDgemmStridedBatched(cublasHandle_t handle, int transa, int transb, int m, int n, int k,
                              const double *alpha, const double *a, int lda, long long stride_a, const double *b,
                              int ldb, long long stride_b, const double *beta, double *c, int ldc,
                              long long stride_c, int batch) {
    stub_record("cublasDgemmStridedBatched ok=%d transa=%d transb=%d m=%d n=%d k=%d alpha=%g A=%lu lda=%d"
                " strideA=%lld B=%lu ldb=%d strideB=%lld beta=%g C=%lu ldc=%d strideC=%lld batch=%d",
                handle == &stub_handle, transa, transb, m, n, k, *alpha, (uintptr_t) a, lda, stride_a,
                (uintptr_t) b, ldb, stride_b, *beta, (uintptr_t) c, ldc, stride_c, batch);
    return stub_result("cublasDgemmStridedBatched");
}
