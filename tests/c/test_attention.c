/* test_attention.c - flash-style attention through the C API against a
 * double host reference that does materialise the score matrix: output,
 * logsumexp and q/k/v gradients with grouped-query heads, causal (L != S)
 * and additive masks, and argument errors. */
#include "test_ew_util.h"
#include "tocl/attention.h"

static uint32_t seed = 777;

static double urand(void) { /* in [-1, 1) */
    seed = seed * 1664525u + 1013904223u;
    return ((seed >> 8) / 16777216.0) * 2 - 1;
}

static int dense(dev_tensor *d, tocl_dtype t, int ndim, const int64_t *sizes) {
    int64_t st[8];
    int64_t n = contig_strides(ndim, sizes, st);
    return dt_make(d, 0, t, ndim, sizes, st, n, 3);
}
static void *elems(dev_tensor *d) { return (char *)d->host + (d->t.data - d->base); }
static int64_t numel_of(const dev_tensor *d) {
    int64_t n = 1;
    for (int i = 0; i < d->t.ndim; i++)
        n *= d->t.sizes[i];
    return n;
}
static void fill(dev_tensor *d) {
    for (int64_t i = 0; i < numel_of(d); i++)
        host_set(d->t.dtype, elems(d), i, urand());
    dt_upload(d, 0);
}
static double at(dev_tensor *d, int64_t i) { return host_get(d->t.dtype, elems(d), i); }
static void release(dev_tensor *d) {
    tocl_mem_free(d->base);
    free(d->host);
}

/* One case: B 2, Hq 4, Hk 2, head dim D (= Dv). */
static void run_case(tocl_dtype t, int64_t L, int64_t S, int64_t D, int causal, int masked) {
    const int64_t B = 2, Hq = 4, Hk = 2, rep = Hq / Hk;
    int64_t qs[4] = {B, Hq, L, D}, ks[4] = {B, Hk, S, D}, ms[4] = {B, Hq, L, S}, ls[3] = {B, Hq, L};
    tocl_dtype at_ = t == TOCL_F64 ? TOCL_F64 : TOCL_F32;
    dev_tensor q, k, v, m, o, lse, g, dq, dk, dv, dl;
    int ok = dense(&q, t, 4, qs) && dense(&k, t, 4, ks) && dense(&v, t, 4, ks) && dense(&m, t, 4, ms) &&
             dense(&o, t, 4, qs) && dense(&lse, at_, 3, ls) && dense(&g, t, 4, qs) && dense(&dq, t, 4, qs) &&
             dense(&dk, t, 4, ks) && dense(&dv, t, 4, ks) && dense(&dl, at_, 3, ls);
    CHECK(ok);
    if (!ok)
        return;
    fill(&q), fill(&k), fill(&v), fill(&m), fill(&g);
    tocl_attn_desc desc = {.scale = 0.7, .causal = causal};
    const tocl_tensor *mp = masked ? &m.t : NULL;
    CHECK_OK(tocl_attn_forward(0, 0, &desc, &q.t, &k.t, &v.t, mp, &o.t, &lse.t));
    CHECK_OK(tocl_attn_backward(0, 0, &desc, &q.t, &k.t, &v.t, mp, &o.t, &lse.t, &g.t, &dq.t, &dk.t, &dv.t, &dl.t));
    dt_download(&o, 0), dt_download(&lse, 0), dt_download(&dq, 0), dt_download(&dk, 0), dt_download(&dv, 0);
    double *p = calloc((size_t)(L * S), sizeof(double)), *dp = calloc((size_t)(L * S), sizeof(double));
    double *rdk = calloc((size_t)(B * Hk * S * D), sizeof(double)), *rdv = calloc((size_t)(B * Hk * S * D), sizeof(double));
    double err = 0, gerr = 0;
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hq; h++) {
            int64_t qb = (b * Hq + h) * L * D, kb = (b * Hk + h / rep) * S * D, mb = (b * Hq + h) * L * S;
            for (int64_t i = 0; i < L; i++) {
                double mx = -INFINITY, s = 0, rowdot = 0;
                for (int64_t j = 0; j < S; j++) {
                    double x = -INFINITY;
                    if (!(causal && j > i)) {
                        x = masked ? at(&m, mb + i * S + j) : 0;
                        for (int64_t d = 0; d < D; d++)
                            x += 0.7 * at(&q, qb + i * D + d) * at(&k, kb + j * D + d);
                    }
                    p[i * S + j] = x;
                    mx = fmax(mx, x);
                }
                for (int64_t j = 0; j < S; j++)
                    s += p[i * S + j] = exp(p[i * S + j] - mx);
                for (int64_t j = 0; j < S; j++)
                    p[i * S + j] /= s;
                err = fmax(err, fabs(at(&lse, (b * Hq + h) * L + i) - (mx + log(s))));
                for (int64_t d = 0; d < D; d++) {
                    double want = 0;
                    for (int64_t j = 0; j < S; j++)
                        want += p[i * S + j] * at(&v, kb + j * D + d);
                    err = fmax(err, fabs(at(&o, qb + i * D + d) - want));
                    rowdot += want * at(&g, qb + i * D + d);
                }
                for (int64_t j = 0; j < S; j++) {
                    double gp = 0;
                    for (int64_t d = 0; d < D; d++)
                        gp += at(&g, qb + i * D + d) * at(&v, kb + j * D + d);
                    dp[i * S + j] = p[i * S + j] * (gp - rowdot); /* dS */
                }
            }
            for (int64_t i = 0; i < L; i++)
                for (int64_t d = 0; d < D; d++) {
                    double want = 0;
                    for (int64_t j = 0; j < S; j++)
                        want += 0.7 * dp[i * S + j] * at(&k, kb + j * D + d);
                    gerr = fmax(gerr, fabs(at(&dq, qb + i * D + d) - want));
                }
            for (int64_t j = 0; j < S; j++)
                for (int64_t d = 0; d < D; d++)
                    for (int64_t i = 0; i < L; i++) {
                        rdk[kb + j * D + d] += 0.7 * dp[i * S + j] * at(&q, qb + i * D + d);
                        rdv[kb + j * D + d] += p[i * S + j] * at(&g, qb + i * D + d);
                    }
        }
    for (int64_t e = 0; e < B * Hk * S * D; e++)
        gerr = fmax(gerr, fmax(fabs(at(&dk, e) - rdk[e]), fabs(at(&dv, e) - rdv[e])));
    double tol = t == TOCL_F64 ? 1e-11 : 2e-5;
    CHECK(err < tol && gerr < tol * 4);
    if (!(err < tol && gerr < tol * 4))
        fprintf(stderr, "attention %s L %lld S %lld D %lld causal %d mask %d: err %g grad err %g\n",
                tocl_dtype_name(t), (long long)L, (long long)S, (long long)D, causal, masked, err, gerr);
    free(p), free(dp), free(rdk), free(rdv);
    dev_tensor *all[] = {&q, &k, &v, &m, &o, &lse, &g, &dq, &dk, &dv, &dl};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        release(all[i]);
}

