/* gemm.c - host side of the GEMM family (kernels/gemm.cl): checks, path
 * choice, packing workspace and launches. Tile choice lives in gemm_tune.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/gemm_epilogue.h"
#include "gemm_params.h"
#include "ops/gemm_internal.h"
#include "launch/launch.h"

/* Below this many multiply-adds per matrix (or with a thin dimension) the
 * direct kernel wins: packing costs two extra launches and a workspace. */
#define GEMM_DIRECT_VOLUME (32 * 32 * 32)
#define GEMM_DIRECT_THIN 8
#define GEMM_PACK_LOCAL 64 /* one fixed local size: PoCL compiles per local size */
#define GEMM_PACK_TILE 8   /* panel-fast packing: 8 panels x 8 k per work-group */
#define GEMM_DIRECT_LOCAL 64
#define GEMM_GPU_LOCAL 16
/* The dot kernel's range: up to 64 rows it beat the packed path at every
 * shape measured (32-64 x 256-1024 x 768-1024); K and N below 8 leave its
 * 8-wide k loop or its work-items mostly idle. */
#define GEMM_DOT_MAX_ROWS 64
#define GEMM_DOT_MIN_K 8
#define GEMM_DOT_MIN_COLS 8
/* Groups of 16: a work-item is a long loop, and 192 of them (N = 768) in
 * groups of 64 left a core idle; device time per [32, 256] x [256, 768] on
 * PoCL: 106 us with 16, 128 with 64, 176 with 4. */
#define GEMM_DOT_LOCAL 16
/* tocl_gemm_normed keeps the normalised row in local memory: 64 KiB at most */
#define GEMM_NORM_MAX_K 16384
#define GEMM_EXTRA_MAX 4 /* kernel arguments past the eight every GEMM kernel takes */
#define GEMM_DOT_AMX_ROWS 16
/* The rows kernel: at most 16 rows (two of its 8-row blocks); groups of 8
 * (32 ran [16, 3072] x [3072, 768] 1.3x slower, the wide N a little faster). */
#define GEMM_ROWS_MAX_ROWS 16
#define GEMM_ROWS_LOCAL 8

static const char *gemm_st_option(tocl_dtype dt) {
    switch (dt) {
    case TOCL_F16: return "-DTOCL_ST_F16";
    case TOCL_BF16: return "-DTOCL_ST_BF16";
    case TOCL_F64: return "-DTOCL_ST_F64";
    default: return "-DTOCL_ST_F32";
    }
}

/* The epilogue's activations, rendered once from the IR op table. */
static char epilogue_text[64 * 1024];
static tocl_status epilogue_status;
static pthread_once_t epilogue_once = PTHREAD_ONCE_INIT;
static char epilogue_error[512];

static void render_epilogue(void) {
    epilogue_status = tocl_gemm_epilogue_render(epilogue_text, sizeof epilogue_text);
    if (epilogue_status != TOCL_OK)
        snprintf(epilogue_error, sizeof epilogue_error, "%s", tocl_last_error());
}

tocl_status tocl_gemm_kernel(int dev, tocl_dtype dt, const tocl_gemm_config *c, const char *extra,
                             const char *name, tocl_ops_kernel **out) {
    pthread_once(&epilogue_once, render_epilogue);
    if (epilogue_status != TOCL_OK)
        return tocl_fail(epilogue_status, "rendering the GEMM epilogue: %s", epilogue_error);
    char opt[192];
    snprintf(opt, sizeof opt, "%s -DGEMM_RM=%d -DGEMM_VW=%d -DGEMM_NV=%d%s%s", gemm_st_option(dt), c->rm, c->vw,
             c->nv, extra ? " " : "", extra ? extra : "");
    return tocl_ops_kernel_get_generated(dev, "gemm", name, opt, epilogue_text, out);
}

static tocl_status gemm_kernel(int dev, tocl_dtype dt, const tocl_gemm_config *c, const char *name,
                               tocl_ops_kernel **out) {
    return tocl_gemm_kernel(dev, dt, c, NULL, name, out);
}

typedef tocl_ops_arg gemm_arg; /* ptr NULL with size > 0: a __local buffer of that size */

static tocl_status gemm_launch(int dev, int stream, tocl_ops_kernel *e, const size_t global[3], const size_t local[3],
                               const gemm_arg *args, int nargs) {
    return tocl_ops_launch(dev, stream, e, 3, global, local, args, nargs);
}

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

