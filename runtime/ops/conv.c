/* conv.c - host side of convolution (include/tocl/conv.h): im2col/col2im
 * launches (kernels/conv.cl) around grouped GEMMs (tocl/gemm.h).
 *
 * Groups and batch items both have one stride in every operand, so a
 * grouped product is one batched GEMM over the larger of the two and a
 * host loop over the smaller: a plain convolution is one GEMM over the
 * batch, a depthwise one a GEMM per batch item over the channels. The
 * column matrix is built for as many batch items as fit CONV_COL_BUDGET;
 * larger batches run in chunks. CPU devices take the implicit products
 * (conv_implicit.c) and the depthwise kernels (conv_depthwise.c) where
 * they apply; the entry points here choose. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/conv_internal.h"

/* Column workspace per chunk: large enough that a chunk's GEMM amortises
 * its launches, small enough to stay a modest share of device memory.
 * TORCH_OCL_CONV_WORKSPACE (bytes) overrides it, so tests reach chunking
 * with small tensors. */
#define CONV_COL_BUDGET ((int64_t)256 << 20)
/* The input gradient's product folds the batch into its columns below this
 * many output positions (tocl_conv_backward_data); TORCH_OCL_CONV_FOLD=0
 * keeps one product per batch item (comparisons). */
#define CONV_FOLD_L 128

int64_t tocl_conv_budget(void) {
    const char *v = tocl_env("TORCH_OCL_CONV_WORKSPACE");
    long long b = v ? atoll(v) : 0;
    return b > 0 ? (int64_t)b : CONV_COL_BUDGET;
}

/* TORCH_OCL_CONV_PACKED=0 turns the packed im2col off (comparisons, tests). */
static int conv_packed_enabled(void) {
    return !tocl_env_off("TORCH_OCL_CONV_PACKED");
}

/* TORCH_OCL_CONV_DEPTHWISE=0 sends depthwise convolutions (forward and
 * both gradients) through im2col + GEMM. */
static int conv_depthwise_enabled(void) {
    return !tocl_env_off("TORCH_OCL_CONV_DEPTHWISE");
}

/* A pointwise convolution's weight gradient as GEMMs over x and dy in place
 * (pointwise_wgrad below); TORCH_OCL_CONV_WGRAD_GEMM=0 keeps conv_wg. */
static int conv_wgrad_gemm_enabled(void) {
    return !tocl_env_off("TORCH_OCL_CONV_WGRAD_GEMM");
}

/* ------------------------------------------------------------ geometry */

static int64_t vol3(const int64_t *s) { return s[0] * s[1] * s[2]; }


static tocl_status conv_check(const tocl_conv_desc *d, const char *what, conv_geo *g) {
    if (!d)
        return tocl_fail(TOCL_E_INVALID, "%s: descriptor is NULL", what);
    if (d->nd < 1 || d->nd > TOCL_CONV_MAX_DIMS)
        return tocl_fail(TOCL_E_INVALID, "%s: %d spatial dims; expected 1 to %d", what, d->nd, TOCL_CONV_MAX_DIMS);
    if (d->groups < 1 || d->batch < 0 || d->cx < 0 || d->cy < 0 || d->cx % d->groups || d->cy % d->groups)
        return tocl_fail(TOCL_E_INVALID, "%s: channels (%lld in, %lld out) must be non-negative multiples of groups "
                         "(%lld), batch (%lld) non-negative", what, (long long)d->cx, (long long)d->cy,
                         (long long)d->groups, (long long)d->batch);
    memset(g, 0, sizeof *g);
    for (int i = 0; i < 3; i++) {
        int s = i - (3 - d->nd); /* source dim, < 0 for padding dims */
        g->x[i] = s < 0 ? 1 : d->x[s];
        g->y[i] = s < 0 ? 1 : d->y[s];
        g->k[i] = s < 0 ? 1 : d->k[s];
        g->s[i] = s < 0 ? 1 : d->stride[s];
        g->p[i] = s < 0 ? 0 : d->pad[s];
        g->d[i] = s < 0 ? 1 : d->dilation[s];
        if (g->x[i] < 0 || g->y[i] < 0 || g->k[i] < 0 || g->s[i] < 1 || g->p[i] < 0 || g->d[i] < 1)
            return tocl_fail(TOCL_E_INVALID, "%s: dim %d has sizes x %lld, y %lld, kernel %lld, stride %lld, padding "
                             "%lld, dilation %lld; sizes and padding must be >= 0, stride and dilation >= 1", what, s,
                             (long long)g->x[i], (long long)g->y[i], (long long)g->k[i], (long long)g->s[i],
                             (long long)g->p[i], (long long)g->d[i]);
    }
    g->xvol = vol3(g->x), g->L = vol3(g->y), g->kvol = vol3(g->k);
    g->cxg = d->cx / d->groups, g->cyg = d->cy / d->groups, g->Kg = g->cxg * g->kvol;
    return TOCL_OK;
}

