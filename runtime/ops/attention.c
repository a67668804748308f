/* attention.c - host side of scaled dot-product attention: operand checks,
 * the route (flash kernels of kernels/attention.cl, or matrix products in
 * attention_gemm.c), and the flash kernels' choice and launches.
 * Kernels are specialised on dtype and on a head-dim bucket (64/128/256,
 * which fixes private and local array sizes), never on sizes. */
#include <stdio.h>
#include <string.h>

#include "ops/attention_internal.h"

int tocl_attn_supported(int dev, tocl_dtype dtype, int64_t head_dim, int64_t v_head_dim) {
    if (tocl_device_check(dev) != TOCL_OK)
        return 0;
    if (head_dim < 1 || head_dim > TOCL_ATT_DMAX || v_head_dim < 1 || v_head_dim > TOCL_ATT_DMAX)
        return 0;
    switch (dtype) {
    case TOCL_F32: case TOCL_F16: case TOCL_BF16: return 1;
    case TOCL_F64: return tocl_dev_props(dev)->has_fp64;
    default: return 0;
    }
}

/* One operand: 4-D with the expected sizes, on dev's context. */
static tocl_status att_operand(int dev, const tocl_tensor *t, const char *what, tocl_dtype dt, const int64_t *sizes,
                               int nd, cl_mem *buf, cl_long *off) {
    if (!t)
        return tocl_fail(TOCL_E_INVALID, "attention: %s is missing", what);
    TOCL_TRY(tocl_ops_check_tensor(t, what));
    if (t->ndim != nd)
        return tocl_fail(TOCL_E_INVALID, "attention: %s must be %d-D, got %d-D", what, nd, t->ndim);
    for (int d = 0; d < nd; d++)
        if (t->sizes[d] != sizes[d])
            return tocl_fail(TOCL_E_INVALID, "attention: %s has size %lld in dim %d, expected %lld", what,
                             (long long)t->sizes[d], d, (long long)sizes[d]);
    if (t->dtype != dt)
        return tocl_fail(TOCL_E_INVALID, "attention: %s has dtype %s, expected %s", what, tocl_dtype_name(t->dtype),
                         tocl_dtype_name(dt));
    int mdev;
    return tocl_ops_resolve(dev, t, what, 0, buf, off, &mdev);
}

static void att_strides(int64_t *dst, const tocl_tensor *t) {
    for (int d = 0; d < 4; d++)
        dst[d] = t->strides[d];
}

typedef tocl_att_ctx att_ctx;

