/* linalg.cl - dense linear algebra on batches of small and medium matrices:
 * Cholesky, LU with partial pivoting, triangular solves, row interchanges,
 * Householder QR and the application of its reflectors, and the Jacobi
 * eigen / singular value iterations. Factorizations run one work-group per
 * matrix (TOCL_LA_GROUP items, barriers between the steps of a column);
 * solves and reflector applications run one work-item per right-hand-side
 * column. Every operand is strided (linalg_params.h), so the host passes
 * transposed and column-major views instead of copies. LAPACK's conventions
 * (1-based pivots and info, its Householder sign choice) are kept, so the
 * results match the CPU's to rounding. -DLA_F64 selects double.
 *
 * -DLA_COMPLEX makes every matrix element a complex number (T = float2 or
 * double2: real, imaginary) with one source for both: arithmetic that
 * differs goes through the LA_ macros (linalg_scalar.h), the plain operators
 * for real T. Where the real code transposes, the complex code takes the
 * conjugate transpose (Cholesky A = L L^H, Householder H = I - tau v v^H,
 * Hermitian Jacobi rotations), as LAPACK's z-routines do; norms, pivots'
 * magnitudes, eigenvalues and rotation cosines stay real (R). */
#include "linalg_params.h"
#include "linalg_scalar.h"

/* Sum of v over the group (every item passes its part; all get the total). */
inline R la_group_sum(__local R *scratch, R v)
{
    int lid = get_local_id(0);
    scratch[lid] = v;
    LA_BAR;
    for (int s = TOCL_LA_GROUP / 2; s > 0; s >>= 1) {
        if (lid < s)
            scratch[lid] += scratch[lid + s];
        LA_BAR;
    }
    R r = scratch[0];
    LA_BAR;
    return r;
}

/* Cholesky A = L L^H of the lower triangle, in place (the host passes the
 * transposed view for upper). As LAPACK's potrf, only the real part of a
 * diagonal element is read; info = j + 1 at the first non-positive (or
 * NaN) pivot, and the factorization stops there. */
__kernel void la_potrf(__global T *a, __global int *info, tocl_la_params p)
{
    long b = get_group_id(0), n = p.n;
    int lid = get_local_id(0);
    __local int failed;
    __local R piv;
    if (lid == 0) {
        failed = 0;
        info[IV(p.x, b, 0)] = 0;
    }
    LA_BAR;
    for (long j = 0; j < n; j++) {
        if (lid == 0) {
            R d = LA_RE(a[IX(p.a, b, j, j)]);
            if (!(d > 0)) {
                failed = 1;
                info[IV(p.x, b, 0)] = (int)(j + 1);
            } else {
                piv = sqrt(d);
                a[IX(p.a, b, j, j)] = LA_R(piv);
            }
        }
        LA_BAR;
        if (failed)
            break;
        R d = piv;
        for (long i = j + 1 + lid; i < n; i += TOCL_LA_GROUP)
            a[IX(p.a, b, i, j)] /= d;
        LA_BAR;
        for (long i = j + 1 + lid; i < n; i += TOCL_LA_GROUP) {
            T lij = a[IX(p.a, b, i, j)];
            for (long k = j + 1; k <= i; k++)
                a[IX(p.a, b, i, k)] -= LA_MUL(lij, LA_CONJ(a[IX(p.a, b, k, j)]));
        }
        LA_BAR;
    }
}

/* LU with partial pivoting (flag0; without it the pivots are the identity),
 * in place on the m x n matrix a: as LAPACK's getf2, the pivot is the first
 * largest |a[i, j]| (|re| + |im| for complex, as i?amax), pivots are
 * 1-based, and a zero pivot sets info = j + 1 (the first such) while the
 * factorization goes on. */
