/* pool.h - pooling (max with indices, average, adaptive) and resampling
 * (nearest, nearest-exact, linear, bicubic), forward and backward, over
 * dense [nc, D, H, W] tensors (kernels/pool.cl, upsample.cl).
 *
 * 1-d and 2-d ops are 3-d ops with leading spatial sizes 1 and windows of
 * 1. Operands are dense row-major with a floating dtype (float16/bfloat16
 * computed in float, float64 in double where the device has cl_khr_fp64);
 * indices are int64 flat positions within D*H*W, as PyTorch's. Backward
 * passes gather (no atomics): results do not depend on scheduling. Calls
 * only enqueue work. */
#ifndef TOCL_POOL_H
#define TOCL_POOL_H

#include <stdint.h>

#include "tocl/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tocl_pool_kind {
    TOCL_POOL_MAX = 0,          /* fixed windows, with dilation; writes indices */
    TOCL_POOL_AVG = 1,          /* fixed windows, count_include_pad, divisor */
    TOCL_POOL_ADAPTIVE_MAX = 2, /* windows [floor(o*I/O), ceil((o+1)*I/O)); writes indices */
    TOCL_POOL_ADAPTIVE_AVG = 3
} tocl_pool_kind;

typedef struct tocl_pool_desc {
    tocl_pool_kind kind;
    int64_t nc;                        /* batch times channels */
    int64_t in[3], out[3];             /* D, H, W */
    int64_t kernel[3], stride[3], pad[3], dilation[3]; /* fixed windows only (avg: dilation ignored) */
    int count_include_pad;             /* avg */
    int64_t divisor_override;          /* avg; 0 for none */
} tocl_pool_desc;

/* y [nc, out] := pooled x [nc, in]; indices (int64, y's sizes) for the max
 * kinds (NULL for avg). */
tocl_status tocl_pool_forward(int dev, int stream, const tocl_pool_desc *d, const tocl_tensor *x,
                              const tocl_tensor *y, const tocl_tensor *indices);

/* grad_in [nc, in] := gradient of the pooling given grad_out [nc, out] (and
 * the forward's indices for the max kinds). Every element is written. */
tocl_status tocl_pool_backward(int dev, int stream, const tocl_pool_desc *d, const tocl_tensor *grad_out,
                               const tocl_tensor *indices, const tocl_tensor *grad_in);

typedef enum tocl_upsample_mode {
    TOCL_UPSAMPLE_NEAREST = 0,       /* upsample_nearest*: floor(o * scale) */
    TOCL_UPSAMPLE_NEAREST_EXACT = 1, /* _upsample_nearest_exact*: floor((o + 0.5) * scale) */
    TOCL_UPSAMPLE_LINEAR = 2,        /* linear, bilinear, trilinear */
    TOCL_UPSAMPLE_CUBIC = 3          /* bicubic (A = -0.75), borders clamped */
} tocl_upsample_mode;

typedef struct tocl_upsample_desc {
    tocl_upsample_mode mode;
    int align_corners; /* linear/cubic */
    int64_t nc;
    int64_t in[3], out[3]; /* D, H, W */
    double scales[3];      /* the op's scale factor per dim; <= 0 for none (then in/out is used) */
} tocl_upsample_desc;

/* y [nc, out] := x [nc, in] resampled. */
tocl_status tocl_upsample_forward(int dev, int stream, const tocl_upsample_desc *d, const tocl_tensor *x,
                                  const tocl_tensor *y);

/* grad_in [nc, in] := gradient of the resampling given grad_out [nc, out]. */
tocl_status tocl_upsample_backward(int dev, int stream, const tocl_upsample_desc *d, const tocl_tensor *grad_out,
                                   const tocl_tensor *grad_in);

#ifdef __cplusplus
}
#endif
#endif
