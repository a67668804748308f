/* sort_launch.h - private helpers of the sort family's host files
 * (runtime/ops/sort.c, sort_ops.c): kernel cache, row layouts, scratch. */
#ifndef TOCL_SORT_LAUNCH_H
#define TOCL_SORT_LAUNCH_H

#include "launch/launch.h"
#include "sort_params.h"
#include "tocl/sort.h"

/* Kernels of kernels/sort.cl; order matches sort_kernel_names in sort.c. */
typedef enum sort_kid {
    SORT_K_LOCAL = 0,
    SORT_K_MERGE,
    SORT_K_TAKE,
    SORT_K_SEARCH,
    SORT_K_ISIN,
    SORT_K_UCOUNT,
    SORT_K_USCAN,
    SORT_K_UAPPLY,
    SORT_K_UFILL,
    SORT_K_UCOUNTS,
    SORT_K_MINMAX,
    SORT_K_HISTC,
    SORT_K_HSTORE,
    SORT_K_BINCOUNT,
    SORT_K_NUM
} sort_kid;

/* One kernel argument: clSetKernelArg(size, value); value NULL = __local. */
typedef tocl_ops_arg sort_arg;
#define SORT_ARG(x) {sizeof(x), &(x)}
#define SORT_LOCAL(bytes) {(bytes), NULL}

/* Enqueue kernel kid of dtype dt's build over `global` work-items
 * (rounded up to the local size); local 0 = the kernel's fixed default. */
tocl_status sort_launch(int dev, int stream, tocl_dtype dt, sort_kid kid, size_t global, size_t local,
                        const sort_arg *args, int nargs);

/* The fixed work-group size of kernel kid on dev (a power of two <= 256,
 * so PoCL compiles each kernel once). */
tocl_status sort_local_size(int dev, tocl_dtype dt, sort_kid kid, size_t *out);

/* Rows operands -> shared shape and per-operand layouts with collapsed batch
 * dimensions. Empty operands (or NULL ones) get the buffer of the first
 * non-empty one and a zero layout, so kernels always get a valid buffer. */
tocl_status sort_rows_prep(int dev, const char *what, int nops, const tocl_tensor *const *ts,
                           tocl_sort_shape *sh, tocl_sort_layout *ls, cl_mem *bufs);

/* Device scratch from the caching allocator, freed (stream-ordered) with
 * sort_scratch_free once the work using it is enqueued. */
typedef struct sort_scratch {
    tocl_addr addr;
    cl_mem buf;
    size_t off; /* bytes */
} sort_scratch;
tocl_status sort_scratch_get(int dev, int stream, size_t bytes, sort_scratch *s);
void sort_scratch_free(sort_scratch *s);

/* float64 on a device without cl_khr_fp64 fails here; other dtypes pass. */
tocl_status sort_check_dtype(int dev, tocl_dtype dt, const char *what);

#endif
