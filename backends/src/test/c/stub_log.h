/*
 * Call recording shared by the NCCL and cuBLAS stubs that the GPU binding tests load instead of the real
 * libraries. Every call appends one line to a per-thread log (each fake rank is a thread), and a test can make
 * the next call of one function return an error code.
 */
#ifndef WEFT_STUB_LOG_H
#define WEFT_STUB_LOG_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define STUB_LOG_BYTES (1 << 16)

static __thread char stub_log[STUB_LOG_BYTES];
static __thread size_t stub_log_len;
static __thread char stub_fail_name[64];
static __thread int stub_fail_code;

static void stub_record(const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(stub_log + stub_log_len, STUB_LOG_BYTES - stub_log_len - 1, fmt, args);
    va_end(args);
    if (n > 0 && stub_log_len + (size_t) n + 1 < STUB_LOG_BYTES) {
        stub_log_len += (size_t) n;
        stub_log[stub_log_len++] = '\n';
        stub_log[stub_log_len] = '\0';
    }
}

/* The code the function `name` returns now: the injected failure once, else 0 (success). */
static int stub_result(const char *name) {
    if (stub_fail_code != 0 && strcmp(name, stub_fail_name) == 0) {
        int code = stub_fail_code;
        stub_fail_code = 0;
        return code;
    }
    return 0;
}

/* Copies this thread's log (NUL-terminated, truncated to cap) into buf; returns its full length. */
size_t stub_calls(char *buf, size_t cap) {
    if (cap > 0) {
        size_t n = stub_log_len < cap - 1 ? stub_log_len : cap - 1;
        memcpy(buf, stub_log, n);
        buf[n] = '\0';
    }
    return stub_log_len;
}

/* Clears this thread's log and any pending failure. */
void stub_reset(void) {
    stub_log_len = 0;
    stub_log[0] = '\0';
    stub_fail_code = 0;
}

/* Makes the next call of `name` on this thread return `code`. */
void stub_fail(const char *name, int code) {
    snprintf(stub_fail_name, sizeof stub_fail_name, "%s", name);
    stub_fail_code = code;
}

#endif
