/* fft_internal.h - FFT plans (fft_plan.c) as the launches (fft.c) use
 * them: how a length is factored into passes, where its twiddles live. */
#ifndef TOCL_FFT_INTERNAL_H
#define TOCL_FFT_INTERNAL_H

#include "fft_params.h"
#include "launch/launch.h"
#include "ops/fft_config.h"

/* The passes of one launch: n = prod(radix), twiddles from table entry
 * tw, load places (the digit reversal) from int table entry perm; direct:
 * some radix has no butterfly (its pass needs a second copy of the values). */
typedef struct fft_passes {
    int64_t n, tw, perm;
    int npass, direct;
    int radix[TOCL_FFT_MAXP];
} fft_passes;

/* A complex transform of length n: one launch (a), or, when n does not fit
 * local memory, n = a.n * b.n as two (the four-step algorithm): a.n-point
 * transforms over the b.n interleaved subsequences, each output twiddled by
 * w_n^(k1 i2) (table entry tw4 + k1 * i2) into scratch, then b.n-point
 * transforms of that, written interleaved. */
typedef struct fft_core {
    int64_t n, tw4;
    int split;
    fft_passes a, b;
} fft_core;

/* How lengths n run on (dev, dtype): core is n's own transform, or, for
 * lengths with a large prime factor (blue), the shortest m >= 2n - 1 with
 * factors 2, 3, 5 and 7 only, for Bluestein's algorithm, with entries
 * chirp (n of them: w_j = exp(-pi i j^2 / n)) and kern (m: the transform
 * of the conjugate chirp, over m). Real transforms of even n whose half h
 * = n / 2 runs in one launch (half) run as complex ones of h: hcore, with
 * w_n^k for k <= h at entry htw. Plans live for the process; tab holds
 * every table, of the plan's dtype, perm the load places (int). */
typedef struct fft_plan {
    struct fft_plan *next;
    int dev;
    tocl_dtype dt;
    fft_config cfg;
    int64_t n;
    int blue, half;
    int64_t chirp, kern, htw;
    fft_core core, hcore;
    cl_mem tab, perm;
} fft_plan;

/* The plan of length n >= 1 under settings cfg, made on first use (host
 * tables, one upload). TOCL_E_UNSUPPORTED when n is too long for the
 * device's local memory even in two launches. */
tocl_status fft_plan_get(int dev, tocl_dtype dt, const fft_config *cfg, int64_t n, const fft_plan **out);

/* exp(-2 pi i e / n) in double, by octant symmetry from an angle in
 * [0, pi / 4] (exact at multiples of pi / 4). */
void fft_root(int64_t e, int64_t n, double *re, double *im);

#endif
