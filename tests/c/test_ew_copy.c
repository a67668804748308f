/* test_ew_copy.c - tocl_op_copy across every dtype pair (float16/bfloat16
 * rounding against a host round-to-nearest-even reference), strided and
 * broadcast sources, copies from device 1 to device 0, and tocl_op_fill. */
#include "test_ew_util.h"

/* Values every pair can take: float -> integer conversion is only defined
 * in range (and unsigned targets need non-negative values). */
static double copy_value(tocl_dtype src, tocl_dtype dst, int64_t i) {
    static const double vals[] = {0, 1, 2.5, 3.75, 100.4, 12, 0.5, 7.25, 99.9, 42};
    double v = vals[i % 10] + (double)(i / 10 % 5);
    int neg = i % 3 == 1 && dst != TOCL_U8 && src != TOCL_U8 && src != TOCL_BOOL && dst != TOCL_BOOL;
    if (dst == TOCL_BOOL || src == TOCL_BOOL)
        v = i % 2;
    return ref_convert(src, neg ? -v : v);
}

static void check_copy(tocl_dtype ts, tocl_dtype td, int transposed, int dev_src) {
    const int64_t rows = 13, cols = 29, n = rows * cols;
    int64_t sz[2] = {rows, cols}, st[2], sts[2];
    contig_strides(2, sz, st);
    sts[0] = transposed ? 1 : cols;
    sts[1] = transposed ? rows : 1;
    dev_tensor s, d;
    if (!dt_make(&s, dev_src, ts, 2, sz, sts, n, 0) || !dt_make(&d, 0, td, 2, sz, st, n, 0)) {
        CHECK(0);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        host_set(ts, dt_elems(&s), dt_index(&s.t, i), copy_value(ts, td, i));
    dt_upload(&s, dev_src);
    CHECK_OK(tocl_op_copy(0, 0, &d.t, &s.t));
    dt_download(&d, 0);
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double want = ref_convert(td, host_get(ts, dt_elems(&s), dt_index(&s.t, i)));
        double got = host_get(td, dt_elems(&d), i);
        if (!same_value(want, got) && bad++ < 3)
            fprintf(stderr, "  copy %s -> %s%s: element %lld got %.17g want %.17g\n", tocl_dtype_name(ts),
                    tocl_dtype_name(td), transposed ? " (transposed)" : "", (long long)i, got, want);
    }
    CHECK(bad == 0);
    dt_free(&s);
    dt_free(&d);
}

static void test_all_pairs(void) {
    for (int i = 0; i < N_DTYPES; i++)
        for (int j = 0; j < N_DTYPES; j++)
            check_copy(all_dtypes[i], all_dtypes[j], 0, 0);
    /* Strided source: same-dtype copies must take the kernel, not memcpy. */
    for (int i = 0; i < N_DTYPES; i++)
        check_copy(all_dtypes[i], all_dtypes[i], 1, 0);
    check_copy(TOCL_F32, TOCL_BF16, 1, 0);
}

/* Ties and edges of float32 -> float16 / bfloat16 rounding. */
static void test_rounding(void) {
    static const float vals[] = {
        1.0f + 1.0f / 2048,          /* half tie, rounds down to even */
        1.0f + 3.0f / 2048,          /* half tie, rounds up to even */
        1.0f + 1.0f / 2048 + 1e-7f,  /* just above the tie */
        65504.0f, 65519.0f, 65520.0f, 1e6f, -65520.0f, /* max, below/at overflow */
        6.0e-8f, 2.9e-8f, 3.0e-8f, 1e-10f, 6.1e-5f, 6.103515625e-05f, /* subnormals */
        1.0f + 1.0f / 256, 1.0f + 3.0f / 256, 1.00390625f + 1e-6f, /* bfloat16 ties */
        3.3961e38f, 3.4e38f, -0.0f, INFINITY, -INFINITY, NAN, 0.1f, 1.0f / 3, -2.7182817f,
    };
    const int64_t n = sizeof vals / sizeof vals[0];
    int64_t sz[1] = {n}, st[1] = {1};
    tocl_dtype outs[2] = {TOCL_F16, TOCL_BF16};
    for (int src64 = 0; src64 < 2; src64++) {
        tocl_dtype ts = src64 ? TOCL_F64 : TOCL_F32;
        for (int o = 0; o < 2; o++) {
            dev_tensor s, d;
            CHECK(dt_make(&s, 0, ts, 1, sz, st, n, 0) && dt_make(&d, 0, outs[o], 1, sz, st, n, 0));
            for (int64_t i = 0; i < n; i++)
                host_set(ts, dt_elems(&s), i, vals[i]);
            dt_upload(&s, 0);
            CHECK_OK(tocl_op_copy(0, 0, &d.t, &s.t));
            dt_download(&d, 0);
            int bad = 0;
            for (int64_t i = 0; i < n; i++) {
                uint16_t got = ((uint16_t *)dt_elems(&d))[i];
                double rv = outs[o] == TOCL_F16 ? ref_half(vals[i]) : ref_bf16(vals[i]);
                uint16_t want = outs[o] == TOCL_F16 ? half_bits(rv) : bf16_bits(rv);
                if (isnan(vals[i]))
                    want = got & 0x7fff, got &= 0x7fff; /* any quiet NaN; sign free */
                if (got != want && bad++ < 5)
                    fprintf(stderr, "  %s -> %s of %.9g: got 0x%04x want 0x%04x\n", tocl_dtype_name(ts),
                            tocl_dtype_name(outs[o]), vals[i], got, want);
                if (isnan(vals[i]))
                    CHECK(outs[o] == TOCL_F16 ? (got & 0x7c00) == 0x7c00 && (got & 0x3ff)
                                              : (got & 0x7f80) == 0x7f80 && (got & 0x7f));
            }
            CHECK(bad == 0);
            dt_free(&s);
            dt_free(&d);
        }
    }
}