/* Sizes, strides and buffers shared by forward and backward. */
static tocl_status att_setup(int dev, const tocl_attn_desc *desc, const tocl_tensor *q, const tocl_tensor *k,
                             const tocl_tensor *v, const tocl_tensor *mask, att_ctx *c) {
    TOCL_TRY(tocl_device_check(dev));
    if (!desc || !q || !k || !v)
        return tocl_fail(TOCL_E_INVALID, "attention: descriptor, q, k and v are required");
    if (q->ndim != 4 || k->ndim != 4 || v->ndim != 4)
        return tocl_fail(TOCL_E_INVALID, "attention: q, k and v must be 4-D (batch, heads, sequence, head dim)");
    memset(c, 0, sizeof *c);
    tocl_att_params *p = &c->p;
    p->B = q->sizes[0], p->Hq = q->sizes[1], p->L = q->sizes[2], p->D = q->sizes[3];
    p->Hk = k->sizes[1], p->S = k->sizes[2], p->Dv = v->sizes[3];
    if (p->Hk < 1 || p->Hq % p->Hk)
        return tocl_fail(TOCL_E_INVALID, "attention: query heads (%lld) must be a multiple of key heads (%lld)",
                         (long long)p->Hq, (long long)p->Hk);
    c->dt = q->dtype;
    c->acc_dt = q->dtype == TOCL_F64 ? TOCL_F64 : TOCL_F32;
    if (!tocl_attn_supported(dev, c->dt, p->D, p->Dv))
        return tocl_fail(TOCL_E_UNSUPPORTED, "attention: dtype %s with head dims %lld/%lld is not supported on "
                         "device %d (floating dtypes, head dims 1..%d)", tocl_dtype_name(c->dt), (long long)p->D,
                         (long long)p->Dv, dev, TOCL_ATT_DMAX);
    int64_t ks[4] = {p->B, p->Hk, p->S, p->D}, vs[4] = {p->B, p->Hk, p->S, p->Dv};
    cl_long off;
    TOCL_TRY(att_operand(dev, q, "query", c->dt, q->sizes, 4, &c->q, &off));
    p->q_off = off;
    TOCL_TRY(att_operand(dev, k, "key", c->dt, ks, 4, &c->k, &off));
    p->k_off = off;
    TOCL_TRY(att_operand(dev, v, "value", c->dt, vs, 4, &c->v, &off));
    p->v_off = off;
    att_strides(p->qs, q), att_strides(p->ks, k), att_strides(p->vs, v);
    c->m = c->q; /* never read without a mask, but the argument needs a buffer */
    if (mask) {
        int64_t ms[4] = {p->B, p->Hq, p->L, p->S};
        TOCL_TRY(att_operand(dev, mask, "attn_mask", c->dt, ms, 4, &c->m, &off));
        p->m_off = off;
        att_strides(p->ms, mask);
        p->has_mask = 1;
    }
    p->scale = desc->scale;
    p->scalef = (float)desc->scale;
    p->causal = desc->causal != 0;
    return TOCL_OK;
}

/* The route: matrix products (attention_gemm.c) on CPU devices, where the
 * GEMM family's register-blocked kernel runs far ahead of the flash
 * kernels' one row per work-item (docs/design.md, "Attention on CPU
 * devices"); the flash kernels elsewhere (GPUs: local memory, no L x S
 * scratch). Tiny calls (L = S = 16) ran 0.25 ms faster on the flash
 * kernels here, not worth their program build (~7 s per kernel on PoCL).
 * TORCH_OCL_ATTENTION=flash|gemm forces one (tests, benchmarks). */
static int att_use_gemm(int dev) {
    const char *v = tocl_env("TORCH_OCL_ATTENTION");
    if (v && !strcmp(v, "gemm"))
        return 1;
    if (v && !strcmp(v, "flash"))
        return 0;
    return tocl_dev_props(dev)->kind == TOCL_DEVICE_CPU;
}

/* The forward in one kernel and the backward in two (kernels/attention_cpu.cl)
 * on a CPU device: float32, float16 and bfloat16 storage (float64 keeps the
 * route by matrix products). They measured faster than that route at every
 * benchmark shape (docs/design.md). TORCH_OCL_ATTENTION=fused forces it where the dtype
 * allows; =gemm or =flash take the other routes. */
#define ATT_CPU_QT 32 /* query rows (keys in the backward's kv kernel) per work-item: QT of the kernels */
#define ATT_CPU_KR 8  /* keys (queries) per step: KR of the kernels */
static int att_use_fused_cpu(int dev, tocl_dtype dt) {
    if (dt != TOCL_F32 && dt != TOCL_F16 && dt != TOCL_BF16)
        return 0;
    const char *v = tocl_env("TORCH_OCL_ATTENTION");
    if (v)
        return !strcmp(v, "fused");
    return tocl_dev_props(dev)->kind == TOCL_DEVICE_CPU;
}

/* The one-row kernel (att_cpu_row): at most ATT_ROW_MAX_L query rows (a
 * decoding step), q, k and v contiguous along the head dimension, D and Dv
 * multiples of 8 up to 256. One row alone used one lane in 32 of the tiled
 * kernel: 4 heads x 41 keys x 64 took 16 us. TORCH_OCL_ATTENTION_ROWS=0
 * turns it off. */
