/* conv_internal.h - what the convolution sources share: conv.c (checks,
 * im2col/col2im around grouped GEMMs, the entry points), conv_implicit.c
 * (the implicit products of CPU devices: forward, input and weight
 * gradients) and conv_depthwise.c (stride-1 depthwise kernels). */
#ifndef TOCL_CONV_INTERNAL_H
#define TOCL_CONV_INTERNAL_H

#include <stdint.h>

#include "conv_params.h"
#include "ops/gemm_internal.h"
#include "ops/nn_internal.h"
#include "tocl/conv.h"
#include "tocl/gemm.h"

/* The descriptor with spatial dims right-aligned in 3 (leading size 1). */
typedef struct conv_geo {
    int64_t x[3], y[3], k[3], s[3], p[3], d[3];
    int64_t xvol, L, kvol;
    int64_t cxg, cyg, Kg; /* channels per group; Kg = cxg * kvol, the GEMM depth */
} conv_geo;

/* An operand resolved for kernels; addr stays for copies and views. */
typedef struct conv_opnd {
    tocl_addr addr;
    cl_mem buf;
    cl_long off;
} conv_opnd;

/* One stride-1 convolution of src [N, C, sx] (padding pad, kernel k,
 * dilation dil) into out [N, M, so] with the implicit GEMM; the weight
 * w [M, C, kvol], or with flip w [C, M, kvol] read as the transposed,
 * spatially flipped kernel (input gradient). Batch in chunks of the
 * workspace budget. */
typedef struct conv_ig_job {
    cl_mem src, w, out, bias;
    int64_t src_off, w_off, out_off, b_off;
    int64_t N, C, M;
    int64_t sx[3], pad[3], k[3], dil[3], so[3];
    int flip, has_bias;
    int64_t st[3]; /* forward strides (phase planes); 1 for the input gradient */
} conv_ig_job;

/* conv.c */
int64_t tocl_conv_budget(void);              /* column workspace bytes per chunk */
int tocl_conv_pointwise(const conv_geo *g);  /* 1x1, stride 1, no padding: x is the column matrix */
int64_t tocl_conv_chunk(int64_t batch, int64_t per_item, size_t esz); /* batch items per chunk */
/* A workspace of n elements (tied to the stream) resolved for kernels. */
tocl_status tocl_conv_workspace(int dev, int stream, int64_t n, size_t esz, conv_opnd *o);
/* Free the workspaces that were allocated (addr != 0), all of them, and
 * return s, or the first failure to free when s is TOCL_OK. */
tocl_status tocl_conv_workspaces_free(tocl_status s, conv_opnd *const *ws, int n);
/* Kernel `name` of kernels/conv.cl; extra: further build options ("" for none). */
tocl_status tocl_conv_kernel(int dev, tocl_dtype dt, const char *extra, const char *name, tocl_ops_kernel **k);
/* One work-item per item (none for items <= 0). */
tocl_status tocl_conv_launch_opt(int dev, int stream, tocl_dtype dt, const char *extra, const char *name,
                                 int64_t items, const tocl_ops_arg *args, int nargs);

/* conv_amx.c: bfloat16 convolutions on AMX tiles (one group, not 1x1, 16
 * source channels or more, the GEMM's AMX probe passed; the input gradient
 * at stride 1); a job as for tocl_conv_ig_run (j->st: the forward's strides). */
int tocl_conv_amx_usable(int dev, int stream, const tocl_conv_desc *d, const conv_geo *g, tocl_dtype dt,
                         int input_grad);
tocl_status tocl_conv_amx_run(int dev, int stream, const conv_ig_job *j);
tocl_status tocl_conv_amx_wg_run(int dev, int stream, const tocl_conv_desc *d, const conv_geo *g,
                                 const conv_opnd *ox, const conv_opnd *oy, const conv_opnd *ow);

/* conv_implicit.c */
/* p for batch items [n0, n0 + nb) of job j (fewer at the end): N, the
 * source and output offsets, and the workspaces' offsets xp_off, ap_off. */
tocl_conv_ig_params tocl_conv_ig_chunk(const tocl_conv_ig_params *p, const conv_ig_job *j, int64_t n0, int64_t nb,
                                       cl_long xp_off, cl_long ap_off);
int tocl_conv_ig_usable(int dev, const tocl_conv_desc *d, const conv_geo *g, tocl_dtype dt, int strided);
tocl_status tocl_conv_ig_run(int dev, int stream, tocl_dtype dt, const conv_ig_job *j);
int tocl_conv_wg_usable(int dev, const tocl_conv_desc *d, const conv_geo *g, tocl_dtype dt);
tocl_status tocl_conv_wg_run(int dev, int stream, tocl_dtype dt, const tocl_conv_desc *d, const conv_geo *g,
                             const conv_opnd *ox, const conv_opnd *oy, const conv_opnd *ow);

/* conv_depthwise.c */
int tocl_conv_dw2d_usable(const conv_geo *g, int bwd_data);
tocl_status tocl_conv_dw2d_run(int dev, int stream, tocl_dtype dt, const conv_geo *g, int bwd_data, cl_mem in,
                               cl_mem w, cl_mem bias, cl_mem out, tocl_conv_dw_params *q);
tocl_status tocl_conv_dw2d_bwd_w(int dev, int stream, tocl_dtype dt, const conv_geo *g, cl_mem x, cl_mem dy,
                                 cl_mem gw, tocl_conv_dw_params *q);

#endif
