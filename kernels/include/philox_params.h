/* philox_params.h - parameters of the Philox RNG kernels, shared by
 * kernels/philox.cl and runtime/ops/random.c. 8-byte fields come first so
 * host and device lay the struct out identically. */
#ifndef TOCL_PHILOX_PARAMS_H
#define TOCL_PHILOX_PARAMS_H

#ifdef __OPENCL_VERSION__
typedef long tocl_pp_i64;
typedef ulong tocl_pp_u64;
typedef int tocl_pp_i32;
#else
#include <stdint.h>
typedef int64_t tocl_pp_i64;
typedef uint64_t tocl_pp_u64;
typedef int32_t tocl_pp_i32;
#endif

#define TOCL_PHILOX_MAX_DIMS 25 /* TOCL_TENSOR_MAX_DIMS */

typedef struct tocl_philox_params {
    tocl_pp_u64 seed;    /* key: low word, high word */
    tocl_pp_u64 offset;  /* counter of element 0 (per group of 4 elements) */
    tocl_pp_i64 n;       /* elements */
    tocl_pp_i64 dst_off; /* element offset of the destination in its buffer */
    tocl_pp_i64 sizes[TOCL_PHILOX_MAX_DIMS];   /* collapsed, outermost first */
    tocl_pp_i64 strides[TOCL_PHILOX_MAX_DIMS]; /* in elements */
    tocl_pp_i32 ndim;    /* 0: contiguous, element i at dst_off + i */
    tocl_pp_i32 pad;
} tocl_philox_params;

#endif
