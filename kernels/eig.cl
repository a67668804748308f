/* eig.cl - eigenvalues and right eigenvectors of general square matrices:
 * LAPACK's geev pipeline for the sizes torch uses, step for step, so the
 * eigenvalues come out in the CPU's order (the order is where the QR
 * iteration deflates): balancing (gebal 'B'), unblocked Hessenberg
 * reduction (gehd2), the Householder product (orghr), the small-matrix QR
 * algorithm (lahqr: Francis double shift for real matrices, single shift
 * for complex ones, as hseqr runs it below n = 75), eigenvectors of the
 * Schur form (trevc, back-transformed), gebak and geev's normalisation.
 * One work-item per matrix: the algorithm is sequential. Element types come
 * from linalg_scalar.h (-DLA_F64, -DLA_COMPLEX); float32 computes in
 * float32, as sgeev / cgeev do, for the same rounding.
 *
 * Operands (runtime/ops/eig.c): h [batch, n, n] column-major, the input,
 * destroyed; z the same shape, scratch for the Schur vectors (eigenvectors
 * only); ws [batch, 4n] of T and rs [batch, 2n] of R, scratch; w [batch, n]
 * complex eigenvalues; v [batch, n, n] complex eigenvectors, column-major
 * (flag0: compute them); info [batch]: i + 1 where the QR iteration did not
 * converge (eigenvalue i onward undetermined), else 0. */
#include "linalg_params.h"
#include "linalg_scalar.h"

/* LAPACK's formulas are written without fused multiply-adds; contracting
 * them here would move rounding and, at near-ties, deflation points. */
#pragma OPENCL FP_CONTRACT OFF

#ifdef LA_F64
#define EIG_SAFMIN DBL_MIN /* dlamch('S') */
#define EIG_HUGE DBL_MAX
#else
#define EIG_SAFMIN FLT_MIN
#define EIG_HUGE FLT_MAX
#endif
#define EIG_ULP LA_EPS               /* dlamch('P') */
#define EIG_EPS (LA_EPS * (R)0.5)    /* dlamch('E') */
#define EIG_KEXSH 10                 /* iterations between exceptional shifts */

/* element (i, j) of a column-major matrix with leading dimension ld */
#define E(p, i, j) (p)[(i) + (long)(j) * ld]

inline T eig_scal(R s, T x) { return LA_CPLX(s * LA_RE(x), s * LA_IM(x)); }

/* dlapy2 / dlapy3: sqrt of a sum of squares without needless overflow */
inline R eig_lapy2(R x, R y)
{
    R xa = fabs(x), ya = fabs(y), w = fmax(xa, ya), z = fmin(xa, ya);
    if (z == 0 || w > EIG_HUGE)
        return w;
    return w * sqrt(1 + (z / w) * (z / w));
}

inline R eig_lapy3(R x, R y, R z)
{
    R xa = fabs(x), ya = fabs(y), za = fabs(z), w = fmax(xa, fmax(ya, za));
    if (w == 0)
        return xa + ya + za;
    return w * sqrt((xa / w) * (xa / w) + (ya / w) * (ya / w) + (za / w) * (za / w));
}

/* nrm2 of m elements of stride inc (real and imaginary parts alike), with
 * the scaled sum of squares of the reference BLAS */
inline void eig_ssq_add(R v, R *scale, R *ssq)
{
    if (v == 0)
        return;
    R a = fabs(v);
    if (*scale < a) {
        *ssq = 1 + *ssq * (*scale / a) * (*scale / a);
        *scale = a;
    } else {
        *ssq += (a / *scale) * (a / *scale);
    }
}

inline R eig_nrm2(long m, __global const T *x, long inc)
{
    R scale = 0, ssq = 1;
    for (long i = 0; i < m; i++) {
        eig_ssq_add(LA_RE(x[i * inc]), &scale, &ssq);
        eig_ssq_add(LA_IM(x[i * inc]), &scale, &ssq);
    }
    return scale * sqrt(ssq);
}

/* i?amax: the first index of the largest |re| + |im| (|x| for reals) */
inline long eig_iamax(long m, __global const T *x, long inc)
{
    long k = 0;
    R best = -1;
    for (long i = 0; i < m; i++) {
        R a = LA_ABS1(x[i * inc]);
        if (a > best) {
            best = a;
            k = i;
        }
    }
    return k;
}

inline void eig_swap(long m, __global T *x, long incx, __global T *y, long incy)
{
    for (long i = 0; i < m; i++) {
        T t = x[i * incx];
        x[i * incx] = y[i * incy];
        y[i * incy] = t;
    }
}

