/* eig_real_qr.h - the real Schur form for kernels/eig.cl (included there
 * only, after its helpers): dlahqr's Francis double-shift QR with dlanv2's
 * 2x2 standardisation. Indices are 0-based translations of LAPACK's
 * 1-based loops. */

inline void eig_rot(long m, __global R *x, long incx, __global R *y, long incy, R c, R s)
{
    for (long i = 0; i < m; i++) {
        R t = c * x[i * incx] + s * y[i * incy];
        y[i * incy] = c * y[i * incy] - s * x[i * incx];
        x[i * incx] = t;
    }
}

/* dnrm2 of v[1..nr-1], scaled as the reference BLAS */
inline R eig_nrm2_p(int nr, const R *v)
{
    R scale = 0, ssq = 1;
    for (int q = 1; q < nr; q++)
        eig_ssq_add(v[q], &scale, &ssq);
    return scale * sqrt(ssq);
}

/* dlarfg on a private vector of nr (2 or 3) elements */
inline R eig_larfg_p(int nr, R *v)
{
    R xnorm = eig_nrm2_p(nr, v);
    if (xnorm == 0)
        return 0;
    R alpha = v[0], beta = -copysign(eig_lapy2(alpha, xnorm), alpha);
    const R safmin = EIG_SAFMIN / EIG_EPS, rsafmn = 1 / safmin;
    int knt = 0;
    if (fabs(beta) < safmin) {
        do {
            knt++;
            for (int q = 1; q < nr; q++)
                v[q] *= rsafmn;
            beta *= rsafmn;
            alpha *= rsafmn;
        } while (fabs(beta) < safmin && knt < 20);
        xnorm = eig_nrm2_p(nr, v);
        beta = -copysign(eig_lapy2(alpha, xnorm), alpha);
    }
    R tau = (beta - alpha) / beta, s = 1 / (alpha - beta);
    for (int q = 1; q < nr; q++)
        v[q] *= s;
    for (int j = 0; j < knt; j++)
        beta *= safmin;
    v[0] = beta;
    return tau;
}

/* dlanv2: the Schur factorisation of a real 2x2 block in standard form
 * (equal diagonal and opposite-signed off-diagonal for a complex pair) */
inline void eig_lanv2(R *a, R *b, R *c, R *d, R2 *e1, R2 *e2, R *cs, R *sn)
{
    const R multpl = 4;
    if (*c == 0) {
        *cs = 1;
        *sn = 0;
    } else if (*b == 0) { /* swap rows and columns */
        *cs = 0;
        *sn = 1;
        R t = *d;
        *d = *a;
        *a = t;
        *b = -*c;
        *c = 0;
    } else if ((*a - *d) == 0 && copysign((R)1, *b) != copysign((R)1, *c)) {
        *cs = 1;
        *sn = 0;
    } else {
        R temp = *a - *d, p = temp / 2;
        R bcmax = fmax(fabs(*b), fabs(*c));
        R bcmis = fmin(fabs(*b), fabs(*c)) * copysign((R)1, *b) * copysign((R)1, *c);
        R scale = fmax(fabs(p), bcmax);
        R z = (p / scale) * p + (bcmax / scale) * bcmis;
        if (z >= multpl * EIG_ULP) { /* real eigenvalues */
            z = p + copysign(sqrt(scale) * sqrt(z), p);
            *a = *d + z;
            *d = *d - (bcmax / z) * bcmis;
            R tau = eig_lapy2(*c, z);
            *cs = z / tau;
            *sn = *c / tau;
            *b = *b - *c;
            *c = 0;
        } else { /* complex or nearly equal real eigenvalues: equal diagonal */
            R sigma = *b + *c;
            R tau = eig_lapy2(sigma, temp);
            *cs = sqrt((1 + fabs(sigma) / tau) / 2);
            *sn = -(p / (tau * *cs)) * copysign((R)1, sigma);
            R aa = *a * *cs + *b * *sn, bb = -*a * *sn + *b * *cs;
            R cc = *c * *cs + *d * *sn, dd = -*c * *sn + *d * *cs;
            *a = aa * *cs + cc * *sn;
            *b = bb * *cs + dd * *sn;
            *c = -aa * *sn + cc * *cs;
            *d = -bb * *sn + dd * *cs;
            temp = (*a + *d) / 2;
            *a = temp;
            *d = temp;
            if (*c != 0) {
                if (*b != 0) {
                    if (copysign((R)1, *b) == copysign((R)1, *c)) { /* real: make it upper triangular */
                        R sab = sqrt(fabs(*b)), sac = sqrt(fabs(*c));
                        p = copysign(sab * sac, *c);
                        tau = 1 / sqrt(fabs(*b + *c));
                        *a = temp + p;
                        *d = temp - p;
                        *b = *b - *c;
                        *c = 0;
                        R cs1 = sab * tau, sn1 = sac * tau;
                        temp = *cs * cs1 - *sn * sn1;
                        *sn = *cs * sn1 + *sn * cs1;
                        *cs = temp;
                    }
                } else {
                    *b = -*c;
                    *c = 0;
                    temp = *cs;
                    *cs = -*sn;
                    *sn = temp;
                }
            }
        }
    }
    R im = *c == 0 ? 0 : sqrt(fabs(*b)) * sqrt(fabs(*c));
    *e1 = (R2)(*a, im);
    *e2 = (R2)(*d, -im);
}

