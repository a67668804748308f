/* conv_amx.c - bfloat16 convolutions on the AMX tiles of a PoCL CPU device
 * (kernels/conv_amx.cl): the forward and the weight gradient at any stride
 * and dilation (phase planes), the input gradient at stride 1 (the forward
 * of dy with the flipped, transposed kernel). The source is
 * copied once, zero-padded, into channel-pair planes that the tile loads
 * read as they are; the weight is packed once; no column matrix. */
#include <string.h>

#include "ops/conv_internal.h"

#define CVA_BLOCK 32

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* TORCH_OCL_CONV_AMX=0 keeps bfloat16 convolutions on the float32 implicit
 * GEMM (comparisons, tests). 1x1 kernels are products already (the GEMM
 * takes them to the tiles). The input gradient (input_grad) is a
 * convolution of dy only at stride 1. A source of fewer than 16 channels
 * is padded to a 32-channel tile per tap: ResNet's 3-channel 7x7 stem ran
 * 1.4x slower than on the float32 route (10x the products), so it stays. */
#define CVA_MIN_CHANNELS 16
int tocl_conv_amx_usable(int dev, int stream, const tocl_conv_desc *d, const conv_geo *g, tocl_dtype dt,
                         int input_grad) {
    int64_t src_channels = input_grad ? d->cy : d->cx;
    if (dt != TOCL_BF16 || d->groups != 1 || g->Kg <= 0 || g->kvol == 1 || src_channels < CVA_MIN_CHANNELS ||
        tocl_env_off("TORCH_OCL_CONV_AMX"))
        return 0;
    for (int i = 0; i < 3; i++)
        if (input_grad && g->s[i] != 1)
            return 0;
    return tocl_gemm_amx_usable(dev, stream);
}

/* The geometry of a convolution of C source channels (sizes x, padding
 * pad) into M channels (sizes y) with kernel k, dilation dil and strides
 * st, and its phase planes (conv_amx.cl: f, G, PS); channel tiles cb and
 * output channels padded to a block, Mp. */
static void cva_geometry(tocl_conv_ig_params *p, int64_t C, int64_t M, const int64_t x[3], const int64_t pad[3],
                         const int64_t y[3], const int64_t k[3], const int64_t dil[3], const int64_t st[3]) {
    memset(p, 0, sizeof *p);
    p->C = C, p->M = M;
    p->x0 = x[0], p->x1 = x[1], p->x2 = x[2];
    p->p0 = pad[0], p->p1 = pad[1], p->p2 = pad[2];
    p->P0 = p->x0 + 2 * p->p0, p->P1 = p->x1 + 2 * p->p1, p->P2 = p->x2 + 2 * p->p2;
    p->y0 = y[0], p->y1 = y[1], p->y2 = y[2], p->L = p->y0 * p->y1 * p->y2;
    p->k0 = k[0], p->k1 = k[1], p->k2 = k[2], p->kvol = p->k0 * p->k1 * p->k2;
    p->d0 = dil[0], p->d1 = dil[1], p->d2 = dil[2];
    p->f0 = st[0], p->f1 = st[1], p->f2 = st[2];
    p->G0 = (p->P0 + p->f0 - 1) / p->f0, p->G1 = (p->P1 + p->f1 - 1) / p->f1, p->G2 = (p->P2 + p->f2 - 1) / p->f2;
    p->PS = p->f0 * p->f1 * p->f2;
    p->cb = (p->C + 31) / 32, p->Mp = round_up(p->M, CVA_BLOCK);
}

/* The largest grid offset of a tap. */
static int64_t cva_tap_max(const tocl_conv_ig_params *p) {
    int64_t a0 = (p->k0 - 1) * p->d0, a1 = (p->k1 - 1) * p->d1, a2 = (p->k2 - 1) * p->d2;
    return ((a0 / p->f0) * p->G1 + a1 / p->f1) * p->G2 + a2 / p->f2;
}

