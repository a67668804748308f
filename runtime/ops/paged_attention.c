/* paged_attention.c - host side of paged attention for serving
 * (kernels/paged_attention.cl): operand checks, kernel choice, launches.
 * Kernels are specialised on dtype and a head-dim bucket (64/128/256, which
 * sizes the private row vectors), never on sizes, sequence counts or block
 * tables: those are arguments, so every step of a server reuses them. */
#include <stdio.h>
#include <string.h>

#include "ops/nn_internal.h"
#include "paged_attention_params.h"
#include "tocl/attention.h"

/* t is nd-D on dev's context with dtype dt (and sizes where want[d] >= 0). */
static tocl_status pa_operand(int dev, const tocl_tensor *t, const char *what, tocl_dtype dt, int nd,
                              const int64_t *want, cl_mem *buf, cl_long *off) {
    if (!t)
        return tocl_fail(TOCL_E_INVALID, "paged attention: %s is missing", what);
    TOCL_TRY(tocl_ops_check_tensor(t, what));
    if (t->ndim != nd)
        return tocl_fail(TOCL_E_INVALID, "paged attention: %s must be %d-D, got %d-D", what, nd, t->ndim);
    for (int d = 0; d < nd; d++)
        if (want && want[d] >= 0 && t->sizes[d] != want[d])
            return tocl_fail(TOCL_E_INVALID, "paged attention: %s has size %lld in dim %d, expected %lld", what,
                             (long long)t->sizes[d], d, (long long)want[d]);
    if (t->dtype != dt)
        return tocl_fail(TOCL_E_INVALID, "paged attention: %s has dtype %s, expected %s", what,
                         tocl_dtype_name(t->dtype), tocl_dtype_name(dt));
    int mdev;
    return tocl_ops_resolve(dev, t, what, 0, buf, off, &mdev);
}

static void pa_strides(int64_t *dst, const tocl_tensor *t) {
    for (int d = 0; d < t->ndim; d++)
        dst[d] = t->strides[d];
}

static tocl_status pa_kernel(int dev, tocl_dtype dt, int64_t D, const char *name, tocl_ops_kernel **k) {
    if (D < 1 || D > TOCL_PA_DMAX)
        return tocl_fail(TOCL_E_UNSUPPORTED, "paged attention: head dim %lld is not in 1..%d", (long long)D,
                         TOCL_PA_DMAX);
    int dm = D <= 64 ? 64 : D <= 128 ? 128 : TOCL_PA_DMAX;
    char opts[1024];
    TOCL_TRY(tocl_nn_options(dev, "X", &dt, 0, opts, sizeof opts - 32));
    size_t len = strlen(opts);
    snprintf(opts + len, sizeof opts - len, " -DPA_DM=%d", dm);
    return tocl_ops_kernel_get(dev, "paged_attention", name, opts, k);
}

/* The caches: same 4-D shape, dtype dt; fills block geometry and strides. */
/* Work-group size: small and fixed. Each pa_attend item walks a whole
 * context, so groups cost nothing to keep small, and a decode step has only
 * sequences x heads items: big groups would leave compute units idle (a CPU
 * runs one group per core). Fixed, because PoCL compiles a kernel anew per
 * local size. */
static size_t pa_local(int dev, tocl_ops_kernel *k, size_t want) {
    size_t kmax = tocl_ops_kernel_max_group(dev, k);
    while (want > kmax && want > 1)
        want >>= 1;
    return want;
}

static tocl_status pa_caches(int dev, const tocl_tensor *kc, const tocl_tensor *vc, tocl_dtype dt, int64_t Hk,
                             int64_t D, tocl_pa_params *p, cl_mem *bk, cl_mem *bv) {
    cl_long off;
    int64_t want[4] = {-1, -1, Hk, D};
    TOCL_TRY(pa_operand(dev, kc, "key_cache", dt, 4, want, bk, &off));
    p->kc_off = off;
    int64_t same[4] = {kc->sizes[0], kc->sizes[1], Hk, D};
    TOCL_TRY(pa_operand(dev, vc, "value_cache", dt, 4, same, bv, &off));
    p->vc_off = off;
    p->nblocks = kc->sizes[0];
    p->block_size = kc->sizes[1];
    if (p->block_size < 1)
        return tocl_fail(TOCL_E_INVALID, "paged attention: block size must be positive");
    pa_strides(p->kcs, kc), pa_strides(p->vcs, vc);
    return TOCL_OK;
}

