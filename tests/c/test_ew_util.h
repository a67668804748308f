/* test_ew_util.h - host references (dtype conversion with round-to-nearest-
 * even, element access) and device tensor helpers for the test_ew* tests.
 * The float16/bfloat16 rounding here is written independently of the
 * runtime's (by scaling and rint, not bit tricks) so each checks the other. */
#ifndef TEST_EW_UTIL_H
#define TEST_EW_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tocl/ops.h"
#include "tocl_test.h"

static const tocl_dtype all_dtypes[] = {TOCL_BOOL, TOCL_U8,  TOCL_I8,   TOCL_I16, TOCL_I32,
                                        TOCL_I64,  TOCL_F16, TOCL_BF16, TOCL_F32, TOCL_F64};
#define N_DTYPES 10

/* Round x to a binary format with `p` significand bits (implicit bit
 * included) and minimum normal exponent emin, max finite `maxv`; RNE. */
static double ref_round(double x, int p, int emin, double maxv) {
    if (isnan(x) || isinf(x) || x == 0)
        return x;
    double a = fabs(x);
    int e;
    frexp(a, &e); /* a in [2^(e-1), 2^e) */
    e -= 1;
    if (e < emin)
        e = emin; /* subnormal: fixed quantum */
    double q = ldexp(1.0, e - (p - 1));
    double r = rint(a / q) * q; /* rint: ties to even */
    if (r > maxv) {
        /* Overflow: RNE gives infinity at or beyond max + half an ulp. */
        double ulp = ldexp(1.0, (int)floor(log2(maxv)) - (p - 1));
        r = a >= maxv + ulp / 2 ? INFINITY : maxv;
    }
    return x < 0 ? -r : r;
}

static double ref_half(double x) { return ref_round(x, 11, -14, 65504.0); }
static double ref_bf16(double x) { return ref_round(x, 8, -126, 3.38953138925153547590470800371487866880e+38); }

static uint16_t half_bits(double v) { /* v already a half value */
    uint16_t s = signbit(v) ? 0x8000 : 0;
    double a = fabs(v);
    if (isnan(v))
        return 0x7e00;
    if (isinf(v))
        return s | 0x7c00;
    if (a < ldexp(1.0, -14))
        return s | (uint16_t)(a * 16777216.0);
    int e;
    double m = frexp(a, &e); /* [0.5, 1) */
    return s | (uint16_t)((e - 1 + 15) << 10) | (uint16_t)(m * 2048 - 1024);
}

