/* test_ldl.c - the Bunch-Kaufman kernels (kernels/ldl.cl) against values
 * LAPACK's dsytrf / dsytrs give: a matrix with a zero diagonal takes a 2x2
 * pivot after an interchange, a diagonal one with a zero sets info at its
 * column, and the solve with the factors recovers x; then a non-square A
 * is refused before anything is launched. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "tocl/linalg.h"
#include "tocl_test.h"

static tocl_tensor mat(tocl_addr a, tocl_dtype dt, int64_t batch, int64_t r, int64_t c) {
    tocl_tensor t;
    memset(&t, 0, sizeof t);
    t.data = a;
    t.dtype = dt;
    t.ndim = 3;
    t.sizes[0] = batch, t.sizes[1] = r, t.sizes[2] = c;
    t.strides[0] = r * c, t.strides[1] = c, t.strides[2] = 1;
    return t;
}

static tocl_tensor vec(tocl_addr a, int64_t batch, int64_t n) {
    tocl_tensor t;
    memset(&t, 0, sizeof t);
    t.data = a;
    t.dtype = TOCL_I32;
    t.ndim = 2;
    t.sizes[0] = batch, t.sizes[1] = n;
    t.strides[0] = n, t.strides[1] = 1;
    return t;
}

static tocl_addr upload(const void *p, size_t bytes) {
    tocl_addr a = 0;
    CHECK_OK(tocl_mem_alloc(0, bytes, &a));
    CHECK_OK(tocl_copy_h2d(0, 0, a, p, bytes, 1));
    return a;
}

static void test_factor_and_solve(void) {
    /* dsytrf('L') of [[0,1,2],[1,0,3],[2,3,0]]: pivots [-3, -3, 3], L below
     * the 2x2 block [[0, 2], [2, 0]] is [1.5, 0.5], D's last element -3.
     * The second matrix, diag(2, 0, 3), stops at column 2 (info 2). */
    float a[18] = {0, 1, 2, 1, 0, 3, 2, 3, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3}, ld[18];
    int32_t piv[6], info[2] = {7, 7};
    tocl_addr da = upload(a, sizeof a), dp = upload(piv, sizeof piv), di = upload(info, sizeof info);
    tocl_tensor ta = mat(da, TOCL_F32, 2, 3, 3), tp = vec(dp, 2, 3), ti = vec(di, 2, 1);
    CHECK_OK(tocl_la_sytrf(0, 0, &ta, &tp, &ti, 0));
    CHECK_OK(tocl_copy_d2h(0, 0, ld, da, sizeof ld, 1));
    CHECK_OK(tocl_copy_d2h(0, 0, piv, dp, sizeof piv, 1));
    CHECK_OK(tocl_copy_d2h(0, 0, info, di, sizeof info, 1));
    CHECK(piv[0] == -3 && piv[1] == -3 && piv[2] == 3);
    CHECK(piv[3] == 1 && piv[4] == 2 && piv[5] == 3);
    CHECK(info[0] == 0 && info[1] == 2);
    CHECK(ld[0] == 0 && ld[3] == 2 && ld[4] == 0 && ld[6] == 1.5f && ld[7] == 0.5f && ld[8] == -3);
    /* x = [1, 2, 3]: b = A x = [8, 10, 8] */
    float b[3] = {8, 10, 8}, x[3];
    tocl_addr db = upload(b, sizeof b);
    tocl_tensor t1 = mat(da, TOCL_F32, 1, 3, 3), p1 = vec(dp, 1, 3), tb = mat(db, TOCL_F32, 1, 3, 1);
    CHECK_OK(tocl_la_sytrs(0, 0, &t1, &p1, &tb, 0));
    CHECK_OK(tocl_copy_d2h(0, 0, x, db, sizeof x, 1));
    CHECK(fabsf(x[0] - 1) < 1e-6f && fabsf(x[1] - 2) < 1e-6f && fabsf(x[2] - 3) < 1e-6f);
    /* a non-square A is refused */
    tocl_tensor bad = mat(da, TOCL_F32, 1, 3, 2);
    CHECK_STATUS(tocl_la_sytrf(0, 0, &bad, &p1, &ti, 0), TOCL_E_INVALID);
    tocl_mem_free(da);
    tocl_mem_free(dp);
    tocl_mem_free(di);
    tocl_mem_free(db);
}

int main(void) {
    if (tocl_device_count() < 1) {
        printf("no OpenCL device; skipped\n");
        return 0;
    }
    test_factor_and_solve();
    TOCL_TEST_END();
}
