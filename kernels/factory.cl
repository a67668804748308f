/* factory.cl - range factories (arange, linspace, logspace) and triangle
 * indices (tril_indices / triu_indices), writing a dense destination.
 *
 * Built per destination dtype (-DTOCL_DST_F32, _I64, ...), with
 * -DTOCL_HAS_FP64 where the device has doubles. The formulas repeat the
 * CPU's operation by operation (float16/bfloat16 round after each step, as
 * c10::Half arithmetic does), so results match the CPU's. Contraction is
 * off; where the CPU's build contracts a product and a sum (arange and
 * linspace, compiled with FMA in ATen/native/cpu), the kernel calls fma. */

#include "round_storage.h"
#pragma OPENCL FP_CONTRACT OFF
#if defined(TOCL_HAS_FP64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double wide_t;
#else
typedef float wide_t;
#endif

#if defined(TOCL_DST_F64)
typedef double dst_t;
typedef double ar_t;  /* arange accumulation (the CPU's acc_type) */
typedef double lin_t; /* linspace step type */
#elif defined(TOCL_DST_F32)
typedef float dst_t;
typedef wide_t ar_t;
typedef float lin_t;
#elif defined(TOCL_DST_F16)
typedef half dst_t;
typedef float ar_t;
typedef float lin_t;
#define TOCL_DST_LOW 1
#elif defined(TOCL_DST_BF16)
typedef ushort dst_t;
typedef float ar_t;
typedef float lin_t;
#define TOCL_DST_LOW 1
#else
#if defined(TOCL_DST_BOOL) || defined(TOCL_DST_U8)
typedef uchar dst_t;
#elif defined(TOCL_DST_I8)
typedef char dst_t;
#elif defined(TOCL_DST_I16)
typedef short dst_t;
#elif defined(TOCL_DST_I32)
typedef int dst_t;
#else
typedef long dst_t;
#endif
typedef long ar_t;
typedef wide_t lin_t;
#define TOCL_DST_INT 1
#endif

/* Round a float to the storage precision (float16/bfloat16, nearest even). */
inline float tocl_fac_round(float v)
{
#if defined(TOCL_DST_F16)
    return tocl_round_f16(v);
#elif defined(TOCL_DST_BF16)
    return tocl_round_bf16(v);
#else
    return v;
#endif
}

/* Store v (a float value for float16/bfloat16) with a C cast's rounding. */
inline void tocl_fac_store(__global dst_t *dst, long i, wide_t v)
{
#if defined(TOCL_DST_F16)
    vstore_half_rte((float)v, i, dst);
#elif defined(TOCL_DST_BF16)
    dst[i] = (ushort)(as_uint(tocl_fac_round((float)v)) >> 16);
#elif defined(TOCL_DST_BOOL)
    dst[i] = v != 0;
#else
    dst[i] = (dst_t)v; /* float -> int truncates, as a C cast */
#endif
}

/* dst[i] = start + step * i in the accumulation type. */
__kernel void tocl_arange(__global dst_t *dst, long off, long n, ar_t start, ar_t step)
{
    long i = get_global_id(0);
    if (i >= n)
        return;
#if defined(TOCL_DST_INT)
    dst[off + i] = (dst_t)(start + step * i);
#else
    tocl_fac_store(dst, off + i, (wide_t)fma(step, (ar_t)i, start)); /* contracted, as the CPU's build */
#endif
}

/* The CPU's symmetric linspace: the first half counts up from start, the
 * second half down from end. */
__kernel void tocl_linspace(__global dst_t *dst, long off, long n, lin_t start, lin_t end, lin_t step, long halfway)
{
    long i = get_global_id(0);
    if (i >= n)
        return;
#if defined(TOCL_DST_LOW)
    /* c10::Half / BFloat16 arithmetic: int64 -> reduced type, each op rounded */
    float k = tocl_fac_round((float)(i < halfway ? i : n - i - 1));
    float m = tocl_fac_round(step * k);
    float v = tocl_fac_round(i < halfway ? start + m : end - m);
    tocl_fac_store(dst, off + i, v);
#else
    /* the CPU's compiler contracts start + step * i into one fma */
    lin_t v = i < halfway ? fma(step, (lin_t)i, start) : fma(-step, (lin_t)(n - i - 1), end);
    tocl_fac_store(dst, off + i, (wide_t)v);
#endif
}

/* base ** (symmetric linspace of exponents), in double where the device has it. */
__kernel void tocl_logspace(__global dst_t *dst, long off, long n, wide_t start, wide_t end, wide_t step, wide_t base,
                            long halfway)
{
    long i = get_global_id(0);
    if (i >= n)
        return;
    wide_t e = i < halfway ? start + step * (wide_t)i : end - step * (wide_t)(n - i - 1); /* not contracted */
    wide_t v = pow(base, e);
#if defined(TOCL_DST_LOW) || defined(TOCL_DST_F32)
    tocl_fac_store(dst, off + i, (wide_t)(float)v); /* double -> float -> storage, as the CPU's casts */
#else
    tocl_fac_store(dst, off + i, v);
#endif
}

#if defined(TOCL_DST_INT) /* triangle indices are int32 / int64 */
/* Cells in rows [0, r) of the lower triangle (cells (i, j), j <= i + offset,
 * j < col) or of the upper one (j >= i + offset). */
inline long tocl_tri_sum(long x, long col) /* sum over j in [0, x) of clamp(j, 0, col) */
{
    if (x <= 0)
        return 0;
    if (x <= col + 1)
        return x * (x - 1) / 2;
    return col * (col + 1) / 2 + (x - col - 1) * col;
}

inline long tocl_tri_prefix(long r, long col, long offset, int upper)
{
    /* lower: row i has clamp(i + offset + 1, 0, col) cells; upper: col minus
     * clamp(i + offset, 0, col). Sums of clamp over a run are differences of
     * tocl_tri_sum. */
    if (!upper)
        return tocl_tri_sum(offset + 1 + r, col) - tocl_tri_sum(offset + 1, col);
    return r * col - (tocl_tri_sum(offset + r, col) - tocl_tri_sum(offset, col));
}

/* dst is 2 x count, dense: row indices then column indices, row-major order
 * of the cells. Work-item k finds its row by binary search on the prefix. */
__kernel void tocl_tri_indices(__global dst_t *dst, long off, long count, long row, long col, long offset, int upper)
{
    long k = get_global_id(0);
    if (k >= count)
        return;
    long lo = 0, hi = row; /* last r with prefix(r) <= k */
    while (lo < hi) {
        long m = lo + (hi - lo + 1) / 2;
        if (tocl_tri_prefix(m, col, offset, upper) <= k)
            lo = m;
        else
            hi = m - 1;
    }
    long first = upper ? clamp(lo + offset, 0L, col) : 0;
    long c = first + (k - tocl_tri_prefix(lo, col, offset, upper));
    dst[off + k] = (dst_t)lo;
    dst[off + count + k] = (dst_t)c;
}
#endif
