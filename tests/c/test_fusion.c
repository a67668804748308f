/* test_fusion.c - fused eager (runtime/fusion/defer.c) at the runtime level:
 * a chain of recorded ops becomes one kernel with the same bits as strict
 * mode; freed intermediates are not stored; float16 intermediates round as
 * their storage would; reads, syncs and other ops flush; an op reading a
 * value through a different layout is not merged with its producer; a
 * reduction computes the recorded op that produces its input, and that
 * op's freed result is never stored. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tocl/fusion.h"
#include "tocl/ops.h"
#include "tocl/reduce.h"
#include "tocl_test.h"

#define N 1000

static tocl_tensor vec(tocl_addr a, tocl_dtype dt, int64_t n) {
    tocl_tensor t;
    memset(&t, 0, sizeof t);
    t.data = a;
    t.dtype = dt;
    t.ndim = 1;
    t.sizes[0] = n;
    t.strides[0] = 1;
    return t;
}

static tocl_addr alloc_f32(const float *host, int64_t n) {
    tocl_addr a = 0;
    CHECK_OK(tocl_mem_alloc(0, (size_t)n * 4, &a));
    if (host)
        CHECK_OK(tocl_copy_h2d(0, 0, a, host, (size_t)n * 4, 1));
    return a;
}

/* out = op(in, scalar) as one recorded launch. */
static void scalar_op(tocl_ir_op op, tocl_addr out, tocl_addr in, tocl_dtype dt, double v) {
    tocl_ir_graph g;
    tocl_ir_init(&g);
    tocl_dtype c = tocl_dtype_compute(dt);
    int x = tocl_ir_input(&g, dt), s = tocl_ir_scalar(&g, c);
    tocl_ir_output(&g, tocl_ir_binary(&g, op, c, x, s), dt);
    tocl_tensor o = vec(out, dt, N), i = vec(in, dt, N);
    tocl_scalar sc = {1, v, 0};
    CHECK_OK(tocl_ew_run(0, 0, &g, &o, &i, &sc));
}

static void unary_op(tocl_ir_op op, tocl_addr out, tocl_addr in, tocl_dtype dt) {
    tocl_ir_graph g;
    tocl_ir_init(&g);
    int x = tocl_ir_input(&g, dt);
    tocl_ir_output(&g, tocl_ir_unary(&g, op, tocl_dtype_compute(dt), x), dt);
    tocl_tensor o = vec(out, dt, N), i = vec(in, dt, N);
    CHECK_OK(tocl_ew_run(0, 0, &g, &o, &i, NULL));
}

/* Ten ops x -> t1 -> ... -> y; intermediates freed as Python would. */
static void chain(tocl_addr x, tocl_addr y, tocl_dtype dt) {
    size_t es = tocl_dtype_size(dt);
    tocl_addr prev = x;
    for (int k = 0; k < 10; k++) {
        tocl_addr t = y;
        if (k < 9)
            CHECK_OK(tocl_mem_alloc(0, N * es, &t));
        if (k % 3 == 0)
            scalar_op(TOCL_IR_MUL, t, prev, dt, 1.0 + 0.1 * k);
        else if (k % 3 == 1)
            scalar_op(TOCL_IR_ADD, t, prev, dt, 0.37);
        else
            unary_op(k == 5 ? TOCL_IR_TANH : TOCL_IR_ABS, t, prev, dt);
        if (prev != x)
            CHECK_OK(tocl_mem_free(prev));
        prev = t;
    }
}

static void test_chain(tocl_dtype dt) {
    size_t es = tocl_dtype_size(dt);
    float host[N];
    for (int i = 0; i < N; i++)
        host[i] = (float)(i - N / 2) * 0.013f;
    tocl_addr xf = alloc_f32(host, N), x = xf;
    if (dt != TOCL_F32) { /* convert once, strictly */
        CHECK_OK(tocl_mem_alloc(0, N * es, &x));
        tocl_tensor o = vec(x, dt, N), i = vec(xf, TOCL_F32, N);
        CHECK_OK(tocl_op_copy(0, 0, &o, &i));
    }
    tocl_addr ys = 0, yf = 0;
    CHECK_OK(tocl_mem_alloc(0, N * es, &ys));
    CHECK_OK(tocl_mem_alloc(0, N * es, &yf));

    CHECK_OK(tocl_eager_mode_set(TOCL_EAGER_STRICT));
    chain(x, ys, dt);

    CHECK_OK(tocl_eager_mode_set(TOCL_EAGER_FUSED));
    tocl_fusion_set_sync_build(1);
    tocl_fusion_stats_reset();
    tocl_ew_stats e0, e1;
    tocl_ew_stats_get(&e0);
    chain(x, yf, dt);
    tocl_fusion_stats fs;
    tocl_fusion_stats_get(&fs);
    CHECK(fs.ops_recorded == 10);
    CHECK(fs.flushes == 0); /* nothing needed a value yet */
    unsigned char a[N * 8], b[N * 8];
    CHECK_OK(tocl_copy_d2h(0, 0, b, yf, N * es, 1)); /* a host read flushes */
    tocl_ew_stats_get(&e1);
    tocl_fusion_stats_get(&fs);
    CHECK(fs.flushes == 1);
    CHECK(fs.fused_launches == 1);
    CHECK(e1.launches - e0.launches == 1);
    CHECK(fs.intermediates_elided == 9);
    CHECK_OK(tocl_copy_d2h(0, 0, a, ys, N * es, 1));
    CHECK(memcmp(a, b, N * es) == 0); /* bit for bit as strict */
    tocl_fusion_set_sync_build(0);
    CHECK_OK(tocl_eager_mode_set(TOCL_EAGER_STRICT));
    tocl_mem_free(ys);
    tocl_mem_free(yf);
    if (x != xf)
        tocl_mem_free(x);
    tocl_mem_free(xf);
}

