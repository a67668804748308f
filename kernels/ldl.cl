/* ldl.cl - Bunch-Kaufman LDL^T (LDL^H) factorization of symmetric
 * (Hermitian) matrices and the solve with its factors: LAPACK's unblocked
 * sytf2 / hetf2 and sytrs / hetrs on the lower triangle, step for step, so
 * pivots (1-based, negative for both rows of a 2x2 block) and the factors
 * equal the CPU's, which runs those routines for the sizes in use. Element
 * types and the LA_ macros come from linalg_scalar.h (-DLA_F64,
 * -DLA_COMPLEX); flag0 selects the Hermitian variant of a complex build
 * (the real builds ignore it: there the two are one). */
#include "linalg_params.h"
#include "linalg_scalar.h"

/* |a|: what the pivot test compares for a diagonal element (hetf2 reads
 * only its real part); off the diagonal it is always |re| + |im|. */
inline R ldl_absdiag(T v, int he) { return he ? fabs(LA_RE(v)) : LA_ABS1(v); }

inline T ldl_realdiag(T v) { return LA_R(LA_RE(v)); }

/* Pivot choice and interchange of step k (one item): returns kstep (1 or
 * 2), or 0 for a zero (or NaN) column, which LAPACK leaves as it is. */
inline int ldl_pivot(__global T *a, __global int *piv, __global int *info, tocl_la_params p, long b, long k,
                     int he)
{
    long n = p.n, kp = k;
    int kstep = 1;
    const R alpha = ((R)1 + sqrt((R)17)) / (R)8; /* bounds element growth (Bunch and Kaufman) */
    R absakk = ldl_absdiag(a[IX(p.a, b, k, k)], he), colmax = 0;
    long imax = k;
    for (long i = k + 1; i < n; i++) { /* i?amax: the first largest */
        R v = LA_ABS1(a[IX(p.a, b, i, k)]);
        if (i == k + 1 || v > colmax) {
            colmax = v;
            imax = i;
        }
    }
    if ((absakk == 0 && colmax == 0) || isnan(absakk)) {
        if (info[IV(p.y, b, 0)] == 0)
            info[IV(p.y, b, 0)] = (int)(k + 1);
        if (he)
            a[IX(p.a, b, k, k)] = ldl_realdiag(a[IX(p.a, b, k, k)]);
        piv[IV(p.x, b, k)] = (int)(k + 1);
        return 0;
    }
    if (!(absakk >= alpha * colmax)) {
        /* the largest off-diagonal element of row (and column) imax */
        R rowmax = LA_ABS1(a[IX(p.a, b, imax, k)]);
        for (long j = k + 1; j < imax; j++)
            rowmax = fmax(rowmax, LA_ABS1(a[IX(p.a, b, imax, j)]));
        for (long i = imax + 1; i < n; i++)
            rowmax = fmax(rowmax, LA_ABS1(a[IX(p.a, b, i, imax)]));
        if (absakk >= alpha * colmax * (colmax / rowmax))
            kp = k;
        else if (ldl_absdiag(a[IX(p.a, b, imax, imax)], he) >= alpha * rowmax)
            kp = imax;
        else {
            kp = imax;
            kstep = 2;
        }
    }
    long kk = k + kstep - 1;
    if (kp != kk) { /* symmetric interchange of rows and columns kk and kp */
        for (long i = kp + 1; i < n; i++) {
            T t = a[IX(p.a, b, i, kk)];
            a[IX(p.a, b, i, kk)] = a[IX(p.a, b, i, kp)];
            a[IX(p.a, b, i, kp)] = t;
        }
        for (long j = kk + 1; j < kp; j++) {
            T t = a[IX(p.a, b, j, kk)];
            a[IX(p.a, b, j, kk)] = LA_CONJ_IF(he, a[IX(p.a, b, kp, j)]);
            a[IX(p.a, b, kp, j)] = LA_CONJ_IF(he, t);
        }
        if (he)
            a[IX(p.a, b, kp, kk)] = LA_CONJ(a[IX(p.a, b, kp, kk)]);
        T t = a[IX(p.a, b, kk, kk)];
        a[IX(p.a, b, kk, kk)] = he ? ldl_realdiag(a[IX(p.a, b, kp, kp)]) : a[IX(p.a, b, kp, kp)];
        a[IX(p.a, b, kp, kp)] = he ? ldl_realdiag(t) : t;
        if (kstep == 2) {
            if (he)
                a[IX(p.a, b, k, k)] = ldl_realdiag(a[IX(p.a, b, k, k)]);
            t = a[IX(p.a, b, k + 1, k)];
            a[IX(p.a, b, k + 1, k)] = a[IX(p.a, b, kp, k)];
            a[IX(p.a, b, kp, k)] = t;
        }
    } else if (he) {
        a[IX(p.a, b, k, k)] = ldl_realdiag(a[IX(p.a, b, k, k)]);
        if (kstep == 2)
            a[IX(p.a, b, k + 1, k + 1)] = ldl_realdiag(a[IX(p.a, b, k + 1, k + 1)]);
    }
    piv[IV(p.x, b, k)] = (int)(kstep == 1 ? kp + 1 : -(kp + 1));
    if (kstep == 2)
        piv[IV(p.x, b, k + 1)] = (int)-(kp + 1);
    return kstep;
}

