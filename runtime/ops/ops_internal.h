/* ops_internal.h - helpers shared by the op library's host files (ops/). */
#ifndef TOCL_OPS_INTERNAL_H
#define TOCL_OPS_INTERNAL_H

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

#endif
