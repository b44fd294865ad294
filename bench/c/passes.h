/* Shared by the C references that time a pass y = f(x) over n f32 values (chain, stream): the input both use,
 * warm-up and timed passes printed as "sample <seconds>", then the f64 sum of y on the line "<label> <sum>". */
#ifndef WEFT_BENCH_PASSES_H
#define WEFT_BENCH_PASSES_H

#include "timing.h"

typedef void (*pass_fn)(const float *x, float *y, long n);

static inline int run_passes(int argc, char **argv, pass_fn pass, const char *sum_label) {
    const char *usage = "N REPS WARMUP";
    long n = arg_long(argc, argv, 1, usage), reps = arg_long(argc, argv, 2, usage);
    long warmup = arg_long(argc, argv, 3, usage);
    float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
    for (long i = 0; i < n; i++) {
        x[i] = (float) ((double) (i % 1000) * 0.001 - 0.5);
    }
    for (long r = 0; r < warmup; r++) {
        pass(x, y, n);
    }
    for (long r = 0; r < reps; r++) {
        double t0 = now_seconds();
        pass(x, y, n);
        printf("sample %.9e\n", now_seconds() - t0);
    }
    double sum = 0;
    for (long i = 0; i < n; i++) {
        sum += y[i];
    }
    printf("%s %.17g\n", sum_label, sum);
    free(x);
    free(y);
    return 0;
}

#endif
