/* philox.cl - counter-based Philox4x32-10 uniform and normal random numbers.
 *
 * Built once per destination dtype with -DTOCL_DST_F32 / _F64 / _F16 / _BF16.
 * Work-item g computes counter (offset + g) under key seed and writes logical
 * elements 4g .. 4g+3 of the destination, so values depend only on seed,
 * offset and logical index, never on layout or launch shape. float64 takes
 * 53 bits from two words: word j of counter (c, 0) and of counter (c, 1) in
 * the third counter word, a stream float outputs never use. */
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
#else
typedef float acc_t;
typedef float dst_t;
#endif
#ifndef TOCL_TWO_PI
#define TOCL_TWO_PI (2 * M_PI_F)
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
    ushort h;
    vstore_half_rte(v, 0, (__private half *)&h);
    return vload_half(0, (__private half *)&h);
#elif defined(TOCL_DST_BF16)
    uint u = as_uint(v);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return v;
    return as_float(((u + 0x7fffu + ((u >> 16) & 1u)) >> 16) << 16);
#else
    return v;
#endif
}

/* Store a value that tocl_philox_round already made exact in storage. */
inline void tocl_philox_store(__global dst_t *dst, long i, acc_t v)
{
#if defined(TOCL_DST_F16)
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
