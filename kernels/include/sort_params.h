/* sort_params.h - row layouts of the sort/search kernels, shared by
 * kernels/sort.cl and runtime/ops/sort.c. Every sort-family operand is a
 * batch of rows: `nbatch` batch dimensions (outermost first) and one row
 * dimension. 8-byte fields come first so host and device lay the structs
 * out identically. */
#ifndef TOCL_SORT_PARAMS_H
#define TOCL_SORT_PARAMS_H

#ifdef __OPENCL_VERSION__
typedef long tocl_sp_i64;
typedef int tocl_sp_i32;
#else
#include <stdint.h>
typedef int64_t tocl_sp_i64;
typedef int32_t tocl_sp_i32;
#endif

/* Batch dimensions after collapsing; kept small so kernel arguments stay
 * under the 1 KiB OpenCL 1.2 minimum for CL_DEVICE_MAX_PARAMETER_SIZE. */
#define TOCL_SORT_MAX_BATCH 10

/* Shape shared by the operands of one launch. */
typedef struct tocl_sort_shape {
    tocl_sp_i64 nrows;                       /* product of batch sizes */
    tocl_sp_i64 sizes[TOCL_SORT_MAX_BATCH];  /* batch sizes, outermost first */
    tocl_sp_i32 nbatch;
    tocl_sp_i32 pad;
} tocl_sort_shape;

/* Where one operand's elements live: element j of row r is at
 * off + sum(batch index_d * strides[d]) + j * inner. */
typedef struct tocl_sort_layout {
    tocl_sp_i64 off;
    tocl_sp_i64 inner;
    tocl_sp_i64 strides[TOCL_SORT_MAX_BATCH];
} tocl_sort_layout;

/* What tocl_sort_take writes per row (sort.cl). */
enum {
    TOCL_TAKE_RANGE = 0,   /* sorted positions 0 .. kout-1 (sort, topk) */
    TOCL_TAKE_KTH = 1,     /* sorted position k (kthvalue) */
    TOCL_TAKE_MEDIAN = 2,  /* lower median; first NaN when the row has one */
    TOCL_TAKE_NANMEDIAN = 3, /* lower median of the non-NaN values */
    TOCL_TAKE_MODE = 4     /* most frequent value, smallest on ties; last index */
};

#endif
