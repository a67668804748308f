/* fft.cl - batched discrete Fourier transforms: one work-group per
 * transform (or, on CPUs, per few transforms in SIMD lanes), loaded in
 * digit-reversed order into local memory, then one in-place
 * decimation-in-time pass per radix (pass q joins transforms of span ns,
 * the product of the earlier radices, into span ns * radix). Radices 2, 3, 4,
 * 5, 7, 8 and 16 have butterflies here; any other (a small prime) runs as a
 * direct DFT pass. Twiddles come from the plan's table, computed on the
 * host in double (runtime/ops/fft_plan.c), never from device sin / cos.
 * Every transform is forward (exp(-2 pi i jk / n)); inverse ones conjugate
 * on load and store, real and Hermitian operands and the chirps of
 * Bluestein's algorithm are read and write rules of a side
 * (fft_params.h). -DFFT_F64 selects double. */
#include "fft_params.h"

#ifdef FFT_F64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define TS double
#define K(c) c
#else
#define TS float
#define K(c) c##f
#endif
typedef TS T;
#ifdef __clang__ /* pocl otherwise leaves the radix-8 and -16 butterflies as calls */
#define INLINE inline __attribute__((always_inline))
#else
#define INLINE inline
#endif
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
typedef CAT(TS, 2) T2;

/* FFT_V transforms per work-group run in the lanes of one vector type (a
 * CPU's SIMD width; 1 on GPUs, whose work-items are the lanes). */
#ifndef FFT_V
#define FFT_V 1
#endif
#if FFT_V == 1
typedef T TV;
#else
typedef CAT(TS, FFT_V) TV;
#endif

/* A complex value per lane. */
typedef struct {
    TV r, i;
} CV;

INLINE CV cv(TV r, TV i)
{
    CV c;
    c.r = r;
    c.i = i;
    return c;
}
INLINE CV c_add(CV a, CV b) { return cv(a.r + b.r, a.i + b.i); }
INLINE CV c_sub(CV a, CV b) { return cv(a.r - b.r, a.i - b.i); }
INLINE CV c_mi(CV a) { return cv(a.i, -a.r); } /* a * -i */
INLINE CV c_scl(CV a, T s) { return cv(a.r * s, a.i * s); }
/* a * w, one w for every lane */
INLINE CV c_mulw(CV a, T2 w) { return cv(a.r * w.x - a.i * w.y, a.r * w.y + a.i * w.x); }
/* x + p a (+ q b (+ r c)), p a + q b (+ r c) */
INLINE CV c_lin1(CV x, T p, CV a) { return cv(x.r + p * a.r, x.i + p * a.i); }
INLINE CV c_lin2(CV x, T p, CV a, T q, CV b) { return cv(x.r + p * a.r + q * b.r, x.i + p * a.i + q * b.i); }
INLINE CV c_lin3(CV x, T p, CV a, T q, CV b, T r, CV c)
{
    return cv(x.r + p * a.r + q * b.r + r * c.r, x.i + p * a.i + q * b.i + r * c.i);
}
INLINE CV c_comb2(T p, CV a, T q, CV b) { return cv(p * a.r + q * b.r, p * a.i + q * b.i); }
INLINE CV c_comb3(T p, CV a, T q, CV b, T r, CV c)
{
    return cv(p * a.r + q * b.r + r * c.r, p * a.i + q * b.i + r * c.i);
}

