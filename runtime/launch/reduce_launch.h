/* reduce_launch.h - launching generated reduction kernels (reduce.c), for
 * the eager entry (ops/reduce.c) and fused eager. Separate from launch.h
 * because tocl/reduce.h and tocl/nn.h both name a TOCL_REDUCE_SUM. */
#ifndef TOCL_REDUCE_LAUNCH_H
#define TOCL_REDUCE_LAUNCH_H

#include "launch/launch.h"
#include "tocl/reduce.h"

#define TOCL_RED_MAX_OPS (2 + TOCL_IR_MAX_INPUTS)

/* Kept dims (outputs and inputs), reduced dims (inputs), both collapsed. */
typedef struct tocl_red_space {
    int kr, rr;
    int64_t ks[TOCL_TENSOR_MAX_DIMS], kst[TOCL_RED_MAX_OPS][TOCL_TENSOR_MAX_DIMS];
    int64_t rs[TOCL_TENSOR_MAX_DIMS], rst[TOCL_IR_MAX_INPUTS][TOCL_TENSOR_MAX_DIMS];
} tocl_red_space;

/* Check a reduction's operands and prologue; *g_out is the prologue (the
 * default one when d has none, in thread-local storage). */
tocl_status tocl_reduce_check(int dev, const tocl_reduce_desc *d, int n_out, const tocl_tensor *outs, int n_in,
                              const tocl_tensor *ins, const tocl_scalar *scalars, const tocl_ir_graph **g_out);

/* Split and collapse the dims of a reduction (arg-reductions keep the
 * reduced dims in logical order). */
void tocl_reduce_collapse(tocl_red_space *sp, const tocl_reduce_desc *d, int n_out, const tocl_tensor *outs, int n_in,
                          const tocl_tensor *ins);

/* *ready = 1 if the kernel for (d, g, dtypes, ranks) is built. If it is
 * not: built now when `sync`, else asked of the background builder
 * (*ready = 0). Fails only under TORCH_OCL_STRICT_BUILDS, when the kernel
 * (or an earlier background build) failed to build. */
tocl_status tocl_reduce_kernel_ready(int dev, const tocl_reduce_desc *d, const tocl_ir_graph *g, int n_out,
                                     const tocl_dtype *od, const tocl_red_space *sp, int sync, int *ready);

/* Operands the caller resolved: the outputs, then every input (a fused
 * prologue's recorded inputs among them, resolved when they were recorded:
 * their tensors may be dead). */
typedef struct tocl_red_resolved {
    const cl_mem *bufs;
    const cl_long *offs;
} tocl_red_resolved;

/* Launch the reduction over operands collapsed into sp. `nodefer` takes
 * the queue without flushing deferred work (a fused prologue's group stays
 * recorded): the launch then runs under fused eager's lock, so it takes
 * `pre` and allocates nothing from the allocator (partials go to a
 * per-stream buffer of its own). */
tocl_status tocl_reduce_launch(int dev, int stream, const tocl_reduce_desc *d, const tocl_ir_graph *g, int n_out,
                               const tocl_tensor *outs, int n_in, const tocl_tensor *ins, const tocl_scalar *scalars,
                               const tocl_red_space *sp, const tocl_red_resolved *pre, int nodefer);

#endif