/* y = x * 2 recorded; then a reversed view of y is read: not the same
 * elements in the same order, so it must run after y is stored. */
static void test_reversed_reader(void) {
    float host[N], out[N];
    for (int i = 0; i < N; i++)
        host[i] = (float)i;
    tocl_addr x = alloc_f32(host, N), y = alloc_f32(NULL, N), z = alloc_f32(NULL, N);
    CHECK_OK(tocl_eager_mode_set(TOCL_EAGER_FUSED));
    tocl_fusion_set_sync_build(1);
    scalar_op(TOCL_IR_MUL, y, x, TOCL_F32, 2.0);
    tocl_ir_graph g;
    tocl_ir_init(&g);
    tocl_ir_output(&g, tocl_ir_binary(&g, TOCL_IR_ADD, TOCL_F32, tocl_ir_input(&g, TOCL_F32),
                                      tocl_ir_input(&g, TOCL_F32)), TOCL_F32);
    tocl_tensor o = vec(z, TOCL_F32, N), in[2] = {vec(y, TOCL_F32, N), vec(y + (N - 1) * 4, TOCL_F32, N)};
    in[1].strides[0] = -1; /* not allowed: strides are >= 0 */
    CHECK_STATUS(tocl_ew_run(0, 0, &g, &o, in, NULL), TOCL_E_INVALID);
    /* A shifted view instead: z[i] = y[i] + y[i + 1] for i < N - 1. */
    o.sizes[0] = N - 1;
    in[0].sizes[0] = N - 1;
    in[1] = vec(y + 4, TOCL_F32, N - 1);
    CHECK_OK(tocl_ew_run(0, 0, &g, &o, in, NULL));
    CHECK_OK(tocl_stream_sync(0, 0));
    CHECK_OK(tocl_copy_d2h(0, 0, out, z, (N - 1) * 4, 1));
    int ok = 1;
    for (int i = 0; i < N - 1; i++)
        ok &= out[i] == 2.0f * (float)i + 2.0f * (float)(i + 1);
    CHECK(ok);
    tocl_fusion_set_sync_build(0);
    CHECK_OK(tocl_eager_mode_set(TOCL_EAGER_STRICT));
    tocl_mem_free(x);
    tocl_mem_free(y);
    tocl_mem_free(z);
}

/* In place on a recorded result, then a raw memory fill of another tensor
 * (not an elementwise op) flushes before it runs; a dense tocl_op_fill is
 * recorded like an elementwise op in fused mode. */
static void test_inplace_and_flush_by_other_op(void) {
    float host[N], out[N];
    for (int i = 0; i < N; i++)
        host[i] = (float)i;
    tocl_addr x = alloc_f32(host, N), w = alloc_f32(NULL, N);
    CHECK_OK(tocl_eager_mode_set(TOCL_EAGER_FUSED));
    scalar_op(TOCL_IR_ADD, x, x, TOCL_F32, 1.0); /* x += 1 */
    scalar_op(TOCL_IR_MUL, x, x, TOCL_F32, 3.0); /* x *= 3 */
    tocl_fusion_stats fs0, fs1;
    tocl_fusion_stats_get(&fs0);
    tocl_tensor wt = vec(w, TOCL_F32, N);
    tocl_scalar one = {1, 1.0, 0};
    CHECK_OK(tocl_op_fill(0, 0, &wt, one));
    tocl_fusion_stats_get(&fs1);
    CHECK(fs1.flushes == fs0.flushes && fs1.ops_recorded == fs0.ops_recorded + 1);
    float onef = 1.0f;
    CHECK_OK(tocl_mem_fill(0, 0, w, &onef, sizeof onef, N * 4));
    tocl_fusion_stats_get(&fs1);
    CHECK(fs1.flushes == fs0.flushes + 1);
    CHECK_OK(tocl_copy_d2h(0, 0, out, x, N * 4, 1));
    int ok = 1;
    for (int i = 0; i < N; i++)
        ok &= out[i] == ((float)i + 1.0f) * 3.0f;
    CHECK(ok);
    CHECK_OK(tocl_eager_mode_set(TOCL_EAGER_STRICT));
    tocl_mem_free(x);
    tocl_mem_free(w);
}

