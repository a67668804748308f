/* test_fft.c - the FFT runtime (tocl/fft.h) against a host DFT in double:
 * complex forward and inverse transforms over lengths of every plan kind
 * (one radix, mixed radices, direct prime passes, Bluestein, split into
 * two launches), float32 and float64, with the transformed dim first,
 * middle or last among 1-3 batch dims, inputs contiguous, transposed,
 * strided by 2 or broadcast (stride 0), and a scale; real-to-complex
 * (onesided and full) and complex-to-real for odd and even lengths; then
 * argument errors, which must fail before anything is launched. The error
 * of a transform is its largest difference from the reference over the
 * reference's largest magnitude. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "ops/fft_config.h"
#include "tocl/fft.h"
#include "tocl_test.h"

enum { C2C, R2C, C2R };
enum { CONTIG, TRANSPOSED, STEP2, BROADCAST };

#define MAXD 6

/* A host view of an operand: real dims rd (plus the pair dim when pair),
 * strides and offset in scalars, span: scalars of storage it needs. */
typedef struct desc {
    int rd, pair;
    int64_t sizes[MAXD], strides[MAXD], off, span;
} desc;

/* Layout `lay` of a tensor of real shape sizes[rd]: row-major, every dim
 * reversed (the transpose), every stride doubled plus an offset, or
 * row-major with dim bdim broadcast (stride 0). */
static desc make_desc(int rd, const int64_t *sizes, int pair, int lay, int bdim) {
    desc d;
    memset(&d, 0, sizeof d);
    d.rd = rd;
    d.pair = pair;
    memcpy(d.sizes, sizes, (size_t)rd * sizeof *sizes);
    int64_t run = pair ? 2 : 1, step = lay == STEP2 ? 2 : 1;
    for (int k = 0; k < rd; k++) {
        int i = lay == TRANSPOSED ? k : rd - 1 - k;
        if (lay == BROADCAST && i == bdim) {
            d.strides[i] = 0;
            continue;
        }
        d.strides[i] = run * step;
        run = d.strides[i] * sizes[i];
    }
    d.off = lay == STEP2 ? 3 : 0; /* an odd scalar offset: pairs need not be 8-byte aligned */
    d.span = d.off + 1 + (pair ? 1 : 0);
    for (int i = 0; i < rd; i++)
        d.span += (sizes[i] - 1) * d.strides[i];
    return d;
}

static tocl_tensor make_tensor(const desc *d, tocl_addr base, tocl_dtype dt) {
    tocl_tensor t;
    memset(&t, 0, sizeof t);
    t.data = base + (tocl_addr)d->off * tocl_dtype_size(dt);
    t.dtype = dt;
    t.ndim = d->rd + d->pair;
    for (int i = 0; i < d->rd; i++)
        t.sizes[i] = d->sizes[i], t.strides[i] = d->strides[i];
    if (d->pair)
        t.sizes[d->rd] = 2, t.strides[d->rd] = 1;
    return t;
}

static uint64_t rng = 88172645463325252ull;
static double rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / (double)(1ull << 53) * 2 - 1;
}

static tocl_addr upload(const double *v, int64_t count, tocl_dtype dt) {
    size_t esz = tocl_dtype_size(dt), bytes = (size_t)count * esz;
    void *h = malloc(bytes);
    for (int64_t i = 0; i < count; i++) {
        if (dt == TOCL_F32)
            ((float *)h)[i] = (float)v[i];
        else
            ((double *)h)[i] = v[i];
    }
    tocl_addr a = 0;
    CHECK_OK(tocl_mem_alloc(0, bytes, &a));
    CHECK_OK(tocl_copy_h2d(0, 0, a, h, bytes, 1));
    free(h);
    return a;
}

