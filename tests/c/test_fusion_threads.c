/* test_fusion_threads.c - fused eager with two threads on one stream: a
 * reduction whose prologue reads a dead temporary (the recorded group's
 * input, freed before the reduction) must read it before another thread,
 * handed that memory by the allocator, queues a write to it. The reducer
 * checks every sum; the writer keeps allocating blocks of the same size and
 * filling them from the host. Also run under ThreadSanitizer (tsan-ci). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tocl/fusion.h"
#include "tocl/ops.h"
#include "tocl/reduce.h"
#include "tocl_test.h"

#define N 4096
#define ROUNDS 10000

static atomic_int g_stop, g_wrong, g_errors;

static tocl_tensor vec(tocl_addr a, int64_t n) {
    tocl_tensor t;
    memset(&t, 0, sizeof t);
    t.data = a;
    t.dtype = TOCL_F32;
    t.ndim = 1;
    t.sizes[0] = n;
    t.strides[0] = 1;
    return t;
}

static void note(tocl_status s) {
    if (s != TOCL_OK && atomic_fetch_add(&g_errors, 1) == 0)
        fprintf(stderr, "runtime call failed: %s\n", tocl_last_error());
}

/* out = in op v, recorded on stream 0. */
static void scalar_op(tocl_ir_op op, tocl_addr out, tocl_addr in, double v) {
    tocl_ir_graph g;
    tocl_ir_init(&g);
    int x = tocl_ir_input(&g, TOCL_F32), s = tocl_ir_scalar(&g, TOCL_F32);
    tocl_ir_output(&g, tocl_ir_binary(&g, op, TOCL_F32, x, s), TOCL_F32);
    tocl_tensor o = vec(out, N), i = vec(in, N);
    tocl_scalar sc = {1, v, 0};
    note(tocl_ew_run(0, 0, &g, &o, &i, &sc));
}

static tocl_addr alloc(void) {
    tocl_addr a = 0;
    note(tocl_mem_alloc(0, N * 4, &a));
    return a;
}

/* x holds 3; each round: xn = x * 1, x dies, t = xn + 0, sum(t) with the
 * group {mul, add} in its prologue (reading the dead x), t dies. */
static void *reducer(void *arg) {
    (void)arg;
    static float host[N];
    for (int i = 0; i < N; i++)
        host[i] = 3.0f;
    tocl_addr x = alloc(), s = 0;
    note(tocl_mem_alloc(0, 4, &s));
    note(tocl_copy_h2d(0, 0, x, host, N * 4, 1));
    tocl_reduce_desc d = {TOCL_REDUCE_SUM, TOCL_F32, TOCL_REDUCE_MAP_NONE, TOCL_REDUCE_FINAL_NONE, 0, 0, NULL, 1};
    for (int r = 0; r < ROUNDS && !atomic_load(&g_errors); r++) {
        tocl_addr xn = alloc(), t = alloc();
        scalar_op(TOCL_IR_MUL, xn, x, 1.0);
        note(tocl_mem_free(x)); /* the group's input is dead before the reduction */
        scalar_op(TOCL_IR_ADD, t, xn, 0.0);
        tocl_tensor out = vec(s, 1), in = vec(t, N);
        out.strides[0] = 0;
        note(tocl_reduce_run(0, 0, &d, 1, &out, 1, &in, NULL));
        note(tocl_mem_free(t));
        float got = 0;
        note(tocl_copy_d2h(0, 0, &got, s, 4, 1));
        if (got != 3.0f * N && atomic_fetch_add(&g_wrong, 1) == 0)
            fprintf(stderr, "round %d: sum %g, expected %g\n", r, (double)got, 3.0 * N);
        x = xn;
    }
    atomic_store(&g_stop, 1);
    note(tocl_mem_free(x));
    note(tocl_mem_free(s));
    return NULL;
}

/* Blocks of the reducer's size, written from the host on the same stream. */
static void *writer(void *arg) {
    (void)arg;
    static float junk[N];
    for (int i = 0; i < N; i++)
        junk[i] = 1000.0f;
    while (!atomic_load(&g_stop) && !atomic_load(&g_errors)) {
        tocl_addr b = alloc();
        note(tocl_copy_h2d(0, 0, b, junk, N * 4, 1));
        note(tocl_mem_free(b));
    }
    return NULL;
}

int main(void) {
    if (tocl_device_count() < 1) {
        printf("no OpenCL device: skipped\n");
        return 0;
    }
    CHECK_OK(tocl_eager_mode_set(TOCL_EAGER_FUSED));
    tocl_fusion_set_sync_build(1); /* the fused reduction from the first round */
    tocl_fusion_stats_reset();
    pthread_t a, b;
    CHECK(pthread_create(&a, NULL, reducer, NULL) == 0);
    CHECK(pthread_create(&b, NULL, writer, NULL) == 0);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    tocl_fusion_stats fs;
    tocl_fusion_stats_get(&fs);
    printf("%d rounds, %llu fused reductions, %d wrong sums\n", ROUNDS, (unsigned long long)fs.reductions_fused,
           atomic_load(&g_wrong));
    CHECK(atomic_load(&g_errors) == 0);
    CHECK(atomic_load(&g_wrong) == 0);
    CHECK(fs.reductions_fused > 0);
    tocl_fusion_set_sync_build(0);
    CHECK_OK(tocl_eager_mode_set(TOCL_EAGER_STRICT));
    tocl_fusion_wait_builds();
    TOCL_TEST_END();
}