/* dlascl's multiply of x by cto / cfrom in steps that neither over- nor
 * underflow; returns the factors applied one after another through f[] */
inline int eig_scl_steps(R cfrom, R cto, R *f)
{
    R smlnum = EIG_SAFMIN, bignum = 1 / smlnum;
    int k = 0;
    for (;;) {
        R cfrom1 = cfrom * smlnum;
        if (cfrom1 == cfrom) { /* cfrom is inf */
            f[k++] = cto / cfrom;
            return k;
        }
        R cto1 = cto / bignum;
        if (fabs(cfrom1) > fabs(cto) && cto != 0) {
            f[k++] = smlnum;
            cfrom = cfrom1;
        } else if (fabs(cto1) > fabs(cfrom)) {
            f[k++] = bignum;
            cto = cto1;
        } else {
            f[k++] = cto / cfrom;
            return k;
        }
        if (k == 8)
            return k;
    }
}

/* ------------------------------------------------------------ reflectors */

/* larfg: H = I - tau v v^H with H^H (alpha, x) = (beta, 0), beta real;
 * x (m - 1 elements, stride inc) becomes v(2:m); returns tau. */
inline T eig_larfg(long m, T *alpha, __global T *x, long inc)
{
#ifdef LA_COMPLEX
    if (m <= 0)
        return LA_R(0);
#else
    if (m <= 1)
        return LA_R(0);
#endif
    R xnorm = eig_nrm2(m - 1, x, inc), ar = LA_RE(*alpha), ai = LA_IM(*alpha);
    if (xnorm == 0 && ai == 0)
        return LA_R(0);
    R beta = -copysign(eig_lapy3(ar, ai, xnorm), ar);
    const R safmin = EIG_SAFMIN / EIG_EPS, rsafmn = 1 / safmin;
    int knt = 0;
    if (fabs(beta) < safmin) { /* xnorm, beta may be inaccurate: scale x and recompute */
        do {
            knt++;
            for (long i = 0; i < m - 1; i++)
                x[i * inc] = eig_scal(rsafmn, x[i * inc]);
            beta *= rsafmn;
            ar *= rsafmn;
            ai *= rsafmn;
        } while (fabs(beta) < safmin && knt < 20);
        xnorm = eig_nrm2(m - 1, x, inc);
        beta = -copysign(eig_lapy3(ar, ai, xnorm), ar);
    }
#ifdef LA_COMPLEX
    T tau = LA_CPLX((beta - ar) / beta, -ai / beta);
    T s = LA_DIV(LA_R(1), LA_CPLX(ar - beta, ai));
    for (long i = 0; i < m - 1; i++)
        x[i * inc] = LA_MUL(s, x[i * inc]);
#else
    T tau = (beta - ar) / beta;
    R s = 1 / (ar - beta);
    for (long i = 0; i < m - 1; i++)
        x[i * inc] = s * x[i * inc];
#endif
    for (int j = 0; j < knt; j++)
        beta *= safmin;
    *alpha = LA_R(beta);
    return tau;
}

/* C (m x nc) := H C with H = I - tau v v^H, v contiguous with v[0] = 1 */
inline void eig_larf_left(long m, long nc, __global const T *v, T tau, __global T *c, long ld)
{
    if (LA_ISZERO(tau))
        return;
    for (long j = 0; j < nc; j++) {
        T w = LA_R(0); /* (C^H v)_j */
        for (long i = 0; i < m; i++)
            w = w + LA_MUL(LA_CONJ(E(c, i, j)), v[i]);
        T t = LA_MUL(-tau, LA_CONJ(w));
        for (long i = 0; i < m; i++)
            E(c, i, j) = E(c, i, j) + LA_MUL(v[i], t);
    }
}

/* C (m x nc) := C H; w: m elements of scratch */
inline void eig_larf_right(long m, long nc, __global const T *v, T tau, __global T *c, long ld, __global T *w)
{
    if (LA_ISZERO(tau))
        return;
    for (long i = 0; i < m; i++)
        w[i] = LA_R(0);
    for (long j = 0; j < nc; j++)
        for (long i = 0; i < m; i++)
            w[i] = w[i] + LA_MUL(v[j], E(c, i, j));
    for (long j = 0; j < nc; j++) {
        T t = LA_MUL(-tau, LA_CONJ(v[j]));
        for (long i = 0; i < m; i++)
            E(c, i, j) = E(c, i, j) + LA_MUL(w[i], t);
    }
}

/* ------------------------------------------------------------- balancing */

/* gebal 'B': permute rows and columns to isolate eigenvalues, then scale
 * rows and columns ilo..ihi by powers of 2 towards equal norms. scale[i]:
 * the row index swapped with i (outside ilo..ihi), else the factor. */