tocl_status tocl_conv_amx_run(int dev, int stream, const conv_ig_job *j) {
    tocl_conv_ig_params p;
    cva_geometry(&p, j->C, j->M, j->sx, j->pad, j->so, j->k, j->dil, j->st);
    p.w_off = j->w_off, p.b_off = j->b_off, p.has_bias = j->has_bias;
    p.flip = j->flip, p.wC = j->M;
    /* The last block reads 32 positions from the last output row's start
     * past every tap's offset: zeros up to there. */
    int64_t qmax = ((p.y0 - 1) * p.G1 + p.y1 - 1) * p.G2 + round_up(p.y2, CVA_BLOCK), tap = cva_tap_max(&p);
    int64_t need = qmax + tap > p.G0 * p.G1 * p.G2 ? qmax + tap : p.G0 * p.G1 * p.G2;
    p.S = round_up(need, p.G2);
    int64_t plane = p.cb * 32 * p.PS * p.S; /* elements of one item's padded copy */
    int64_t nb = tocl_conv_chunk(j->N, plane, 2);
    /* rows per work-item: about eight work-items per compute unit */
    int64_t rows = p.y0 * p.y1, blocks = p.Mp / CVA_BLOCK, want = 8 * (int64_t)tocl_dev_props(dev)->compute_units;
    p.tn = 1;
    while (p.tn < rows && nb * blocks * ((rows + 2 * p.tn - 1) / (2 * p.tn)) >= want)
        p.tn *= 2;

    conv_opnd ap = {0}, xp = {0};
    tocl_status s = tocl_conv_workspace(dev, stream, p.Mp * p.kvol * p.cb * 32, 2, &ap);
    if (s == TOCL_OK)
        s = tocl_conv_workspace(dev, stream, nb * plane, 2, &xp);
    tocl_ops_kernel *pack = NULL, *pad = NULL, *main_k = NULL;
    if (s == TOCL_OK)
        s = tocl_ops_kernel_get(dev, "conv_amx", "conv_amx_pack_w", "", &pack);
    if (s == TOCL_OK)
        s = tocl_ops_kernel_get(dev, "conv_amx", "conv_amx_pad", "", &pad);
    if (s == TOCL_OK)
        s = tocl_ops_kernel_get(dev, "conv_amx", "conv_amx", "", &main_k);
    if (s == TOCL_OK) {
        tocl_conv_ig_params pw = p;
        pw.ap_off = ap.off;
        size_t global[3] = {(size_t)p.Mp, (size_t)p.cb, 1}, local[3] = {16, 1, 1};
        tocl_ops_arg a[] = {{sizeof j->w, &j->w}, {sizeof ap.buf, &ap.buf}, {sizeof pw, &pw}};
        s = tocl_ops_launch(dev, stream, pack, 3, global, local, a, 3);
    }
    for (int64_t n0 = 0; n0 < j->N && s == TOCL_OK; n0 += nb) {
        tocl_conv_ig_params q = tocl_conv_ig_chunk(&p, j, n0, nb, xp.off, ap.off);
        cl_mem src = j->src;
        size_t pg[3] = {(size_t)(p.cb * 16), (size_t)p.PS, (size_t)q.N}, pl[3] = {1, 1, 1};
        tocl_ops_arg pa[] = {{sizeof src, &src}, {sizeof xp.buf, &xp.buf}, {sizeof q, &q}};
        s = tocl_ops_launch(dev, stream, pad, 3, pg, pl, pa, 3);
        if (s != TOCL_OK)
            break;
        cl_mem bias = j->has_bias ? j->bias : j->out;
        size_t global[3] = {(size_t)((rows + p.tn - 1) / p.tn), (size_t)blocks, (size_t)q.N}, local[3] = {1, 1, 1};
        tocl_ops_arg ma[] = {{sizeof ap.buf, &ap.buf}, {sizeof xp.buf, &xp.buf}, {sizeof j->out, &j->out},
                             {sizeof bias, &bias}, {sizeof q, &q}};
        s = tocl_ops_launch(dev, stream, main_k, 3, global, local, ma, 5);
    }
    conv_opnd *ws[] = {&ap, &xp};
    return tocl_conv_workspaces_free(s, ws, 2);
}

/* The weight gradient (one group, not 1x1) on the tiles: dy laid
 * on the padded grid, x in position-pair planes of both parities, float
 * partial sums per split of the depth, reduced and rounded once. */
