/* philox.cl - counter-based Philox4x32-10 uniform and normal random numbers.
 *
 * Built once per destination dtype with -DTOCL_DST_F32 / _F64 / _F16 / _BF16.
 * Work-item g computes counter (offset + g) under key seed and writes logical
 * elements 4g .. 4g+3 of the destination, so values depend only on seed,
 * offset and logical index, never on layout or launch shape. float64 takes
 * 53 bits from two words: word j of counter (c, 0) and of counter (c, 1) in
 * the third counter word, a stream float outputs never use. */
#include "round_storage.h"
#include "philox_params.h"

#if defined(TOCL_DST_F64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double acc_t;
typedef double dst_t;
#define TOCL_TWO_PI (2 * M_PI)
#elif defined(TOCL_DST_F16)
typedef float acc_t;
typedef half dst_t;
#elif defined(TOCL_DST_BF16)
typedef float acc_t;
typedef ushort dst_t;
#elif defined(TOCL_DST_BOOL) || defined(TOCL_DST_U8)
typedef float acc_t;
typedef uchar dst_t;
#define TOCL_DST_INT 1
#define TOCL_SAT(v) convert_uchar_sat(v)
#elif defined(TOCL_DST_I8)
typedef float acc_t;
typedef char dst_t;
#define TOCL_DST_INT 1
#define TOCL_SAT(v) convert_char_sat(v)
#elif defined(TOCL_DST_I16)
typedef float acc_t;
typedef short dst_t;
#define TOCL_DST_INT 1
#define TOCL_SAT(v) convert_short_sat(v)
#elif defined(TOCL_DST_I32)
typedef float acc_t;
typedef int dst_t;
#define TOCL_DST_INT 1
#define TOCL_SAT(v) convert_int_sat(v)
#elif defined(TOCL_DST_I64)
typedef float acc_t;
typedef long dst_t;
#define TOCL_DST_INT 1
#define TOCL_SAT(v) convert_long_sat(v)
#else
typedef float acc_t;
typedef float dst_t;
#endif
#ifndef TOCL_TWO_PI
#define TOCL_TWO_PI (2 * M_PI_F)
#define TOCL_PI M_PI_F
#else
#define TOCL_PI M_PI
#endif

