/* fft.cl - batched discrete Fourier transforms: one work-group per
 * transform, a Stockham autosort pass per radix in local memory (no bit
 * reversal; pass q reads at stride n / radix and writes sub-transforms of
 * span ns * radix, ns the product of the earlier radices). Radices 2, 3, 4,
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
typedef double T;
typedef double2 T2;
#define K(c) c
#else
typedef float T;
typedef float2 T2;
#define K(c) c##f
#endif

inline T2 cmul(T2 a, T2 b)
{
    return (T2)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

/* z * -i */
inline T2 mul_mi(T2 z)
{
    return (T2)(z.y, -z.x);
}

/* Table entry e (complex) of the plan's table. */
inline T2 fft_tab(__global const T *tab, long e)
{
    return vload2(e, tab);
}

inline void dft2(T2 *v)
{
    T2 a = v[0];
    v[0] = a + v[1];
    v[1] = a - v[1];
}

inline void dft3(T2 *v)
{
    const T s = K(0.86602540378443864676);
    T2 t1 = v[1] + v[2], t2 = v[0] - K(0.5) * t1, t3 = s * (v[1] - v[2]);
    v[0] += t1;
    v[1] = t2 + mul_mi(t3);
    v[2] = t2 - mul_mi(t3);
}

inline void dft4_to(T2 a, T2 b, T2 c, T2 d, T2 *o)
{
    T2 t0 = a + c, t1 = a - c, t2 = b + d, t3 = mul_mi(b - d);
    o[0] = t0 + t2;
    o[2] = t0 - t2;
    o[1] = t1 + t3;
    o[3] = t1 - t3;
}

inline void dft4(T2 *v)
{
    dft4_to(v[0], v[1], v[2], v[3], v);
}

inline void dft5(T2 *v)
{
    const T c1 = K(0.30901699437494742410), c2 = K(-0.80901699437494742410);
    const T s1 = K(0.95105651629515357212), s2 = K(0.58778525229247312917);
    T2 a1 = v[1] + v[4], b1 = v[1] - v[4], a2 = v[2] + v[3], b2 = v[2] - v[3], x0 = v[0];
    T2 r1 = x0 + c1 * a1 + c2 * a2, i1 = s1 * b1 + s2 * b2;
    T2 r2 = x0 + c2 * a1 + c1 * a2, i2 = s2 * b1 - s1 * b2;
    v[0] = x0 + a1 + a2;
    v[1] = r1 + mul_mi(i1);
    v[4] = r1 - mul_mi(i1);
    v[2] = r2 + mul_mi(i2);
    v[3] = r2 - mul_mi(i2);
}

inline void dft7(T2 *v)
{
    const T c1 = K(0.62348980185873353053), c2 = K(-0.22252093395631440429), c3 = K(-0.90096886790241912624);
    const T s1 = K(0.78183148246802980871), s2 = K(0.97492791218182360702), s3 = K(0.43388373911755812048);
    T2 a1 = v[1] + v[6], b1 = v[1] - v[6], a2 = v[2] + v[5], b2 = v[2] - v[5];
    T2 a3 = v[3] + v[4], b3 = v[3] - v[4], x0 = v[0];
    T2 r1 = x0 + c1 * a1 + c2 * a2 + c3 * a3, i1 = s1 * b1 + s2 * b2 + s3 * b3;
    T2 r2 = x0 + c2 * a1 + c3 * a2 + c1 * a3, i2 = s2 * b1 - s3 * b2 - s1 * b3;
    T2 r3 = x0 + c3 * a1 + c1 * a2 + c2 * a3, i3 = s3 * b1 - s1 * b2 + s2 * b3;
    v[0] = x0 + a1 + a2 + a3;
    v[1] = r1 + mul_mi(i1);
    v[6] = r1 - mul_mi(i1);
    v[2] = r2 + mul_mi(i2);
    v[5] = r2 - mul_mi(i2);
    v[3] = r3 + mul_mi(i3);
    v[4] = r3 - mul_mi(i3);
}

/* Radix 8 as two radix-4 halves (even, odd inputs) joined by w8^k. */
inline void dft8(T2 *v)
{
    const T h = K(0.70710678118654752440);
    T2 e[4], o[4];
    dft4_to(v[0], v[2], v[4], v[6], e);
    dft4_to(v[1], v[3], v[5], v[7], o);
    o[1] = h * (T2)(o[1].x + o[1].y, o[1].y - o[1].x);
    o[2] = mul_mi(o[2]);
    o[3] = h * (T2)(o[3].y - o[3].x, -(o[3].x + o[3].y));
    for (int k = 0; k < 4; k++) {
        v[k] = e[k] + o[k];
        v[k + 4] = e[k] - o[k];
    }
}

/* Radix 16 as two radix-8 halves joined by w16^k. */
inline void dft16(T2 *v)
{
    const T c = K(0.92387953251128675613), s = K(0.38268343236508977173), h = K(0.70710678118654752440);
    T2 e[8], o[8];
    for (int k = 0; k < 8; k++) {
        e[k] = v[2 * k];
        o[k] = v[2 * k + 1];
    }
    dft8(e);
    dft8(o);
    o[1] = cmul(o[1], (T2)(c, -s));
    o[2] = h * (T2)(o[2].x + o[2].y, o[2].y - o[2].x);
    o[3] = cmul(o[3], (T2)(s, -c));
    o[4] = mul_mi(o[4]);
    o[5] = cmul(o[5], (T2)(-s, -c));
    o[6] = h * (T2)(o[6].y - o[6].x, -(o[6].x + o[6].y));
    o[7] = cmul(o[7], (T2)(-c, -s));
    for (int k = 0; k < 8; k++) {
        v[k] = e[k] + o[k];
        v[k + 8] = e[k] - o[k];
    }
}