tocl_gemm_desc tocl_gemm_desc_init(tocl_dtype dtype, int64_t M, int64_t N, int64_t K) {
    tocl_gemm_desc g;
    memset(&g, 0, sizeof g);
    g.dtype = dtype;
    g.batch = 1;
    g.M = M, g.N = N, g.K = K;
    g.alpha = 1.0;
    return g;
}

/* Resolve a (batch, rows, cols) operand to (buffer, element offset). */
static tocl_status gemm_resolve(int dev, tocl_dtype dt, const tocl_gemm_operand *o, int64_t batch, int64_t rows,
                                int64_t cols, const char *what, cl_mem *buf, cl_long *off) {
    if (o->bs < 0 || o->rs < 0 || o->cs < 0)
        return tocl_fail(TOCL_E_INVALID, "gemm: %s has a negative stride (%lld, %lld, %lld)", what,
                         (long long)o->bs, (long long)o->rs, (long long)o->cs);
    tocl_tensor t;
    memset(&t, 0, sizeof t);
    t.data = o->data;
    t.dtype = dt;
    t.ndim = 3;
    t.sizes[0] = batch, t.sizes[1] = rows, t.sizes[2] = cols;
    t.strides[0] = o->bs, t.strides[1] = o->rs, t.strides[2] = o->cs;
    int mdev;
    TOCL_TRY(tocl_ops_check_tensor(&t, what));
    TOCL_TRY(tocl_ops_resolve(dev, &t, what, 0, buf, off, &mdev));
    return TOCL_OK;
}

/* TORCH_OCL_GEMM_ADIRECT=0 packs A on CPU devices as before, =force reads
 * it in place at any row stride (comparisons, tests): 0, 2 or 1 (auto). */
static int gemm_adirect_mode(void) {
    if (tocl_env_off("TORCH_OCL_GEMM_ADIRECT"))
        return 0;
    const char *v = tocl_env("TORCH_OCL_GEMM_ADIRECT");
    return v && !strcmp(v, "force") ? 2 : 1;
}

static gemm_path gemm_env_path(void) {
    const char *v = tocl_env("TORCH_OCL_GEMM_KERNEL");
    if (v && !strcmp(v, "direct"))
        return GEMM_PATH_DIRECT;
    if (v && !strcmp(v, "packed"))
        return GEMM_PATH_PACKED;
    return GEMM_PATH_AUTO;
}

static tocl_status gemm_check(int dev, const tocl_gemm_desc *g) {
    TOCL_TRY(tocl_device_check(dev));
    if (!g)
        return tocl_fail(TOCL_E_INVALID, "gemm: descriptor is NULL");
    if (!tocl_dtype_is_float(g->dtype))
        return tocl_fail(TOCL_E_UNSUPPORTED, "gemm: dtype %s is not supported; use float32, float16, bfloat16 or "
                         "float64", tocl_dtype_name(g->dtype));
    if (g->dtype == TOCL_F64 && !tocl_dev_props(dev)->has_fp64)
        return tocl_fail(TOCL_E_UNSUPPORTED, "float64 is not supported on device %d (%s): it lacks cl_khr_fp64",
                         dev, tocl_dev_props(dev)->name);
    if (g->batch < 0 || g->M < 0 || g->N < 0 || g->K < 0)
        return tocl_fail(TOCL_E_INVALID, "gemm: negative size (batch %lld, M %lld, N %lld, K %lld)",
                         (long long)g->batch, (long long)g->M, (long long)g->N, (long long)g->K);
    if ((unsigned)g->act >= TOCL_GEMM_ACT_COUNT)
        return tocl_fail(TOCL_E_INVALID, "gemm: unknown activation %d", (int)g->act);
    if ((unsigned)g->bias_mode > TOCL_GEMM_BIAS_COL)
        return tocl_fail(TOCL_E_INVALID, "gemm: unknown bias mode %d", (int)g->bias_mode);
    return TOCL_OK;
}

/* The dot kernel (kernels/gemm.cl): float32, float16 or bfloat16 storage
 * on a CPU device, few rows, A's rows and B's columns contiguous along k:
 * x @ W^T of a linear layer while decoding, where packing the weight cost
 * more than the product. */
