/* conv_depthwise.c - stride-1 depthwise convolution on its own kernels
 * (kernels/conv.cl conv_dw2d*; docs/design.md, "Depthwise"): forward,
 * input gradient (the same kernel on flipped weights) and the weight
 * gradient in two deterministic passes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/conv_internal.h"


/* TORCH_OCL_CONV_DW2D=0 keeps depthwise convolutions on the generic direct
 * kernels (conv_depthwise*), for comparisons. */
static int conv_dw2d_enabled(void) {
    return !tocl_env_off("TORCH_OCL_CONV_DW2D");
}

/* Output rows per work-item of conv_dw2d: each input row is read once per
 * DW_R rows instead of once per tap row (TORCH_OCL_CONV_DW_R overrides,
 * 1..8). 3x3 256ch 28x28 batch 8 forward, best of 10: 1.38 ms with 2 rows,
 * 0.96 with 4, 0.83 with 7, 0.92 with 8. */
static int conv_dw2d_rows(void) {
    const char *v = tocl_env("TORCH_OCL_CONV_DW_R");
    int r = v ? atoi(v) : 0;
    return r >= 1 && r <= 8 ? r : 7;
}

/* The compiled-in kernels take 1-d/2-d depthwise convolutions without
 * dilation, kernels up to 7x7, stride 1 (the input gradient: channel
 * multiplier up to 4); plane indices are int. Others take conv_depthwise*.
 * Stride 2 is not faster this way (3x3 128ch 56x56 batch 8: 4.4-4.7 ms
 * against 4.1 ms forward): the stride-2 column reads under a mask do not
 * vectorise; the kernels keep DW_SH/DW_SW for a later attempt. */
int tocl_conv_dw2d_usable(const conv_geo *g, int bwd_data) {
    if (!conv_dw2d_enabled() || g->x[0] != 1 || g->y[0] != 1 || g->k[0] != 1 || g->p[0] != 0)
        return 0;
    for (int i = 1; i < 3; i++)
        if (g->d[i] != 1 || g->k[i] < 1 || g->k[i] > 7 || g->s[i] != 1)
            return 0;
    if (bwd_data && g->cyg > 4) /* its channel multiplier is unrolled */
        return 0;
    return g->x[1] * g->x[2] < ((int64_t)1 << 30) && g->y[1] * g->y[2] < ((int64_t)1 << 30);
}

/* Work-group shape: dimension 0 the columns (a multiple of 8, at most 64:
 * wider rows take several column tiles), dimension 1 enough rows for about
 * 128 work-items. */
static void conv_dw2d_local(int64_t cols, size_t local[2]) {
    int64_t tiles = (cols + 63) / 64, l0 = ((cols + tiles - 1) / tiles + 7) / 8 * 8;
    local[0] = (size_t)l0;
    local[1] = l0 >= 128 ? 1 : (size_t)(128 / l0);
}

/* mult: the input gradient's y channels per x channel (0: forward). */
static tocl_status conv_dw2d_kernel(int dev, tocl_dtype dt, const conv_geo *g, int rows, int bwd_data, int mult,
                                    const char *name, tocl_ops_kernel **k) {
    char extra[128];
    snprintf(extra, sizeof extra, " -DDW_KH=%d -DDW_KW=%d -DDW_SH=%d -DDW_SW=%d -DDW_R=%d", (int)g->k[1],
             (int)g->k[2], (int)g->s[1], (int)g->s[2], rows);
    if (bwd_data)
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), " -DDW_BWD -DDW_M=%d", mult);
    return tocl_conv_kernel(dev, dt, extra, name, k);
}

/* out := depthwise convolution of in (forward; input gradient with
 * bwd_data), q's sizes, channels and offsets filled in by the caller. */
