/* grid_sample.cl - grid_sampler_2d/3d forward and backward: bilinear
 * (trilinear in 3-d), nearest and (2-d) bicubic sampling of an input
 * [N, C, (D,) H, W] at the points of a grid [N, (OD,) OH, OW, dims] in
 * [-1, 1], with zeros, border or reflection padding.
 *
 * One work-item per (batch, grid point): it maps the point to input
 * coordinates and taps once, then loops over the channels. The backward
 * scatters into grad_input from arbitrary points, into an accumulator of
 * the arithmetic type (grad_input itself for float32/float64, a scratch
 * block that gs_store converts for float16/bfloat16): gs_bwd_in walks the
 * points in order per (batch, channel block), as the CPU does, when there
 * are planes enough for every compute unit or the walks are short (the
 * host decides); with few planes and many points gs_bwd adds with
 * compare-and-swap atomics instead, and sums of one element may come in
 * any order, as on CUDA. grad_grid is a sum over channels within one item,
 * so it is written once. Formulas and their order of operations follow
 * ATen's GridSampler.h/GridSampler.cpp (the 3-d and scalar kernels), so 3-d
 * results match the CPU's bits; the CPU's vectorised 2-d kernel rounds
 * differently in places.
 *
 * Build options: the nn storage roles (nn_params.h) X input, T grid,
 * Y output, G grad_output, Z grad_input, S grad_grid; GS_DIMS (2 or 3),
 * GS_MODE (TOCL_GS_*); GS_ATOMIC64 where float64 accumulation has 64-bit
 * atomics (cl_khr_int64_base_atomics). Padding and align_corners are
 * arguments: they cost a branch, not a program. */
#include "nn_params.h"
#include "grid_sample_params.h"

/* No contraction of a * b + c into fma: the CPU rounds the product and the
 * sum separately (its reference build has no FMA), and an fma in the
 * weights or the channel sums moves float32 results by several ulps. */
#pragma OPENCL FP_CONTRACT OFF

#if GS_MODE == TOCL_GS_BICUBIC
#define GS_TAPS 16 /* 4 x 4, 2-d only (the host checks) */
#elif GS_MODE == TOCL_GS_NEAREST
#define GS_TAPS 1
#else
#define GS_TAPS (1 << GS_DIMS)
#endif

/* Grid value -> pixel coordinate along a dimension of `size`; *gm := its
 * derivative. -1 and 1 are the corner pixels' centres (align_corners) or
 * the image edges. */
inline acc_t gs_unnormalize(acc_t c, long size, int align, acc_t *gm)
{
    acc_t s = align ? (acc_t)(size - 1) / 2 : (acc_t)size / 2;
    *gm = s;
    return align ? (c + 1) * s : (c + 1) * s - (acc_t)0.5;
}

/* Clamp to [0, size - 1]; the borders count as outside for the gradient. */
inline acc_t gs_clip(acc_t c, long size, acc_t *g)
{
    acc_t hi = (acc_t)(size - 1);
    *g = 0;
    if (c <= 0)
        return 0;
    if (c >= hi)
        return hi;
    *g = 1;
    return c;
}

/* Reflect into [lo, hi] given as twice their values (half-integers stay
 * exact); *g := +-1, the slope at c. */
inline acc_t gs_reflect(acc_t c, long twice_lo, long twice_hi, acc_t *g)
{
    if (twice_lo == twice_hi) {
        *g = 0;
        return 0;
    }
    acc_t lo = (acc_t)twice_lo / 2, span = (acc_t)(twice_hi - twice_lo) / 2, sign = 1;
    c -= lo;
    if (c < 0) {
        sign = -1;
        c = -c;
    }
    acc_t extra = fmod(c, span);
    /* parity in floating point: an int cast would overflow for far points */
    if (fmod(floor(c / span), (acc_t)2) == 0) {
        *g = sign;
        return extra + lo;
    }
    *g = -sign;
    return span - extra + lo;
}

