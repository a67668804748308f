/* pool.c - max/average/adaptive pooling forward and backward
 * (kernels/pool.cl): argument checks and launches. Kernels come from the nn
 * kernel cache (nn_internal.h), one program per dtype holding both passes. */
#include <string.h>

#include "ops/nn_internal.h"
#include "pool_params.h"
#include "tocl/pool.h"

static const char *pool_name(tocl_pool_kind k) {
    static const char *names[] = {"max_pool", "avg_pool", "adaptive_max_pool", "adaptive_avg_pool"};
    return (unsigned)k < 4 ? names[k] : "pool";
}

static int pool_is_max(tocl_pool_kind k) { return k == TOCL_POOL_MAX || k == TOCL_POOL_ADAPTIVE_MAX; }

/* Check d and fill the kernel's parameters (offsets left 0). */
static tocl_status pool_params_of(const tocl_pool_desc *d, tocl_pool_params *p) {
    const char *op = pool_name(d->kind);
    if ((unsigned)d->kind > TOCL_POOL_ADAPTIVE_AVG)
        return tocl_fail(TOCL_E_INVALID, "pool: unknown kind %d", (int)d->kind);
    if (d->nc < 0)
        return tocl_fail(TOCL_E_INVALID, "%s: negative batch*channels %lld", op, (long long)d->nc);
    memset(p, 0, sizeof *p);
    p->nc = d->nc;
    p->kind = (tocl_nn_i32)d->kind;
    p->count_include_pad = d->count_include_pad != 0;
    p->divisor = d->divisor_override;
    int adaptive = d->kind >= TOCL_POOL_ADAPTIVE_MAX;
    for (int j = 0; j < 3; j++) {
        if (d->in[j] < 0 || d->out[j] < 0)
            return tocl_fail(TOCL_E_INVALID, "%s: negative size in spatial dim %d", op, j);
        if (d->out[j] > 0 && d->in[j] == 0)
            return tocl_fail(TOCL_E_INVALID, "%s: output size %lld from an empty input in spatial dim %d", op,
                             (long long)d->out[j], j);
        p->in[j] = d->in[j];
        p->out[j] = d->out[j];
        if (adaptive)
            continue;
        if (d->kernel[j] <= 0 || d->stride[j] <= 0 || d->pad[j] < 0 ||
            (d->kind == TOCL_POOL_MAX && d->dilation[j] <= 0))
            return tocl_fail(TOCL_E_INVALID,
                             "%s: kernel %lld, stride %lld, padding %lld, dilation %lld in spatial dim %d: "
                             "kernel, stride and dilation must be positive, padding non-negative",
                             op, (long long)d->kernel[j], (long long)d->stride[j], (long long)d->pad[j],
                             (long long)d->dilation[j], j);
        p->k[j] = d->kernel[j];
        p->s[j] = d->stride[j];
        p->p[j] = d->pad[j];
        p->d[j] = d->kind == TOCL_POOL_MAX ? d->dilation[j] : 1;
    }
    return TOCL_OK;
}

/* Build options: every role has dtype t (one program per dtype). */
static tocl_status pool_opts(int dev, tocl_dtype t, char *buf, size_t cap) {
    tocl_dtype dts[4] = {t, t, t, t};
    return tocl_nn_options(dev, "XYGZ", dts, 1, buf, cap);
}

/* Chunk of consecutive row elements per work-item (POOL_CHUNK in the kernel). */
#define POOL_CHUNK 8

/* Launch kname over rows of `len` elements, one chunk per work-item. */
static tocl_status pool_run(int dev, int stream, const char *kname, tocl_dtype t, int64_t rows, int64_t len,
                            cl_mem a, cl_mem b, cl_mem c, const tocl_pool_params *p) {
    int64_t items = len ? rows * ((len + POOL_CHUNK - 1) / POOL_CHUNK) : 0;
    if (items == 0)
        return TOCL_OK;
    char opts[1024];
    TOCL_TRY(pool_opts(dev, t, opts, sizeof opts));
    tocl_ops_kernel *k;
    TOCL_TRY(tocl_ops_kernel_get(dev, "pool", kname, opts, &k));
    size_t local = tocl_nn_item_size(dev, k);
    size_t global = ((size_t)items + local - 1) / local * local;
    tocl_ops_arg args[] = {{sizeof a, &a}, {sizeof b, &b}, {sizeof c, &c}, {sizeof *p, p}};
    return tocl_nn_launch(dev, stream, k, global, local, args, 4);
}

/* CPU devices, fixed windows (MAX, AVG): pool_fwd_row (a work-item per
 * output row) and pool_bwd_plane (a work-item per plane, scattering in
 * output order) when there are enough rows / planes for every compute
 * unit; everything else takes the generic gather kernels. */
static int pool_cpu_fast(int dev, const tocl_pool_desc *d, int64_t items) {
    const tocl_device_props *pr = tocl_dev_props(dev);
    int64_t cu = pr->compute_units ? pr->compute_units : 1;
    return pr->kind == TOCL_DEVICE_CPU && (d->kind == TOCL_POOL_MAX || d->kind == TOCL_POOL_AVG) && items >= cu;
}

