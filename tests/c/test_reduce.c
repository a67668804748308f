/* test_reduce.c - tocl_reduce_run and tocl_scan_run on a device against host
 * references: both launch shapes (a work-group per row, a work-item per
 * row), split rows (two passes), all-reduce, strided and transposed inputs,
 * arg-reductions with ties and NaN, Welford, empty reductions, a prologue
 * graph (sum of squares in one kernel), determinism, chunked scans; plus
 * the renderer's refusals without a device. */
#include "test_ew_util.h"
#include "tocl/reduce.h"

/* Contiguous float/int tensor of `n` elements filled by f(i). */
static int make_vec(dev_tensor *d, tocl_dtype t, int ndim, const int64_t *sizes, double (*f)(int64_t)) {
    int64_t st[TOCL_TENSOR_MAX_DIMS];
    int64_t n = contig_strides(ndim, sizes, st);
    if (!dt_make(d, 0, t, ndim, sizes, st, n, 3))
        return 0;
    for (int64_t i = 0; i < n; i++)
        host_set(t, dt_elems(d), i, f(i));
    dt_upload(d, 0);
    return 1;
}

static double f_mix(int64_t i) { return (double)((i * 7919) % 1013) / 64.0 - 7.0; }
static double f_tie(int64_t i) { return (double)(i % 5 == 3 ? 9 : (i % 7)); }

/* Output shaped like `in` with size 1 in the dims of mask (1 = reduced). */
static int make_out(dev_tensor *d, tocl_dtype t, const tocl_tensor *in, unsigned mask) {
    int64_t sz[TOCL_TENSOR_MAX_DIMS], st[TOCL_TENSOR_MAX_DIMS];
    for (int i = 0; i < in->ndim; i++)
        sz[i] = (mask >> i) & 1 ? 1 : in->sizes[i];
    int64_t n = contig_strides(in->ndim, sz, st);
    return dt_make(d, 0, t, in->ndim, sz, st, n, 1);
}

static void test_render(void) {
    tocl_ir_graph g;
    tocl_ir_init(&g);
    tocl_ir_output(&g, tocl_ir_input(&g, TOCL_F32), TOCL_F32);
    tocl_reduce_desc d = {TOCL_REDUCE_SUM, TOCL_F32, TOCL_REDUCE_MAP_NONE, TOCL_REDUCE_FINAL_NONE, 0, 0, NULL};
    static char buf[64 * 1024];
    tocl_dtype od[1] = {TOCL_F32};
    CHECK_OK(tocl_reduce_render(&d, &g, 1, od, 2, 1, buf, sizeof buf));
    CHECK(strstr(buf, "__kernel void tocl_red(") != NULL);
    CHECK(strstr(buf, "vload8") != NULL); /* the contiguous fast path */
    CHECK(strstr(buf, "barrier(CLK_LOCAL_MEM_FENCE)") != NULL);
    CHECK_STATUS(tocl_reduce_render(&d, &g, 1, od, 2, 0, buf, sizeof buf), TOCL_E_INVALID);
    CHECK_STATUS(tocl_reduce_render(&d, &g, 1, od, 1, 1, buf, 100), TOCL_E_INVALID);
    d.kind = TOCL_REDUCE_ARGMAX;
    od[0] = TOCL_I64;
    CHECK_OK(tocl_reduce_render(&d, &g, 1, od, 0, 3, buf, sizeof buf));
    CHECK(strstr(buf, "beats") != NULL && strstr(buf, "vload8") == NULL);
}

