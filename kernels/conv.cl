/* conv.cl - the data movement of convolution (runtime/ops/conv.c): im2col
 * gathers x windows into a column matrix that a GEMM multiplies with the
 * weight; col2im sums a column matrix back onto x positions (input
 * gradient, transposed convolution) and adds an optional bias.
 *
 * Geometry and layouts: kernels/include/conv_params.h. A work-item owns
 * one innermost row (all positions along the last spatial dim), so the
 * divisions that decode its index are paid once per row, not per element.
 * im2col copies storage bits (CV_BITS: ushort, uint or ulong), exact for
 * every dtype and with no need for half or double arithmetic; col2im sums
 * in acc_t (float, or double for float64). */
#include "conv_params.h"
#include "nn_params.h"

#define CV_CHUNK 64 /* positions a work-item sums at once (col2im, depthwise) */

__kernel void conv_im2col(__global const CV_BITS *x, __global CV_BITS *col, tocl_conv_params p)
{
    long i = get_global_id(0);
    long yrows = p.y0 * p.y1, rows = p.C * p.kvol;
    if (i >= p.N * rows * yrows)
        return;
    long yy = i % yrows, t = i / yrows;
    long r = t % rows, n = t / rows;
    long o0 = yy / p.y1, o1 = yy % p.y1;
    long c = r / p.kvol, j = r % p.kvol;
    long j2 = j % p.k2, j1 = (j / p.k2) % p.k1, j0 = j / (p.k1 * p.k2);
    long i0 = o0 * p.s0 - p.p0 + j0 * p.d0, i1 = o1 * p.s1 - p.p1 + j1 * p.d1;
    __global CV_BITS *dst = col + p.col_off + n * p.col_sn + r * p.col_sr + yy * p.y2;
    if (i0 < 0 || i0 >= p.x0 || i1 < 0 || i1 >= p.x1) {
        for (long o2 = 0; o2 < p.y2; o2++)
            dst[o2] = 0;
        return;
    }
    /* o2 reads x position o2 * s2 + off: inside x for lo <= o2 < hi, so
     * the copy loop has no per-element test and the edges are zero runs */
    long off = j2 * p.d2 - p.p2;
    long lo = off >= 0 ? 0 : (-off + p.s2 - 1) / p.s2;
    long hi = p.x2 - off <= 0 ? 0 : (p.x2 - off + p.s2 - 1) / p.s2;
    lo = min(lo, p.y2), hi = clamp(hi, lo, p.y2);
    __global const CV_BITS *src = x + p.x_off + (((n * p.C + c) * p.x0 + i0) * p.x1 + i1) * p.x2 + off;
    for (long o2 = 0; o2 < lo; o2++)
        dst[o2] = 0;
    if (p.s2 == 1)
        for (long o2 = lo; o2 < hi; o2++)
            dst[o2] = src[o2];
    else
        for (long o2 = lo; o2 < hi; o2++)
            dst[o2] = src[o2 * p.s2];
    for (long o2 = hi; o2 < p.y2; o2++)
        dst[o2] = 0;
}

/* conv_im2col into the GEMM's packed layout of B (conv_params.h), so that
 * the product reads it without a packing pass. Same work-items as
 * conv_im2col (one innermost row of one (n, r)); the writes walk panels of
 * W positions. The work-item of the last row also zeroes the padding
 * positions L .. round_up(L, W). */
__kernel void conv_im2col_packed(__global const CV_BITS *x, __global CV_BITS *col, tocl_conv_params p)
{
    long i = get_global_id(0);
    long yrows = p.y0 * p.y1, rows = p.C * p.kvol;
    if (i >= p.N * rows * yrows)
        return;
    /* r fastest: neighbouring work-items write neighbouring W-runs of a
     * panel, not one run in each of many panels */
    long r = i % rows, t = i / rows;
    long yy = t % yrows, n = t / yrows;
    long o0 = yy / p.y1, o1 = yy % p.y1;
    long c = r / p.kvol, j = r % p.kvol;
    long j2 = j % p.k2, j1 = (j / p.k2) % p.k1, j0 = j / (p.k1 * p.k2);
    long i0 = o0 * p.s0 - p.p0 + j0 * p.d0, i1 = o1 * p.s1 - p.p1 + j1 * p.d1;
    long W = p.pw, RW = rows * W, q = yy * p.y2;
    long w = q % W;
    __global CV_BITS *dst = col + p.col_off + n * p.col_sn + (q / W) * RW + r * W + w;
    long lo = 0, hi = 0, off = 0;
    __global const CV_BITS *src = x;
    if (i0 >= 0 && i0 < p.x0 && i1 >= 0 && i1 < p.x1) {
        off = j2 * p.d2 - p.p2;
        lo = off >= 0 ? 0 : (-off + p.s2 - 1) / p.s2;
        hi = p.x2 - off <= 0 ? 0 : (p.x2 - off + p.s2 - 1) / p.s2;
        lo = min(lo, p.y2), hi = clamp(hi, lo, p.y2);
        src = x + p.x_off + (((n * p.C + c) * p.x0 + i0) * p.x1 + i1) * p.x2 + off;
    }
    long end = p.y2;
    if (yy == yrows - 1) /* up to the end of the last panel */
        end += (W - (p.L % W)) % W;
    /* runs of positions contiguous in col (up to a panel's end): zeros
     * before lo, x for lo <= o2 < hi, zeros after */
    for (long o2 = 0; o2 < end;) {
        long e = min(end, o2 + (W - w));
        long a = clamp(lo, o2, e), z = clamp(hi, a, e);
        __global CV_BITS *d = dst - o2;
        for (long q = o2; q < a; q++)
            d[q] = 0;
        if (p.s2 == 1)
            for (long q = a; q < z; q++)
                d[q] = src[q];
        else
            for (long q = a; q < z; q++)
                d[q] = src[q * p.s2];
        for (long q = z; q < e; q++)
            d[q] = 0;
        dst += e - o2;
        w += e - o2;
        if (w == W)
            w = 0, dst += RW - W;
        o2 = e;
    }
}