static void download(double *v, tocl_addr a, int64_t count, tocl_dtype dt) {
    size_t esz = tocl_dtype_size(dt), bytes = (size_t)count * esz;
    void *h = malloc(bytes);
    CHECK_OK(tocl_copy_d2h(0, 0, h, a, bytes, 1));
    for (int64_t i = 0; i < count; i++)
        v[i] = dt == TOCL_F32 ? ((float *)h)[i] : ((double *)h)[i];
    free(h);
}

/* z_k = scale * sum_j x_j exp(sign 2 pi i j k / n) at the outputs k in
 * [0, kmax) with step kstep; roots cs / sn of length n. */
static void ref_dft(const double *x, int64_t n, int sign, const double *cs, const double *sn, int64_t kmax,
                    int64_t kstep, double scale, double *z) {
    for (int64_t k = 0; k < kmax; k += kstep) {
        double re = 0, im = 0;
        int64_t e = 0;
        for (int64_t j = 0; j < n; j++) {
            double c = cs[e], s = sign * sn[e];
            re += x[2 * j] * c - x[2 * j + 1] * s;
            im += x[2 * j] * s + x[2 * j + 1] * c;
            e += k;
            if (e >= n)
                e -= n;
        }
        z[2 * k] = scale * re;
        z[2 * k + 1] = scale * im;
    }
}

static double tolerance(tocl_dtype dt, int64_t n) {
    double lg = log2((double)n);
    return dt == TOCL_F32 ? 2e-6 * lg + 1e-6 : 2e-15 * lg + 1e-14;
}

static double worst_f32, worst_f64; /* largest error / tolerance seen */
static int cases;

/* One call of kind `kind` on real shape `shape` (n or the input's extent
 * along dim), the input in layout lin (bdim: its broadcast dim), the
 * output in lout; every transform checked against the reference. */