/* sum over `mask` of a [a, b] float32 tensor (optionally transposed view). */
static void test_sum2d(int64_t a, int64_t b, unsigned mask, int transpose) {
    int64_t sz[2] = {transpose ? b : a, transpose ? a : b};
    dev_tensor x, y;
    if (!make_vec(&x, TOCL_F32, 2, sz, f_mix))
        return;
    if (transpose) { /* view [a, b] of the [b, a] buffer */
        x.t.sizes[0] = a;
        x.t.sizes[1] = b;
        x.t.strides[0] = 1;
        x.t.strides[1] = a;
    }
    make_out(&y, TOCL_F32, &x.t, mask);
    tocl_reduce_desc d = {TOCL_REDUCE_SUM, TOCL_F32, TOCL_REDUCE_MAP_NONE, TOCL_REDUCE_FINAL_NONE, 0, 0, NULL};
    CHECK_OK(tocl_reduce_run(0, 0, &d, 1, &y.t, 1, &x.t, NULL));
    dt_download(&y, 0);
    int bad = 0;
    int64_t rows = (y.t.sizes[0] * y.t.sizes[1]);
    for (int64_t r = 0; r < rows; r++) {
        double want = 0;
        for (int64_t i = 0; i < a; i++)
            for (int64_t j = 0; j < b; j++) {
                int64_t oi = (mask & 1) ? 0 : i, oj = (mask & 2) ? 0 : j;
                if (oi * y.t.sizes[1] + oj != r)
                    continue;
                want += host_get(TOCL_F32, dt_elems(&x), i * x.t.strides[0] + j * x.t.strides[1]);
            }
        double got = host_get(TOCL_F32, dt_elems(&y), r);
        if (fabs(got - want) > 1e-4 * (fabs(want) + 1) + 1e-3 && bad++ < 3)
            fprintf(stderr, "  sum [%lld,%lld] mask %u t%d row %lld: got %g want %g\n", (long long)a, (long long)b,
                    mask, transpose, (long long)r, got, want);
    }
    CHECK(bad == 0);
    dt_free(&x);
    dt_free(&y);
}

static void test_allsum_big(void) {
    int64_t n = (1 << 22) + 77;
    dev_tensor x, y1, y2;
    if (!make_vec(&x, TOCL_F32, 1, &n, f_mix))
        return;
    make_out(&y1, TOCL_F32, &x.t, 1);
    make_out(&y2, TOCL_F32, &x.t, 1);
    tocl_reduce_desc d = {TOCL_REDUCE_SUM, TOCL_F32, TOCL_REDUCE_MAP_NONE, TOCL_REDUCE_FINAL_NONE, 0, 0, NULL};
    CHECK_OK(tocl_reduce_run(0, 0, &d, 1, &y1.t, 1, &x.t, NULL));
    CHECK_OK(tocl_reduce_run(0, 0, &d, 1, &y2.t, 1, &x.t, NULL));
    dt_download(&y1, 0);
    dt_download(&y2, 0);
    double want = 0;
    for (int64_t i = 0; i < n; i++)
        want += host_get(TOCL_F32, dt_elems(&x), i);
    float g1 = *(float *)dt_elems(&y1), g2 = *(float *)dt_elems(&y2);
    CHECK(fabs(g1 - want) <= 1e-5 * fabs(want) + 1e-2);
    CHECK(memcmp(&g1, &g2, 4) == 0); /* deterministic */
    dt_free(&x);
    dt_free(&y1);
    dt_free(&y2);
}

