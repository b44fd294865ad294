/* Case 1 reference: y = |sin(x*2+1)*x - 0.5| over n f32 values, one fused loop, one thread.
 * usage: chain N REPS WARMUP; prints seconds per pass and the f64 sum of y. */
#include <math.h>
#include "passes.h"

static void chain(const float *restrict x, float *restrict y, long n) {
    for (long i = 0; i < n; i++) {
        float v = sinf(x[i] * 2.0f + 1.0f) * x[i];
        y[i] = fabsf(v - 0.5f);
    }
}

int main(int argc, char **argv) {
    return run_passes(argc, argv, chain, "check");
}