/* Forward convolution where every group has one x channel (depthwise,
 * with any channel multiplier cyg; also a single-channel input), without
 * im2col or GEMM: K = kvol per output is too thin for a product. One
 * work-item per y row (n, o, o0, o1); the row is summed in chunks of
 * CV_CHUNK positions, tap after tap, in loops along the row. */
__kernel void conv_depthwise(__global const X_T *x, __global const X_T *w, __global const X_T *bias,
                             __global X_T *y, tocl_conv_params p)
{
    long i = get_global_id(0);
    long yrows = p.y0 * p.y1;
    if (i >= p.N * p.cy * yrows)
        return;
    long yy = i % yrows, t = i / yrows; /* t = n * cy + o */
    long o = t % p.cy, n = t / p.cy;
    long o0 = yy / p.y1, o1 = yy % p.y1;
    long c = o / p.cyg; /* the group's x channel */
    __global const X_T *xc = x + p.x_off + (n * p.C + c) * p.xvol;
    __global const X_T *wo = w + p.w_off + o * p.kvol;
    long ybase = p.y_off + (t * yrows + yy) * p.y2;
    acc_t b = p.has_bias ? LDX(bias, p.b_off + o) : (acc_t)0;
    acc_t acc[CV_CHUNK];
    for (long q0 = 0; q0 < p.y2; q0 += CV_CHUNK) {
        int len = (int)min((long)CV_CHUNK, p.y2 - q0);
        for (int q = 0; q < len; q++)
            acc[q] = b;
        for (long j0 = 0; j0 < p.k0; j0++) {
            long i0 = o0 * p.s0 - p.p0 + j0 * p.d0;
            if (i0 < 0 || i0 >= p.x0)
                continue;
            for (long j1 = 0; j1 < p.k1; j1++) {
                long i1 = o1 * p.s1 - p.p1 + j1 * p.d1;
                if (i1 < 0 || i1 >= p.x1)
                    continue;
                __global const X_T *xr = xc + (i0 * p.x1 + i1) * p.x2;
                for (long j2 = 0; j2 < p.k2; j2++) {
                    acc_t wv = LDX(wo, (j0 * p.k1 + j1) * p.k2 + j2);
                    /* position q0 + q reads x at (q0 + q) * s2 + off: inside for lo <= q < hi */
                    long off = j2 * p.d2 - p.p2 + q0 * p.s2;
                    long lo = off >= 0 ? 0 : (-off + p.s2 - 1) / p.s2;
                    long hi = p.x2 - off <= 0 ? 0 : (p.x2 - off + p.s2 - 1) / p.s2;
                    int qlo = (int)min(lo, (long)len), qhi = (int)clamp(hi, (long)qlo, (long)len);
                    if (p.s2 == 1)
                        for (int q = qlo; q < qhi; q++)
                            acc[q] += wv * LDX(xr, off + q);
                    else
                        for (int q = qlo; q < qhi; q++)
                            acc[q] += wv * LDX(xr, off + q * p.s2);
                }
            }
        }
        for (int q = 0; q < len; q++)
            STX(y, ybase + q0 + q, acc[q]);
    }
}

/* Does kernel tap t = position + pad - offset * dilation land on a y
 * position (*q) along a dim of stride s and size n? */
inline bool cv_tap(long t, long s, long n, long *q)
{
    if (t < 0)
        return false;
    if (s != 1) { /* the common stride 1 skips a division */
        if (t % s)
            return false;
        t /= s;
    }
    *q = t;
    return t < n;
}

/* The column matrix is X_T, or float with -DCV_COL_F32: 16-bit storage keeps
 * the product's columns in float so each x element is rounded once, after
 * the sum over taps, as the CPU's float accumulation does. */
#ifdef CV_COL_F32
typedef float col_t;
#define LDCOL(p, i) ((acc_t)(p)[i])
#else
typedef X_T col_t;
#define LDCOL(p, i) LDX(p, i)
#endif