/* Sum of squares through a prologue graph (x * x), and mean / std. */
static void test_prologue_welford(void) {
    int64_t sz[2] = {5, 3001};
    dev_tensor x, y, v, mu;
    if (!make_vec(&x, TOCL_F32, 2, sz, f_mix))
        return;
    make_out(&y, TOCL_F32, &x.t, 2);
    make_out(&v, TOCL_F32, &x.t, 2);
    make_out(&mu, TOCL_F32, &x.t, 2);
    tocl_ir_graph g;
    tocl_ir_init(&g);
    int a = tocl_ir_input(&g, TOCL_F32);
    tocl_ir_output(&g, tocl_ir_binary(&g, TOCL_IR_MUL, TOCL_F32, a, a), TOCL_F32);
    tocl_reduce_desc d = {TOCL_REDUCE_SUM, TOCL_F32, TOCL_REDUCE_MAP_NONE, TOCL_REDUCE_FINAL_SQRT, 0, 0, &g};
    CHECK_OK(tocl_reduce_run(0, 0, &d, 1, &y.t, 1, &x.t, NULL));
    tocl_reduce_desc w = {TOCL_REDUCE_WELFORD, TOCL_F32, TOCL_REDUCE_MAP_NONE, TOCL_REDUCE_FINAL_STD, 0, 1, NULL};
    tocl_tensor outs[2] = {v.t, mu.t};
    CHECK_OK(tocl_reduce_run(0, 0, &w, 2, outs, 1, &x.t, NULL));
    dt_download(&y, 0);
    dt_download(&v, 0);
    dt_download(&mu, 0);
    int bad = 0;
    for (int r = 0; r < 5; r++) {
        double s2 = 0, s = 0;
        for (int j = 0; j < 3001; j++) {
            double e = host_get(TOCL_F32, dt_elems(&x), r * 3001 + j);
            s2 += e * e;
            s += e;
        }
        double mean = s / 3001, var = (s2 - 3001 * mean * mean) / 3000;
        double gn = host_get(TOCL_F32, dt_elems(&y), r), gs = host_get(TOCL_F32, dt_elems(&v), r);
        double gm = host_get(TOCL_F32, dt_elems(&mu), r);
        bad += fabs(gn - sqrt(s2)) > 1e-4 * sqrt(s2);
        bad += fabs(gs - sqrt(var)) > 1e-4 * sqrt(var);
        bad += fabs(gm - mean) > 1e-4 * (fabs(mean) + 1);
    }
    CHECK(bad == 0);
    dt_free(&x);
    dt_free(&y);
    dt_free(&v);
    dt_free(&mu);
}

/* argmax over dim 1 of a transposed [40, 301] view, ties and a NaN. */
static void test_argmax(void) {
    int64_t sz[2] = {301, 40};
    dev_tensor x, vals, idx;
    if (!make_vec(&x, TOCL_F32, 2, sz, f_tie))
        return;
    host_set(TOCL_F32, dt_elems(&x), 5 * 40 + 7, NAN); /* row 7, position 5 */
    host_set(TOCL_F32, dt_elems(&x), 9 * 40 + 7, NAN);
    dt_upload(&x, 0);
    x.t.sizes[0] = 40;
    x.t.sizes[1] = 301;
    x.t.strides[0] = 1;
    x.t.strides[1] = 40;
    make_out(&vals, TOCL_F32, &x.t, 2);
    make_out(&idx, TOCL_I64, &x.t, 2);
    tocl_reduce_desc d = {TOCL_REDUCE_ARGMAX, TOCL_F32, TOCL_REDUCE_MAP_NONE, TOCL_REDUCE_FINAL_NONE, 0, 0, NULL};
    tocl_tensor outs[2] = {vals.t, idx.t};
    CHECK_OK(tocl_reduce_run(0, 0, &d, 2, outs, 1, &x.t, NULL));
    dt_download(&vals, 0);
    dt_download(&idx, 0);
    int bad = 0;
    for (int r = 0; r < 40; r++) {
        int64_t best = 0;
        for (int64_t j = 1; j < 301; j++) {
            double a = host_get(TOCL_F32, dt_elems(&x), j * 40 + r), b = host_get(TOCL_F32, dt_elems(&x), best * 40 + r);
            if (!isnan(b) && (isnan(a) || a > b))
                best = j;
        }
        bad += ((int64_t *)dt_elems(&idx))[r] != best;
    }
    CHECK(bad == 0);
    CHECK(((int64_t *)dt_elems(&idx))[7] == 5 && isnan(host_get(TOCL_F32, dt_elems(&vals), 7)));
    dt_free(&x);
    dt_free(&vals);
    dt_free(&idx);
}

