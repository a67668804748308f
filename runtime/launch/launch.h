/* launch.h - the launch layer: checking and resolving operands, and
 * enqueueing kernels, generated (elementwise.c, reduce.c) or hand-written
 * (kernel_launch.c). Strict eager, fused eager and the op library all
 * launch through here; it never records or defers anything (that is
 * fusion/, above it). */
#ifndef TOCL_LAUNCH_H
#define TOCL_LAUNCH_H

#include <pthread.h>
#include <stdint.h>

#include "internal.h"
#include "program/kernels.h"
#include "tocl/ops.h"

/* Product of sizes (1 for ndim 0); sizes are checked non-negative by callers. */
static inline int64_t tocl_ops_numel(const tocl_tensor *t) {
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        n *= t->sizes[d];
    return n;
}

/* Row-major dense (size-1 dimensions may have any stride). */
static inline int tocl_ops_is_contiguous(const tocl_tensor *t) {
    int64_t expect = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->sizes[d] == 1)
            continue;
        if (t->strides[d] != expect)
            return 0;
        expect *= t->sizes[d];
    }
    return 1;
}

/* Check a tensor's shape fields: ndim in range, sizes >= 0, strides >= 0. */
tocl_status tocl_ops_check_tensor(const tocl_tensor *t, const char *what);

/* Map a tensor to (buffer, element offset), checking that every element it
 * reaches lies inside its live block and that the block's device shares
 * dev's context (*mem_dev receives that device). `what`/`k` name it in
 * messages ("input", 1). */
tocl_status tocl_ops_resolve(int dev, const tocl_tensor *t, const char *what, int k, cl_mem *buf,
                             cl_long *elem_off, int *mem_dev);

/* Scratch of n elements of esz bytes from the caching allocator, tied to
 * stream (so freeing it right after enqueuing the work that uses it is
 * safe: the block is reused only after that stream's work), resolved for
 * kernels as (buffer, element offset). On failure nothing is held. */
typedef struct tocl_ops_scratch {
    tocl_addr addr;
    cl_mem buf;
    cl_long off;
} tocl_ops_scratch;
tocl_status tocl_ops_scratch_get(int dev, int stream, int64_t n, size_t esz, tocl_ops_scratch *s);

/* Work-group size for 1-D elementwise-style launches on dev (program/kernels.c). */
#define tocl_ops_local_size tocl_kernel_local_size

/* Converting a host scalar to the bit pattern of a storage dtype (writes
 * tocl_dtype_size(t) bytes): C-style truncation for float -> int, round to nearest even for
 * float16/bfloat16, value != 0 for bool. */
void tocl_ops_scalar_bits(tocl_scalar v, tocl_dtype t, void *out);

/* A kernel of kernels/<family>.cl built with `options`, made once per
 * (device, family, name, options) and kept for the process in the one
 * kernel cache. Hold `lock` across setting arguments and enqueueing. */
typedef tocl_kernel_entry tocl_ops_kernel;

tocl_status tocl_ops_kernel_get(int dev, const char *family, const char *name, const char *options,
                                tocl_ops_kernel **out);
/* The same for a family with a generated section: `generated` (text that
 * lives for the process; compared by address) replaces the family's
 * TOCL_GENERATED marker line. */
tocl_status tocl_ops_kernel_get_generated(int dev, const char *family, const char *name, const char *options,
                                          const char *generated, tocl_ops_kernel **out);

/* The kernel's name in kernels/<family>.cl (for traces). */
const char *tocl_ops_kernel_name(const tocl_ops_kernel *k);

/* The largest work-group the driver allows for k on dev (at least 1). */
size_t tocl_ops_kernel_max_group(int dev, const tocl_ops_kernel *k);

/* One kernel argument: size bytes at ptr, or (ptr NULL) __local memory of that size. */
typedef struct tocl_ops_arg {
    size_t size;
    const void *ptr;
} tocl_ops_arg;

/* Set args[0..nargs) and enqueue a dims-D range on (dev, stream); local may
 * be NULL (the driver chooses). An empty range enqueues nothing. */
tocl_status tocl_ops_launch(int dev, int stream, tocl_ops_kernel *k, cl_uint dims, const size_t *global,
                            const size_t *local, const tocl_ops_arg *args, int nargs);

/* A trace name for a generated kernel: the kernel's name and the graph's
 * ops, "tocl_ew[mul+add]", "tocl_ew[copy]", "tocl_red_sum[abs]", or the
 * kernel's name alone for a reduction of its plain input (elementwise.c). */
void tocl_launch_trace_name(const char *kernel, const tocl_ir_graph *g, char *buf, size_t cap);

/* ---- generated elementwise kernels (elementwise.c) ---- */
#define TOCL_EW_MAX_OPERANDS (TOCL_IR_MAX_OUTPUTS + TOCL_IR_MAX_INPUTS)

typedef enum tocl_ew_build {
    TOCL_EW_BUILD = 0,  /* build the kernel now if it is not cached */
    TOCL_EW_ASYNC = 1   /* if not cached: launch nothing, build on the background thread */
} tocl_ew_build;

/* Check the operands of graph g as tocl_ew_run does (shapes, dtypes,
 * strides, the device's float64 support). */
tocl_status tocl_ew_check(int dev, const tocl_ir_graph *g, const tocl_tensor *outputs, const tocl_tensor *inputs,
                          const tocl_scalar *scalars);

/* Launch graph g over operands already checked and resolved to buffers and
 * element offsets (outputs first, then inputs; every operand has ops[0]'s
 * ndim and sizes). *launched (may be NULL) says whether a kernel was
 * enqueued; with TOCL_EW_ASYNC it is 0 while the kernel is being built. The
 * queue is taken without flushing deferred work (the caller is the flush or
 * has flushed). */
tocl_status tocl_ew_launch(int dev, int stream, const tocl_ir_graph *g, const tocl_tensor *const *ops,
                           const cl_mem *bufs, const cl_long *offs, const tocl_scalar *scalars, tocl_ew_build mode,
                           int *launched);

#endif
