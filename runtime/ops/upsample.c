/* upsample.c - nearest, nearest-exact, linear and bicubic resampling,
 * forward and backward (kernels/upsample.cl): argument checks, the per-dim
 * ratios (computed here as the CPU computes them, so source indices match
 * bit for bit) and launches through the nn kernel cache. */
#include <stdio.h>
#include <string.h>

#include "ops/nn_internal.h"
#include "pool_params.h"
#include "tocl/pool.h"

static const char *up_name(tocl_upsample_mode m) {
    static const char *names[] = {"upsample_nearest", "upsample_nearest_exact", "upsample_linear",
                                  "upsample_bicubic"};
    return (unsigned)m < 4 ? names[m] : "upsample";
}

/* PyTorch's area_pixel_compute_scale (linear/cubic) or compute_scales_value
 * (nearest), in float and in double: the kernel reads the one matching its
 * arithmetic. */
static void up_ratio(const tocl_upsample_desc *d, int j, double *rd, float *rf) {
    int64_t in = d->in[j], out = d->out[j];
    double s = d->scales[j];
    int nearest = d->mode == TOCL_UPSAMPLE_NEAREST || d->mode == TOCL_UPSAMPLE_NEAREST_EXACT;
    if (out <= 0) {
        *rd = 0;
        *rf = 0;
    } else if (d->align_corners && !nearest) {
        *rd = out > 1 ? (double)(in - 1) / (double)(out - 1) : 0;
        *rf = out > 1 ? (float)(in - 1) / (float)(out - 1) : 0;
    } else if (s > 0) {
        *rd = 1.0 / s;
        *rf = (float)(1.0 / s);
    } else {
        *rd = (double)in / (double)out;
        *rf = (float)in / (float)out;
    }
}

static tocl_status up_params_of(const tocl_upsample_desc *d, tocl_upsample_params *p) {
    const char *op = up_name(d->mode);
    if ((unsigned)d->mode > TOCL_UPSAMPLE_CUBIC)
        return tocl_fail(TOCL_E_INVALID, "upsample: unknown mode %d", (int)d->mode);
    if (d->nc < 0)
        return tocl_fail(TOCL_E_INVALID, "%s: negative batch*channels %lld", op, (long long)d->nc);
    memset(p, 0, sizeof *p);
    p->nc = d->nc;
    p->mode = (tocl_nn_i32)d->mode;
    p->align_corners = d->align_corners != 0;
    for (int j = 0; j < 3; j++) {
        if (d->in[j] <= 0 || d->out[j] <= 0)
            return tocl_fail(TOCL_E_INVALID,
                             "%s: input and output sizes should be greater than 0, got input %lld, output %lld "
                             "in spatial dim %d", op, (long long)d->in[j], (long long)d->out[j], j);
        p->in[j] = d->in[j];
        p->out[j] = d->out[j];
        up_ratio(d, j, &p->ratio[j], &p->ratiof[j]);
    }
    return TOCL_OK;
}

/* Chunk of consecutive row elements per work-item (UP_CHUNK in the kernel). */
#define UP_CHUNK 8

static int up_taps(tocl_upsample_mode m) { return m == TOCL_UPSAMPLE_CUBIC ? 4 : m == TOCL_UPSAMPLE_LINEAR ? 2 : 1; }

/* Fill the tap table (a scratch block freed in stream order) and launch
 * kname over rows of `len` elements, one chunk per work-item. The mode is
 * a build option: one program per dtype and mode. */
