/* trace_overhead.c - host cost per enqueue of the runtime's device trace
 * (tocl/trace.h), without PyTorch: 16-element arange kernels launched with
 * tracing off and on, timed on the calling thread's CPU clock (other
 * processes' load barely moves it), best of several turns.
 *
 *   cc -O2 -D_GNU_SOURCE -Iinclude -Iruntime bench/trace_overhead.c \
 *      build/<name>/libtocl_runtime.a build/<name>/libtocl_codegen.a -lOpenCL -lpthread -lm -o /tmp/trace_overhead
 *   /tmp/trace_overhead [launches]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "internal.h"
#include "tocl/factory.h"
#include "tocl/trace.h"

static double thread_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static double launches(const tocl_tensor *t, int n) {
    tocl_scalar zero = {.is_float = 1, .f = 0}, one = {.is_float = 1, .f = 1};
    double t0 = thread_us();
    for (int i = 0; i < n; i++)
        if (tocl_op_arange(0, 0, t, zero, one) != TOCL_OK) {
            fprintf(stderr, "launch failed: %s\n", tocl_last_error());
            exit(1);
        }
    double us = thread_us() - t0;
    tocl_device_sync(0);
    return us / n;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 10000;
    if (tocl_init() != TOCL_OK || tocl_device_count() < 1) {
        fprintf(stderr, "no OpenCL device\n");
        return 1;
    }
    tocl_addr a;
    tocl_mem_alloc(0, 16 * sizeof(float), &a);
    tocl_tensor t = {.data = a, .dtype = TOCL_F32, .ndim = 1, .sizes = {16}, .strides = {1}};
    launches(&t, 100); /* build the kernel */
    double off = 1e30, on = 1e30;
    for (int rep = 0; rep < 7; rep++) {
        double o = launches(&t, n);
        off = o < off ? o : off;
        tocl_trace_begin();
        tocl_trace_corr_push(1);
        double w = launches(&t, n);
        tocl_trace_corr_pop();
        tocl_trace_end();
        tocl_trace_record *r;
        size_t k;
        tocl_trace_collect(&r, &k);
        if (k != (size_t)n)
            fprintf(stderr, "expected %d records, got %zu\n", n, k);
        tocl_trace_free(r);
        on = w < on ? w : on;
    }
    printf("%d launches of a 16-element kernel, best of 7, host CPU us/launch: trace off %.2f, on %.2f (+%.2f)\n", n,
           off, on, on - off);
    tocl_mem_free(a);
    return 0;
}
