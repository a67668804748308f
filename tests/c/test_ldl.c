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
#include "test_la_util.h"

static void test_factor_and_solve(void) {
    /* dsytrf('L') of [[0,1,2],[1,0,3],[2,3,0]]: pivots [-3, -3, 3], L below
     * the 2x2 block [[0, 2], [2, 0]] is [1.5, 0.5], D's last element -3.
     * The second matrix, diag(2, 0, 3), stops at column 2 (info 2). */
    float a[18] = {0, 1, 2, 1, 0, 3, 2, 3, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3}, ld[18];
    int32_t piv[6], info[2] = {7, 7};
    tocl_addr da = upload(a, sizeof a), dp = upload(piv, sizeof piv), di = upload(info, sizeof info);
    tocl_tensor ta = mat(da, TOCL_F32, 2, 3, 3, 3, 1), tp = vec(dp, TOCL_I32, 2, 3), ti = vec(di, TOCL_I32, 2, 1);
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
    tocl_tensor t1 = mat(da, TOCL_F32, 1, 3, 3, 3, 1), p1 = vec(dp, TOCL_I32, 1, 3);
    tocl_tensor tb = mat(db, TOCL_F32, 1, 3, 1, 1, 1);
    CHECK_OK(tocl_la_sytrs(0, 0, &t1, &p1, &tb, 0));
    CHECK_OK(tocl_copy_d2h(0, 0, x, db, sizeof x, 1));
    CHECK(fabsf(x[0] - 1) < 1e-6f && fabsf(x[1] - 2) < 1e-6f && fabsf(x[2] - 3) < 1e-6f);
    /* a non-square A is refused */
    tocl_tensor bad = mat(da, TOCL_F32, 1, 3, 2, 2, 1);
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