tocl_status tocl_paged_cache_write(int dev, int stream, const tocl_tensor *key, const tocl_tensor *value,
                                   const tocl_tensor *key_cache, const tocl_tensor *value_cache,
                                   const tocl_tensor *slot_mapping) {
    TOCL_TRY(tocl_device_check(dev));
    if (!key || key->ndim != 3)
        return tocl_fail(TOCL_E_INVALID, "reshape_and_cache: key must be 3-D (tokens, kv heads, head dim)");
    tocl_pa_params p;
    memset(&p, 0, sizeof p);
    p.T = key->sizes[0], p.Hk = key->sizes[1], p.D = key->sizes[2];
    tocl_dtype dt = key->dtype;
    cl_mem bk, bv, bkc, bvc, bs;
    cl_long off;
    TOCL_TRY(pa_operand(dev, key, "key", dt, 3, NULL, &bk, &off));
    p.k_off = off;
    TOCL_TRY(pa_operand(dev, value, "value", dt, 3, key->sizes, &bv, &off));
    p.v_off = off;
    pa_strides(p.ks, key), pa_strides(p.vs, value);
    TOCL_TRY(pa_caches(dev, key_cache, value_cache, dt, p.Hk, p.D, &p, &bkc, &bvc));
    int64_t ns[1] = {p.T};
    TOCL_TRY(pa_operand(dev, slot_mapping, "slot_mapping", TOCL_I64, 1, ns, &bs, &off));
    p.slot_off = off;
    p.slot_s = slot_mapping->strides[0];
    if (p.T * p.Hk == 0)
        return TOCL_OK;
    tocl_ops_kernel *k;
    TOCL_TRY(pa_kernel(dev, dt, p.D, "pa_write", &k));
    size_t local = pa_local(dev, k, 64), n = (size_t)(p.T * p.Hk);
    tocl_ops_arg a[] = {{sizeof bk, &bk}, {sizeof bv, &bv}, {sizeof bkc, &bkc}, {sizeof bvc, &bvc},
                        {sizeof bs, &bs}, {sizeof p, &p}};
    return tocl_nn_launch(dev, stream, k, (n + local - 1) / local * local, local, a, 6);
}

tocl_status tocl_paged_attention(int dev, int stream, const tocl_paged_desc *d, const tocl_tensor *query,
                                 const tocl_tensor *key_cache, const tocl_tensor *value_cache,
                                 const tocl_tensor *block_table, const tocl_tensor *cu_q, const tocl_tensor *kv_len,
                                 const tocl_tensor *out) {
    TOCL_TRY(tocl_device_check(dev));
    if (!d || !query || query->ndim != 3)
        return tocl_fail(TOCL_E_INVALID, "paged_attention: query must be 3-D (tokens, heads, head dim)");
    if (!key_cache || key_cache->ndim != 4)
        return tocl_fail(TOCL_E_INVALID, "paged_attention: key_cache must be 4-D (blocks, block size, kv heads, "
                         "head dim)");
    tocl_pa_params p;
    memset(&p, 0, sizeof p);
    p.T = query->sizes[0], p.Hq = query->sizes[1], p.D = query->sizes[2], p.Hk = key_cache->sizes[2];
    if (p.Hk < 1 || p.Hq % p.Hk)
        return tocl_fail(TOCL_E_INVALID, "paged_attention: query heads (%lld) must be a multiple of kv heads (%lld)",
                         (long long)p.Hq, (long long)p.Hk);
    tocl_dtype dt = query->dtype;
    cl_mem bq, bo, bkc, bvc, bbt, bcu, blen;
    cl_long off;
    TOCL_TRY(pa_operand(dev, query, "query", dt, 3, NULL, &bq, &off));
    p.q_off = off;
    TOCL_TRY(pa_operand(dev, out, "out", dt, 3, query->sizes, &bo, &off));
    p.o_off = off;
    pa_strides(p.qs, query), pa_strides(p.os, out);
    TOCL_TRY(pa_caches(dev, key_cache, value_cache, dt, p.Hk, p.D, &p, &bkc, &bvc));
    if (!block_table || block_table->ndim != 2)
        return tocl_fail(TOCL_E_INVALID, "paged_attention: block_table must be 2-D (sequences, blocks)");
    p.N = block_table->sizes[0], p.max_blocks = block_table->sizes[1];
    TOCL_TRY(pa_operand(dev, block_table, "block_table", TOCL_I32, 2, NULL, &bbt, &off));
    p.bt_off = off;
    pa_strides(p.bts, block_table);
    int64_t ncu[1] = {p.N + 1}, nlen[1] = {p.N};
    TOCL_TRY(pa_operand(dev, cu_q, "cu_seqlens_q", TOCL_I32, 1, ncu, &bcu, &off));
    p.cu_off = off;
    TOCL_TRY(pa_operand(dev, kv_len, "seqlens_k", TOCL_I32, 1, nlen, &blen, &off));
    p.len_off = off;
    if (!tocl_ops_is_contiguous(cu_q) || !tocl_ops_is_contiguous(kv_len))
        return tocl_fail(TOCL_E_INVALID, "paged_attention: cu_seqlens_q and seqlens_k must be contiguous");
    p.scale = (float)d->scale;
    p.causal = d->causal != 0;
    p.window = d->window > 0 ? d->window : 0;
    if (p.T * p.Hq == 0)
        return TOCL_OK;
    if (p.N == 0)
        return tocl_fail(TOCL_E_INVALID, "paged_attention: %lld query tokens but no sequences", (long long)p.T);
    tocl_ops_kernel *k;
    TOCL_TRY(pa_kernel(dev, dt, p.D, "pa_attend", &k));
    size_t local = pa_local(dev, k, 8), n = (size_t)(p.T * p.Hq);
    tocl_ops_arg a[] = {{sizeof bq, &bq},   {sizeof bkc, &bkc}, {sizeof bvc, &bvc}, {sizeof bbt, &bbt},
                        {sizeof bcu, &bcu}, {sizeof blen, &blen}, {sizeof bo, &bo}, {sizeof p, &p}};
    return tocl_nn_launch(dev, stream, k, (n + local - 1) / local * local, local, a, 8);
}
