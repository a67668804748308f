/* conv_params.h - parameters of the im2col/col2im kernels (kernels/conv.cl),
 * shared with runtime/ops/conv.c. Spatial dims are padded to 3 with size 1
 * in front, so one kernel serves 1-d, 2-d and 3-d. 8-byte fields only, so
 * host and device lay the struct out alike.
 *
 * The column matrix has one row per (channel c, kernel offset j), row
 * r = c * kvol + j, and one column per y position q (L = y volume):
 * col[n, r, q] lives at col_off + n * col_sn + r * col_sr + q. Both layouts
 * the host uses fit: [n, r, q] (forward) and [r, n, q] (weight gradient,
 * so that batch and positions form one GEMM depth).
 *
 * conv_im2col_packed writes the same matrix straight in the GEMM's packed
 * layout of B (gemm_params.h: rows of the packed operand are positions q,
 * its depth is r): col[n, r, q] at col_off + n * col_sn + (q / W) * R * W +
 * r * W + q % W with R = C * kvol rows and W = pw, and the positions from L
 * up to the next multiple of W zero. */
#ifndef TOCL_CONV_PARAMS_H
#define TOCL_CONV_PARAMS_H

#ifdef __OPENCL_VERSION__
typedef long tocl_cv_i64;
#else
#include <stdint.h>
typedef int64_t tocl_cv_i64;
#endif

typedef struct tocl_conv_params {
    tocl_cv_i64 N, C;                   /* batch items in this launch, x-side channels */
    tocl_cv_i64 x0, x1, x2;             /* x spatial sizes */
    tocl_cv_i64 y0, y1, y2;             /* y spatial sizes */
    tocl_cv_i64 k0, k1, k2;             /* kernel sizes */
    tocl_cv_i64 s0, s1, s2;             /* strides */
    tocl_cv_i64 p0, p1, p2;             /* paddings */
    tocl_cv_i64 d0, d1, d2;             /* dilations */
    tocl_cv_i64 kvol, L, xvol;          /* k0*k1*k2, y0*y1*y2, x0*x1*x2 */
    tocl_cv_i64 x_off;                  /* x element offset (x is [N, C, xvol] dense) */
    tocl_cv_i64 col_off, col_sn, col_sr;/* column matrix, see above */
    tocl_cv_i64 b_off, has_bias;        /* bias[c] added by col2im */
    tocl_cv_i64 pw;                     /* conv_im2col_packed: panel width W */
    tocl_cv_i64 cy, cyg, w_off, y_off;  /* conv_depthwise: y channels, per group; w and y offsets */
} tocl_conv_params;

/* Implicit GEMM (conv_ig_* in kernels/conv.cl), stride 1 on CPU devices:
 * the source is copied once, zero-padded and widened to float, into planes
 * of S >= P0 * P1 * P2 elements (P = padded sizes); output position
 * (o0, o1, o2) is grid position q = (o0 * P1 + o1) * P2 + o2 and kernel tap
 * (j0, j1, j2) reads the plane at q + (j0 * d0 * P1 + j1 * d1) * P2 + j2 * d2,
 * so a run of grid positions is a run of the plane for every tap and the
 * product reads its B operand straight from the padded source. Grid
 * positions with o1 >= y1 or o2 >= y2 are computed and not stored.
 * The weight is packed into panels of rm rows: Ap[m / rm][k][m % rm],
 * k = c * kvol + j; with flip (input gradient) row m is x channel m and
 * k = o * kvol + j reads w[o, m, kvol - 1 - j].
 *
 * Forward strides f > 1 (f0, f1, f2; 1 elsewhere) split the padded source
 * into f0 * f1 * f2 phase planes of G = ceil(P / f) per dim, PS elements
 * each: phase (r0, r1, r2) holds padded position (f0 u0 + r0, f1 u1 + r1,
 * f2 u2 + r2) at (u0 * G1 + u1) * G2 + u2. Output position o is grid
 * position (o0 * G1 + o1) * G2 + o2 and tap j reads phase (j d mod f) at
 * q + ((j0 d0 div f0) * G1 + j1 d1 div f1) * G2 + j2 d2 div f2: again a
 * run of grid positions is a run of one plane, for every tap. */
typedef struct tocl_conv_ig_params {
    tocl_cv_i64 N, C, M;                /* batch, source channels (K = C * kvol), output channels */
    tocl_cv_i64 x0, x1, x2;             /* source sizes */
    tocl_cv_i64 p0, p1, p2;             /* padding of the source */
    tocl_cv_i64 P0, P1, P2, S, tail;    /* padded sizes, plane stride, zeros after the last plane */
    tocl_cv_i64 y0, y1, y2, L, Lg;      /* output sizes, L = y0 * y1 * y2, grid length */
    tocl_cv_i64 k0, k1, k2, kvol;       /* kernel */
    tocl_cv_i64 d0, d1, d2;             /* dilation */
    tocl_cv_i64 src_off, y_off, b_off, has_bias, w_off;
    tocl_cv_i64 tm, tn, cb;             /* tile: rows, grid positions, channels per K block */
    tocl_cv_i64 flip, wC;               /* weight packing: flipped transpose; w's channels per group */
    tocl_cv_i64 xp_off, ap_off;         /* element offsets of the padded source and packed weight */
    /* weight gradient (conv_wg*): strides, dy transposed and widened to
     * dyt[n, q, m] with rows of Mp (a multiple of the register block's
     * width, columns past M zero), float partial sums part[split][r][m]
     * (r < K rounded up to the block's rows, rows of Mp), the depth
     * (n, o0, o1) cut into nsplit ranges walked hb rows at a time; first:
     * the first batch chunk, which sets part rather than adding to it */
    tocl_cv_i64 s0, s1, s2;
    tocl_cv_i64 Mp, nsplit, hb, first, dyt_off, part_off;
    tocl_cv_i64 f0, f1, f2, G0, G1, G2, PS; /* forward strides as phase planes (above) */
} tocl_conv_ig_params;

/* Depthwise 2-d (conv_dw2d* in kernels/conv.cl): a dense input [N, CI,
 * ih, iw] to a dense output [N, CO, oh, ow]. Output row o_r, column o_c
 * reads input row o_r * SH - ph + kh and column o_c * SW - pw + kw (ph,
 * pw may be negative). Forward: output channel o reads input channel
 * o / cyg. Input gradient (DW_BWD, stride 1): output channel c is summed
 * over input (y) channels c * cyg + m with the flipped kernel. rb row
 * blocks of DW_R rows per plane; bias[o] is added when has_bias. */
typedef struct tocl_conv_dw_params {
    tocl_cv_i64 N, CO, CI, cyg;
    tocl_cv_i64 ih, iw, oh, ow, ph, pw;
    tocl_cv_i64 rb;
    tocl_cv_i64 in_off, w_off, out_off, b_off, has_bias;
} tocl_conv_dw_params;

#endif
