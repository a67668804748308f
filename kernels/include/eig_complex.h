/* eig_complex.h - the complex half of kernels/eig.cl (included there only,
 * after its helpers): zlahqr's single-shift QR with real subdiagonals,
 * ztrevc's eigenvectors of the triangular Schur form and zgeev's
 * normalisation. Indices are 0-based translations of LAPACK's loops. */

inline T eig_csqrt(T z)
{
    if (LA_ISZERO(z))
        return z;
    R r = LA_ABS(z);
    if (z.x >= 0) {
        R t = sqrt((r + z.x) / 2);
        return (T)(t, z.y / (2 * t));
    }
    R t = sqrt((r - z.x) / 2);
    return (T)(fabs(z.y) / (2 * t), copysign(t, z.y));
}

/* row (inc ld) or column (inc 1) of m elements times s */
inline void eig_cscal(long m, T s, __global T *x, long inc)
{
    for (long i = 0; i < m; i++)
        x[i * inc] = LA_MUL(s, x[i * inc]);
}

/* zhseqr for n < 75, that is zlahqr; see the real eig_hseqr */
inline int eig_hseqr(long n, long ilo, long ihi, __global T *h, __global T *z, long ld, __global R2 *w, int wantt)
{
    for (long i = 0; i < ilo; i++)
        w[i] = E(h, i, i);
    for (long i = ihi + 1; i < n; i++)
        w[i] = E(h, i, i);
    if (ilo == ihi) {
        w[ilo] = E(h, ilo, ilo);
        return 0;
    }
    for (long j = ilo; j <= ihi - 3; j++) {
        E(h, j + 2, j) = LA_R(0);
        E(h, j + 3, j) = LA_R(0);
    }
    if (ilo <= ihi - 2)
        E(h, ihi, ihi - 2) = LA_R(0);
    const long jlo = wantt ? 0 : ilo, jhi = wantt ? n - 1 : ihi;
    const long iloz = ilo, ihiz = ihi, nz = ihiz - iloz + 1;
    for (long i = ilo + 1; i <= ihi; i++) /* make the subdiagonal real */
        if (E(h, i, i - 1).y != 0) {
            T sc = E(h, i, i - 1) / LA_ABS1(E(h, i, i - 1));
            sc = LA_CONJ(sc) / LA_ABS(sc);
            E(h, i, i - 1) = LA_R(LA_ABS(E(h, i, i - 1)));
            eig_cscal(jhi - i + 1, sc, &E(h, i, i), ld);
            eig_cscal(min(jhi, i + 1) - jlo + 1, LA_CONJ(sc), &E(h, jlo, i), 1);
            if (wantt)
                eig_cscal(nz, LA_CONJ(sc), &E(z, iloz, i), 1);
        }
    const long nh = ihi - ilo + 1;
    const R ulp = EIG_ULP, smlnum = EIG_SAFMIN * ((R)nh / ulp);
    long i1 = 0, i2 = n - 1;
    const long itmax = 30 * max(10L, nh);
    long kdefl = 0;
    int info = 0;
    for (long i = ihi; i >= ilo;) {
        long l = ilo;
        int done = 0;
        for (long its = 0; its <= itmax; its++) {
            long k;
            for (k = i; k > l; k--) {
                if (LA_ABS1(E(h, k, k - 1)) <= smlnum)
                    break;
                R tst = LA_ABS1(E(h, k - 1, k - 1)) + LA_ABS1(E(h, k, k));
                if (tst == 0) {
                    if (k - 2 >= ilo)
                        tst += fabs(E(h, k - 1, k - 2).x);
                    if (k + 1 <= ihi)
                        tst += fabs(E(h, k + 1, k).x);
                }
                if (fabs(E(h, k, k - 1).x) <= ulp * tst) {
                    R ab = fmax(LA_ABS1(E(h, k, k - 1)), LA_ABS1(E(h, k - 1, k)));
                    R ba = fmin(LA_ABS1(E(h, k, k - 1)), LA_ABS1(E(h, k - 1, k)));
                    R aa = fmax(LA_ABS1(E(h, k, k)), LA_ABS1(E(h, k - 1, k - 1) - E(h, k, k)));
                    R bb = fmin(LA_ABS1(E(h, k, k)), LA_ABS1(E(h, k - 1, k - 1) - E(h, k, k)));
                    R s = aa + ab;
                    if (ba * (ab / s) <= fmax(smlnum, ulp * (bb * (aa / s))))
                        break;
                }
            }
            l = k;
            if (l > ilo)
                E(h, l, l - 1) = LA_R(0);
            if (l >= i) {
                done = 1;
                break;
            }
            kdefl++;
            if (!wantt) {
                i1 = l;
                i2 = i;
            }
            T t;
            if (kdefl % (2 * EIG_KEXSH) == 0) { /* exceptional shifts */
                R s = (R)0.75 * fabs(E(h, i, i - 1).x);
                t = LA_R(s) + E(h, i, i);
            } else if (kdefl % EIG_KEXSH == 0) {
                R s = (R)0.75 * fabs(E(h, l + 1, l).x);
                t = LA_R(s) + E(h, l, l);
            } else { /* Wilkinson's shift */
                t = E(h, i, i);
                T u = LA_MUL(eig_csqrt(E(h, i - 1, i)), eig_csqrt(E(h, i, i - 1)));
                R s = LA_ABS1(u);
                if (s != 0) {
                    T x = (E(h, i - 1, i - 1) - t) * (R)0.5;
                    R sx = LA_ABS1(x);
                    s = fmax(s, LA_ABS1(x));
                    T xs = x / s, us = u / s;
                    T y = eig_csqrt(LA_MUL(xs, xs) + LA_MUL(us, us)) * s;
                    if (sx > 0) {
                        T xx = x / sx;
                        if (xx.x * y.x + xx.y * y.y < 0)
                            y = -y;
                    }
                    t = t - LA_MUL(u, LA_DIV(u, x + y));
                }
            }
            long m;
            T v0, v1;
            for (m = i - 1; m >= l + 1; m--) { /* two consecutive small subdiagonal elements */
                T h11 = E(h, m, m), h22 = E(h, m + 1, m + 1), h11s = h11 - t;
                R h21 = E(h, m + 1, m).x, s = LA_ABS1(h11s) + fabs(h21);
                h11s = h11s / s;
                h21 = h21 / s;
                v0 = h11s;
                v1 = LA_R(h21);
                R h10 = E(h, m, m - 1).x;
                if (fabs(h10) * fabs(h21) <= ulp * (LA_ABS1(h11s) * (LA_ABS1(h11) + LA_ABS1(h22))))
                    break;
            }
            if (m == l) {
                T h11 = E(h, l, l), h11s = h11 - t;
                R h21 = E(h, l + 1, l).x, s = LA_ABS1(h11s) + fabs(h21);
                v0 = h11s / s;
                v1 = LA_R(h21 / s);
            }
            for (long k2 = m; k2 <= i - 1; k2++) { /* the single-shift QR step */
                if (k2 > m) {
                    v0 = E(h, k2, k2 - 1);
                    v1 = E(h, k2 + 1, k2 - 1);
                }
                T t1;
                { /* zlarfg of (v0, v1) on private values */
                    R xnorm = LA_ABS(v1), ar = v0.x, ai = v0.y;
                    if (LA_ISZERO(v1))
                        xnorm = 0;
                    if (xnorm == 0 && ai == 0) {
                        t1 = LA_R(0);
                    } else {
                        R beta = -copysign(eig_lapy3(ar, ai, xnorm), ar);
                        const R safmin = EIG_SAFMIN / EIG_EPS, rsafmn = 1 / safmin;
                        int knt = 0;
                        if (fabs(beta) < safmin) {
                            do {
                                knt++;
                                v1 = v1 * rsafmn;
                                beta *= rsafmn;
                                ar *= rsafmn;
                                ai *= rsafmn;
                            } while (fabs(beta) < safmin && knt < 20);
                            xnorm = LA_ABS(v1);
                            beta = -copysign(eig_lapy3(ar, ai, xnorm), ar);
                        }
                        t1 = (T)((beta - ar) / beta, -ai / beta);
                        v1 = LA_MUL(LA_DIV(LA_R(1), (T)(ar - beta, ai)), v1);
                        for (int q = 0; q < knt; q++)
                            beta *= safmin;
                        v0 = LA_R(beta);
                    }
                }
                if (k2 > m) {
                    E(h, k2, k2 - 1) = v0;
                    E(h, k2 + 1, k2 - 1) = LA_R(0);
                }
                T v2 = v1;
                R t2 = LA_MUL(t1, v2).x;
                for (long j = k2; j <= i2; j++) {
                    T sum = LA_MUL(LA_CONJ(t1), E(h, k2, j)) + E(h, k2 + 1, j) * t2;
                    E(h, k2, j) = E(h, k2, j) - sum;
                    E(h, k2 + 1, j) = E(h, k2 + 1, j) - LA_MUL(sum, v2);
                }
                for (long j = i1; j <= min(k2 + 2, i); j++) {
                    T sum = LA_MUL(t1, E(h, j, k2)) + E(h, j, k2 + 1) * t2;
                    E(h, j, k2) = E(h, j, k2) - sum;
                    E(h, j, k2 + 1) = E(h, j, k2 + 1) - LA_MUL(sum, LA_CONJ(v2));
                }
                if (wantt)
                    for (long j = iloz; j <= ihiz; j++) {
                        T sum = LA_MUL(t1, E(z, j, k2)) + E(z, j, k2 + 1) * t2;
                        E(z, j, k2) = E(z, j, k2) - sum;
                        E(z, j, k2 + 1) = E(z, j, k2 + 1) - LA_MUL(sum, LA_CONJ(v2));
                    }
                if (k2 == m && m > l) { /* keep H(m, m-1) real after a start at m > l */
                    T temp = LA_R(1) - t1;
                    temp = temp / LA_ABS(temp);
                    E(h, m + 1, m) = LA_MUL(E(h, m + 1, m), LA_CONJ(temp));
                    if (m + 2 <= i)
                        E(h, m + 2, m + 1) = LA_MUL(E(h, m + 2, m + 1), temp);
                    for (long j = m; j <= i; j++)
                        if (j != m + 1) {
                            if (i2 > j)
                                eig_cscal(i2 - j, temp, &E(h, j, j + 1), ld);
                            eig_cscal(j - i1, LA_CONJ(temp), &E(h, i1, j), 1);
                            if (wantt)
                                eig_cscal(nz, LA_CONJ(temp), &E(z, iloz, j), 1);
                        }
                }
            }
            T temp = E(h, i, i - 1); /* make H(i, i-1) real */
            if (temp.y != 0) {
                R rtemp = LA_ABS(temp);
                E(h, i, i - 1) = LA_R(rtemp);
                temp = temp / rtemp;
                if (i2 > i)
                    eig_cscal(i2 - i, LA_CONJ(temp), &E(h, i, i + 1), ld);
                eig_cscal(i - i1, temp, &E(h, i1, i), 1);
                if (wantt)
                    eig_cscal(nz, temp, &E(z, iloz, i), 1);
            }
        }
        if (!done) {
            info = (int)(i + 1);
            break;
        }
        w[i] = E(h, i, i);
        kdefl = 0;
        i = l - 1;
    }
    if ((wantt || info) && n > 2)
        for (long j = 0; j < n - 2; j++)
            for (long i = j + 2; i < n; i++)
                E(h, i, j) = LA_R(0);
    return info;
}