tocl_status tocl_conv_amx_wg_run(int dev, int stream, const tocl_conv_desc *d, const conv_geo *g,
                                 const conv_opnd *ox, const conv_opnd *oy, const conv_opnd *ow) {
    tocl_conv_ig_params p;
    cva_geometry(&p, d->cx, d->cy, g->x, g->p, g->y, g->k, g->d, g->s);
    p.w_off = ow->off;
    p.Lg = round_up(((p.y0 - 1) * p.G1 + p.y1 - 1) * p.G2 + p.y2, CVA_BLOCK);
    p.S = (p.Lg - CVA_BLOCK + cva_tap_max(&p)) / 2 + 16 + 1; /* pairs per plane: the last tile's rows */
    p.hb = 16;
    int64_t cp = p.cb * 32, mbs = p.Mp / CVA_BLOCK, blocks = mbs * p.cb;
    int64_t per = p.Mp * p.Lg + p.PS * 2 * p.S * cp * 2; /* elements of dyg and xq per batch item */
    int64_t nb = tocl_conv_chunk(d->batch, per, 2);
    /* splits: about eight work-items per compute unit, at least 4 steps each */
    int64_t want = 8 * (int64_t)tocl_dev_props(dev)->compute_units, steps = nb * (p.Lg / CVA_BLOCK);
    p.nsplit = 1;
    while (blocks * p.nsplit < want && steps / (2 * p.nsplit) >= 4 && p.nsplit < 64)
        p.nsplit *= 2;
    int64_t part = p.nsplit * p.kvol * blocks * 1024;

    conv_opnd ws = {0}, pt = {0};
    tocl_status s = tocl_conv_workspace(dev, stream, nb * per, 2, &ws);
    if (s == TOCL_OK)
        s = tocl_conv_workspace(dev, stream, part, 4, &pt);
    tocl_ops_kernel *kdy = NULL, *kx = NULL, *kwg = NULL, *kred = NULL;
    if (s == TOCL_OK)
        s = tocl_ops_kernel_get(dev, "conv_amx", "conv_amx_wg_dy", "", &kdy);
    if (s == TOCL_OK)
        s = tocl_ops_kernel_get(dev, "conv_amx", "conv_amx_wg_x", "", &kx);
    if (s == TOCL_OK)
        s = tocl_ops_kernel_get(dev, "conv_amx", "conv_amx_wg", "", &kwg);
    if (s == TOCL_OK)
        s = tocl_ops_kernel_get(dev, "conv_amx", "conv_amx_wg_reduce", "", &kred);
    p.part_off = pt.off;
    for (int64_t n0 = 0; n0 < d->batch && s == TOCL_OK; n0 += nb) {
        tocl_conv_ig_params q = p;
        q.N = d->batch - n0 < nb ? d->batch - n0 : nb;
        q.first = n0 == 0;
        q.src_off = ox->off + n0 * p.C * g->xvol;
        q.y_off = oy->off + n0 * p.M * p.L;
        q.dyt_off = ws.off, q.xp_off = ws.off + q.N * p.Mp * p.Lg;
        q.xp_off = round_up(q.xp_off, 2); /* xq is read as uint */
        size_t g1[3] = {(size_t)((p.Lg + p.G2 - 1) / p.G2), (size_t)p.Mp, (size_t)q.N}, l1[3] = {1, 1, 1};
        tocl_ops_arg a1[] = {{sizeof oy->buf, &oy->buf}, {sizeof ws.buf, &ws.buf}, {sizeof q, &q}};
        s = tocl_ops_launch(dev, stream, kdy, 3, g1, l1, a1, 3);
        size_t g2[3] = {(size_t)p.S, (size_t)p.PS, (size_t)q.N}, l2[3] = {1, 1, 1};
        tocl_ops_arg a2[] = {{sizeof ox->buf, &ox->buf}, {sizeof ws.buf, &ws.buf}, {sizeof q, &q}};
        if (s == TOCL_OK)
            s = tocl_ops_launch(dev, stream, kx, 3, g2, l2, a2, 3);
        size_t g3[3] = {(size_t)blocks, (size_t)p.nsplit, 1}, l3[3] = {1, 1, 1};
        tocl_ops_arg a3[] = {{sizeof ws.buf, &ws.buf}, {sizeof ws.buf, &ws.buf}, {sizeof pt.buf, &pt.buf},
                             {sizeof q, &q}};
        if (s == TOCL_OK)
            s = tocl_ops_launch(dev, stream, kwg, 3, g3, l3, a3, 4);
    }
    if (s == TOCL_OK) {
        tocl_ops_arg a[] = {{sizeof pt.buf, &pt.buf}, {sizeof ow->buf, &ow->buf}, {sizeof p, &p}};
        int64_t items = p.M * p.C;
        size_t gg[3] = {(size_t)round_up(items, 64), 1, 1}, ll[3] = {64, 1, 1};
        s = tocl_ops_launch(dev, stream, kred, 3, gg, ll, a, 3);
    }
    conv_opnd *w2[] = {&ws, &pt};
    return tocl_conv_workspaces_free(s, w2, 2);
}
