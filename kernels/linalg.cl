/* linalg.cl - dense linear algebra on batches of small and medium matrices:
 * Cholesky, LU with partial pivoting, triangular solves, row interchanges,
 * Householder QR and the application of its reflectors, and the Jacobi
 * eigen / singular value iterations. Factorizations run one work-group per
 * matrix (TOCL_LA_GROUP items, barriers between the steps of a column);
 * solves and reflector applications run one work-item per right-hand-side
 * column. Every operand is strided (linalg_params.h), so the host passes
 * transposed and column-major views instead of copies. LAPACK's conventions
 * (1-based pivots and info, its Householder sign choice) are kept, so the
 * results match the CPU's to rounding. -DLA_F64 selects double. */
#include "linalg_params.h"

#ifdef LA_F64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double T;
#define LA_EPS DBL_EPSILON
#else
typedef float T;
#define LA_EPS FLT_EPSILON
#endif

#define IX(L, b, i, j) ((L).off + (b) * (L).bs + (i) * (L).rs + (j) * (L).cs)
#define IV(L, b, i) ((L).off + (b) * (L).bs + (i) * (L).rs)
#define LA_BAR barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)

/* Sum of v over the group (every item passes its part; all get the total). */
inline T la_group_sum(__local T *scratch, T v)
{
    int lid = get_local_id(0);
    scratch[lid] = v;
    LA_BAR;
    for (int s = TOCL_LA_GROUP / 2; s > 0; s >>= 1) {
        if (lid < s)
            scratch[lid] += scratch[lid + s];
        LA_BAR;
    }
    T r = scratch[0];
    LA_BAR;
    return r;
}

/* Cholesky A = L L^T of the lower triangle, in place (the host passes the
 * transposed view for upper). info = j + 1 at the first non-positive (or
 * NaN) pivot, as LAPACK's potrf, and the factorization stops there. */
__kernel void la_potrf(__global T *a, __global int *info, tocl_la_params p)
{
    long b = get_group_id(0), n = p.n;
    int lid = get_local_id(0);
    __local int failed;
    __local T piv;
    if (lid == 0) {
        failed = 0;
        info[IV(p.x, b, 0)] = 0;
    }
    LA_BAR;
    for (long j = 0; j < n; j++) {
        if (lid == 0) {
            T d = a[IX(p.a, b, j, j)];
            if (!(d > 0)) {
                failed = 1;
                info[IV(p.x, b, 0)] = (int)(j + 1);
            } else {
                piv = sqrt(d);
                a[IX(p.a, b, j, j)] = piv;
            }
        }
        LA_BAR;
        if (failed)
            break;
        T d = piv;
        for (long i = j + 1 + lid; i < n; i += TOCL_LA_GROUP)
            a[IX(p.a, b, i, j)] /= d;
        LA_BAR;
        for (long i = j + 1 + lid; i < n; i += TOCL_LA_GROUP) {
            T lij = a[IX(p.a, b, i, j)];
            for (long k = j + 1; k <= i; k++)
                a[IX(p.a, b, i, k)] -= lij * a[IX(p.a, b, k, j)];
        }
        LA_BAR;
    }
}

/* LU with partial pivoting (flag0; without it the pivots are the identity),
 * in place on the m x n matrix a: as LAPACK's getf2, the pivot is the first
 * largest |a[i, j]|, pivots are 1-based, and a zero pivot sets info = j + 1
 * (the first such) while the factorization goes on. */