static int gemm_dot_usable(int dev, const tocl_gemm_desc *g, int64_t K, const tocl_gemm_packed *pa,
                           const tocl_gemm_packed *pb) {
    return tocl_dev_props(dev)->kind == TOCL_DEVICE_CPU && g->dtype != TOCL_F64 && !pa && !pb &&
           K >= GEMM_DOT_MIN_K && g->M <= GEMM_DOT_MAX_ROWS && g->N >= GEMM_DOT_MIN_COLS && g->a.cs == 1 &&
           g->b.rs == 1;
}

/* The dot and rows kernels: a work-item owns `cols` columns of C for every
 * row (a long loop each), in groups of `group`. */
static tocl_status gemm_cols_launch(int dev, int stream, const tocl_gemm_desc *g, const tocl_gemm_params *p,
                                    const char *name, int64_t cols, size_t group, cl_mem abuf, cl_mem bbuf,
                                    cl_mem cbuf, cl_mem dbuf, cl_mem biasbuf, const gemm_arg *extra, int nextra) {
    tocl_gemm_config cfg;
    tocl_gemm_default_config(dev, TOCL_F32, &cfg);
    tocl_ops_kernel *e;
    TOCL_TRY(gemm_kernel(dev, g->dtype, &cfg, name, &e));
    cl_mem dArg = dbuf ? dbuf : cbuf, biasArg = biasbuf ? biasbuf : cbuf;
    float alpha = (float)g->alpha, beta = (float)g->beta;
    int64_t items = g->batch * ((g->N + cols - 1) / cols);
    size_t global[3] = {(size_t)round_up(items, (int64_t)group), 1, 1};
    size_t local[3] = {group, 1, 1};
    gemm_arg args[8 + GEMM_EXTRA_MAX] = {{sizeof(cl_mem), &abuf},    {sizeof(cl_mem), &bbuf},  {sizeof(cl_mem), &cbuf},
                                         {sizeof(cl_mem), &dArg},    {sizeof(cl_mem), &biasArg}, {sizeof *p, p},
                                         {sizeof alpha, &alpha},     {sizeof beta, &beta}};
    for (int i = 0; i < nextra && i < GEMM_EXTRA_MAX; i++)
        args[8 + i] = extra[i];
    return gemm_launch(dev, stream, e, global, local, args, 8 + nextra);
}

/* tocl_gemm_normed's kernel: the one-row dot kernel (float32 only, so
 * the normalised row it multiplies is the one the layer-norm kernel would
 * have stored). */
int tocl_gemm_norm_usable(int dev, const tocl_gemm_desc *g, const tocl_gemm_norm *n) {
    return g && n && tocl_device_check(dev) == TOCL_OK && tocl_dev_props(dev)->kind == TOCL_DEVICE_CPU &&
           g->dtype == TOCL_F32 && g->batch == 1 && g->M == 1 && g->K >= GEMM_DOT_MIN_K &&
           g->K <= GEMM_NORM_MAX_K && (uint64_t)g->K * sizeof(float) <= tocl_dev_props(dev)->local_mem_bytes &&
           g->N >= GEMM_DOT_MIN_COLS &&
           g->alpha != 0.0 && g->a.cs == 1 && g->b.rs == 1 && n->eps >= 0;
}

static tocl_status gemm_norm_launch(int dev, int stream, const tocl_gemm_desc *g, const tocl_gemm_params *p,
                                    const tocl_gemm_norm *n, cl_mem abuf, cl_mem bbuf, cl_mem cbuf, cl_mem dbuf,
                                    cl_mem biasbuf) {
    tocl_gemm_norm_params q;
    memset(&q, 0, sizeof q);
    q.eps = (float)n->eps;
    cl_mem gbuf = cbuf, btbuf = cbuf; /* absent: bound to C, never read */
    struct {
        tocl_addr addr;
        cl_mem *buf;
        tocl_gp_i64 *off;
        tocl_gp_i32 *has;
        const char *what;
    } vecs[] = {{n->gamma, &gbuf, &q.g_off, &q.has_g, "gemm norm weight"},
                {n->beta, &btbuf, &q.bt_off, &q.has_bt, "gemm norm bias"}};
    for (int i = 0; i < 2; i++) {
        if (!vecs[i].addr)
            continue;
        tocl_gemm_operand o = {vecs[i].addr, 0, 0, 1}; /* K values along one row */
        cl_long off;
        TOCL_TRY(gemm_resolve(dev, g->dtype, &o, 1, 1, g->K, vecs[i].what, vecs[i].buf, &off));
        *vecs[i].off = off, *vecs[i].has = 1;
    }
    gemm_arg extra[] = {{sizeof(cl_mem), &gbuf}, {sizeof(cl_mem), &btbuf}, {sizeof q, &q},
                        {(size_t)g->K * sizeof(float), NULL}}; /* the normalised row, in local memory */
    return gemm_cols_launch(dev, stream, g, p, "tocl_gemm_dot1_norm", 8, GEMM_DOT_LOCAL, abuf, bbuf, cbuf, dbuf,
                            biasbuf, extra, 4);
}