/* ztrevc 'R', 'B': right eigenvectors of the upper triangular t,
 * back-transformed by z in place, each scaled so its largest |re| + |im|
 * is 1. ws: 2n scratch (the solution, then t's saved diagonal); cn: n
 * scratch (column norms). The triangular solve is zlatrs's in spirit: as
 * ztrsv unless a step would overflow, then scaled down as dtrevc does. */
inline void eig_trevc(long n, __global T *t, __global T *z, long ld, __global T *ws, __global R *cn)
{
    const R ulp = EIG_ULP, smlnum = EIG_SAFMIN * ((R)n / ulp), bignum = (1 - ulp) / smlnum;
    __global T *x = ws, *dg = ws + n;
    for (long i = 0; i < n; i++)
        dg[i] = E(t, i, i);
    cn[0] = 0;
    for (long j = 1; j < n; j++) {
        cn[j] = 0;
        for (long i = 0; i < j; i++)
            cn[j] += LA_ABS1(E(t, i, j));
    }
    for (long ki = n - 1; ki >= 0; ki--) {
        R smin = fmax(ulp * LA_ABS1(E(t, ki, ki)), smlnum);
        for (long k = 0; k < ki; k++)
            x[k] = -E(t, k, ki);
        for (long k = 0; k < ki; k++) {
            E(t, k, k) = E(t, k, k) - E(t, ki, ki);
            if (LA_ABS1(E(t, k, k)) < smin)
                E(t, k, k) = LA_R(smin);
        }
        R scale = 1;
        for (long j = ki - 1; j >= 0; j--) { /* (T(0:ki, 0:ki) - T(ki, ki)) x = scale b */
            if (LA_ISZERO(x[j]))
                continue;
            T d = E(t, j, j);
            R s = 1, cnorm = LA_ABS1(d), bnorm = LA_ABS1(x[j]);
            if (cnorm < 1 && bnorm > 1 && bnorm > bignum * cnorm)
                s = 1 / bnorm;
            T xj = LA_DIV(x[j] * s, d);
            R xnorm = LA_ABS1(xj);
            if (xnorm > 1 && cn[j] > bignum / xnorm) {
                xj = xj / xnorm;
                s /= xnorm;
            }
            if (s != 1) {
                for (long k = 0; k < ki; k++)
                    x[k] = x[k] * s;
                scale *= s;
            }
            x[j] = xj;
            for (long i = j - 1; i >= 0; i--)
                x[i] = x[i] - LA_MUL(xj, E(t, i, j));
        }
        if (ki > 0)
            for (long r = 0; r < n; r++) { /* z(:, ki) := Z(:, 0:ki) [x; scale] */
                T s = E(z, r, ki) * scale;
                for (long k = 0; k < ki; k++)
                    s = s + LA_MUL(x[k], E(z, r, k));
                E(z, r, ki) = s;
            }
        R remax = 1 / LA_ABS1(E(z, eig_iamax(n, &E(z, 0, ki), 1), ki));
        for (long r = 0; r < n; r++)
            E(z, r, ki) = E(z, r, ki) * remax;
        for (long k = 0; k < ki; k++)
            E(t, k, k) = dg[k];
    }
}

/* zgeev's normalisation: unit norm, the component of largest modulus real */
inline void eig_normalize(long n, __global T *z, long ld, __global const R2 *w, __global R *tmp, __global R2 *v,
                          long vcs)
{
    for (long i = 0; i < n; i++) {
        R scl = 1 / eig_nrm2(n, &E(z, 0, i), 1);
        for (long r = 0; r < n; r++) {
            E(z, r, i) = E(z, r, i) * scl;
            tmp[r] = E(z, r, i).x * E(z, r, i).x + E(z, r, i).y * E(z, r, i).y;
        }
        long k = 0;
        for (long r = 1; r < n; r++)
            if (tmp[r] > tmp[k])
                k = r;
        T rot = LA_CONJ(E(z, k, i)) / sqrt(tmp[k]);
        for (long r = 0; r < n; r++)
            E(z, r, i) = LA_MUL(rot, E(z, r, i));
        E(z, k, i) = LA_R(E(z, k, i).x);
        for (long r = 0; r < n; r++)
            v[r + i * vcs] = E(z, r, i);
    }
}