/* 1x1 kernel, stride 1, no padding: the column matrix is x itself. */
int tocl_conv_pointwise(const conv_geo *g) {
    for (int i = 0; i < 3; i++)
        if (g->k[i] != 1 || g->s[i] != 1 || g->p[i] != 0 || g->x[i] != g->y[i])
            return 0;
    return 1;
}

static void conv_params_init(const conv_geo *g, int64_t n, int64_t c, tocl_conv_params *p) {
    memset(p, 0, sizeof *p);
    p->N = n, p->C = c;
    p->x0 = g->x[0], p->x1 = g->x[1], p->x2 = g->x[2];
    p->y0 = g->y[0], p->y1 = g->y[1], p->y2 = g->y[2];
    p->k0 = g->k[0], p->k1 = g->k[1], p->k2 = g->k[2];
    p->s0 = g->s[0], p->s1 = g->s[1], p->s2 = g->s[2];
    p->p0 = g->p[0], p->p1 = g->p[1], p->p2 = g->p[2];
    p->d0 = g->d[0], p->d1 = g->d[1], p->d2 = g->d[2];
    p->kvol = g->kvol, p->L = g->L, p->xvol = g->xvol;
}

/* Batch items per chunk so that `per_item` workspace elements each fit the budget. */
int64_t tocl_conv_chunk(int64_t batch, int64_t per_item, size_t esz) {
    int64_t n = per_item > 0 ? tocl_conv_budget() / (per_item * (int64_t)esz) : batch;
    if (n < 1)
        n = 1;
    return n < batch ? n : batch;
}

/* ------------------------------------------------------------ operands */


static tocl_status conv_operand(int dev, const tocl_tensor *t, tocl_dtype dt, int64_t numel, const char *what,
                                conv_opnd *o) {
    if (!t)
        return tocl_fail(TOCL_E_INVALID, "convolution: %s is NULL", what);
    if (t->dtype != dt)
        return tocl_fail(TOCL_E_INVALID, "convolution: %s has dtype %s, expected %s like the other operands", what,
                         tocl_dtype_name(t->dtype), tocl_dtype_name(dt));
    o->addr = t->data;
    return tocl_nn_operand(dev, t, what, numel, &o->buf, &o->off);
}

/* A workspace of n elements (tied to the stream) resolved for kernels. */
tocl_status tocl_conv_workspace(int dev, int stream, int64_t n, size_t esz, conv_opnd *o) {
    tocl_ops_scratch w;
    memset(o, 0, sizeof *o);
    TOCL_TRY(tocl_ops_scratch_get(dev, stream, n, esz, &w));
    o->addr = w.addr, o->buf = w.buf, o->off = w.off;
    return TOCL_OK;
}

tocl_status tocl_conv_workspaces_free(tocl_status s, conv_opnd *const *ws, int n) {
    for (int i = 0; i < n; i++) {
        tocl_status fs = ws[i]->addr ? tocl_mem_free(ws[i]->addr) : TOCL_OK;
        if (s == TOCL_OK)
            s = fs;
    }
    return s;
}

/* ------------------------------------------------------------ kernels */

/* extra: further build options ("" for none). */
tocl_status tocl_conv_kernel(int dev, tocl_dtype dt, const char *extra, const char *name, tocl_ops_kernel **k) {
    char opts[1024];
    TOCL_TRY(tocl_nn_options(dev, "X", &dt, 1, opts, sizeof opts - 64));
    const char *bits = dt == TOCL_F64 ? "ulong" : dt == TOCL_F32 ? "uint" : "ushort";
    size_t len = strlen(opts);
    snprintf(opts + len, sizeof opts - len, " -DCV_BITS=%s%s", bits, extra);
    return tocl_ops_kernel_get(dev, "conv", name, opts, k);
}

tocl_status tocl_conv_launch_opt(int dev, int stream, tocl_dtype dt, const char *extra, const char *name,
                                   int64_t items, const tocl_ops_arg *args, int nargs) {
    if (items <= 0)
        return TOCL_OK;
    tocl_ops_kernel *k;
    TOCL_TRY(tocl_conv_kernel(dev, dt, extra, name, &k));
    size_t local = tocl_nn_item_size(dev, k);
    size_t global = ((size_t)items + local - 1) / local * local;
    return tocl_nn_launch(dev, stream, k, global, local, args, nargs);
}

static tocl_status conv_launch(int dev, int stream, tocl_dtype dt, const char *name, int64_t items,
                               const tocl_ops_arg *args, int nargs) {
    return tocl_conv_launch_opt(dev, stream, dt, "", name, items, args, nargs);
}

