/* ops_internal.h - helpers shared by the op library's host files (ops/). */
#ifndef TOCL_OPS_INTERNAL_H
#define TOCL_OPS_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "internal.h"
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

/* Work-group size for 1-D elementwise-style launches on dev, capped by the
 * kernel's limit. Fixed per device, because PoCL compiles a kernel anew for
 * every distinct local size it sees. */
size_t tocl_ops_local_size(int dev, cl_kernel k);

/* Converting a host scalar to the bit pattern of a storage dtype (8 bytes
 * of room): C-style truncation for float -> int, round to nearest even for
 * float16/bfloat16, value != 0 for bool. */
void tocl_ops_scalar_bits(tocl_scalar v, tocl_dtype t, void *out);

/* A kernel of kernels/<family>.cl built with `options`, made once per
 * (device, family, name, options) and kept for the process (kernel_cache.c).
 * Hold `lock` across setting arguments and enqueueing. */
typedef struct tocl_ops_kernel {
    struct tocl_ops_kernel *next;
    int dev;
    const char *family, *name; /* string literals */
    char *options;
    cl_kernel kernel;
    size_t local; /* tocl_ops_local_size: the group size of 1-D launches */
    pthread_mutex_t lock;
} tocl_ops_kernel;

tocl_status tocl_ops_kernel_get(int dev, const char *family, const char *name, const char *options,
                                tocl_ops_kernel **out);

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

#endif
