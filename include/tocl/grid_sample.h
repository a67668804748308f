/* grid_sample.h - grid sampling (PyTorch's grid_sampler_2d/3d), forward
 * and backward (kernels/grid_sample.cl).
 *
 * input [N, C, H, W] or [N, C, D, H, W], grid [N, OH, OW, 2] or
 * [N, OD, OH, OW, 3] with (x, y[, z]) in [-1, 1], output [N, C, OH, OW]
 * or [N, C, OD, OH, OW]. Operands are strided (any strides); grad_input
 * must be dense row-major. All share one floating dtype (float16/bfloat16
 * computed in float, float64 in double where the device has cl_khr_fp64).
 * The backward walks the grid points in order per (batch, channel block),
 * as the CPU does, when there are enough planes for the device or the
 * walks are short; then results are the same on every run. With few
 * planes and many points it adds into grad_input with compare-and-swap
 * atomics instead (for float64 only where the device has
 * cl_khr_int64_base_atomics; elsewhere it keeps the ordered walk), and the
 * last bits of a sum may then vary from run to run, as on CUDA. kernels/grid_sample.cl has the details. Calls only
 * enqueue work. */
#ifndef TOCL_GRID_SAMPLE_H
#define TOCL_GRID_SAMPLE_H

#include "tocl/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* PyTorch's interpolation_mode and padding_mode numbering. */
typedef enum tocl_grid_sample_mode {
    TOCL_GRID_SAMPLE_BILINEAR = 0, /* trilinear for 3-d */
    TOCL_GRID_SAMPLE_NEAREST = 1,
    TOCL_GRID_SAMPLE_BICUBIC = 2   /* 2-d only */
} tocl_grid_sample_mode;

typedef enum tocl_grid_sample_padding {
    TOCL_GRID_SAMPLE_ZEROS = 0,
    TOCL_GRID_SAMPLE_BORDER = 1,
    TOCL_GRID_SAMPLE_REFLECTION = 2
} tocl_grid_sample_padding;

typedef struct tocl_grid_sample_desc {
    tocl_grid_sample_mode mode;
    tocl_grid_sample_padding padding;
    int align_corners;
} tocl_grid_sample_desc;

/* out := input sampled at grid. */
tocl_status tocl_grid_sample_forward(int dev, int stream, const tocl_grid_sample_desc *d, const tocl_tensor *input,
                                     const tocl_tensor *grid, const tocl_tensor *out);

/* grad_input (NULL: not wanted) := d loss / d input, every element written;
 * grad_grid (NULL: not wanted) := d loss / d grid; given grad_out (out's
 * shape). */
tocl_status tocl_grid_sample_backward(int dev, int stream, const tocl_grid_sample_desc *d, const tocl_tensor *grad_out,
                                      const tocl_tensor *input, const tocl_tensor *grid,
                                      const tocl_tensor *grad_input, const tocl_tensor *grad_grid);

#ifdef __cplusplus
}
#endif
#endif