/* The multipliers (wk, wkp1) of row j after a 2x2 pivot at k: row j of
 * the block column times D^-1 (sytf2 / hetf2's formulas and order). */
inline void ldl_2x2_row(__global const T *a, tocl_la_params p, long b, long k, long j, int he, T *wk, T *wkp1)
{
    T ajk = a[IX(p.a, b, j, k)], ajk1 = a[IX(p.a, b, j, k + 1)];
    T d21 = a[IX(p.a, b, k + 1, k)];
    if (he) {
        R d = hypot(LA_RE(d21), LA_IM(d21));
        R d11 = LA_RE(a[IX(p.a, b, k + 1, k + 1)]) / d, d22 = LA_RE(a[IX(p.a, b, k, k)]) / d;
        R tt = 1 / (d11 * d22 - 1);
        T u = d21 / d;
        R s = tt / d;
        *wk = s * (d11 * ajk - LA_MUL(u, ajk1));
        *wkp1 = s * (d22 * ajk1 - LA_MUL(LA_CONJ(u), ajk));
    } else {
        T d11 = LA_DIV(a[IX(p.a, b, k + 1, k + 1)], d21), d22 = LA_DIV(a[IX(p.a, b, k, k)], d21);
        T t = LA_DIV(LA_R(1), LA_MUL(d11, d22) - LA_R(1));
        T s = LA_DIV(t, d21);
        *wk = LA_MUL(s, LA_MUL(d11, ajk) - ajk1);
        *wkp1 = LA_MUL(s, LA_MUL(d22, ajk1) - ajk);
    }
}

/* A = L D L^T (L D L^H: flag0) of the lower triangle, in place, as
 * sytf2 / hetf2 with uplo 'L'. One work-group per matrix: item 0 picks
 * the pivot and interchanges (O(n)), then the items share the columns of
 * the trailing update. info = k + 1 at the first zero column. */
__kernel void la_sytrf(__global T *a, __global int *piv, __global int *info, tocl_la_params p)
{
    long b = get_group_id(0), n = p.n;
    int lid = get_local_id(0), he = p.flag0;
    __local int kstep_s;
    if (lid == 0)
        info[IV(p.y, b, 0)] = 0;
    for (long k = 0; k < n;) {
        if (lid == 0)
            kstep_s = ldl_pivot(a, piv, info, p, b, k, he);
        LA_BAR;
        int kstep = kstep_s;
        if (kstep == 1 && k + 1 < n) {
            /* A22 -= x d11 x^T (x^H), x = column k below the diagonal (syr / her) */
            T akk = a[IX(p.a, b, k, k)];
            R r1 = 1 / LA_RE(akk);
            T d11 = he ? LA_R(r1) : LA_DIV(LA_R(1), akk);
            for (long j = k + 1 + lid; j < n; j += TOCL_LA_GROUP) {
                T xj = a[IX(p.a, b, j, k)];
                if (LA_ISZERO(xj)) {
                    if (he)
                        a[IX(p.a, b, j, j)] = ldl_realdiag(a[IX(p.a, b, j, j)]);
                    continue;
                }
                T temp = LA_MUL(-d11, LA_CONJ_IF(he, xj));
                a[IX(p.a, b, j, j)] = he ? LA_R(LA_RE(a[IX(p.a, b, j, j)]) + LA_RE(LA_MUL(xj, temp)))
                                         : a[IX(p.a, b, j, j)] + LA_MUL(xj, temp);
                for (long i = j + 1; i < n; i++)
                    a[IX(p.a, b, i, j)] += LA_MUL(a[IX(p.a, b, i, k)], temp);
            }
            LA_BAR;
            for (long i = k + 1 + lid; i < n; i += TOCL_LA_GROUP)
                a[IX(p.a, b, i, k)] = LA_MUL(a[IX(p.a, b, i, k)], d11);
        } else if (kstep == 2 && k + 2 < n) {
            /* A22 -= [x y] D^-1 [x y]^T (^H); the multipliers replace [x y] */
            for (long j = k + 2 + lid; j < n; j += TOCL_LA_GROUP) {
                T wk, wkp1;
                ldl_2x2_row(a, p, b, k, j, he, &wk, &wkp1);
                T cwk = LA_CONJ_IF(he, wk), cwkp1 = LA_CONJ_IF(he, wkp1);
                for (long i = j; i < n; i++)
                    a[IX(p.a, b, i, j)] = a[IX(p.a, b, i, j)] - LA_MUL(a[IX(p.a, b, i, k)], cwk) -
                                          LA_MUL(a[IX(p.a, b, i, k + 1)], cwkp1);
                if (he)
                    a[IX(p.a, b, j, j)] = ldl_realdiag(a[IX(p.a, b, j, j)]);
            }
            LA_BAR; /* every row's multipliers read the block column before any is replaced */
            T w[2];
            for (long j = k + 2 + lid; j < n; j += TOCL_LA_GROUP) {
                ldl_2x2_row(a, p, b, k, j, he, &w[0], &w[1]);
                a[IX(p.a, b, j, k)] = w[0];
                a[IX(p.a, b, j, k + 1)] = w[1];
            }
        }
        LA_BAR;
        k += kstep ? kstep : 1;
    }
}