static void test_empty(void) {
    int64_t sz[2] = {3, 0};
    dev_tensor x, y;
    if (!dt_make(&x, 0, TOCL_F32, 2, sz, (int64_t[]){0, 1}, 0, 0))
        return;
    make_out(&y, TOCL_F32, &x.t, 2);
    tocl_reduce_desc d = {TOCL_REDUCE_SUM, TOCL_F32, TOCL_REDUCE_MAP_NONE, TOCL_REDUCE_FINAL_MEAN, 0, 0, NULL};
    CHECK_OK(tocl_reduce_run(0, 0, &d, 1, &y.t, 1, &x.t, NULL));
    dt_download(&y, 0);
    CHECK(isnan(host_get(TOCL_F32, dt_elems(&y), 2)));
    d.kind = TOCL_REDUCE_PROD;
    d.final = TOCL_REDUCE_FINAL_NONE;
    CHECK_OK(tocl_reduce_run(0, 0, &d, 1, &y.t, 1, &x.t, NULL));
    dt_download(&y, 0);
    CHECK(host_get(TOCL_F32, dt_elems(&y), 1) == 1.0);
    d.kind = TOCL_REDUCE_WELFORD; /* two outputs expected only for arg/Welford */
    CHECK_STATUS(tocl_reduce_run(0, 0, &d, 3, &y.t, 1, &x.t, NULL), TOCL_E_INVALID);
    dt_free(&x);
    dt_free(&y);
}

static void test_scans(void) {
    int64_t n = 300007;
    dev_tensor x, y, xi, yi;
    if (!make_vec(&xi, TOCL_I64, 1, &n, f_tie) || !make_vec(&yi, TOCL_I64, 1, &n, f_tie))
        return;
    CHECK_OK(tocl_scan_run(0, 0, TOCL_SCAN_SUM, 0, &yi.t, NULL, &xi.t));
    dt_download(&yi, 0);
    int64_t acc = 0, bad = 0;
    for (int64_t i = 0; i < n; i++) {
        acc += (int64_t)f_tie(i);
        bad += ((int64_t *)dt_elems(&yi))[i] != acc;
    }
    CHECK(bad == 0);
    int64_t sz[2] = {3, 50001};
    if (!make_vec(&x, TOCL_F32, 2, sz, f_tie) || !make_vec(&y, TOCL_F32, 2, sz, f_tie))
        return;
    dev_tensor ix;
    make_out(&ix, TOCL_I64, &x.t, 0);
    CHECK_OK(tocl_scan_run(0, 0, TOCL_SCAN_MAX, 1, &y.t, &ix.t, &x.t));
    dt_download(&y, 0);
    dt_download(&ix, 0);
    bad = 0;
    for (int r = 0; r < 3; r++) {
        double m = -INFINITY;
        int64_t mi = -1;
        for (int64_t j = 0; j < 50001; j++) {
            double v = f_tie(r * 50001 + j);
            if (v >= m) {
                m = v;
                mi = j;
            }
            bad += host_get(TOCL_F32, dt_elems(&y), r * 50001 + j) != m;
            bad += ((int64_t *)dt_elems(&ix))[r * 50001 + j] != mi;
        }
    }
    CHECK(bad == 0);
    CHECK_STATUS(tocl_scan_run(0, 0, TOCL_SCAN_SUM, 2, &y.t, NULL, &x.t), TOCL_E_INVALID);
    CHECK_STATUS(tocl_scan_run(0, 0, TOCL_SCAN_MAX, 1, &y.t, NULL, &x.t), TOCL_E_INVALID);
    dt_free(&x);
    dt_free(&y);
    dt_free(&xi);
    dt_free(&yi);
    dt_free(&ix);
}

int main(void) {
    test_render();
    if (tocl_device_count() < 1) {
        printf("no device: device tests skipped\n");
        TOCL_TEST_END();
    }
    test_sum2d(37, 1001, 2, 0);   /* a work-group per row */
    test_sum2d(3001, 7, 1, 0);    /* reduce the outer dim */
    test_sum2d(5000, 3, 2, 0);    /* a work-item per row */
    test_sum2d(300, 257, 3, 1);   /* all dims of a transposed view */
    test_sum2d(20, 70001, 2, 1);  /* rows split over groups, strided */
    test_allsum_big();
    test_prologue_welford();
    test_argmax();
    test_empty();
    test_scans();
    TOCL_TEST_END();
}
