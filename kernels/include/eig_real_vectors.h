/* eig_real_vectors.h - the real eigenvectors for kernels/eig.cl (included
 * there only, after eig_real_qr.h): dtrevc's back substitution on the
 * quasi-triangular Schur form with dlaln2's scaled small solves, and
 * dgeev's normalisation of the vectors to complex ones. Indices are 0-based
 * translations of LAPACK's 1-based loops. */

/* (a + ib) / (c + id) by Smith's scaling, as dladiv's purpose */
inline R2 eig_ladiv(R a, R b, R c, R d)
{
    if (fabs(d) < fabs(c)) {
        R e = d / c, f = c + d * e;
        return (R2)((a + b * e) / f, (b - a * e) / f);
    }
    R e = c / d, f = d + c * e;
    return (R2)((b + a * e) / f, (-a + b * e) / f);
}

/* dlaln2 with ltrans false, ca = d1 = d2 = 1: solve (A - (wr + i wi)) X =
 * scale B for the na x na (1 or 2) block A at &E(t, j, j), nw = 1 (real,
 * wi unused) or 2 (complex: X and B hold real then imaginary columns),
 * perturbing a near-singular A by smin and scaling B down against
 * overflow. x[r + 2 c], b likewise. */
inline void eig_laln2(int na, int nw, R smin, __global const R *t, long ld, const R *bm, R wr, R wi, R *x,
                      R *scale, R *xnorm)
{
    const R smlnum = 2 * EIG_SAFMIN, bignum = 1 / smlnum, smini = fmax(smin, smlnum);
    const int zswap[4] = {0, 0, 1, 1}, rswap[4] = {0, 1, 0, 1};
    const int ipivot[4][4] = {{0, 1, 2, 3}, {1, 0, 3, 2}, {2, 3, 0, 1}, {3, 2, 1, 0}};
    *scale = 1;
    if (na == 1) {
        if (nw == 1) {
            R csr = E(t, 0, 0) - wr, cnorm = fabs(csr);
            if (cnorm < smini) {
                csr = smini;
                cnorm = smini;
            }
            R bnorm = fabs(bm[0]);
            if (cnorm < 1 && bnorm > 1 && bnorm > bignum * cnorm)
                *scale = 1 / bnorm;
            x[0] = (bm[0] * *scale) / csr;
            *xnorm = fabs(x[0]);
        } else {
            R csr = E(t, 0, 0) - wr, csi = -wi, cnorm = fabs(csr) + fabs(csi);
            if (cnorm < smini) {
                csr = smini;
                csi = 0;
                cnorm = smini;
            }
            R bnorm = fabs(bm[0]) + fabs(bm[2]);
            if (cnorm < 1 && bnorm > 1 && bnorm > bignum * cnorm)
                *scale = 1 / bnorm;
            R2 q = eig_ladiv(*scale * bm[0], *scale * bm[2], csr, csi);
            x[0] = q.x;
            x[2] = q.y;
            *xnorm = fabs(x[0]) + fabs(x[2]);
        }
        return;
    }
    /* 2x2: C = A - w I in column-major crv[], complete pivoting */
    R crv[4] = {E(t, 0, 0) - wr, E(t, 1, 0), E(t, 0, 1), E(t, 1, 1) - wr};
    if (nw == 1) {
        R cmax = 0;
        int icmax = -1;
        for (int j = 0; j < 4; j++)
            if (fabs(crv[j]) > cmax) {
                cmax = fabs(crv[j]);
                icmax = j;
            }
        if (cmax < smini) { /* use smini * I */
            R bnorm = fmax(fabs(bm[0]), fabs(bm[1]));
            if (smini < 1 && bnorm > 1 && bnorm > bignum * smini)
                *scale = 1 / bnorm;
            R temp = *scale / smini;
            x[0] = temp * bm[0];
            x[1] = temp * bm[1];
            *xnorm = temp * bnorm;
            return;
        }
        R ur11 = crv[icmax], cr21 = crv[ipivot[icmax][1]], ur12 = crv[ipivot[icmax][2]];
        R cr22 = crv[ipivot[icmax][3]], ur11r = 1 / ur11, lr21 = ur11r * cr21, ur22 = cr22 - ur12 * lr21;
        if (fabs(ur22) < smini)
            ur22 = smini;
        R br1, br2;
        if (rswap[icmax]) {
            br1 = bm[1];
            br2 = bm[0];
        } else {
            br1 = bm[0];
            br2 = bm[1];
        }
        br2 = br2 - lr21 * br1;
        R bbnd = fmax(fabs(br1 * (ur22 * ur11r)), fabs(br2));
        if (bbnd > 1 && fabs(ur22) < 1 && bbnd >= bignum * fabs(ur22))
            *scale = 1 / bbnd;
        R xr2 = (br2 * *scale) / ur22, xr1 = (*scale * br1) * ur11r - xr2 * (ur11r * ur12);
        if (zswap[icmax]) {
            x[0] = xr2;
            x[1] = xr1;
        } else {
            x[0] = xr1;
            x[1] = xr2;
        }
        *xnorm = fmax(fabs(xr1), fabs(xr2));
        if (*xnorm > 1 && cmax > 1 && *xnorm > bignum / cmax) {
            R temp = cmax / bignum;
            x[0] *= temp;
            x[1] *= temp;
            *xnorm *= temp;
            *scale *= temp;
        }
        return;
    }
    R civ[4] = {-wi, 0, 0, -wi};
    R cmax = 0;
    int icmax = -1;
    for (int j = 0; j < 4; j++)
        if (fabs(crv[j]) + fabs(civ[j]) > cmax) {
            cmax = fabs(crv[j]) + fabs(civ[j]);
            icmax = j;
        }
    if (cmax < smini) {
        R bnorm = fmax(fabs(bm[0]) + fabs(bm[2]), fabs(bm[1]) + fabs(bm[3]));
        if (smini < 1 && bnorm > 1 && bnorm > bignum * smini)
            *scale = 1 / bnorm;
        R temp = *scale / smini;
        for (int q = 0; q < 4; q++)
            x[q] = temp * bm[q];
        *xnorm = temp * bnorm;
        return;
    }
    R ur11 = crv[icmax], ui11 = civ[icmax];
    R cr21 = crv[ipivot[icmax][1]], ci21 = civ[ipivot[icmax][1]];
    R ur12 = crv[ipivot[icmax][2]], ui12 = civ[ipivot[icmax][2]];
    R cr22 = crv[ipivot[icmax][3]], ci22 = civ[ipivot[icmax][3]];
    R ur11r, ui11r, lr21, li21, ur12s, ui12s, ur22, ui22;
    if (icmax == 0 || icmax == 3) { /* off-diagonals of the pivoted C are real */
        if (fabs(ur11) > fabs(ui11)) {
            R temp = ui11 / ur11;
            ur11r = 1 / (ur11 * (1 + temp * temp));
            ui11r = -temp * ur11r;
        } else {
            R temp = ur11 / ui11;
            ui11r = -1 / (ui11 * (1 + temp * temp));
            ur11r = -temp * ui11r;
        }
        lr21 = cr21 * ur11r;
        li21 = cr21 * ui11r;
        ur12s = ur12 * ur11r;
        ui12s = ur12 * ui11r;
        ur22 = cr22 - ur12 * lr21;
        ui22 = ci22 - ur12 * li21;
    } else { /* diagonals of the pivoted C are real */
        ur11r = 1 / ur11;
        ui11r = 0;
        lr21 = cr21 * ur11r;
        li21 = ci21 * ur11r;
        ur12s = ur12 * ur11r;
        ui12s = ui12 * ur11r;
        ur22 = cr22 - ur12 * lr21 + ui12 * li21;
        ui22 = -ur12 * li21 - ui12 * lr21;
    }
    R u22abs = fabs(ur22) + fabs(ui22);
    if (u22abs < smini) {
        ur22 = smini;
        ui22 = 0;
    }
    R br1, br2, bi1, bi2;
    if (rswap[icmax]) {
        br2 = bm[0];
        br1 = bm[1];
        bi2 = bm[2];
        bi1 = bm[3];
    } else {
        br1 = bm[0];
        br2 = bm[1];
        bi1 = bm[2];
        bi2 = bm[3];
    }
    br2 = br2 - lr21 * br1 + li21 * bi1;
    bi2 = bi2 - li21 * br1 - lr21 * bi1;
    R bbnd = fmax((fabs(br1) + fabs(bi1)) * (u22abs * (fabs(ur11r) + fabs(ui11r))), fabs(br2) + fabs(bi2));
    if (bbnd > 1 && u22abs < 1 && bbnd >= bignum * u22abs) {
        *scale = 1 / bbnd;
        br1 *= *scale;
        bi1 *= *scale;
        br2 *= *scale;
        bi2 *= *scale;
    }
    R2 q = eig_ladiv(br2, bi2, ur22, ui22);
    R xr2 = q.x, xi2 = q.y;
    R xr1 = ur11r * br1 - ui11r * bi1 - ur12s * xr2 + ui12s * xi2;
    R xi1 = ui11r * br1 + ur11r * bi1 - ui12s * xr2 - ur12s * xi2;
    if (zswap[icmax]) {
        x[0] = xr2;
        x[1] = xr1;
        x[2] = xi2;
        x[3] = xi1;
    } else {
        x[0] = xr1;
        x[1] = xr2;
        x[2] = xi1;
        x[3] = xi2;
    }
    *xnorm = fmax(fabs(xr1) + fabs(xi1), fabs(xr2) + fabs(xi2));
    if (*xnorm > 1 && cmax > 1 && *xnorm > bignum / cmax) {
        R temp = cmax / bignum;
        for (int q2 = 0; q2 < 4; q2++)
            x[q2] *= temp;
        *xnorm *= temp;
        *scale *= temp;
    }
}