__kernel void conv_col2im(__global const col_t *col, __global X_T *x, __global const X_T *bias, tocl_conv_params p)
{
    long i = get_global_id(0);
    long xrows = p.x0 * p.x1;
    if (i >= p.N * p.C * xrows)
        return;
    long xx = i % xrows, t = i / xrows; /* t = n * C + c */
    long c = t % p.C, n = t / p.C;
    long a0 = xx / p.x1, a1 = xx % p.x1;
    acc_t b = p.has_bias ? LDX(bias, p.b_off + c) : (acc_t)0;
    long cbase = p.col_off + n * p.col_sn + c * p.kvol * p.col_sr;
    long xbase = p.x_off + (t * xrows + xx) * p.x2;
    /* the row in chunks of CV_CHUNK positions, tap after tap: along the
     * last dim the positions a tap reaches are a run (stride 1) or every
     * s2-th one, so no per-element division or test */
    acc_t acc[CV_CHUNK];
    for (long c0 = 0; c0 < p.x2; c0 += CV_CHUNK) {
        int len = (int)min((long)CV_CHUNK, p.x2 - c0);
        for (int q = 0; q < len; q++)
            acc[q] = b;
        for (long j0 = 0; j0 < p.k0; j0++) {
            long q0, q1;
            if (!cv_tap(a0 + p.p0 - j0 * p.d0, p.s0, p.y0, &q0))
                continue;
            for (long j1 = 0; j1 < p.k1; j1++) {
                if (!cv_tap(a1 + p.p1 - j1 * p.d1, p.s1, p.y1, &q1))
                    continue;
                long row = cbase + (j0 * p.k1 + j1) * p.k2 * p.col_sr + (q0 * p.y1 + q1) * p.y2;
                for (long j2 = 0; j2 < p.k2; j2++) {
                    __global const col_t *cr = col + row + j2 * p.col_sr;
                    /* position c0 + q takes q2 = (c0 + q + p2 - j2 * d2) / s2 where that divides */
                    long t0 = c0 + p.p2 - j2 * p.d2;
                    if (p.s2 == 1) {
                        int lo = (int)clamp(-t0, 0L, (long)len), hi = (int)clamp(p.y2 - t0, (long)lo, (long)len);
                        for (int q = lo; q < hi; q++)
                            acc[q] += LDCOL(cr, t0 + q);
                    } else {
                        long first = t0 >= 0 ? (p.s2 - t0 % p.s2) % p.s2 : -t0;
                        for (long q = first, q2 = (t0 + first) / p.s2; q < len && q2 < p.y2; q += p.s2, q2++)
                            acc[q] += LDCOL(cr, q2);
                    }
                }
            }
        }
        for (int q = 0; q < len; q++)
            STX(x, xbase + c0 + q, acc[q]);
    }
}

/* Input gradient of conv_depthwise (one x channel per group): one
 * work-item per x row (n, c, a0, a1), summed in chunks of CV_CHUNK
 * positions over the group's y channels and the taps that reach it. */
__kernel void conv_depthwise_bwd_data(__global const X_T *y, __global const X_T *w, __global const X_T *bias,
                                      __global X_T *x, tocl_conv_params p)
{
    long i = get_global_id(0);
    long xrows = p.x0 * p.x1;
    if (i >= p.N * p.C * xrows)
        return;
    long xx = i % xrows, t = i / xrows; /* t = n * C + c */
    long c = t % p.C, n = t / p.C;
    long a0 = xx / p.x1, a1 = xx % p.x1;
    long xbase = p.x_off + (t * xrows + xx) * p.x2;
    acc_t b = p.has_bias ? LDX(bias, p.b_off + c) : (acc_t)0;
    acc_t acc[CV_CHUNK];
    for (long c0 = 0; c0 < p.x2; c0 += CV_CHUNK) {
        int len = (int)min((long)CV_CHUNK, p.x2 - c0);
        for (int q = 0; q < len; q++)
            acc[q] = b;
        for (long m = 0; m < p.cyg; m++) {
            long o = c * p.cyg + m;
            __global const X_T *yo = y + p.y_off + (n * p.cy + o) * p.L;
            __global const X_T *wo = w + p.w_off + o * p.kvol;
            for (long j0 = 0; j0 < p.k0; j0++) {
                long q0, q1;
                if (!cv_tap(a0 + p.p0 - j0 * p.d0, p.s0, p.y0, &q0))
                    continue;
                for (long j1 = 0; j1 < p.k1; j1++) {
                    if (!cv_tap(a1 + p.p1 - j1 * p.d1, p.s1, p.y1, &q1))
                        continue;
                    __global const X_T *yr = yo + (q0 * p.y1 + q1) * p.y2;
                    for (long j2 = 0; j2 < p.k2; j2++) {
                        acc_t wv = LDX(wo, (j0 * p.k1 + j1) * p.k2 + j2);
                        /* position c0 + q takes y at (c0 + q + p2 - j2 * d2) / s2 where that divides */
                        long t0 = c0 + p.p2 - j2 * p.d2;
                        if (p.s2 == 1) {
                            int lo = (int)clamp(-t0, 0L, (long)len), hi = (int)clamp(p.y2 - t0, (long)lo, (long)len);
                            for (int q = lo; q < hi; q++)
                                acc[q] += wv * LDX(yr, t0 + q);
                        } else {
                            long first = t0 >= 0 ? (p.s2 - t0 % p.s2) % p.s2 : -t0;
                            for (long q = first; q < len; q += p.s2) {
                                long q2 = (t0 + q) / p.s2;
                                if (q2 >= p.y2)
                                    break;
                                acc[q] += wv * LDX(yr, q2);
                            }
                        }
                    }
                }
            }
        }
        for (int q = 0; q < len; q++)
            STX(x, xbase + c0 + q, acc[q]);
    }
}

/* Weight gradient of conv_depthwise: one work-item per weight (o, tap),
 * summing y * x over the batch and every y position, in four partial sums. */