#define ATT_ROW_MAX_L 4
/* The one-row kernel's sizes and dtype (its operands' strides aside). */
static int att_row_fits(int dev, tocl_dtype dt, int64_t L, int64_t D, int64_t Dv) {
    return att_use_fused_cpu(dev, dt) && L <= ATT_ROW_MAX_L && D % 8 == 0 && Dv % 8 == 0 && D <= 256 &&
           Dv <= 256 && D > 0 && Dv > 0 && !tocl_env_off("TORCH_OCL_ATTENTION_ROWS");
}

static int att_row_usable(int dev, const att_ctx *c) {
    const tocl_att_params *p = &c->p;
    return att_row_fits(dev, c->dt, p->L, p->D, p->Dv) && p->qs[3] == 1 && p->ks[3] == 1 && p->vs[3] == 1;
}

/* Kernel `name` of kernels/attention_cpu.cl for storage dtype dt. */
static tocl_status att_cpu_kernel(int dev, tocl_dtype dt, const char *name, tocl_ops_kernel **k) {
    char opts[1024];
    TOCL_TRY(tocl_nn_options(dev, "X", &dt, 0, opts, sizeof opts));
    return tocl_ops_kernel_get(dev, "attention_cpu", name, opts, k);
}

int tocl_attn_forward_in_place(int dev, tocl_dtype dtype) {
    return tocl_device_check(dev) == TOCL_OK && (att_use_fused_cpu(dev, dtype) || !att_use_gemm(dev));
}

/* The kernel `name` for c's dtypes; *tile receives its group size. */
static tocl_status att_kernel(int dev, const att_ctx *c, const char *name, tocl_ops_kernel **k, size_t *tile) {
    int64_t dmax = c->p.D > c->p.Dv ? c->p.D : c->p.Dv;
    int dm = dmax <= 64 ? 64 : dmax <= 128 ? 128 : TOCL_ATT_DMAX;
    /* two tiles of [T, dm] accumulators must fit in local memory with room to spare */
    size_t acc = c->acc_dt == TOCL_F64 ? 8 : 4, lmem = tocl_dev_props(dev)->local_mem_bytes;
    size_t t = 32;
    while (t > 4 && 2 * t * (size_t)dm * acc + 2 * t * acc > lmem / 2)
        t >>= 1;
    tocl_dtype dts[2] = {c->dt, c->acc_dt};
    char opts[1024];
    TOCL_TRY(tocl_nn_options(dev, "XY", dts, 0, opts, sizeof opts - 64));
    size_t len = strlen(opts);
    snprintf(opts + len, sizeof opts - len, " -DATT_T=%zu -DATT_DM=%d", t, dm);
    TOCL_TRY(tocl_ops_kernel_get(dev, "attention", name, opts, k));
    if (tocl_ops_kernel_max_group(dev, *k) < t)
        return tocl_fail(TOCL_E_UNSUPPORTED, "attention: kernel %s allows groups of %zu work-items, needs %zu", name,
                         tocl_ops_kernel_max_group(dev, *k), t);
    *tile = t;
    return TOCL_OK;
}

static tocl_status att_launch(int dev, int stream, tocl_ops_kernel *k, size_t tile, int64_t rows, int64_t groups,
                              const tocl_ops_arg *a, int n) {
    size_t global[2] = {(size_t)((rows + (int64_t)tile - 1) / (int64_t)tile) * tile, (size_t)groups};
    size_t local[2] = {tile, 1};
    return tocl_ops_launch(dev, stream, k, 2, global, local, a, n);
}

