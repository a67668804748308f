/* conv_implicit.c - the implicit products of CPU devices (kernels/conv.cl
 * conv_ig*, conv_wg*; docs/design.md, "Convolution on CPU devices"): the
 * forward (strided ones on phase planes) and the stride-1 input gradient
 * read taps from a padded float copy of the input, the weight gradient
 * from the same copy times dy transposed; no column matrix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/conv_internal.h"


#define CONV_IG_TAPS 64 /* IG_TAPS of kernels/conv.cl: taps per kernel */

/* TORCH_OCL_CONV_IMPLICIT=0 turns the implicit GEMM off (comparisons, tests). */
static int conv_ig_enabled(void) {
    return !tocl_env_off("TORCH_OCL_CONV_IMPLICIT");
}

/* TORCH_OCL_CONV_PHASES=0 keeps strided forwards on im2col (comparisons, tests). */
static int conv_phases_enabled(void) {
    return !tocl_env_off("TORCH_OCL_CONV_PHASES");
}

/* One group, 16/32-bit storage on a CPU device, not a 1x1 with no padding
 * (that one needs no column matrix anyway); stride 1, or with `strided`
 * (the forward) strides whose phase planes every tap row covers: dilation
 * 1 and a kernel at least as long as the stride in each strided dim (a 1x1
 * stride-2 would copy four planes to read one). */
int tocl_conv_ig_usable(int dev, const tocl_conv_desc *d, const conv_geo *g, tocl_dtype dt, int strided) {
    if (!conv_ig_enabled() || d->groups != 1 || g->Kg <= 0 || tocl_conv_pointwise(g) || g->kvol > CONV_IG_TAPS ||
        !(dt == TOCL_F32 || dt == TOCL_F16 || dt == TOCL_BF16) || tocl_dev_props(dev)->kind != TOCL_DEVICE_CPU)
        return 0;
    for (int i = 0; i < 3; i++)
        if (g->s[i] != 1 && !(strided && conv_phases_enabled() && g->d[i] == 1 && g->k[i] >= g->s[i]))
            return 0;
    return 1;
}


/* The implicit products' common start (conv_ig, conv_wg): the GEMM's
 * default register block, as build options too, and the padded input's
 * geometry. */
static void conv_ig_begin(int dev, tocl_gemm_config *cfg, char *extra, size_t cap, tocl_conv_ig_params *p, int64_t C,
                          int64_t M, const int64_t x[3], const int64_t pad[3]) {
    tocl_gemm_default_config(dev, TOCL_F32, cfg);
    snprintf(extra, cap, " -DIG_RM=%d -DIG_VW=%d -DIG_NV=%d", cfg->rm, cfg->vw, cfg->nv);
    memset(p, 0, sizeof *p);
    p->C = C, p->M = M;
    p->x0 = x[0], p->x1 = x[1], p->x2 = x[2];
    p->p0 = pad[0], p->p1 = pad[1], p->p2 = pad[2];
    p->P0 = p->x0 + 2 * p->p0, p->P1 = p->x1 + 2 * p->p1, p->P2 = p->x2 + 2 * p->p2;
    p->f0 = p->f1 = p->f2 = 1; /* one plane; the forward sets its strides */
    p->G0 = p->P0, p->G1 = p->P1, p->G2 = p->P2;
    p->PS = p->P0 * p->P1 * p->P2;
}

tocl_conv_ig_params tocl_conv_ig_chunk(const tocl_conv_ig_params *p, const conv_ig_job *j, int64_t n0, int64_t nb,
                                       cl_long xp_off, cl_long ap_off) {
    tocl_conv_ig_params q = *p;
    q.N = j->N - n0 < nb ? j->N - n0 : nb;
    q.src_off = j->src_off + n0 * p->C * p->x0 * p->x1 * p->x2;
    q.y_off = j->out_off + n0 * p->M * p->L;
    q.xp_off = xp_off, q.ap_off = ap_off;
    return q;
}