inline void eig_gebal(long n, __global T *a, long ld, __global R *scale, long *ilo, long *ihi)
{
    long k = 0, l = n - 1;
    int found = 1;
    while (found) { /* rows with zeros off the diagonal in columns 0..l go to the bottom */
        found = 0;
        for (long j = l; j >= 0 && !found; j--) {
            int iso = 1;
            for (long i = 0; i <= l && iso; i++)
                if (i != j && !LA_ISZERO(E(a, j, i)))
                    iso = 0;
            if (!iso)
                continue;
            scale[l] = (R)j;
            if (j != l) {
                eig_swap(l + 1, &E(a, 0, j), 1, &E(a, 0, l), 1);
                eig_swap(n - k, &E(a, j, k), ld, &E(a, l, k), ld);
            }
            if (l == 0) {
                *ilo = k;
                *ihi = l;
                return;
            }
            l--;
            found = 1;
        }
    }
    found = 1;
    while (found) { /* columns with zeros off the diagonal in rows k..l go left */
        found = 0;
        for (long j = k; j <= l && !found; j++) {
            int iso = 1;
            for (long i = k; i <= l && iso; i++)
                if (i != j && !LA_ISZERO(E(a, i, j)))
                    iso = 0;
            if (!iso)
                continue;
            scale[k] = (R)j;
            if (j != k) {
                eig_swap(l + 1, &E(a, 0, j), 1, &E(a, 0, k), 1);
                eig_swap(n - k, &E(a, j, k), ld, &E(a, k, k), ld);
            }
            k++;
            found = 1;
        }
    }
    for (long i = k; i <= l; i++)
        scale[i] = 1;
    const R sfmin1 = EIG_SAFMIN / EIG_ULP, sfmax1 = 1 / sfmin1, sfmin2 = sfmin1 * 2, sfmax2 = 1 / sfmin2;
    int noconv = 1;
    while (noconv) {
        noconv = 0;
        for (long i = k; i <= l; i++) {
            R c = eig_nrm2(l - k + 1, &E(a, k, i), 1), r = eig_nrm2(l - k + 1, &E(a, i, k), ld);
            R ca = LA_ABS(E(a, eig_iamax(l + 1, &E(a, 0, i), 1), i));
            R ra = LA_ABS(E(a, i, eig_iamax(n - k, &E(a, i, k), ld) + k));
            if (c == 0 || r == 0)
                continue;
            if (isnan(c + ca + r + ra)) { /* NaN input (eigvals only): stop balancing */
                *ilo = k;
                *ihi = l;
                return;
            }
            R g = r / 2, f = 1, s = c + r;
            while (c < g && fmax(f, fmax(c, ca)) < sfmax2 && fmin(r, fmin(g, ra)) > sfmin2) {
                f *= 2;
                c *= 2;
                ca *= 2;
                r /= 2;
                g /= 2;
                ra /= 2;
            }
            g = c / 2;
            while (g >= r && fmax(r, ra) < sfmax2 && fmin(fmin(f, c), fmin(g, ca)) > sfmin2) {
                f /= 2;
                c /= 2;
                g /= 2;
                ca /= 2;
                r *= 2;
                ra *= 2;
            }
            if (c + r >= (R)0.95 * s)
                continue;
            if (f < 1 && scale[i] < 1 && f * scale[i] <= sfmin1)
                continue;
            if (f > 1 && scale[i] > 1 && scale[i] >= sfmax1 / f)
                continue;
            g = 1 / f;
            scale[i] *= f;
            noconv = 1;
            for (long j = k; j < n; j++)
                E(a, i, j) = eig_scal(g, E(a, i, j));
            for (long j = 0; j <= l; j++)
                E(a, j, i) = eig_scal(f, E(a, j, i));
        }
    }
    *ilo = k;
    *ihi = l;
}

/* gebak 'B', right vectors: undo the scaling, then the permutation */
inline void eig_gebak(long n, long ilo, long ihi, __global const R *scale, __global T *v, long ld)
{
    if (ilo != ihi)
        for (long i = ilo; i <= ihi; i++)
            for (long j = 0; j < n; j++)
                E(v, i, j) = eig_scal(scale[i], E(v, i, j));
    for (long ii = 0; ii < n; ii++) {
        long i = ii;
        if (i >= ilo && i <= ihi)
            continue;
        if (i < ilo)
            i = ilo - 1 - ii;
        long k = (long)scale[i];
        if (k != i)
            eig_swap(n, &E(v, i, 0), ld, &E(v, k, 0), ld);
    }
}

