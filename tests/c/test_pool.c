/* test_pool.c - pooling and resampling through the C API against host
 * references written here: max pool with dilation/padding (values,
 * indices, gathered backward against a scatter), avg pool with and without
 * count_include_pad and a divisor, adaptive avg/max, nearest/linear/cubic
 * resampling forward and backward (backward checked as the adjoint of the
 * forward: <up(x), g> == <x, up_bwd(g)>), and argument errors. */
#include "test_ew_util.h"
#include "tocl/pool.h"

static uint32_t seed = 777;

static double urand(void) { /* in [-2, 2) */
    seed = seed * 1664525u + 1013904223u;
    return ((seed >> 8) / 16777216.0) * 4 - 2;
}

static int dense(dev_tensor *d, tocl_dtype t, int64_t n) {
    int64_t sz[1] = {n}, st[1] = {1};
    return dt_make(d, 0, t, 1, sz, st, n, 3);
}
static void *elems(dev_tensor *d) { return (char *)d->host + (d->t.data - d->base); }
static double at(dev_tensor *d, int64_t i) { return host_get(d->t.dtype, elems(d), i); }
static void put(dev_tensor *d, int64_t i, double v) { host_set(d->t.dtype, elems(d), i, v); }
static void release(dev_tensor *d) {
    tocl_mem_free(d->base);
    free(d->host);
}

static int64_t vol(const int64_t *s) { return s[0] * s[1] * s[2]; }

/* Host pooling of one plane: output o (3 coords) of desc d on x. */
static double ref_pool(const tocl_pool_desc *d, dev_tensor *x, int64_t plane, const int64_t *o, int64_t *arg) {
    int64_t lo[3], hi[3], st[3];
    int adaptive = d->kind >= TOCL_POOL_ADAPTIVE_MAX;
    for (int j = 0; j < 3; j++) {
        if (adaptive) {
            lo[j] = o[j] * d->in[j] / d->out[j];
            hi[j] = ((o[j] + 1) * d->in[j] + d->out[j] - 1) / d->out[j];
            st[j] = 1;
        } else {
            st[j] = d->kind == TOCL_POOL_MAX ? d->dilation[j] : 1;
            lo[j] = o[j] * d->stride[j] - d->pad[j];
            hi[j] = lo[j] + (d->kernel[j] - 1) * st[j] + 1;
        }
    }
    int is_max = d->kind == TOCL_POOL_MAX || d->kind == TOCL_POOL_ADAPTIVE_MAX;
    double m = -INFINITY, s = 0;
    int64_t cnt = 0, size = 1;
    *arg = -1;
    for (int j = 0; j < 3; j++)
        if (!is_max && !adaptive) {
            int64_t e = hi[j] < d->in[j] + d->pad[j] ? hi[j] : d->in[j] + d->pad[j];
            size *= e - lo[j];
        }
    for (int64_t a = lo[0]; a < hi[0]; a += st[0])
        for (int64_t b = lo[1]; b < hi[1]; b += st[1])
            for (int64_t c = lo[2]; c < hi[2]; c += st[2]) {
                if (a < 0 || b < 0 || c < 0 || a >= d->in[0] || b >= d->in[1] || c >= d->in[2])
                    continue;
                int64_t k = (a * d->in[1] + b) * d->in[2] + c;
                double v = at(x, plane * vol(d->in) + k);
                if (v > m) {
                    m = v;
                    *arg = k;
                }
                s += v;
                cnt++;
            }
    if (is_max)
        return m;
    if (adaptive)
        return s / cnt;
    int64_t div = d->divisor_override ? d->divisor_override : d->count_include_pad ? size : cnt;
    return s / div;
}