tocl_status tocl_conv_ig_run(int dev, int stream, tocl_dtype dt, const conv_ig_job *j) {
    tocl_gemm_config cfg;
    char extra[96];
    tocl_conv_ig_params p;
    conv_ig_begin(dev, &cfg, extra, sizeof extra, &p, j->C, j->M, j->sx, j->pad);
    int64_t rm = cfg.rm, rn = (int64_t)cfg.vw * cfg.nv;
    p.f0 = j->st[0], p.f1 = j->st[1], p.f2 = j->st[2];
    p.G0 = (p.P0 + p.f0 - 1) / p.f0, p.G1 = (p.P1 + p.f1 - 1) / p.f1, p.G2 = (p.P2 + p.f2 - 1) / p.f2;
    p.PS = p.G0 * p.G1 * p.G2;
    int64_t nph = p.f0 * p.f1 * p.f2;
    p.S = (nph * p.PS + 15) / 16 * 16;
    p.tail = rn + 16;
    p.y0 = j->so[0], p.y1 = j->so[1], p.y2 = j->so[2], p.L = p.y0 * p.y1 * p.y2;
    p.Lg = ((p.y0 - 1) * p.G1 + p.y1 - 1) * p.G2 + p.y2;
    p.k0 = j->k[0], p.k1 = j->k[1], p.k2 = j->k[2], p.kvol = p.k0 * p.k1 * p.k2;
    p.d0 = j->dil[0], p.d1 = j->dil[1], p.d2 = j->dil[2];
    p.w_off = j->w_off, p.b_off = j->b_off, p.has_bias = j->has_bias;
    p.flip = j->flip, p.wC = j->M;
    int64_t K = p.C * p.kvol, panels = (p.M + rm - 1) / rm;
    /* tiles: up to 64 rows x 256 positions, shrunk for local memory and
     * until every compute unit gets about two; K blocks of ~256 */
    p.tm = panels * rm < 64 ? panels * rm : 64 / rm * rm;
    if (p.tm < rm)
        p.tm = rm;
    p.tn = 256 / rn * rn;
    if (p.tn < rn)
        p.tn = rn;
    p.cb = 256 / p.kvol > 1 ? 256 / p.kvol : 1;
    const tocl_device_props *props = tocl_dev_props(dev);
    while ((uint64_t)(p.tm * p.tn) * 4 > props->local_mem_bytes && p.tn > rn)
        p.tn = (p.tn / 2 + rn - 1) / rn * rn;
    int64_t want = 2 * (int64_t)props->compute_units;
    while (j->N * ((p.M + p.tm - 1) / p.tm) * ((p.Lg + p.tn - 1) / p.tn) < want && p.tn > rn)
        p.tn = (p.tn / 2 + rn - 1) / rn * rn;

    int64_t nb = tocl_conv_chunk(j->N, p.C * p.S, 4);
    conv_opnd ap = {0}, xp = {0};
    tocl_status s = tocl_conv_workspace(dev, stream, panels * K * rm, 4, &ap);
    if (s == TOCL_OK)
        s = tocl_conv_workspace(dev, stream, nb * p.C * p.S + p.tail, 4, &xp);
    tocl_ops_kernel *main_k = NULL;
    if (s == TOCL_OK)
        s = tocl_conv_kernel(dev, dt, extra, "conv_ig", &main_k);
    if (s == TOCL_OK) {
        tocl_conv_ig_params pw = p;
        pw.N = 1, pw.ap_off = ap.off;
        tocl_ops_arg a[] = {{sizeof j->w, &j->w}, {sizeof ap.buf, &ap.buf}, {sizeof pw, &pw}};
        s = tocl_conv_launch_opt(dev, stream, dt, extra, "conv_ig_pack_w", panels * K, a, 3);
    }
    for (int64_t n0 = 0; n0 < j->N && s == TOCL_OK; n0 += nb) {
        tocl_conv_ig_params q = tocl_conv_ig_chunk(&p, j, n0, nb, xp.off, ap.off);
        cl_mem src = j->src;
        tocl_ops_arg pa[] = {{sizeof src, &src}, {sizeof xp.buf, &xp.buf}, {sizeof q, &q}};
        /* a work-item per plane row at stride 1, per (phase, u0) of G1 rows otherwise (conv_ig_pad) */
        int64_t per = nph == 1 ? p.G0 * p.G1 : nph * p.G0;
        s = tocl_conv_launch_opt(dev, stream, dt, extra, "conv_ig_pad", q.N * p.C * per, pa, 3);
        if (s != TOCL_OK)
            break;
        cl_mem bias = j->has_bias ? j->bias : j->out;
        size_t global[3] = {(size_t)((p.Lg + p.tn - 1) / p.tn), (size_t)((p.M + p.tm - 1) / p.tm), (size_t)q.N};
        size_t local[3] = {1, 1, 1};
        tocl_ops_arg ma[] = {{sizeof ap.buf, &ap.buf}, {sizeof xp.buf, &xp.buf}, {sizeof j->out, &j->out},
                             {sizeof bias, &bias}, {sizeof q, &q}, {(size_t)(p.tm * p.tn) * 4, NULL}};
        s = tocl_ops_launch(dev, stream, main_k, 3, global, local, ma, 6);
    }
    conv_opnd *ws[] = {&ap, &xp};
    return tocl_conv_workspaces_free(s, ws, 2);
}

