/* fft_params.h - the launch description of the FFT kernel, shared by
 * kernels/fft.cl and runtime/ops/fft.c. One launch runs one work-group per
 * transform of length n (per V transforms on CPUs): it loads n complex
 * values (a side's read rules), runs the radix passes in local memory, and
 * stores them (the other side's write rules). Big and awkward lengths are two or four such
 * launches (runtime/ops/fft_plan.c). 8-byte fields come first so host and
 * device lay the structs out identically. */
#ifndef TOCL_FFT_PARAMS_H
#define TOCL_FFT_PARAMS_H

#ifdef __OPENCL_VERSION__
typedef long tocl_fft_i64;
typedef int tocl_fft_i32;
#else
#include <stdint.h>
typedef int64_t tocl_fft_i64;
typedef int32_t tocl_fft_i32;
#endif

/* Batch dims of one launch: slot 0 belongs to a split (four-step) length,
 * the others to the caller's batch dims, innermost first. */
#define TOCL_FFT_MAXB 4
/* Passes of one launch: a length that fits local memory has at most about
 * log3(n) of them. */
#define TOCL_FFT_MAXP 24

/* How a side reads or writes a value. */
#define TOCL_FFT_COMPLEX 0   /* (re, im) pairs, im at + im: 1, or a real stride for two reals as one value */
#define TOCL_FFT_REAL 1      /* reals: imaginary 0 on load, dropped on store */
#define TOCL_FFT_HERMITIAN 2 /* load only: entries 0..len/2 stored, the rest their conjugate mirror */
/* A real transform of even length len through a complex one of h = len / 2
 * (z_j = x_2j + i x_2j+1): HALF_PACKED loads Z_k = (X_k + conj X_h-k) + i
 * (X_k - conj X_h-k) conj(w_len^k) from Hermitian X (c2r), HALF_UNPACK
 * stores X_k = E_k + w_len^k O_k, E_k = (Z_k + conj Z_h-k) / 2, O_k = (Z_k -
 * conj Z_h-k) / 2i, for k < nvalid (the completion past h conjugated; r2c).
 * w_len^k for k <= h: table entry htw + k. */
#define TOCL_FFT_HALF_PACKED 3
#define TOCL_FFT_HALF_UNPACK 4

/* One operand of a launch. Element p of transform (c0, c1, ...) has the
 * logical index l = p * lmul + c0 * lb0 (a split length interleaves the
 * transforms of a launch); it lives at scalar off + l * stride +
 * sum(c_d * bs[d]) (a complex one's imaginary part at +1). Loads of l >=
 * nvalid read 0 and stores there are dropped. A load is conjugated
 * (conj_pre), times the table entry tab[l] (tab >= 0), conjugated again
 * (conj_post); a store is first times tw4[p * c0] (tw4 >= 0: a split's
 * twiddle), then the same, then times the launch's scale. Tables are
 * complex entry offsets into the plan's table buffer. */
typedef struct tocl_fft_side {
    tocl_fft_i64 off, stride, im, lmul, lb0, len, nvalid, tab, tw4, htw;
    tocl_fft_i64 bs[TOCL_FFT_MAXB];
    tocl_fft_i32 mode, conj_pre, conj_post, pad;
} tocl_fft_side;

/* n = prod(radix[0..npass)); tw: the entry where pass 0's twiddles start
 * (pass q with span ns = prod(radix[0..q)) has ns * (radix - 1) of them,
 * then, for radices without a dedicated butterfly, radix roots of unity);
 * perm: the entry of the plan's int table where the n load places start.
 * bsz: sizes of the batch dims (1 where unused), batch their product;
 * work-group g runs transforms (g0 + g) V .. (g0 + g) V + V - 1, V the
 * kernel's lanes (a long batch is cut into several launches). */
typedef struct tocl_fft_params {
    tocl_fft_side in, out;
    tocl_fft_i64 n, tw, perm, g0, batch;
    tocl_fft_i64 bsz[TOCL_FFT_MAXB];
    tocl_fft_i32 npass, pad;
    tocl_fft_i32 radix[TOCL_FFT_MAXP];
} tocl_fft_params;

#endif
