/* test_paged_attention.c - tocl_paged_cache_write and tocl_paged_attention
 * through the C API against a double host reference: three sequences (a
 * chunked prefill, a decode, a prefill) in one call, a shuffled block
 * table, grouped-query heads, a sliding window, and argument errors. */
#include "test_ew_util.h"
#include "tocl/attention.h"

enum { NSEQ = 3, HQ = 4, HK = 2, D = 8, BS = 4, NBLK = 8, MAXB = 3 };
static const int qlen[NSEQ] = {3, 1, 2}, kvlen[NSEQ] = {5, 9, 2};
static const int table[NSEQ][MAXB] = {{6, 1, -1}, {3, 0, 7}, {4, -1, -1}};

static uint32_t seed = 4242;
static double urand(void) {
    seed = seed * 1664525u + 1013904223u;
    return ((seed >> 8) / 16777216.0) * 2 - 1;
}

static int dense(dev_tensor *d, tocl_dtype t, int ndim, const int64_t *sizes) {
    int64_t st[8];
    return dt_make(d, 0, t, ndim, sizes, st, contig_strides(ndim, sizes, st), 2);
}
static void *elems(dev_tensor *d) { return (char *)d->host + (d->t.data - d->base); }
static double at(dev_tensor *d, int64_t i) { return host_get(d->t.dtype, elems(d), i); }
static void put(dev_tensor *d, int64_t i, double v) { host_set(d->t.dtype, elems(d), i, v); }
static void release(dev_tensor *d) {
    tocl_mem_free(d->base);
    free(d->host);
}

static void run_case(int64_t window) {
    int T = 0, KT = 0;
    for (int n = 0; n < NSEQ; n++)
        T += qlen[n], KT += kvlen[n];
    int64_t ks[3] = {KT, HK, D}, cs[4] = {NBLK, BS, HK, D}, qs[3] = {T, HQ, D}, ss[1] = {KT}, bs[2] = {NSEQ, MAXB};
    int64_t cus[1] = {NSEQ + 1}, ls[1] = {NSEQ};
    dev_tensor k, v, kc, vc, q, o, slots, bt, cu, lens;
    int ok = dense(&k, TOCL_F32, 3, ks) && dense(&v, TOCL_F32, 3, ks) && dense(&kc, TOCL_F32, 4, cs) &&
             dense(&vc, TOCL_F32, 4, cs) && dense(&q, TOCL_F32, 3, qs) && dense(&o, TOCL_F32, 3, qs) &&
             dense(&slots, TOCL_I64, 1, ss) && dense(&bt, TOCL_I32, 2, bs) && dense(&cu, TOCL_I32, 1, cus) &&
             dense(&lens, TOCL_I32, 1, ls);
    CHECK(ok);
    if (!ok)
        return;
    /* every cached token of every sequence, written through its slot */
    int tok = 0, c = 0;
    for (int n = 0; n < NSEQ; n++) {
        put(&cu, n, c);
        c += qlen[n];
        put(&lens, n, kvlen[n]);
        for (int b = 0; b < MAXB; b++)
            put(&bt, n * MAXB + b, table[n][b]);
        for (int j = 0; j < kvlen[n]; j++, tok++)
            put(&slots, tok, table[n][j / BS] * BS + j % BS);
    }
    put(&cu, NSEQ, c);
    for (int64_t i = 0; i < KT * HK * D; i++)
        put(&k, i, urand()), put(&v, i, urand());
    for (int64_t i = 0; i < T * HQ * D; i++)
        put(&q, i, urand());
    dev_tensor *up[] = {&k, &v, &kc, &vc, &q, &slots, &bt, &cu, &lens};
    for (size_t i = 0; i < sizeof up / sizeof *up; i++)
        dt_upload(up[i], 0);
    CHECK_OK(tocl_paged_cache_write(0, 0, &k.t, &v.t, &kc.t, &vc.t, &slots.t));
    tocl_paged_desc desc = {.scale = 0.35, .causal = 1, .window = window};
    CHECK_OK(tocl_paged_attention(0, 0, &desc, &q.t, &kc.t, &vc.t, &bt.t, &cu.t, &lens.t, &o.t));
    dt_download(&o, 0);
    double err = 0;
    int t = 0, kbase = 0;
    for (int n = 0; n < NSEQ; n++) {
        for (int i = 0; i < qlen[n]; i++, t++) {
            int pos = kvlen[n] - qlen[n] + i, lo = window > 0 && pos - window + 1 > 0 ? pos - (int)window + 1 : 0;
            for (int h = 0; h < HQ; h++) {
                int hk = h / (HQ / HK);
                double s[16], mx = -INFINITY, sum = 0;
                for (int j = lo; j <= pos; j++) {
                    double x = 0;
                    for (int d = 0; d < D; d++)
                        x += 0.35 * at(&q, ((int64_t)t * HQ + h) * D + d) * at(&k, ((int64_t)(kbase + j) * HK + hk) * D + d);
                    s[j] = x, mx = fmax(mx, x);
                }
                for (int j = lo; j <= pos; j++)
                    sum += s[j] = exp(s[j] - mx);
                for (int d = 0; d < D; d++) {
                    double want = 0;
                    for (int j = lo; j <= pos; j++)
                        want += s[j] / sum * at(&v, ((int64_t)(kbase + j) * HK + hk) * D + d);
                    err = fmax(err, fabs(at(&o, ((int64_t)t * HQ + h) * D + d) - want));
                }
            }
        }
        kbase += kvlen[n];
    }
    if (err > 1e-5)
        fprintf(stderr, "paged attention (window %lld): max error %g\n", (long long)window, err);
    CHECK(err <= 1e-5);
    /* query heads must be a multiple of kv heads */
    q.t.sizes[1] = 3, q.t.strides[0] = 3 * D;
    CHECK(tocl_paged_attention(0, 0, &desc, &q.t, &kc.t, &vc.t, &bt.t, &cu.t, &lens.t, &o.t) == TOCL_E_INVALID);
    for (size_t i = 0; i < sizeof up / sizeof *up; i++)
        release(up[i]);
    release(&o);
}

int main(void) {
    if (tocl_device_count() < 1) {
        printf("no device; skipped\n");
        return 0;
    }
    run_case(0);
    run_case(3);
    TOCL_TEST_END();
}