/* ------------------------------------------------------------ implicit weight gradient */

/* TORCH_OCL_CONV_WGRAD=0 sends the weight gradient back to im2col + GEMM
 * (comparisons, tests); TORCH_OCL_CONV_IMPLICIT=0 does too. */
static int conv_wg_enabled(void) {
    return conv_ig_enabled() && !tocl_env_off("TORCH_OCL_CONV_WGRAD");
}

/* One group, 16/32-bit storage, a CPU device, a non-empty product: any
 * stride, padding and dilation (conv_wg reads taps at any plane offset). */
int tocl_conv_wg_usable(int dev, const tocl_conv_desc *d, const conv_geo *g, tocl_dtype dt) {
    return conv_wg_enabled() && d->groups == 1 && g->Kg > 0 && d->batch > 0 && g->L > 0 &&
           (dt == TOCL_F32 || dt == TOCL_F16 || dt == TOCL_BF16) && tocl_dev_props(dev)->kind == TOCL_DEVICE_CPU;
}

static int64_t conv_round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

/* gw (cy x Kg) from x and dy (kernels/conv.cl, conv_wg): per batch chunk, x
 * padded and widened into float planes (float32 x without padding is read
 * in place) and dy transposed into dyt; the product adds each split's
 * share into float partial sums, which conv_wg_reduce adds in a fixed
 * order and rounds once. */