/* y[0..m) += a x[0..m) */
inline void eig_axpy(long m, R a, __global const R *x, __global R *y)
{
    for (long k = 0; k < m; k++)
        y[k] = y[k] + a * x[k];
}

inline void eig_scal_n(long m, R s, __global R *x)
{
    for (long k = 0; k < m; k++)
        x[k] *= s;
}

/* dtrevc 'R', 'B': right eigenvectors of the quasi-triangular t,
 * back-transformed by the Schur vectors in z (in place), each scaled so
 * its largest element (pair: |re| + |im|) is 1. ws: 2n scratch (the
 * solution's real and imaginary parts); cn: n scratch (column norms). */
inline void eig_trevc(long n, __global R *t, __global R *z, long ld, __global R *ws, __global R *cn)
{
    const R ulp = EIG_ULP, smlnum = EIG_SAFMIN * ((R)n / ulp), bignum = (1 - ulp) / smlnum;
    __global R *xr = ws, *xi = ws + n;
    cn[0] = 0; /* 1-norms of the strictly upper columns: overflow bounds */
    for (long j = 1; j < n; j++) {
        cn[j] = 0;
        for (long i = 0; i < j; i++)
            cn[j] += fabs(E(t, i, j));
    }
    int ip = 0;
    for (long ki = n - 1; ki >= 0; ki--) {
        if (ip == 1) { /* the first column of a pair, done with the second */
            ip = 0;
            continue;
        }
        ip = ki > 0 && E(t, ki, ki - 1) != 0 ? -1 : 0;
        R wr = E(t, ki, ki), wi = 0;
        if (ip != 0)
            wi = sqrt(fabs(E(t, ki, ki - 1))) * sqrt(fabs(E(t, ki - 1, ki)));
        R smin = fmax(ulp * (fabs(wr) + fabs(wi)), smlnum);
        R x[4], bm[4], scale, xnorm;
        if (ip == 0) { /* real eigenvalue: solve (T(0:ki, 0:ki) - wr) x = 0 with x[ki] = 1 */
            xr[ki] = 1;
            for (long k = 0; k < ki; k++)
                xr[k] = -E(t, k, ki);
            long jnxt = ki - 1;
            for (long j = ki - 1; j >= 0; j--) {
                if (j > jnxt)
                    continue;
                long j1 = j;
                jnxt = j - 1;
                if (j > 0 && E(t, j, j - 1) != 0) {
                    j1 = j - 1;
                    jnxt = j - 2;
                }
                if (j1 == j) {
                    bm[0] = xr[j];
                    eig_laln2(1, 1, smin, &E(t, j, j), ld, bm, wr, 0, x, &scale, &xnorm);
                    if (xnorm > 1 && cn[j] > bignum / xnorm) {
                        x[0] /= xnorm;
                        scale /= xnorm;
                    }
                    if (scale != 1)
                        eig_scal_n(ki + 1, scale, xr);
                    xr[j] = x[0];
                    eig_axpy(j, -x[0], &E(t, 0, j), xr);
                } else {
                    bm[0] = xr[j - 1];
                    bm[1] = xr[j];
                    eig_laln2(2, 1, smin, &E(t, j - 1, j - 1), ld, bm, wr, 0, x, &scale, &xnorm);
                    if (xnorm > 1) {
                        R beta = fmax(cn[j - 1], cn[j]);
                        if (beta > bignum / xnorm) {
                            x[0] /= xnorm;
                            x[1] /= xnorm;
                            scale /= xnorm;
                        }
                    }
                    if (scale != 1)
                        eig_scal_n(ki + 1, scale, xr);
                    xr[j - 1] = x[0];
                    xr[j] = x[1];
                    eig_axpy(j - 1, -x[0], &E(t, 0, j - 1), xr);
                    eig_axpy(j - 1, -x[1], &E(t, 0, j), xr);
                }
            }
            for (long r = 0; r < n; r++) { /* z(:, ki) := Z(:, 0:ki) x */
                R s = xr[ki] * E(z, r, ki);
                for (long k = 0; k < ki; k++)
                    s = s + xr[k] * E(z, r, k);
                E(z, r, ki) = s;
            }
            R remax = 1 / fabs(E(z, eig_iamax(n, &E(z, 0, ki), 1), ki));
            eig_scal_n(n, remax, &E(z, 0, ki));
        } else { /* complex pair (ki - 1, ki): x = xr + i xi, eigenvalue wr + i wi */
            if (fabs(E(t, ki - 1, ki)) >= fabs(E(t, ki, ki - 1))) {
                xr[ki - 1] = 1;
                xi[ki] = wi / E(t, ki - 1, ki);
            } else {
                xr[ki - 1] = -wi / E(t, ki, ki - 1);
                xi[ki] = 1;
            }
            xr[ki] = 0;
            xi[ki - 1] = 0;
            for (long k = 0; k < ki - 1; k++) {
                xr[k] = -xr[ki - 1] * E(t, k, ki - 1);
                xi[k] = -xi[ki] * E(t, k, ki);
            }
            long jnxt = ki - 2;
            for (long j = ki - 2; j >= 0; j--) {
                if (j > jnxt)
                    continue;
                long j1 = j;
                jnxt = j - 1;
                if (j > 0 && E(t, j, j - 1) != 0) {
                    j1 = j - 1;
                    jnxt = j - 2;
                }
                if (j1 == j) {
                    bm[0] = xr[j];
                    bm[2] = xi[j];
                    eig_laln2(1, 2, smin, &E(t, j, j), ld, bm, wr, wi, x, &scale, &xnorm);
                    if (xnorm > 1 && cn[j] > bignum / xnorm) {
                        x[0] /= xnorm;
                        x[2] /= xnorm;
                        scale /= xnorm;
                    }
                    if (scale != 1) {
                        eig_scal_n(ki + 1, scale, xr);
                        eig_scal_n(ki + 1, scale, xi);
                    }
                    xr[j] = x[0];
                    xi[j] = x[2];
                    eig_axpy(j, -x[0], &E(t, 0, j), xr);
                    eig_axpy(j, -x[2], &E(t, 0, j), xi);
                } else {
                    bm[0] = xr[j - 1];
                    bm[1] = xr[j];
                    bm[2] = xi[j - 1];
                    bm[3] = xi[j];
                    eig_laln2(2, 2, smin, &E(t, j - 1, j - 1), ld, bm, wr, wi, x, &scale, &xnorm);
                    if (xnorm > 1) {
                        R beta = fmax(cn[j - 1], cn[j]);
                        if (beta > bignum / xnorm) {
                            R rec = 1 / xnorm;
                            for (int q = 0; q < 4; q++)
                                x[q] *= rec;
                            scale *= rec;
                        }
                    }
                    if (scale != 1) {
                        eig_scal_n(ki + 1, scale, xr);
                        eig_scal_n(ki + 1, scale, xi);
                    }
                    xr[j - 1] = x[0];
                    xr[j] = x[1];
                    xi[j - 1] = x[2];
                    xi[j] = x[3];
                    eig_axpy(j - 1, -x[0], &E(t, 0, j - 1), xr);
                    eig_axpy(j - 1, -x[1], &E(t, 0, j), xr);
                    eig_axpy(j - 1, -x[2], &E(t, 0, j - 1), xi);
                    eig_axpy(j - 1, -x[3], &E(t, 0, j), xi);
                }
            }
            for (long r = 0; r < n; r++) {
                R sr = xr[ki - 1] * E(z, r, ki - 1), si = xi[ki] * E(z, r, ki);
                for (long k = 0; k < ki - 1; k++) {
                    sr = sr + xr[k] * E(z, r, k);
                    si = si + xi[k] * E(z, r, k);
                }
                E(z, r, ki - 1) = sr;
                E(z, r, ki) = si;
            }
            R emax = 0;
            for (long r = 0; r < n; r++)
                emax = fmax(emax, fabs(E(z, r, ki - 1)) + fabs(E(z, r, ki)));
            R remax = 1 / emax;
            eig_scal_n(n, remax, &E(z, 0, ki - 1));
            eig_scal_n(n, remax, &E(z, 0, ki));
            ip = 1;
        }
    }
}

