/* test_ew_random.c - Philox4x32-10 uniform/normal: known-answer vectors of
 * a host reference, bit-exact device output, reproducibility by seed and
 * offset, statistics, and independence from the destination's layout. */
#include "test_ew_util.h"

static void philox_ref(const uint32_t in[4], const uint32_t key[2], uint32_t out[4]) {
    uint32_t c[4] = {in[0], in[1], in[2], in[3]}, k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        if (r)
            k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
        uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
        c[1] = (uint32_t)p1;
        c[3] = (uint32_t)p0;
        c[0] = n0;
        c[2] = n2;
    }
    memcpy(out, c, sizeof c);
}

static void test_known_answers(void) {
    /* Random123's kat_vectors for philox4x32_10. */
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {~0u, ~0u, ~0u, ~0u, ~0u, ~0u, 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb,
         0x5001e420, 0x24126ea1},
    };
    for (int t = 0; t < 3; t++) {
        uint32_t out[4];
        philox_ref(kat[t], kat[t] + 4, out);
        CHECK(!memcmp(out, kat[t] + 6, sizeof out));
    }
}

/* Draw into a fresh contiguous 1-D tensor and return its host image. */
static void *draw(tocl_dtype t, int normal, int64_t n, double a, double b, uint64_t seed, uint64_t off,
                  dev_tensor *d) {
    int64_t sz[1] = {n}, st[1] = {1};
    if (!dt_make(d, 0, t, 1, sz, st, n, 0))
        return NULL;
    CHECK_OK(normal ? tocl_op_normal(0, 0, &d->t, a, b, seed, off) : tocl_op_uniform(0, 0, &d->t, a, b, seed, off));
    dt_download(d, 0);
    return dt_elems(d);
}

static void test_bit_exact(void) {
    const uint64_t seed = 0x0123456789abcdefull, off = 77;
    const int64_t n = 1003; /* not a multiple of 4 */
    dev_tensor d, e;
    float *u = draw(TOCL_F32, 0, n, 0, 1, seed, off, &d);
    double *u64 = draw(TOCL_F64, 0, n, 0, 1, seed, off, &e);
    int bad = 0, bad64 = 0;
    for (int64_t i = 0; u && u64 && i < n; i++) {
        uint64_t ctr = off + (uint64_t)(i / 4);
        uint32_t c0[4] = {(uint32_t)ctr, (uint32_t)(ctr >> 32), 0, 0}, c1[4] = {c0[0], c0[1], 1, 0};
        uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)}, w[4], w1[4];
        philox_ref(c0, key, w);
        philox_ref(c1, key, w1);
        bad += u[i] != (float)(w[i % 4] >> 8) * 0x1.0p-24f;
        bad64 += u64[i] != (double)(((uint64_t)(w[i % 4] >> 5) << 26) | (w1[i % 4] >> 6)) * 0x1.0p-53;
    }
    CHECK(bad == 0 && bad64 == 0);
    dt_free(&d);
    dt_free(&e);
}

static void test_reproducible(void) {
    dev_tensor a, b, c, x;
    float *pa = draw(TOCL_F32, 1, 400, 0, 1, 42, 10, &a);
    float *pb = draw(TOCL_F32, 1, 400, 0, 1, 42, 10, &b);
    float *pc = draw(TOCL_F32, 1, 396, 0, 1, 42, 11, &c); /* one counter later = 4 elements later */
    float *px = draw(TOCL_F32, 1, 400, 0, 1, 43, 10, &x);
    CHECK(pa && pb && pc && px);
    if (pa && pb && pc && px) {
        CHECK(!memcmp(pa, pb, 400 * sizeof(float)));
        CHECK(!memcmp(pa + 4, pc, 396 * sizeof(float)));
        int same_off = 0, same_seed = 0;
        for (int i = 0; i < 396; i++)
            same_off += pa[i] == pc[i], same_seed += pa[i] == px[i];
        CHECK(same_off < 4 && same_seed < 4);
    }
    dt_free(&a), dt_free(&b), dt_free(&c), dt_free(&x);
}