static void test_broadcast_and_cross_device(void) {
    /* A row broadcast over 8 rows, converted. */
    int64_t sz[2] = {8, 5}, st[2] = {5, 1}, sb[2] = {0, 1};
    dev_tensor s, d;
    CHECK(dt_make(&s, 0, TOCL_I16, 2, sz, sb, 5, 0) && dt_make(&d, 0, TOCL_F64, 2, sz, st, 40, 0));
    for (int i = 0; i < 5; i++)
        host_set(TOCL_I16, dt_elems(&s), i, i * 1000 - 2000);
    dt_upload(&s, 0);
    CHECK_OK(tocl_op_copy(0, 0, &d.t, &s.t));
    dt_download(&d, 0);
    int ok = 1;
    for (int i = 0; i < 40; i++)
        ok &= host_get(TOCL_F64, dt_elems(&d), i) == (i % 5) * 1000 - 2000;
    CHECK(ok);
    dt_free(&s);
    dt_free(&d);
    if (tocl_device_count() < 2) {
        printf("one device: cross-device copies skipped\n");
        return;
    }
    check_copy(TOCL_F32, TOCL_F32, 0, 1);  /* raw copy */
    check_copy(TOCL_F32, TOCL_F16, 0, 1);  /* kernel on device 0 reads device 1 */
    check_copy(TOCL_I64, TOCL_I64, 1, 1);  /* strided */
}

static void test_fill(void) {
    const double values[3] = {3.7, -2.5, 0};
    int64_t sz[2] = {17, 9}, st[2], sts[2] = {1, 17};
    contig_strides(2, sz, st);
    for (int i = 0; i < N_DTYPES; i++) {
        tocl_dtype t = all_dtypes[i];
        for (int strided = 0; strided < 2; strided++)
            for (int v = 0; v < 3; v++) {
                double val = values[v];
                if (t == TOCL_U8 && val < 0)
                    val = 200; /* in range for uint8 */
                dev_tensor d;
                CHECK(dt_make(&d, 0, t, 2, sz, strided ? sts : st, 17 * 9, 2));
                dt_upload(&d, 0); /* zeros, to see that nothing outside the view is written */
                tocl_scalar sc = {1, val, 0};
                if (v == 2) /* an integer-kind scalar */
                    sc.is_float = 0, sc.i = -7 + (t == TOCL_U8) * 14;
                CHECK_OK(tocl_op_fill(0, 0, &d.t, sc));
                dt_download(&d, 0);
                double want = ref_convert(t, sc.is_float ? sc.f : (double)sc.i);
                int bad = 0;
                for (int64_t k = 0; k < 17 * 9; k++)
                    bad += !same_value(host_get(t, dt_elems(&d), k), want);
                bad += host_get(t, d.host, 0) != 0 || host_get(t, d.host, 1) != 0; /* before the view: untouched */
                if (bad)
                    fprintf(stderr, "  fill %s%s with %g: %d wrong\n", tocl_dtype_name(t), strided ? " (strided)" : "",
                            sc.is_float ? sc.f : (double)sc.i, bad);
                CHECK(bad == 0);
                dt_free(&d);
            }
    }
}

int main(void) {
    if (tocl_device_count() == 0) {
        printf("no OpenCL device: skipped\n");
        TOCL_TEST_END();
    }
    test_all_pairs();
    test_rounding();
    test_broadcast_and_cross_device();
    test_fill();
    TOCL_TEST_END();
}
