/* Case 8's bandwidth limit: the memory traffic of case 1's chain (read n f32 values, write n) and no arithmetic
 * beyond a scale, y = x * 0.5, split over two threads, output buffer reused: no loop over these arrays can be faster
 * on this machine's two cores. usage: stream N REPS WARMUP; prints seconds per pass and, as an info line,
 * the f64 sum of y (no check value: the chain's results differ). */
#include <pthread.h>
#include "passes.h"

#define THREADS 2

struct part {
    const float *x;
    float *y;
    long from, to;
};

static void *scale(void *arg) {
    struct part *p = arg;
    for (long i = p->from; i < p->to; i++) {
        p->y[i] = p->x[i] * 0.5f;
    }
    return NULL;
}

static void pass(const float *x, float *y, long n) {
    pthread_t t[THREADS];
    struct part parts[THREADS];
    for (int k = 0; k < THREADS; k++) {
        parts[k] = (struct part) {x, y, n * k / THREADS, n * (k + 1) / THREADS};
        if (pthread_create(&t[k], NULL, scale, &parts[k]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            exit(1);
        }
    }
    for (int k = 0; k < THREADS; k++) {
        pthread_join(t[k], NULL);
    }
}

int main(int argc, char **argv) {
    return run_passes(argc, argv, pass, "info sum of y");
}