static void test_pool(tocl_pool_desc d, tocl_dtype t) {
    int64_t in_n = d.nc * vol(d.in), out_n = d.nc * vol(d.out);
    dev_tensor x, y, ind, g, z;
    if (!dense(&x, t, in_n) || !dense(&y, t, out_n) || !dense(&ind, TOCL_I64, out_n) || !dense(&g, t, out_n) ||
        !dense(&z, t, in_n)) {
        CHECK(0);
        return;
    }
    int is_max = d.kind == TOCL_POOL_MAX || d.kind == TOCL_POOL_ADAPTIVE_MAX;
    for (int64_t i = 0; i < in_n; i++) /* distinct values: a unique argmax */
        put(&x, i, (double)((i * 37) % in_n) / 8 - 3);
    for (int64_t i = 0; i < out_n; i++)
        put(&g, i, urand());
    dt_upload(&x, 0);
    dt_upload(&g, 0);
    CHECK_OK(tocl_pool_forward(0, 0, &d, &x.t, &y.t, is_max ? &ind.t : NULL));
    CHECK_OK(tocl_pool_backward(0, 0, &d, &g.t, is_max ? &ind.t : NULL, &z.t));
    dt_download(&y, 0);
    dt_download(&ind, 0);
    dt_download(&z, 0);
    double tol = t == TOCL_F64 ? 1e-9 : t == TOCL_F32 ? 1e-5 : t == TOCL_F16 ? 2e-3 : 1e-2;
    double *want_z = calloc((size_t)in_n, sizeof(double));
    int bad = 0;
    for (int64_t p = 0; p < d.nc; p++)
        for (int64_t e = 0; e < vol(d.out); e++) {
            int64_t o[3] = {e / (d.out[1] * d.out[2]), (e / d.out[2]) % d.out[1], e % d.out[2]}, arg;
            double want = ref_pool(&d, &x, p, o, &arg), got = at(&y, p * vol(d.out) + e);
            if (fabs(got - want) > tol * (1 + fabs(want)))
                bad++;
            double gv = at(&g, p * vol(d.out) + e);
            if (is_max) {
                if (((int64_t *)elems(&ind))[p * vol(d.out) + e] != arg)
                    bad++;
                if (arg >= 0)
                    want_z[p * vol(d.in) + arg] += gv;
            }
        }
    if (is_max)
        for (int64_t i = 0; i < in_n; i++)
            if (fabs(at(&z, i) - want_z[i]) > 4 * tol * (1 + fabs(want_z[i])))
                bad++;
    CHECK(bad == 0);
    if (bad)
        fprintf(stderr, "pool kind %d %s in [%lld %lld %lld] out [%lld %lld %lld]: %d mismatches\n", (int)d.kind,
                tocl_dtype_name(t), (long long)d.in[0], (long long)d.in[1], (long long)d.in[2],
                (long long)d.out[0], (long long)d.out[1], (long long)d.out[2], bad);
    if (!is_max) { /* adjoint: <pool(x), g> == <x, pool_bwd(g)> */
        double l = 0, r = 0;
        for (int64_t i = 0; i < out_n; i++)
            l += at(&y, i) * at(&g, i);
        for (int64_t i = 0; i < in_n; i++)
            r += at(&x, i) * at(&z, i);
        CHECK(fabs(l - r) < 10 * tol * (1 + fabs(l)));
    }
    free(want_z);
    release(&x);
    release(&y);
    release(&ind);
    release(&g);
    release(&z);
}

static tocl_pool_desc fixed(tocl_pool_kind kind, int64_t nc, int64_t h, int64_t w, int64_t k, int64_t s, int64_t p,
                            int64_t dil, int ceil_mode) {
    tocl_pool_desc d = {0};
    d.kind = kind;
    d.nc = nc;
    int64_t in[3] = {1, h, w};
    for (int j = 0; j < 3; j++) {
        d.in[j] = in[j];
        d.kernel[j] = j ? k : 1;
        d.stride[j] = j ? s : 1;
        d.pad[j] = j ? p : 0;
        d.dilation[j] = j ? dil : 1;
        int64_t span = d.in[j] + 2 * d.pad[j] - d.dilation[j] * (d.kernel[j] - 1) - 1;
        int64_t o = (span + (ceil_mode ? d.stride[j] - 1 : 0)) / d.stride[j] + 1;
        if (ceil_mode && (o - 1) * d.stride[j] >= d.in[j] + d.pad[j])
            o--;
        d.out[j] = o;
    }
    return d;
}

/* Upsample adjoint test: <up(x), g> == <x, up_bwd(g)>, and a spot check of
 * the forward against a host formula for nearest and linear. */
