/* linalg_params.h - operand layouts of the dense linear algebra kernels,
 * shared by kernels/linalg.cl and runtime/ops/linalg.c. Every operand is a
 * batch of matrices (or of vectors: cols 1): element (i, j) of matrix b is
 * at off + b * bs + i * rs + j * cs, so transposes, column-major layouts
 * and broadcast batches (bs 0) cost nothing. 8-byte fields come first so
 * host and device lay the structs out identically. */
#ifndef TOCL_LINALG_PARAMS_H
#define TOCL_LINALG_PARAMS_H

#ifdef __OPENCL_VERSION__
typedef long tocl_la_i64;
typedef int tocl_la_i32;
#else
#include <stdint.h>
typedef int64_t tocl_la_i64;
typedef int32_t tocl_la_i32;
#endif

/* One operand: element offset of matrix 0 and its batch / row / column strides. */
typedef struct tocl_la_mat {
    tocl_la_i64 off, bs, rs, cs;
} tocl_la_mat;

/* a, b, c: matrix operands; x, y: vector operands (pivots, tau, info,
 * eigenvalues). m x n: the shape the kernel works on; k: a third extent
 * (right-hand sides, reflectors). flags: per-kernel switches. */
typedef struct tocl_la_params {
    tocl_la_mat a, b, c, x, y;
    tocl_la_i64 batch, m, n, k;
    tocl_la_i32 flag0, flag1, flag2, max_sweeps;
} tocl_la_params;

/* Work-group size of the one-group-per-matrix kernels (a power of two);
 * fixed, because some drivers compile a kernel anew per local size. */
#define TOCL_LA_GROUP 64

#endif