/* One pass of radix R with butterfly DFT: butterfly u (of m = n / R)
 * reads src[u + t m], twiddles input t by w_{ns R}^{t k} (k = u mod ns),
 * and writes its outputs t to dst[(u - k) R + k + t ns]. */
#define FFT_PASS(R, DFT)                                                       \
    for (long u = lid; u < m; u += W) {                                        \
        long k = u % ns;                                                       \
        T2 v[R];                                                               \
        for (int t = 0; t < R; t++)                                            \
            v[t] = src[u + t * m];                                             \
        if (ns > 1) {                                                          \
            long e = tw + k * (R - 1) - 1;                                     \
            for (int t = 1; t < R; t++)                                        \
                v[t] = cmul(v[t], fft_tab(tab, e + t));                        \
        }                                                                      \
        DFT(v);                                                                \
        long d = (u - k) * R + k;                                              \
        for (int t = 0; t < R; t++)                                            \
            dst[d + t * ns] = v[t];                                            \
    }

/* A radix without a butterfly: one output per work-item, summed directly
 * against the R roots of unity stored after the pass's twiddles. */
inline void fft_pass_direct(__local const T2 *src, __local T2 *dst, __global const T *tab, long n, long ns,
                            long tw, int R, int lid, int W)
{
    long m = n / R, roots = tw + ns * (R - 1);
    for (long o = lid; o < n; o += W) {
        long u = o % m, t = o / m, k = u % ns, e = 0;
        T2 acc = src[u];
        for (int s = 1; s < R; s++) {
            T2 x = src[u + s * m];
            if (ns > 1)
                x = cmul(x, fft_tab(tab, tw + k * (R - 1) + s - 1));
            e += t;
            if (e >= R)
                e -= R;
            acc += cmul(x, fft_tab(tab, roots + e));
        }
        dst[(u - k) * R + k + t * ns] = acc;
    }
}

/* Value p of transform (c0, base) through side s's read rules. */
inline T2 fft_load(__global const T *x, __global const T *tab, tocl_fft_side s, long base, long c0, long p)
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
        v = (T2)(x[a], x[a + 1]);
    }
    if (s.conj_pre)
        v.y = -v.y;
    if (s.tab >= 0)
        v = cmul(v, fft_tab(tab, s.tab + l));
    if (s.conj_post)
        v.y = -v.y;
    return v;
}

/* Value v, output p of transform (c0, base), through side s's write rules. */
inline void fft_store(__global T *y, __global const T *tab, tocl_fft_side s, long base, long c0, long p, T2 v,
                      T scale)
{
    long l = p * s.lmul + c0 * s.lb0;
    if (l >= s.nvalid)
        return;
    if (s.tw4 >= 0)
        v = cmul(v, fft_tab(tab, s.tw4 + p * c0));
    if (s.conj_pre)
        v.y = -v.y;
    if (s.tab >= 0)
        v = cmul(v, fft_tab(tab, s.tab + l));
    if (s.conj_post)
        v.y = -v.y;
    v *= scale;
    long a = base + l * s.stride;
    y[a] = v.x;
    if (s.mode != TOCL_FFT_REAL)
        y[a + 1] = v.y;
}

/* One transform of length p.n per work-group; buf holds 2 n values. */
__kernel void fft_local(__global const T *x, __global T *y, __global const T *tab, __local T2 *buf, T scale,
                        tocl_fft_params p)
{
    int lid = get_local_id(0), W = get_local_size(0);
    long g = p.g0 + get_group_id(0), n = p.n, bi = p.in.off, bo = p.out.off, c0 = 0;
    for (int d = 0; d < TOCL_FFT_MAXB; d++) {
        long c = g % p.bsz[d];
        g /= p.bsz[d];
        bi += c * p.in.bs[d];
        bo += c * p.out.bs[d];
        if (d == 0)
            c0 = c;
    }
    __local T2 *src = buf, *dst = buf + n;
    for (long i = lid; i < n; i += W)
        src[i] = fft_load(x, tab, p.in, bi, c0, i);
    barrier(CLK_LOCAL_MEM_FENCE);
    long ns = 1, tw = p.tw;
    for (int q = 0; q < p.npass; q++) {
        int R = p.radix[q];
        long m = n / R;
        switch (R) {
        case 2: FFT_PASS(2, dft2) break;
        case 3: FFT_PASS(3, dft3) break;
        case 4: FFT_PASS(4, dft4) break;
        case 5: FFT_PASS(5, dft5) break;
        case 7: FFT_PASS(7, dft7) break;
        case 8: FFT_PASS(8, dft8) break;
        case 16: FFT_PASS(16, dft16) break;
        default:
            fft_pass_direct(src, dst, tab, n, ns, tw, R, lid, W);
            tw += R;
        }
        tw += ns * (R - 1);
        ns *= R;
        __local T2 *t = src;
        src = dst;
        dst = t;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (long i = lid; i < n; i += W)
        fft_store(y, tab, p.out, bo, c0, i, src[i], scale);
}