__kernel void la_getrf(__global T *a, __global int *piv, __global int *info, tocl_la_params p)
{
    long b = get_group_id(0), m = p.m, n = p.n, kmin = m < n ? m : n;
    int lid = get_local_id(0);
    __local T rv[TOCL_LA_GROUP];
    __local long ri[TOCL_LA_GROUP];
    if (lid == 0)
        info[IV(p.y, b, 0)] = 0;
    LA_BAR;
    for (long j = 0; j < kmin; j++) {
        long r = j;
        if (p.flag0) {
            T bv = -1;
            long bi = m;
            for (long i = j + lid; i < m; i += TOCL_LA_GROUP) {
                T v = fabs(a[IX(p.a, b, i, j)]);
                if (v > bv) {
                    bv = v;
                    bi = i;
                }
            }
            rv[lid] = bv;
            ri[lid] = bi;
            LA_BAR;
            for (int s = TOCL_LA_GROUP / 2; s > 0; s >>= 1) {
                if (lid < s && (rv[lid + s] > rv[lid] || (rv[lid + s] == rv[lid] && ri[lid + s] < ri[lid]))) {
                    rv[lid] = rv[lid + s];
                    ri[lid] = ri[lid + s];
                }
                LA_BAR;
            }
            r = ri[0] < m ? ri[0] : j; /* an all-NaN column keeps row j */
            LA_BAR;
        }
        if (lid == 0)
            piv[IV(p.x, b, j)] = (int)(r + 1);
        T pv = a[IX(p.a, b, r, j)];
        if (pv == 0) {
            if (lid == 0 && info[IV(p.y, b, 0)] == 0)
                info[IV(p.y, b, 0)] = (int)(j + 1);
        } else {
            if (r != j)
                for (long c = lid; c < n; c += TOCL_LA_GROUP) {
                    T t = a[IX(p.a, b, j, c)];
                    a[IX(p.a, b, j, c)] = a[IX(p.a, b, r, c)];
                    a[IX(p.a, b, r, c)] = t;
                }
            LA_BAR;
            for (long i = j + 1 + lid; i < m; i += TOCL_LA_GROUP)
                a[IX(p.a, b, i, j)] /= pv;
        }
        LA_BAR;
        for (long i = j + 1 + lid; i < m; i += TOCL_LA_GROUP) {
            T l = a[IX(p.a, b, i, j)];
            for (long c = j + 1; c < n; c++)
                a[IX(p.a, b, i, c)] -= l * a[IX(p.a, b, j, c)];
        }
        LA_BAR;
    }
}

/* Solve A X = B in place of B (n x k), A lower or upper (flag0), with a
 * unit diagonal (flag1) or its own. One work-item per column of B. */
__kernel void la_trsm(__global const T *a, __global T *x, tocl_la_params p)
{
    long c = get_global_id(0), b = get_global_id(1), n = p.n;
    if (c >= p.k)
        return;
    if (!p.flag0) {
        for (long i = 0; i < n; i++) {
            T s = x[IX(p.b, b, i, c)];
            for (long j = 0; j < i; j++)
                s -= a[IX(p.a, b, i, j)] * x[IX(p.b, b, j, c)];
            x[IX(p.b, b, i, c)] = p.flag1 ? s : s / a[IX(p.a, b, i, i)];
        }
    } else {
        for (long i = n - 1; i >= 0; i--) {
            T s = x[IX(p.b, b, i, c)];
            for (long j = i + 1; j < n; j++)
                s -= a[IX(p.a, b, i, j)] * x[IX(p.b, b, j, c)];
            x[IX(p.b, b, i, c)] = p.flag1 ? s : s / a[IX(p.a, b, i, i)];
        }
    }
}

/* Row interchanges of B (m x k) by the k = p.n 1-based pivots, in order
 * (LAPACK's laswp), or undone in reverse order (flag0). */
__kernel void la_laswp(__global const int *piv, __global T *x, tocl_la_params p)
{
    long c = get_global_id(0), b = get_global_id(1);
    if (c >= p.k)
        return;
    for (long t = 0; t < p.n; t++) {
        long i = p.flag0 ? p.n - 1 - t : t;
        long r = (long)piv[IV(p.x, b, i)] - 1;
        if (r == i || r < 0 || r >= p.m)
            continue;
        T v = x[IX(p.b, b, i, c)];
        x[IX(p.b, b, i, c)] = x[IX(p.b, b, r, c)];
        x[IX(p.b, b, r, c)] = v;
    }
}