/* The rows kernel (kernels/gemm.cl): few rows on a CPU device, B's rows
 * contiguous along n, where the dot kernel does not apply (x @ W with W
 * stored [K, N]; a linear layer's input gradient dY @ W). */
static int gemm_rows_usable(int dev, const tocl_gemm_desc *g, int64_t K, const tocl_gemm_packed *pa,
                            const tocl_gemm_packed *pb) {
    return tocl_dev_props(dev)->kind == TOCL_DEVICE_CPU && g->dtype != TOCL_F64 && !pa && !pb && K > 0 &&
           g->M <= GEMM_ROWS_MAX_ROWS && g->N >= 16 && g->b.cs == 1 && !tocl_env_off("TORCH_OCL_GEMM_ROWS");
}

static tocl_status gemm_run(int dev, int stream, const tocl_gemm_desc *g, gemm_path path,
                            const tocl_gemm_config *cfg_in, const tocl_gemm_packed *pa,
                            const tocl_gemm_packed *pb, const tocl_gemm_norm *norm) {
    TOCL_TRY(gemm_check(dev, g));
    if (g->M == 0 || g->N == 0 || g->batch == 0)
        return TOCL_OK;
    if ((g->M > 1 && g->c.rs == 0) || (g->N > 1 && g->c.cs == 0) || (g->batch > 1 && g->c.bs == 0))
        return tocl_fail(TOCL_E_INVALID, "gemm: the output has stride 0 in a dimension of size > 1 (elements "
                         "would overlap)");
    tocl_dtype dt = g->dtype, acc = dt == TOCL_F64 ? TOCL_F64 : TOCL_F32;
    size_t accsz = tocl_dtype_size(acc);
    /* alpha = 0 reads neither A nor B (as BLAS): NaN in them does not show. */
    int64_t K = g->alpha == 0.0 ? 0 : g->K;
    int has_d = g->d.data != 0 && g->beta != 0.0;

    tocl_gemm_params p;
    memset(&p, 0, sizeof p);
    p.M = g->M, p.N = g->N, p.K = K, p.batch = g->batch;
    cl_mem cbuf, abuf = NULL, bbuf = NULL, dbuf = NULL, biasbuf = NULL;
    cl_long off, a_off_in = 0;
    TOCL_TRY(gemm_resolve(dev, dt, &g->c, g->batch, g->M, g->N, "gemm output C", &cbuf, &off));
    p.c_off = off, p.c_bs = g->c.bs, p.c_rs = g->c.rs, p.c_cs = g->c.cs;
    if (K > 0) {
        if (!pa) {
            TOCL_TRY(gemm_resolve(dev, dt, &g->a, g->batch, g->M, K, "gemm operand A", &abuf, &off));
            p.a_off = a_off_in = off, p.a_bs = g->a.bs, p.a_rs = g->a.rs, p.a_ks = g->a.cs;
        }
        /* B is K x N: its rows walk k, its columns n. */
        if (!pb) {
            TOCL_TRY(gemm_resolve(dev, dt, &g->b, g->batch, K, g->N, "gemm operand B", &bbuf, &off));
            p.b_off = off, p.b_bs = g->b.bs, p.b_ks = g->b.rs, p.b_rs = g->b.cs;
        }
    }
    if ((pa || pb) && (K == 0 || path != GEMM_PATH_PACKED || !cfg_in || dt != acc ||
                       tocl_dev_props(dev)->kind != TOCL_DEVICE_CPU))
        return tocl_fail(TOCL_E_INVALID, "gemm: a packed A or B needs the packed path of a CPU device, K > 0, a "
                         "configuration and float32 or float64");
    if (has_d) {
        TOCL_TRY(gemm_resolve(dev, dt, &g->d, g->batch, g->M, g->N, "gemm input D", &dbuf, &off));
        p.has_d = 1;
        p.d_off = off, p.d_bs = g->d.bs, p.d_rs = g->d.rs, p.d_cs = g->d.cs;
    }
    if (g->bias_mode != TOCL_GEMM_BIAS_NONE) {
        int64_t len = g->bias_mode == TOCL_GEMM_BIAS_ROW ? g->N : g->M;
        TOCL_TRY(gemm_resolve(dev, dt, &g->bias, g->batch, 1, len, "gemm bias", &biasbuf, &off));
        p.bias_mode = (int)g->bias_mode;
        p.bias_off = off, p.bias_bs = g->bias.bs, p.bias_s = g->bias.cs;
    }
    p.act = (int)g->act;

    if (norm) {
        if (!tocl_gemm_norm_usable(dev, g, norm) || pa || pb)
            return tocl_fail(TOCL_E_UNSUPPORTED, "gemm: a normalised A needs one float32 row contiguous along k, "
                             "B contiguous along k, K >= %d, N >= %d and a CPU device (see tocl_gemm_norm_usable)",
                             GEMM_DOT_MIN_K, GEMM_DOT_MIN_COLS);
        return gemm_norm_launch(dev, stream, g, &p, norm, abuf, bbuf, cbuf, dbuf, biasbuf);
    }
    if (path == GEMM_PATH_AUTO)
        path = gemm_env_path();
    /* bfloat16 past 16 rows: the AMX tiles beat the dot kernel (64 x [1024,
     * 3072]: 1.0 against 3.3 ms; 16 rows: 1.06 against 0.93) */
    if (path == GEMM_PATH_AUTO && gemm_dot_usable(dev, g, K, pa, pb) &&
        !(dt == TOCL_BF16 && g->M > GEMM_DOT_AMX_ROWS && tocl_gemm_amx_usable(dev, stream)))
        return g->M == 1 ? gemm_cols_launch(dev, stream, g, &p, "tocl_gemm_dot1", 8, GEMM_DOT_LOCAL, abuf, bbuf,
                                            cbuf, dbuf, biasbuf, NULL, 0)
                         : gemm_cols_launch(dev, stream, g, &p, "tocl_gemm_dot", 4, GEMM_DOT_LOCAL, abuf, bbuf,
                                            cbuf, dbuf, biasbuf, NULL, 0);
    if (path == GEMM_PATH_AUTO && gemm_rows_usable(dev, g, K, pa, pb)) /* M <= 16: never the tiles' case */
        return gemm_cols_launch(dev, stream, g, &p, "tocl_gemm_rows", 16, GEMM_ROWS_LOCAL, abuf, bbuf, cbuf, dbuf,
                                biasbuf, NULL, 0);
    if (path == GEMM_PATH_AUTO) {
        /* CPU devices: thin products pack too. The direct kernel (one element
         * per work-item, B read down its columns) measured 2-30x slower at
         * every thin shape past the small volume: [4, 4096] x [4096, 25088]
         * (VGG's classifier, input gradient) 2.56 s against 85 ms packed,
         * [4096, 4] x [4, 25088] 274 against 66 ms, a matrix-vector product
         * 4096^2 x 1 12 against 6 ms, [512, 4608] x [4608, 4] 5.0 against
         * 0.9 ms. */
        int thin = g->M < GEMM_DIRECT_THIN || g->N < GEMM_DIRECT_THIN || K < GEMM_DIRECT_THIN;
        int cpu_dev = tocl_dev_props(dev)->kind == TOCL_DEVICE_CPU;
        path = (thin && !cpu_dev) || g->M * g->N * K <= GEMM_DIRECT_VOLUME ? GEMM_PATH_DIRECT : GEMM_PATH_PACKED;
    }
    if (K == 0)
        path = GEMM_PATH_DIRECT;
    /* bfloat16 on a CPU with AMX tiles (gemm_amx.c); a caller that names a
     * configuration (the tuner, tests) gets the float32 route it names. */
    if (path == GEMM_PATH_PACKED && dt == TOCL_BF16 && !cfg_in && !pa && !pb && tocl_gemm_amx_usable(dev, stream))
        return tocl_gemm_amx_run(dev, stream, g, &p, abuf, bbuf, cbuf, dbuf, biasbuf);
    tocl_gemm_config cfg;
    if (cfg_in)
        cfg = *cfg_in;
    else if (path == GEMM_PATH_PACKED)
        TOCL_TRY(tocl_gemm_pick_config(dev, stream, dt, g->batch, g->M, g->N, K, &cfg));
    else
        tocl_gemm_default_config(dev, acc, &cfg);

    double alpha = g->alpha, beta = g->beta;
    float falpha = (float)alpha, fbeta = (float)beta;
    const void *pal = acc == TOCL_F64 ? (const void *)&alpha : (const void *)&falpha;
    const void *pbe = acc == TOCL_F64 ? (const void *)&beta : (const void *)&fbeta;
    /* Absent operands are bound to C's buffer; the kernel never reads them. */
    cl_mem dArg = dbuf ? dbuf : cbuf, biasArg = biasbuf ? biasbuf : cbuf;

    if (path == GEMM_PATH_DIRECT) {
        tocl_ops_kernel *e;
        TOCL_TRY(gemm_kernel(dev, dt, &cfg, "tocl_gemm_direct", &e));
        cl_mem aArg = abuf ? abuf : cbuf, bArg = bbuf ? bbuf : cbuf;
        /* Flat 1-D grid: a matrix-vector product has N = 1, and a 2-D grid
         * with a fixed local size would leave most work-items idle. */
        int64_t total = g->batch * g->M * g->N;
        size_t global[3] = {(size_t)round_up(total, GEMM_DIRECT_LOCAL), 1, 1};
        size_t local[3] = {GEMM_DIRECT_LOCAL, 1, 1};
        gemm_arg args[] = {{sizeof(cl_mem), &aArg}, {sizeof(cl_mem), &bArg}, {sizeof(cl_mem), &cbuf},
                           {sizeof(cl_mem), &dArg}, {sizeof(cl_mem), &biasArg}, {sizeof p, &p},
                           {accsz, pal},           {accsz, pbe}};
        return gemm_launch(dev, stream, e, global, local, args, 8);
    }

    /* Packed path: A and B into k-major panels of the accumulation type. */
    const tocl_device_props *props = tocl_dev_props(dev);
    int cpu = props->kind == TOCL_DEVICE_CPU;
    int64_t rn = (int64_t)cfg.vw * cfg.nv;
    int64_t aw = cpu ? cfg.rm : round_up(g->M, cfg.rm), bw = cpu ? rn : round_up(g->N, rn);
    int64_t mp = round_up(g->M, aw), np = round_up(g->N, bw);
    int64_t a_batches = pa || g->a.bs == 0 ? 1 : g->batch, b_batches = pb || g->b.bs == 0 ? 1 : g->batch;
    /* CPU, float storage, A's rows contiguous along k: the macro kernel
     * reads A in place (tocl_gemm_cpu_ad) and A is not packed. The register
     * block's RM rows are RM streams. Rows a multiple of 2 KiB apart share
     * L1 sets and evict each other between the block's reuses, which grow
     * with N: device time packed / in place was 1.16x at 1024x1024x256 and
     * 1.37x at 4096x1024x256, but 0.78x at N = 3072 and 0.73x at 2048^3;
     * so those strides stay packed past N = 1024. A stored by columns would
     * use half of each line: packed. */
    int admode = gemm_adirect_mode();
    int adirect = cpu && !pa && abuf && dt == acc && p.a_ks == 1 && admode &&
                  (admode == 2 || (p.a_rs * (int64_t)accsz) % 2048 != 0 || g->N <= 1024);
    int64_t a_elems = pa || adirect ? 0 : round_up(a_batches * mp * K, 32), b_elems = pb ? 0 : b_batches * np * K;
    tocl_addr ws = 0;
    if (a_elems + b_elems > 0)
        TOCL_TRY(tocl_mem_alloc(dev, (size_t)(a_elems + b_elems) * accsz, &ws));
    tocl_status s = TOCL_OK;
    if (ws && stream != tocl_stream_current(dev))
        s = tocl_mem_record_stream(ws, stream);
    cl_mem wbuf = pa ? pa->buf : pb ? pb->buf : NULL;
    cl_long woff = 0;
    if (s == TOCL_OK && ws) {
        int mdev;
        size_t boff;
        s = tocl_mem_resolve(ws, &mdev, &wbuf, &boff);
        woff = (cl_long)(boff / accsz);
    }
    tocl_ops_kernel *pack = NULL, *main_k = NULL;
    if (s == TOCL_OK && ws)
        s = gemm_kernel(dev, dt, &cfg, "tocl_gemm_pack", &pack);
    if (s == TOCL_OK)
        s = gemm_kernel(dev, dt, &cfg, adirect ? "tocl_gemm_cpu_ad" : cpu ? "tocl_gemm_cpu" : "tocl_gemm_gpu", &main_k);
    for (int which = pa || adirect ? 1 : 0; which < (pb ? 1 : 2) && s == TOCL_OK; which++) {
        tocl_gemm_pack_params pp;
        memset(&pp, 0, sizeof pp);
        if (which == 0) {
            pp.off = p.a_off, pp.bs = p.a_bs, pp.rs = p.a_rs, pp.ks = p.a_ks, pp.rows = g->M, pp.width = aw;
            pp.dst_off = woff, pp.dst_bs = a_batches > 1 ? mp * K : 0;
        } else {
            pp.off = p.b_off, pp.bs = p.b_bs, pp.rs = p.b_rs, pp.ks = p.b_ks, pp.rows = g->N, pp.width = bw;
            pp.dst_off = woff + a_elems, pp.dst_bs = b_batches > 1 ? np * K : 0;
        }
        pp.depth = K;
        size_t panels = (size_t)((which ? np : mp) / pp.width), batches = (size_t)(which ? b_batches : a_batches);
        size_t global[3] = {(size_t)round_up(K, GEMM_PACK_LOCAL), panels, batches};
        size_t local[3] = {GEMM_PACK_LOCAL, 1, 1};
        /* CPU, rows contiguous (B row-major): panels fastest, in square
         * work-groups, so each reads runs along rows, not one W-piece of
         * each of 64 rows (a page and a cache miss per piece). */
        if (cpu && pp.rs == 1 && pp.ks != 1) {
            pp.panel_fast = 1;
            global[0] = (size_t)round_up((int64_t)panels, GEMM_PACK_TILE);
            global[1] = (size_t)round_up(K, GEMM_PACK_TILE);
            local[0] = local[1] = GEMM_PACK_TILE;
        }
        cl_mem src = which ? bbuf : abuf;
        gemm_arg args[] = {{sizeof(cl_mem), &src}, {sizeof(cl_mem), &wbuf}, {sizeof pp, &pp}};
        s = gemm_launch(dev, stream, pack, global, local, args, 3);
    }
    if (s == TOCL_OK) {
        p.a_off = woff, p.a_bs = a_batches > 1 ? mp * K : 0, p.a_w = aw;
        p.b_off = woff + a_elems, p.b_bs = b_batches > 1 ? np * K : 0, p.b_w = bw;
        cl_mem apacked = wbuf, bpacked = wbuf;
        if (pa)
            apacked = pa->buf, p.a_off = pa->off, p.a_bs = pa->bs, p.a_ps = pa->ps;
        if (adirect) /* A's own offset and strides, as resolved */
            apacked = abuf, p.a_off = a_off_in, p.a_bs = g->a.bs;
        if (pb)
            bpacked = pb->buf, p.b_off = pb->off, p.b_bs = pb->bs, p.b_ps = pb->ps;
        p.tm = cfg.tm, p.tn = cfg.tn, p.kc = cfg.kc;
        if (cpu) {
            size_t global[3] = {(size_t)((g->N + cfg.tn - 1) / cfg.tn), (size_t)((g->M + cfg.tm - 1) / cfg.tm),
                                (size_t)g->batch};
            size_t local[3] = {1, 1, 1};
            gemm_arg args[] = {{sizeof(cl_mem), &apacked}, {sizeof(cl_mem), &bpacked}, {sizeof(cl_mem), &cbuf},
                               {sizeof(cl_mem), &dArg}, {sizeof(cl_mem), &biasArg}, {sizeof p, &p},
                               {accsz, pal}, {accsz, pbe}, {(size_t)(cfg.tm * cfg.tn) * accsz, NULL}};
            s = gemm_launch(dev, stream, main_k, global, local, args, 9);
        } else {
            size_t l = props->max_work_group_size >= GEMM_GPU_LOCAL * GEMM_GPU_LOCAL ? GEMM_GPU_LOCAL : 8;
            size_t global[3] = {(size_t)round_up((g->N + rn - 1) / rn, (int64_t)l),
                                (size_t)round_up((g->M + cfg.rm - 1) / cfg.rm, (int64_t)l), (size_t)g->batch};
            size_t local[3] = {l, l, 1};
            gemm_arg args[] = {{sizeof(cl_mem), &wbuf}, {sizeof(cl_mem), &wbuf}, {sizeof(cl_mem), &cbuf},
                               {sizeof(cl_mem), &dArg}, {sizeof(cl_mem), &biasArg}, {sizeof p, &p},
                               {accsz, pal}, {accsz, pbe}};
            s = gemm_launch(dev, stream, main_k, global, local, args, 8);
        }
    }
    /* The allocator reuses the block only after the queued work is done. */
    tocl_status fs = ws ? tocl_mem_free(ws) : TOCL_OK;
    return s != TOCL_OK ? s : fs;
}

