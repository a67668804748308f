/* test_random_ops.c - tocl_op_random (every kind, every dtype), the range
 * check, randperm and multinomial through the C API: ranges, rates,
 * permutations, reproducibility and argument errors. */
#include "test_ew_util.h"
#include "tocl/random.h"

static int vec(dev_tensor *d, tocl_dtype t, int64_t n) {
    int64_t sz[1] = {n}, st[1] = {1};
    return dt_make(d, 0, t, 1, sz, st, n, 3); /* a front pad: a non-zero buffer offset */
}

static void test_random_kinds(void) {
    const int64_t n = 4001;
    for (int k = 0; k < N_DTYPES; k++) {
        tocl_dtype t = all_dtypes[k];
        dev_tensor d;
        if (!vec(&d, t, n))
            continue;
        /* random_(3, 10): values 3..9, every one of them */
        tocl_rand_args a = {TOCL_RANDK_FROM_TO, 7, 3, 0, 0};
        if (t == TOCL_BOOL)
            a.range = 2, a.base = 0;
        CHECK_OK(tocl_op_random(0, 0, &d.t, &a, NULL, 42, 0));
        dt_download(&d, 0);
        int bad = 0, seen[16] = {0};
        for (int64_t i = 0; i < n; i++) {
            double v = host_get(t, dt_elems(&d), i);
            if (v < (double)a.base || v >= (double)(a.base + (int64_t)a.range) || v != floor(v))
                bad++;
            else
                seen[(int)v] = 1;
        }
        int distinct = 0;
        for (int v = 0; v < 16; v++)
            distinct += seen[v];
        CHECK(bad == 0 && distinct == (int)a.range);
        /* bernoulli p = 1/4 as a threshold of 2^30 */
        tocl_rand_args b = {TOCL_RANDK_BERNOULLI, (uint64_t)1 << 30, 0, 0, 0};
        CHECK_OK(tocl_op_random(0, 0, &d.t, &b, NULL, 43, 5));
        dt_download(&d, 0);
        double ones = 0;
        for (int64_t i = 0; i < n; i++)
            ones += host_get(t, dt_elems(&d), i);
        CHECK(fabs(ones / n - 0.25) < 0.03);
        if (tocl_dtype_is_float(t)) {
            tocl_rand_args e = {TOCL_RANDK_EXPONENTIAL, 0, 0, 2.0, 0};
            CHECK_OK(tocl_op_random(0, 0, &d.t, &e, NULL, 44, 0));
            dt_download(&d, 0);
            double s = 0;
            int neg = 0;
            for (int64_t i = 0; i < n; i++) {
                double v = host_get(t, dt_elems(&d), i);
                s += v;
                neg += !(v >= 0);
            }
            CHECK(neg == 0 && fabs(s / n - 0.5) < 0.05);
        } else {
            tocl_rand_args e = {TOCL_RANDK_CAUCHY, 0, 0, 0, 1};
            CHECK_STATUS(tocl_op_random(0, 0, &d.t, &e, NULL, 44, 0), TOCL_E_UNSUPPORTED);
        }
        dt_free(&d);
    }
}

static void test_reproducible_by_counter(void) {
    dev_tensor a, b;
    if (!vec(&a, TOCL_I64, 400) || !vec(&b, TOCL_I64, 396))
        return;
    tocl_rand_args r = {TOCL_RANDK_FROM_TO, 0, 0, 0, 0}; /* all 64 bits */
    CHECK_OK(tocl_op_random(0, 0, &a.t, &r, NULL, 9, 10));
    CHECK_OK(tocl_op_random(0, 0, &b.t, &r, NULL, 9, 11)); /* one counter later = 4 elements later */
    dt_download(&a, 0);
    dt_download(&b, 0);
    CHECK(!memcmp((int64_t *)dt_elems(&a) + 4, dt_elems(&b), 396 * sizeof(int64_t)));
    dt_free(&a);
    dt_free(&b);
}

static void test_check_range(void) {
    dev_tensor v, f;
    if (!vec(&v, TOCL_F32, 100) || !vec(&f, TOCL_I32, 1))
        return;
    float *h = dt_elems(&v);
    for (int i = 0; i < 100; i++)
        h[i] = (float)i / 100;
    dt_upload(&v, 0);
    dt_upload(&f, 0);
    CHECK_OK(tocl_op_check_range(0, 0, &v.t, 0, 1, &f.t));
    dt_download(&f, 0);
    CHECK(((int *)dt_elems(&f))[0] == 0);
    h[57] = NAN;
    dt_upload(&v, 0);
    CHECK_OK(tocl_op_check_range(0, 0, &v.t, 0, 1, &f.t));
    dt_download(&f, 0);
    CHECK(((int *)dt_elems(&f))[0] == 1);
    dt_free(&v);
    dt_free(&f);
}