/* Householder QR of the m x n matrix a in place, as LAPACK's geqr2 with
 * larfg: R on and above the diagonal, the reflectors' vectors (unit first
 * element implied) below it, their scalars in tau. */
__kernel void la_geqrf(__global T *a, __global T *tau, tocl_la_params p)
{
    long b = get_group_id(0), m = p.m, n = p.n, kmin = m < n ? m : n;
    int lid = get_local_id(0);
    __local T scratch[TOCL_LA_GROUP];
    __local T tj, scal;
    for (long j = 0; j < kmin; j++) {
        T part = 0;
        for (long i = j + 1 + lid; i < m; i += TOCL_LA_GROUP) {
            T v = a[IX(p.a, b, i, j)];
            part += v * v;
        }
        T xnorm = sqrt(la_group_sum(scratch, part));
        if (lid == 0) {
            T alpha = a[IX(p.a, b, j, j)];
            if (xnorm == 0) {
                tj = 0;
                scal = 1;
            } else {
                T beta = -copysign(hypot(alpha, xnorm), alpha);
                tj = (beta - alpha) / beta;
                scal = 1 / (alpha - beta);
                a[IX(p.a, b, j, j)] = beta;
            }
            tau[IV(p.x, b, j)] = tj;
        }
        LA_BAR;
        T t = tj, sc = scal;
        if (t != 0) {
            for (long i = j + 1 + lid; i < m; i += TOCL_LA_GROUP)
                a[IX(p.a, b, i, j)] *= sc;
            LA_BAR;
            for (long c = j + 1 + lid; c < n; c += TOCL_LA_GROUP) {
                T w = a[IX(p.a, b, j, c)];
                for (long i = j + 1; i < m; i++)
                    w += a[IX(p.a, b, i, j)] * a[IX(p.a, b, i, c)];
                w *= t;
                a[IX(p.a, b, j, c)] -= w;
                for (long i = j + 1; i < m; i++)
                    a[IX(p.a, b, i, c)] -= w * a[IX(p.a, b, i, j)];
            }
        }
        LA_BAR;
    }
}

/* C := H_i C for the k reflectors in v (m rows; column i holds v_i below
 * row i, unit at row i) with scalars tau, in order i = 0 .. k-1 (flag0) or
 * k-1 .. 0. One work-item per column of C (m x p.n). */
__kernel void la_house_apply(__global const T *v, __global const T *tau, __global T *x, tocl_la_params p)
{
    long c = get_global_id(0), b = get_global_id(1), m = p.m;
    if (c >= p.n)
        return;
    for (long s = 0; s < p.k; s++) {
        long i = p.flag0 ? s : p.k - 1 - s;
        T t = tau[IV(p.x, b, i)];
        if (t == 0)
            continue;
        T w = x[IX(p.b, b, i, c)];
        for (long r = i + 1; r < m; r++)
            w += v[IX(p.a, b, r, i)] * x[IX(p.b, b, r, c)];
        w *= t;
        x[IX(p.b, b, i, c)] -= w;
        for (long r = i + 1; r < m; r++)
            x[IX(p.b, b, r, c)] -= w * v[IX(p.a, b, r, i)];
    }
}

/* Pair q of round r of a round-robin tournament over ne (even) players:
 * every pair meets once in ne - 1 rounds and the pairs of a round are
 * disjoint, so a round's rotations run in parallel (Brent and Luk). */
inline void la_pair(long q, long r, long ne, long *pp, long *qq)
{
    long m = ne - 1, x, y;
    if (q == 0) {
        x = r % m;
        y = m;
    } else {
        x = (q + r) % m;
        y = (m - q + r) % m;
    }
    *pp = x < y ? x : y;
    *qq = x < y ? y : x;
}

/* tan of the Jacobi angle that zeroes the pair: smaller root of
 * t^2 + 2 zeta t - 1 = 0, without overflow for a huge zeta. */