tocl_status tocl_gemm_run_with(int dev, int stream, const tocl_gemm_desc *g, gemm_path path,
                               const tocl_gemm_config *cfg_in) {
    return gemm_run(dev, stream, g, path, cfg_in, NULL, NULL, NULL);
}

tocl_status tocl_gemm_run_packed_b(int dev, int stream, const tocl_gemm_desc *g, const tocl_gemm_config *cfg,
                                   const tocl_gemm_packed_b *pb) {
    tocl_gemm_packed b;
    if (pb)
        b.buf = pb->buf, b.off = pb->off, b.bs = pb->bs, b.ps = 0;
    return gemm_run(dev, stream, g, GEMM_PATH_PACKED, cfg, NULL, pb ? &b : NULL, NULL);
}

tocl_status tocl_gemm_run_packed(int dev, int stream, const tocl_gemm_desc *g, const tocl_gemm_config *cfg,
                                 const tocl_gemm_packed *pa, const tocl_gemm_packed *pb) {
    return gemm_run(dev, stream, g, GEMM_PATH_PACKED, cfg, pa, pb, NULL);
}

tocl_status tocl_gemm_pack_into(int dev, int stream, tocl_dtype dt, const tocl_gemm_config *cfg, int b_side,
                                const tocl_gemm_operand *src, int64_t batch, int64_t rows, int64_t depth,
                                const tocl_gemm_packed *dst) {
    tocl_dtype acc = dt == TOCL_F64 ? TOCL_F64 : TOCL_F32;
    if (dt != acc || tocl_dev_props(dev)->kind != TOCL_DEVICE_CPU || rows <= 0 || depth <= 0 || batch <= 0)
        return batch <= 0 || rows <= 0 || depth <= 0 ? TOCL_OK
                                                     : tocl_fail(TOCL_E_INVALID, "gemm: packing an operand needs a CPU "
                                                                 "device and float32 or float64");
    int64_t w = b_side ? (int64_t)cfg->vw * cfg->nv : cfg->rm;
    cl_mem sbuf;
    cl_long off;
    TOCL_TRY(gemm_resolve(dev, dt, src, batch, rows, depth, "gemm operand to pack", &sbuf, &off));
    tocl_ops_kernel *pack;
    TOCL_TRY(gemm_kernel(dev, dt, cfg, "tocl_gemm_pack", &pack));
    tocl_gemm_pack_params pp;
    memset(&pp, 0, sizeof pp);
    pp.off = off, pp.bs = src->bs, pp.rs = src->rs, pp.ks = src->cs, pp.rows = rows, pp.depth = depth;
    pp.width = w, pp.dst_off = dst->off, pp.dst_bs = dst->bs;
    size_t panels = (size_t)((rows + w - 1) / w);
    size_t global[3] = {(size_t)round_up(depth, GEMM_PACK_LOCAL), panels, (size_t)batch};
    size_t local[3] = {GEMM_PACK_LOCAL, 1, 1};
    if (pp.rs == 1 && pp.ks != 1) { /* rows contiguous: panels fastest (see gemm_run) */
        pp.panel_fast = 1;
        global[0] = (size_t)round_up((int64_t)panels, GEMM_PACK_TILE);
        global[1] = (size_t)round_up(depth, GEMM_PACK_TILE);
        local[0] = local[1] = GEMM_PACK_TILE;
    }
    cl_mem dbuf = dst->buf;
    gemm_arg args[] = {{sizeof(cl_mem), &sbuf}, {sizeof(cl_mem), &dbuf}, {sizeof pp, &pp}};
    return gemm_launch(dev, stream, pack, global, local, args, 3);
}

tocl_status tocl_gemm(int dev, int stream, const tocl_gemm_desc *g) {
    return tocl_gemm_run_with(dev, stream, g, GEMM_PATH_AUTO, NULL);
}

tocl_status tocl_gemm_normed(int dev, int stream, const tocl_gemm_desc *g, const tocl_gemm_norm *n) {
    if (!n)
        return tocl_fail(TOCL_E_INVALID, "gemm: the normalisation is NULL");
    return gemm_run(dev, stream, g, GEMM_PATH_AUTO, NULL, NULL, NULL, n);
}