tocl_status tocl_attn_forward(int dev, int stream, const tocl_attn_desc *d, const tocl_tensor *q,
                              const tocl_tensor *k, const tocl_tensor *v, const tocl_tensor *mask,
                              const tocl_tensor *out, const tocl_tensor *lse) {
    att_ctx c;
    TOCL_TRY(att_setup(dev, d, q, k, v, mask, &c));
    tocl_att_params *p = &c.p;
    int64_t os[4] = {p->B, p->Hq, p->L, p->Dv}, ls[3] = {p->B, p->Hq, p->L};
    cl_mem bo, bl;
    cl_long off;
    TOCL_TRY(att_operand(dev, out, "output", c.dt, os, 4, &bo, &off));
    p->o_off = off;
    att_strides(p->os, out);
    TOCL_TRY(att_operand(dev, lse, "logsumexp", c.acc_dt, ls, 3, &bl, &off));
    if (!tocl_ops_is_contiguous(lse))
        return tocl_fail(TOCL_E_INVALID, "attention: logsumexp must be contiguous");
    p->lse_off = off;
    if (p->B * p->Hq * p->L == 0)
        return TOCL_OK;
    if (p->S == 0)
        return tocl_fail(TOCL_E_INVALID, "attention: key sequence is empty");
    if (att_row_usable(dev, &c)) {
        tocl_ops_kernel *kern;
        TOCL_TRY(att_cpu_kernel(dev, c.dt, "att_cpu_row", &kern));
        size_t global[3] = {(size_t)p->L, (size_t)p->Hq, (size_t)p->B}, local[3] = {1, 1, 1};
        tocl_ops_arg a[] = {{sizeof(cl_mem), &c.q}, {sizeof(cl_mem), &c.k}, {sizeof(cl_mem), &c.v},
                            {sizeof(cl_mem), &c.m}, {sizeof bo, &bo},       {sizeof bl, &bl},
                            {sizeof *p, p}};
        return tocl_ops_launch(dev, stream, kern, 3, global, local, a, 7);
    }
    if (att_use_fused_cpu(dev, c.dt)) {
        tocl_ops_kernel *kern;
        TOCL_TRY(att_cpu_kernel(dev, c.dt, "att_cpu_fwd", &kern));
        size_t global[3] = {(size_t)((p->L + ATT_CPU_QT - 1) / ATT_CPU_QT), (size_t)p->Hq, (size_t)p->B};
        size_t local[3] = {1, 1, 1};
        tocl_ops_arg a[] = {{sizeof(cl_mem), &c.q}, {sizeof(cl_mem), &c.k},
                            {sizeof(cl_mem), &c.v}, {sizeof(cl_mem), &c.m},
                            {sizeof bo, &bo},       {sizeof bl, &bl},
                            {sizeof *p, p},         {(size_t)p->D * ATT_CPU_QT * sizeof(float), NULL},
                            {(size_t)p->Dv * ATT_CPU_QT * sizeof(float), NULL}};
        return tocl_ops_launch(dev, stream, kern, 3, global, local, a, 9);
    }
    if (att_use_gemm(dev)) {
        const tocl_tensor *t[4] = {q, k, v, out};
        return tocl_att_gemm_forward(dev, stream, &c, t, bl);
    }
    tocl_ops_kernel *kern;
    size_t tile;
    TOCL_TRY(att_kernel(dev, &c, "att_fwd", &kern, &tile));
    tocl_ops_arg a[] = {{sizeof(cl_mem), &c.q}, {sizeof(cl_mem), &c.k}, {sizeof(cl_mem), &c.v},
                        {sizeof(cl_mem), &c.m}, {sizeof bo, &bo},       {sizeof bl, &bl},
                        {sizeof *p, p}};
    return att_launch(dev, stream, kern, tile, p->L, p->B * p->Hq, a, 7);
}

/* A 4-D operand of dtype dt contiguous along its last dim (what the row
 * kernel reads 8 at a time). */
static int att_row_operand(const tocl_tensor *t, tocl_dtype dt) {
    return t && t->ndim == 4 && t->dtype == dt && (t->sizes[3] <= 1 || t->strides[3] == 1);
}