static void test_errors(void) {
    int64_t qs[4] = {1, 3, 4, 8}, ks[4] = {1, 2, 4, 8}, ls[3] = {1, 3, 4};
    dev_tensor q, k, lse;
    CHECK(dense(&q, TOCL_F32, 4, qs) && dense(&k, TOCL_F32, 4, ks) && dense(&lse, TOCL_F32, 3, ls));
    tocl_attn_desc d = {.scale = 1};
    /* 3 query heads cannot share 2 key heads */
    CHECK_STATUS(tocl_attn_forward(0, 0, &d, &q.t, &k.t, &k.t, NULL, &q.t, &lse.t), TOCL_E_INVALID);
    CHECK(strstr(tocl_last_error(), "multiple of key heads") != NULL);
    CHECK(!tocl_attn_supported(0, TOCL_I32, 8, 8));
    CHECK(!tocl_attn_supported(0, TOCL_F32, 257, 8));
    release(&q), release(&k), release(&lse);
}

int main(void) {
    if (tocl_device_count() < 1) {
        printf("no device; skipped\n");
        return 0;
    }
    run_case(TOCL_F32, 7, 45, 16, 0, 1);
    run_case(TOCL_F32, 70, 33, 8, 1, 0);
    run_case(TOCL_F32, 33, 70, 64, 1, 1);
    /* float32 without a mask takes the one-kernel route on a CPU: tiles of
     * 32 rows and steps of 8 keys with ragged ends, L above and below S */
    run_case(TOCL_F32, 45, 7, 16, 0, 0);
    run_case(TOCL_F32, 33, 70, 24, 1, 0);
    run_case(TOCL_F32, 64, 64, 40, 1, 0);
    if (tocl_attn_supported(0, TOCL_F64, 8, 8))
        run_case(TOCL_F64, 40, 40, 8, 1, 1);
    test_errors();
    TOCL_TEST_END();
}