/* Launch kname with one work-item per unit of `items`, in groups small
 * enough that there are about 4 per compute unit. */
static tocl_status pool_run_items(int dev, int stream, const char *kname, tocl_dtype t, int64_t items, cl_mem a,
                                  cl_mem b, cl_mem c, const tocl_pool_params *p) {
    if (items == 0)
        return TOCL_OK;
    char opts[1024];
    TOCL_TRY(pool_opts(dev, t, opts, sizeof opts));
    tocl_ops_kernel *k;
    TOCL_TRY(tocl_ops_kernel_get(dev, "pool", kname, opts, &k));
    size_t local = tocl_nn_item_size(dev, k);
    uint32_t cu = tocl_dev_props(dev)->compute_units;
    int64_t want = items / (4 * (int64_t)(cu ? cu : 1));
    while (local > 1 && (int64_t)local > want)
        local /= 2;
    size_t global = ((size_t)items + local - 1) / local * local;
    tocl_ops_arg args[] = {{sizeof a, &a}, {sizeof b, &b}, {sizeof c, &c}, {sizeof *p, p}};
    return tocl_nn_launch(dev, stream, k, global, local, args, 4);
}

tocl_status tocl_pool_forward(int dev, int stream, const tocl_pool_desc *d, const tocl_tensor *x,
                              const tocl_tensor *y, const tocl_tensor *indices) {
    TOCL_TRY(tocl_device_check(dev));
    tocl_pool_params p;
    TOCL_TRY(pool_params_of(d, &p));
    const char *op = pool_name(d->kind);
    int64_t in_n = d->nc * d->in[0] * d->in[1] * d->in[2], out_n = d->nc * d->out[0] * d->out[1] * d->out[2];
    cl_mem bx, by, bi = NULL;
    cl_long ox, oy, oi = 0;
    TOCL_TRY(tocl_nn_operand(dev, x, "input", in_n, &bx, &ox));
    TOCL_TRY(tocl_nn_operand(dev, y, "output", out_n, &by, &oy));
    if (x->dtype != y->dtype)
        return tocl_fail(TOCL_E_INVALID, "%s: output dtype %s differs from input dtype %s", op,
                         tocl_dtype_name(y->dtype), tocl_dtype_name(x->dtype));
    if (pool_is_max(d->kind)) {
        if (!indices)
            return tocl_fail(TOCL_E_INVALID, "%s: indices are required", op);
        if (indices->dtype != TOCL_I64)
            return tocl_fail(TOCL_E_INVALID, "%s: indices must be int64, got %s", op,
                             tocl_dtype_name(indices->dtype));
        TOCL_TRY(tocl_nn_operand(dev, indices, "indices", out_n, &bi, &oi));
    }
    p.x_off = ox;
    p.y_off = oy;
    p.i_off = oi;
    int64_t rows = d->nc * d->out[0] * d->out[1];
    if (pool_cpu_fast(dev, d, rows))
        return pool_run_items(dev, stream, "pool_fwd_row", x->dtype, d->out[2] ? rows : 0, bx, by, bi, &p);
    return pool_run(dev, stream, "pool_fwd", x->dtype, d->nc * d->out[0] * d->out[1], d->out[2], bx, by, bi, &p);
}

tocl_status tocl_pool_backward(int dev, int stream, const tocl_pool_desc *d, const tocl_tensor *grad_out,
                               const tocl_tensor *indices, const tocl_tensor *grad_in) {
    TOCL_TRY(tocl_device_check(dev));
    tocl_pool_params p;
    TOCL_TRY(pool_params_of(d, &p));
    const char *op = pool_name(d->kind);
    int64_t in_n = d->nc * d->in[0] * d->in[1] * d->in[2], out_n = d->nc * d->out[0] * d->out[1] * d->out[2];
    cl_mem bg, bz, bi = NULL;
    cl_long og, oz, oi = 0;
    TOCL_TRY(tocl_nn_operand(dev, grad_out, "grad_output", out_n, &bg, &og));
    TOCL_TRY(tocl_nn_operand(dev, grad_in, "grad_input", in_n, &bz, &oz));
    if (grad_out->dtype != grad_in->dtype)
        return tocl_fail(TOCL_E_INVALID, "%s backward: grad_input dtype %s differs from grad_output dtype %s", op,
                         tocl_dtype_name(grad_in->dtype), tocl_dtype_name(grad_out->dtype));
    if (pool_is_max(d->kind)) {
        if (!indices || indices->dtype != TOCL_I64)
            return tocl_fail(TOCL_E_INVALID, "%s backward: int64 indices are required", op);
        TOCL_TRY(tocl_nn_operand(dev, indices, "indices", out_n, &bi, &oi));
    }
    p.x_off = oz;
    p.y_off = og;
    p.i_off = oi;
    if (pool_cpu_fast(dev, d, d->nc))
        return pool_run_items(dev, stream, "pool_bwd_plane", grad_in->dtype, in_n ? d->nc : 0, bg, bi, bz, &p);
    return pool_run(dev, stream, "pool_bwd", grad_in->dtype, d->nc * d->in[0] * d->in[1], d->in[2], bg, bi, bz, &p);
}