static void stats(tocl_dtype t, int normal, double a, double b) {
    const int64_t n = 1 << 20;
    dev_tensor d;
    void *p = draw(t, normal, n, a, b, 2024, 5, &d);
    if (!p)
        return;
    double sum = 0, sq = 0, lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        double v = host_get(t, p, i);
        sum += v, sq += v * v;
        lo = v < lo ? v : lo, hi = v > hi ? v : hi;
    }
    double mean = sum / n, sd = sqrt(sq / n - mean * mean);
    if (normal) { /* 5 sigma on the mean; sample std within 1% */
        CHECK(fabs(mean - a) < 5 * b / sqrt((double)n) + 0.01 * (t == TOCL_BF16));
        CHECK(fabs(sd - b) < 0.01 * b);
    } else {
        double width = b - a;
        CHECK(lo >= a && hi < b);
        CHECK(fabs(mean - (a + b) / 2) < 5 * width / sqrt(12.0 * n) + 0.005 * width * (t == TOCL_BF16));
        CHECK(fabs(sd - width / sqrt(12.0)) < 0.01 * width);
    }
    if (!(lo >= (normal ? -INFINITY : a)) || isnan(mean))
        fprintf(stderr, "  %s %s: mean %g sd %g range [%g, %g]\n", normal ? "normal" : "uniform",
                tocl_dtype_name(t), mean, sd, lo, hi);
    dt_free(&d);
}

static void test_statistics(void) {
    tocl_dtype ts[4] = {TOCL_F32, TOCL_F64, TOCL_F16, TOCL_BF16};
    for (int i = 0; i < 4; i++) {
        stats(ts[i], 0, -3, 5);
        stats(ts[i], 0, 0, 1);
        stats(ts[i], 1, 2, 3);
    }
}

/* The same logical values whatever the destination's strides and offset. */
static void test_layout_independent(void) {
    const int64_t R = 64, C = 48, n = R * C;
    int64_t sz[2] = {R, C}, st[2] = {C, 1}, tr[2] = {1, R}, pad[2] = {C + 3, 1};
    const int64_t *layouts[3] = {st, tr, pad};
    const int64_t elems[3] = {n, n, R * (C + 3)};
    tocl_dtype ts[2] = {TOCL_F32, TOCL_F16};
    for (int t = 0; t < 2; t++)
        for (int normal = 0; normal < 2; normal++) {
            double ref[64 * 48];
            for (int l = 0; l < 3; l++) {
                dev_tensor d;
                CHECK(dt_make(&d, 0, ts[t], 2, sz, layouts[l], elems[l], l == 2 ? 7 : 0));
                CHECK_OK(normal ? tocl_op_normal(0, 0, &d.t, 0, 1, 99, 3) : tocl_op_uniform(0, 0, &d.t, -1, 1, 99, 3));
                dt_download(&d, 0);
                int bad = 0;
                for (int64_t i = 0; i < n; i++) {
                    double v = host_get(ts[t], dt_elems(&d), dt_index(&d.t, i));
                    if (l == 0)
                        ref[i] = v;
                    else
                        bad += v != ref[i];
                }
                CHECK(bad == 0);
                dt_free(&d);
            }
        }
}

static void test_errors(void) {
    int64_t sz[1] = {8}, st[1] = {1};
    dev_tensor d;
    CHECK(dt_make(&d, 0, TOCL_I32, 1, sz, st, 8, 0));
    CHECK_STATUS(tocl_op_uniform(0, 0, &d.t, 0, 1, 1, 0), TOCL_E_UNSUPPORTED);
    d.t.dtype = TOCL_F32;
    CHECK_STATUS(tocl_op_uniform(0, 0, &d.t, 2, 1, 1, 0), TOCL_E_INVALID);
    CHECK_STATUS(tocl_op_normal(0, 0, &d.t, 0, -1, 1, 0), TOCL_E_INVALID);
    d.t.sizes[0] = 0; /* empty: nothing to do */
    CHECK_OK(tocl_op_normal(0, 0, &d.t, 0, 1, 1, 0));
    dt_free(&d);
}

int main(void) {
    test_known_answers();
    if (tocl_device_count() == 0) {
        printf("no OpenCL device: device tests skipped\n");
        TOCL_TEST_END();
    }
    test_bit_exact();
    test_reproducible();
    test_statistics();
    test_layout_independent();
    test_errors();
    TOCL_TEST_END();
}
