/* test_linalg.c - the dense linear algebra kernels against host references:
 * Cholesky (and its info at a non-positive pivot), LU's pivots and factors,
 * triangular solves through a transposed view, QR's reconstruction, and the
 * Jacobi eigen / singular values of a known matrix; then argument errors
 * (wrong rank, dtype, shape, an operand past its block), which must fail
 * with TOCL_E_INVALID before anything is launched. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "tocl/linalg.h"
#include "tocl_test.h"
#include "test_la_util.h"

/* A complex operand in pairs layout: [batch, r, c, 2], row-major. */
static tocl_tensor cmat(tocl_addr a, tocl_dtype dt, int64_t batch, int64_t r, int64_t c) {
    tocl_tensor t = mat(a, dt, batch, r, c, 2 * c, 2);
    t.strides[0] = 2 * r * c;
    t.ndim = 4;
    t.sizes[3] = 2;
    t.strides[3] = 1;
    return t;
}

/* Complex kernels (-DLA_COMPLEX): Hermitian Cholesky A = L L^H, and LU with
 * |re| + |im| pivoting followed by the solves of A x = b and A^H y = b
 * (conjugate-transposed through the transposed view and the conj flag). */
static void test_complex(void) {
    /* L = [[2, 0], [1+i, 2]]: L L^H = [[4, 2-2i], [2+2i, 6]] */
    double h[8] = {4, 0, 2, -2, 2, 2, 6, 0}, hl[8] = {2, 0, 0, 0, 1, 1, 2, 0}, out[8];
    int32_t info = 7;
    tocl_addr dh = upload(h, sizeof h), di = upload(&info, sizeof info);
    tocl_tensor th = cmat(dh, TOCL_F64, 1, 2, 2), ti = vec(di, TOCL_I32, 1, 1);
    CHECK_OK(tocl_la_potrf(0, 0, &th, &ti));
    CHECK_OK(tocl_copy_d2h(0, 0, out, dh, sizeof out, 1));
    CHECK_OK(tocl_copy_d2h(0, 0, &info, di, sizeof info, 1));
    int ok = info == 0;
    for (int e = 0; e < 8; e++) /* the lower triangle: (0,0), (1,0), (1,1) */
        if (e != 2 && e != 3)
            ok &= fabs(out[e] - hl[e]) < 1e-12;
    CHECK(ok);
    /* A = [[1, 2i], [3+1i, 1]]: row 1 pivots (|3| + |1| > |1|); b = A [1, i] = [-1, 3+2i] */
    double a[8] = {1, 0, 0, 2, 3, 1, 1, 0}, b[4] = {-1, 0, 3, 2}, x[4];
    int32_t piv[2] = {0, 0};
    tocl_addr da = upload(a, sizeof a), db = upload(b, sizeof b), dp = upload(piv, sizeof piv);
    tocl_tensor ta = cmat(da, TOCL_F64, 1, 2, 2), tb = cmat(db, TOCL_F64, 1, 2, 1), tp = vec(dp, TOCL_I32, 1, 2);
    CHECK_OK(tocl_la_getrf(0, 0, &ta, &tp, &ti, 1));
    CHECK_OK(tocl_la_laswp(0, 0, &tp, &tb, 0));
    CHECK_OK(tocl_la_trsm(0, 0, &ta, &tb, 0, 1, 0));
    CHECK_OK(tocl_la_trsm(0, 0, &ta, &tb, 1, 0, 0));
    CHECK_OK(tocl_copy_d2h(0, 0, x, db, sizeof x, 1));
    CHECK_OK(tocl_copy_d2h(0, 0, piv, dp, sizeof piv, 1));
    CHECK(piv[0] == 2 && piv[1] == 2);
    CHECK(fabs(x[0] - 1) < 1e-12 && fabs(x[1]) < 1e-12 && fabs(x[2]) < 1e-12 && fabs(x[3] - 1) < 1e-12);
    /* A^H y = b2 with y = [1, i]: A^H = [[1, 3-1i], [-2i, 1]], b2 = [2+3i, -1i] */
    double b2[4] = {2, 3, 0, -1};
    CHECK_OK(tocl_copy_h2d(0, 0, db, b2, sizeof b2, 1));
    tocl_tensor tat = ta; /* the transposed view of LU */
    tat.strides[1] = ta.strides[2], tat.strides[2] = ta.strides[1];
    CHECK_OK(tocl_la_trsm(0, 0, &tat, &tb, 0, 0, 1)); /* U^H */
    CHECK_OK(tocl_la_trsm(0, 0, &tat, &tb, 1, 1, 1)); /* L^H */
    CHECK_OK(tocl_la_laswp(0, 0, &tp, &tb, 1));
    CHECK_OK(tocl_copy_d2h(0, 0, x, db, sizeof x, 1));
    CHECK(fabs(x[0] - 1) < 1e-12 && fabs(x[1]) < 1e-12 && fabs(x[2]) < 1e-12 && fabs(x[3] - 1) < 1e-12);
    /* a complex A with a real B is refused */
    tocl_tensor tr = mat(db, TOCL_F64, 1, 2, 1, 1, 1);
    CHECK_STATUS(tocl_la_trsm(0, 0, &ta, &tr, 0, 0, 0), TOCL_E_INVALID);
    tocl_mem_free(dh);
    tocl_mem_free(di);
    tocl_mem_free(da);
    tocl_mem_free(db);
    tocl_mem_free(dp);
}