inline T la_jacobi_tan(T zeta)
{
    T az = fabs(zeta);
    T root = az > 1 ? az * sqrt(1 + (1 / az) * (1 / az)) : sqrt(1 + az * az);
    return (zeta >= 0 ? (T)1 : (T)-1) / (az + root);
}

/* Rotate columns pp and qq of the first len rows of operand L:
 * (x, y) := (c x - s y, s x + c y). Rows rotate as the columns of the
 * transposed layout (la_t). */
inline void la_rotate_cols(__global T *a, tocl_la_mat L, long b, long len, long pp, long qq, T c, T s)
{
    for (long i = 0; i < len; i++) {
        T x = a[IX(L, b, i, pp)], y = a[IX(L, b, i, qq)];
        a[IX(L, b, i, pp)] = c * x - s * y;
        a[IX(L, b, i, qq)] = s * x + c * y;
    }
}

inline tocl_la_mat la_t(tocl_la_mat L)
{
    tocl_la_mat r = L;
    r.rs = L.cs;
    r.cs = L.rs;
    return r;
}

/* Frobenius norm of the n x n (or m x n) matrix of operand a. */
inline T la_fro(__global const T *w, tocl_la_mat L, long b, long m, long n, __local T *scratch)
{
    T part = 0;
    for (long e = get_local_id(0); e < m * n; e += TOCL_LA_GROUP) {
        T v = w[IX(L, b, e / n, e % n)];
        part += v * v;
    }
    return sqrt(la_group_sum(scratch, part));
}

/* Symmetric eigenvalues by cyclic two-sided Jacobi, in place on the full
 * symmetric n x n matrix w: on exit its diagonal holds the (unsorted)
 * eigenvalues, copied to vals, and vec (flag0) the eigenvectors as columns.
 * rot (layout p.c): scratch for a round's rotations (2 per pair). A pair is rotated
 * while its off-diagonal element is above eps relative to its diagonal and
 * above eps * ||A||_F / n; info = 1 if max_sweeps pass without settling. */
__kernel void la_eigh_jacobi(__global T *w, __global T *vec, __global T *vals, __global T *rot,
                             __global int *info, tocl_la_params p)
{
    long b = get_group_id(0), n = p.n, ne = n + (n & 1), np = ne / 2;
    int lid = get_local_id(0);
    __local T scratch[TOCL_LA_GROUP];
    __local int rotated;
    __global T *rb = rot + p.c.off + b * p.c.bs;
    if (p.flag0)
        for (long e = lid; e < n * n; e += TOCL_LA_GROUP)
            vec[IX(p.b, b, e / n, e % n)] = e / n == e % n ? 1 : 0;
    T tol_abs = LA_EPS * la_fro(w, p.a, b, n, n, scratch) / (T)(n > 0 ? n : 1);
    int converged = n < 2;
    for (int sweep = 0; sweep < p.max_sweeps && !converged; sweep++) {
        if (lid == 0)
            rotated = 0;
        LA_BAR;
        for (long r = 0; r < ne - 1; r++) {
            for (long q = lid; q < np; q += TOCL_LA_GROUP) {
                long pp, qq;
                la_pair(q, r, ne, &pp, &qq);
                T c = 1, s = 0;
                if (qq < n) {
                    T apq = w[IX(p.a, b, pp, qq)], app = w[IX(p.a, b, pp, pp)], aqq = w[IX(p.a, b, qq, qq)];
                    if (fabs(apq) > tol_abs && fabs(apq) > LA_EPS * sqrt(fabs(app)) * sqrt(fabs(aqq))) {
                        T t = la_jacobi_tan((aqq - app) / (2 * apq));
                        c = 1 / sqrt(1 + t * t);
                        s = t * c;
                        rotated = 1;
                    } else if (!(fabs(apq) <= tol_abs || fabs(apq) <= LA_EPS * sqrt(fabs(app)) * sqrt(fabs(aqq)))) {
                        rotated = 1; /* NaN: never settles */
                    }
                }
                rb[2 * q] = c;
                rb[2 * q + 1] = s;
            }
            LA_BAR;
            for (long q = lid; q < np; q += TOCL_LA_GROUP) {
                long pp, qq;
                la_pair(q, r, ne, &pp, &qq);
                T c = rb[2 * q], s = rb[2 * q + 1];
                if (qq >= n || s == 0)
                    continue;
                la_rotate_cols(w, p.a, b, n, pp, qq, c, s);
                if (p.flag0)
                    la_rotate_cols(vec, p.b, b, n, pp, qq, c, s);
            }
            LA_BAR;
            for (long q = lid; q < np; q += TOCL_LA_GROUP) {
                long pp, qq;
                la_pair(q, r, ne, &pp, &qq);
                T c = rb[2 * q], s = rb[2 * q + 1];
                if (qq >= n || s == 0)
                    continue;
                la_rotate_cols(w, la_t(p.a), b, n, pp, qq, c, s);
                w[IX(p.a, b, pp, qq)] = 0;
                w[IX(p.a, b, qq, pp)] = 0;
            }
            LA_BAR;
        }
        converged = !rotated;
        LA_BAR;
    }
    for (long i = lid; i < n; i += TOCL_LA_GROUP)
        vals[IV(p.x, b, i)] = w[IX(p.a, b, i, i)];
    if (lid == 0)
        info[IV(p.y, b, 0)] = converged ? 0 : 1;
}

