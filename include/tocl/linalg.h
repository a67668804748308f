/* linalg.h - dense linear algebra on batches of matrices (kernels/linalg.cl,
 * kernels/ldl.cl, kernels/eig.cl):
 * the factorizations and solves behind torch.linalg on the ocl device.
 *
 * A matrix operand is a tocl_tensor of ndim 3, [batch, rows, cols], with any
 * strides (0 broadcasts a batch); a vector operand (pivots, tau, info,
 * eigenvalues) has ndim 2, [batch, length]. Matrices are float32 or float64
 * (float64 needs cl_khr_fp64), real or complex: a complex operand is given
 * as its real dtype in pairs layout, one more trailing dim [..., 2] of
 * stride 1 (view_as_real's), and every matrix and tau of a call must agree;
 * eigenvalues stay real. Pivots and info are int32 with LAPACK's 1-based
 * meaning. Calls only enqueue work: info is read by the caller. */
#ifndef TOCL_LINALG_H
#define TOCL_LINALG_H

#include "tocl/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Cholesky factor L (A = L L^H) of the lower triangle of each n x n matrix,
 * in place; info[b] = j + 1 at the first non-positive pivot, else 0. */
tocl_status tocl_la_potrf(int dev, int stream, const tocl_tensor *a, const tocl_tensor *info);

/* LU factorization of each m x n matrix in place (unit-lower L below the
 * diagonal, U on and above), with partial pivoting when pivot != 0;
 * piv [batch, min(m, n)], info [batch, 1]: j + 1 at the first zero pivot. */
tocl_status tocl_la_getrf(int dev, int stream, const tocl_tensor *a, const tocl_tensor *piv,
                          const tocl_tensor *info, int pivot);

/* B := A^-1 B (conj(A)^-1 B when conj != 0) for triangular n x n A (lower
 * or upper, unit diagonal or not) and n x k B. Transposed solves pass the
 * transposed view of A; conjugate-transposed ones also set conj. */
tocl_status tocl_la_trsm(int dev, int stream, const tocl_tensor *a, const tocl_tensor *b, int upper, int unit,
                         int conj);

/* Row interchanges of the m x k B by the pivots [batch, n] (1-based), in
 * order, or undone (reverse != 0). */
tocl_status tocl_la_laswp(int dev, int stream, const tocl_tensor *piv, const tocl_tensor *b, int reverse);

/* Bunch-Kaufman A = L D L^T (L D L^H when hermitian != 0; real matrices
 * ignore it) of the lower triangle of each n x n matrix, in place, as
 * LAPACK's sytf2 / hetf2 with uplo 'L': piv [batch, n] 1-based, negative
 * for both rows of a 2x2 block; info [batch, 1]: k + 1 at the first zero
 * column (that D block is singular), else 0. */
tocl_status tocl_la_sytrf(int dev, int stream, const tocl_tensor *a, const tocl_tensor *piv,
                          const tocl_tensor *info, int hermitian);

/* B := A^-1 B (n x k) with tocl_la_sytrf's factors ld and pivots, as
 * sytrs / hetrs with uplo 'L'. */
tocl_status tocl_la_sytrs(int dev, int stream, const tocl_tensor *ld, const tocl_tensor *piv,
                          const tocl_tensor *b, int hermitian);

/* Householder QR of each m x n matrix in place (LAPACK geqrf layout); tau
 * [batch, min(m, n)]. */
tocl_status tocl_la_geqrf(int dev, int stream, const tocl_tensor *a, const tocl_tensor *tau);

/* C := H_0 H_1 ... H_{k-1} C (forward = 0) or H_{k-1} ... H_0 C (forward
 * != 0) for the k reflectors H_i = I - tau_i v_i v_i^H in v (m x k, geqrf
 * layout) and tau [batch, k]; C is m x n. conj_tau applies H_i^H instead,
 * conj_v H_i^T (both: conj(H_i)); for real operands both are no-ops.
 * Right-side products pass the transposed C. */
tocl_status tocl_la_house_apply(int dev, int stream, const tocl_tensor *v, const tocl_tensor *tau,
                                const tocl_tensor *c, int forward, int conj_tau, int conj_v);

/* Symmetric (Hermitian) eigen decomposition by Jacobi rotations: w (n x n,
 * the full matrix) is destroyed; vals [batch, n] (real) receive the eigenvalues
 * unsorted and vec (n x n, or NULL) the eigenvectors as columns in the same
 * order; rot [batch, n + n % 2] (contiguous, w's dtype) is scratch for a
 * round's rotations; info [batch, 1]: 1 where the iteration did not settle. */
tocl_status tocl_la_eigh(int dev, int stream, const tocl_tensor *w, const tocl_tensor *vec,
                         const tocl_tensor *vals, const tocl_tensor *rot, const tocl_tensor *info);

/* One-sided Jacobi SVD of each m x n matrix w (m >= n) in place: on exit
 * its columns are orthogonal (column j = sigma_j u_j, unsorted) and vec
 * (n x n, or NULL) holds V with A V = w; info as tocl_la_eigh. */
tocl_status tocl_la_svd_jacobi(int dev, int stream, const tocl_tensor *w, const tocl_tensor *vec,
                               const tocl_tensor *info);

/* Eigenvalues (and right eigenvectors) of general n x n matrices as
 * LAPACK's geev, in its order (kernels/eig.cl). a: the matrices,
 * contiguous column-major, destroyed; w [batch, n] complex eigenvalues;
 * z and v (both or neither): [batch, n, n] scratch of a's type,
 * contiguous column-major, and the complex eigenvectors (columns of unit
 * norm, column-major); ws [batch, 4n] of a's type and rs [batch, 2n] of
 * its real type, contiguous scratch; info [batch, 1]: i + 1 where the QR
 * iteration failed to converge, else 0. */
tocl_status tocl_la_geev(int dev, int stream, const tocl_tensor *a, const tocl_tensor *z, const tocl_tensor *w,
                         const tocl_tensor *v, const tocl_tensor *ws, const tocl_tensor *rs,
                         const tocl_tensor *info);

#ifdef __cplusplus
}
#endif
#endif