static void test_upsample(tocl_upsample_mode mode, int align, int64_t nc, const int64_t *in, const int64_t *out,
                          tocl_dtype t) {
    tocl_upsample_desc d = {0};
    d.mode = mode;
    d.align_corners = align;
    d.nc = nc;
    for (int j = 0; j < 3; j++) {
        d.in[j] = in[j];
        d.out[j] = out[j];
    }
    int64_t in_n = nc * vol(d.in), out_n = nc * vol(d.out);
    dev_tensor x, y, g, z;
    if (!dense(&x, t, in_n) || !dense(&y, t, out_n) || !dense(&g, t, out_n) || !dense(&z, t, in_n)) {
        CHECK(0);
        return;
    }
    for (int64_t i = 0; i < in_n; i++)
        put(&x, i, urand());
    for (int64_t i = 0; i < out_n; i++)
        put(&g, i, urand());
    dt_upload(&x, 0);
    dt_upload(&g, 0);
    CHECK_OK(tocl_upsample_forward(0, 0, &d, &x.t, &y.t));
    CHECK_OK(tocl_upsample_backward(0, 0, &d, &g.t, &z.t));
    dt_download(&y, 0);
    dt_download(&z, 0);
    double l = 0, r = 0, scale = 0;
    for (int64_t i = 0; i < out_n; i++)
        l += at(&y, i) * at(&g, i), scale += fabs(at(&y, i) * at(&g, i));
    for (int64_t i = 0; i < in_n; i++)
        r += at(&x, i) * at(&z, i);
    CHECK(fabs(l - r) < 1e-4 * (1 + scale));
    int bad = 0;
    if (mode == TOCL_UPSAMPLE_NEAREST && in[0] == 1 && in[1] == 1) /* 1-d: y[o] = x[floor(o * in / out)] */
        for (int64_t p = 0; p < nc; p++)
            for (int64_t o = 0; o < out[2]; o++) {
                int64_t i = (int64_t)floorf((float)o * ((float)in[2] / (float)out[2]));
                if (out[2] == 2 * in[2])
                    i = o / 2;
                if (i > in[2] - 1)
                    i = in[2] - 1;
                bad += at(&y, p * out[2] + o) != at(&x, p * in[2] + i);
            }
    if (mode == TOCL_UPSAMPLE_LINEAR && align && in[0] == 1 && in[1] == 1 && out[2] > 1)
        for (int64_t p = 0; p < nc; p++)
            for (int64_t o = 0; o < out[2]; o++) {
                double src = (double)o * (in[2] - 1) / (out[2] - 1);
                int64_t i0 = (int64_t)src, i1 = i0 + (i0 < in[2] - 1);
                double lam = src - i0;
                double want = (1 - lam) * at(&x, p * in[2] + i0) + lam * at(&x, p * in[2] + i1);
                bad += fabs(at(&y, p * out[2] + o) - want) > 1e-5 * (1 + fabs(want));
            }
    CHECK(bad == 0);
    if (bad || fabs(l - r) >= 1e-4 * (1 + scale))
        fprintf(stderr, "upsample mode %d align %d [%lld %lld %lld] -> [%lld %lld %lld]: %d bad, <y,g> %g <x,z> %g\n",
                (int)mode, align, (long long)in[0], (long long)in[1], (long long)in[2], (long long)out[0],
                (long long)out[1], (long long)out[2], bad, l, r);
    release(&x);
    release(&y);
    release(&g);
    release(&z);
}

static void test_errors(void) {
    dev_tensor x, y;
    if (!dense(&x, TOCL_F32, 16) || !dense(&y, TOCL_F32, 4)) {
        CHECK(0);
        return;
    }
    tocl_pool_desc d = fixed(TOCL_POOL_AVG, 1, 4, 4, 2, 2, 0, 1, 0);
    d.stride[2] = 0;
    CHECK_STATUS(tocl_pool_forward(0, 0, &d, &x.t, &y.t, NULL), TOCL_E_INVALID);
    d = fixed(TOCL_POOL_MAX, 1, 4, 4, 2, 2, 0, 1, 0);
    CHECK_STATUS(tocl_pool_forward(0, 0, &d, &x.t, &y.t, NULL), TOCL_E_INVALID); /* indices missing */
    d = fixed(TOCL_POOL_AVG, 1, 4, 4, 2, 2, 0, 1, 0);
    d.out[2] = 3; /* y has 4 elements, not 6 */
    CHECK_STATUS(tocl_pool_forward(0, 0, &d, &x.t, &y.t, NULL), TOCL_E_INVALID);
    tocl_upsample_desc u = {TOCL_UPSAMPLE_LINEAR, 0, 1, {1, 4, 4}, {1, 0, 4}, {0, 0, 0}};
    CHECK_STATUS(tocl_upsample_forward(0, 0, &u, &x.t, &y.t), TOCL_E_INVALID);
    release(&x);
    release(&y);
}