tocl_status tocl_conv_dw2d_run(int dev, int stream, tocl_dtype dt, const conv_geo *g, int bwd_data, cl_mem in,
                                 cl_mem w, cl_mem bias, cl_mem out, tocl_conv_dw_params *q) {
    int rows = conv_dw2d_rows();
    tocl_ops_kernel *k;
    TOCL_TRY(conv_dw2d_kernel(dev, dt, g, rows, bwd_data, (int)q->cyg, "conv_dw2d", &k));
    q->rb = (q->oh + rows - 1) / rows;
    size_t local[2], global[2];
    conv_dw2d_local(q->ow, local);
    int64_t items = q->N * q->CO * q->rb;
    global[0] = ((size_t)q->ow + local[0] - 1) / local[0] * local[0];
    global[1] = ((size_t)items + local[1] - 1) / local[1] * local[1];
    if (items == 0 || q->ow == 0)
        return TOCL_OK;
    tocl_ops_arg a[] = {{sizeof in, &in}, {sizeof w, &w}, {sizeof bias, &bias}, {sizeof out, &out}, {sizeof *q, q}};
    return tocl_ops_launch(dev, stream, k, 2, global, local, a, 5);
}

/* gw := weight gradient from x and dy (q: in = x, out = dy, w_off = gw's;
 * b_off carries the workspace's offset):
 * per-(column, row block) sums into a workspace, then a sum per weight. */
tocl_status tocl_conv_dw2d_bwd_w(int dev, int stream, tocl_dtype dt, const conv_geo *g, cl_mem x, cl_mem dy,
                                   cl_mem gw, tocl_conv_dw_params *q) {
    /* rows per block: up to 16 (TORCH_OCL_CONV_DW_WR overrides; 3x3 256ch
     * 28x28 b8 on a loaded host: 4 rows 2.7-5.3 ms, 14 rows 1.7-2.0 ms) */
    const char *ev = tocl_env("TORCH_OCL_CONV_DW_WR");
    int64_t maxr = ev && atoi(ev) > 0 ? atoi(ev) : 16;
    int64_t nblk = (q->oh + maxr - 1) / maxr;
    int rows = q->oh > 0 ? (int)((q->oh + nblk - 1) / nblk) : 1; /* <= 16, blocks of equal size */
    q->rb = q->oh > 0 ? (q->oh + rows - 1) / rows : 0;
    size_t accsz = dt == TOCL_F64 ? 8 : 4;
    int64_t items = q->N * q->CO * q->rb, nparts = items * g->kvol * q->ow;
    conv_opnd part = {0};
    tocl_ops_kernel *k1, *k2;
    TOCL_TRY(conv_dw2d_kernel(dev, dt, g, rows, 0, 1, "conv_dw2d_bwd_w", &k1));
    TOCL_TRY(conv_dw2d_kernel(dev, dt, g, rows, 0, 1, "conv_dw2d_bwd_w_sum", &k2));
    TOCL_TRY(tocl_conv_workspace(dev, stream, nparts > 0 ? nparts : 1, accsz, &part));
    tocl_status s = TOCL_OK;
    if (nparts > 0) {
        size_t local[2], global[2];
        conv_dw2d_local(q->ow, local);
        global[0] = ((size_t)q->ow + local[0] - 1) / local[0] * local[0];
        global[1] = ((size_t)items + local[1] - 1) / local[1] * local[1];
        tocl_conv_dw_params q1 = *q;
        q1.b_off = part.off;
        tocl_ops_arg a[] = {{sizeof x, &x}, {sizeof dy, &dy}, {sizeof part.buf, &part.buf}, {sizeof q1, &q1}};
        s = tocl_ops_launch(dev, stream, k1, 2, global, local, a, 4);
    }
    if (s == TOCL_OK) { /* an empty batch or plane sums nothing: zeros */
        tocl_conv_dw_params q2 = *q;
        q2.b_off = part.off;
        cl_mem pb = part.buf;
        if (nparts <= 0)
            q2.N = 0;
        tocl_ops_arg a[] = {{sizeof pb, &pb}, {sizeof gw, &gw}, {sizeof q2, &q2}};
        size_t local = tocl_nn_item_size(dev, k2);
        size_t global = ((size_t)(q->CO * g->kvol) + local - 1) / local * local;
        s = tocl_nn_launch(dev, stream, k2, global, local, a, 3);
    }
    tocl_status fs = tocl_mem_free(part.addr);
    return s != TOCL_OK ? s : fs;
}
