/* pool_params.h - parameters of kernels/pool.cl and kernels/upsample.cl,
 * shared with runtime/ops/pool.c and upsample.c.
 *
 * Every operand is dense [nc, D, H, W]; 1-d and 2-d ops are 3-d ops with
 * leading spatial sizes of 1 (and windows of 1), so one kernel serves all
 * ranks. Dimension index 0 is D, 1 is H, 2 is W. 8-byte fields first so
 * host and device lay the structs out identically. Storage roles and acc_t
 * come from nn_params.h (X input, Y output, G grad_output, Z grad_input). */
#ifndef TOCL_POOL_PARAMS_H
#define TOCL_POOL_PARAMS_H

/* Needs nn_params.h first (the kernel embedder resolves one level of
 * #include, so .cl files include both). */

/* Window kinds (tocl_pool_params.kind): fixed windows of kernel k, stride s,
 * padding p and dilation d (avg: dilation 1), or PyTorch's adaptive windows
 * [floor(o * I / O), ceil((o + 1) * I / O)). */
#define TOCL_POOL_K_MAX 0
#define TOCL_POOL_K_AVG 1
#define TOCL_POOL_K_ADAPTIVE_MAX 2
#define TOCL_POOL_K_ADAPTIVE_AVG 3

typedef struct tocl_pool_params {
    tocl_nn_i64 nc;
    tocl_nn_i64 in[3], out[3];
    tocl_nn_i64 k[3], s[3], p[3], d[3];
    tocl_nn_i64 divisor;             /* avg: divisor_override, 0 for none */
    tocl_nn_i64 x_off, y_off, i_off; /* input (or grad_input), output (or grad_output), indices */
    tocl_nn_i32 kind;
    tocl_nn_i32 count_include_pad;
} tocl_pool_params;

/* Resampling modes (tocl_upsample_params.mode). */
#define TOCL_UP_NEAREST 0
#define TOCL_UP_NEAREST_EXACT 1
#define TOCL_UP_LINEAR 2
#define TOCL_UP_CUBIC 3

/* ratio/ratiof per dimension: the scale in double and in float, computed
 * by the host as the CPU does (area_pixel_compute_scale in the op's
 * arithmetic for linear/cubic, compute_scales_value<float> for nearest).
 * Tap tables (written by up_table, read by up_fwd/up_bwd): entry
 * t_base[j] + o holds the UP_NT taps of output o along dimension j, as
 * int64 indices at ti_off and weights (the kernel's arithmetic type) at
 * tw_off, both in elements of one scratch buffer. t_base = {0, OD, OD + OH}.
 * mode is also a build option (UP_MODE) of the kernels. */
typedef struct tocl_upsample_params {
    tocl_nn_i64 nc;
    tocl_nn_i64 in[3], out[3];
    tocl_nn_i64 x_off, y_off;
    tocl_nn_i64 ti_off, tw_off, t_base[3];
    tocl_nn_f64 ratio[3];
    tocl_nn_f32 ratiof[3];
    tocl_nn_i32 mode;
    tocl_nn_i32 align_corners;
    tocl_nn_i32 pad;
} tocl_upsample_params;

#endif
