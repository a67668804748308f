/* attention_gemm.c - scaled dot-product attention by matrix products, the
 * route for CPU devices (attention.c chooses): queries go in blocks; for
 * each block the GEMM family (gemm.c) makes the scores into a scratch
 * block, a row kernel (kernels/attention_rows.cl) turns them into
 * probabilities, and a second GEMM multiplies by V. The backward pass is
 * five GEMMs and one row kernel per block:
 *
 *   S = scale Q K^T    dP = dO V^T    P = exp(S + mask - lse)
 *   dS = P (dP - delta)    dV += P^T dO    dQ = scale dS K    dK += scale dS^T Q
 *
 * Why: on a CPU the flash kernels run one query row per work-item, with
 * dot products of one row at a time; the GEMM's register-blocked macro
 * kernel reuses each loaded value many times and runs 3-6x faster, while
 * the scratch block (bounded, from the caching allocator) costs a few
 * passes over memory that stay in cache. Causal blocks stop at their last
 * visible key, so the masked triangle is mostly never computed.
 *
 * Operands are read in place with their strides. The GEMM's batch walks
 * (batch, kv head) pairs: the batch dim folds into it when every operand's
 * batch stride is heads x head stride (or B = 1), else batch items loop
 * here. Query heads sharing a kv head (GQA) loop here too, so dK and dV
 * accumulate in a fixed order (deterministic, no atomics). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ops/attention_internal.h"
#include "ops/gemm_internal.h"
#include "tocl/gemm.h"

/* Scratch per score block: 8M elements (32 MiB of float32). Blocks are
 * as tall as the caps allow first, since each block repacks K and V for
 * its products (at 64 rows, packing took 40% of L=2048's time); the GEMM
 * batch is then split into chunks that fit. Causal blocks are capped
 * lower: the part of the masked triangle a block still computes grows
 * with its height. */
#define ATT_SCRATCH_ELEMS ((int64_t)1 << 23)
#define ATT_BLOCK_MIN 16
#define ATT_BLOCK_MAX 256
#define ATT_ROWS_LOCAL 64 /* one fixed local size: PoCL compiles per local size */

static int64_t att_block_rows(const tocl_att_params *p) {
    const char *v = tocl_env("TORCH_OCL_ATTENTION_BLOCK");
    int64_t lb = v ? (int64_t)atoll(v) : 0;
    if (lb <= 0) {
        lb = p->causal ? ATT_BLOCK_MAX / 2 : ATT_BLOCK_MAX;
        while (lb > ATT_BLOCK_MIN && lb * p->S > ATT_SCRATCH_ELEMS)
            lb /= 2;
    }
    return lb < p->L ? lb : p->L;
}

/* Whether the batch dim folds into the GEMM batch for tensors t[0..n):
 * the first nq are query-like ([B, Hq, .., ..], batch index (b, hk) at
 * b * s0 + hk * rep * s1), the rest key-like ([B, Hk, .., ..]). */
static int att_folds(const tocl_att_params *p, const tocl_tensor *const *t, int nq, int n) {
    if (p->B == 1)
        return 1;
    for (int i = 0; i < n; i++) {
        int64_t heads = i < nq ? p->Hq : p->Hk;
        if (t[i]->strides[0] != heads * t[i]->strides[1])
            return 0;
    }
    return 1;
}

/* Operand of a GEMM: tensor x at element offset off, strides (bs, rs, cs). */
static tocl_gemm_operand att_op(const tocl_tensor *x, int64_t off, int64_t bs, int64_t rs, int64_t cs) {
    tocl_gemm_operand o = {x->data + (tocl_addr)(off * (int64_t)tocl_dtype_size(x->dtype)), bs, rs, cs};
    return o;
}

/* Query-like tensor x at block k: batch items t0.. of batch b0, head r of
 * each group, rows from i0. */
