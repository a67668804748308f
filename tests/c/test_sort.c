/* test_sort.c - the sort family against host references: stable sort of
 * short and long rows (local bitonic + global merge path), NaN and -0.0
 * ordering, descending, int64 keys, selections (kth, median, mode),
 * searchsorted, unique and argument errors. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tocl/sort.h"
#include "tocl_test.h"

static tocl_tensor rows(tocl_addr a, tocl_dtype dt, int64_t nrows, int64_t n) {
    tocl_tensor t;
    memset(&t, 0, sizeof t);
    t.data = a;
    t.dtype = dt;
    t.ndim = 2;
    t.sizes[0] = nrows;
    t.sizes[1] = n;
    t.strides[0] = n;
    t.strides[1] = 1;
    return t;
}

static tocl_addr upload(const void *p, size_t bytes) {
    tocl_addr a = 0;
    CHECK_OK(tocl_mem_alloc(0, bytes, &a));
    CHECK_OK(tocl_copy_h2d(0, 0, a, p, bytes, 1));
    return a;
}

/* Host reference: stable order of a float row, NaN largest, -0 == +0. */
static const float *ref_row;
static int ref_desc;
static int ref_cmp(const void *a, const void *b) {
    int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
    float x = ref_row[i], y = ref_row[j];
    int c;
    if (isnan(x) || isnan(y))
        c = isnan(x) - isnan(y);
    else
        c = (x > y) - (x < y);
    if (ref_desc)
        c = -c;
    return c ? c : (i > j) - (i < j);
}

static void test_sort_f32(int64_t nrows, int64_t n, int desc) {
    size_t total = (size_t)(nrows * n);
    float *x = malloc(total * 4), *v = malloc(total * 4);
    int64_t *ix = malloc(total * 8), *ref = malloc(n * 8);
    srand(7);
    for (size_t i = 0; i < total; i++) {
        int r = rand() % 40;
        x[i] = r == 0 ? NAN : r == 1 ? -0.0f : r == 2 ? 0.0f : r == 3 ? -INFINITY : (float)(rand() % 50 - 25) / 4;
    }
    tocl_addr a = upload(x, total * 4), va = 0, ia = 0;
    CHECK_OK(tocl_mem_alloc(0, total * 4, &va));
    CHECK_OK(tocl_mem_alloc(0, total * 8, &ia));
    tocl_tensor s = rows(a, TOCL_F32, nrows, n), vt = rows(va, TOCL_F32, nrows, n), it = rows(ia, TOCL_I64, nrows, n);
    CHECK_OK(tocl_sort_rows(0, 0, &s, &vt, &it, desc, TOCL_SORT_TAKE_RANGE, 0));
    CHECK_OK(tocl_copy_d2h(0, 0, v, va, total * 4, 1));
    CHECK_OK(tocl_copy_d2h(0, 0, ix, ia, total * 8, 1));
    int bad = 0;
    for (int64_t r = 0; r < nrows; r++) {
        ref_row = x + r * n;
        ref_desc = desc;
        for (int64_t j = 0; j < n; j++)
            ref[j] = j;
        qsort(ref, (size_t)n, 8, ref_cmp);
        for (int64_t j = 0; j < n; j++) {
            float want = ref_row[ref[j]], got = v[r * n + j];
            bad += ix[r * n + j] != ref[j] || memcmp(&want, &got, 4) != 0;
        }
    }
    if (bad)
        fprintf(stderr, "sort f32 %lld x %lld desc=%d: %d mismatches\n", (long long)nrows, (long long)n, desc, bad);
    CHECK(bad == 0);
    tocl_mem_free(a);
    tocl_mem_free(va);
    tocl_mem_free(ia);
    free(x);
    free(v);
    free(ix);
    free(ref);
}