__kernel void conv_depthwise_bwd_weight(__global const X_T *x, __global const X_T *y, __global X_T *gw,
                                        tocl_conv_params p)
{
    long i = get_global_id(0);
    if (i >= p.cy * p.kvol)
        return;
    long o = i / p.kvol, j = i % p.kvol;
    long j2 = j % p.k2, j1 = (j / p.k2) % p.k1, j0 = j / (p.k1 * p.k2);
    long c = o / p.cyg;
    long off = j2 * p.d2 - p.p2;
    long lo = off >= 0 ? 0 : (-off + p.s2 - 1) / p.s2;
    long hi = p.x2 - off <= 0 ? 0 : (p.x2 - off + p.s2 - 1) / p.s2;
    lo = min(lo, p.y2), hi = clamp(hi, lo, p.y2);
    acc_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (long n = 0; n < p.N; n++)
        for (long o0 = 0; o0 < p.y0; o0++) {
            long i0 = o0 * p.s0 - p.p0 + j0 * p.d0;
            if (i0 < 0 || i0 >= p.x0)
                continue;
            for (long o1 = 0; o1 < p.y1; o1++) {
                long i1 = o1 * p.s1 - p.p1 + j1 * p.d1;
                if (i1 < 0 || i1 >= p.x1)
                    continue;
                __global const X_T *yr = y + p.y_off + (((n * p.cy + o) * p.y0 + o0) * p.y1 + o1) * p.y2;
                __global const X_T *xr = x + p.x_off + (((n * p.C + c) * p.x0 + i0) * p.x1 + i1) * p.x2 + off;
                long q = lo;
                if (p.s2 == 1) {
                    for (; q + 4 <= hi; q += 4) {
                        s0 += LDX(yr, q) * LDX(xr, q);
                        s1 += LDX(yr, q + 1) * LDX(xr, q + 1);
                        s2 += LDX(yr, q + 2) * LDX(xr, q + 2);
                        s3 += LDX(yr, q + 3) * LDX(xr, q + 3);
                    }
                    for (; q < hi; q++)
                        s0 += LDX(yr, q) * LDX(xr, q);
                } else {
                    for (; q < hi; q++)
                        s0 += LDX(yr, q) * LDX(xr, q * p.s2);
                }
            }
        }
    STX(gw, p.w_off + i, (s0 + s1) + (s2 + s3));
}

/* ------------------------------------------------------------ depthwise 2-d */

/* Depthwise 2-d convolution with the kernel size and stride compiled in
 * (tocl_conv_dw_params in conv_params.h). PoCL runs a work-group's items
 * in loops and vectorises across dimension 0, so dimension 0 is the
 * output column: neighbouring work-items read neighbouring input columns
 * (one vector load per tap column) and the per-item code has no loop over
 * columns. Each work-item owns DW_R output rows of one column and reads
 * each of their (DW_R - 1) * SH + KH input rows once, adding every read to
 * the rows it reaches; the loops over rows and taps are unrolled, so the
 * DW_R sums stay in registers (a dynamically indexed accumulator array
 * lives in memory and made the old kernel a load-FMA-store chain).
 * Out-of-range rows and columns read as zero through a masked load. */
#ifdef DW_KH
#define DW_KVOL (DW_KH * DW_KW)
#define DW_IR ((DW_R - 1) * DW_SH + DW_KH) /* input rows per work-item */