/* col[n, r, q] (strides p->col_sn, p->col_sr, 1) := x windows. */
static tocl_status conv_im2col(int dev, int stream, tocl_dtype dt, cl_mem x, cl_mem col, const tocl_conv_params *p) {
    tocl_ops_arg a[] = {{sizeof x, &x}, {sizeof col, &col}, {sizeof *p, p}};
    return conv_launch(dev, stream, dt, "conv_im2col", p->N * p->C * p->kvol * p->y0 * p->y1, a, 3);
}

/* dst [c, n, L] := src [n, c, L] for n items of c channels over g's L output
 * positions: im2col with a 1x1 window over y is that copy. */
static tocl_status conv_channels_first(int dev, int stream, tocl_dtype dt, const conv_geo *g, int64_t n, int64_t c,
                                       cl_mem src, cl_long src_off, cl_mem dst, cl_long dst_off) {
    conv_geo gy = *g;
    for (int i = 0; i < 3; i++)
        gy.x[i] = g->y[i], gy.k[i] = 1, gy.s[i] = 1, gy.p[i] = 0, gy.d[i] = 1;
    gy.xvol = g->L, gy.kvol = 1;
    tocl_conv_params p;
    conv_params_init(&gy, n, c, &p);
    p.x_off = src_off;
    p.col_off = dst_off, p.col_sn = g->L, p.col_sr = n * g->L;
    return conv_im2col(dev, stream, dt, src, dst, &p);
}

/* x := col2im(col) + bias; col holds float32 when col_f32 (16-bit x), else x's dtype. */
static tocl_status conv_col2im(int dev, int stream, tocl_dtype dt, int col_f32, cl_mem col, cl_mem x, cl_mem bias,
                               const tocl_conv_params *p) {
    if (!bias)
        bias = x; /* never read */
    tocl_ops_arg a[] = {{sizeof col, &col}, {sizeof x, &x}, {sizeof bias, &bias}, {sizeof *p, p}};
    return tocl_conv_launch_opt(dev, stream, dt, col_f32 ? " -DCV_COL_F32" : "", "conv_col2im",
                           p->N * p->C * p->x0 * p->x1, a, 4);
}

/* dst (n float32 elements) := src (n elements of dtype dt), both dense. */
static tocl_status conv_widen(int dev, int stream, tocl_dtype dt, tocl_addr src, tocl_addr dst, int64_t n) {
    tocl_tensor s = {src, dt, 1, {n}, {1}}, d = {dst, TOCL_F32, 1, {n}, {1}};
    return tocl_op_copy(dev, stream, &d, &s);
}

/* col[n, r, q] in the GEMM's packed layout of B (panel width p->pw). */
static tocl_status conv_im2col_packed(int dev, int stream, tocl_dtype dt, cl_mem x, cl_mem col,
                                      const tocl_conv_params *p) {
    tocl_ops_arg a[] = {{sizeof x, &x}, {sizeof col, &col}, {sizeof *p, p}};
    return conv_launch(dev, stream, dt, "conv_im2col_packed", p->N * p->C * p->kvol * p->y0 * p->y1, a, 3);
}

/* ------------------------------------------------------------ grouped GEMM */

/* Strides of the operands A, B, C and bias over batch items (n) and groups (g). */
typedef struct conv_strides {
    int64_t n[4], g[4];
} conv_strides;

/* g0 with every operand at item 0 / group 0, run for nb items x G groups:
 * a batched GEMM over the larger count, a loop over the smaller. */
static tocl_status conv_gemm(int dev, int stream, const tocl_gemm_desc *g0, int64_t nb, int64_t G,
                             const conv_strides *st) {
    int over_g = G >= nb;
    int64_t loops = over_g ? nb : G;
    const int64_t *bs = over_g ? st->g : st->n, *step = over_g ? st->n : st->g;
    size_t esz = tocl_dtype_size(g0->dtype);
    tocl_gemm_operand *ops[4];
    for (int64_t i = 0; i < loops; i++) {
        tocl_gemm_desc g = *g0;
        g.batch = over_g ? G : nb;
        ops[0] = &g.a, ops[1] = &g.b, ops[2] = &g.c, ops[3] = &g.bias;
        for (int k = 0; k < 4; k++) {
            if (!ops[k]->data)
                continue;
            ops[k]->bs = bs[k];
            ops[k]->data += (tocl_addr)(i * step[k]) * esz;
        }
        if (g.d.data) /* the beta input is C itself (weight-gradient chunks) */
            g.d = g.c;
        TOCL_TRY(tocl_gemm(dev, stream, &g));
    }
    return TOCL_OK;
}

/* ------------------------------------------------------------ entry points */