int tocl_attn_append_usable(int dev, const tocl_tensor *q, const tocl_tensor *k_cache, const tocl_tensor *k_new,
                            const tocl_tensor *v_cache, const tocl_tensor *v_new) {
    if (tocl_device_check(dev) != TOCL_OK || !q || tocl_env_off("TORCH_OCL_ATTENTION_APPEND"))
        return 0;
    const tocl_tensor *t[5] = {q, k_cache, k_new, v_cache, v_new};
    for (int i = 0; i < 5; i++)
        if (!att_row_operand(t[i], q->dtype))
            return 0;
    int64_t B = q->sizes[0], Hq = q->sizes[1], L = q->sizes[2], D = q->sizes[3], Hk = k_cache->sizes[1];
    int64_t Dv = v_cache->sizes[3];
    for (int i = 1; i < 5; i++)
        if (t[i]->sizes[0] != B || t[i]->sizes[1] != Hk || t[i]->sizes[3] != (i < 3 ? D : Dv))
            return 0;
    return att_row_fits(dev, q->dtype, L, D, Dv) && B > 0 && Hq > 0 && Hk > 0 && Hq % Hk == 0 && L >= 1 &&
           k_cache->sizes[2] == v_cache->sizes[2] && k_new->sizes[2] == v_new->sizes[2] && k_cache->sizes[2] > 0 &&
           k_new->sizes[2] > 0;
}

tocl_status tocl_attn_forward_append(int dev, int stream, const tocl_attn_desc *d, const tocl_tensor *q,
                                     const tocl_tensor *k_cache, const tocl_tensor *k_new,
                                     const tocl_tensor *v_cache, const tocl_tensor *v_new, const tocl_tensor *out,
                                     const tocl_tensor *lse, const tocl_tensor *k_out, const tocl_tensor *v_out) {
    if (!tocl_attn_append_usable(dev, q, k_cache, k_new, v_cache, v_new) || !att_row_operand(k_out, q->dtype) ||
        !att_row_operand(v_out, q->dtype))
        return tocl_fail(TOCL_E_UNSUPPORTED, "attention append: needs the one-row kernel's case (a CPU device, "
                         "float32/float16/bfloat16, 1..%d query rows, head dims multiples of 8 up to 256, operands "
                         "and results contiguous along the head dim; see tocl_attn_append_usable)", ATT_ROW_MAX_L);
    att_ctx c;
    TOCL_TRY(att_setup(dev, d, q, k_cache, v_cache, NULL, &c));
    tocl_att_params *p = &c.p;
    tocl_att_append a;
    memset(&a, 0, sizeof a);
    a.Sc = p->S;
    p->S += k_new->sizes[2];
    int64_t os[4] = {p->B, p->Hq, p->L, p->Dv}, ls[3] = {p->B, p->Hq, p->L};
    int64_t kn[4] = {p->B, p->Hk, p->S - a.Sc, p->D}, vn[4] = {p->B, p->Hk, p->S - a.Sc, p->Dv};
    int64_t ko[4] = {p->B, p->Hk, p->S, p->D}, vo[4] = {p->B, p->Hk, p->S, p->Dv};
    cl_mem bo, bl, bkn, bvn, bko, bvo;
    cl_long off;
    TOCL_TRY(att_operand(dev, out, "output", c.dt, os, 4, &bo, &off));
    p->o_off = off, att_strides(p->os, out);
    TOCL_TRY(att_operand(dev, lse, "logsumexp", c.acc_dt, ls, 3, &bl, &off));
    if (!tocl_ops_is_contiguous(lse))
        return tocl_fail(TOCL_E_INVALID, "attention: logsumexp must be contiguous");
    p->lse_off = off;
    TOCL_TRY(att_operand(dev, k_new, "new keys", c.dt, kn, 4, &bkn, &off));
    a.kn_off = off, att_strides(a.kns, k_new);
    TOCL_TRY(att_operand(dev, v_new, "new values", c.dt, vn, 4, &bvn, &off));
    a.vn_off = off, att_strides(a.vns, v_new);
    TOCL_TRY(att_operand(dev, k_out, "appended keys", c.dt, ko, 4, &bko, &off));
    a.ko_off = off, att_strides(a.kos, k_out);
    TOCL_TRY(att_operand(dev, v_out, "appended values", c.dt, vo, 4, &bvo, &off));
    a.vo_off = off, att_strides(a.vos, v_out);
    tocl_ops_kernel *kern;
    TOCL_TRY(att_cpu_kernel(dev, c.dt, "att_cpu_row_append", &kern));
    size_t global[3] = {(size_t)p->L, (size_t)p->Hq, (size_t)p->B}, local[3] = {1, 1, 1};
    tocl_ops_arg args[] = {{sizeof(cl_mem), &c.q}, {sizeof(cl_mem), &c.k}, {sizeof(cl_mem), &c.v},
                           {sizeof(cl_mem), &c.m}, {sizeof bo, &bo},       {sizeof bl, &bl},
                           {sizeof *p, p},         {sizeof bkn, &bkn},     {sizeof bvn, &bvn},
                           {sizeof bko, &bko},     {sizeof bvo, &bvo},     {sizeof a, &a}};
    return tocl_ops_launch(dev, stream, kern, 3, global, local, args, 12);
}