static tocl_gemm_operand att_qop(const tocl_att_params *p, const tocl_tensor *x, const tocl_att_block *k,
                                 int transpose) {
    const int64_t *s = x->strides;
    int64_t bs = p->Hq / p->Hk * s[1], off = k->b0 * s[0] + k->t0 * bs + k->r * s[1] + k->i0 * s[2];
    return transpose ? att_op(x, off, bs, s[3], s[2]) : att_op(x, off, bs, s[2], s[3]);
}

/* Key-like tensor x at block k (rows are keys). */
static tocl_gemm_operand att_kop(const tocl_tensor *x, const tocl_att_block *k, int transpose) {
    const int64_t *s = x->strides;
    int64_t off = k->b0 * s[0] + k->t0 * s[1];
    return transpose ? att_op(x, off, s[1], s[3], s[2]) : att_op(x, off, s[1], s[2], s[3]);
}

/* Scratch block at element offset off: [nb, rows, n] dense, or its transpose. */
static tocl_gemm_operand att_sop(tocl_addr ws, size_t esz, int64_t off, int64_t rows, int64_t n, int transpose) {
    tocl_gemm_operand o = {ws + (tocl_addr)(off * (int64_t)esz), rows * n, transpose ? 1 : n, transpose ? n : 1};
    return o;
}

static tocl_status att_gemm(int dev, int stream, tocl_dtype dt, int64_t nb, int64_t M, int64_t N, int64_t K,
                            double alpha, int accumulate, tocl_gemm_operand a, tocl_gemm_operand b,
                            tocl_gemm_operand c) {
    tocl_gemm_desc g = tocl_gemm_desc_init(dt, M, N, K);
    g.batch = nb, g.alpha = alpha;
    g.a = a, g.b = b, g.c = c;
    if (accumulate)
        g.d = c, g.beta = 1.0;
    return tocl_gemm(dev, stream, &g);
}

/* Scratch of `elems` accumulation-type elements for this call (freed by the
 * caller after its launches are queued: the allocator reuses a block only
 * after the queued work is done). */
typedef struct att_scratch {
    tocl_addr addr;
    cl_mem buf;
    int64_t off; /* element offset of addr in buf */
} att_scratch;

static tocl_status att_scratch_get(int dev, int stream, const tocl_att_ctx *c, int64_t elems, att_scratch *w) {
    tocl_ops_scratch s;
    memset(w, 0, sizeof *w);
    TOCL_TRY(tocl_ops_scratch_get(dev, stream, elems, tocl_dtype_size(c->acc_dt), &s));
    w->addr = s.addr, w->buf = s.buf, w->off = (int64_t)s.off;
    return TOCL_OK;
}

/* The blocks of one call, in launch order: batch items looped here, chunks
 * of the GEMM batch, query heads of a group, query blocks. */
typedef struct att_walk {
    int64_t ntot, chunk, lb, nbatch; /* GEMM batch, its chunk, block rows, batch items looped here */
    tocl_att_block bk;
} att_walk;

static tocl_status att_rows_kernel(int dev, const tocl_att_ctx *c, const char *name, tocl_ops_kernel **k) {
    tocl_dtype dts[2] = {c->dt, c->acc_dt};
    char opts[1024];
    TOCL_TRY(tocl_nn_options(dev, "XY", dts, 0, opts, sizeof opts));
    return tocl_ops_kernel_get(dev, "attention_rows", name, opts, k);
}