tocl_status tocl_conv_forward(int dev, int stream, const tocl_conv_desc *d, const tocl_tensor *x,
                              const tocl_tensor *w, const tocl_tensor *bias, const tocl_tensor *y) {
    conv_geo g;
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(conv_check(d, "conv_forward", &g));
    tocl_dtype dt = x ? x->dtype : TOCL_F32;
    conv_opnd ox, ow, ob = {0}, oy;
    TOCL_TRY(conv_operand(dev, x, dt, d->batch * d->cx * g.xvol, "input", &ox));
    TOCL_TRY(conv_operand(dev, w, dt, d->cy * g.Kg, "weight", &ow));
    TOCL_TRY(conv_operand(dev, y, dt, d->batch * d->cy * g.L, "output", &oy));
    if (bias)
        TOCL_TRY(conv_operand(dev, bias, dt, d->cy, "bias", &ob));
    if (d->batch * d->cy * g.L == 0)
        return TOCL_OK;
    if (g.cxg == 1 && conv_depthwise_enabled() && tocl_conv_dw2d_usable(&g, 0)) {
        tocl_conv_dw_params q = {d->batch, d->cy, d->cx, g.cyg, g.x[1], g.x[2], g.y[1], g.y[2], g.p[1], g.p[2], 0,
                                 ox.off, ow.off, oy.off, ob.off, bias != NULL};
        return tocl_conv_dw2d_run(dev, stream, dt, &g, 0, ox.buf, ow.buf, bias ? ob.buf : ow.buf, oy.buf, &q);
    }
    if (g.cxg == 1 && conv_depthwise_enabled()) { /* one x channel per group: direct */
        tocl_conv_params p;
        conv_params_init(&g, d->batch, d->cx, &p);
        p.x_off = ox.off, p.cy = d->cy, p.cyg = g.cyg, p.w_off = ow.off, p.y_off = oy.off;
        p.b_off = ob.off, p.has_bias = bias != NULL;
        cl_mem bbuf = bias ? ob.buf : ow.buf; /* never read without bias */
        tocl_ops_arg a[] = {{sizeof ox.buf, &ox.buf}, {sizeof ow.buf, &ow.buf}, {sizeof bbuf, &bbuf},
                            {sizeof oy.buf, &oy.buf}, {sizeof p, &p}};
        return conv_launch(dev, stream, dt, "conv_depthwise", d->batch * d->cy * g.y[0] * g.y[1], a, 5);
    }
    int amx = tocl_conv_amx_usable(dev, stream, d, &g, dt, 0);
    if (amx || tocl_conv_ig_usable(dev, d, &g, dt, 1)) { /* implicit GEMM, no column matrix */
        conv_ig_job j = {ox.buf, ow.buf, oy.buf, bias ? ob.buf : NULL, ox.off, ow.off, oy.off, ob.off,
                         d->batch, d->cx, d->cy, {0}, {0}, {0}, {0}, {0}, 0, bias != NULL, {0}};
        for (int i = 0; i < 3; i++)
            j.sx[i] = g.x[i], j.pad[i] = g.p[i], j.k[i] = g.k[i], j.dil[i] = g.d[i], j.so[i] = g.y[i],
            j.st[i] = g.s[i];
        return amx ? tocl_conv_amx_run(dev, stream, &j) : tocl_conv_ig_run(dev, stream, dt, &j);
    }
    size_t esz = tocl_dtype_size(dt);
    int pw = tocl_conv_pointwise(&g);
    /* CPU, one group, float32/float64: im2col writes the GEMM's packed
     * layout itself (no column matrix, no packing pass). The register
     * block, hence the panel width, is the same for every size on a CPU. */
    tocl_gemm_config cfg;
    int packed = !pw && d->groups == 1 && (dt == TOCL_F32 || dt == TOCL_F64) && conv_packed_enabled() &&
                 tocl_dev_props(dev)->kind == TOCL_DEVICE_CPU && g.Kg > 0;
    int64_t W = 1;
    if (packed) {
        TOCL_TRY(tocl_gemm_pick_config(dev, stream, dt, d->batch, g.cyg, g.L, g.Kg, &cfg));
        W = (int64_t)cfg.vw * cfg.nv;
    }
    int64_t colsz = packed ? (g.L + W - 1) / W * W * g.Kg : d->cx * g.kvol * g.L;
    int64_t nb = pw ? d->batch : tocl_conv_chunk(d->batch, colsz, esz);
    if (packed && nb < d->batch) { /* tiles for the chunk's batch */
        TOCL_TRY(tocl_gemm_pick_config(dev, stream, dt, nb, g.cyg, g.L, g.Kg, &cfg));
        if ((int64_t)cfg.vw * cfg.nv != W)
            return tocl_fail(TOCL_E_INTERNAL, "conv_forward: the GEMM's panel width changed with the batch");
    }
    conv_opnd col = {0};
    if (!pw)
        TOCL_TRY(tocl_conv_workspace(dev, stream, nb * colsz, esz, &col));
    tocl_status s = TOCL_OK;
    for (int64_t n0 = 0; n0 < d->batch && s == TOCL_OK; n0 += nb) {
        int64_t nc = d->batch - n0 < nb ? d->batch - n0 : nb;
        if (packed) {
            tocl_conv_params p;
            conv_params_init(&g, nc, d->cx, &p);
            p.x_off = ox.off + n0 * d->cx * g.xvol;
            p.col_off = col.off, p.col_sn = colsz, p.pw = W;
            s = conv_im2col_packed(dev, stream, dt, ox.buf, col.buf, &p);
            tocl_gemm_desc m = tocl_gemm_desc_init(dt, g.cyg, g.L, g.Kg);
            m.batch = nc;
            m.a = (tocl_gemm_operand){ow.addr, 0, g.Kg, 1};
            m.c = (tocl_gemm_operand){oy.addr + (tocl_addr)(n0 * d->cy * g.L) * esz, d->cy * g.L, g.L, 1};
            if (bias) {
                m.bias = (tocl_gemm_operand){ob.addr, 0, 0, 1};
                m.bias_mode = TOCL_GEMM_BIAS_COL;
            }
            tocl_gemm_packed_b pb = {col.buf, col.off, colsz};
            if (s == TOCL_OK)
                s = tocl_gemm_run_packed_b(dev, stream, &m, &cfg, &pb);
            continue;
        }
        tocl_gemm_desc m = tocl_gemm_desc_init(dt, g.cyg, g.L, g.Kg);
        m.a = (tocl_gemm_operand){ow.addr, 0, g.Kg, 1};
        m.c = (tocl_gemm_operand){oy.addr + (tocl_addr)(n0 * d->cy * g.L) * esz, 0, g.L, 1};
        if (bias) {
            m.bias = (tocl_gemm_operand){ob.addr, 0, 0, 1};
            m.bias_mode = TOCL_GEMM_BIAS_COL;
        }
        conv_strides st = {{0, colsz, d->cy * g.L, 0}, {g.cyg * g.Kg, g.Kg * g.L, g.cyg * g.L, g.cyg}};
        if (pw) {
            m.b = (tocl_gemm_operand){ox.addr, 0, g.L, 1};
            st.n[1] = d->cx * g.L;
        } else {
            tocl_conv_params p;
            conv_params_init(&g, nc, d->cx, &p);
            p.x_off = ox.off + n0 * d->cx * g.xvol;
            p.col_off = col.off, p.col_sn = colsz, p.col_sr = g.L;
            s = conv_im2col(dev, stream, dt, ox.buf, col.buf, &p);
            m.b = (tocl_gemm_operand){col.addr, 0, g.L, 1};
        }
        if (s == TOCL_OK)
            s = conv_gemm(dev, stream, &m, nc, d->groups, &st);
    }
    tocl_status fs = col.addr ? tocl_mem_free(col.addr) : TOCL_OK;
    return s != TOCL_OK ? s : fs;
}

