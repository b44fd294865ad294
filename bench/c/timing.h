/* Shared by the C references: a monotonic clock and the output protocol the bench driver reads
 * ("sample <seconds per unit>", "check <value>", "info <text>"). */
#ifndef WEFT_BENCH_TIMING_H
#define WEFT_BENCH_TIMING_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

static inline long arg_long(int argc, char **argv, int i, const char *usage) {
    if (i >= argc) {
        fprintf(stderr, "usage: %s %s\n", argv[0], usage);
        exit(2);
    }
    return atol(argv[i]);
}

#endif