/* The padding mode's map of a pixel coordinate back into the image (zeros
 * padding leaves it); *g := its derivative. */
inline acc_t gs_pad(acc_t c, long size, int padding, int align, acc_t *g)
{
    acc_t gc, gr;
    *g = 1;
    if (padding == TOCL_GS_PAD_BORDER) {
        c = gs_clip(c, size, &gc);
        *g = gc;
    } else if (padding == TOCL_GS_PAD_REFLECTION) {
        c = align ? gs_reflect(c, 0, 2 * (size - 1), &gr) : gs_reflect(c, -1, 2 * size - 1, &gr);
        c = gs_clip(c, size, &gc);
        *g = gr * gc;
    }
    return c;
}

/* An integral coordinate inside [0, size): compared as a float, so points
 * far outside (or NaN) never reach an integer conversion. */
inline int gs_inside(acc_t i, long size)
{
    return i >= 0 && i < (acc_t)size;
}

/* PyTorch's cubic convolution coefficients (A = -0.75) for fraction t, and
 * their derivatives with the CPU's sign convention (negated d/dt). */
inline void gs_cubic(acc_t t, acc_t *w)
{
    const acc_t A = (acc_t)-0.75;
    acc_t x = t + 1;
    w[0] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    w[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
    x = 1 - t;
    w[2] = ((A + 2) * x - (A + 3)) * x * x + 1;
    x += 1;
    w[3] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
}
inline void gs_cubic_grad(acc_t t, acc_t *w)
{
    const acc_t A = (acc_t)-0.75;
    acc_t x = -1 - t;
    w[0] = (-3 * A * x - 10 * A) * x - 8 * A;
    x = -t;
    w[1] = (-3 * (A + 2) * x - 2 * (A + 3)) * x;
    x = 1 - t;
    w[2] = (3 * (A + 2) * x - 2 * (A + 3)) * x;
    x = 2 - t;
    w[3] = (3 * A * x - 10 * A) * x + 8 * A;
}

/* Work-item -> (batch n, grid point); *pos its D/H/W indices. -1 past the end. */
inline long gs_point(const tocl_gs_params *p, long *pos)
{
    long g = get_global_id(0), P = p->osz[0] * p->osz[1] * p->osz[2];
    long n = g / P, sp = g - n * P;
    pos[2] = sp % p->osz[2];
    pos[1] = (sp / p->osz[2]) % p->osz[1];
    pos[0] = sp / (p->osz[2] * p->osz[1]);
    return n < p->N ? n : -1;
}

/* The taps of one grid point: input offsets xo (relative to the channel
 * plane), accumulator offsets zo, weights w, and for the grid gradient
 * dw[k] (d weight / d coordinate k, bilinear) or the cubic factors.
 * ok[t] = 0 for a tap outside the image (it reads 0 and receives nothing).
 * mult[k] = d coordinate k / d grid value k. */
typedef struct gs_taps {
    long xo[GS_TAPS], zo[GS_TAPS];
    acc_t w[GS_TAPS];
    int ok[GS_TAPS];
#if GS_MODE == TOCL_GS_BILINEAR
    acc_t wk[GS_TAPS][GS_DIMS][2]; /* per coordinate k: the other dims' weights, x before y before z */
#elif GS_MODE == TOCL_GS_BICUBIC
    acc_t cx[4], cy[4], gx[4], gy[4];
#endif
    acc_t mult[GS_DIMS];
} gs_taps;

inline void gs_tap_at(const tocl_gs_params *p, gs_taps *tp, int t, const acc_t *ic)
{
    int ok = 1;
    long xo = 0, zo = 0;
    for (int k = 0; k < GS_DIMS; k++) {
        ok = ok && gs_inside(ic[k], p->isz[k]);
        if (ok) {
            long i = (long)ic[k];
            xo += i * p->x_sk[k];
            zo += i * p->z_sk[k];
        }
    }
    tp->ok[t] = ok;
    tp->xo[t] = ok ? xo : 0;
    tp->zo[t] = ok ? zo : 0;
}

inline void gs_taps_of(const tocl_gs_params *p, __global const T_T *grid, long n, const long *pos, gs_taps *tp,
                       int grads)
{
    long gb = p->t_off + n * p->t_sn + pos[0] * p->t_sp[0] + pos[1] * p->t_sp[1] + pos[2] * p->t_sp[2];
    acc_t src[GS_DIMS];
    for (int k = 0; k < GS_DIMS; k++) {
        acc_t gm, gp = 1;
        src[k] = gs_unnormalize(LDT(grid, gb + k * p->t_sk), p->isz[k], p->align_corners, &gm);
#if GS_MODE != TOCL_GS_BICUBIC /* bicubic pads each tap instead */
        src[k] = gs_pad(src[k], p->isz[k], p->padding, p->align_corners, &gp);
#endif
        tp->mult[k] = gm * gp;
    }
#if GS_MODE == TOCL_GS_NEAREST
    acc_t ic[GS_DIMS];
    for (int k = 0; k < GS_DIMS; k++)
        ic[k] = rint(src[k]); /* half to even, as nearbyint */
    gs_tap_at(p, tp, 0, ic);
    tp->w[0] = 1;
#elif GS_MODE == TOCL_GS_BILINEAR
    acc_t f[GS_DIMS], w0[GS_DIMS], w1[GS_DIMS];
    for (int k = 0; k < GS_DIMS; k++) {
        f[k] = floor(src[k]);
        w0[k] = (f[k] + 1) - src[k];
        w1[k] = src[k] - f[k];
    }
    for (int t = 0; t < GS_TAPS; t++) {
        acc_t ic[GS_DIMS], w = 1;
        for (int k = 0; k < GS_DIMS; k++) {
            int b = (t >> k) & 1;
            ic[k] = f[k] + b;
            w *= b ? w1[k] : w0[k];
        }
        gs_tap_at(p, tp, t, ic);
        tp->w[t] = w;
        for (int k = 0; grads && k < GS_DIMS; k++) {
            int q = 0;
            tp->wk[t][k][1] = 1;
            for (int j = 0; j < GS_DIMS; j++)
                if (j != k)
                    tp->wk[t][k][q++] = ((t >> j) & 1) ? w1[j] : w0[j];
        }
    }
#else
    acc_t fx = floor(src[0]), fy = floor(src[1]);
    gs_cubic(src[0] - fx, tp->cx);
    gs_cubic(src[1] - fy, tp->cy);
    if (grads) {
        gs_cubic_grad(src[0] - fx, tp->gx);
        gs_cubic_grad(src[1] - fy, tp->gy);
    }
    for (int i = 0; i < 4; i++)     /* rows (y) */
        for (int j = 0; j < 4; j++) { /* columns (x) */
            acc_t g, ic[2];
            ic[0] = trunc(gs_pad(fx - 1 + j, p->isz[0], p->padding, p->align_corners, &g));
            ic[1] = trunc(gs_pad(fy - 1 + i, p->isz[1], p->padding, p->align_corners, &g));
            gs_tap_at(p, tp, i * 4 + j, ic);
            tp->w[i * 4 + j] = tp->cx[j] * tp->cy[i];
        }
#endif
}

__kernel void gs_fwd(__global const X_T *x, __global const T_T *grid, __global Y_T *y, tocl_gs_params p)
{
    long pos[3];
    long n = gs_point(&p, pos);
    if (n < 0)
        return;
    gs_taps tp;
    gs_taps_of(&p, grid, n, pos, &tp, 0);
    long xb = p.x_off + n * p.x_sn;
    long yb = p.y_off + n * p.y_sn + pos[0] * p.y_sp[0] + pos[1] * p.y_sp[1] + pos[2] * p.y_sp[2];
    for (long c = 0; c < p.C; c++) {
        long xc = xb + c * p.x_sc;
        acc_t s = 0;
#if GS_MODE == TOCL_GS_BICUBIC
        for (int i = 0; i < 4; i++) { /* the CPU's order: rows along x, then across y */
            acc_t r = 0;
            for (int j = 0; j < 4; j++)
                r += (tp.ok[i * 4 + j] ? LDX(x, xc + tp.xo[i * 4 + j]) : 0) * tp.cx[j];
            s += r * tp.cy[i];
        }
#else
        for (int t = 0; t < GS_TAPS; t++)
            if (tp.ok[t])
                s += LDX(x, xc + tp.xo[t]) * tp.w[t];
#endif
        STY(y, yb + c * p.y_sc, s);
    }
}

#if defined(GS_ATOMIC64)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif
/* *a += v by compare-and-swap on the bits (no float atomics in OpenCL 1.2).
 * float64 without 64-bit atomics: never called (the host takes gs_bwd_in
 * for grad_input there), but the kernel still serves grad_grid. */
inline void gs_atomic_add(__global acc_t *a, acc_t v)
{
#if defined(NN_ACC_F64) && !defined(GS_ATOMIC64)
#elif defined(NN_ACC_F64)
    volatile __global ulong *u = (volatile __global ulong *)a;
    ulong seen, old = *u;
    do {
        seen = old;
        old = atom_cmpxchg(u, seen, as_ulong(as_double(seen) + v));
    } while (old != seen);
#else
    volatile __global uint *u = (volatile __global uint *)a;
    uint seen, old = *u;
    do {
        seen = old;
        old = atomic_cmpxchg(u, seen, as_uint(as_float(seen) + v));
    } while (old != seen);
#endif
}

/* z: the grad_input accumulator (zeroed by gs_zero), read when flags has
 * TOCL_GS_GRAD_INPUT; s: grad_grid, written when it has TOCL_GS_GRAD_GRID. */
__kernel void gs_bwd(__global const G_T *g, __global const X_T *x, __global const T_T *grid, __global acc_t *z,
                     __global S_T *s, tocl_gs_params p)
{
    long pos[3];
    long n = gs_point(&p, pos);
    if (n < 0)
        return;
    gs_taps tp;
    gs_taps_of(&p, grid, n, pos, &tp, 1);
    int want_in = (p.flags & TOCL_GS_GRAD_INPUT) != 0, want_grid = (p.flags & TOCL_GS_GRAD_GRID) != 0;
    long xb = p.x_off + n * p.x_sn, zb = p.z_off + n * p.z_sn;
    long gb = p.y_off + n * p.y_sn + pos[0] * p.y_sp[0] + pos[1] * p.y_sp[1] + pos[2] * p.y_sp[2];
    acc_t gc[GS_DIMS];
    for (int k = 0; k < GS_DIMS; k++)
        gc[k] = 0;
    for (long c = 0; c < p.C; c++) {
        acc_t go = LDG(g, gb + c * p.y_sc);
        long xc = xb + c * p.x_sc, zc = zb + c * p.z_sc;
#if GS_MODE == TOCL_GS_BILINEAR && GS_DIMS == 2
        acc_t v4[4] = {0, 0, 0, 0}; /* taps outside read 0 */
#endif
        for (int t = 0; t < GS_TAPS; t++) {
            if (!tp.ok[t])
                continue;
            if (want_in)
                gs_atomic_add(z + zc + tp.zo[t], tp.w[t] * go);
#if GS_MODE == TOCL_GS_BILINEAR && GS_DIMS == 2
            if (want_grid) /* the CPU's 2-d kernel combines the four taps below */
                v4[t] = LDX(x, xc + tp.xo[t]);
#elif GS_MODE == TOCL_GS_BILINEAR
            if (want_grid) { /* the CPU's 3-d gix -= val * w_y * w_z * gOut, term by term */
                acc_t v = LDX(x, xc + tp.xo[t]);
                for (int k = 0; k < GS_DIMS; k++) {
                    acc_t term = v * tp.wk[t][k][0];
#if GS_DIMS == 3
                    term = term * tp.wk[t][k][1];
#endif
                    term = term * go;
                    gc[k] = ((t >> k) & 1) ? gc[k] + term : gc[k] - term;
                }
            }
#elif GS_MODE == TOCL_GS_BICUBIC
            if (want_grid) {
                acc_t v = LDX(x, xc + tp.xo[t]);
                gc[0] -= v * tp.gx[t % 4] * tp.cy[t / 4] * go;
                gc[1] -= v * tp.gy[t / 4] * tp.cx[t % 4] * go;
            }
#endif
        }
#if GS_MODE == TOCL_GS_BILINEAR && GS_DIMS == 2
        /* taps nw, ne, sw, se; distances e = w0[x], w = w1[x], s = w0[y], n = w1[y] */
        if (want_grid) {
            gc[0] = gc[0] + ((v4[1] - v4[0]) * tp.wk[0][0][0] + (v4[3] - v4[2]) * tp.wk[3][0][0]) * go;
            gc[1] = gc[1] + ((v4[2] - v4[0]) * tp.wk[0][1][0] + (v4[3] - v4[1]) * tp.wk[3][1][0]) * go;
        }
#endif
    }
    if (want_grid) { /* nearest: a step function, gradient 0 */
        long sb = p.s_off + n * p.s_sn + pos[0] * p.s_sp[0] + pos[1] * p.s_sp[1] + pos[2] * p.s_sp[2];
        for (int k = 0; k < GS_DIMS; k++)
            STS(s, sb + k * p.s_sk, tp.mult[k] * gc[k]);
    }
}

/* grad_input without atomics, in the CPU's order: one work-item per
 * (batch, block of cb channels) walks the grid points in row-major order,
 * maps each point to its taps once and adds each tap's w * grad_output
 * into its channels' planes of the accumulator z (zeroed by gs_zero). The
 * sum of every element then runs in grid-point order, as in ATen's
 * grid_sampler_*_backward_cpu, so it is deterministic and matches the
 * CPU's rounding; gs_bwd then computes grad_grid alone. */
__kernel void gs_bwd_in(__global const G_T *g, __global const T_T *grid, __global acc_t *z, tocl_gs_params p,
                        long cb)
{
    long id = get_global_id(0), nb = (p.C + cb - 1) / cb;
    if (id >= p.N * nb)
        return;
    long n = id / nb, c0 = (id - n * nb) * cb, c1 = c0 + cb < p.C ? c0 + cb : p.C;
    long gb = p.y_off + n * p.y_sn, zb = p.z_off + n * p.z_sn;
    long pos[3];
    for (pos[0] = 0; pos[0] < p.osz[0]; pos[0]++)
        for (pos[1] = 0; pos[1] < p.osz[1]; pos[1]++)
            for (pos[2] = 0; pos[2] < p.osz[2]; pos[2]++) {
                gs_taps tp;
                gs_taps_of(&p, grid, n, pos, &tp, 0);
                long gp = gb + pos[0] * p.y_sp[0] + pos[1] * p.y_sp[1] + pos[2] * p.y_sp[2];
                for (long c = c0; c < c1; c++) {
                    acc_t go = LDG(g, gp + c * p.y_sc);
                    __global acc_t *zc = z + zb + c * p.z_sc;
                    for (int t = 0; t < GS_TAPS; t++)
                        if (tp.ok[t])
                            zc[tp.zo[t]] += tp.w[t] * go;
                }
            }
}

__kernel void gs_zero(__global acc_t *z, tocl_gs_params p)
{
    long i = get_global_id(0);
    if (i < p.z_n)
        z[p.z_off + i] = 0;
}

/* Dense accumulator -> grad_input of the storage dtype. */
__kernel void gs_store(__global const acc_t *z, __global Z_T *q, tocl_gs_params p)
{
    long i = get_global_id(0);
    if (i < p.z_n)
        STZ(q, p.q_off + i, z[p.z_off + i]);
}