tocl_status tocl_conv_backward_data(int dev, int stream, const tocl_conv_desc *d, const tocl_tensor *y,
                                    const tocl_tensor *w, const tocl_tensor *bias, const tocl_tensor *x) {
    conv_geo g;
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(conv_check(d, "conv_backward_data", &g));
    tocl_dtype dt = y ? y->dtype : TOCL_F32;
    conv_opnd ox, ow, ob = {0}, oy;
    TOCL_TRY(conv_operand(dev, y, dt, d->batch * d->cy * g.L, "grad_output", &oy));
    TOCL_TRY(conv_operand(dev, w, dt, d->cy * g.Kg, "weight", &ow));
    TOCL_TRY(conv_operand(dev, x, dt, d->batch * d->cx * g.xvol, "grad_input", &ox));
    if (bias)
        TOCL_TRY(conv_operand(dev, bias, dt, d->cx, "bias", &ob));
    if (d->batch * d->cx * g.xvol == 0)
        return TOCL_OK;
    if (g.cxg == 1 && conv_depthwise_enabled() && tocl_conv_dw2d_usable(&g, 1)) {
        /* stride 1: a convolution of dy padded by k - 1 - p with the flipped kernel */
        tocl_conv_dw_params q = {d->batch, d->cx, d->cy, g.cyg, g.y[1], g.y[2], g.x[1], g.x[2],
                                 g.k[1] - 1 - g.p[1], g.k[2] - 1 - g.p[2], 0, oy.off, ow.off, ox.off, ob.off,
                                 bias != NULL};
        return tocl_conv_dw2d_run(dev, stream, dt, &g, 1, oy.buf, ow.buf, bias ? ob.buf : ow.buf, ox.buf, &q);
    }
    if (g.cxg == 1 && conv_depthwise_enabled()) { /* one x channel per group: direct */
        tocl_conv_params p;
        conv_params_init(&g, d->batch, d->cx, &p);
        p.x_off = ox.off, p.cy = d->cy, p.cyg = g.cyg, p.w_off = ow.off, p.y_off = oy.off;
        p.b_off = ob.off, p.has_bias = bias != NULL;
        cl_mem bbuf = bias ? ob.buf : ow.buf; /* never read without bias */
        tocl_ops_arg a[] = {{sizeof oy.buf, &oy.buf}, {sizeof ow.buf, &ow.buf}, {sizeof bbuf, &bbuf},
                            {sizeof ox.buf, &ox.buf}, {sizeof p, &p}};
        return conv_launch(dev, stream, dt, "conv_depthwise_bwd_data", d->batch * d->cx * g.x[0] * g.x[1], a, 5);
    }
    /* stride 1: the input gradient is a stride-1 convolution of y padded
     * by d * (k - 1) - p with the transposed, flipped kernel; the implicit
     * GEMM sums every tap of an x element in float and rounds it once */
    int amx = tocl_conv_amx_usable(dev, stream, d, &g, dt, 1);
    int ig = amx || tocl_conv_ig_usable(dev, d, &g, dt, 0);
    for (int i = 0; i < 3 && ig; i++)
        ig = g.p[i] <= g.d[i] * (g.k[i] - 1);
    if (ig) {
        conv_ig_job j = {oy.buf, ow.buf, ox.buf, bias ? ob.buf : NULL, oy.off, ow.off, ox.off, ob.off,
                         d->batch, d->cy, d->cx, {0}, {0}, {0}, {0}, {0}, 1, bias != NULL, {1, 1, 1}};
        for (int i = 0; i < 3; i++)
            j.sx[i] = g.y[i], j.pad[i] = g.d[i] * (g.k[i] - 1) - g.p[i], j.k[i] = g.k[i], j.dil[i] = g.d[i],
            j.so[i] = g.x[i];
        return amx ? tocl_conv_amx_run(dev, stream, &j) : tocl_conv_ig_run(dev, stream, dt, &j);
    }
    size_t esz = tocl_dtype_size(dt);
    int pw = tocl_conv_pointwise(&g);
    /* 16-bit storage: overlapping taps are summed by col2im, so the columns
     * stay float32 (w and y widened for the product) and each x element is
     * rounded once; rounding the columns first would round twice. */
    int wide = !pw && (dt == TOCL_F16 || dt == TOCL_BF16);
    tocl_dtype ct = wide ? TOCL_F32 : dt;
    size_t cesz = tocl_dtype_size(ct);
    int64_t colsz = d->cx * g.kvol * g.L, ysz = d->cy * g.L;
    /* Few output positions, one group: one product over the chunk's batch,
     * col [Kg, n, L] = w^T @ yT with yT [cy, n, L], instead of one product
     * of L columns per item (ResNet-18's layer4.0.conv1 at 64x64, L = 4,
     * batch 8: thin products on the direct kernel, 19 ms, now 4). Up to
     * CONV_FOLD_L: at L = 100 5.2 against 6.2 ms, at 196 the same, at 784
     * per item was faster. */
    int fold = !pw && d->groups == 1 && g.L < CONV_FOLD_L && !tocl_env_off("TORCH_OCL_CONV_FOLD");
    int64_t nb = pw ? d->batch : tocl_conv_chunk(d->batch, colsz + (wide ? ysz : 0) + (fold ? ysz : 0), cesz);
    conv_opnd col = {0}, w32 = {0}, y32 = {0}, yt = {0};
    tocl_status s = TOCL_OK;
    if (!pw)
        s = tocl_conv_workspace(dev, stream, nb * colsz, cesz, &col);
    if (fold && s == TOCL_OK)
        s = tocl_conv_workspace(dev, stream, nb * ysz, cesz, &yt);
    if (wide && s == TOCL_OK)
        s = tocl_conv_workspace(dev, stream, d->cy * g.Kg, cesz, &w32);
    if (wide && s == TOCL_OK)
        s = tocl_conv_workspace(dev, stream, nb * ysz, cesz, &y32);
    if (wide && s == TOCL_OK)
        s = conv_widen(dev, stream, dt, ow.addr, w32.addr, d->cy * g.Kg);
    for (int64_t n0 = 0; n0 < d->batch && s == TOCL_OK; n0 += nb) {
        int64_t nc = d->batch - n0 < nb ? d->batch - n0 : nb;
        tocl_addr yaddr = oy.addr + (tocl_addr)(n0 * ysz) * esz;
        conv_opnd ysrc = {yaddr, oy.buf, oy.off + n0 * ysz};
        if (wide) {
            s = conv_widen(dev, stream, dt, yaddr, y32.addr, nc * ysz);
            yaddr = y32.addr, ysrc = y32;
            if (s != TOCL_OK)
                break;
        }
        tocl_conv_params p;
        conv_params_init(&g, nc, d->cx, &p);
        p.x_off = ox.off + n0 * d->cx * g.xvol;
        p.b_off = ob.off, p.has_bias = bias != NULL;
        if (fold) {
            s = conv_channels_first(dev, stream, ct, &g, nc, d->cy, ysrc.buf, ysrc.off, yt.buf, yt.off);
            tocl_gemm_desc m = tocl_gemm_desc_init(ct, g.Kg, nc * g.L, d->cy);
            m.a = (tocl_gemm_operand){wide ? w32.addr : ow.addr, 0, 1, g.Kg};
            m.b = (tocl_gemm_operand){yt.addr, 0, nc * g.L, 1};
            m.c = (tocl_gemm_operand){col.addr, 0, nc * g.L, 1};
            if (s == TOCL_OK)
                s = tocl_gemm(dev, stream, &m);
            p.col_off = col.off, p.col_sn = g.L, p.col_sr = nc * g.L;
            if (s == TOCL_OK)
                s = conv_col2im(dev, stream, dt, wide, col.buf, ox.buf, bias ? ob.buf : NULL, &p);
            continue;
        }
        /* col = w^T @ y: w is [cy, Kg], read transposed in place. */
        tocl_gemm_desc m = tocl_gemm_desc_init(ct, g.Kg, g.L, g.cyg);
        m.a = (tocl_gemm_operand){wide ? w32.addr : ow.addr, 0, 1, g.Kg};
        m.b = (tocl_gemm_operand){yaddr, 0, g.L, 1};
        conv_strides st = {{0, d->cy * g.L, colsz, 0}, {g.cyg * g.Kg, g.cyg * g.L, g.Kg * g.L, g.cxg}};
        if (pw) { /* col2im is the identity: write x, bias in the epilogue */
            m.c = (tocl_gemm_operand){ox.addr + (tocl_addr)(n0 * d->cx * g.L) * esz, 0, g.L, 1};
            st.n[2] = d->cx * g.L;
            if (bias) {
                m.bias = (tocl_gemm_operand){ob.addr, 0, 0, 1};
                m.bias_mode = TOCL_GEMM_BIAS_COL;
            }
            s = conv_gemm(dev, stream, &m, nc, d->groups, &st);
            continue;
        }
        m.c = (tocl_gemm_operand){col.addr, 0, g.L, 1};
        s = conv_gemm(dev, stream, &m, nc, d->groups, &st);
        p.col_off = col.off, p.col_sn = colsz, p.col_sr = g.L;
        if (s == TOCL_OK)
            s = conv_col2im(dev, stream, dt, wide, col.buf, ox.buf, bias ? ob.buf : NULL, &p);
    }
    conv_opnd *ws[] = {&col, &w32, &y32, &yt};
    return tocl_conv_workspaces_free(s, ws, 4);
}

