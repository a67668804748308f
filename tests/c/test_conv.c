/* test_conv.c - tocl_conv_* against a naive host reference in double:
 * 1-d/2-d/3-d geometries with stride, padding, dilation, groups
 * (depthwise too, with its direct kernel: channel multipliers, rows longer
 * than its chunk), the 1x1 shortcut, odd sizes and batches, forward with
 * bias, backward data with bias (the transposed-convolution forward) and
 * the weight gradient, in float32 and float64 (when the device has it);
 * guard elements around every output catch stray writes; bad descriptors
 * fail with TOCL_E_INVALID. The dtype grid lives in tests/python/test_conv.py. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tocl/conv.h"
#include "tocl/device.h"
#include "tocl/mem.h"
#include "tocl/stream.h"
#include "tocl_test.h"

#define GUARD 5
#define GUARD_VAL 1234.5

/* A dense device buffer of n elements between guards, with its host copy. */
typedef struct buf {
    tocl_dtype t;
    int64_t n;
    double *v; /* n host values (reference side) */
    tocl_addr base;
    tocl_tensor ten;
} buf;

static void put(tocl_dtype t, void *p, int64_t i, double v) {
    if (t == TOCL_F64)
        ((double *)p)[i] = v;
    else
        ((float *)p)[i] = (float)v;
}
static double get(tocl_dtype t, const void *p, int64_t i) {
    return t == TOCL_F64 ? ((const double *)p)[i] : ((const float *)p)[i];
}

static int buf_make(buf *b, tocl_dtype t, int64_t n, int random) {
    size_t es = tocl_dtype_size(t), total = (size_t)(n + 2 * GUARD);
    char *h = malloc(total * es);
    b->t = t, b->n = n;
    b->v = calloc((size_t)n + 1, sizeof(double));
    for (size_t i = 0; i < total; i++)
        put(t, h, (int64_t)i, GUARD_VAL);
    for (int64_t i = 0; i < n; i++) {
        /* small integers/8: exact products, so float32 sums are exact too */
        b->v[i] = random ? (double)(rand() % 9 - 4) / 8.0 : 0.0;
        put(t, h, i + GUARD, b->v[i]);
    }
    int ok = tocl_mem_alloc(0, total * es, &b->base) == TOCL_OK &&
             tocl_copy_h2d(0, 0, b->base, h, total * es, 1) == TOCL_OK;
    free(h);
    memset(&b->ten, 0, sizeof b->ten);
    b->ten.data = b->base + GUARD * es;
    b->ten.dtype = t;
    b->ten.ndim = 1;
    b->ten.sizes[0] = n;
    b->ten.strides[0] = 1;
    return ok;
}

/* Compare the device values with want[] and check the guards. */
static int buf_check(buf *b, const double *want, const char *what) {
    size_t es = tocl_dtype_size(b->t), total = (size_t)(b->n + 2 * GUARD);
    char *h = malloc(total * es);
    int ok = tocl_copy_d2h(0, 0, h, b->base, total * es, 1) == TOCL_OK;
    for (int64_t i = 0; ok && i < GUARD; i++)
        ok = get(b->t, h, i) == GUARD_VAL && get(b->t, h, b->n + GUARD + i) == GUARD_VAL;
    if (!ok)
        fprintf(stderr, "%s: guard overwritten or copy failed\n", what);
    for (int64_t i = 0; ok && i < b->n; i++) {
        double g = get(b->t, h, i + GUARD);
        if (fabs(g - want[i]) > 1e-5 * (1 + fabs(want[i]))) {
            fprintf(stderr, "%s: element %lld is %g, expected %g\n", what, (long long)i, g, want[i]);
            ok = 0;
        }
    }
    free(h);
    return ok;
}

static void buf_free(buf *b) {
    tocl_mem_free(b->base);
    free(b->v);
}

/* Reference: visit every (n, o, y position, c, kernel offset) that
 * contributes, with x index xi (or -1 when it falls in the padding). */