__kernel void conv_dw2d(__global const X_T *in, __global const X_T *w, __global const X_T *bias,
                        __global X_T *out, tocl_conv_dw_params p)
{
    int col = (int)get_global_id(0);
    long t = get_global_id(1); /* (n, o, row block) */
    if (t >= p.N * p.CO * p.rb)
        return;
    long no = t / p.rb, o = no % p.CO, n = no / p.CO;
    int r0 = (int)(t % p.rb) * DW_R;
    int ih = (int)p.ih, iw = (int)p.iw, oh = (int)p.oh, ow = (int)p.ow;
    int row0 = r0 * DW_SH - (int)p.ph, c0 = col * DW_SW - (int)p.pw;
    bool live = col < ow;
    acc_t b = p.has_bias ? LDX(bias, p.b_off + o) : (acc_t)0;
    acc_t acc[DW_R];
    _Pragma("unroll") for (int r = 0; r < DW_R; r++)
        acc[r] = b;
#ifdef DW_BWD /* input gradient: y channels o * DW_M + m, flipped kernel (unrolled: a loop here would stop PoCL vectorising) */
    _Pragma("unroll") for (int m = 0; m < DW_M; m++) {
        long ic = o * DW_M + m;
#else
    {
        long ic = o / p.cyg;
#endif
        __global const X_T *ip = in + p.in_off + (n * p.CI + ic) * ih * iw;
        acc_t wv[DW_KVOL];
#ifdef DW_BWD
        _Pragma("unroll") for (int j = 0; j < DW_KVOL; j++)
            wv[j] = LDX(w, p.w_off + ic * DW_KVOL + DW_KVOL - 1 - j);
#else
        _Pragma("unroll") for (int j = 0; j < DW_KVOL; j++)
            wv[j] = LDX(w, p.w_off + o * DW_KVOL + j);
#endif
        _Pragma("unroll") for (int ir = 0; ir < DW_IR; ir++) {
            int row = row0 + ir;
            bool rok = live && row >= 0 && row < ih;
            _Pragma("unroll") for (int kw = 0; kw < DW_KW; kw++) {
                int cc = c0 + kw;
                acc_t v = rok && cc >= 0 && cc < iw ? LDX(ip, row * iw + cc) : (acc_t)0;
                _Pragma("unroll") for (int r = 0; r < DW_R; r++) {
                    int kh = ir - r * DW_SH; /* a constant once unrolled */
                    if (kh >= 0 && kh < DW_KH)
                        acc[r] += wv[kh * DW_KW + kw] * v;
                }
            }
        }
    }
    __global X_T *op = out + p.out_off + (n * p.CO + o) * oh * ow + col;
    _Pragma("unroll") for (int r = 0; r < DW_R; r++)
        if (live && r0 + r < oh)
            STX(op, (r0 + r) * ow, acc[r]);
}

/* Weight gradient, first pass (no loops, as conv_dw2d): a work-item per
 * (column, block of DW_R y rows, n, o) sums dy * x over its rows for every
 * tap: part[((o * KVOL + j) * N + n) * rb + block][column], from element
 * b_off of part. Each input row
 * is read once and added to every (row, tap) it reaches. */
__kernel void conv_dw2d_bwd_w(__global const X_T *x, __global const X_T *gy, __global acc_t *part,
                              tocl_conv_dw_params p)
{
    int col = (int)get_global_id(0);
    long t = get_global_id(1); /* (n, o, row block) */
    if (t >= p.N * p.CO * p.rb)
        return;
    long blk = t % p.rb, no = t / p.rb, o = no % p.CO, n = no / p.CO;
    int r0 = (int)blk * DW_R;
    int ih = (int)p.ih, iw = (int)p.iw, oh = (int)p.oh, ow = (int)p.ow;
    int row0 = r0 * DW_SH - (int)p.ph, c0 = col * DW_SW - (int)p.pw;
    bool live = col < ow;
    __global const X_T *xp = x + p.in_off + (n * p.CI + o / p.cyg) * ih * iw;
    __global const X_T *yp = gy + p.out_off + (n * p.CO + o) * oh * ow + col;
    acc_t dy[DW_R], acc[DW_KVOL];
    _Pragma("unroll") for (int r = 0; r < DW_R; r++)
        dy[r] = live && r0 + r < oh ? LDX(yp, (r0 + r) * ow) : (acc_t)0;
    _Pragma("unroll") for (int j = 0; j < DW_KVOL; j++)
        acc[j] = 0;
    _Pragma("unroll") for (int ir = 0; ir < DW_IR; ir++) {
        int row = row0 + ir;
        bool rok = live && row >= 0 && row < ih;
        _Pragma("unroll") for (int kw = 0; kw < DW_KW; kw++) {
            int cc = c0 + kw;
            acc_t v = rok && cc >= 0 && cc < iw ? LDX(xp, row * iw + cc) : (acc_t)0;
            _Pragma("unroll") for (int r = 0; r < DW_R; r++) {
                int kh = ir - r * DW_SH;
                if (kh >= 0 && kh < DW_KH)
                    acc[kh * DW_KW + kw] += dy[r] * v;
            }
        }
    }
    long step = p.N * p.rb * ow;
    __global acc_t *pp = part + p.b_off + ((o * DW_KVOL * p.N + n) * p.rb + blk) * ow + col;
    _Pragma("unroll") for (int j = 0; j < DW_KVOL; j++)
        if (live)
            pp[j * step] = acc[j];
}

/* Second pass: gw[o, j] = the sum of part's run for (o, j), N * rb * ow
 * values, in four interleaved partial sums (a fixed order). */
__kernel void conv_dw2d_bwd_w_sum(__global const acc_t *part, __global X_T *gw, tocl_conv_dw_params p)
{
    long i = get_global_id(0);
    if (i >= p.CO * DW_KVOL)
        return;
    long len = p.N * p.rb * p.ow;
    __global const acc_t *s = part + p.b_off + i * len;
    acc_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    long q = 0;
    for (; q + 4 <= len; q += 4)
        s0 += s[q], s1 += s[q + 1], s2 += s[q + 2], s3 += s[q + 3];
    for (; q < len; q++)
        s0 += s[q];
    STX(gw, p.w_off + i, (s0 + s1) + (s2 + s3));
}
#endif

/* ------------------------------------------------------------ implicit GEMM */

/* Stride-1 convolution as a product whose B operand is read straight from
 * a padded float copy of the source (conv_params.h, tocl_conv_ig_params):
 * no column matrix. Register block IG_RM rows x IG_NV vectors of IG_VW grid
 * positions, the CPU GEMM's (kernels/gemm.cl). */
#ifdef IG_RM
#define IG_CAT_(a, b) a##b
#define IG_CAT(a, b) IG_CAT_(a, b)
#define IG_RN (IG_VW * IG_NV)
#define IG_TAPS 64
typedef IG_CAT(float, IG_VW) igv_t;
#define IG_VLOAD IG_CAT(vload, IG_VW)
#define IG_VSTORE IG_CAT(vstore, IG_VW)

/* One plane row d (G2 long) of source row s (NULL: a row of padding):
 * with f2 = 1 a run of the row, else every f2-th element from r2. */
inline void ig_pad_row(__global float *d, __global const X_T *s, long r2, const tocl_conv_ig_params *pp)
{
    const tocl_conv_ig_params p = *pp;
    if (!s) {
        for (long q = 0; q < p.G2; q++)
            d[q] = 0.0f;
        return;
    }
    if (p.f2 == 1) { /* a run of the source row */
        s -= p.p2;
        long hi = min(p.P2, p.p2 + p.x2);
        for (long q = 0; q < p.p2; q++)
            d[q] = 0.0f;
        for (long q = p.p2; q < hi; q++)
            d[q] = (float)LDX(s, q);
        for (long q = hi; q < p.P2; q++)
            d[q] = 0.0f;
        return;
    }
    /* q reads source column q f2 + r2 - p2: zeros before q_lo and from q_hi,
     * a branch-free strided run between (a test per element made this
     * kernel a quarter of a stride-2 convolution's time) */
    long q_lo = min(p.G2, max(0L, (p.p2 - r2 + p.f2 - 1) / p.f2));
    long q_hi = max(q_lo, min(p.G2, (p.x2 + p.p2 - r2 + p.f2 - 1) / p.f2));
    for (long q = 0; q < q_lo; q++)
        d[q] = 0.0f;
    __global const X_T *sr = s + r2 - p.p2;
    for (long q = q_lo; q < q_hi; q++)
        d[q] = (float)LDX(sr, q * p.f2);
    for (long q = q_hi; q < p.G2; q++)
        d[q] = 0.0f;
}

/* xp[n, c, phase, plane] := x zero-padded, as float, split into the phase
 * planes of the strides f (one plane when f = 1). Stride 1: a work-item per
 * plane row (n, c, u0, u1); strided: a work-item per (n, c, phase, u0)
 * writing its G1 rows, so that the 64-bit divisions that place it (tens of
 * cycles each) are paid once per G1 rows, not per row of ~30 elements.
 * Work-item 0 also zeroes the tail after the last channel. (A work-item per
 * element was 9x slower: its divisions.) */
__kernel void conv_ig_pad(__global const X_T *x, __global float *xp, tocl_conv_ig_params p)
{
    long i = get_global_id(0);
    long nph = p.f0 * p.f1 * p.f2, per = nph == 1 ? p.G0 * p.G1 : nph * p.G0; /* work-items per channel */
    if (i >= p.N * p.C * per)
        return;
    long t = i / per, rr = i % per; /* t = n * C + c */
    long ph = 0, u0, u1 = 0, nrows = 1, r0 = 0, r1 = 0, r2 = 0;
    if (nph == 1) { /* stride 1: no phase arithmetic */
        u0 = rr / p.P1, u1 = rr % p.P1;
    } else {
        ph = rr / p.G0, u0 = rr % p.G0, nrows = p.G1;
        r2 = ph % p.f2, r1 = (ph / p.f2) % p.f1, r0 = ph / (p.f1 * p.f2);
    }
    xp += p.xp_off;
    if (i == 0)
        for (long q = 0; q < p.tail; q++)
            xp[p.N * p.C * p.S + q] = 0.0f;
    if (rr == per - 1) /* channel slack past the last phase plane */
        for (long q = nph * p.PS; q < p.S; q++)
            xp[t * p.S + q] = 0.0f;
    long a0 = u0 * p.f0 + r0 - p.p0;
    __global const X_T *plane = x + p.src_off + t * p.x0 * p.x1 * p.x2;
    __global float *d = xp + t * p.S + ph * p.PS + (u0 * p.G1 + u1) * p.G2;
    for (long k = 0; k < nrows; k++, d += p.G2) {
        long a1 = (u1 + k) * p.f1 + r1 - p.p1;
        int in = a0 >= 0 && a0 < p.x0 && a1 >= 0 && a1 < p.x1;
        ig_pad_row(d, in ? plane + (a0 * p.x1 + a1) * p.x2 : NULL, r2, &p);
    }
}

/* Ap[m / RM][k][m % RM] := weight row m, float; a work-item per (panel, k). */
__kernel void conv_ig_pack_w(__global const X_T *w, __global float *ap, tocl_conv_ig_params p)
{
    long i = get_global_id(0);
    long K = p.C * p.kvol;
    if (i >= (p.M + IG_RM - 1) / IG_RM * K)
        return;
    long k = i % K, panel = i / K;
    __global float *d = ap + p.ap_off + (panel * K + k) * IG_RM;
    long o = k / p.kvol, j = k % p.kvol;
    for (int r = 0; r < IG_RM; r++) {
        long m = panel * IG_RM + r;
        float v = 0.0f;
        if (m < p.M)
            v = (float)(p.flip ? LDX(w, p.w_off + (o * p.wC + m) * p.kvol + (p.kvol - 1 - j))
                               : LDX(w, p.w_off + m * K + k));
        d[r] = v;
    }
}

/* y[n, m, position] = bias[m] + sum over (c, tap) of Ap x xp; a work-group
 * (one work-item) per tile of tm rows x tn grid positions of one batch
 * item, K in blocks of cb channels with partial sums in part (tm * tn).
 * Global (tiles along the grid, tiles along M, batch). */
__kernel void conv_ig(__global const float *Ap, __global const float *xp, __global X_T *y,
                      __global const X_T *bias, tocl_conv_ig_params p, __local float *part)
{
    long b = get_global_id(2);
    long mt0 = get_global_id(1) * p.tm, nt0 = get_global_id(0) * p.tn;
    long mt1 = min(mt0 + p.tm, p.M), nt1 = min(nt0 + p.tn, p.Lg);
    if (mt0 >= p.M || nt0 >= p.Lg)
        return;
    long K = p.C * p.kvol;
    __global const float *X = xp + p.xp_off + b * p.C * p.S;
    Ap += p.ap_off;
    /* tap offsets in the phase planes (kvol <= IG_TAPS) */
    int offs[IG_TAPS], nt = 0;
    for (long j0 = 0; j0 < p.k0; j0++)
        for (long j1 = 0; j1 < p.k1; j1++)
            for (long j2 = 0; j2 < p.k2; j2++) {
                long e0 = j0 * p.d0, e1 = j1 * p.d1, e2 = j2 * p.d2;
                long ph = ((e0 % p.f0) * p.f1 + e1 % p.f1) * p.f2 + e2 % p.f2;
                offs[nt++] = (int)(ph * p.PS + ((e0 / p.f0) * p.G1 + e1 / p.f1) * p.G2 + e2 / p.f2);
            }
    for (long c0 = 0;; c0 += p.cb) {
        long c1 = min(c0 + p.cb, p.C);
        int first = c0 == 0, last = c1 >= p.C;
        for (long n0 = nt0; n0 < nt1; n0 += IG_RN) {
            /* output index of each lane (-1: not stored) */
            long idx[IG_RN];
            if (last)
                for (int l = 0; l < IG_RN; l++) {
                    long q = n0 + l, o2 = q % p.G2, r = q / p.G2, o1 = r % p.G1, o0 = r / p.G1;
                    idx[l] = q < p.Lg && o2 < p.y2 && o1 < p.y1 ? (o0 * p.y1 + o1) * p.y2 + o2 : -1;
                }
            for (long m0 = mt0; m0 < mt1; m0 += IG_RM) {
                __global const float *ap = Ap + (m0 / IG_RM) * K * IG_RM + c0 * p.kvol * IG_RM;
                __local float *pp = part + ((m0 - mt0) * p.tn + (n0 - nt0));
                igv_t acc[IG_RM][IG_NV];
                _Pragma("unroll") for (int r = 0; r < IG_RM; r++)
                    _Pragma("unroll") for (int v = 0; v < IG_NV; v++)
                        acc[r][v] = first ? (igv_t)0 : IG_VLOAD(v, pp + r * p.tn);
                for (long c = c0; c < c1; c++) {
                    __global const float *xc = X + c * p.S + n0;
                    for (int t = 0; t < nt; t++) {
                        __global const float *bp = xc + offs[t];
                        igv_t bv[IG_NV];
                        _Pragma("unroll") for (int v = 0; v < IG_NV; v++)
                            bv[v] = IG_VLOAD(v, bp);
                        _Pragma("unroll") for (int r = 0; r < IG_RM; r++) {
                            igv_t a = (igv_t)ap[r];
                            _Pragma("unroll") for (int v = 0; v < IG_NV; v++)
                                acc[r][v] = fma(a, bv[v], acc[r][v]);
                        }
                        ap += IG_RM;
                    }
                }
                if (!last) {
                    _Pragma("unroll") for (int r = 0; r < IG_RM; r++)
                        _Pragma("unroll") for (int v = 0; v < IG_NV; v++)
                            IG_VSTORE(acc[r][v], v, pp + r * p.tn);
                    continue;
                }
                /* acc leaves registers through fully unrolled copies only:
                 * a dynamic index would keep the whole block in memory */
                float rows[IG_RM][IG_RN];
                _Pragma("unroll") for (int r = 0; r < IG_RM; r++)
                    _Pragma("unroll") for (int v = 0; v < IG_NV; v++)
                        IG_VSTORE(acc[r][v], v, rows[r]);
                for (int r = 0; r < IG_RM; r++) {
                    long m = m0 + r;
                    if (m >= p.M)
                        break;
                    float *row = rows[r];
                    float bb = p.has_bias ? (float)LDX(bias, p.b_off + m) : 0.0f;
                    long yb = p.y_off + (b * p.M + m) * p.L;
                    for (int l = 0; l < IG_RN; l++)
                        if (idx[l] >= 0)
                            STX(y, yb + idx[l], row[l] + bb);
                }
            }
        }
        if (last)
            break;
    }
}
/* ------------------------------------------------------------ weight gradient */

/* gw[m, r] = sum over (n, o) of dy[n, m, o] * x tap r at o: a product of
 * depth (n, o) whose A operand (rows r = c * kvol + j) is read straight
 * from the padded float planes of x (tocl_conv_ig_params, any stride and
 * dilation: tap (j0, j1, j2) of position (o0, o1, o2) is plane position
 * ((o0 * s0 + j0 * d0) * P1 + o1 * s1 + j1 * d1) * P2 + o2 * s2 + j2 * d2)
 * and whose B operand is dy transposed to dyt[n, o, m], so that the
 * register block is IG_RM taps x IG_RN output channels and no column matrix
 * exists. Everything is summed in float and rounded once (conv_wg_reduce). */

/* dyt[n, o, m] := dy[n, m, o] as float, columns M .. Mp zero; a work-item per (n, o). */
__kernel void conv_wg_dyt(__global const X_T *y, __global float *dyt, tocl_conv_ig_params p)
{
    long i = get_global_id(0);
    if (i >= p.N * p.L)
        return;
    long n = i / p.L, q = i % p.L;
    __global const X_T *s = y + p.y_off + n * p.M * p.L + q;
    __global float *d = dyt + p.dyt_off + i * p.Mp;
    for (long m = 0; m < p.M; m++)
        d[m] = (float)LDX(s, m * p.L);
    for (long m = p.M; m < p.Mp; m++)
        d[m] = 0.0f;
}

/* part[sp][r][m] (+)= the split's share of the product, for a tile of tm
 * rows r x tn columns m; the split's depth rows (n, o0, o1) are walked hb
 * at a time, and within such a block every register block of the tile
 * sweeps it while its dyt rows are still in cache. Global (m tiles,
 * r tiles, nsplit), one work-item per work-group. Rows past K read a valid
 * tap and land in part's padding rows, never read back. */
__kernel void conv_wg(__global const float *xp, __global const float *dyt, __global float *part,
                      tocl_conv_ig_params p)
{
    long K = p.C * p.kvol, Kp = (K + IG_RM - 1) / IG_RM * IG_RM;
    long mt0 = get_global_id(0) * p.tn, rt0 = get_global_id(1) * p.tm, sp = get_global_id(2);
    if (mt0 >= p.Mp || rt0 >= Kp || sp >= p.nsplit)
        return;
    long mt1 = min(mt0 + p.tn, p.Mp), rt1 = min(rt0 + p.tm, Kp);
    long yrows = p.y0 * p.y1, rows = p.N * yrows;
    long h0 = sp * rows / p.nsplit, h1 = (sp + 1) * rows / p.nsplit;
    __global float *P = part + p.part_off + sp * Kp * p.Mp;
    if (p.first)
        for (long r = rt0; r < rt1; r++)
            for (long m = mt0; m < mt1; m++)
                P[r * p.Mp + m] = 0.0f;
    for (long hb0 = h0; hb0 < h1; hb0 += p.hb) {
        long hb1 = min(hb0 + p.hb, h1);
        for (long r0 = rt0; r0 < rt1; r0 += IG_RM) {
            long xoff[IG_RM]; /* plane offset of each row's tap */
            _Pragma("unroll") for (int r = 0; r < IG_RM; r++) {
                long rr = min(r0 + r, K - 1);
                long c = rr / p.kvol, j = rr % p.kvol;
                long j2 = j % p.k2, j1 = (j / p.k2) % p.k1, j0 = j / (p.k1 * p.k2);
                xoff[r] = c * p.S + (j0 * p.d0 * p.P1 + j1 * p.d1) * p.P2 + j2 * p.d2;
            }
            for (long m0 = mt0; m0 < mt1; m0 += IG_RN) {
                __global float *pp = P + r0 * p.Mp + m0;
                igv_t acc[IG_RM][IG_NV];
                _Pragma("unroll") for (int r = 0; r < IG_RM; r++)
                    _Pragma("unroll") for (int v = 0; v < IG_NV; v++)
                        acc[r][v] = IG_VLOAD(v, pp + r * p.Mp);
                for (long h = hb0; h < hb1; h++) {
                    long n = h / yrows, yy = h % yrows, o0 = yy / p.y1, o1 = yy % p.y1;
                    __global const float *X = xp + p.xp_off + n * p.C * p.S + (o0 * p.s0 * p.P1 + o1 * p.s1) * p.P2;
                    __global const float *D = dyt + p.dyt_off + (n * p.L + yy * p.y2) * p.Mp + m0;
                    for (long o2 = 0; o2 < p.y2; o2++) {
                        igv_t bv[IG_NV];
                        _Pragma("unroll") for (int v = 0; v < IG_NV; v++)
                            bv[v] = IG_VLOAD(v, D + o2 * p.Mp);
                        __global const float *xq = X + o2 * p.s2;
                        _Pragma("unroll") for (int r = 0; r < IG_RM; r++) {
                            igv_t a = (igv_t)xq[xoff[r]];
                            _Pragma("unroll") for (int v = 0; v < IG_NV; v++)
                                acc[r][v] = fma(a, bv[v], acc[r][v]);
                        }
                    }
                }
                _Pragma("unroll") for (int r = 0; r < IG_RM; r++)
                    _Pragma("unroll") for (int v = 0; v < IG_NV; v++)
                        IG_VSTORE(acc[r][v], v, pp + r * p.Mp);
            }
        }
    }
}

/* gw[m, r] := the sum over splits of part[sp][r][m], in split order, rounded
 * once. part holds the transpose of gw: global (r, m) in groups of 16 x 16
 * (runtime/ops/conv_implicit.c), so that a group reads 16 lines of part and
 * writes 16 lines of gw, each whole. One work-item per element in gw's
 * order read part down its columns, a line per read: ResNet-18's layer4
 * weight gradient took 7.8 ms. A transpose of its [4608, 512] part:
 * 15.8 ms that way, 5.1 with m along dimension 0, 3.6 with r. */
__kernel void conv_wg_reduce(__global const float *part, __global X_T *gw, tocl_conv_ig_params p)
{
    long K = p.C * p.kvol, Kp = (K + IG_RM - 1) / IG_RM * IG_RM;
    long r = get_global_id(0), m = get_global_id(1);
    if (m >= p.M || r >= K)
        return;
    __global const float *s = part + p.part_off + r * p.Mp + m;
    float t = 0.0f;
    for (long sp = 0; sp < p.nsplit; sp++)
        t += s[sp * Kp * p.Mp];
    STX(gw, p.w_off + m * K + r, t);
}
#endif