static double half_value(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

static double bf16_value(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint16_t bf16_bits(double v) { /* v already a bfloat16 value */
    if (isnan(v))
        return 0x7fc0;
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

/* Integer wrap modulo the type's width, as C and PyTorch conversions do. */
static int64_t wrap_int(tocl_dtype t, int64_t v) {
    switch (t) {
    case TOCL_U8: return (uint8_t)v;
    case TOCL_I8: return (int8_t)(uint8_t)v;
    case TOCL_I16: return (int16_t)(uint16_t)v;
    case TOCL_I32: return (int32_t)(uint32_t)v;
    default: return v;
    }
}

/* Convert a value to dtype t as the device should (float->int truncates). */
static double ref_convert(tocl_dtype t, double v) {
    switch (t) {
    case TOCL_BOOL: return v != 0;
    case TOCL_F16: return ref_half((float)v); /* PyTorch goes through float too */
    case TOCL_BF16: return ref_bf16((float)v);
    case TOCL_F32: return (float)v;
    case TOCL_F64: return v;
    default: return (double)wrap_int(t, (int64_t)v);
    }
}

/* Host element access; set converts with ref_convert first. */
static void host_set(tocl_dtype t, void *buf, int64_t i, double v) {
    v = ref_convert(t, v);
    switch (t) {
    case TOCL_BOOL: case TOCL_U8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case TOCL_I8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case TOCL_I16: ((int16_t *)buf)[i] = (int16_t)v; break;
    case TOCL_I32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case TOCL_I64: ((int64_t *)buf)[i] = (int64_t)v; break;
    case TOCL_F16: ((uint16_t *)buf)[i] = half_bits(v); break;
    case TOCL_BF16: ((uint16_t *)buf)[i] = bf16_bits(v); break;
    case TOCL_F32: ((float *)buf)[i] = (float)v; break;
    case TOCL_F64: ((double *)buf)[i] = v; break;
    default: break;
    }
}

static double host_get(tocl_dtype t, const void *buf, int64_t i) {
    switch (t) {
    case TOCL_BOOL: case TOCL_U8: return ((const uint8_t *)buf)[i];
    case TOCL_I8: return ((const int8_t *)buf)[i];
    case TOCL_I16: return ((const int16_t *)buf)[i];
    case TOCL_I32: return ((const int32_t *)buf)[i];
    case TOCL_I64: return (double)((const int64_t *)buf)[i];
    case TOCL_F16: return half_value(((const uint16_t *)buf)[i]);
    case TOCL_BF16: return bf16_value(((const uint16_t *)buf)[i]);
    case TOCL_F32: return ((const float *)buf)[i];
    case TOCL_F64: return ((const double *)buf)[i];
    default: return 0;
    }
}

/* Same value, NaN equal to NaN. */
static int same_value(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

/* Deterministic values valid for dtype t (small enough that integer
 * products stay exact in double and never overflow int32). */
static double gen_value(tocl_dtype t, uint32_t *state, int nonzero) {
    for (;;) {
        *state = *state * 1664525u + 1013904223u;
        uint32_t r = *state >> 8;
        double v;
        switch (t) {
        case TOCL_BOOL: v = r & 1; break;
        case TOCL_U8: v = r % 256; break;
        case TOCL_I8: v = (double)(r % 201) - 100; break;
        case TOCL_I16: v = (double)(r % 20001) - 10000; break;
        case TOCL_I32: v = (double)(r % 60001) - 30000; break;
        case TOCL_I64: v = (double)(r % 2000001) - 1000000; break;
        default: v = ((double)(r % 200001) - 100000) / 256.0 + (r % 7) / 1000.0; break;
        }
        v = ref_convert(t, v);
        if (!nonzero || v != 0)
            return v;
    }
}

/* A device tensor view over a fresh allocation on device dev. */
typedef struct {
    tocl_tensor t;
    tocl_addr base;
    size_t bytes;
    void *host; /* host image of the whole allocation */
} dev_tensor;

/* Allocate `elems` elements (plus `pad_front` elements before element 0)
 * and describe sizes/strides; ndim may be 0. */
static int dt_make(dev_tensor *d, int dev, tocl_dtype t, int ndim, const int64_t *sizes, const int64_t *strides,
                   int64_t elems, int64_t pad_front) {
    memset(d, 0, sizeof *d);
    size_t es = tocl_dtype_size(t);
    d->bytes = (size_t)(elems + pad_front) * es + 8;
    d->host = calloc(1, d->bytes);
    if (tocl_mem_alloc(dev, d->bytes, &d->base) != TOCL_OK)
        return 0;
    d->t.data = d->base + (tocl_addr)((size_t)pad_front * es);
    d->t.dtype = t;
    d->t.ndim = ndim;
    for (int i = 0; i < ndim; i++) {
        d->t.sizes[i] = sizes[i];
        d->t.strides[i] = strides[i];
    }
    return 1;
}

/* Contiguous row-major strides for sizes. */
static int64_t contig_strides(int ndim, const int64_t *sizes, int64_t *strides) {
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = s;
        s *= sizes[i];
    }
    return s;
}

static void dt_upload(dev_tensor *d, int dev) { CHECK_OK(tocl_copy_h2d(dev, 0, d->base, d->host, d->bytes, 1)); }
static void dt_download(dev_tensor *d, int dev) { CHECK_OK(tocl_copy_d2h(dev, 0, d->host, d->base, d->bytes, 1)); }
static void dt_free(dev_tensor *d) {
    tocl_mem_free(d->base);
    free(d->host);
}

/* Buffer element index (relative to t.data) of logical element i. */
static int64_t dt_index(const tocl_tensor *t, int64_t i) {
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (i % t->sizes[d]) * t->strides[d];
        i /= t->sizes[d];
    }
    return off;
}

/* Host element array starting at the view's element 0. */
static void *dt_elems(dev_tensor *d) { return (char *)d->host + (d->t.data - d->base); }

#endif