static tocl_status up_run(int dev, int stream, const char *kname, tocl_dtype t, int64_t rows, int64_t len, cl_mem a,
                          cl_mem b, tocl_upsample_params *p) {
    int64_t items = rows * ((len + UP_CHUNK - 1) / UP_CHUNK);
    if (items == 0)
        return TOCL_OK;
    tocl_dtype dts[4] = {t, t, t, t};
    char opts[1024];
    TOCL_TRY(tocl_nn_options(dev, "XYGZ", dts, 1, opts, sizeof opts - 16));
    size_t len_opts = strlen(opts);
    snprintf(opts + len_opts, sizeof opts - len_opts, " -DUP_MODE=%d", (int)p->mode);
    tocl_ops_kernel *kt, *k;
    TOCL_TRY(tocl_ops_kernel_get(dev, "upsample", "up_table", opts, &kt));
    TOCL_TRY(tocl_ops_kernel_get(dev, "upsample", kname, opts, &k));

    int64_t nt = up_taps((tocl_upsample_mode)p->mode), entries = p->out[0] + p->out[1] + p->out[2];
    size_t accsz = t == TOCL_F64 ? 8 : 4, ibytes = (size_t)(entries * nt) * 8;
    tocl_addr tab = 0;
    TOCL_TRY(tocl_mem_alloc(dev, ibytes + (size_t)(entries * nt) * accsz, &tab));
    tocl_status s = stream != tocl_stream_current(dev) ? tocl_mem_record_stream(tab, stream) : TOCL_OK;
    cl_mem tbuf = NULL;
    if (s == TOCL_OK) {
        int mdev;
        size_t boff;
        s = tocl_mem_resolve(tab, &mdev, &tbuf, &boff);
        p->ti_off = (tocl_nn_i64)(boff / 8); /* blocks are 512-byte aligned */
        p->tw_off = (tocl_nn_i64)((boff + ibytes) / accsz);
    }
    p->t_base[0] = 0;
    p->t_base[1] = p->out[0];
    p->t_base[2] = p->out[0] + p->out[1];
    if (s == TOCL_OK) {
        size_t local = tocl_nn_item_size(dev, kt), global = ((size_t)entries + local - 1) / local * local;
        tocl_ops_arg args[] = {{sizeof tbuf, &tbuf}, {sizeof tbuf, &tbuf}, {sizeof *p, p}};
        s = tocl_nn_launch(dev, stream, kt, global, local, args, 3);
    }
    if (s == TOCL_OK) {
        size_t local = tocl_nn_item_size(dev, k), global = ((size_t)items + local - 1) / local * local;
        tocl_ops_arg args[] = {{sizeof a, &a}, {sizeof b, &b}, {sizeof tbuf, &tbuf}, {sizeof tbuf, &tbuf},
                              {sizeof *p, p}};
        s = tocl_nn_launch(dev, stream, k, global, local, args, 5);
    }
    tocl_mem_free(tab); /* reused only by work ordered after these launches */
    return s;
}

/* Check d, both operands and their dtypes; fill p with offsets. */
static tocl_status up_operands(int dev, const tocl_upsample_desc *d, tocl_upsample_params *p, const tocl_tensor *in,
                               const char *in_what, const tocl_tensor *out, const char *out_what, cl_mem *bin,
                               cl_mem *bout) {
    TOCL_TRY(up_params_of(d, p));
    cl_long oin, oout;
    TOCL_TRY(tocl_nn_operand(dev, in, in_what, d->nc * d->in[0] * d->in[1] * d->in[2], bin, &oin));
    TOCL_TRY(tocl_nn_operand(dev, out, out_what, d->nc * d->out[0] * d->out[1] * d->out[2], bout, &oout));
    if (in->dtype != out->dtype)
        return tocl_fail(TOCL_E_INVALID, "%s: %s dtype %s differs from %s dtype %s", up_name(d->mode), out_what,
                         tocl_dtype_name(out->dtype), in_what, tocl_dtype_name(in->dtype));
    p->x_off = oin;
    p->y_off = oout;
    return TOCL_OK;
}

tocl_status tocl_upsample_forward(int dev, int stream, const tocl_upsample_desc *d, const tocl_tensor *x,
                                  const tocl_tensor *y) {
    TOCL_TRY(tocl_device_check(dev));
    tocl_upsample_params p;
    cl_mem bx, by;
    TOCL_TRY(up_operands(dev, d, &p, x, "input", y, "output", &bx, &by));
    return up_run(dev, stream, "up_fwd", x->dtype, d->nc * d->out[0] * d->out[1], d->out[2], bx, by, &p);
}

tocl_status tocl_upsample_backward(int dev, int stream, const tocl_upsample_desc *d, const tocl_tensor *grad_out,
                                   const tocl_tensor *grad_in) {
    TOCL_TRY(tocl_device_check(dev));
    tocl_upsample_params p;
    cl_mem bz, bg;
    /* p.x_off is grad_input's offset, p.y_off grad_output's, as in the kernel */
    TOCL_TRY(up_operands(dev, d, &p, grad_in, "grad_input", grad_out, "grad_output", &bz, &bg));
    return up_run(dev, stream, "up_bwd", grad_in->dtype, d->nc * d->in[0] * d->in[1], d->in[2], bg, bz, &p);
}