static void test_randperm(void) {
    const tocl_dtype types[] = {TOCL_I64, TOCL_F32, TOCL_I16};
    for (int k = 0; k < 3; k++) {
        int64_t n = 1000, np = tocl_rand_sort_length(n);
        dev_tensor d, kk, vv;
        if (!vec(&d, types[k], n) || !vec(&kk, TOCL_I64, np) || !vec(&vv, TOCL_I64, np))
            return;
        CHECK_OK(tocl_op_randperm(0, 0, &d.t, &kk.t, &vv.t, 77, 0));
        dt_download(&d, 0);
        static char seen[1000];
        memset(seen, 0, sizeof seen);
        int bad = 0, fixed = 0;
        for (int64_t i = 0; i < n; i++) {
            double v = host_get(types[k], dt_elems(&d), i);
            if (v < 0 || v >= n || seen[(int)v])
                bad++;
            else
                seen[(int)v] = 1;
            fixed += v == (double)i;
        }
        CHECK(bad == 0 && fixed < 10);
        CHECK_STATUS(tocl_op_randperm(0, 0, &d.t, &vv.t, &vv.t, 77, 0), TOCL_OK);
        kk.t.sizes[0] = 5; /* workspace too small */
        CHECK_STATUS(tocl_op_randperm(0, 0, &d.t, &kk.t, &vv.t, 77, 0), TOCL_E_INVALID);
        dt_free(&d);
        dt_free(&kk);
        dt_free(&vv);
    }
}

static void test_multinomial(void) {
    const int64_t rows = 2, ncat = 5, ns = 4000;
    int64_t psz[2] = {rows, ncat}, pst[2] = {ncat, 1}, dsz[2] = {rows, ns}, dst[2] = {ns, 1};
    dev_tensor p, c, f, d, kk, vv;
    int64_t np = tocl_rand_sort_length(rows * ncat);
    if (!dt_make(&p, 0, TOCL_F32, 2, psz, pst, rows * ncat, 1) || !vec(&c, TOCL_F32, rows * ncat) ||
        !vec(&f, TOCL_I32, 3) || !dt_make(&d, 0, TOCL_I64, 2, dsz, dst, rows * ns, 0) ||
        !vec(&kk, TOCL_I64, np) || !vec(&vv, TOCL_I64, np))
        return;
    const float pr[10] = {1, 0, 3, 0, 4, 0, 0, 0, 2, 0};
    memcpy(dt_elems(&p), pr, sizeof pr);
    dt_upload(&p, 0);
    dt_upload(&f, 0);
    CHECK_OK(tocl_op_multinomial_scan(0, 0, &p.t, &c.t, &f.t));
    dt_download(&f, 0);
    const int *fl = dt_elems(&f);
    CHECK(fl[0] == 0 && fl[1] == 0 && fl[2] == 0);
    CHECK_OK(tocl_op_multinomial(0, 0, &d.t, &p.t, &c.t, 1, NULL, NULL, 5, 0));
    dt_download(&d, 0);
    const int64_t *x = dt_elems(&d);
    int cnt[2][5] = {{0}};
    int bad = 0;
    for (int64_t i = 0; i < rows * ns; i++) {
        if (x[i] < 0 || x[i] >= ncat)
            bad++;
        else
            cnt[i / ns][x[i]]++;
    }
    CHECK(bad == 0 && cnt[0][1] == 0 && cnt[0][3] == 0 && cnt[1][3] == ns);
    CHECK(fabs(cnt[0][2] / (double)ns - 0.375) < 0.03 && fabs(cnt[0][4] / (double)ns - 0.5) < 0.03);
    /* without replacement: 3 draws from row 0 are its 3 non-zero categories */
    d.t.sizes[1] = 3;
    d.t.strides[0] = 3;
    CHECK_OK(tocl_op_multinomial(0, 0, &d.t, &p.t, &c.t, 0, &kk.t, &vv.t, 6, 0));
    dt_download(&d, 0);
    int mask = 0;
    for (int s = 0; s < 3; s++)
        mask |= 1 << (int)x[s];
    CHECK(mask == ((1 << 0) | (1 << 2) | (1 << 4)));
    CHECK(x[3] == 3); /* row 1's only category first */
    d.t.sizes[1] = 6; /* more than ncat without replacement */
    CHECK_STATUS(tocl_op_multinomial(0, 0, &d.t, &p.t, &c.t, 0, &kk.t, &vv.t, 6, 0), TOCL_E_INVALID);
    /* flags: a negative entry and a zero row */
    const float bad_pr[10] = {1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
    memcpy(dt_elems(&p), bad_pr, sizeof bad_pr);
    dt_upload(&p, 0);
    memset(dt_elems(&f), 0, 12);
    dt_upload(&f, 0);
    CHECK_OK(tocl_op_multinomial_scan(0, 0, &p.t, &c.t, &f.t));
    dt_download(&f, 0);
    CHECK(fl[0] == 1 && fl[1] == 0 && fl[2] == 1);
    dt_free(&p);
    dt_free(&c);
    dt_free(&f);
    dt_free(&d);
    dt_free(&kk);
    dt_free(&vv);
}

int main(void) {
    CHECK(tocl_rand_sort_length(1) == 1 && tocl_rand_sort_length(5) == 8 && tocl_rand_sort_length(1024) == 1024);
    if (tocl_device_count() == 0) {
        printf("no OpenCL device: device tests skipped\n");
        TOCL_TEST_END();
    }
    test_random_kinds();
    test_reproducible_by_counter();
    test_check_range();
    test_randperm();
    test_multinomial();
    TOCL_TEST_END();
}