/* One-sided (Hestenes) Jacobi on the m x n matrix w, m >= n: rotates pairs
 * of columns until all are orthogonal; then column j of w is sigma_j u_j,
 * and vec (flag0) accumulates the rotations (V, n x n). A pair is rotated
 * while |w_p . w_q| > sqrt(m) eps |w_p| |w_q| (LAPACK gesvj's tolerance)
 * and both columns are above eps * ||A||_F. info = 1 if max_sweeps pass. */
__kernel void la_svd_jacobi(__global T *w, __global T *vec, __global int *info, tocl_la_params p)
{
    long b = get_group_id(0), m = p.m, n = p.n, ne = n + (n & 1), np = ne / 2;
    int lid = get_local_id(0);
    __local T scratch[TOCL_LA_GROUP];
    __local int rotated;
    if (p.flag0)
        for (long e = lid; e < n * n; e += TOCL_LA_GROUP)
            vec[IX(p.b, b, e / n, e % n)] = e / n == e % n ? 1 : 0;
    T fro = la_fro(w, p.a, b, m, n, scratch);
    T tol = sqrt((T)m) * LA_EPS, small = LA_EPS * fro;
    int converged = n < 2;
    for (int sweep = 0; sweep < p.max_sweeps && !converged; sweep++) {
        if (lid == 0)
            rotated = 0;
        LA_BAR;
        for (long r = 0; r < ne - 1; r++) {
            for (long q = lid; q < np; q += TOCL_LA_GROUP) {
                long pp, qq;
                la_pair(q, r, ne, &pp, &qq);
                if (qq >= n)
                    continue;
                T al = 0, be = 0, ga = 0;
                for (long i = 0; i < m; i++) {
                    T x = w[IX(p.a, b, i, pp)], y = w[IX(p.a, b, i, qq)];
                    al += x * x;
                    be += y * y;
                    ga += x * y;
                }
                T np_ = sqrt(al), nq = sqrt(be);
                if (!(fabs(ga) > tol * np_ * nq && np_ > small && nq > small)) {
                    if (isnan(ga))
                        rotated = 1; /* NaN: never settles */
                    continue;
                }
                rotated = 1;
                T t = la_jacobi_tan((be - al) / (2 * ga));
                T c = 1 / sqrt(1 + t * t), s = t * c;
                la_rotate_cols(w, p.a, b, m, pp, qq, c, s);
                if (p.flag0)
                    la_rotate_cols(vec, p.b, b, n, pp, qq, c, s);
            }
            LA_BAR;
        }
        converged = !rotated;
        LA_BAR;
    }
    if (lid == 0)
        info[IV(p.x, b, 0)] = converged ? 0 : 1;
}
