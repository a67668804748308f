/* random.h - random numbers beyond uniform/normal (those are in ops.h):
 * random_, bernoulli, exponential, geometric, cauchy, log-normal, randperm
 * and multinomial, all from the counter-based Philox4x32-10 generator.
 *
 * Element i of a destination's logical (row-major) order uses counter
 * offset + i / 4 under key seed, so values depend on seed and offset, never
 * on layout or launch shape. Each call documents how many counters it uses;
 * the caller's generator advances its offset by that many. Every call only
 * enqueues work, except none: flags are read back by the caller. */
#ifndef TOCL_RANDOM_H
#define TOCL_RANDOM_H

#include <stdint.h>

#include "tocl/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Distribution kinds (the values of TOCL_RAND_* in kernels/include/philox_params.h). */
typedef enum tocl_rand_kind {
    TOCL_RANDK_FROM_TO = 0,          /* (bits % range) + base; range 0: all 64 bits as int64 */
    TOCL_RANDK_BERNOULLI = 1,        /* 1 where 32 random bits < range (range = p * 2^32) */
    TOCL_RANDK_BERNOULLI_TENSOR = 2, /* 1 where u < p[i] (p float32, dense, dst's numel) */
    TOCL_RANDK_EXPONENTIAL = 3,      /* -log(u) / a, u in (0, 1) */
    TOCL_RANDK_GEOMETRIC = 4,        /* ceil(log(u) / log1p(-a)), a in (0, 1) */
    TOCL_RANDK_CAUCHY = 5,           /* a + b * tan(pi * (u - 1/2)) */
    TOCL_RANDK_LOG_NORMAL = 6        /* exp(a + b * z), z standard normal */
} tocl_rand_kind;

typedef struct tocl_rand_args {
    tocl_rand_kind kind;
    uint64_t range; /* FROM_TO: modulus (0 = 2^64); BERNOULLI: threshold in [0, 2^32] */
    int64_t base;   /* FROM_TO: added after the modulus */
    double a, b;    /* continuous parameters */
} tocl_rand_args;

/* dst := samples of args->kind in dst's dtype (any dtype; continuous kinds
 * need a floating dst). 32 random bits per element, 64 for FROM_TO with
 * range 0 or >= 2^28 and for float64. Uses ceil(numel / 4) counters. */
tocl_status tocl_op_random(int dev, int stream, const tocl_tensor *dst, const tocl_rand_args *args,
                           const tocl_tensor *p, uint64_t seed, uint64_t offset);

/* flag[0] := 1 if any value of src (dense float32) is NaN or outside
 * [lo, hi]; flag (int32) is zeroed by the caller and read back by it. */
tocl_status tocl_op_check_range(int dev, int stream, const tocl_tensor *src, double lo, double hi,
                                const tocl_tensor *flag);

/* Smallest power of two >= n: the workspace length of the sorts below. */
int64_t tocl_rand_sort_length(int64_t n);

/* dst (1-D, any dtype) := a uniform random permutation of 0 .. numel - 1:
 * sorts random 64-bit keys with a bitonic network. keys/vals: dense int64
 * workspaces of tocl_rand_sort_length(numel) elements. Uses ceil(numel / 4)
 * counters. */
tocl_status tocl_op_randperm(int dev, int stream, const tocl_tensor *dst, const tocl_tensor *keys,
                             const tocl_tensor *vals, uint64_t seed, uint64_t offset);

/* Validate multinomial probabilities (dense float32, rows x ncat) and write
 * per-row running sums to cdf (dense float32, same size). flags (dense
 * int32, 3 elements, zeroed by the caller): [0] an entry < 0, [1] an entry
 * inf or NaN, [2] a row sums to 0. */
tocl_status tocl_op_multinomial_scan(int dev, int stream, const tocl_tensor *probs, const tocl_tensor *cdf,
                                     const tocl_tensor *flags);

/* dst (int64, rows x ns, any strides) := ns categories per row of probs.
 * With replacement: inverse CDF on cdf from tocl_op_multinomial_scan; uses
 * ceil(rows * ns / 4) counters. Without: the exponential race (keys p / E,
 * E ~ Exp(1)) sorted per row; keys/vals are dense int64 workspaces of
 * tocl_rand_sort_length(rows * ncat) elements; uses ceil(rows * ncat / 4)
 * counters. Categories of probability 0 are drawn only when a row without
 * replacement has fewer than ns others (as the CPU). */
tocl_status tocl_op_multinomial(int dev, int stream, const tocl_tensor *dst, const tocl_tensor *probs,
                                const tocl_tensor *cdf, int replacement, const tocl_tensor *keys,
                                const tocl_tensor *vals, uint64_t seed, uint64_t offset);

#ifdef __cplusplus
}
#endif
#endif