static void run_case(int kind, tocl_dtype dt, int64_t n, int rd, const int64_t *shape, int dim, int lin, int bdim,
                     int lout, int inverse, double scale, int onesided) {
    int64_t isz[MAXD], osz[MAXD];
    memcpy(isz, shape, (size_t)rd * sizeof *shape);
    memcpy(osz, shape, (size_t)rd * sizeof *shape);
    isz[dim] = kind == C2R ? n / 2 + 1 + (n % 3) : n; /* c2r: extra entries past n/2 + 1 are not read */
    osz[dim] = kind == R2C && onesided ? n / 2 + 1 : n;
    desc di = make_desc(rd, isz, kind != R2C, lin, bdim), dout = make_desc(rd, osz, kind != C2R, lout, -1);
    double *hin = malloc((size_t)di.span * sizeof(double)), *hout = malloc((size_t)dout.span * sizeof(double));
    for (int64_t i = 0; i < di.span; i++)
        hin[i] = rnd();
    for (int64_t i = 0; i < dout.span; i++)
        hout[i] = 0;
    tocl_addr ain = upload(hin, di.span, dt), aout = upload(hout, dout.span, dt);
    tocl_tensor tin = make_tensor(&di, ain, dt), tout = make_tensor(&dout, aout, dt);
    tocl_status s = kind == C2C   ? tocl_fft_c2c(0, 0, &tout, &tin, dim, inverse, scale)
                    : kind == R2C ? tocl_fft_r2c(0, 0, &tout, &tin, dim, scale)
                                  : tocl_fft_c2r(0, 0, &tout, &tin, dim, scale);
    CHECK_OK(s);
    download(hout, aout, dout.span, dt);
    /* a sampled reference for long transforms keeps the test quick */
    int64_t kstep = n > 5000 ? n / 61 : 1, kmax = kind == R2C ? osz[dim] : n;
    double *cs = malloc((size_t)n * sizeof(double)), *sn = malloc((size_t)n * sizeof(double));
    double *x = malloc((size_t)n * 2 * sizeof(double)), *z = malloc((size_t)n * 2 * sizeof(double));
    for (int64_t e = 0; e < n; e++) {
        long double a = 2 * 3.141592653589793238462643383279502884L * (long double)e / (long double)n;
        cs[e] = (double)cosl(a);
        sn[e] = (double)sinl(a);
    }
    int64_t idx[MAXD] = {0}, batch = 1;
    for (int i = 0; i < rd; i++)
        if (i != dim)
            batch *= shape[i];
    double worst = 0;
    for (int64_t b = 0; b < batch; b++) {
        int64_t r = b, bi = di.off, bo = dout.off;
        for (int i = rd - 1; i >= 0; i--) {
            if (i == dim)
                continue;
            idx[i] = r % shape[i];
            r /= shape[i];
            bi += idx[i] * di.strides[i];
            bo += idx[i] * dout.strides[i];
        }
        int64_t si = di.strides[dim], so = dout.strides[dim];
        for (int64_t j = 0; j < n; j++) {
            if (kind == C2C) {
                x[2 * j] = hin[bi + j * si], x[2 * j + 1] = hin[bi + j * si + 1];
            } else if (kind == R2C) {
                x[2 * j] = hin[bi + j * si], x[2 * j + 1] = 0;
            } else { /* Hermitian completion; imaginary parts of 0 and n/2 dropped */
                int64_t h = 2 * j <= n ? j : n - j;
                x[2 * j] = hin[bi + h * si];
                x[2 * j + 1] = h == 0 || 2 * h == n ? 0 : (h == j ? 1 : -1) * hin[bi + h * si + 1];
            }
        }
        ref_dft(x, n, kind == C2R || inverse ? 1 : -1, cs, sn, kmax, kstep, scale, z);
        double big = 1e-300, err = 0;
        for (int64_t k = 0; k < kmax; k += kstep) {
            double dr = hout[bo + k * so] - z[2 * k], dm = 0;
            if (kind != C2R)
                dm = hout[bo + k * so + 1] - z[2 * k + 1];
            else
                z[2 * k + 1] = 0;
            big = fmax(big, hypot(z[2 * k], z[2 * k + 1]));
            err = fmax(err, hypot(dr, dm));
            if (isnan(dr) || isnan(dm))
                err = INFINITY;
        }
        worst = fmax(worst, err / big);
    }
    double tol = tolerance(dt, n), ratio = worst / tol;
    if (dt == TOCL_F32)
        worst_f32 = fmax(worst_f32, ratio);
    else
        worst_f64 = fmax(worst_f64, ratio);
    cases++;
    if (!(worst <= tol))
        fprintf(stderr, "kind %d %s n %lld dim %d of %d, layouts %d/%d, inverse %d: error %.3g over tolerance %.3g\n",
                kind, tocl_dtype_name(dt), (long long)n, dim, rd, lin, lout, inverse, worst, tol);
    CHECK(worst <= tol);
    free(hin), free(hout), free(cs), free(sn), free(x), free(z);
    tocl_mem_free(ain);
    tocl_mem_free(aout);
}

/* Complex transforms of every length in the list, four layouts each. */
static void test_c2c(tocl_dtype dt, int quick) {
    static const int64_t ns[] = {1,  2,  3,   4,   5,   7,   8,   12,   16,   30,   44,   49,
                                 64, 97, 100, 128, 169, 243, 400, 1000, 1024, 4096, 4099};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        int64_t n = ns[i], b = n >= 1000 ? 1 : 3;
        if (quick && i % 3 && n < 1000)
            continue;
        double rs = 1 / sqrt((double)n);
        int64_t first[2] = {n, b + 1};                       /* dim first, one batch dim */
        int64_t middle[3] = {2, n, b};                       /* dim in the middle, two */
        int64_t last[4] = {b, 2, 1, n};                      /* dim last, three (one of size 1) */
        run_case(C2C, dt, n, 2, first, 0, CONTIG, -1, CONTIG, 0, 1, 0);
        run_case(C2C, dt, n, 3, middle, 1, TRANSPOSED, -1, CONTIG, 1, 1.0 / n, 0);
        run_case(C2C, dt, n, 4, last, 3, STEP2, -1, TRANSPOSED, 0, rs, 0);
        run_case(C2C, dt, n, 3, middle, 1, BROADCAST, 0, STEP2, 1, rs, 0);
    }
    if (quick)
        return;
    /* lengths split into two launches (too long for one work-group's local memory on this CPU driver) */
    int64_t big[2] = {2, 65536}, odd[2] = {49152, 1};
    run_case(C2C, dt, 65536, 2, big, 1, CONTIG, -1, CONTIG, 1, 1.0 / 65536, 0);
    run_case(C2C, dt, 49152, 2, odd, 0, TRANSPOSED, -1, CONTIG, 0, 1, 0);
}

