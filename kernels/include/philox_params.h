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

/* Transformations of tocl_philox_dist (the `kind` argument). */
#define TOCL_RAND_FROM_TO 0          /* (bits % range) + base; range 0: all 64 bits */
#define TOCL_RAND_BERNOULLI 1        /* 32 bits < range (a threshold in [0, 2^32]) */
#define TOCL_RAND_BERNOULLI_TENSOR 2 /* u < p[i] */
#define TOCL_RAND_EXPONENTIAL 3      /* -log(u) / a */
#define TOCL_RAND_GEOMETRIC 4        /* ceil(log(u) / log1p(-a)) */
#define TOCL_RAND_CAUCHY 5           /* a + b * tan(pi * (u - 1/2)) */
#define TOCL_RAND_LOG_NORMAL 6       /* exp(a + b * z), z standard normal */

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