__kernel void la_getrf(__global T *a, __global int *piv, __global int *info, tocl_la_params p)
{
    long b = get_group_id(0), m = p.m, n = p.n, kmin = m < n ? m : n;
    int lid = get_local_id(0);
    __local R rv[TOCL_LA_GROUP];
    __local long ri[TOCL_LA_GROUP];
    if (lid == 0)
        info[IV(p.y, b, 0)] = 0;
    LA_BAR;
    for (long j = 0; j < kmin; j++) {
        long r = j;
        if (p.flag0) {
            R bv = -1;
            long bi = m;
            for (long i = j + lid; i < m; i += TOCL_LA_GROUP) {
                R v = LA_ABS1(a[IX(p.a, b, i, j)]);
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
        if (LA_ISZERO(pv)) {
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
                a[IX(p.a, b, i, j)] = LA_DIV(a[IX(p.a, b, i, j)], pv);
        }
        LA_BAR;
        for (long i = j + 1 + lid; i < m; i += TOCL_LA_GROUP) {
            T l = a[IX(p.a, b, i, j)];
            for (long c = j + 1; c < n; c++)
                a[IX(p.a, b, i, c)] -= LA_MUL(l, a[IX(p.a, b, j, c)]);
        }
        LA_BAR;
    }
}

/* Solve A X = B in place of B (n x k), A lower or upper (flag0), with a
 * unit diagonal (flag1) or its own, A's elements conjugated (flag2: the
 * host passes the transposed view for a conjugate-transposed solve). One
 * work-item per column of B. */
__kernel void la_trsm(__global const T *a, __global T *x, tocl_la_params p)
{
    long c = get_global_id(0), b = get_global_id(1), n = p.n;
    if (c >= p.k)
        return;
    int cj = p.flag2;
    if (!p.flag0) {
        for (long i = 0; i < n; i++) {
            T s = x[IX(p.b, b, i, c)];
            for (long j = 0; j < i; j++)
                s -= LA_MUL(LA_CONJ_IF(cj, a[IX(p.a, b, i, j)]), x[IX(p.b, b, j, c)]);
            x[IX(p.b, b, i, c)] = p.flag1 ? s : LA_DIV(s, LA_CONJ_IF(cj, a[IX(p.a, b, i, i)]));
        }
    } else {
        for (long i = n - 1; i >= 0; i--) {
            T s = x[IX(p.b, b, i, c)];
            for (long j = i + 1; j < n; j++)
                s -= LA_MUL(LA_CONJ_IF(cj, a[IX(p.a, b, i, j)]), x[IX(p.b, b, j, c)]);
            x[IX(p.b, b, i, c)] = p.flag1 ? s : LA_DIV(s, LA_CONJ_IF(cj, a[IX(p.a, b, i, i)]));
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
 * larfg: R on and above the diagonal (its diagonal real), the reflectors'
 * vectors (unit first element implied) below it, their scalars in tau;
 * H_j^H = I - conj(tau) v v^H is applied to the columns right of j. */
__kernel void la_geqrf(__global T *a, __global T *tau, tocl_la_params p)
{
    long b = get_group_id(0), m = p.m, n = p.n, kmin = m < n ? m : n;
    int lid = get_local_id(0);
    __local R scratch[TOCL_LA_GROUP];
    __local T tj, scal;
    for (long j = 0; j < kmin; j++) {
        R part = 0;
        for (long i = j + 1 + lid; i < m; i += TOCL_LA_GROUP) {
            T v = a[IX(p.a, b, i, j)];
            part += LA_ABS2(v);
        }
        R xnorm = sqrt(la_group_sum(scratch, part));
        if (lid == 0) {
            T alpha = a[IX(p.a, b, j, j)];
            R ar = LA_RE(alpha), ai = LA_IM(alpha);
            if (xnorm == 0 && ai == 0) {
                tj = LA_R(0);
                scal = LA_R(1);
            } else {
                R beta = -copysign(hypot(hypot(ar, ai), xnorm), ar);
                tj = LA_CPLX((beta - ar) / beta, -ai / beta);
                scal = LA_DIV(LA_R(1), alpha - LA_R(beta));
                a[IX(p.a, b, j, j)] = LA_R(beta);
            }
            tau[IV(p.x, b, j)] = tj;
        }
        LA_BAR;
        T t = LA_CONJ(tj), sc = scal;
        if (!LA_ISZERO(t)) {
            for (long i = j + 1 + lid; i < m; i += TOCL_LA_GROUP)
                a[IX(p.a, b, i, j)] = LA_MUL(a[IX(p.a, b, i, j)], sc);
            LA_BAR;
            for (long c = j + 1 + lid; c < n; c += TOCL_LA_GROUP) {
                T w = a[IX(p.a, b, j, c)];
                for (long i = j + 1; i < m; i++)
                    w += LA_MUL(LA_CONJ(a[IX(p.a, b, i, j)]), a[IX(p.a, b, i, c)]);
                w = LA_MUL(w, t);
                a[IX(p.a, b, j, c)] -= w;
                for (long i = j + 1; i < m; i++)
                    a[IX(p.a, b, i, c)] -= LA_MUL(w, a[IX(p.a, b, i, j)]);
            }
        }
        LA_BAR;
    }
}

/* C := H_i C for the k reflectors H_i = I - tau_i v_i v_i^H in v (m rows;
 * column i holds v_i below row i, unit at row i), in order i = 0 .. k-1
 * (flag0) or k-1 .. 0. flag1 conjugates tau (H_i^H), flag2 conjugates v
 * (with flag1: conj(H_i); without: H_i^T), so every product of Q, Q^H, Q^T
 * and conj(Q) with C or C^T is one launch. One work-item per column of C
 * (m x p.n). */
__kernel void la_house_apply(__global const T *v, __global const T *tau, __global T *x, tocl_la_params p)
{
    long c = get_global_id(0), b = get_global_id(1), m = p.m;
    if (c >= p.n)
        return;
    for (long s = 0; s < p.k; s++) {
        long i = p.flag0 ? s : p.k - 1 - s;
        T t = LA_CONJ_IF(p.flag1, tau[IV(p.x, b, i)]);
        if (LA_ISZERO(t))
            continue;
        T w = x[IX(p.b, b, i, c)];
        for (long r = i + 1; r < m; r++)
            w += LA_MUL(LA_CONJ_IF(!p.flag2, v[IX(p.a, b, r, i)]), x[IX(p.b, b, r, c)]);
        w = LA_MUL(w, t);
        x[IX(p.b, b, i, c)] -= w;
        for (long r = i + 1; r < m; r++)
            x[IX(p.b, b, r, c)] -= LA_MUL(w, LA_CONJ_IF(p.flag2, v[IX(p.a, b, r, i)]));
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
inline R la_jacobi_tan(R zeta)
{
    R az = fabs(zeta);
    R root = az > 1 ? az * sqrt(1 + (1 / az) * (1 / az)) : sqrt(1 + az * az);
    return (zeta >= 0 ? (R)1 : (R)-1) / (az + root);
}

/* Rotate columns pp and qq of the first len rows of operand L by the
 * unitary [[c, s], [-conj(s), c]] (c real):
 * (x, y) := (c x - conj(s) y, s x + c y). Rows rotate (by its conjugate
 * transpose) as the columns of the transposed layout (la_t) with conj(s).
 * A complex pair with off-diagonal g = |g| e^(i phi) takes the real
 * rotation of |g| with s scaled by e^(i phi). */
inline void la_rotate_cols(__global T *a, tocl_la_mat L, long b, long len, long pp, long qq, R c, T s)
{
    T sc = LA_CONJ(s);
    for (long i = 0; i < len; i++) {
        T x = a[IX(L, b, i, pp)], y = a[IX(L, b, i, qq)];
        a[IX(L, b, i, pp)] = c * x - LA_MUL(sc, y);
        a[IX(L, b, i, qq)] = LA_MUL(s, x) + c * y;
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
inline R la_fro(__global const T *w, tocl_la_mat L, long b, long m, long n, __local R *scratch)
{
    R part = 0;
    for (long e = get_local_id(0); e < m * n; e += TOCL_LA_GROUP) {
        T v = w[IX(L, b, e / n, e % n)];
        part += LA_ABS2(v);
    }
    return sqrt(la_group_sum(scratch, part));
}

/* Symmetric (Hermitian) eigenvalues by cyclic two-sided Jacobi, in place on
 * the full n x n matrix w: on exit its diagonal holds the (unsorted, real)
 * eigenvalues, copied to vals, and vec (flag0) the eigenvectors as columns.
 * rot (layout p.c): scratch for a round's rotations (c and s per pair). A
 * pair is rotated while its off-diagonal element is above eps relative to
 * its diagonal and above eps * ||A||_F / n; info = 1 if max_sweeps pass
 * without settling. */
__kernel void la_eigh_jacobi(__global T *w, __global T *vec, __global R *vals, __global T *rot,
                             __global int *info, tocl_la_params p)
{
    long b = get_group_id(0), n = p.n, ne = n + (n & 1), np = ne / 2;
    int lid = get_local_id(0);
    __local R scratch[TOCL_LA_GROUP];
    __local int rotated;
    __global T *rb = rot + p.c.off + b * p.c.bs;
    if (p.flag0)
        for (long e = lid; e < n * n; e += TOCL_LA_GROUP)
            vec[IX(p.b, b, e / n, e % n)] = LA_R(e / n == e % n ? 1 : 0);
    R tol_abs = LA_EPS * la_fro(w, p.a, b, n, n, scratch) / (R)(n > 0 ? n : 1);
    int converged = n < 2;
    for (int sweep = 0; sweep < p.max_sweeps && !converged; sweep++) {
        if (lid == 0)
            rotated = 0;
        LA_BAR;
        for (long r = 0; r < ne - 1; r++) {
            for (long q = lid; q < np; q += TOCL_LA_GROUP) {
                long pp, qq;
                la_pair(q, r, ne, &pp, &qq);
                R c = 1;
                T s = LA_R(0);
                if (qq < n) {
                    T apq = w[IX(p.a, b, pp, qq)];
                    R app = LA_RE(w[IX(p.a, b, pp, pp)]), aqq = LA_RE(w[IX(p.a, b, qq, qq)]);
                    R g = LA_ABS(apq), rel = LA_EPS * sqrt(fabs(app)) * sqrt(fabs(aqq));
                    if (g > tol_abs && g > rel) {
                        R t = la_jacobi_tan((aqq - app) / (2 * g));
                        c = 1 / sqrt(1 + t * t);
                        s = (apq / g) * (t * c); /* real: the sign of apq, exactly */
                        rotated = 1;
                    } else if (!(g <= tol_abs || g <= rel)) {
                        rotated = 1; /* NaN: never settles */
                    }
                }
                rb[2 * q] = LA_R(c);
                rb[2 * q + 1] = s;
            }
            LA_BAR;
            for (long q = lid; q < np; q += TOCL_LA_GROUP) {
                long pp, qq;
                la_pair(q, r, ne, &pp, &qq);
                R c = LA_RE(rb[2 * q]);
                T s = rb[2 * q + 1];
                if (qq >= n || LA_ISZERO(s))
                    continue;
                la_rotate_cols(w, p.a, b, n, pp, qq, c, s);
                if (p.flag0)
                    la_rotate_cols(vec, p.b, b, n, pp, qq, c, s);
            }
            LA_BAR;
            for (long q = lid; q < np; q += TOCL_LA_GROUP) {
                long pp, qq;
                la_pair(q, r, ne, &pp, &qq);
                R c = LA_RE(rb[2 * q]);
                T s = rb[2 * q + 1];
                if (qq >= n || LA_ISZERO(s))
                    continue;
                la_rotate_cols(w, la_t(p.a), b, n, pp, qq, c, LA_CONJ(s));
                w[IX(p.a, b, pp, qq)] = LA_R(0);
                w[IX(p.a, b, qq, pp)] = LA_R(0);
            }
            LA_BAR;
        }
        converged = !rotated;
        LA_BAR;
    }
    for (long i = lid; i < n; i += TOCL_LA_GROUP)
        vals[IV(p.x, b, i)] = LA_RE(w[IX(p.a, b, i, i)]);
    if (lid == 0)
        info[IV(p.y, b, 0)] = converged ? 0 : 1;
}

/* One-sided (Hestenes) Jacobi on the m x n matrix w, m >= n: rotates pairs
 * of columns until all are orthogonal; then column j of w is sigma_j u_j,
 * and vec (flag0) accumulates the rotations (V, n x n). A pair is rotated
 * while |w_p^H w_q| > sqrt(m) eps |w_p| |w_q| (LAPACK gesvj's tolerance)
 * and both columns are above eps * ||A||_F. info = 1 if max_sweeps pass. */
__kernel void la_svd_jacobi(__global T *w, __global T *vec, __global int *info, tocl_la_params p)
{
    long b = get_group_id(0), m = p.m, n = p.n, ne = n + (n & 1), np = ne / 2;
    int lid = get_local_id(0);
    __local R scratch[TOCL_LA_GROUP];
    __local int rotated;
    if (p.flag0)
        for (long e = lid; e < n * n; e += TOCL_LA_GROUP)
            vec[IX(p.b, b, e / n, e % n)] = LA_R(e / n == e % n ? 1 : 0);
    R fro = la_fro(w, p.a, b, m, n, scratch);
    R tol = sqrt((R)m) * LA_EPS, small = LA_EPS * fro;
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
                R al = 0, be = 0;
                T ga = LA_R(0);
                for (long i = 0; i < m; i++) {
                    T x = w[IX(p.a, b, i, pp)], y = w[IX(p.a, b, i, qq)];
                    al += LA_ABS2(x);
                    be += LA_ABS2(y);
                    ga += LA_MUL(LA_CONJ(x), y);
                }
                R np_ = sqrt(al), nq = sqrt(be), g = LA_ABS(ga);
                if (!(g > tol * np_ * nq && np_ > small && nq > small)) {
                    if (LA_ISNAN(ga))
                        rotated = 1; /* NaN: never settles */
                    continue;
                }
                rotated = 1;
                R t = la_jacobi_tan((be - al) / (2 * g));
                R c = 1 / sqrt(1 + t * t);
                T s = (ga / g) * (t * c);
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
