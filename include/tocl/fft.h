/* fft.h - discrete Fourier transforms along one dimension, batched over
 * every other dim (kernels/fft.cl): the transforms behind torch.fft.
 *
 * A complex operand is a float32 or float64 tocl_tensor whose LAST dim has
 * size 2 and stride 1 (re, im): the layout of torch.view_as_real. A real
 * operand has no pair dim. `dim` names the transformed dim (0 <= dim <
 * real ndim; for complex operands it never names the pair dim). Every other
 * dim is a batch dim: sizes equal in out and in, any non-negative strides
 * (0 broadcasts in `in`). out and in must not overlap (the caller
 * guarantees it). `scale` multiplies every output value (1, 1/n or
 * 1/sqrt(n): the caller's norm). float64 needs cl_khr_fp64
 * (TOCL_E_UNSUPPORTED otherwise). Bad arguments fail with TOCL_E_INVALID
 * before anything is launched. Calls only enqueue; numel 0 launches
 * nothing. Any length n >= 1 runs: lengths whose prime factors are small
 * in one launch (two when a transform outgrows a work-group's local
 * memory), others by Bluestein's algorithm (twice that). A length beyond
 * two launches' reach is TOCL_E_UNSUPPORTED: about 2^27 points on pocl,
 * 2^22 (float64) to 2^24 (float32) on a GPU with 48 KiB of local memory,
 * half that for lengths with a large prime factor. */
#ifndef TOCL_FFT_H
#define TOCL_FFT_H

#include "tocl/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out[k] = scale * sum_j in[j] * exp(-+2 pi i j k / n), n = in->sizes[dim]
 * = out->sizes[dim]; the sign is - forward, + when inverse != 0. */
tocl_status tocl_fft_c2c(int dev, int stream, const tocl_tensor *out, const tocl_tensor *in, int dim, int inverse,
                         double scale);

/* in: real, n = in->sizes[dim]; out: complex with out->sizes[dim] = n/2+1
 * (onesided) or n (the upper half then holds the conjugate-symmetric
 * completion). Forward sign. out->ndim == in->ndim + 1. */
tocl_status tocl_fft_r2c(int dev, int stream, const tocl_tensor *out, const tocl_tensor *in, int dim, double scale);

/* in: complex, at least n/2+1 entries along dim, only the first n/2+1 read;
 * out: real, n = out->sizes[dim]. Inverse sign (exp(+...)), as torch's
 * _fft_c2r. The imaginary parts of entry 0 and (n even) entry n/2 are
 * ignored, as pocketfft and cuFFT do. in->ndim == out->ndim + 1. */
tocl_status tocl_fft_c2r(int dev, int stream, const tocl_tensor *out, const tocl_tensor *in, int dim, double scale);

#ifdef __cplusplus
}
#endif
#endif