/* A 1x1 (pointwise) convolution with stride 1, no padding and one group, in
 * float32 on a CPU device, with more output than input channels:
 * gw = sum over n of dy[n] (cy x L) @ x[n]^T (L x cx), one GEMM per batch
 * item adding into gw in batch order. dy is the A operand, read in place
 * (its rows run along L); only x is packed. conv_wg first transposes dy,
 * here the larger operand (64 -> 256 channels at 56x56, batch 8: dyt 4.2 ms
 * and its product 3.9 ms of device time). With cy < cx the GEMM would pack
 * the larger one, and measured slower than conv_wg (0.75-0.78x). */
static int pointwise_wgrad_usable(int dev, const tocl_conv_desc *d, const conv_geo *g, tocl_dtype dt) {
    if (dt != TOCL_F32 || d->groups != 1 || g->kvol != 1 || d->cy <= d->cx || d->batch < 1 || g->L < 1 ||
        !conv_wgrad_gemm_enabled() || tocl_dev_props(dev)->kind != TOCL_DEVICE_CPU)
        return 0;
    for (int i = 0; i < 3; i++)
        if (g->s[i] != 1 || g->p[i] != 0)
            return 0;
    return 1;
}

static tocl_status pointwise_wgrad(int dev, int stream, const tocl_conv_desc *d, const conv_geo *g,
                                   const conv_opnd *ox, const conv_opnd *oy, const conv_opnd *ow) {
    const int64_t L = g->L, cx = d->cx, cy = d->cy;
    for (int64_t n = 0; n < d->batch; n++) {
        tocl_gemm_desc m = tocl_gemm_desc_init(TOCL_F32, cy, cx, L);
        m.a = (tocl_gemm_operand){oy->addr + (tocl_addr)(n * cy * L) * sizeof(float), 0, L, 1};
        m.b = (tocl_gemm_operand){ox->addr + (tocl_addr)(n * cx * L) * sizeof(float), 0, 1, L};
        m.c = (tocl_gemm_operand){ow->addr, 0, cx, 1};
        if (n > 0) { /* later batch items add to the earlier ones */
            m.d = m.c;
            m.beta = 1.0;
        }
        TOCL_TRY(tocl_gemm(dev, stream, &m));
    }
    return TOCL_OK;
}

