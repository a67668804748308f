/* ops.h - host side of the op library: launches on a device stream.
 *
 * Tensors are passed as strided views. Every call only enqueues work on
 * (dev, stream); none waits on the host. */
#ifndef TOCL_OPS_H
#define TOCL_OPS_H

#include <stdint.h>

#include "tocl/dtype.h"
#include "tocl/ir.h"
#include "tocl/mem.h"
#include "tocl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TOCL_TENSOR_MAX_DIMS 25 /* as PyTorch's TensorIterator */

typedef struct tocl_tensor {
    tocl_addr data;  /* address of element 0, storage offset included */
    tocl_dtype dtype;
    int ndim;
    int64_t sizes[TOCL_TENSOR_MAX_DIMS];
    int64_t strides[TOCL_TENSOR_MAX_DIMS]; /* in elements; 0 broadcasts */
} tocl_tensor;

/* Run an elementwise graph over one iteration shape. Every output and input
 * has the same ndim and sizes (inputs broadcast with stride 0); scalars
 * follow g->scalar_dtypes. Dimensions are collapsed where strides allow;
 * the contiguous fast path is used when every operand is dense in the same
 * order. numel 0 launches nothing. */
tocl_status tocl_ew_run(int dev, int stream, const tocl_ir_graph *g,
                        const tocl_tensor *outputs, const tocl_tensor *inputs,
                        const tocl_scalar *scalars);
/* The same, never recorded by fused eager: work already recorded on the
 * stream runs first, then this graph is launched (compiled segments). */
tocl_status tocl_ew_run_now(int dev, int stream, const tocl_ir_graph *g, const tocl_tensor *outputs,
                            const tocl_tensor *inputs, const tocl_scalar *scalars);

/* dst = src converted to dst's dtype, src broadcast to dst's shape (same
 * ndim, stride 0 where broadcast). Raw byte copy when layouts allow. src may
 * live on another device of the same process. */
tocl_status tocl_op_copy(int dev, int stream, const tocl_tensor *dst, const tocl_tensor *src);

/* Every element of dst := value converted to dst's dtype. */
tocl_status tocl_op_fill(int dev, int stream, const tocl_tensor *dst, tocl_scalar value);

/* Counter-based Philox4x32-10 random numbers; element i of the logical
 * (row-major) order uses counter (offset + i / 4) with key seed, so results
 * depend on seed and offset, not on launch shape. `offset` advances by
 * ceil(numel / 4) per call (the caller's generator owns it). */
tocl_status tocl_op_uniform(int dev, int stream, const tocl_tensor *dst, double from, double to,
                            uint64_t seed, uint64_t offset);
tocl_status tocl_op_normal(int dev, int stream, const tocl_tensor *dst, double mean, double std,
                           uint64_t seed, uint64_t offset);

/* Statistics of the elementwise kernel cache (launches, kernels created). */
typedef struct tocl_ew_stats {
    uint64_t launches;
    uint64_t kernels_created;
} tocl_ew_stats;
void tocl_ew_stats_get(tocl_ew_stats *out);

#ifdef __cplusplus
}
#endif
#endif
