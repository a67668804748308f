/* factory.h - tensor factories with a formula per element: arange,
 * linspace, logspace, tril/triu indices. Each writes a dense destination
 * (the caller passes a contiguous tensor and copies into a strided one),
 * repeating the CPU's arithmetic so results match PyTorch on the CPU. Only
 * enqueues work. */
#ifndef TOCL_FACTORY_H
#define TOCL_FACTORY_H

#include <stdint.h>

#include "tocl/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dst[i] = start + step * i in the CPU's accumulation type: int64 for
 * integer dtypes (start/step taken from .i), float for float16/bfloat16,
 * double for float32/float64 (from .f). dst: dense, any dtype but bool. */
tocl_status tocl_op_arange(int dev, int stream, const tocl_tensor *dst, tocl_scalar start, tocl_scalar step);

/* linspace with n = numel(dst) >= 2 steps: start/end already converted to
 * dst's dtype and step computed as the CPU does ((end - start) / (n - 1) in
 * the dtype's step type: double for integers, the dtype itself otherwise).
 * The first n / 2 values count up from start, the rest down from end. */
tocl_status tocl_op_linspace(int dev, int stream, const tocl_tensor *dst, double start, double end, double step);

/* base ** e for the same symmetric sequence of exponents e (in double),
 * converted to dst's dtype (integers truncate). */
tocl_status tocl_op_logspace(int dev, int stream, const tocl_tensor *dst, double start, double end, double step,
                             double base);

/* dst (dense int32/int64, 2 x count) := coordinates of the lower (upper = 0)
 * or upper triangle of a row x col matrix shifted by offset, row-major. */
tocl_status tocl_op_tri_indices(int dev, int stream, const tocl_tensor *dst, int64_t row, int64_t col,
                                int64_t offset, int upper);

#ifdef __cplusplus
}
#endif
#endif