tocl_status tocl_conv_backward_weight(int dev, int stream, const tocl_conv_desc *d, const tocl_tensor *x,
                                      const tocl_tensor *y, const tocl_tensor *gw) {
    conv_geo g;
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(conv_check(d, "conv_backward_weight", &g));
    tocl_dtype dt = x ? x->dtype : TOCL_F32;
    conv_opnd ox, oy, ow;
    TOCL_TRY(conv_operand(dev, x, dt, d->batch * d->cx * g.xvol, "input", &ox));
    TOCL_TRY(conv_operand(dev, y, dt, d->batch * d->cy * g.L, "grad_output", &oy));
    TOCL_TRY(conv_operand(dev, gw, dt, d->cy * g.Kg, "grad_weight", &ow));
    if (d->cy * g.Kg == 0)
        return TOCL_OK;
    if (g.cxg == 1 && conv_depthwise_enabled() && tocl_conv_dw2d_usable(&g, 0)) {
        tocl_conv_dw_params q = {d->batch, d->cy, d->cx, g.cyg, g.x[1], g.x[2], g.y[1], g.y[2], g.p[1], g.p[2], 0,
                                 ox.off, ow.off, oy.off, 0, 0};
        return tocl_conv_dw2d_bwd_w(dev, stream, dt, &g, ox.buf, oy.buf, ow.buf, &q);
    }
    if (g.cxg == 1 && conv_depthwise_enabled()) { /* one x channel per group: direct */
        tocl_conv_params p;
        conv_params_init(&g, d->batch, d->cx, &p);
        p.x_off = ox.off, p.cy = d->cy, p.cyg = g.cyg, p.w_off = ow.off, p.y_off = oy.off;
        tocl_ops_arg a[] = {{sizeof ox.buf, &ox.buf}, {sizeof oy.buf, &oy.buf}, {sizeof ow.buf, &ow.buf},
                            {sizeof p, &p}};
        return conv_launch(dev, stream, dt, "conv_depthwise_bwd_weight", d->cy * g.kvol, a, 4);
    }
    if (tocl_conv_amx_usable(dev, stream, d, &g, dt, 0) && d->batch > 0 && g.L > 0)
        return tocl_conv_amx_wg_run(dev, stream, d, &g, &ox, &oy, &ow);
    if (pointwise_wgrad_usable(dev, d, &g, dt))
        return pointwise_wgrad(dev, stream, d, &g, &ox, &oy, &ow);
    if (tocl_conv_wg_usable(dev, d, &g, dt)) /* CPU: implicit product, no column matrix */
        return tocl_conv_wg_run(dev, stream, dt, d, &g, &ox, &oy, &ow);
    size_t esz = tocl_dtype_size(dt);
    /* Per chunk: colT [cx * kvol, nc, L] and yT [cy, nc, L], so that a
     * group's depth (n, q) is one contiguous run of nc * L elements. */
    int64_t per = (d->cx * g.kvol + d->cy) * g.L, nb = tocl_conv_chunk(d->batch, per, esz);
    conv_opnd ws = {0};
    TOCL_TRY(tocl_conv_workspace(dev, stream, nb * per, esz, &ws));
    tocl_status s = TOCL_OK;
    int64_t n0 = 0;
    do { /* at least once: an empty batch still writes zeros */
        int64_t nc = d->batch - n0 < nb ? d->batch - n0 : nb, depth = nc * g.L;
        int64_t yt = nc * d->cx * g.kvol * g.L; /* element offset of yT in the workspace */
        tocl_conv_params p;
        conv_params_init(&g, nc, d->cx, &p);
        p.x_off = ox.off + n0 * d->cx * g.xvol;
        p.col_off = ws.off, p.col_sn = g.L, p.col_sr = depth;
        s = conv_im2col(dev, stream, dt, ox.buf, ws.buf, &p);
        if (s == TOCL_OK)
            s = conv_channels_first(dev, stream, dt, &g, nc, d->cy, oy.buf, oy.off + n0 * d->cy * g.L, ws.buf,
                                    ws.off + yt);
        /* gw[g] (cyg x Kg) = yT[g] (cyg x depth) @ colT[g]^T (depth x Kg) */
        tocl_gemm_desc m = tocl_gemm_desc_init(dt, g.cyg, g.Kg, depth);
        m.a = (tocl_gemm_operand){ws.addr + (tocl_addr)yt * esz, 0, depth, 1};
        m.b = (tocl_gemm_operand){ws.addr, 0, 1, depth};
        m.c = (tocl_gemm_operand){ow.addr, 0, g.Kg, 1};
        if (n0 > 0) { /* later chunks add to the earlier ones */
            m.d = m.c;
            m.beta = 1.0;
        }
        conv_strides st = {{0, 0, 0, 0}, {g.cyg * depth, g.Kg * depth, g.cyg * g.Kg, 0}};
        if (s == TOCL_OK)
            s = conv_gemm(dev, stream, &m, 1, d->groups, &st);
        n0 += nb;
    } while (n0 < d->batch && s == TOCL_OK);
    tocl_status fs = tocl_mem_free(ws.addr);
    return s != TOCL_OK ? s : fs;
}
