/* conv.h - N-d convolution (1-3 spatial dims) as im2col/col2im kernels
 * (kernels/conv.cl) around the batched GEMM (tocl/gemm.h).
 *
 * One geometry serves a convolution and its transpose. It relates an
 * "x side" [batch, cx, x...] to a "y side" [batch, cy, y...] through a
 * weight [cy, cx / groups, k...]:
 *
 *   y[n, o, p] = sum_{c in group(o), j} w[o, c, j] * x[n, c, p * stride - pad + j * dilation]
 *
 * A convolution maps x (input) to y (output): tocl_conv_forward. Its input
 * gradient, and a transposed convolution's forward, map y to x:
 * tocl_conv_backward_data. The weight gradient of either is
 * tocl_conv_backward_weight with (x, y) = (input, grad_output) for a
 * convolution and (grad_output, input) for a transposed one.
 *
 * Every tensor is dense row-major; x, y, weight and bias share one dtype:
 * float32, float16 and bfloat16 (GEMM accumulates in float32) or float64
 * (needs cl_khr_fp64). Sizes are kernel arguments: a new shape never builds
 * a program. Calls only enqueue work. The column matrix takes up to 256 MiB
 * of workspace (TORCH_OCL_CONV_WORKSPACE=bytes changes it); larger batches
 * run in chunks. */
#ifndef TOCL_CONV_H
#define TOCL_CONV_H

#include <stdint.h>

#include "tocl/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TOCL_CONV_MAX_DIMS 3

typedef struct tocl_conv_desc {
    int nd;                     /* spatial dims, 1..TOCL_CONV_MAX_DIMS */
    int64_t batch, groups;
    int64_t cx, cy;             /* channels of the x and y sides (both divisible by groups) */
    int64_t x[TOCL_CONV_MAX_DIMS], y[TOCL_CONV_MAX_DIMS], k[TOCL_CONV_MAX_DIMS];
    int64_t stride[TOCL_CONV_MAX_DIMS], pad[TOCL_CONV_MAX_DIMS], dilation[TOCL_CONV_MAX_DIMS];
} tocl_conv_desc;

/* y := conv(x, w) + bias[o] (bias NULL: none; bias has cy elements). */
tocl_status tocl_conv_forward(int dev, int stream, const tocl_conv_desc *d, const tocl_tensor *x,
                              const tocl_tensor *w, const tocl_tensor *bias, const tocl_tensor *y);

/* x := conv^T(y, w) + bias[c] (bias NULL: none; bias has cx elements).
 * Positions of x no window reaches get bias (or 0). */
tocl_status tocl_conv_backward_data(int dev, int stream, const tocl_conv_desc *d, const tocl_tensor *y,
                                    const tocl_tensor *w, const tocl_tensor *bias, const tocl_tensor *x);

/* gw := sum over batch and positions of y[n, o, p] * x[n, c, ...]: the
 * weight gradient, shape [cy, cx / groups, k...]. */
tocl_status tocl_conv_backward_weight(int dev, int stream, const tocl_conv_desc *d, const tocl_tensor *x,
                                      const tocl_tensor *y, const tocl_tensor *gw);

#ifdef __cplusplus
}
#endif
#endif