static void test_real(tocl_dtype dt, int quick) {
    static const int64_t ns[] = {1, 2, 3, 4, 5, 8, 12, 30, 49, 97, 100, 128, 400, 1024, 4099};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        int64_t n = ns[i];
        if (quick && i % 3 && n < 1000)
            continue;
        int64_t last[2] = {3, n}, first[3] = {n, 2, 2};
        run_case(R2C, dt, n, 2, last, 1, CONTIG, -1, CONTIG, 0, 1, 1);
        run_case(R2C, dt, n, 3, first, 0, STEP2, -1, TRANSPOSED, 0, 1 / sqrt((double)n), 0);
        run_case(C2R, dt, n, 2, last, 1, CONTIG, -1, CONTIG, 1, 1.0 / n, 0);
        run_case(C2R, dt, n, 3, first, 0, BROADCAST, 2, STEP2, 1, 1, 0);
    }
}

/* Bad arguments fail with TOCL_E_INVALID and leave the output untouched. */
static void test_errors(void) {
    double h[64];
    for (int i = 0; i < 64; i++)
        h[i] = i;
    tocl_addr ai = upload(h, 64, TOCL_F32), ao = upload(h, 64, TOCL_F32), ar = upload(h, 64, TOCL_F32);
    int64_t shape[2] = {2, 8}, half[2] = {2, 5};
    desc dc = make_desc(2, shape, 1, CONTIG, -1), dr = make_desc(2, shape, 0, CONTIG, -1);
    desc dh = make_desc(2, half, 1, CONTIG, -1);
    tocl_tensor in = make_tensor(&dc, ai, TOCL_F32), out = make_tensor(&dc, ao, TOCL_F32);
    tocl_tensor rin = make_tensor(&dr, ar, TOCL_F32), hout = make_tensor(&dh, ao, TOCL_F32);
    tocl_tensor bad = in;
    bad.strides[2] = 2; /* pair dim not unit-stride */
    CHECK_STATUS(tocl_fft_c2c(0, 0, &out, &bad, 1, 0, 1), TOCL_E_INVALID);
    bad = in;
    bad.sizes[2] = 1; /* no pair dim */
    CHECK_STATUS(tocl_fft_c2c(0, 0, &out, &bad, 1, 0, 1), TOCL_E_INVALID);
    bad = out;
    bad.sizes[1] = 4; /* length differs */
    CHECK_STATUS(tocl_fft_c2c(0, 0, &bad, &in, 1, 0, 1), TOCL_E_INVALID);
    bad = out;
    bad.sizes[0] = 1; /* batch size differs */
    CHECK_STATUS(tocl_fft_c2c(0, 0, &bad, &in, 1, 0, 1), TOCL_E_INVALID);
    CHECK_STATUS(tocl_fft_c2c(0, 0, &out, &in, 2, 0, 1), TOCL_E_INVALID);  /* the pair dim */
    CHECK_STATUS(tocl_fft_c2c(0, 0, &out, &in, -1, 0, 1), TOCL_E_INVALID); /* negative dim */
    bad = in;
    bad.dtype = TOCL_I32;
    CHECK_STATUS(tocl_fft_c2c(0, 0, &out, &bad, 1, 0, 1), TOCL_E_INVALID); /* integer input */
    bad = in;
    bad.dtype = TOCL_F64;
    CHECK_STATUS(tocl_fft_c2c(0, 0, &out, &bad, 1, 0, 1), TOCL_E_INVALID); /* dtypes differ */
    CHECK_STATUS(tocl_fft_c2c(0, 0, &out, NULL, 1, 0, 1), TOCL_E_INVALID);
    bad = in;
    bad.sizes[0] = 5; /* past its block */
    CHECK(tocl_fft_c2c(0, 0, &hout, &bad, 1, 0, 1) != TOCL_OK);
    CHECK_STATUS(tocl_fft_r2c(0, 0, &out, &in, 1, 1), TOCL_E_INVALID);    /* complex input to r2c */
    bad = out;
    bad.sizes[1] = 6; /* neither 8/2+1 nor 8 */
    CHECK_STATUS(tocl_fft_r2c(0, 0, &bad, &rin, 1, 1), TOCL_E_INVALID);
    CHECK_STATUS(tocl_fft_r2c(0, 0, &rin, &rin, 1, 1), TOCL_E_INVALID);   /* real output */
    bad = hout;
    bad.sizes[1] = 4; /* 8 outputs need 5 inputs */
    CHECK_STATUS(tocl_fft_c2r(0, 0, &rin, &bad, 1, 1), TOCL_E_INVALID);
    CHECK_STATUS(tocl_fft_c2r(0, 0, &out, &hout, 1, 1), TOCL_E_INVALID);  /* complex output */
    bad = rin;
    bad.ndim = 1, bad.sizes[0] = 8, bad.strides[0] = 1; /* ndim relation */
    CHECK_STATUS(tocl_fft_c2r(0, 0, &bad, &hout, 1, 1), TOCL_E_INVALID);
    double o[64];
    download(o, ao, 64, TOCL_F32);
    int same = 1;
    for (int i = 0; i < 64; i++)
        same &= o[i] == h[i];
    CHECK(same); /* nothing ran */
    /* empty operands launch nothing and succeed */
    tocl_tensor e = in, eo = out;
    e.sizes[0] = eo.sizes[0] = 0;
    CHECK_OK(tocl_fft_c2c(0, 0, &eo, &e, 1, 0, 1));
    tocl_mem_free(ai), tocl_mem_free(ao), tocl_mem_free(ar);
}

