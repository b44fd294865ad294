/* Case 1 reference: y = |sin(x*2+1)*x - 0.5| over n f32 values, one fused loop, one thread.
 * usage: chain N REPS WARMUP; prints seconds per pass and the f64 sum of y. */
#include <math.h>
#include "timing.h"

static void chain(const float *restrict x, float *restrict y, long n) {
    for (long i = 0; i < n; i++) {
        float v = sinf(x[i] * 2.0f + 1.0f) * x[i];
        y[i] = fabsf(v - 0.5f);
    }
}

int main(int argc, char **argv) {
    const char *usage = "N REPS WARMUP";
    long n = arg_long(argc, argv, 1, usage), reps = arg_long(argc, argv, 2, usage);
    long warmup = arg_long(argc, argv, 3, usage);
    float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
    for (long i = 0; i < n; i++) {
        x[i] = (float) ((double) (i % 1000) * 0.001 - 0.5);
    }
    for (long r = 0; r < warmup; r++) {
        chain(x, y, n);
    }
    for (long r = 0; r < reps; r++) {
        double t0 = now_seconds();
        chain(x, y, n);
        printf("sample %.9e\n", now_seconds() - t0);
    }
    double sum = 0;
    for (long i = 0; i < n; i++) {
        sum += y[i];
    }
    printf("check %.17g\n", sum);
    free(x);
    free(y);
    return 0;
}