/* A freed intermediate that a later group (another shape) reads is still
 * stored: y = x * 2; z[r][i] = y[i] + 1 over two rows; y freed. */
static void test_dead_but_read_later(void) {
    float host[N], out[2 * N];
    for (int i = 0; i < N; i++)
        host[i] = (float)i;
    tocl_addr x = alloc_f32(host, N), y = alloc_f32(NULL, N), z = alloc_f32(NULL, 2 * N);
    CHECK_OK(tocl_eager_mode_set(TOCL_EAGER_FUSED));
    scalar_op(TOCL_IR_MUL, y, x, TOCL_F32, 2.0);
    tocl_ir_graph g;
    tocl_ir_init(&g);
    int yi = tocl_ir_input(&g, TOCL_F32), s = tocl_ir_scalar(&g, TOCL_F32);
    tocl_ir_output(&g, tocl_ir_binary(&g, TOCL_IR_ADD, TOCL_F32, yi, s), TOCL_F32);
    tocl_tensor o = vec(z, TOCL_F32, N), in = vec(y, TOCL_F32, N);
    o.ndim = in.ndim = 2;
    o.sizes[0] = in.sizes[0] = 2;
    o.sizes[1] = in.sizes[1] = N;
    o.strides[0] = N;
    o.strides[1] = 1;
    in.strides[0] = 0;
    in.strides[1] = 1;
    tocl_scalar one = {1, 1.0, 0};
    CHECK_OK(tocl_ew_run(0, 0, &g, &o, &in, &one));
    CHECK_OK(tocl_mem_free(y));
    CHECK_OK(tocl_copy_d2h(0, 0, out, z, 2 * N * 4, 1));
    int ok = 1;
    for (int i = 0; i < 2 * N; i++)
        ok &= out[i] == 2.0f * (float)(i % N) + 1.0f;
    CHECK(ok);
    CHECK_OK(tocl_eager_mode_set(TOCL_EAGER_STRICT));
    tocl_mem_free(x);
    tocl_mem_free(z);
}

/* Without sync builds the first flush runs the ops separately and builds
 * the fused kernel in the background; once built, the same chain is one
 * kernel. */
static void test_background_build(void) {
    float host[N];
    for (int i = 0; i < N; i++)
        host[i] = (float)i * 0.01f;
    tocl_addr x = alloc_f32(host, N), y = alloc_f32(NULL, N);
    CHECK_OK(tocl_eager_mode_set(TOCL_EAGER_FUSED));
    tocl_ew_stats e0, e1;
    for (int round = 0; round < 2; round++) {
        tocl_ew_stats_get(&e0);
        /* a chain no other test builds: exp, then two scalar ops */
        tocl_addr t1 = alloc_f32(NULL, N), t2 = alloc_f32(NULL, N);
        unary_op(TOCL_IR_EXP, t1, x, TOCL_F32);
        scalar_op(TOCL_IR_SUB, t2, t1, TOCL_F32, 0.25);
        tocl_mem_free(t1);
        scalar_op(TOCL_IR_DIV, y, t2, TOCL_F32, 3.0);
        tocl_mem_free(t2);
        CHECK_OK(tocl_stream_sync(0, 0));
        tocl_ew_stats_get(&e1);
        CHECK(e1.launches - e0.launches == (round == 0 ? 3u : 1u));
        tocl_fusion_wait_builds();
    }
    CHECK_OK(tocl_eager_mode_set(TOCL_EAGER_STRICT));
    tocl_mem_free(x);
    tocl_mem_free(y);
}

/* t = x * 3 recorded, then sum(t) with fuse_producer: the reduction reads
 * x, t (freed after the sum) is never written, the sum is right. */