tocl_status tocl_attn_backward(int dev, int stream, const tocl_attn_desc *d, const tocl_tensor *q,
                               const tocl_tensor *k, const tocl_tensor *v, const tocl_tensor *mask,
                               const tocl_tensor *out, const tocl_tensor *lse, const tocl_tensor *grad_out,
                               const tocl_tensor *grad_q, const tocl_tensor *grad_k, const tocl_tensor *grad_v,
                               const tocl_tensor *delta) {
    att_ctx c;
    TOCL_TRY(att_setup(dev, d, q, k, v, mask, &c));
    tocl_att_params *p = &c.p;
    int64_t os[4] = {p->B, p->Hq, p->L, p->Dv}, ls[3] = {p->B, p->Hq, p->L};
    int64_t ks[4] = {p->B, p->Hk, p->S, p->D}, vs[4] = {p->B, p->Hk, p->S, p->Dv};
    cl_mem bo, bl, bg, bdq, bdk, bdv, bdl;
    cl_long off;
    TOCL_TRY(att_operand(dev, out, "output", c.dt, os, 4, &bo, &off));
    p->o_off = off, att_strides(p->os, out);
    TOCL_TRY(att_operand(dev, grad_out, "grad_output", c.dt, os, 4, &bg, &off));
    p->g_off = off, att_strides(p->gs, grad_out);
    TOCL_TRY(att_operand(dev, grad_q, "grad_query", c.dt, q->sizes, 4, &bdq, &off));
    p->dq_off = off, att_strides(p->dqs, grad_q);
    TOCL_TRY(att_operand(dev, grad_k, "grad_key", c.dt, ks, 4, &bdk, &off));
    p->dk_off = off, att_strides(p->dks, grad_k);
    TOCL_TRY(att_operand(dev, grad_v, "grad_value", c.dt, vs, 4, &bdv, &off));
    p->dv_off = off, att_strides(p->dvs, grad_v);
    TOCL_TRY(att_operand(dev, lse, "logsumexp", c.acc_dt, ls, 3, &bl, &off));
    p->lse_off = off;
    TOCL_TRY(att_operand(dev, delta, "delta", c.acc_dt, ls, 3, &bdl, &off));
    p->delta_off = off;
    if (!tocl_ops_is_contiguous(lse) || !tocl_ops_is_contiguous(delta))
        return tocl_fail(TOCL_E_INVALID, "attention: logsumexp and delta must be contiguous");
    if (p->B * p->Hq * p->L == 0 || p->S == 0)
        return tocl_fail(TOCL_E_INVALID, "attention backward: empty sequences are for the caller to handle");
    if (att_use_fused_cpu(dev, c.dt)) {
        tocl_ops_kernel *kq, *kkv;
        TOCL_TRY(att_cpu_kernel(dev, c.dt, "att_cpu_bwd_q", &kq));
        TOCL_TRY(att_cpu_kernel(dev, c.dt, "att_cpu_bwd_kv", &kkv));
        size_t qt = (size_t)p->D * ATT_CPU_QT * sizeof(float), vt = (size_t)p->Dv * ATT_CPU_QT * sizeof(float);
        size_t pt = (size_t)ATT_CPU_KR * ATT_CPU_QT * sizeof(float), local[3] = {1, 1, 1};
        size_t gq[3] = {(size_t)((p->L + ATT_CPU_QT - 1) / ATT_CPU_QT), (size_t)p->Hq, (size_t)p->B};
        tocl_ops_arg aq[] = {{sizeof(cl_mem), &c.q}, {sizeof(cl_mem), &c.k}, {sizeof(cl_mem), &c.v},
                             {sizeof(cl_mem), &c.m}, {sizeof bo, &bo},       {sizeof bg, &bg},
                             {sizeof bdq, &bdq},     {sizeof bl, &bl},       {sizeof bdl, &bdl},
                             {sizeof *p, p},         {qt, NULL},             {vt, NULL},
                             {qt, NULL},             {pt, NULL}};
        /* att_cpu_bwd_kv reads the delta att_cpu_bwd_q writes: same in-order stream */
        TOCL_TRY(tocl_ops_launch(dev, stream, kq, 3, gq, local, aq, 14));
        size_t gkv[3] = {(size_t)((p->S + ATT_CPU_QT - 1) / ATT_CPU_QT), (size_t)p->Hk, (size_t)p->B};
        tocl_ops_arg akv[] = {{sizeof(cl_mem), &c.q}, {sizeof(cl_mem), &c.k}, {sizeof(cl_mem), &c.v},
                              {sizeof(cl_mem), &c.m}, {sizeof bg, &bg},       {sizeof bdk, &bdk},
                              {sizeof bdv, &bdv},     {sizeof bl, &bl},       {sizeof bdl, &bdl},
                              {sizeof *p, p},         {qt, NULL},             {vt, NULL},
                              {qt, NULL},             {vt, NULL},             {pt, NULL}};
        return tocl_ops_launch(dev, stream, kkv, 3, gkv, local, akv, 15);
    }
    if (att_use_gemm(dev)) {
        const tocl_tensor *t[8] = {q, k, v, out, grad_out, grad_q, grad_k, grad_v};
        return tocl_att_gemm_backward(dev, stream, &c, t, bl, bdl);
    }
    tocl_ops_kernel *kq, *kkv;
    size_t tile;
    TOCL_TRY(att_kernel(dev, &c, "att_bwd_q", &kq, &tile));
    TOCL_TRY(att_kernel(dev, &c, "att_bwd_kv", &kkv, &tile));
    tocl_ops_arg aq[] = {{sizeof(cl_mem), &c.q}, {sizeof(cl_mem), &c.k}, {sizeof(cl_mem), &c.v},
                         {sizeof(cl_mem), &c.m}, {sizeof bo, &bo},       {sizeof bl, &bl},
                         {sizeof bg, &bg},       {sizeof bdq, &bdq},     {sizeof bdl, &bdl},
                         {sizeof *p, p}};
    /* att_bwd_kv reads the delta att_bwd_q writes: same in-order stream */
    TOCL_TRY(att_launch(dev, stream, kq, tile, p->L, p->B * p->Hq, aq, 10));
    tocl_ops_arg akv[] = {{sizeof(cl_mem), &c.q}, {sizeof(cl_mem), &c.k}, {sizeof(cl_mem), &c.v},
                          {sizeof(cl_mem), &c.m}, {sizeof bl, &bl},       {sizeof bg, &bg},
                          {sizeof bdl, &bdl},     {sizeof bdk, &bdk},     {sizeof bdv, &bdv},
                          {sizeof *p, p}};
    return att_launch(dev, stream, kkv, tile, p->S, p->B * p->Hk, akv, 10);
}