static void test_cholesky(void) {
    /* A = L L^T with L = [[2,0,0],[1,3,0],[-1,2,1]]; the second matrix is not positive-definite at order 2 */
    double a[18] = {4, 2, -2, 2, 10, 5, -2, 5, 6, 1, 0, 0, 0, -1, 0, 0, 0, 1};
    double l[9] = {2, 0, 0, 1, 3, 0, -1, 2, 1}, out[18];
    int32_t info[2] = {7, 7};
    tocl_addr da = upload(a, sizeof a), di = upload(info, sizeof info);
    tocl_tensor ta = mat(da, TOCL_F64, 2, 3, 3, 3, 1), ti = vec(di, TOCL_I32, 2, 1);
    CHECK_OK(tocl_la_potrf(0, 0, &ta, &ti));
    CHECK_OK(tocl_copy_d2h(0, 0, out, da, sizeof out, 1));
    CHECK_OK(tocl_copy_d2h(0, 0, info, di, sizeof info, 1));
    int ok = 1;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j <= i; j++)
            ok &= fabs(out[i * 3 + j] - l[i * 3 + j]) < 1e-12;
    CHECK(ok);
    CHECK(info[0] == 0 && info[1] == 2);
    tocl_mem_free(da);
    tocl_mem_free(di);
}

static void test_lu_and_solve(void) {
    /* LAPACK's getrf pivots [3, 3, 3] for this matrix */
    float a[9] = {1, 2, 3, 4, 5, 6, 7, 8, 10}, lu[9];
    int32_t piv[3], info = -1;
    tocl_addr da = upload(a, sizeof a), dp = upload(piv, sizeof piv), di = upload(&info, sizeof info);
    tocl_tensor ta = mat(da, TOCL_F32, 1, 3, 3, 3, 1), tp = vec(dp, TOCL_I32, 1, 3), ti = vec(di, TOCL_I32, 1, 1);
    CHECK_OK(tocl_la_getrf(0, 0, &ta, &tp, &ti, 1));
    CHECK_OK(tocl_copy_d2h(0, 0, lu, da, sizeof lu, 1));
    CHECK_OK(tocl_copy_d2h(0, 0, piv, dp, sizeof piv, 1));
    CHECK_OK(tocl_copy_d2h(0, 0, &info, di, sizeof info, 1));
    CHECK(piv[0] == 3 && piv[1] == 3 && piv[2] == 3 && info == 0);
    CHECK(lu[0] == 7 && fabsf(lu[3] - 1.0f / 7) < 1e-6f);
    /* solve A x = b for b = A [1, 1, 1]^T: interchanges, unit-lower, upper */
    float b[3] = {6, 15, 25}, x[3];
    tocl_addr db = upload(b, sizeof b);
    tocl_tensor tb = mat(db, TOCL_F32, 1, 3, 1, 1, 1);
    CHECK_OK(tocl_la_laswp(0, 0, &tp, &tb, 0));
    CHECK_OK(tocl_la_trsm(0, 0, &ta, &tb, 0, 1, 0));
    CHECK_OK(tocl_la_trsm(0, 0, &ta, &tb, 1, 0, 0));
    CHECK_OK(tocl_copy_d2h(0, 0, x, db, sizeof x, 1));
    CHECK(fabsf(x[0] - 1) < 1e-5f && fabsf(x[1] - 1) < 1e-5f && fabsf(x[2] - 1) < 1e-5f);
    /* a transposed view: solve U^T y = c with U read through swapped strides */
    float u[4] = {2, 1, 0, 4}, c[2] = {4, 10}, y[2];
    tocl_addr du = upload(u, sizeof u), dc = upload(c, sizeof c);
    tocl_tensor tut = mat(du, TOCL_F32, 1, 2, 2, 1, 2), tc = mat(dc, TOCL_F32, 1, 2, 1, 1, 1);
    CHECK_OK(tocl_la_trsm(0, 0, &tut, &tc, 0, 0, 0)); /* U^T = [[2,0],[1,4]] is lower */
    CHECK_OK(tocl_copy_d2h(0, 0, y, dc, sizeof y, 1));
    CHECK(fabsf(y[0] - 2) < 1e-6f && fabsf(y[1] - 2) < 1e-6f);
    tocl_mem_free(da), tocl_mem_free(dp), tocl_mem_free(di), tocl_mem_free(db), tocl_mem_free(du);
    tocl_mem_free(dc);
}

