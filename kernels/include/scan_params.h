/* scan_params.h - parameters of the scan kernels, shared by kernels/scan.cl
 * and runtime/ops/scan.c. 8-byte fields first so host and device lay the
 * struct out identically. */
#ifndef TOCL_SCAN_PARAMS_H
#define TOCL_SCAN_PARAMS_H

#ifdef __OPENCL_VERSION__
typedef long tocl_sp_i64;
typedef int tocl_sp_i32;
#else
#include <stdint.h>
typedef int64_t tocl_sp_i64;
typedef int32_t tocl_sp_i32;
#endif

#define TOCL_SCAN_MAX_OUTER 8 /* outer (row) dims after collapsing */

typedef struct tocl_scan_params {
    tocl_sp_i64 n;        /* length of the scanned dimension */
    tocl_sp_i64 rows;     /* product of the other dimensions */
    tocl_sp_i64 chunk;    /* elements of a row one work-item scans */
    tocl_sp_i64 nchunks;  /* chunks per row */
    tocl_sp_i64 in_off, out_off, idx_off;  /* element offsets in their buffers */
    tocl_sp_i64 in_st, out_st, idx_st;     /* strides along the scanned dim */
    tocl_sp_i64 tmp_off;  /* offset of the chunk states in their buffer, in states */
    tocl_sp_i64 sizes[TOCL_SCAN_MAX_OUTER];   /* row dims, outermost first */
    tocl_sp_i64 in_rst[TOCL_SCAN_MAX_OUTER];
    tocl_sp_i64 out_rst[TOCL_SCAN_MAX_OUTER];
    tocl_sp_i64 idx_rst[TOCL_SCAN_MAX_OUTER];
    tocl_sp_i32 ndim;     /* row dims */
    tocl_sp_i32 pad;
} tocl_scan_params;

#endif
