/* scan.cl - cumulative sum, product, max/min (with indices) and
 * log-sum-exp along one dimension.
 *
 * Built per storage dtype (-DTOCL_SCAN_T_F32, _F64, _F16, _BF16, _BOOL, _U8,
 * _I8, _I16, _I32, _I64) and op (-DTOCL_SCAN_OP_SUM, _PROD, _MAX, _MIN,
 * _LSE, and _CLSE: complex log-sum-exp over pairs (re, im) of F32 / F64). A row is cut into chunks, one work-item each: tocl_scan_totals
 * folds every chunk, tocl_scan_carry turns a row's chunk totals into
 * exclusive prefixes (serially: a row has few chunks), tocl_scan_apply scans
 * each chunk from its prefix. Rows of one chunk need only the last kernel.
 * No atomics: results depend only on the input and the chunk size. */
#include "scan_params.h"

#if defined(TOCL_SCAN_T_F64) || defined(TOCL_SCAN_ACC_F64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#if defined(TOCL_SCAN_T_F32)
typedef float S; typedef float C;
#define LOAD(p, i) (p)[i]
#define STORE(p, i, v) (p)[i] = (v)
#elif defined(TOCL_SCAN_T_F64)
typedef double S; typedef double C;
#define LOAD(p, i) (p)[i]
#define STORE(p, i, v) (p)[i] = (v)
#elif defined(TOCL_SCAN_T_F16)
typedef half S; typedef float C;
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) vstore_half_rte((float)(v), (i), (p))
#elif defined(TOCL_SCAN_T_BF16)
typedef ushort S; typedef float C;
#define LOAD(p, i) as_float((uint)(p)[i] << 16)
#define STORE(p, i, v) (p)[i] = tocl_f2bf((float)(v))
inline ushort tocl_f2bf(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (ushort)0x7fc0;
    return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
#elif defined(TOCL_SCAN_T_BOOL)
typedef uchar S; typedef uchar C;
#define LOAD(p, i) ((uchar)((p)[i] != 0))
#define STORE(p, i, v) (p)[i] = (uchar)((v) != 0)
#else
#if defined(TOCL_SCAN_T_U8)
typedef uchar S;
#elif defined(TOCL_SCAN_T_I8)
typedef char S;
#elif defined(TOCL_SCAN_T_I16)
typedef short S;
#elif defined(TOCL_SCAN_T_I32)
typedef int S;
#else
typedef long S;
#endif
typedef S C;
#define LOAD(p, i) (p)[i]
#define STORE(p, i, v) (p)[i] = (S)(v)
#endif

#if defined(TOCL_SCAN_T_F32) || defined(TOCL_SCAN_T_F64) || defined(TOCL_SCAN_T_F16) || defined(TOCL_SCAN_T_BF16)
#define IS_FLOAT 1
#define C_MIN (-INFINITY)
#define C_MAX INFINITY
#define ISNAN(x) isnan(x)
#else
#define IS_FLOAT 0
#define ISNAN(x) 0
#if defined(TOCL_SCAN_T_BOOL)
#define C_MIN 0
#define C_MAX 1
#elif defined(TOCL_SCAN_T_U8)
#define C_MIN 0
#define C_MAX UCHAR_MAX
#elif defined(TOCL_SCAN_T_I8)
#define C_MIN CHAR_MIN
#define C_MAX CHAR_MAX
#elif defined(TOCL_SCAN_T_I16)
#define C_MIN SHRT_MIN
#define C_MAX SHRT_MAX
#elif defined(TOCL_SCAN_T_I32)
#define C_MIN INT_MIN
#define C_MAX INT_MAX
#else
#define C_MIN LONG_MIN
#define C_MAX LONG_MAX
#endif
#endif

/* Accumulator: sums and products of integers in int64, as PyTorch. */
#if (defined(TOCL_SCAN_OP_SUM) || defined(TOCL_SCAN_OP_PROD)) && !IS_FLOAT
typedef long A;
#elif defined(TOCL_SCAN_OP_CLSE)
/* A complex value is a pair: element offset i holds the real part, i + 1
 * the imaginary one (view_as_real's layout; strides count real elements).
 * complex64 accumulates in complex128 where the device has fp64
 * (-DTOCL_SCAN_ACC_F64), as the CPU's acc_type: in float, exp(min - max)
 * turns denormal and c10's log1p then divides by it (inf, then NaN). */
#if defined(TOCL_SCAN_T_F64) || defined(TOCL_SCAN_ACC_F64)
typedef double2 A;
typedef double R;
#else
typedef float2 A;
typedef float R;
#endif
#undef LOAD
#undef STORE
#define LOAD(p, i) ((A)((R)(p)[i], (R)(p)[(i) + 1]))
#define STORE(p, i, v) ((p)[i] = (S)(v).x, (p)[(i) + 1] = (S)(v).y)
#else
typedef C A;
#endif

typedef struct { A v; long i; } st_t;

#if defined(TOCL_SCAN_OP_SUM)
#define IDENT ((A)0)
inline void st_join(st_t *s, A x, long j) { s->v += x; }
#elif defined(TOCL_SCAN_OP_PROD)
#define IDENT ((A)1)
inline void st_join(st_t *s, A x, long j) { s->v *= x; }
#elif defined(TOCL_SCAN_OP_MAX) || defined(TOCL_SCAN_OP_MIN)
#if defined(TOCL_SCAN_OP_MAX)
#define IDENT ((A)C_MIN)
#define GE(a, b) ((a) >= (b))
#else
#define IDENT ((A)C_MAX)
#define GE(a, b) ((a) <= (b))
#endif
/* Later elements win ties, and a NaN wins until a later NaN, as CPU. */
inline void st_join(st_t *s, A x, long j)
{
    if (ISNAN(x) || (!ISNAN(s->v) && GE(x, s->v))) {
        s->v = x;
        s->i = j;
    }
}
#elif defined(TOCL_SCAN_OP_CLSE)
/* The CPU's complex log-add-exp (ATen/native/cpu/LogAddExp.h) with the
 * std::complex exp/log and c10 log1p, multiply and divide it calls. */
#define IDENT ((A)(-INFINITY, 0))
inline int cx_nan(A z) { return isnan(z.x) || isnan(z.y); }
inline A cx_mul(A a, A b) { return (A)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
inline A cx_div(A a, A b) /* c10::complex's scaled division */
{
    R ac = fabs(b.x), ad = fabs(b.y);
    if (ac >= ad) {
        if (ac == 0 && ad == 0)
            return (A)(a.x / ac, a.y / ad);
        R rat = b.y / b.x, scl = (R)1 / (b.x + b.y * rat);
        return (A)((a.x + a.y * rat) * scl, (a.y - a.x * rat) * scl);
    }
    R rat = b.x / b.y, scl = (R)1 / (b.y + b.x * rat);
    return (A)((a.x * rat + a.y) * scl, (a.y * rat - a.x) * scl);
}
inline A cx_exp(A z)
{
    if (z.x == -INFINITY)
        return (A)(0, 0); /* cexp: a zero whatever the angle */
    R e = exp(z.x);
    if (z.y == 0)
        return (A)(e, z.y); /* cexp keeps an exact zero angle (no inf * 0) */
    return (A)(e * cos(z.y), e * sin(z.y));
}
inline A cx_log(A z) { return (A)(log(hypot(z.x, z.y)), atan2(z.y, z.x)); }
inline A cx_log1p(A z) /* c10's CPU log1p */
{
    A u = (A)(z.x + 1, z.y);
    if (u.x == 1 && u.y == 0)
        return z;
    A lu = cx_log(u), um1 = (A)(u.x - 1, u.y);
    if (um1.x == z.x && um1.y == z.y)
        return lu;
    return cx_mul(lu, cx_div(z, um1));
}
/* The CPU calls _log_add_exp_helper(x, running): NaNs (in either part)
 * win, y first; otherwise the smaller real part is `mn`, ties to y. */
inline void st_join(st_t *s, A x, long j)
{
    A y = s->v, mn, mx;
    if (cx_nan(y))
        mn = mx = y;
    else if (cx_nan(x))
        mn = mx = x;
    else if (x.x < y.x) {
        mn = x;
        mx = y;
    } else {
        mn = y;
        mx = x;
    }
    if (cx_nan(mn))
        s->v = (A)(NAN, NAN);
    else if (!isfinite(mn.x) && mn.x == mx.x)
        s->v = mn.x < 0 ? mn : cx_log(cx_exp(mn) + cx_exp(mx));
    else
        s->v = cx_log1p(cx_exp(mn - mx)) + mx;
}
#else /* LSE */
#define IDENT ((A)(-INFINITY))
inline void st_join(st_t *s, A x, long j)
{
    A a = s->v;
    A mn = isnan(x) ? x : (x < a ? x : a);
    A mx = isnan(x) ? x : (a < x ? x : a);
    if (mn != mx || isfinite(mn))
        s->v = mx + log1p(exp(mn - mx));
}
#endif

/* Element offsets of row `row` in input, output and index tensors. */
inline void row_base(const tocl_scan_params *p, long row, long *bi, long *bo, long *bx)
{
    long i = p->in_off, o = p->out_off, x = p->idx_off;
    for (int d = p->ndim - 1; d >= 0; d--) {
        long c = d > 0 ? row % p->sizes[d] : row;
        row /= p->sizes[d];
        i += c * p->in_rst[d];
        o += c * p->out_rst[d];
        x += c * p->idx_rst[d];
    }
    *bi = i;
    *bo = o;
    *bx = x;
}

__kernel void tocl_scan_totals(__global const S *in, tocl_scan_params p, __global st_t *tmp)
{
    long g = get_global_id(0);
    if (g >= p.rows * p.nchunks)
        return;
    long row = g / p.nchunks, c = g % p.nchunks, bi, bo, bx;
    row_base(&p, row, &bi, &bo, &bx);
    long j1 = min(p.n, (c + 1) * p.chunk);
    st_t s = {IDENT, -1};
    for (long j = c * p.chunk; j < j1; j++)
        st_join(&s, (A)LOAD(in, bi + j * p.in_st), j);
    tmp[p.tmp_off + g] = s;
}

__kernel void tocl_scan_carry(tocl_scan_params p, __global st_t *tmp)
{
    long row = get_global_id(0);
    if (row >= p.rows)
        return;
    st_t s = {IDENT, -1};
    __global st_t *t = tmp + p.tmp_off + row * p.nchunks;
    for (long c = 0; c < p.nchunks; c++) {
        st_t v = t[c];
        t[c] = s;
        st_join(&s, v.v, v.i);
    }
}

__kernel void tocl_scan_apply(__global const S *in, __global S *out, __global long *idx, tocl_scan_params p,
                              __global const st_t *tmp, int has_carry)
{
    long g = get_global_id(0);
    if (g >= p.rows * p.nchunks)
        return;
    long row = g / p.nchunks, c = g % p.nchunks, bi, bo, bx;
    row_base(&p, row, &bi, &bo, &bx);
    long j1 = min(p.n, (c + 1) * p.chunk);
    st_t s = {IDENT, -1};
    if (has_carry)
        s = tmp[p.tmp_off + g];
    for (long j = c * p.chunk; j < j1; j++) {
        st_join(&s, (A)LOAD(in, bi + j * p.in_st), j);
        STORE(out, bo + j * p.out_st, s.v);
#if defined(TOCL_SCAN_OP_MAX) || defined(TOCL_SCAN_OP_MIN)
        idx[bx + j * p.idx_st] = s.i;
#endif
    }
}