inline uint4 tocl_philox4x32_10(uint4 c, uint2 k)
{
    for (int r = 0; r < 10; r++) {
        if (r) { /* key schedule: Weyl sequence */
            k.x += 0x9E3779B9u;
            k.y += 0xBB67AE85u;
        }
        uint hi0 = mul_hi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;
        uint hi1 = mul_hi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;
        c = (uint4)(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    }
    return c;
}

/* Four uniforms in [0, 1) for counter group g. */
inline void tocl_philox_uniform4(const tocl_philox_params *p, long g, acc_t *u)
{
    ulong ctr = p->offset + (ulong)g;
    uint2 key = (uint2)((uint)p->seed, (uint)(p->seed >> 32));
    uint4 a = tocl_philox4x32_10((uint4)((uint)ctr, (uint)(ctr >> 32), 0u, 0u), key);
    uint wa[4] = {a.x, a.y, a.z, a.w};
#if defined(TOCL_DST_F64)
    uint4 b = tocl_philox4x32_10((uint4)((uint)ctr, (uint)(ctr >> 32), 1u, 0u), key);
    uint wb[4] = {b.x, b.y, b.z, b.w};
    for (int j = 0; j < 4; j++) /* 27 + 26 bits, as the classic genrand_res53 */
        u[j] = (double)(((ulong)(wa[j] >> 5) << 26) | (ulong)(wb[j] >> 6)) * 0x1.0p-53;
#else
    for (int j = 0; j < 4; j++) /* 24 bits: every value exact in float */
        u[j] = (float)(wa[j] >> 8) * 0x1.0p-24f;
#endif
}

/* The value storage will hold (so the [from, to) check sees it). */
inline acc_t tocl_philox_round(acc_t v)
{
#if defined(TOCL_DST_F16)
    return tocl_round_f16(v);
#elif defined(TOCL_DST_BF16)
    return tocl_round_bf16(v);
#else
    return v;
#endif
}

/* Store a value that tocl_philox_round already made exact in storage. */
inline void tocl_philox_store(__global dst_t *dst, long i, acc_t v)
{
#if defined(TOCL_DST_INT)
    dst[i] = TOCL_SAT(v); /* integral values; saturate where the CPU's cast is undefined */
#elif defined(TOCL_DST_F16)
    vstore_half_rte(v, i, dst);
#elif defined(TOCL_DST_BF16)
    dst[i] = (ushort)(as_uint(v) >> 16);
#else
    dst[i] = v;
#endif
}

/* Buffer index of logical element i (row-major over sizes). */
inline long tocl_philox_index(const tocl_philox_params *p, long i)
{
    if (p->ndim == 0)
        return p->dst_off + i;
    long off = p->dst_off;
    for (int d = p->ndim - 1; d > 0; d--) {
        off += (i % p->sizes[d]) * p->strides[d];
        i /= p->sizes[d];
    }
    return off + i * p->strides[0];
}

__kernel void tocl_philox_uniform(__global dst_t *dst, tocl_philox_params p, acc_t from, acc_t to)
{
    long g = get_global_id(0);
    if (g * 4 >= p.n)
        return;
    acc_t u[4];
    tocl_philox_uniform4(&p, g, u);
    for (int j = 0; j < 4; j++) {
        long i = g * 4 + j;
        if (i >= p.n)
            break;
        acc_t v = tocl_philox_round(from + (to - from) * u[j]);
        if (v >= to) /* rounding reached the open end: wrap to from */
            v = tocl_philox_round(from);
        tocl_philox_store(dst, tocl_philox_index(&p, i), v);
    }
}

/* Box-Muller on the pairs (u0, u1) and (u2, u3); 1 - u is in (0, 1], so
 * the log is finite. */
__kernel void tocl_philox_normal(__global dst_t *dst, tocl_philox_params p, acc_t mean, acc_t std)
{
    long g = get_global_id(0);
    if (g * 4 >= p.n)
        return;
    acc_t u[4], z[4];
    tocl_philox_uniform4(&p, g, u);
    for (int j = 0; j < 4; j += 2) {
        acc_t r = sqrt((acc_t)-2 * log((acc_t)1 - u[j]));
        acc_t t = (acc_t)TOCL_TWO_PI * u[j + 1];
        z[j] = r * cos(t);
        z[j + 1] = r * sin(t);
    }
    for (int j = 0; j < 4; j++) {
        long i = g * 4 + j;
        if (i >= p.n)
            break;
        tocl_philox_store(dst, tocl_philox_index(&p, i), tocl_philox_round(mean + std * z[j]));
    }
}

/* ---------------------------------------------------------------- more distributions
 * tocl_philox_dist: random_, bernoulli_ (scalar and tensor p), exponential_,
 * geometric_, cauchy_, log_normal_ through one kernel; `kind` picks the
 * transformation (TOCL_RAND_* in philox_params.h). Same counter mapping as
 * above: element i uses word i % 4 of counter offset + i / 4 (and of the
 * counter with third word 1 where 64 bits are needed). */

/* Four raw words of counter group g, stream `lane` in the third word. */
inline uint4 tocl_philox_bits(const tocl_philox_params *p, long g, uint lane)
{
    ulong ctr = p->offset + (ulong)g;
    uint2 key = (uint2)((uint)p->seed, (uint)(p->seed >> 32));
    return tocl_philox4x32_10((uint4)((uint)ctr, (uint)(ctr >> 32), lane, 0u), key);
}

/* Store an integer value: float destinations round to nearest like a C cast. */
inline void tocl_philox_store_long(__global dst_t *dst, long i, long v)
{
#if defined(TOCL_DST_BOOL)
    dst[i] = v != 0;
#elif defined(TOCL_DST_INT)
    dst[i] = (dst_t)v; /* the host keeps v inside dst's range */
#else
    tocl_philox_store(dst, i, tocl_philox_round((acc_t)v));
#endif
}

__kernel void tocl_philox_dist(__global dst_t *dst, tocl_philox_params p, int kind, ulong range, long base, acc_t a,
                               acc_t b, __global const float *pt, long pt_off)
{
    long g = get_global_id(0);
    if (g * 4 >= p.n)
        return;
    uint4 w = tocl_philox_bits(&p, g, 0u);
    uint wa[4] = {w.x, w.y, w.z, w.w}, wb[4] = {0u, 0u, 0u, 0u};
#if defined(TOCL_DST_F64)
    int wide = 1; /* 53-bit uniforms */
#else
    int wide = 0;
#endif
    if (kind == TOCL_RAND_FROM_TO && (range == 0 || range >= (1ul << 28)))
        wide = 1;
    if (wide) {
        uint4 v = tocl_philox_bits(&p, g, 1u);
        wb[0] = v.x, wb[1] = v.y, wb[2] = v.z, wb[3] = v.w;
    }
    acc_t u[4], z[4];
    for (int j = 0; j < 4; j++) {
#if defined(TOCL_DST_F64)
        u[j] = (double)(((ulong)(wa[j] >> 5) << 26) | (ulong)(wb[j] >> 6)) * 0x1.0p-53;
#else
        u[j] = (float)(wa[j] >> 8) * 0x1.0p-24f;
#endif
    }
    if (kind == TOCL_RAND_LOG_NORMAL) {
        for (int j = 0; j < 4; j += 2) {
            acc_t r = sqrt((acc_t)-2 * log((acc_t)1 - u[j]));
            acc_t t = (acc_t)TOCL_TWO_PI * u[j + 1];
            z[j] = r * cos(t);
            z[j + 1] = r * sin(t);
        }
    }
    for (int j = 0; j < 4; j++) {
        long i = g * 4 + j;
        if (i >= p.n)
            break;
        long at = tocl_philox_index(&p, i);
        /* open (0, 1): one bit fewer than u so the half step stays exact */
#if defined(TOCL_DST_F64)
        acc_t uo = ((double)((((ulong)(wa[j] >> 5) << 26) | (ulong)(wb[j] >> 6)) >> 1) + 0.5) * 0x1.0p-52;
#else
        acc_t uo = ((float)(wa[j] >> 9) + 0.5f) * 0x1.0p-23f;
#endif
        if (kind == TOCL_RAND_FROM_TO) {
            ulong v = wide ? ((ulong)wa[j] << 32) | (ulong)wb[j] : (ulong)wa[j];
            tocl_philox_store_long(dst, at, range ? (long)(v % range + (ulong)base) : (long)v);
        } else if (kind == TOCL_RAND_BERNOULLI) {
            tocl_philox_store_long(dst, at, (ulong)wa[j] < range);
        } else if (kind == TOCL_RAND_BERNOULLI_TENSOR) {
            tocl_philox_store_long(dst, at, (float)(wa[j] >> 8) * 0x1.0p-24f < pt[pt_off + i]);
        } else {
            acc_t v;
            if (kind == TOCL_RAND_EXPONENTIAL)
                v = -log(uo) / a;
            else if (kind == TOCL_RAND_GEOMETRIC)
                v = ceil(log(uo) / log1p(-a));
            else if (kind == TOCL_RAND_CAUCHY)
                v = a + b * tan((acc_t)TOCL_PI * (uo - (acc_t)0.5));
            else /* TOCL_RAND_LOG_NORMAL */
                v = exp(a + b * z[j]);
            tocl_philox_store(dst, at, tocl_philox_round(v));
        }
    }
}

/* flag[0] := 1 if any of n float values lies outside [lo, hi] or is NaN. */
__kernel void tocl_rng_check_range(__global const float *src, long off, long n, float lo, float hi,
                                   __global int *flag, long foff)
{
    flag += foff;
    long i = get_global_id(0);
    if (i < n) {
        float x = src[off + i];
        if (!(x >= lo && x <= hi))
            flag[0] = 1;
    }
}

/* ---------------------------------------------------------------- sorting by random keys
 * randperm and multinomial without replacement sort (key, value) pairs by a
 * bitonic network over a power-of-two length; pads sort last. */

/* keys[i] := 64 random bits of element i, vals[i] := i; pads get maxima. */
__kernel void tocl_rng_perm_keys(__global ulong *keys, long koff, __global long *vals, long voff,
                                 tocl_philox_params p, long npad)
{
    keys += koff;
    vals += voff;
    long g = get_global_id(0);
    if (g * 4 >= npad)
        return;
    uint4 a = tocl_philox_bits(&p, g, 0u), b = tocl_philox_bits(&p, g, 1u);
    uint wa[4] = {a.x, a.y, a.z, a.w}, wb[4] = {b.x, b.y, b.z, b.w};
    for (int j = 0; j < 4; j++) {
        long i = g * 4 + j;
        if (i >= npad)
            break;
        keys[i] = i < p.n ? ((ulong)wa[j] << 32) | wb[j] : ULONG_MAX;
        vals[i] = i < p.n ? i : LONG_MAX;
    }
}

/* One compare-exchange step (k: block size, j: distance), ascending by (key, value). */
__kernel void tocl_rng_bitonic_step(__global ulong *keys, long koff, __global long *vals, long voff, long npad,
                                    long j, long k)
{
    keys += koff;
    vals += voff;
    long i = get_global_id(0);
    if (i >= npad)
        return;
    long l = i ^ j;
    if (l <= i)
        return;
    ulong ki = keys[i], kl = keys[l];
    long vi = vals[i], vl = vals[l];
    int gt = ki > kl || (ki == kl && vi > vl);
    int up = (i & k) == 0;
    if (gt == up) {
        keys[i] = kl, keys[l] = ki;
        vals[i] = vl, vals[l] = vi;
    }
}

/* dst (strided, logical order) := vals[0 .. n) converted to dst's dtype. */
__kernel void tocl_rng_perm_store(__global dst_t *dst, tocl_philox_params p, __global const long *vals, long voff)
{
    vals += voff;
    long i = get_global_id(0);
    if (i < p.n)
        tocl_philox_store_long(dst, tocl_philox_index(&p, i), vals[i]);
}

/* ---------------------------------------------------------------- multinomial
 * probs: rows x ncat float32, contiguous. */

/* One work-item per row: running sums into cdf; flags[0] entry < 0,
 * flags[1] entry inf or NaN, flags[2] a row sums to 0. */
__kernel void tocl_mn_scan(__global const float *probs, long poff, long rows, long ncat, __global float *cdf,
                           long coff, __global int *flags, long foff)
{
    cdf += coff;
    flags += foff;
    long r = get_global_id(0);
    if (r >= rows)
        return;
    float s = 0;
    for (long c = 0; c < ncat; c++) {
        float x = probs[poff + r * ncat + c];
        if (x < 0)
            flags[0] = 1;
        if (isinf(x) || isnan(x))
            flags[1] = 1;
        s += x > 0 ? x : 0;
        cdf[r * ncat + c] = s;
    }
    if (!(s > 0))
        flags[2] = 1;
}

/* With replacement: element i (row i / ns) takes the first category whose
 * running sum exceeds u * total; categories of probability 0 never do. */
__kernel void tocl_mn_sample(__global long *dst, tocl_philox_params p, __global const float *cdf, long coff,
                             long ncat, long ns)
{
    cdf += coff;
    long g = get_global_id(0);
    if (g * 4 >= p.n)
        return;
    uint4 w = tocl_philox_bits(&p, g, 0u);
    uint wa[4] = {w.x, w.y, w.z, w.w};
    for (int j = 0; j < 4; j++) {
        long i = g * 4 + j;
        if (i >= p.n)
            break;
        __global const float *row = cdf + (i / ns) * ncat;
        float total = row[ncat - 1];
        float t = (float)(wa[j] >> 8) * 0x1.0p-24f * total;
        long lo = 0, hi = ncat; /* first c with row[c] > t */
        while (lo < hi) {
            long m = (lo + hi) / 2;
            if (row[m] > t)
                hi = m;
            else
                lo = m + 1;
        }
        if (lo == ncat) { /* u * total rounded up to total: first c reaching it */
            lo = 0, hi = ncat - 1;
            while (lo < hi) {
                long m = (lo + hi) / 2;
                if (row[m] >= total)
                    hi = m;
                else
                    lo = m + 1;
            }
        }
        dst[tocl_philox_index(&p, i)] = lo;
    }
}

/* Without replacement (the exponential race, as the CPU): key of category c
 * in row r is p_c / E_c with E_c ~ Exp(1); sorting (row, key descending)
 * puts each row's sample first. */
__kernel void tocl_mn_keys(__global ulong *keys, long koff, __global long *vals, long voff, tocl_philox_params p,
                           __global const float *probs, long poff, long ncat, long npad)
{
    keys += koff;
    vals += voff;
    long g = get_global_id(0);
    if (g * 4 >= npad)
        return;
    uint4 w = tocl_philox_bits(&p, g, 0u);
    uint wa[4] = {w.x, w.y, w.z, w.w};
    for (int j = 0; j < 4; j++) {
        long i = g * 4 + j;
        if (i >= npad)
            break;
        if (i >= p.n) {
            keys[i] = ULONG_MAX;
            vals[i] = LONG_MAX;
            continue;
        }
        float e = -log(((float)(wa[j] >> 9) + 0.5f) * 0x1.0p-23f); /* u in (0, 1): e > 0 */
        float q = probs[poff + i] / e; /* >= 0: its bits order like its value */
        keys[i] = ((ulong)(i / ncat) << 32) | (ulong)(~as_uint(q));
        vals[i] = i % ncat;
    }
}

/* dst[r, s] := category in place s of row r after the sort. */
__kernel void tocl_mn_take(__global long *dst, tocl_philox_params p, __global const long *vals, long voff,
                           long ncat, long ns)
{
    vals += voff;
    long i = get_global_id(0);
    if (i < p.n)
        dst[tocl_philox_index(&p, i)] = vals[(i / ns) * ncat + i % ns];
}