static void test_int64_and_select(void) {
    int64_t x[8] = {5, INT64_MIN, 3, 5, INT64_MAX, -1, 3, 5}, v[8], ix[8];
    tocl_addr a = upload(x, sizeof x), va = 0, ia = 0;
    CHECK_OK(tocl_mem_alloc(0, sizeof v, &va));
    CHECK_OK(tocl_mem_alloc(0, sizeof ix, &ia));
    tocl_tensor s = rows(a, TOCL_I64, 1, 8), vt = rows(va, TOCL_I64, 1, 8), it = rows(ia, TOCL_I64, 1, 8);
    CHECK_OK(tocl_sort_rows(0, 0, &s, &vt, &it, 0, TOCL_SORT_TAKE_RANGE, 0));
    CHECK_OK(tocl_copy_d2h(0, 0, v, va, sizeof v, 1));
    CHECK_OK(tocl_copy_d2h(0, 0, ix, ia, sizeof ix, 1));
    int64_t want[8] = {INT64_MIN, -1, 3, 3, 5, 5, 5, INT64_MAX}, wix[8] = {1, 5, 2, 6, 0, 3, 7, 4};
    CHECK(!memcmp(v, want, sizeof v) && !memcmp(ix, wix, sizeof ix));
    /* Selections write one column. */
    tocl_tensor v1 = rows(va, TOCL_I64, 1, 1), i1 = rows(ia, TOCL_I64, 1, 1);
    CHECK_OK(tocl_sort_rows(0, 0, &s, &v1, &i1, 0, TOCL_SORT_TAKE_KTH, 2));
    CHECK_OK(tocl_copy_d2h(0, 0, v, va, 8, 1));
    CHECK_OK(tocl_copy_d2h(0, 0, ix, ia, 8, 1));
    CHECK(v[0] == 3 && ix[0] == 2);
    CHECK_OK(tocl_sort_rows(0, 0, &s, &v1, &i1, 0, TOCL_SORT_TAKE_MEDIAN, 0));
    CHECK_OK(tocl_copy_d2h(0, 0, v, va, 8, 1));
    CHECK(v[0] == 3);
    CHECK_OK(tocl_sort_rows(0, 0, &s, &v1, &i1, 0, TOCL_SORT_TAKE_MODE, 0));
    CHECK_OK(tocl_copy_d2h(0, 0, v, va, 8, 1));
    CHECK_OK(tocl_copy_d2h(0, 0, ix, ia, 8, 1));
    CHECK(v[0] == 5 && ix[0] == 7);
    /* Errors: k out of range, wrong output shape, wrong index dtype. */
    CHECK_STATUS(tocl_sort_rows(0, 0, &s, &v1, &i1, 0, TOCL_SORT_TAKE_KTH, 8), TOCL_E_INVALID);
    CHECK_STATUS(tocl_sort_rows(0, 0, &s, &vt, &it, 0, TOCL_SORT_TAKE_MEDIAN, 0), TOCL_E_INVALID);
    tocl_tensor bad = rows(ia, TOCL_I32, 1, 8);
    CHECK_STATUS(tocl_sort_rows(0, 0, &s, &vt, &bad, 0, TOCL_SORT_TAKE_RANGE, 0), TOCL_E_INVALID);
    CHECK(strstr(tocl_last_error(), "int64") != NULL);
    tocl_mem_free(a);
    tocl_mem_free(va);
    tocl_mem_free(ia);
}

static void test_search_unique(void) {
    float bd[5] = {1, 2, 2, 3, NAN}, vals[4] = {2, 0, 5, NAN};
    tocl_addr b = upload(bd, sizeof bd), va = upload(vals, sizeof vals), oa = 0;
    CHECK_OK(tocl_mem_alloc(0, 64, &oa));
    tocl_tensor bt = rows(b, TOCL_F32, 1, 5), vt = rows(va, TOCL_F32, 1, 4), ot = rows(oa, TOCL_I64, 1, 4);
    int64_t got[4];
    CHECK_OK(tocl_searchsorted(0, 0, &bt, &vt, NULL, &ot, 0));
    CHECK_OK(tocl_copy_d2h(0, 0, got, oa, sizeof got, 1));
    CHECK(got[0] == 1 && got[1] == 0 && got[2] == 5 && got[3] == 5); /* NaN compares false, as on the CPU */
    CHECK_OK(tocl_searchsorted(0, 0, &bt, &vt, NULL, &ot, 1));
    CHECK_OK(tocl_copy_d2h(0, 0, got, oa, sizeof got, 1));
    CHECK(got[0] == 5 && got[1] == 0 && got[2] == 5 && got[3] == 5);

    /* unique of a sorted run: 1 2 2 3 NaN -> 4 groups... NaN stands alone. */
    tocl_addr ga = 0, ua = 0, ca = 0;
    CHECK_OK(tocl_mem_alloc(0, 5 * 8, &ga));
    CHECK_OK(tocl_mem_alloc(0, 5 * 4, &ua));
    CHECK_OK(tocl_mem_alloc(0, 5 * 8, &ca));
    tocl_tensor s1 = bt, g1 = bt;
    s1.ndim = g1.ndim = 1;
    s1.sizes[0] = g1.sizes[0] = 5;
    s1.strides[0] = g1.strides[0] = 1;
    g1.data = ga;
    g1.dtype = TOCL_I64;
    int64_t count = -1;
    CHECK_OK(tocl_unique_groups(0, 0, &s1, &g1, &count));
    CHECK(count == 4);
    tocl_tensor u = s1, c = g1;
    u.data = ua;
    u.sizes[0] = c.sizes[0] = 4;
    c.data = ca;
    CHECK_OK(tocl_unique_fill(0, 0, &s1, NULL, &g1, count, &u, NULL, &c));
    float uv[4];
    int64_t cv[4];
    CHECK_OK(tocl_copy_d2h(0, 0, uv, ua, sizeof uv, 1));
    CHECK_OK(tocl_copy_d2h(0, 0, cv, ca, sizeof cv, 1));
    CHECK(uv[0] == 1 && uv[1] == 2 && uv[2] == 3 && isnan(uv[3]));
    CHECK(cv[0] == 1 && cv[1] == 2 && cv[2] == 1 && cv[3] == 1);
    tocl_mem_free(b);
    tocl_mem_free(va);
    tocl_mem_free(oa);
    tocl_mem_free(ga);
    tocl_mem_free(ua);
    tocl_mem_free(ca);
}

int main(void) {
    if (tocl_device_count() < 1) {
        printf("no OpenCL device; skipped\n");
        return 0;
    }
    test_sort_f32(1, 1, 0);
    test_sort_f32(3, 2, 0);
    test_sort_f32(37, 13, 1);
    test_sort_f32(2, 1000, 0);
    test_sort_f32(1, 5001, 1);
    test_int64_and_select();
    test_search_unique();
    TOCL_TEST_END();
}