tocl_status tocl_conv_wg_run(int dev, int stream, tocl_dtype dt, const tocl_conv_desc *d, const conv_geo *g,
                               const conv_opnd *ox, const conv_opnd *oy, const conv_opnd *ow) {
    tocl_gemm_config cfg;
    char extra[96];
    tocl_conv_ig_params p;
    conv_ig_begin(dev, &cfg, extra, sizeof extra, &p, d->cx, d->cy, g->x, g->p);
    int64_t rm = cfg.rm, rn = (int64_t)cfg.vw * cfg.nv;
    p.Mp = conv_round_up(d->cy, rn);
    int direct = dt == TOCL_F32 && !p.p0 && !p.p1 && !p.p2; /* x is its own padded copy */
    p.S = direct ? g->xvol : conv_round_up(p.P0 * p.P1 * p.P2, 16);
    p.y0 = g->y[0], p.y1 = g->y[1], p.y2 = g->y[2], p.L = g->L;
    p.k0 = g->k[0], p.k1 = g->k[1], p.k2 = g->k[2], p.kvol = g->kvol;
    p.d0 = g->d[0], p.d1 = g->d[1], p.d2 = g->d[2];
    p.s0 = g->s[0], p.s1 = g->s[1], p.s2 = g->s[2];
    p.w_off = ow->off;
    int64_t K = g->Kg, Kp = conv_round_up(K, rm);
    /* tiles: up to 64 rows x 128 columns; then enough splits of the depth
     * that every compute unit gets about eight work-items (few tiles for
     * thin weights; an even share on few units), within the rows there are
     * and a partial-sum buffer of at most a quarter of the budget */
    p.tm = Kp < 64 ? Kp : 64 / rm * rm;
    if (p.tm < rm)
        p.tm = rm;
    p.tn = p.Mp < 128 ? p.Mp : 128 / rn * rn;
    if (p.tn < rn)
        p.tn = rn;
    int64_t tiles = ((p.Mp + p.tn - 1) / p.tn) * ((Kp + p.tm - 1) / p.tm);
    int64_t want = 8 * (int64_t)tocl_dev_props(dev)->compute_units;
    int64_t depth_rows = d->batch * p.y0 * p.y1, max_split = tocl_conv_budget() / 4 / (Kp * p.Mp * 4);
    p.nsplit = (want + tiles - 1) / tiles;
    if (p.nsplit > depth_rows)
        p.nsplit = depth_rows;
    if (p.nsplit > max_split)
        p.nsplit = max_split;
    if (p.nsplit < 1)
        p.nsplit = 1;
    p.hb = 256 / p.y2 > 1 ? 256 / p.y2 : 1; /* ~256 positions of dyt per block */

    int64_t nb = tocl_conv_chunk(d->batch, (direct ? 0 : p.C * p.S) + p.L * p.Mp, 4);
    conv_opnd part = {0}, xp = {0}, dyt = {0};
    tocl_status s = tocl_conv_workspace(dev, stream, p.nsplit * Kp * p.Mp, 4, &part);
    if (s == TOCL_OK && !direct)
        s = tocl_conv_workspace(dev, stream, nb * p.C * p.S, 4, &xp);
    if (s == TOCL_OK)
        s = tocl_conv_workspace(dev, stream, nb * p.L * p.Mp, 4, &dyt);
    p.part_off = part.off, p.dyt_off = dyt.off;
    for (int64_t n0 = 0; n0 < d->batch && s == TOCL_OK; n0 += nb) {
        tocl_conv_ig_params q = p;
        q.N = d->batch - n0 < nb ? d->batch - n0 : nb;
        q.first = n0 == 0;
        q.src_off = ox->off + n0 * p.C * g->xvol;
        q.y_off = oy->off + n0 * p.M * p.L;
        cl_mem xbuf = ox->buf;
        if (direct) {
            q.xp_off = q.src_off;
        } else {
            q.xp_off = xp.off;
            xbuf = xp.buf;
            cl_mem src = ox->buf;
            tocl_ops_arg pa[] = {{sizeof src, &src}, {sizeof xp.buf, &xp.buf}, {sizeof q, &q}};
            s = tocl_conv_launch_opt(dev, stream, dt, extra, "conv_ig_pad", q.N * p.C * p.P0 * p.P1, pa, 3);
        }
        cl_mem ybuf = oy->buf;
        tocl_ops_arg ta[] = {{sizeof ybuf, &ybuf}, {sizeof dyt.buf, &dyt.buf}, {sizeof q, &q}};
        if (s == TOCL_OK)
            s = tocl_conv_launch_opt(dev, stream, dt, extra, "conv_wg_dyt", q.N * p.L, ta, 3);
        tocl_ops_kernel *k = NULL;
        if (s == TOCL_OK)
            s = tocl_conv_kernel(dev, dt, extra, "conv_wg", &k);
        if (s != TOCL_OK)
            break;
        size_t global[3] = {(size_t)((p.Mp + p.tn - 1) / p.tn), (size_t)((Kp + p.tm - 1) / p.tm), (size_t)p.nsplit};
        size_t local[3] = {1, 1, 1};
        tocl_ops_arg ma[] = {{sizeof xbuf, &xbuf}, {sizeof dyt.buf, &dyt.buf}, {sizeof part.buf, &part.buf},
                             {sizeof q, &q}};
        s = tocl_ops_launch(dev, stream, k, 3, global, local, ma, 4);
    }
    if (s == TOCL_OK) { /* 16 x 16 tiles of (r, m): part is gw transposed */
        cl_mem wbuf = ow->buf;
        tocl_ops_kernel *k = NULL;
        s = tocl_conv_kernel(dev, dt, extra, "conv_wg_reduce", &k);
        size_t global[2] = {(size_t)conv_round_up(K, 16), (size_t)conv_round_up(p.M, 16)}, local[2] = {16, 16};
        tocl_ops_arg ra[] = {{sizeof part.buf, &part.buf}, {sizeof wbuf, &wbuf}, {sizeof p, &p}};
        if (s == TOCL_OK)
            s = tocl_ops_launch(dev, stream, k, 2, global, local, ra, 3);
    }
    conv_opnd *ws[] = {&part, &xp, &dyt};
    return tocl_conv_workspaces_free(s, ws, 3);
}