INLINE T2 cmul(T2 a, T2 b)
{
    return (T2)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

/* Table entry e (complex) of the plan's table. */
INLINE T2 fft_tab(__global const T *tab, long e)
{
    return vload2(e, tab);
}

/* Local values: element e's real lanes at 2e, imaginary at 2e + 1. */
INLINE CV ld(__local const TV *b, long e) { return cv(b[2 * e], b[2 * e + 1]); }
INLINE void st(__local TV *b, long e, CV v)
{
    b[2 * e] = v.r;
    b[2 * e + 1] = v.i;
}

INLINE void dft2(CV *v)
{
    CV a = v[0];
    v[0] = c_add(a, v[1]);
    v[1] = c_sub(a, v[1]);
}

INLINE void dft3(CV *v)
{
    const T s = K(0.86602540378443864676);
    CV t1 = c_add(v[1], v[2]), t2 = c_lin1(v[0], K(-0.5), t1), t3 = c_mi(c_scl(c_sub(v[1], v[2]), s));
    v[0] = c_add(v[0], t1);
    v[1] = c_add(t2, t3);
    v[2] = c_sub(t2, t3);
}

INLINE void dft4_to(CV a, CV b, CV c, CV d, CV *o)
{
    CV t0 = c_add(a, c), t1 = c_sub(a, c), t2 = c_add(b, d), t3 = c_mi(c_sub(b, d));
    o[0] = c_add(t0, t2);
    o[2] = c_sub(t0, t2);
    o[1] = c_add(t1, t3);
    o[3] = c_sub(t1, t3);
}

INLINE void dft4(CV *v)
{
    dft4_to(v[0], v[1], v[2], v[3], v);
}

INLINE void dft5(CV *v)
{
    const T c1 = K(0.30901699437494742410), c2 = K(-0.80901699437494742410);
    const T s1 = K(0.95105651629515357212), s2 = K(0.58778525229247312917);
    CV a1 = c_add(v[1], v[4]), b1 = c_sub(v[1], v[4]), a2 = c_add(v[2], v[3]), b2 = c_sub(v[2], v[3]);
    CV x0 = v[0];
    CV r1 = c_lin2(x0, c1, a1, c2, a2), i1 = c_mi(c_comb2(s1, b1, s2, b2));
    CV r2 = c_lin2(x0, c2, a1, c1, a2), i2 = c_mi(c_comb2(s2, b1, -s1, b2));
    v[0] = c_add(x0, c_add(a1, a2));
    v[1] = c_add(r1, i1);
    v[4] = c_sub(r1, i1);
    v[2] = c_add(r2, i2);
    v[3] = c_sub(r2, i2);
}

INLINE void dft7(CV *v)
{
    const T c1 = K(0.62348980185873353053), c2 = K(-0.22252093395631440429), c3 = K(-0.90096886790241912624);
    const T s1 = K(0.78183148246802980871), s2 = K(0.97492791218182360702), s3 = K(0.43388373911755812048);
    CV a1 = c_add(v[1], v[6]), b1 = c_sub(v[1], v[6]), a2 = c_add(v[2], v[5]), b2 = c_sub(v[2], v[5]);
    CV a3 = c_add(v[3], v[4]), b3 = c_sub(v[3], v[4]), x0 = v[0];
    CV r1 = c_lin3(x0, c1, a1, c2, a2, c3, a3), i1 = c_mi(c_comb3(s1, b1, s2, b2, s3, b3));
    CV r2 = c_lin3(x0, c2, a1, c3, a2, c1, a3), i2 = c_mi(c_comb3(s2, b1, -s3, b2, -s1, b3));
    CV r3 = c_lin3(x0, c3, a1, c1, a2, c2, a3), i3 = c_mi(c_comb3(s3, b1, -s1, b2, s2, b3));
    v[0] = c_add(x0, c_add(a1, c_add(a2, a3)));
    v[1] = c_add(r1, i1);
    v[6] = c_sub(r1, i1);
    v[2] = c_add(r2, i2);
    v[5] = c_sub(r2, i2);
    v[3] = c_add(r3, i3);
    v[4] = c_sub(r3, i3);
}

/* (1 - i) / sqrt 2 * a and (-1 - i) / sqrt 2 * a: w8 and w8^3 */
INLINE CV c_w8(CV a, T h) { return cv(h * (a.r + a.i), h * (a.i - a.r)); }
INLINE CV c_w8_3(CV a, T h) { return cv(h * (a.i - a.r), -h * (a.r + a.i)); }

/* Radix 8 as two radix-4 halves (even, odd inputs) joined by w8^k. */
INLINE void dft8(CV *v)
{
    const T h = K(0.70710678118654752440);
    CV e[4], o[4];
    dft4_to(v[0], v[2], v[4], v[6], e);
    dft4_to(v[1], v[3], v[5], v[7], o);
    o[1] = c_w8(o[1], h);
    o[2] = c_mi(o[2]);
    o[3] = c_w8_3(o[3], h);
#pragma unroll
    for (int k = 0; k < 4; k++) {
        v[k] = c_add(e[k], o[k]);
        v[k + 4] = c_sub(e[k], o[k]);
    }
}

/* Radix 16 as two radix-8 halves joined by w16^k. */
INLINE void dft16(CV *v)
{
    const T c = K(0.92387953251128675613), s = K(0.38268343236508977173), h = K(0.70710678118654752440);
    CV e[8], o[8];
#pragma unroll
    for (int k = 0; k < 8; k++) {
        e[k] = v[2 * k];
        o[k] = v[2 * k + 1];
    }
    dft8(e);
    dft8(o);
    o[1] = c_mulw(o[1], (T2)(c, -s));
    o[2] = c_w8(o[2], h);
    o[3] = c_mulw(o[3], (T2)(s, -c));
    o[4] = c_mi(o[4]);
    o[5] = c_mulw(o[5], (T2)(-s, -c));
    o[6] = c_w8_3(o[6], h);
    o[7] = c_mulw(o[7], (T2)(-c, -s));
#pragma unroll
    for (int k = 0; k < 8; k++) {
        v[k] = c_add(e[k], o[k]);
        v[k + 8] = c_sub(e[k], o[k]);
    }
}

/* One in-place pass of radix R with butterfly DFT (decimation in time):
 * butterfly u (of n / R) joins R transforms of span ns into one of span
 * ns R; its values sit at base + t ns (base = (u / ns) ns R + k, k = u mod
 * ns), input t is twiddled by w_{ns R}^{t k} and output t goes back to
 * input t's place. Butterflies share no values, so a pass needs no barrier
 * inside. */
#define FFT_PASS(R, DFT)                                                       \
    for (int u = lid; u < n / R; u += W) {                                     \
        int blk = u / ns, k = u - blk * ns, base = blk * ns * R + k;           \
        CV v[R];                                                               \
        _Pragma("unroll") for (int t = 0; t < R; t++)                          \
            v[t] = ld(buf, base + t * ns);                                     \
        if (ns > 1) {                                                          \
            long e = tw + k * (R - 1) - 1;                                     \
            _Pragma("unroll") for (int t = 1; t < R; t++)                      \
                v[t] = c_mulw(v[t], fft_tab(tab, e + t));                      \
        }                                                                      \
        DFT(v);                                                                \
        _Pragma("unroll") for (int t = 0; t < R; t++)                          \
            st(buf, base + t * ns, v[t]);                                      \
    }

/* A radix without a butterfly: one output per work-item, summed directly
 * against the R roots of unity stored after the pass's twiddles, into
 * tmp (other outputs of a butterfly still need its inputs), then copied
 * back. */
INLINE void fft_pass_direct(__local TV *buf, __local TV *tmp, __global const T *tab, int n, int ns, long tw, int R,
                            int lid, int W)
{
    long roots = tw + (long)ns * (R - 1);
    for (int o = lid; o < n; o += W) {
        int span = ns * R, blk = o / span, q = (o - blk * span) / ns, k = o - blk * span - q * ns;
        int base = blk * span + k, e = 0;
        CV acc = ld(buf, base);
        for (int t = 1; t < R; t++) {
            CV x = ld(buf, base + t * ns);
            if (ns > 1)
                x = c_mulw(x, fft_tab(tab, tw + (long)k * (R - 1) + t - 1));
            e += q;
            if (e >= R)
                e -= R;
            acc = c_add(acc, c_mulw(x, fft_tab(tab, roots + e)));
        }
        st(tmp, o, acc);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int o = lid; o < n; o += W)
        st(buf, o, ld(tmp, o));
}

/* Value p of transform (c0, base) through side s's read rules. */
INLINE T2 fft_load(__global const T *x, __global const T *tab, tocl_fft_side s, long base, long c0, long p)
{
    long l = p * s.lmul + c0 * s.lb0;
    if (l >= s.nvalid)
        return (T2)(0, 0);
    T2 v;
    if (s.mode == TOCL_FFT_REAL) {
        v = (T2)(x[base + l * s.stride], 0);
    } else if (s.mode == TOCL_FFT_HERMITIAN) {
        long h = 2 * l <= s.len ? l : s.len - l, a = base + h * s.stride;
        v = (T2)(x[a], h == 0 || 2 * h == s.len ? 0 : x[a + 1]);
        if (h != l)
            v.y = -v.y;
    } else {
        long a = base + l * s.stride;
        v = (T2)(x[a], x[a + s.im]);
    }
    if (s.conj_pre)
        v.y = -v.y;
    if (s.tab >= 0)
        v = cmul(v, fft_tab(tab, s.tab + l));
    if (s.conj_post)
        v.y = -v.y;
    return v;
}

/* How many of the n positions p of a transform map to l = p lmul + l0 <
 * nvalid: the rest load zeros and store nothing. */
INLINE long fft_valid(tocl_fft_side s, long l0, long n)
{
    long k = s.nvalid <= l0 ? 0 : (s.nvalid - l0 + s.lmul - 1) / s.lmul;
    return k < n ? k : n;
}

/* Whether the lanes' transforms sit closer together in memory than the
 * values of one transform (lane 1 from lane 0 against value 1 from value
 * 0): then the lanes are walked together. Either walk is correct. */
INLINE int fft_interleaved(tocl_fft_side s, const long *base, const long *c0)
{
    if (FFT_V == 1 || s.mode >= TOCL_FFT_HALF_PACKED)
        return 0;
    long lane = base[1] - base[0] + (c0[1] - c0[0]) * s.lb0 * s.stride;
    return abs(lane) < abs(s.lmul * s.stride);
}

/* Lane v's n input values of one transform (batch offset base, slot 0
 * coordinate c0) into sv (lane v's first scalar in local memory, values
 * 2 V apart, imaginary parts V after the real ones), value i at place
 * perm[i] (the digit reversal of in-place passes); past `valid`, zeros.
 * One lane at a time: for transforms far apart in memory, each lane is a
 * stream of its own. */
INLINE void fft_load_lane(__global const T *x, __global const T *tab, __global const int *perm, tocl_fft_side s,
                          long base, long c0, long valid, long n, __local T *sv, int lid, int W)
{
    long l0 = c0 * s.lb0;
    if (s.mode == TOCL_FFT_HERMITIAN) {
        for (long i = lid; i < valid; i += W) {
            T2 a = fft_load(x, tab, s, base, c0, i);
            long d = 2 * FFT_V * (long)perm[i];
            sv[d] = a.x;
            sv[d + FFT_V] = a.y;
        }
    } else if (s.mode == TOCL_FFT_HALF_PACKED) {
        long h = s.len / 2;
        for (long k = lid; k < valid; k += W) {
            long a = base + k * s.stride, b = base + (h - k) * s.stride, d = 2 * FFT_V * (long)perm[k];
            T2 u = (T2)(x[a], k == 0 ? 0 : x[a + 1]), c = (T2)(x[b], k == 0 ? 0 : -x[b + 1]); /* X_k, conj X_h-k */
            T2 w = fft_tab(tab, s.htw + k), o = cmul(u - c, (T2)(w.x, -w.y));
            T2 z = (T2)(u.x + c.x - o.y, u.y + c.y + o.x); /* (u + c) + i o */
            sv[d] = z.x;
            sv[d + FFT_V] = s.conj_pre ? -z.y : z.y;
        }
    } else {
        long a0 = base + l0 * s.stride, da = s.lmul * s.stride;
        T sp = s.conj_pre ? -1 : 1, sq = s.conj_post ? -1 : 1;
        int cplx = s.mode == TOCL_FFT_COMPLEX;
        for (long i = lid; i < valid; i += W) {
            long a = a0 + i * da, d = 2 * FFT_V * (long)perm[i];
            T2 v = (T2)(x[a], cplx ? x[a + s.im] * sp : 0);
            if (s.tab >= 0)
                v = cmul(v, fft_tab(tab, s.tab + l0 + i * s.lmul));
            sv[d] = v.x;
            sv[d + FFT_V] = v.y * sq;
        }
    }
    for (long i = valid + lid; i < n; i += W) {
        long d = 2 * FFT_V * (long)perm[i];
        sv[d] = 0;
        sv[d + FFT_V] = 0;
    }
}

/* Lane v's first `valid` results (laid out as fft_load_lane's) through
 * side s's write rules. */
INLINE void fft_store_lane(__global T *y, __global const T *tab, tocl_fft_side s, long base, long c0, long valid,
                           long n, __local const T *sv, T scale, int lid, int W)
{
    long l0 = c0 * s.lb0, a0 = base + l0 * s.stride, da = s.lmul * s.stride;
    T sp = s.conj_pre ? -1 : 1, sq = s.conj_post ? -scale : scale;
    if (s.mode == TOCL_FFT_HALF_UNPACK) {
        long h = s.len / 2;
        for (long k = lid; k < valid; k += W) {
            long kk = k <= h ? k : s.len - k, i = kk == h ? 0 : kk, j = kk == 0 ? 0 : h - kk;
            T2 u = (T2)(sv[2 * FFT_V * i], sv[2 * FFT_V * i + FFT_V]);
            T2 c = (T2)(sv[2 * FFT_V * j], -sv[2 * FFT_V * j + FFT_V]); /* Z_k, conj Z_h-k */
            T2 e = u + c, o = cmul(u - c, fft_tab(tab, s.htw + kk)); /* 2 E_k, 2i w^k O_k */
            T2 v = (T2)(e.x + o.y, e.y - o.x) * (T)0.5;                /* E_k + w^k O_k */
            long a = base + k * s.stride;
            y[a] = v.x * scale;
            y[a + 1] = (k <= h ? v.y : -v.y) * scale;
        }
        return;
    }
    int cplx = s.mode != TOCL_FFT_REAL;
    for (long i = lid; i < valid; i += W) {
        T2 v = (T2)(sv[2 * FFT_V * i], sv[2 * FFT_V * i + FFT_V]);
        if (s.tw4 >= 0)
            v = cmul(v, fft_tab(tab, s.tw4 + i * c0));
        v.y *= sp;
        if (s.tab >= 0)
            v = cmul(v, fft_tab(tab, s.tab + l0 + i * s.lmul));
        long a = a0 + i * da;
        y[a] = v.x * scale;
        if (cplx)
            y[a + s.im] = v.y * sq;
    }
}

/* The same for every lane at once (lane v: transform with batch offset
 * bi[v], slot 0 coordinate c0[v]; dead lanes nv[v] = 0), lanes the inner
 * loop: for transforms interleaved in memory, whose lanes share cache
 * lines. */
INLINE void fft_load_all(__global const T *x, __global const T *tab, __global const int *perm, tocl_fft_side s,
                         const long *bi, const long *c0, const long *nv, long n, __local T *sv, int lid, int W)
{
    if (s.mode == TOCL_FFT_HERMITIAN) { /* mirrored reads: one lane at a time */
        for (int v = 0; v < FFT_V; v++)
            for (long i = lid; i < n; i += W) {
                T2 a = i < nv[v] ? fft_load(x, tab, s, bi[v], c0[v], i) : (T2)(0, 0);
                long d = 2 * FFT_V * (long)perm[i] + v;
                sv[d] = a.x;
                sv[d + FFT_V] = a.y;
            }
        return;
    }
    long a0[FFT_V], l0[FFT_V], da = s.lmul * s.stride;
    for (int v = 0; v < FFT_V; v++) {
        l0[v] = c0[v] * s.lb0;
        a0[v] = bi[v] + l0[v] * s.stride;
    }
    T sp = s.conj_pre ? -1 : 1, sq = s.conj_post ? -1 : 1;
    int cplx = s.mode == TOCL_FFT_COMPLEX;
    for (long i = lid; i < n; i += W) {
        long d = 2 * FFT_V * (long)perm[i];
#pragma unroll
        for (int v = 0; v < FFT_V; v++) {
            T2 a = (T2)(0, 0);
            if (i < nv[v]) {
                long ad = a0[v] + i * da;
                a = (T2)(x[ad], cplx ? x[ad + s.im] * sp : 0);
                if (s.tab >= 0)
                    a = cmul(a, fft_tab(tab, s.tab + l0[v] + i * s.lmul));
                a.y *= sq;
            }
            sv[d + v] = a.x;
            sv[d + FFT_V + v] = a.y;
        }
    }
}

/* Every lane's results through side s's write rules, lanes the inner loop;
 * lane v stores its first nv[v]. */
INLINE void fft_store_all(__global T *y, __global const T *tab, tocl_fft_side s, const long *bo, const long *c0,
                          const long *nv, long n, __local const T *sv, T scale, int lid, int W)
{
    long a0[FFT_V], l0[FFT_V], da = s.lmul * s.stride;
    for (int v = 0; v < FFT_V; v++) {
        l0[v] = c0[v] * s.lb0;
        a0[v] = bo[v] + l0[v] * s.stride;
    }
    T sp = s.conj_pre ? -1 : 1, sq = s.conj_post ? -scale : scale;
    int cplx = s.mode != TOCL_FFT_REAL;
    for (long i = lid; i < n; i += W) {
#pragma unroll
        for (int v = 0; v < FFT_V; v++) {
            if (i >= nv[v])
                continue;
            T2 a = (T2)(sv[2 * FFT_V * i + v], sv[2 * FFT_V * i + FFT_V + v]);
            if (s.tw4 >= 0)
                a = cmul(a, fft_tab(tab, s.tw4 + i * c0[v]));
            a.y *= sp;
            if (s.tab >= 0)
                a = cmul(a, fft_tab(tab, s.tab + l0[v] + i * s.lmul));
            long ad = a0[v] + i * da;
            y[ad] = a.x * scale;
            if (cplx)
                y[ad + s.im] = a.y * sq;
        }
    }
}

/* Transforms FFT_V g .. FFT_V g + FFT_V - 1 of length p.n in work-group g
 * (one per lane; lanes past the batch load zeros and store nothing); buf
 * holds n values per lane, twice that for plans with a direct pass. */
__kernel void fft_local(__global const T *x, __global T *y, __global const T *tab, __global const int *perm,
                        __local TV *buf, T scale, tocl_fft_params p)
{
    int lid = get_local_id(0), W = get_local_size(0), n = (int)p.n;
    long g = (p.g0 + get_group_id(0)) * FFT_V;
    long bi[FFT_V], bo[FFT_V], c0[FFT_V];
    int live[FFT_V];
    for (int v = 0; v < FFT_V; v++) {
        long r = g + v;
        live[v] = r < p.batch;
        bi[v] = p.in.off;
        bo[v] = p.out.off;
        for (int d = 0; d < TOCL_FFT_MAXB; d++) {
            long c = r % p.bsz[d];
            r /= p.bsz[d];
            bi[v] += c * p.in.bs[d];
            bo[v] += c * p.out.bs[d];
            if (d == 0)
                c0[v] = c;
        }
    }
    long ni[FFT_V], no[FFT_V];
    for (int v = 0; v < FFT_V; v++) {
        ni[v] = live[v] ? fft_valid(p.in, c0[v] * p.in.lb0, n) : 0;
        no[v] = !live[v] ? 0 : p.out.mode == TOCL_FFT_HALF_UNPACK ? p.out.nvalid : fft_valid(p.out, c0[v] * p.out.lb0, n);
    }
    perm += p.perm;
    if (fft_interleaved(p.in, bi, c0))
        fft_load_all(x, tab, perm, p.in, bi, c0, ni, n, (__local T *)buf, lid, W);
    else
        for (int v = 0; v < FFT_V; v++)
            fft_load_lane(x, tab, perm, p.in, bi[v], c0[v], ni[v], n, (__local T *)buf + v, lid, W);
    barrier(CLK_LOCAL_MEM_FENCE);
    int ns = 1;
    long tw = p.tw;
    for (int q = 0; q < p.npass; q++) {
        int R = p.radix[q];
        switch (R) {
        case 2: FFT_PASS(2, dft2) break;
        case 3: FFT_PASS(3, dft3) break;
        case 4: FFT_PASS(4, dft4) break;
        case 5: FFT_PASS(5, dft5) break;
        case 7: FFT_PASS(7, dft7) break;
        case 8: FFT_PASS(8, dft8) break;
        case 16: FFT_PASS(16, dft16) break;
        default:
            fft_pass_direct(buf, buf + 2 * n, tab, n, ns, tw, R, lid, W);
            tw += R;
        }
        tw += (long)ns * (R - 1);
        ns *= R;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (fft_interleaved(p.out, bo, c0))
        fft_store_all(y, tab, p.out, bo, c0, no, n, (__local const T *)buf, scale, lid, W);
    else
        for (int v = 0; v < FFT_V; v++)
            fft_store_lane(y, tab, p.out, bo[v], c0[v], no[v], n, (__local const T *)buf + v, scale, lid, W);
}