static void test_reduction_prologue(void) {
    float host[N];
    double want = 0;
    for (int i = 0; i < N; i++) {
        host[i] = (float)(i % 17) - 8.0f;
        want += 3.0 * host[i];
    }
    tocl_addr x = alloc_f32(host, N), t = alloc_f32(NULL, N), s = alloc_f32(NULL, 1);
    CHECK_OK(tocl_eager_mode_set(TOCL_EAGER_FUSED));
    tocl_fusion_set_sync_build(1);
    tocl_fusion_stats_reset();
    scalar_op(TOCL_IR_MUL, t, x, TOCL_F32, 3.0);
    tocl_reduce_desc d = {TOCL_REDUCE_SUM, TOCL_F32, TOCL_REDUCE_MAP_NONE, TOCL_REDUCE_FINAL_NONE, 0, 0, NULL, 1};
    tocl_tensor out = vec(s, TOCL_F32, 1), in = vec(t, TOCL_F32, N);
    out.strides[0] = 0;
    CHECK_OK(tocl_reduce_run(0, 0, &d, 1, &out, 1, &in, NULL));
    CHECK_OK(tocl_mem_free(t)); /* the temporary dies */
    float got = 0;
    CHECK_OK(tocl_copy_d2h(0, 0, &got, s, 4, 1));
    tocl_fusion_stats fs;
    tocl_fusion_stats_get(&fs);
    CHECK(fs.reductions_fused == 1);
    CHECK(fs.kernels_launched == 0); /* the multiply ran inside the reduction only */
    CHECK(fabs(got - want) < 1e-3);
    tocl_fusion_set_sync_build(0);
    CHECK_OK(tocl_eager_mode_set(TOCL_EAGER_STRICT));
    tocl_mem_free(s);
    tocl_mem_free(x);
}

/* A reduction long enough to split its row over several work-groups,
 * whose prologue reads a dead input: t = x * 3 recorded, x freed, sum(t).
 * The partials' scratch must not be carved from x's memory (the allocator
 * has it free) while the reduction still reads x. */
static void test_reduction_prologue_dead_input_split(void) {
    enum { BIG = 1 << 18 };
    float *host = malloc(BIG * sizeof *host);
    CHECK(host != NULL);
    if (!host)
        return;
    for (int i = 0; i < BIG; i++)
        host[i] = 1.0f;
    tocl_addr x = 0, t = 0, s = 0;
    CHECK_OK(tocl_mem_alloc(0, BIG * 4, &x));
    CHECK_OK(tocl_mem_alloc(0, BIG * 4, &t));
    CHECK_OK(tocl_mem_alloc(0, 4, &s));
    CHECK_OK(tocl_copy_h2d(0, 0, x, host, BIG * 4, 1));
    free(host);
    CHECK_OK(tocl_eager_mode_set(TOCL_EAGER_FUSED));
    tocl_fusion_set_sync_build(1);
    tocl_fusion_stats_reset();
    tocl_ir_graph g;
    tocl_ir_init(&g);
    int xi = tocl_ir_input(&g, TOCL_F32), sc = tocl_ir_scalar(&g, TOCL_F32);
    tocl_ir_output(&g, tocl_ir_binary(&g, TOCL_IR_MUL, TOCL_F32, xi, sc), TOCL_F32);
    tocl_tensor to = vec(t, TOCL_F32, BIG), xv = vec(x, TOCL_F32, BIG);
    tocl_scalar three = {1, 3.0, 0};
    CHECK_OK(tocl_ew_run(0, 0, &g, &to, &xv, &three));
    CHECK_OK(tocl_mem_free(x)); /* the group's input dies before the reduction */
    tocl_reduce_desc d = {TOCL_REDUCE_SUM, TOCL_F32, TOCL_REDUCE_MAP_NONE, TOCL_REDUCE_FINAL_NONE, 0, 0, NULL, 1};
    tocl_tensor out = vec(s, TOCL_F32, 1), in = vec(t, TOCL_F32, BIG);
    out.strides[0] = 0;
    CHECK_OK(tocl_reduce_run(0, 0, &d, 1, &out, 1, &in, NULL));
    CHECK_OK(tocl_mem_free(t));
    float got = 0;
    CHECK_OK(tocl_copy_d2h(0, 0, &got, s, 4, 1));
    tocl_fusion_stats fs;
    tocl_fusion_stats_get(&fs);
    CHECK(fs.reductions_fused == 1);
    CHECK(got == 3.0f * BIG);
    tocl_fusion_set_sync_build(0);
    CHECK_OK(tocl_eager_mode_set(TOCL_EAGER_STRICT));
    tocl_mem_free(s);
}

int main(void) {
    if (tocl_device_count() < 1) {
        printf("no OpenCL device: skipped\n");
        return 0;
    }
    test_chain(TOCL_F32);
    test_chain(TOCL_F16);
    test_chain(TOCL_BF16);
    test_reversed_reader();
    test_inplace_and_flush_by_other_op();
    test_dead_but_read_later();
    test_background_build();
    test_reduction_prologue();
    test_reduction_prologue_dead_input_split();
    tocl_fusion_wait_builds();
    TOCL_TEST_END();
}
