/* index_internal.h - what runtime/ops/index.c, index_mask.c and shape.c
 * share: the dtype build options of the kernel families in index_params.h
 * and operand resolution. */
#ifndef TOCL_INDEX_INTERNAL_H
#define TOCL_INDEX_INTERNAL_H

#include <pthread.h>

#include "launch/launch.h"
#include "tocl/index.h"

/* "-DDT_F32" etc. for arithmetic builds; "-DDT_B4" etc. (by element size)
 * for pure moves. */
const char *idx_dt_option(tocl_dtype t);
const char *idx_move_option(tocl_dtype t);

/* F64 on a device without cl_khr_fp64 -> TOCL_E_UNSUPPORTED. */
tocl_status idx_check_fp64(int dev, tocl_dtype t, const char *op);

/* Resolve a tensor on dev (same device, or fail naming `what`). */
tocl_status idx_resolve(int dev, const tocl_tensor *t, const char *what, cl_mem *buf, cl_long *off);

#endif
