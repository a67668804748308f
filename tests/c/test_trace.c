/* test_trace.c - device activity tracing (tocl/trace.h): copies, fills and
 * kernels are kept only between begin and end, with their kind, bytes,
 * stream and the correlation id on top of the thread's stack, and with
 * times on the host clock inside the span in which they ran. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tocl/factory.h"
#include "tocl/trace.h"
#include "tocl_test.h"

/* The marker calibration is good to an enqueue call's duration; allow for
 * a loaded machine. */
#define SLACK_NS 200000
#define TIGHT_NS 5000

static const tocl_trace_record *find(const tocl_trace_record *r, size_t n, tocl_trace_kind kind, uint64_t corr) {
    for (size_t i = 0; i < n; i++)
        if (r[i].kind == kind && r[i].corr == corr)
            return &r[i];
    return NULL;
}

static void test_copies_fills_kernels(void) {
    enum { N = 4096 };
    float *host = calloc(N, sizeof *host);
    tocl_addr a;
    CHECK_OK(tocl_mem_alloc(0, N * sizeof(float), &a));
    CHECK_OK(tocl_copy_h2d(0, 0, a, host, N * sizeof(float), 1)); /* before begin: not kept */
    CHECK_OK(tocl_device_sync(0));

    CHECK(!tocl_trace_active());
    CHECK_OK(tocl_trace_begin());
    CHECK(tocl_trace_active());
    CHECK_STATUS(tocl_trace_begin(), TOCL_E_INVALID); /* one trace at a time */
    int64_t t0 = tocl_trace_now_ns();
    tocl_trace_corr_push(11);
    CHECK_OK(tocl_copy_h2d(0, 0, a, host, N * sizeof(float), 1));
    tocl_trace_corr_push(12);
    float one = 1.0f;
    CHECK_OK(tocl_mem_fill(0, 0, a, &one, sizeof one, N * sizeof(float)));
    tocl_trace_corr_pop();
    tocl_tensor t = {.data = a, .dtype = TOCL_F32, .ndim = 1, .sizes = {N}, .strides = {1}};
    tocl_trace_corr_push(13);
    CHECK_OK(tocl_op_arange(0, 1, &t, (tocl_scalar){.is_float = 1, .f = 0}, (tocl_scalar){.is_float = 1, .f = 1}));
    CHECK_OK(tocl_stream_sync(0, 1));
    tocl_trace_corr_pop();
    CHECK(tocl_trace_corr_current() == 11);
    CHECK_OK(tocl_device_sync(0));
    int64_t r0 = tocl_trace_now_ns();
    CHECK_OK(tocl_copy_d2h(0, 0, host, a, N * sizeof(float), 1)); /* blocking: done on return */
    int64_t r1 = tocl_trace_now_ns();
    tocl_trace_corr_pop();
    CHECK(tocl_trace_corr_current() == 0);
    CHECK_OK(tocl_device_sync(0));
    int64_t t1 = tocl_trace_now_ns();
    CHECK_OK(tocl_trace_end());
    CHECK(!tocl_trace_active());
    CHECK_OK(tocl_copy_d2h(0, 0, host, a, 16, 1)); /* after end: not kept */

    tocl_trace_record *r = NULL;
    size_t n = 0;
    CHECK_OK(tocl_trace_collect(&r, &n));
    CHECK(n == 4);
    const tocl_trace_record *h2d = find(r, n, TOCL_TRACE_COPY_H2D, 11);
    const tocl_trace_record *fill = find(r, n, TOCL_TRACE_FILL, 12);
    const tocl_trace_record *k = find(r, n, TOCL_TRACE_KERNEL, 13);
    const tocl_trace_record *d2h = find(r, n, TOCL_TRACE_COPY_D2H, 11);
    CHECK(h2d && fill && k && d2h);
    if (h2d && fill && k && d2h) {
        CHECK(h2d->bytes == N * sizeof(float) && d2h->bytes == N * sizeof(float) && fill->bytes == N * sizeof(float));
        CHECK(k->bytes == 0 && k->stream == 1 && h2d->stream == 0 && k->dev == 0);
        CHECK(strncmp(k->name, "tocl_", 5) == 0);
        CHECK(strcmp(h2d->name, "Memcpy HtoD") == 0 && strcmp(fill->name, "Memset") == 0);
        CHECK(k->fused_ops == 1);
        for (size_t i = 0; i < n; i++) {
            CHECK(r[i].start_ns <= r[i].end_ns);
            CHECK(r[i].start_ns >= t0 - SLACK_NS && r[i].end_ns <= t1 + SLACK_NS);
        }
        /* A blocking read runs inside its call; the calibration is good to a
         * microsecond or so, the rest is scheduling on a busy machine. */
        CHECK(d2h->enqueue_start_ns >= r0 - TIGHT_NS && d2h->enqueue_end_ns <= r1 + TIGHT_NS);
        CHECK(d2h->start_ns >= r0 - TIGHT_NS && d2h->end_ns <= r1 + TIGHT_NS);
        CHECK(d2h->enqueue_start_ns <= d2h->enqueue_end_ns && d2h->host_thread != 0);
        /* One in-order queue: the copy ran before the fill, the fill before the read. */
        CHECK(h2d->end_ns <= fill->start_ns + SLACK_NS / 20);
        CHECK(fill->end_ns <= d2h->start_ns + SLACK_NS / 20);
    }
    tocl_trace_free(r);
    CHECK_OK(tocl_trace_collect(&r, &n)); /* handed over once */
    CHECK(n == 0 && r == NULL);
    CHECK_OK(tocl_mem_free(a));
    free(host);
}

static void test_stack_limits(void) {
    tocl_trace_corr_pop(); /* popping an empty stack is harmless */
    CHECK(tocl_trace_corr_current() == 0);
    for (int i = 1; i <= 100; i++)
        tocl_trace_corr_push((uint64_t)i);
    CHECK(tocl_trace_corr_current() == 64); /* deeper pushes keep the deepest within the limit */
    for (int i = 0; i < 100; i++)
        tocl_trace_corr_pop();
    CHECK(tocl_trace_corr_current() == 0);
    CHECK_STATUS(tocl_trace_collect(NULL, NULL), TOCL_E_INVALID);
}

int main(void) {
    CHECK_OK(tocl_init());
    if (tocl_device_count() < 1) {
        printf("no OpenCL device; skipped\n");
        TOCL_TEST_END();
    }
    test_copies_fills_kernels();
    test_stack_limits();
    TOCL_TEST_END();
}