static int64_t att_round(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* Operands packed once per (batch item, chunk of the GEMM batch) instead
 * of once per block (CPU devices): K for S = Q K^T and V for O = P V, in
 * the GEMM's packed B layout (gemm_params.h). K's panels run over keys
 * with depth D, so a causal block that stops at key n reads the first
 * panels; V's run over its Dv columns with depth S, and a block that stops
 * early reads them with panel stride S * W. The probabilities go from the
 * row kernel straight into the packed A layout of P V. */
typedef struct att_packs {
    int on, tr;              /* tr: scores made transposed, S^T = K Q^T, for att_rows_fwd_t */
    tocl_gemm_config qk, pv; /* configurations of S = Q K^T and O = P V */
    int64_t kbs, vbs, pbs;   /* per batch item: packed K, packed V, packed P (of a full block) */
} att_packs;

static tocl_status att_packs_init(int dev, int stream, const tocl_att_ctx *c, const att_walk *w, att_packs *pk) {
    const tocl_att_params *p = &c->p;
    memset(pk, 0, sizeof *pk);
    const char *v = tocl_env("TORCH_OCL_ATTENTION_PREPACK"); /* 0: the per-block route (tests, comparison) */
    if ((v && !strcmp(v, "0")) || tocl_dev_props(dev)->kind != TOCL_DEVICE_CPU || p->S == 0 || p->D == 0 ||
        p->Dv == 0)
        return TOCL_OK;
    TOCL_TRY(tocl_gemm_pick_config(dev, stream, c->acc_dt, w->chunk, w->lb, p->Dv, p->S, &pk->pv));
    /* P's packed panels are 8 rows (AVX-512's block): the row step takes
     * 8 rows as the lanes of a vector, on S^T = K Q^T (K packed as A).
     * Other blocks: S = Q K^T (K packed as B), P scattered into panels. */
    v = tocl_env("TORCH_OCL_ATTENTION_ROWS_T"); /* 0: the scatter form (tests) */
    pk->tr = pk->pv.rm == 8 && !(v && !strcmp(v, "0"));
    if (pk->tr)
        TOCL_TRY(tocl_gemm_pick_config(dev, stream, c->acc_dt, w->chunk, p->S, w->lb, p->D, &pk->qk));
    else
        TOCL_TRY(tocl_gemm_pick_config(dev, stream, c->acc_dt, w->chunk, w->lb, p->S, p->D, &pk->qk));
    int64_t wk = pk->tr ? pk->qk.rm : (int64_t)pk->qk.vw * pk->qk.nv, wv = (int64_t)pk->pv.vw * pk->pv.nv;
    pk->kbs = att_round(att_round(p->S, wk) * p->D, 32);
    pk->vbs = att_round(att_round(p->Dv, wv) * p->S, 32);
    pk->pbs = att_round(att_round(w->lb, pk->pv.rm) * p->S, 32);
    pk->on = 1;
    return TOCL_OK;
}

static tocl_status att_rows_launch(int dev, int stream, tocl_ops_kernel *k, const tocl_att_block *bk,
                                   const tocl_ops_arg *a, int n) {
    size_t rows = (size_t)(bk->nb * bk->rows);
    size_t global = (rows + ATT_ROWS_LOCAL - 1) / ATT_ROWS_LOCAL * ATT_ROWS_LOCAL;
    return tocl_nn_launch(dev, stream, k, global, ATT_ROWS_LOCAL, a, n);
}


static void att_walk_init(att_walk *w, const tocl_att_params *p, int folds) {
    memset(w, 0, sizeof *w);
    w->ntot = folds ? p->B * p->Hk : p->Hk;
    w->nbatch = folds ? 1 : p->B;
    w->lb = att_block_rows(p);
    const char *v = tocl_env("TORCH_OCL_ATTENTION_CHUNK"); /* tests: chunk edges at small sizes */
    w->chunk = v ? (int64_t)atoll(v) : ATT_SCRATCH_ELEMS / (w->lb * p->S);
    w->chunk = w->chunk < 1 ? 1 : w->chunk > w->ntot ? w->ntot : w->chunk;
    w->bk.i0 = -w->lb; /* att_walk_next steps to the first block */
}

static int att_walk_next(att_walk *w, const tocl_att_params *p) {
    tocl_att_block *k = &w->bk;
    k->i0 += w->lb;
    if (k->i0 >= p->L) {
        k->i0 = 0;
        if (++k->r == p->Hq / p->Hk) {
            k->r = 0;
            k->t0 += w->chunk;
            if (k->t0 >= w->ntot) {
                k->t0 = 0;
                if (++k->b0 == w->nbatch)
                    return 0;
            }
        }
    }
    k->nb = w->ntot - k->t0 < w->chunk ? w->ntot - k->t0 : w->chunk;
    k->rows = p->L - k->i0 < w->lb ? p->L - k->i0 : w->lb;
    k->n = p->causal && k->i0 + k->rows < p->S ? k->i0 + k->rows : p->S;
    k->bs = k->rows * k->n;
    return 1;
}

static tocl_status att_forward(int dev, int stream, const tocl_att_ctx *c, const tocl_tensor *const *t,
                               cl_mem lse) {
    const tocl_att_params *p = &c->p;
    const tocl_tensor *q = t[0], *k = t[1], *v = t[2], *o = t[3];
    const tocl_tensor *order[4] = {q, o, k, v};
    size_t esz = tocl_dtype_size(c->acc_dt);
    tocl_ops_kernel *rk;
    att_walk w;
    att_walk_init(&w, p, att_folds(p, order, 2, 4));
    att_packs pk;
    TOCL_TRY(att_packs_init(dev, stream, c, &w, &pk));
    TOCL_TRY(att_rows_kernel(dev, c, pk.tr ? "att_rows_fwd_t" : "att_rows_fwd", &rk));
    int64_t blk = att_round(w.chunk * att_round(w.lb, 8) * p->S, 32);
    /* scratch: scores, then (packed route) P, K and V packed */
    int64_t p_at = blk, k_at = p_at + w.chunk * pk.pbs, v_at = k_at + w.chunk * pk.kbs;
    att_scratch ws;
    TOCL_TRY(att_scratch_get(dev, stream, c, pk.on ? v_at + w.chunk * pk.vbs : blk, &ws));
    w.bk.s_off = ws.off;
    tocl_status s = TOCL_OK;
    while (s == TOCL_OK && att_walk_next(&w, p)) {
        const tocl_att_block *b = &w.bk;
        if (pk.on) {
            if (b->r == 0 && b->i0 == 0) { /* a new (batch item, chunk): pack its K and V */
                tocl_gemm_packed kd = {ws.buf, ws.off + k_at, pk.kbs, 0}, vd = {ws.buf, ws.off + v_at, pk.vbs, 0};
                tocl_gemm_operand ko = att_kop(k, b, 0), vo = att_kop(v, b, 1);
                s = tocl_gemm_pack_into(dev, stream, c->acc_dt, &pk.qk, !pk.tr, &ko, b->nb, p->S, p->D, &kd);
                if (s == TOCL_OK)
                    s = tocl_gemm_pack_into(dev, stream, c->acc_dt, &pk.pv, 1, &vo, b->nb, p->Dv, p->S, &vd);
            }
            tocl_gemm_packed kp = {ws.buf, ws.off + k_at, pk.kbs, 0};
            cl_long poff = ws.off + p_at, pw = pk.pv.rm, sld = att_round(b->rows, 8);
            if (pk.tr) { /* S^T = scale K Q^T, rows of S^T sld apart */
                tocl_gemm_desc g1 = tocl_gemm_desc_init(c->acc_dt, b->n, b->rows, p->D);
                g1.batch = b->nb, g1.alpha = p->scale;
                g1.b = att_qop(p, q, b, 1);
                g1.c = (tocl_gemm_operand){ws.addr, b->n * sld, sld, 1};
                if (s == TOCL_OK)
                    s = tocl_gemm_run_packed(dev, stream, &g1, &pk.qk, &kp, NULL);
                tocl_ops_arg a[] = {{sizeof(cl_mem), &ws.buf}, {sizeof(cl_mem), &c->m}, {sizeof(cl_mem), &lse},
                                    {sizeof *p, p}, {sizeof *b, b}, {sizeof poff, &poff}, {sizeof sld, &sld}};
                if (s == TOCL_OK) {
                    size_t np = (size_t)(b->nb * (sld / 8));
                    size_t global = (np + ATT_ROWS_LOCAL - 1) / ATT_ROWS_LOCAL * ATT_ROWS_LOCAL;
                    s = tocl_nn_launch(dev, stream, rk, global, ATT_ROWS_LOCAL, a, 7);
                }
            } else {
                tocl_gemm_desc g1 = tocl_gemm_desc_init(c->acc_dt, b->rows, b->n, p->D);
                g1.batch = b->nb, g1.alpha = p->scale;
                g1.a = att_qop(p, q, b, 0), g1.c = att_sop(ws.addr, esz, 0, b->rows, b->n, 0);
                if (s == TOCL_OK)
                    s = tocl_gemm_run_packed(dev, stream, &g1, &pk.qk, NULL, &kp);
            }
            if (s == TOCL_OK && !pk.tr) {
                tocl_ops_arg a[] = {{sizeof(cl_mem), &ws.buf}, {sizeof(cl_mem), &c->m}, {sizeof(cl_mem), &lse},
                                    {sizeof *p, p}, {sizeof *b, b}, {sizeof poff, &poff}, {sizeof pw, &pw}};
                s = att_rows_launch(dev, stream, rk, b, a, 7);
            }
            tocl_gemm_desc g2 = tocl_gemm_desc_init(c->acc_dt, b->rows, p->Dv, b->n);
            g2.batch = b->nb;
            g2.c = att_qop(p, o, b, 0);
            int64_t wv = (int64_t)pk.pv.vw * pk.pv.nv;
            tocl_gemm_packed pp = {ws.buf, poff, att_round(b->rows, pw) * b->n, 0};
            tocl_gemm_packed vp = {ws.buf, ws.off + v_at, pk.vbs, p->S * wv};
            if (s == TOCL_OK)
                s = tocl_gemm_run_packed(dev, stream, &g2, &pk.pv, &pp, &vp);
            continue;
        }
        tocl_gemm_operand sc = att_sop(ws.addr, esz, 0, b->rows, b->n, 0);
        s = att_gemm(dev, stream, c->acc_dt, b->nb, b->rows, b->n, p->D, p->scale, 0, att_qop(p, q, b, 0),
                     att_kop(k, b, 1), sc);
        if (s == TOCL_OK) {
            cl_long poff = 0, pw = 0;
            tocl_ops_arg a[] = {{sizeof(cl_mem), &ws.buf}, {sizeof(cl_mem), &c->m}, {sizeof(cl_mem), &lse},
                                {sizeof *p, p},             {sizeof *b, b},          {sizeof poff, &poff},
                                {sizeof pw, &pw}};
            s = att_rows_launch(dev, stream, rk, b, a, 7);
        }
        if (s == TOCL_OK)
            s = att_gemm(dev, stream, c->acc_dt, b->nb, b->rows, p->Dv, b->n, 1.0, 0, sc, att_kop(v, b, 0),
                         att_qop(p, o, b, 0));
    }
    tocl_status fs = tocl_mem_free(ws.addr);
    return s != TOCL_OK ? s : fs;
}

static tocl_status att_backward(int dev, int stream, const tocl_att_ctx *c, const tocl_tensor *const *t,
                                cl_mem lse, cl_mem delta) {
    const tocl_att_params *p = &c->p;
    const tocl_tensor *q = t[0], *k = t[1], *v = t[2], *g = t[4], *dq = t[5], *dk = t[6], *dv = t[7];
    const tocl_tensor *order[8] = {q, t[3], g, dq, k, v, dk, dv};
    size_t esz = tocl_dtype_size(c->acc_dt);
    cl_mem bo, bg;
    cl_long off;
    int mdev;
    TOCL_TRY(tocl_ops_resolve(dev, t[3], "output", 0, &bo, &off, &mdev));
    TOCL_TRY(tocl_ops_resolve(dev, g, "grad_output", 0, &bg, &off, &mdev));
    tocl_ops_kernel *rk;
    TOCL_TRY(att_rows_kernel(dev, c, "att_rows_bwd", &rk));
    tocl_scalar zero = {1, 0.0, 0};
    TOCL_TRY(tocl_op_fill(dev, stream, dk, zero));
    TOCL_TRY(tocl_op_fill(dev, stream, dv, zero));
    att_walk w;
    att_walk_init(&w, p, att_folds(p, order, 4, 8));
    int64_t blk = w.chunk * w.lb * p->S;
    att_scratch ws;
    TOCL_TRY(att_scratch_get(dev, stream, c, 2 * blk, &ws));
    w.bk.s_off = ws.off, w.bk.dp_off = ws.off + blk;
    tocl_status s = TOCL_OK;
    while (s == TOCL_OK && att_walk_next(&w, p)) {
        const tocl_att_block *b = &w.bk;
        int64_t rows = b->rows, n = b->n, nb = b->nb;
        tocl_gemm_operand sc = att_sop(ws.addr, esz, 0, rows, n, 0), dp = att_sop(ws.addr, esz, blk, rows, n, 0);
        tocl_gemm_operand pt = att_sop(ws.addr, esz, 0, rows, n, 1), dst = att_sop(ws.addr, esz, blk, rows, n, 1);
        tocl_gemm_operand gop = att_qop(p, g, b, 0);
        s = att_gemm(dev, stream, c->acc_dt, nb, rows, n, p->D, p->scale, 0, att_qop(p, q, b, 0),
                     att_kop(k, b, 1), sc);
        if (s == TOCL_OK)
            s = att_gemm(dev, stream, c->acc_dt, nb, rows, n, p->Dv, 1.0, 0, gop, att_kop(v, b, 1), dp);
        if (s == TOCL_OK) {
            tocl_ops_arg a[] = {{sizeof(cl_mem), &ws.buf}, {sizeof(cl_mem), &ws.buf}, {sizeof(cl_mem), &c->m},
                                {sizeof(cl_mem), &lse},    {sizeof(cl_mem), &bo},     {sizeof(cl_mem), &bg},
                                {sizeof(cl_mem), &delta},  {sizeof *p, p},            {sizeof *b, b}};
            s = att_rows_launch(dev, stream, rk, b, a, 9);
        }
        if (s == TOCL_OK) /* dV += P^T dO */
            s = att_gemm(dev, stream, c->acc_dt, nb, n, p->Dv, rows, 1.0, 1, pt, gop, att_kop(dv, b, 0));
        if (s == TOCL_OK) /* dQ = scale dS K */
            s = att_gemm(dev, stream, c->acc_dt, nb, rows, p->D, n, p->scale, 0, dp, att_kop(k, b, 0),
                         att_qop(p, dq, b, 0));
        if (s == TOCL_OK) /* dK += scale dS^T Q */
            s = att_gemm(dev, stream, c->acc_dt, nb, n, p->D, rows, p->scale, 1, dst,
                         att_qop(p, q, b, 0), att_kop(dk, b, 0));
    }
    tocl_status fs = tocl_mem_free(ws.addr);
    return s != TOCL_OK ? s : fs;
}

/* float16 and bfloat16 storage: the operands are widened into dense
 * accumulation-type copies first (O(L D) work beside the O(L S D) of the
 * products), so scores and probabilities are never rounded to the storage
 * type, and the outputs narrowed back after. slot[i]: where p keeps the
 * element offset and strides of t[i] (t in backward order; forward uses
 * the first four). */
static const struct {
    size_t off, strides;
} att_slot[8] = {
    {offsetof(tocl_att_params, q_off), offsetof(tocl_att_params, qs)},
    {offsetof(tocl_att_params, k_off), offsetof(tocl_att_params, ks)},
    {offsetof(tocl_att_params, v_off), offsetof(tocl_att_params, vs)},
    {offsetof(tocl_att_params, o_off), offsetof(tocl_att_params, os)},
    {offsetof(tocl_att_params, g_off), offsetof(tocl_att_params, gs)},
    {offsetof(tocl_att_params, dq_off), offsetof(tocl_att_params, dqs)},
    {offsetof(tocl_att_params, dk_off), offsetof(tocl_att_params, dks)},
    {offsetof(tocl_att_params, dv_off), offsetof(tocl_att_params, dvs)},
};

typedef struct att_wide {
    tocl_addr addr;       /* 0: nothing widened */
    tocl_tensor t[8];     /* the copies */
    const tocl_tensor *use[8]; /* what the route reads and writes: copies or the originals */
} att_wide;

/* Copies of t[0..n) in c's accumulation type, the first n_in filled from t;
 * c's offsets and strides rebound to them. */
static tocl_status att_widen(int dev, int stream, tocl_att_ctx *c, const tocl_tensor *const *t, int n, int n_in,
                             att_wide *w) {
    memset(w, 0, sizeof *w);
    for (int i = 0; i < n; i++)
        w->use[i] = t[i];
    if (c->dt == c->acc_dt)
        return TOCL_OK;
    size_t esz = tocl_dtype_size(c->acc_dt);
    int64_t total = 0;
    for (int i = 0; i < n; i++)
        total += tocl_ops_numel(t[i]);
    TOCL_TRY(tocl_mem_alloc(dev, (size_t)total * esz, &w->addr));
    tocl_status s = stream != tocl_stream_current(dev) ? tocl_mem_record_stream(w->addr, stream) : TOCL_OK;
    int64_t at = 0;
    for (int i = 0; i < n && s == TOCL_OK; i++) {
        tocl_tensor *x = &w->t[i];
        *x = *t[i];
        x->dtype = c->acc_dt;
        x->data = w->addr + (tocl_addr)(at * (int64_t)esz);
        for (int d = 3, st = 1; d >= 0; d--) /* dense, row-major */
            x->strides[d] = st, st *= (int)x->sizes[d];
        at += tocl_ops_numel(x);
        w->use[i] = x;
        if (i < n_in)
            s = tocl_op_copy(dev, stream, x, t[i]);
        cl_mem buf;
        cl_long off;
        int mdev;
        if (s == TOCL_OK)
            s = tocl_ops_resolve(dev, x, "attention scratch", 0, &buf, &off, &mdev);
        if (s == TOCL_OK) {
            *(tocl_att_i64 *)((char *)&c->p + att_slot[i].off) = off;
            memcpy((char *)&c->p + att_slot[i].strides, x->strides, 4 * sizeof(int64_t));
        }
    }
    return s;
}

/* Outputs t[n_in..n) from their copies, then the copies are released. */
static tocl_status att_narrow(int dev, int stream, const tocl_tensor *const *t, int n, int n_in, att_wide *w,
                              tocl_status s) {
    if (!w->addr)
        return s;
    for (int i = n_in; i < n && s == TOCL_OK; i++)
        s = tocl_op_copy(dev, stream, t[i], &w->t[i]);
    tocl_status fs = tocl_mem_free(w->addr);
    return s != TOCL_OK ? s : fs;
}

tocl_status tocl_att_gemm_forward(int dev, int stream, const tocl_att_ctx *c, const tocl_tensor *const t[4],
                                  cl_mem lse) {
    tocl_att_ctx wc = *c;
    att_wide w;
    tocl_status s = att_widen(dev, stream, &wc, t, 4, 3, &w);
    if (s == TOCL_OK)
        s = att_forward(dev, stream, &wc, w.use, lse);
    return att_narrow(dev, stream, t, 4, 3, &w, s);
}

tocl_status tocl_att_gemm_backward(int dev, int stream, const tocl_att_ctx *c, const tocl_tensor *const t[8],
                                   cl_mem lse, cl_mem delta) {
    tocl_att_ctx wc = *c;
    att_wide w;
    tocl_status s = att_widen(dev, stream, &wc, t, 8, 5, &w);
    if (s == TOCL_OK)
        s = att_backward(dev, stream, &wc, w.use, lse, delta);
    return att_narrow(dev, stream, t, 8, 5, &w, s);
}
