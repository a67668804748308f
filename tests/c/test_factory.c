/* test_factory.c - arange, linspace, logspace and triangle indices through
 * the C API, against host formulas written the CPU's way. */
#include "test_ew_util.h"
#include "tocl/factory.h"

static int vec(dev_tensor *d, tocl_dtype t, int64_t n) {
    int64_t sz[1] = {n}, st[1] = {1};
    return dt_make(d, 0, t, 1, sz, st, n, 5);
}

static void test_arange(void) {
    for (int k = 1; k < N_DTYPES; k++) { /* not bool */
        tocl_dtype t = all_dtypes[k];
        const int64_t n = 57;
        dev_tensor d;
        if (!vec(&d, t, n))
            continue;
        tocl_scalar s0 = {0, 0, 3}, s1 = {0, 0, 2};
        if (tocl_dtype_is_float(t))
            s0 = (tocl_scalar){1, 0.5, 0}, s1 = (tocl_scalar){1, 0.25, 0};
        CHECK_OK(tocl_op_arange(0, 0, &d.t, s0, s1));
        dt_download(&d, 0);
        int bad = 0;
        for (int64_t i = 0; i < n; i++) {
            double want = s0.is_float ? s0.f + s1.f * (double)i : (double)(s0.i + s1.i * i);
            bad += !same_value(host_get(t, dt_elems(&d), i), ref_convert(t, want));
        }
        CHECK(bad == 0);
        dt_free(&d);
    }
    dev_tensor b;
    if (vec(&b, TOCL_BOOL, 3)) {
        tocl_scalar z = {0, 0, 0};
        CHECK_STATUS(tocl_op_arange(0, 0, &b.t, z, z), TOCL_E_UNSUPPORTED);
        dt_free(&b);
    }
}

static void test_linspace_logspace(void) {
    const int64_t n = 101;
    dev_tensor d;
    if (!vec(&d, TOCL_F32, n))
        return;
    float start = -1.25f, end = 3.5f, step = (end - start) / (float)(n - 1);
    CHECK_OK(tocl_op_linspace(0, 0, &d.t, start, end, step));
    dt_download(&d, 0);
    const float *x = dt_elems(&d);
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        float want = i < n / 2 ? fmaf(step, (float)i, start) : fmaf(-step, (float)(n - i - 1), end);
        bad += x[i] != want;
    }
    CHECK(bad == 0 && x[0] == start && x[n - 1] == end);
    CHECK_OK(tocl_op_logspace(0, 0, &d.t, 0, 2, 0.02, 10));
    dt_download(&d, 0);
    bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = i < n / 2 ? 0.02 * (double)i : 2 - 0.02 * (double)(n - i - 1);
        bad += fabs(x[i] - (float)pow(10, e)) > 1e-6 * pow(10, e);
    }
    CHECK(bad == 0);
    dt_free(&d);
}

static void test_tri_indices(void) {
    const int64_t cases[][3] = {{4, 6, 1}, {6, 4, -2}, {5, 5, 0}, {3, 7, 9}, {7, 3, -9}};
    for (int c = 0; c < 5; c++) {
        for (int upper = 0; upper < 2; upper++) {
            int64_t row = cases[c][0], col = cases[c][1], off = cases[c][2], count = 0;
            int64_t ref[2][64];
            for (int64_t i = 0; i < row; i++)
                for (int64_t j = 0; j < col; j++)
                    if (upper ? j - i >= off : j - i <= off) {
                        ref[0][count] = i;
                        ref[1][count] = j;
                        count++;
                    }
            if (count == 0)
                continue;
            int64_t sz[2] = {2, count}, st[2] = {count, 1};
            dev_tensor d;
            if (!dt_make(&d, 0, TOCL_I64, 2, sz, st, 2 * count, 1))
                continue;
            CHECK_OK(tocl_op_tri_indices(0, 0, &d.t, row, col, off, upper));
            dt_download(&d, 0);
            const int64_t *x = dt_elems(&d);
            CHECK(!memcmp(x, ref[0], (size_t)count * 8) && !memcmp(x + count, ref[1], (size_t)count * 8));
            dt_free(&d);
        }
    }
}

int main(void) {
    if (tocl_device_count() == 0) {
        printf("no OpenCL device: device tests skipped\n");
        TOCL_TEST_END();
    }
    test_arange();
    test_linspace_logspace();
    test_tri_indices();
    TOCL_TEST_END();
}