typedef void (*visit_fn)(void *ctx, int64_t xi, int64_t yi, int64_t wi);

static void conv_visit(const tocl_conv_desc *d, visit_fn f, void *ctx) {
    int64_t x[3] = {1, 1, 1}, y[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, p[3] = {0}, dl[3] = {1, 1, 1};
    for (int i = 0; i < d->nd; i++) {
        int j = 3 - d->nd + i;
        x[j] = d->x[i], y[j] = d->y[i], k[j] = d->k[i], s[j] = d->stride[i], p[j] = d->pad[i], dl[j] = d->dilation[i];
    }
    int64_t cxg = d->cx / d->groups, cyg = d->cy / d->groups, xv = x[0] * x[1] * x[2], yv = y[0] * y[1] * y[2];
    int64_t kv = k[0] * k[1] * k[2];
    for (int64_t n = 0; n < d->batch; n++)
        for (int64_t o = 0; o < d->cy; o++)
            for (int64_t q = 0; q < yv; q++)
                for (int64_t c = 0; c < cxg; c++)
                    for (int64_t j = 0; j < kv; j++) {
                        int64_t q3[3] = {q / (y[1] * y[2]), q / y[2] % y[1], q % y[2]};
                        int64_t j3[3] = {j / (k[1] * k[2]), j / k[2] % k[1], j % k[2]}, xi = 0;
                        for (int a = 0; a < 3 && xi >= 0; a++) {
                            int64_t pos = q3[a] * s[a] - p[a] + j3[a] * dl[a];
                            xi = pos < 0 || pos >= x[a] ? -1 : xi * x[a] + pos;
                        }
                        if (xi < 0)
                            continue;
                        int64_t cc = o / cyg * cxg + c;
                        f(ctx, (n * d->cx + cc) * xv + xi, (n * d->cy + o) * yv + q, (o * cxg + c) * kv + j);
                    }
}

typedef struct ref_ctx {
    const double *a, *b;
    double *out;
    int mode; /* 0: y += x * w, 1: x += y * w, 2: w += x * y */
} ref_ctx;

static void ref_step(void *vc, int64_t xi, int64_t yi, int64_t wi) {
    ref_ctx *c = vc;
    if (c->mode == 0)
        c->out[yi] += c->a[xi] * c->b[wi];
    else if (c->mode == 1)
        c->out[xi] += c->a[yi] * c->b[wi];
    else
        c->out[wi] += c->a[xi] * c->b[yi];
}

/* Descriptor from a compact spec; y sizes from the convolution formula. */
static tocl_conv_desc make(int nd, int64_t batch, int64_t groups, int64_t cx, int64_t cy, const int64_t *x,
                           const int64_t *k, int64_t stride, int64_t pad, int64_t dil) {
    tocl_conv_desc d;
    memset(&d, 0, sizeof d);
    d.nd = nd, d.batch = batch, d.groups = groups, d.cx = cx, d.cy = cy;
    for (int i = 0; i < nd; i++) {
        d.x[i] = x[i], d.k[i] = k[i];
        d.stride[i] = stride + (i == nd - 1 && stride > 1); /* unequal strides across dims */
        d.pad[i] = pad, d.dilation[i] = dil;
        d.y[i] = (d.x[i] + 2 * d.pad[i] - d.dilation[i] * (d.k[i] - 1) - 1) / d.stride[i] + 1;
    }
    return d;
}

static void run_case(tocl_dtype t, const tocl_conv_desc *d, const char *name) {
    int64_t xv = 1, yv = 1, kv = 1;
    for (int i = 0; i < d->nd; i++)
        xv *= d->x[i], yv *= d->y[i], kv *= d->k[i];
    int64_t nx = d->batch * d->cx * xv, ny = d->batch * d->cy * yv, nw = d->cy * (d->cx / d->groups) * kv;
    buf x, y, w, bx, by, gx, gw;
    int ok = buf_make(&x, t, nx, 1) & buf_make(&y, t, ny, 1) & buf_make(&w, t, nw, 1) & buf_make(&bx, t, d->cx, 1) &
             buf_make(&by, t, d->cy, 1) & buf_make(&gx, t, nx, 0) & buf_make(&gw, t, nw, 0);
    CHECK(ok);
    double *want = calloc((size_t)(nx + ny + nw + 1), sizeof(double));
    char what[160];

    /* forward: y := conv(x, w) + by (y's random contents must be overwritten) */
    for (int64_t i = 0; i < ny; i++)
        want[i] = by.v[(i / yv) % d->cy];
    ref_ctx c = {x.v, w.v, want, 0};
    conv_visit(d, ref_step, &c);
    CHECK_OK(tocl_conv_forward(0, 0, d, &x.ten, &w.ten, &by.ten, &y.ten));
    snprintf(what, sizeof what, "%s %s forward", name, tocl_dtype_name(t));
    CHECK(buf_check(&y, want, what));
    for (int64_t i = 0; i < ny; i++) /* the device y is now conv(x, w) + by */
        y.v[i] = want[i];

    /* backward data: gx := conv^T(y, w) + bx */
    for (int64_t i = 0; i < nx; i++)
        want[i] = bx.v[(i / xv) % d->cx];
    c = (ref_ctx){y.v, w.v, want, 1};
    conv_visit(d, ref_step, &c);
    CHECK_OK(tocl_conv_backward_data(0, 0, d, &y.ten, &w.ten, &bx.ten, &gx.ten));
    snprintf(what, sizeof what, "%s %s backward data", name, tocl_dtype_name(t));
    CHECK(buf_check(&gx, want, what));

    /* weight gradient */
    memset(want, 0, (size_t)nw * sizeof(double));
    c = (ref_ctx){x.v, y.v, want, 2};
    conv_visit(d, ref_step, &c);
    CHECK_OK(tocl_conv_backward_weight(0, 0, d, &x.ten, &y.ten, &gw.ten));
    snprintf(what, sizeof what, "%s %s backward weight", name, tocl_dtype_name(t));
    CHECK(buf_check(&gw, want, what));

    free(want);
    buf *all[] = {&x, &y, &w, &bx, &by, &gx, &gw};
    for (int i = 0; i < 7; i++)
        buf_free(all[i]);
}

static void test_geometries(tocl_dtype t) {
    static const int64_t x1[] = {11}, x2[] = {7, 9}, x3[] = {5, 4, 6}, k1[] = {3}, k2[] = {3, 2}, k3[] = {2, 3, 1};
    static const int64_t one[] = {1, 1, 1}, px[] = {6, 5}, xl[] = {150};
    struct {
        const char *name;
        tocl_conv_desc d;
    } cases[] = {
        {"1d", make(1, 2, 1, 3, 4, x1, k1, 1, 0, 1)},
        {"1d stride pad dil", make(1, 3, 1, 2, 5, x1, k1, 2, 2, 2)},
        {"2d", make(2, 2, 1, 3, 4, x2, k2, 1, 1, 1)},
        {"2d stride 2", make(2, 1, 1, 2, 3, x2, k2, 2, 1, 1)},
        {"2d groups", make(2, 2, 2, 4, 6, x2, k2, 1, 1, 2)},
        {"2d depthwise", make(2, 3, 4, 4, 8, x2, k2, 1, 1, 1)},
        {"2d 1x1", make(2, 2, 1, 5, 3, px, one, 1, 0, 1)},
        {"2d 1x1 groups", make(2, 3, 3, 6, 3, px, one, 1, 0, 1)},
        {"2d 1x1 stride", make(2, 2, 1, 3, 2, px, one, 2, 0, 1)},
        {"3d", make(3, 2, 1, 2, 3, x3, k3, 1, 1, 1)},
        {"3d groups stride", make(3, 1, 2, 4, 2, x3, k3, 2, 0, 1)},
        /* one x channel per group: the direct depthwise kernel */
        {"2d depthwise x2 stride dil", make(2, 2, 3, 3, 6, x2, k2, 2, 1, 2)},
        {"1d one channel", make(1, 2, 1, 1, 3, x1, k1, 1, 1, 1)},
        {"3d depthwise", make(3, 1, 2, 2, 2, x3, k3, 1, 1, 1)},
        {"1d depthwise long row", make(1, 2, 2, 2, 4, xl, k1, 1, 1, 1)},
        {"1d depthwise long row stride", make(1, 1, 2, 2, 2, xl, k1, 2, 2, 1)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        run_case(t, &cases[i].d, cases[i].name);

    /* a transposed geometry: x larger than the formula gives (output_padding) */
    tocl_conv_desc d = make(2, 2, 1, 3, 2, x2, k2, 2, 1, 1);
    d.x[0] += 1, d.x[1] += 1;
    run_case(t, &d, "2d output padding");
    /* a workspace of a few hundred bytes: one or two batch items per
     * chunk, so chunks (and the weight gradient's accumulation) run */
    setenv("TORCH_OCL_CONV_WORKSPACE", "700", 1);
    tocl_conv_desc dc = make(2, 5, 1, 2, 3, x2, k2, 1, 1, 1);
    run_case(t, &dc, "2d chunked");
    dc = make(2, 4, 2, 2, 4, px, one, 1, 0, 1);
    run_case(t, &dc, "2d 1x1 chunked");
    unsetenv("TORCH_OCL_CONV_WORKSPACE");
}

static void test_errors(void) {
    static const int64_t x2[] = {5, 5}, k2[] = {3, 3};
    tocl_conv_desc d = make(2, 1, 1, 2, 2, x2, k2, 1, 0, 1);
    buf x, y, w;
    CHECK(buf_make(&x, TOCL_F32, 50, 1) & buf_make(&y, TOCL_F32, 18, 0) & buf_make(&w, TOCL_F32, 36, 1));
    CHECK_OK(tocl_conv_forward(0, 0, &d, &x.ten, &w.ten, NULL, &y.ten));
    tocl_conv_desc bad = d;
    bad.groups = 3; /* does not divide the channels */
    CHECK_STATUS(tocl_conv_forward(0, 0, &bad, &x.ten, &w.ten, NULL, &y.ten), TOCL_E_INVALID);
    bad = d;
    bad.nd = 4;
    CHECK_STATUS(tocl_conv_forward(0, 0, &bad, &x.ten, &w.ten, NULL, &y.ten), TOCL_E_INVALID);
    bad = d;
    bad.stride[1] = 0;
    CHECK_STATUS(tocl_conv_forward(0, 0, &bad, &x.ten, &w.ten, NULL, &y.ten), TOCL_E_INVALID);
    bad = d;
    bad.cy = 3; /* weight and output no longer hold the right element counts */
    CHECK_STATUS(tocl_conv_forward(0, 0, &bad, &x.ten, &w.ten, NULL, &y.ten), TOCL_E_INVALID);
    tocl_tensor wf = w.ten;
    wf.dtype = TOCL_F64; /* a dtype mismatch */
    CHECK_STATUS(tocl_conv_forward(0, 0, &d, &x.ten, &wf, NULL, &y.ten), TOCL_E_INVALID);
    CHECK_STATUS(tocl_conv_backward_weight(0, 0, NULL, &x.ten, &y.ten, &w.ten), TOCL_E_INVALID);
    CHECK(strstr(tocl_last_error(), "descriptor") != NULL);
    buf_free(&x), buf_free(&y), buf_free(&w);
}

int main(void) {
    if (tocl_device_count() < 1) {
        printf("no OpenCL device; skipped\n");
        return 0;
    }
    srand(7);
    test_geometries(TOCL_F32);
    tocl_device_props props;
    if (tocl_device_props_get(0, &props) == TOCL_OK && props.has_fp64)
        test_geometries(TOCL_F64);
    test_errors();
    TOCL_TEST_END();
}