int main(void) {
    if (tocl_device_count() < 1) {
        printf("no OpenCL device; skipping\n");
        return 0;
    }
    int fp64 = 0;
    tocl_device_props pr;
    if (tocl_device_props_get(0, &pr) == TOCL_OK)
        fp64 = pr.has_fp64;
    /* max: kernel, stride, padding, dilation, ceil_mode */
    test_pool(fixed(TOCL_POOL_MAX, 3, 7, 9, 3, 2, 1, 1, 0), TOCL_F32);
    test_pool(fixed(TOCL_POOL_MAX, 2, 8, 7, 2, 1, 0, 2, 0), TOCL_F32);
    test_pool(fixed(TOCL_POOL_MAX, 2, 9, 10, 3, 3, 1, 2, 1), TOCL_F32);
    test_pool(fixed(TOCL_POOL_MAX, 2, 5, 5, 2, 2, 1, 1, 1), TOCL_F16);
    test_pool(fixed(TOCL_POOL_MAX, 2, 6, 5, 3, 2, 1, 1, 0), TOCL_BF16);
    /* avg: count_include_pad both ways, divisor override */
    tocl_pool_desc a = fixed(TOCL_POOL_AVG, 3, 7, 6, 3, 2, 1, 1, 1);
    a.count_include_pad = 1;
    test_pool(a, TOCL_F32);
    a.count_include_pad = 0;
    test_pool(a, TOCL_F32);
    a.divisor_override = 5;
    test_pool(a, TOCL_F32);
    if (fp64)
        test_pool(fixed(TOCL_POOL_AVG, 2, 5, 8, 2, 1, 1, 1, 0), TOCL_F64);
    /* 3-d */
    tocl_pool_desc m3 = fixed(TOCL_POOL_MAX, 2, 5, 6, 2, 2, 1, 1, 1);
    m3.in[0] = 5, m3.kernel[0] = 3, m3.stride[0] = 2, m3.pad[0] = 1, m3.out[0] = 3;
    test_pool(m3, TOCL_F32);
    /* adaptive */
    tocl_pool_desc ad = {0};
    ad.nc = 3;
    int64_t ain[3] = {3, 7, 10}, aout[3] = {2, 3, 4};
    for (int j = 0; j < 3; j++)
        ad.in[j] = ain[j], ad.out[j] = aout[j];
    ad.kind = TOCL_POOL_ADAPTIVE_AVG;
    test_pool(ad, TOCL_F32);
    ad.kind = TOCL_POOL_ADAPTIVE_MAX;
    test_pool(ad, TOCL_F32);
    ad.out[1] = 9, ad.out[2] = 13; /* more outputs than inputs: windows overlap */
    test_pool(ad, TOCL_F32);
    ad.kind = TOCL_POOL_ADAPTIVE_AVG;
    test_pool(ad, TOCL_F16);
    /* upsample */
    int64_t i1[3] = {1, 1, 5}, o1[3] = {1, 1, 13}, o1b[3] = {1, 1, 10}, o1c[3] = {1, 1, 3};
    int64_t i2[3] = {1, 4, 5}, o2[3] = {1, 9, 7}, o2b[3] = {1, 3, 2};
    int64_t i3[3] = {3, 4, 2}, o3[3] = {5, 7, 4};
    for (int align = 0; align < 2; align++) {
        test_upsample(TOCL_UPSAMPLE_LINEAR, align, 3, i1, o1, TOCL_F32);
        test_upsample(TOCL_UPSAMPLE_LINEAR, align, 3, i1, o1c, TOCL_F32);
        test_upsample(TOCL_UPSAMPLE_LINEAR, align, 2, i2, o2, TOCL_F32);
        test_upsample(TOCL_UPSAMPLE_LINEAR, align, 2, i3, o3, TOCL_F32);
        test_upsample(TOCL_UPSAMPLE_CUBIC, align, 2, i2, o2, TOCL_F32);
        test_upsample(TOCL_UPSAMPLE_CUBIC, align, 2, i2, o2b, TOCL_F32);
    }
    test_upsample(TOCL_UPSAMPLE_NEAREST, 0, 3, i1, o1, TOCL_F32);
    test_upsample(TOCL_UPSAMPLE_NEAREST, 0, 3, i1, o1b, TOCL_F32);
    test_upsample(TOCL_UPSAMPLE_NEAREST, 0, 3, i1, o1c, TOCL_F32);
    test_upsample(TOCL_UPSAMPLE_NEAREST, 0, 2, i3, o3, TOCL_F32);
    test_upsample(TOCL_UPSAMPLE_NEAREST_EXACT, 0, 2, i2, o2, TOCL_F32);
    test_upsample(TOCL_UPSAMPLE_NEAREST_EXACT, 0, 2, i2, o2b, TOCL_F32);
    if (fp64)
        test_upsample(TOCL_UPSAMPLE_CUBIC, 0, 2, i2, o2, TOCL_F64);
    test_errors();
    TOCL_TEST_END();
}
