/* index_internal.h - what runtime/ops/index.c and shape.c share: a cache of
 * kernel objects keyed by (device, family, kernel, build options), and the
 * dtype build option of the kernel families in index_params.h. */
#ifndef TOCL_INDEX_INTERNAL_H
#define TOCL_INDEX_INTERNAL_H

#include <pthread.h>

#include "ops/ops_internal.h"
#include "tocl/index.h"

typedef struct idx_kernel {
    struct idx_kernel *next;
    int dev;
    char key[256]; /* family/kernel/options */
    cl_kernel kernel;
    size_t local;
    pthread_mutex_t lock; /* clSetKernelArg + enqueue as one step */
} idx_kernel;

/* Find or build kernel `name` of kernels/<family>.cl with `options`.
 * Entries live for the process. */
tocl_status idx_kernel_get(int dev, const char *family, const char *name, const char *options, idx_kernel **out);

/* "-DDT_F32" etc. for arithmetic builds; "-DDT_B4" etc. (by element size)
 * for pure moves. */
const char *idx_dt_option(tocl_dtype t);
const char *idx_move_option(tocl_dtype t);

/* F64 on a device without cl_khr_fp64 -> TOCL_E_UNSUPPORTED. */
tocl_status idx_check_fp64(int dev, tocl_dtype t, const char *op);

/* Resolve a tensor on dev (same device, or fail naming `what`). */
tocl_status idx_resolve(int dev, const tocl_tensor *t, const char *what, cl_mem *buf, cl_long *off);

#endif