int main(void) {
    if (tocl_device_count() < 1) {
        printf("no OpenCL device; skipped\n");
        return 0;
    }
    int fp64 = tocl_dev_props(0)->has_fp64;
    test_errors();
    test_c2c(TOCL_F32, 0);
    test_real(TOCL_F32, 0);
    if (fp64) {
        test_c2c(TOCL_F64, 0);
        test_real(TOCL_F64, 0);
    }
    /* the other device kind's settings on the same device: GPU-like (one
     * transform per group of 64 work-items, radix 16, 48 KiB of local
     * memory, so 4096 points split in float64), or CPU-like lanes */
    fft_config cfg;
    fft_config_get(0, TOCL_F32, &cfg);
    fft_config other = {.lanes = 1, .group = 64, .big = 16, .local_bytes = 48 << 10};
    if (cfg.lanes == 1)
        other = (fft_config){.lanes = 4, .group = 1, .big = 8, .local_bytes = cfg.local_bytes};
    fft_config_override(&other);
    test_c2c(TOCL_F32, 1);
    test_real(TOCL_F32, 1);
    if (fp64) {
        other.lanes = other.lanes > 1 ? 2 : 1;
        fft_config_override(&other);
        test_c2c(TOCL_F64, 1);
    }
    fft_config_override(NULL);
    printf("%d transforms checked; worst error / tolerance: float32 %.3g, float64 %.3g\n", cases, worst_f32,
           worst_f64);
    TOCL_TEST_END();
}