/* dlartg as LAPACK before 3.10: r = sqrt(f^2 + g^2) >= 0 unless |f| >
 * |g|, when cs > 0 and r takes f's sign. Measured against the CPU (MKL)
 * on random 6x6 float64: raw complex-pair eigenvectors agree in 18/20
 * matrices with this, 9/20 with r >= 0 always; the rest differ by sign
 * (|V| always agrees). */
inline void eig_lartg(R f, R g, R *c, R *s)
{
    if (g == 0) {
        *c = 1;
        *s = 0;
    } else if (f == 0) {
        *c = 0;
        *s = 1;
    } else {
        R u = fmax(fabs(f), fabs(g));
        R fs = f / u, gs = g / u, r = sqrt(fs * fs + gs * gs);
        *c = fs / r;
        *s = gs / r;
        if (fabs(f) > fabs(g) && *c < 0) {
            *c = -*c;
            *s = -*s;
        }
    }
}

/* dgeev's normalisation: each real vector to unit norm; each pair to unit
 * norm, rotated so its component of largest modulus is real; then the
 * complex vectors into v (column stride vcs, in complex elements). */
inline void eig_normalize(long n, __global R *z, long ld, __global const R2 *w, __global R *tmp, __global R2 *v,
                          long vcs)
{
    for (long i = 0; i < n; i++) {
        if (w[i].y == 0) {
            eig_scal_n(n, 1 / eig_nrm2(n, &E(z, 0, i), 1), &E(z, 0, i));
            for (long r = 0; r < n; r++)
                v[r + i * vcs] = (R2)(E(z, r, i), 0);
        } else if (w[i].y > 0) {
            R scl = 1 / eig_lapy2(eig_nrm2(n, &E(z, 0, i), 1), eig_nrm2(n, &E(z, 0, i + 1), 1));
            eig_scal_n(n, scl, &E(z, 0, i));
            eig_scal_n(n, scl, &E(z, 0, i + 1));
            for (long r = 0; r < n; r++)
                tmp[r] = E(z, r, i) * E(z, r, i) + E(z, r, i + 1) * E(z, r, i + 1);
            long k = eig_iamax(n, tmp, 1);
            R cs, sn;
            eig_lartg(E(z, k, i), E(z, k, i + 1), &cs, &sn);
            eig_rot(n, &E(z, 0, i), 1, &E(z, 0, i + 1), 1, cs, sn);
            E(z, k, i + 1) = 0;
            for (long r = 0; r < n; r++) {
                v[r + i * vcs] = (R2)(E(z, r, i), E(z, r, i + 1));
                v[r + (i + 1) * vcs] = (R2)(E(z, r, i), -E(z, r, i + 1));
            }
        }
    }
}