/* dhseqr for n < 75, that is dlahqr: eigenvalues of the Hessenberg h
 * (rows / columns ilo..ihi active) into w; wantt: h becomes the Schur form
 * T and z accumulates the transformations. Returns info. */
inline int eig_hseqr(long n, long ilo, long ihi, __global R *h, __global R *z, long ld, __global R2 *w, int wantt)
{
    for (long i = 0; i < ilo; i++)
        w[i] = (R2)(E(h, i, i), 0);
    for (long i = ihi + 1; i < n; i++)
        w[i] = (R2)(E(h, i, i), 0);
    if (ilo == ihi) {
        w[ilo] = (R2)(E(h, ilo, ilo), 0);
        return 0;
    }
    for (long j = ilo; j <= ihi - 3; j++) {
        E(h, j + 2, j) = 0;
        E(h, j + 3, j) = 0;
    }
    if (ilo <= ihi - 2)
        E(h, ihi, ihi - 2) = 0;
    const long nh = ihi - ilo + 1, iloz = ilo, ihiz = ihi, nz = ihiz - iloz + 1;
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
            for (k = i; k > l; k--) { /* a single small subdiagonal element */
                if (fabs(E(h, k, k - 1)) <= smlnum)
                    break;
                R tst = fabs(E(h, k - 1, k - 1)) + fabs(E(h, k, k));
                if (tst == 0) {
                    if (k - 2 >= ilo)
                        tst += fabs(E(h, k - 1, k - 2));
                    if (k + 1 <= ihi)
                        tst += fabs(E(h, k + 1, k));
                }
                if (fabs(E(h, k, k - 1)) <= ulp * tst) { /* Ahues & Tisseur's criterion */
                    R ab = fmax(fabs(E(h, k, k - 1)), fabs(E(h, k - 1, k)));
                    R ba = fmin(fabs(E(h, k, k - 1)), fabs(E(h, k - 1, k)));
                    R aa = fmax(fabs(E(h, k, k)), fabs(E(h, k - 1, k - 1) - E(h, k, k)));
                    R bb = fmin(fabs(E(h, k, k)), fabs(E(h, k - 1, k - 1) - E(h, k, k)));
                    R s = aa + ab;
                    if (ba * (ab / s) <= fmax(smlnum, ulp * (bb * (aa / s))))
                        break;
                }
            }
            l = k;
            if (l > ilo)
                E(h, l, l - 1) = 0;
            if (l >= i - 1) {
                done = 1;
                break;
            }
            kdefl++;
            if (!wantt) {
                i1 = l;
                i2 = i;
            }
            R h11, h12, h21, h22, s;
            if (kdefl % (2 * EIG_KEXSH) == 0) { /* exceptional shifts */
                s = fabs(E(h, i, i - 1)) + fabs(E(h, i - 1, i - 2));
                h11 = (R)0.75 * s + E(h, i, i);
                h12 = (R)-0.4375 * s;
                h21 = s;
                h22 = h11;
            } else if (kdefl % EIG_KEXSH == 0) {
                s = fabs(E(h, l + 1, l)) + fabs(E(h, l + 2, l + 1));
                h11 = (R)0.75 * s + E(h, l, l);
                h12 = (R)-0.4375 * s;
                h21 = s;
                h22 = h11;
            } else { /* Francis' double shift */
                h11 = E(h, i - 1, i - 1);
                h21 = E(h, i, i - 1);
                h12 = E(h, i - 1, i);
                h22 = E(h, i, i);
            }
            s = fabs(h11) + fabs(h12) + fabs(h21) + fabs(h22);
            R rt1r, rt1i, rt2r, rt2i;
            if (s == 0) {
                rt1r = rt1i = rt2r = rt2i = 0;
            } else {
                h11 /= s;
                h21 /= s;
                h12 /= s;
                h22 /= s;
                R tr = (h11 + h22) / 2;
                R det = (h11 - tr) * (h22 - tr) - h12 * h21;
                R rtdisc = sqrt(fabs(det));
                if (det >= 0) { /* complex conjugate shifts */
                    rt1r = tr * s;
                    rt2r = rt1r;
                    rt1i = rtdisc * s;
                    rt2i = -rt1i;
                } else { /* real shifts: use only the one nearer h22 */
                    rt1r = tr + rtdisc;
                    rt2r = tr - rtdisc;
                    if (fabs(rt1r - h22) <= fabs(rt2r - h22)) {
                        rt1r *= s;
                        rt2r = rt1r;
                    } else {
                        rt2r *= s;
                        rt1r = rt2r;
                    }
                    rt1i = rt2i = 0;
                }
            }
            long m;
            R v[3];
            for (m = i - 2; m >= l; m--) { /* two consecutive small subdiagonal elements */
                R h21s = E(h, m + 1, m);
                s = fabs(E(h, m, m) - rt2r) + fabs(rt2i) + fabs(h21s);
                h21s = E(h, m + 1, m) / s;
                v[0] = h21s * E(h, m, m + 1) + (E(h, m, m) - rt1r) * ((E(h, m, m) - rt2r) / s) - rt1i * (rt2i / s);
                v[1] = h21s * (E(h, m, m) + E(h, m + 1, m + 1) - rt1r - rt2r);
                v[2] = h21s * E(h, m + 2, m + 1);
                s = fabs(v[0]) + fabs(v[1]) + fabs(v[2]);
                v[0] /= s;
                v[1] /= s;
                v[2] /= s;
                if (m == l)
                    break;
                R h00 = fabs(E(h, m, m - 1)) * (fabs(v[1]) + fabs(v[2]));
                R h01 = ulp * fabs(v[0]) * (fabs(E(h, m - 1, m - 1)) + fabs(E(h, m, m)) + fabs(E(h, m + 1, m + 1)));
                if (h00 <= h01)
                    break;
            }
            for (long k2 = m; k2 <= i - 1; k2++) { /* the double-shift QR step: chase the bulge */
                int nr = (int)min(3L, i - k2 + 1);
                if (k2 > m) {
                    v[0] = E(h, k2, k2 - 1);
                    v[1] = E(h, k2 + 1, k2 - 1);
                    if (nr == 3)
                        v[2] = E(h, k2 + 2, k2 - 1);
                }
                R t1 = eig_larfg_p(nr, v);
                if (k2 > m) {
                    E(h, k2, k2 - 1) = v[0];
                    E(h, k2 + 1, k2 - 1) = 0;
                    if (k2 < i - 1)
                        E(h, k2 + 2, k2 - 1) = 0;
                } else if (m > l) { /* not -h: avoids a bug when v[1], v[2] underflow */
                    E(h, k2, k2 - 1) = E(h, k2, k2 - 1) * (1 - t1);
                }
                R v2 = v[1], t2 = t1 * v2;
                if (nr == 3) {
                    R v3 = v[2], t3 = t1 * v3;
                    for (long j = k2; j <= i2; j++) {
                        R sum = E(h, k2, j) + v2 * E(h, k2 + 1, j) + v3 * E(h, k2 + 2, j);
                        E(h, k2, j) = E(h, k2, j) - sum * t1;
                        E(h, k2 + 1, j) = E(h, k2 + 1, j) - sum * t2;
                        E(h, k2 + 2, j) = E(h, k2 + 2, j) - sum * t3;
                    }
                    for (long j = i1; j <= min(k2 + 3, i); j++) {
                        R sum = E(h, j, k2) + v2 * E(h, j, k2 + 1) + v3 * E(h, j, k2 + 2);
                        E(h, j, k2) = E(h, j, k2) - sum * t1;
                        E(h, j, k2 + 1) = E(h, j, k2 + 1) - sum * t2;
                        E(h, j, k2 + 2) = E(h, j, k2 + 2) - sum * t3;
                    }
                    if (wantt)
                        for (long j = iloz; j <= ihiz; j++) {
                            R sum = E(z, j, k2) + v2 * E(z, j, k2 + 1) + v3 * E(z, j, k2 + 2);
                            E(z, j, k2) = E(z, j, k2) - sum * t1;
                            E(z, j, k2 + 1) = E(z, j, k2 + 1) - sum * t2;
                            E(z, j, k2 + 2) = E(z, j, k2 + 2) - sum * t3;
                        }
                } else if (nr == 2) {
                    for (long j = k2; j <= i2; j++) {
                        R sum = E(h, k2, j) + v2 * E(h, k2 + 1, j);
                        E(h, k2, j) = E(h, k2, j) - sum * t1;
                        E(h, k2 + 1, j) = E(h, k2 + 1, j) - sum * t2;
                    }
                    for (long j = i1; j <= i; j++) {
                        R sum = E(h, j, k2) + v2 * E(h, j, k2 + 1);
                        E(h, j, k2) = E(h, j, k2) - sum * t1;
                        E(h, j, k2 + 1) = E(h, j, k2 + 1) - sum * t2;
                    }
                    if (wantt)
                        for (long j = iloz; j <= ihiz; j++) {
                            R sum = E(z, j, k2) + v2 * E(z, j, k2 + 1);
                            E(z, j, k2) = E(z, j, k2) - sum * t1;
                            E(z, j, k2 + 1) = E(z, j, k2 + 1) - sum * t2;
                        }
                }
            }
        }
        if (!done) {
            info = (int)(i + 1);
            break;
        }
        if (l == i) { /* one eigenvalue converged */
            w[i] = (R2)(E(h, i, i), 0);
        } else if (l == i - 1) { /* a pair: standardise the 2x2 block */
            R a = E(h, i - 1, i - 1), bq = E(h, i - 1, i), c = E(h, i, i - 1), d = E(h, i, i), cs, sn;
            R2 e1, e2;
            eig_lanv2(&a, &bq, &c, &d, &e1, &e2, &cs, &sn);
            E(h, i - 1, i - 1) = a;
            E(h, i - 1, i) = bq;
            E(h, i, i - 1) = c;
            E(h, i, i) = d;
            w[i - 1] = e1;
            w[i] = e2;
            if (wantt) {
                if (i2 > i)
                    eig_rot(i2 - i, &E(h, i - 1, i + 1), ld, &E(h, i, i + 1), ld, cs, sn);
                eig_rot(i - i1 - 1, &E(h, i1, i - 1), 1, &E(h, i1, i), 1, cs, sn);
                eig_rot(nz, &E(z, iloz, i - 1), 1, &E(z, iloz, i), 1, cs, sn);
            }
        }
        kdefl = 0;
        i = l - 1;
    }
    if ((wantt || info) && n > 2) /* hseqr clears below the subdiagonal */
        for (long j = 0; j < n - 2; j++)
            for (long i = j + 2; i < n; i++)
                E(h, i, j) = 0;
    return info;
}