inline void ldl_swap(__global T *x, tocl_la_mat L, long b, long i, long r, long c, long n)
{
    if (r == i || r < 0 || r >= n)
        return;
    T v = x[IX(L, b, i, c)];
    x[IX(L, b, i, c)] = x[IX(L, b, r, c)];
    x[IX(L, b, r, c)] = v;
}

/* x[k] -= sum_i op(a[i, col]) x[i] over the rows below `from`: gemv's
 * order (the dot product first), op = conj for the Hermitian solve. */
inline void ldl_dot_update(__global const T *a, __global T *x, tocl_la_params p, long b, long c, long k, long col,
                           long from, int he)
{
    T s = LA_R(0);
    for (long i = from; i < p.n; i++)
        s += LA_MUL(LA_CONJ_IF(he, a[IX(p.a, b, i, col)]), x[IX(p.b, b, i, c)]);
    x[IX(p.b, b, k, c)] -= s;
}

/* Solve A X = B in place of B (n x k) with la_sytrf's factors (L D L^T, or
 * L D L^H: flag0) and pivots, as sytrs / hetrs with uplo 'L': L D Y = P B
 * forward, then L^T (L^H) P^T X = Y backward. One work-item per column. */
__kernel void la_sytrs(__global const T *a, __global const int *piv, __global T *x, tocl_la_params p)
{
    long c = get_global_id(0), b = get_global_id(1), n = p.n;
    if (c >= p.k)
        return;
    int he = p.flag0;
    for (long k = 0; k < n;) {
        int pv = piv[IV(p.x, b, k)];
        if (pv > 0 || k + 1 >= n) {
            ldl_swap(x, p.b, b, k, (long)pv - 1, c, n);
            T xk = x[IX(p.b, b, k, c)];
            for (long i = k + 1; i < n; i++)
                x[IX(p.b, b, i, c)] += LA_MUL(a[IX(p.a, b, i, k)], -xk);
            T akk = a[IX(p.a, b, k, k)];
            x[IX(p.b, b, k, c)] = he ? (1 / LA_RE(akk)) * xk : LA_MUL(LA_DIV(LA_R(1), akk), xk);
            k++;
        } else {
            ldl_swap(x, p.b, b, k + 1, (long)-pv - 1, c, n);
            T x0 = x[IX(p.b, b, k, c)], x1 = x[IX(p.b, b, k + 1, c)];
            for (long i = k + 2; i < n; i++)
                x[IX(p.b, b, i, c)] += LA_MUL(a[IX(p.a, b, i, k)], -x0);
            for (long i = k + 2; i < n; i++)
                x[IX(p.b, b, i, c)] += LA_MUL(a[IX(p.a, b, i, k + 1)], -x1);
            T akm1k = a[IX(p.a, b, k + 1, k)];
            T akm1 = LA_DIV(a[IX(p.a, b, k, k)], LA_CONJ_IF(he, akm1k));
            T ak = LA_DIV(a[IX(p.a, b, k + 1, k + 1)], akm1k);
            T denom = LA_MUL(akm1, ak) - LA_R(1);
            T bkm1 = LA_DIV(x0, LA_CONJ_IF(he, akm1k)), bk = LA_DIV(x1, akm1k);
            x[IX(p.b, b, k, c)] = LA_DIV(LA_MUL(ak, bkm1) - bk, denom);
            x[IX(p.b, b, k + 1, c)] = LA_DIV(LA_MUL(akm1, bk) - bkm1, denom);
            k += 2;
        }
    }
    for (long k = n - 1; k >= 0;) {
        int pv = piv[IV(p.x, b, k)];
        if (pv > 0 || k == 0) {
            ldl_dot_update(a, x, p, b, c, k, k, k + 1, he);
            ldl_swap(x, p.b, b, k, (long)pv - 1, c, n);
            k--;
        } else {
            ldl_dot_update(a, x, p, b, c, k, k, k + 1, he);
            ldl_dot_update(a, x, p, b, c, k - 1, k - 1, k + 1, he);
            ldl_swap(x, p.b, b, k, (long)-pv - 1, c, n);
            k -= 2;
        }
    }
}