/* ------------------------------------------------------------ Hessenberg */

/* gehd2: A := Q^H A Q upper Hessenberg in rows / columns ilo..ihi; the
 * reflectors stay below the subdiagonal, tau[ilo..ihi-1] */
inline void eig_gehd2(long n, long ilo, long ihi, __global T *a, long ld, __global T *tau, __global T *w)
{
    for (long i = ilo; i < ihi; i++) {
        T alpha = E(a, i + 1, i);
        T t = eig_larfg(ihi - i, &alpha, &E(a, min(i + 2, n - 1), i), 1);
        E(a, i + 1, i) = LA_R(1);
        eig_larf_right(ihi + 1, ihi - i, &E(a, i + 1, i), t, &E(a, 0, i + 1), ld, w);
        eig_larf_left(ihi - i, n - i - 1, &E(a, i + 1, i), LA_CONJ(t), &E(a, i + 1, i + 1), ld);
        E(a, i + 1, i) = alpha;
        tau[i] = t;
    }
}

/* orghr: z := Q, accumulated backwards from the identity as org2r does */
inline void eig_orghr(long n, long ilo, long ihi, __global T *a, __global T *z, long ld, __global const T *tau)
{
    for (long j = 0; j < n; j++)
        for (long i = 0; i < n; i++)
            E(z, i, j) = LA_R(i == j);
    for (long j = ihi - 1; j >= ilo; j--) {
        T keep = E(a, j + 1, j);
        E(a, j + 1, j) = LA_R(1);
        eig_larf_left(ihi - j, ihi - j, &E(a, j + 1, j), tau[j], &E(z, j + 1, j + 1), ld);
        E(a, j + 1, j) = keep;
    }
}

#ifndef LA_COMPLEX
#include "eig_real_qr.h"
#include "eig_real_vectors.h"
#else
#include "eig_complex.h"
#endif

/* ----------------------------------------------------------------- geev */

__kernel void eig_geev(__global T *hb, __global T *zb, __global T *wsb, __global R *rsb, __global R2 *wb,
                       __global R2 *vb, __global int *info, tocl_la_params p)
{
    const long b = get_global_id(0);
    if (b >= p.batch)
        return;
    const long n = p.n, ld = n;
    const int wantv = p.flag0;
    __global T *h = hb + p.a.off + b * p.a.bs;
    __global T *z = wantv ? zb + p.b.off + b * p.b.bs : 0;
    __global T *ws = wsb + p.k + b * 4 * n; /* k, m: the scratch offsets (the launcher's) */
    __global R *rs = rsb + p.m + b * 2 * n;
    __global R2 *w = wb + p.x.off + b * p.x.bs;
    __global R2 *v = wantv ? vb + p.c.off + b * p.c.bs : 0;

    /* scale A into [smlnum, bignum] when its largest element is outside */
    R anrm = 0;
    for (long j = 0; j < n; j++)
        for (long i = 0; i < n; i++)
            anrm = fmax(anrm, LA_ABS(E(h, i, j)));
    const R smlnum = sqrt(EIG_SAFMIN) / EIG_ULP, bignum = 1 / smlnum;
    R cscale = 0;
    if (anrm > 0 && anrm < smlnum)
        cscale = smlnum;
    else if (anrm > bignum)
        cscale = bignum;
    R f[8];
    if (cscale != 0) {
        int nf = eig_scl_steps(anrm, cscale, f);
        for (int q = 0; q < nf; q++)
            for (long j = 0; j < n; j++)
                for (long i = 0; i < n; i++)
                    E(h, i, j) = eig_scal(f[q], E(h, i, j));
    }

    long ilo, ihi;
    eig_gebal(n, h, ld, rs, &ilo, &ihi);
    eig_gehd2(n, ilo, ihi, h, ld, ws, ws + 3 * n);
    if (wantv)
        eig_orghr(n, ilo, ihi, h, z, ld, ws);
    int inf = eig_hseqr(n, ilo, ihi, h, z, ld, w, wantv);
    info[p.y.off + b * p.y.bs] = inf;
    if (inf == 0 && wantv) {
        eig_trevc(n, h, z, ld, ws + n, rs + n);
        eig_gebak(n, ilo, ihi, rs, z, ld);
        eig_normalize(n, z, ld, w, rs + n, v, p.c.cs);
    }
    if (cscale != 0) { /* the eigenvalues back to A's scale */
        int nf = eig_scl_steps(cscale, anrm, f);
        for (int q = 0; q < nf; q++)
            for (long i = 0; i < n; i++)
                w[i] = w[i] * f[q];
    }
}