static void test_qr_eigh_svd(void) {
    /* QR of a 3x2 matrix: Q R reconstructs A (Q from the reflectors applied to I) */
    double a[6] = {3, 1, 4, 1, 0, 2}, q[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, g[6], tau[2];
    tocl_addr da = upload(a, sizeof a), dt = upload(tau, sizeof tau), dq = upload(q, sizeof q);
    tocl_tensor ta = mat(da, TOCL_F64, 1, 3, 2, 2, 1), tt = vec(dt, TOCL_F64, 1, 2);
    tocl_tensor tq = mat(dq, TOCL_F64, 1, 3, 3, 3, 1);
    CHECK_OK(tocl_la_geqrf(0, 0, &ta, &tt));
    CHECK_OK(tocl_la_house_apply(0, 0, &ta, &tt, &tq, 0, 0, 0));
    CHECK_OK(tocl_copy_d2h(0, 0, g, da, sizeof g, 1));
    CHECK_OK(tocl_copy_d2h(0, 0, q, dq, sizeof q, 1));
    double err = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) {
            double s = 0;
            for (int k = 0; k <= j; k++)
                s += q[i * 3 + k] * g[k * 2 + j];
            err = fmax(err, fabs(s - a[i * 2 + j]));
        }
    CHECK(err < 1e-12);
    /* eigenvalues of [[2,1],[1,2]] are 1 and 3; its singular values too */
    double s2[4] = {2, 1, 1, 2}, w[2], rot[2];
    int32_t info = -1;
    tocl_addr ds = upload(s2, sizeof s2), dw = upload(w, sizeof w), dr = upload(rot, sizeof rot);
    tocl_addr di = upload(&info, sizeof info);
    tocl_tensor ts = mat(ds, TOCL_F64, 1, 2, 2, 2, 1), tw = vec(dw, TOCL_F64, 1, 2), tr = vec(dr, TOCL_F64, 1, 2);
    tocl_tensor ti = vec(di, TOCL_I32, 1, 1);
    CHECK_OK(tocl_la_eigh(0, 0, &ts, NULL, &tw, &tr, &ti));
    CHECK_OK(tocl_copy_d2h(0, 0, w, dw, sizeof w, 1));
    CHECK_OK(tocl_copy_d2h(0, 0, &info, di, sizeof info, 1));
    CHECK(info == 0 && fabs(fmin(w[0], w[1]) - 1) < 1e-12 && fabs(fmax(w[0], w[1]) - 3) < 1e-12);
    CHECK_OK(tocl_copy_h2d(0, 0, ds, s2, sizeof s2, 1));
    CHECK_OK(tocl_la_svd_jacobi(0, 0, &ts, NULL, &ti));
    double o[4];
    CHECK_OK(tocl_copy_d2h(0, 0, o, ds, sizeof o, 1));
    double n0 = hypot(o[0], o[2]), n1 = hypot(o[1], o[3]);
    CHECK(fabs(fmin(n0, n1) - 1) < 1e-12 && fabs(fmax(n0, n1) - 3) < 1e-12);
    tocl_mem_free(da), tocl_mem_free(dt), tocl_mem_free(dq), tocl_mem_free(ds), tocl_mem_free(dw);
    tocl_mem_free(dr), tocl_mem_free(di);
}

static void test_errors(void) {
    float a[4] = {1, 0, 0, 1};
    int32_t info = 0;
    tocl_addr da = upload(a, sizeof a), di = upload(&info, sizeof info);
    tocl_tensor ta = mat(da, TOCL_F32, 1, 2, 2, 2, 1), ti = vec(di, TOCL_I32, 1, 1);
    tocl_tensor bad = ta;
    bad.ndim = 2;
    CHECK_STATUS(tocl_la_potrf(0, 0, &bad, &ti), TOCL_E_INVALID); /* not a batch of matrices */
    bad = ta;
    bad.dtype = TOCL_I32;
    CHECK_STATUS(tocl_la_potrf(0, 0, &bad, &ti), TOCL_E_INVALID); /* integer matrix */
    bad = ta;
    bad.sizes[2] = 1;
    CHECK_STATUS(tocl_la_potrf(0, 0, &bad, &ti), TOCL_E_INVALID); /* not square */
    bad = ta;
    bad.sizes[0] = 3;
    CHECK(tocl_la_potrf(0, 0, &bad, &ti) != TOCL_OK); /* three matrices in a block of one */
    tocl_tensor ib = ti;
    ib.dtype = TOCL_I64;
    CHECK_STATUS(tocl_la_potrf(0, 0, &ta, &ib), TOCL_E_INVALID); /* info must be int32 */
    CHECK_STATUS(tocl_la_potrf(0, 0, &ta, NULL), TOCL_E_INVALID);
    CHECK_STATUS(tocl_la_trsm(0, 0, &ta, &ti, 0, 0, 0), TOCL_E_INVALID); /* B is not a matrix operand */
    float e[1];
    CHECK_OK(tocl_copy_d2h(0, 0, e, da, sizeof e, 1));
    CHECK(e[0] == 1); /* nothing ran */
    tocl_mem_free(da);
    tocl_mem_free(di);
}

int main(void) {
    if (tocl_device_count() < 1) {
        printf("no OpenCL device; skipped\n");
        return 0;
    }
    if (tocl_dev_props(0)->has_fp64) { /* the float64 cases */
        test_cholesky();
        test_qr_eigh_svd();
        test_complex();
    }
    test_lu_and_solve();
    test_errors();
    TOCL_TEST_END();
}
