/* grid_sample_params.h - parameters of kernels/grid_sample.cl, shared with
 * runtime/ops/grid_sample.c.
 *
 * Geometry is given per grid coordinate k (0: x along W, 1: y along H,
 * 2: z along D; 2-d ops use k < 2), so the kernel never needs to know how
 * the tensors are laid out: every operand is addressed through its strides.
 * Output positions (od, oh, ow) are grid positions. 8-byte fields first so
 * host and device lay the struct out identically. */
#ifndef TOCL_GRID_SAMPLE_PARAMS_H
#define TOCL_GRID_SAMPLE_PARAMS_H

/* Needs nn_params.h first (the kernel embedder resolves one level of
 * #include, so the .cl file includes both). */

/* Interpolation (build option GS_MODE) and padding, PyTorch's numbering. */
#define TOCL_GS_BILINEAR 0
#define TOCL_GS_NEAREST 1
#define TOCL_GS_BICUBIC 2
#define TOCL_GS_PAD_ZEROS 0
#define TOCL_GS_PAD_BORDER 1
#define TOCL_GS_PAD_REFLECTION 2

/* Backward flags. */
#define TOCL_GS_GRAD_INPUT 1
#define TOCL_GS_GRAD_GRID 2

typedef struct tocl_gs_params {
    tocl_nn_i64 N, C;
    tocl_nn_i64 osz[3];                /* output (grid) positions D, H, W; D = 1 for 2-d */
    tocl_nn_i64 isz[3];                /* input size along coordinate k */
    tocl_nn_i64 x_sn, x_sc, x_sk[3];   /* input strides: batch, channel, coordinate k */
    tocl_nn_i64 t_sn, t_sp[3], t_sk;   /* grid strides: batch, position D/H/W, coordinate */
    tocl_nn_i64 y_sn, y_sc, y_sp[3];   /* output (forward) or grad_output (backward) strides */
    tocl_nn_i64 z_sn, z_sc, z_sk[3];   /* grad_input accumulator strides (dense) */
    tocl_nn_i64 s_sn, s_sp[3], s_sk;   /* grad_grid strides */
    tocl_nn_i64 x_off, t_off, y_off, s_off; /* element offsets of input, grid, output/grad_output, grad_grid */
    tocl_nn_i64 z_off, q_off;          /* accumulator, and grad_input when it is not the accumulator */
    tocl_nn_i64 z_n;                   /* accumulator elements (zero / store kernels) */
    tocl_nn_i32 padding, align_corners;
    tocl_nn_i32 flags, pad;
} tocl_gs_params;

#endif
