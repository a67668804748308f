/* loss.c - pointwise losses with their reductions and the negative log
 * likelihood (kernels/loss.cl). A reduction runs in one work-group, so the
 * sum's order, and therefore its rounding, depends only on the size. */
#include <string.h>

#include "ops/nn_internal.h"

/* Work-items of an elementwise launch over n (rounded to local). */
static size_t loss_global(int64_t n, size_t local) { return ((size_t)n + local - 1) / local * local; }

static tocl_status loss_check(tocl_loss_kind kind, tocl_reduction red) {
    if ((int)kind < TOCL_LOSS_MSE || kind > TOCL_LOSS_BCE)
        return tocl_fail(TOCL_E_INVALID, "loss: unknown kind %d", (int)kind);
    if ((int)red < TOCL_REDUCE_NONE || red > TOCL_REDUCE_SUM)
        return tocl_fail(TOCL_E_INVALID, "loss: unknown reduction %d", (int)red);
    return TOCL_OK;
}

tocl_status tocl_nn_loss_forward(int dev, int stream, tocl_loss_kind kind, tocl_reduction red, double param,
                                 const tocl_tensor *input, const tocl_tensor *target, const tocl_tensor *weight,
                                 const tocl_tensor *out, const tocl_tensor *flag) {
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(loss_check(kind, red));
    TOCL_TRY(tocl_ops_check_tensor(input, "input"));
    int64_t n = tocl_ops_numel(input);
    tocl_nn_loss p;
    memset(&p, 0, sizeof p);
    cl_mem xb, tb, wb, yb, fb;
    cl_long fo = 0;
    TOCL_TRY(tocl_nn_operand(dev, input, "input", n, &xb, &p.x_off));
    TOCL_TRY(tocl_nn_operand(dev, target, "target", n, &tb, &p.t_off));
    TOCL_TRY(tocl_nn_operand(dev, out, "output", red == TOCL_REDUCE_NONE ? n : 1, &yb, &p.y_off));
    wb = xb;
    if (weight)
        TOCL_TRY(tocl_nn_operand(dev, weight, "weight", n, &wb, &p.w_off));
    fb = yb;
    if (kind == TOCL_LOSS_BCE && !flag)
        return tocl_fail(TOCL_E_INVALID, "binary cross entropy needs a flag tensor");
    if (flag) {
        if (flag->dtype != TOCL_I64)
            return tocl_fail(TOCL_E_INVALID, "loss flag must be int64");
        TOCL_TRY(tocl_nn_operand(dev, flag, "flag", 2, &fb, &fo));
    }
    if (!yb)
        return TOCL_OK; /* no output: nothing to do */
    if (!xb)
        xb = tb = wb = yb;
    p.n = n;
    p.flag_off = fo;
    p.p = param;
    p.pf = (float)param;
    p.kind = kind;
    p.reduction = red;
    p.has_w = weight != NULL;
    tocl_dtype dts[6] = {input->dtype, target->dtype, weight ? weight->dtype : input->dtype, out->dtype,
                         input->dtype, input->dtype};
    char opts[1024];
    TOCL_TRY(tocl_nn_options(dev, "XTWYGZ", dts, 0, opts, sizeof opts));
    tocl_ops_kernel *k;
    TOCL_TRY(tocl_ops_kernel_get(dev, "loss", "nn_loss_fwd", opts, &k));
    size_t local = tocl_nn_group_size(dev, k);
    size_t global = red == TOCL_REDUCE_NONE ? loss_global(n, local) : local;
    tocl_ops_arg a[] = {{sizeof xb, &xb}, {sizeof tb, &tb}, {sizeof wb, &wb},
                       {sizeof yb, &yb}, {sizeof fb, &fb}, {sizeof p, &p}};
    return tocl_nn_launch(dev, stream, k, global, local, a, 6);
}

tocl_status tocl_nn_loss_backward(int dev, int stream, tocl_loss_kind kind, tocl_reduction red, double param,
                                  const tocl_tensor *input, const tocl_tensor *target, const tocl_tensor *weight,
                                  const tocl_tensor *grad_out, const tocl_tensor *grad_in) {
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(loss_check(kind, red));
    TOCL_TRY(tocl_ops_check_tensor(input, "input"));
    TOCL_TRY(tocl_ops_check_tensor(grad_out, "grad_output"));
    int64_t n = tocl_ops_numel(input);
    tocl_nn_loss p;
    memset(&p, 0, sizeof p);
    cl_mem xb, tb, wb, gb, zb;
    TOCL_TRY(tocl_nn_operand(dev, input, "input", n, &xb, &p.x_off));
    TOCL_TRY(tocl_nn_operand(dev, target, "target", n, &tb, &p.t_off));
    TOCL_TRY(tocl_nn_operand(dev, grad_in, "grad_input", n, &zb, &p.z_off));
    int64_t gn = tocl_ops_numel(grad_out);
    p.g_scalar = gn == 1;
    TOCL_TRY(tocl_nn_operand(dev, grad_out, "grad_output", p.g_scalar ? 1 : n, &gb, &p.g_off));
    wb = xb;
    if (weight)
        TOCL_TRY(tocl_nn_operand(dev, weight, "weight", n, &wb, &p.w_off));
    if (n == 0)
        return TOCL_OK;
    p.n = n;
    p.p = param;
    p.pf = (float)param;
    p.kind = kind;
    p.reduction = red;
    p.has_w = weight != NULL;
    tocl_dtype dts[6] = {input->dtype, target->dtype, weight ? weight->dtype : input->dtype, input->dtype,
                         grad_out->dtype, grad_in->dtype};
    char opts[1024];
    TOCL_TRY(tocl_nn_options(dev, "XTWYGZ", dts, 0, opts, sizeof opts));
    tocl_ops_kernel *k;
    TOCL_TRY(tocl_ops_kernel_get(dev, "loss", "nn_loss_bwd", opts, &k));
    size_t local = tocl_nn_item_size(dev, k);
    tocl_ops_arg a[] = {{sizeof xb, &xb}, {sizeof tb, &tb}, {sizeof wb, &wb},
                       {sizeof gb, &gb}, {sizeof zb, &zb}, {sizeof p, &p}};
    return tocl_nn_launch(dev, stream, k, loss_global(n, local), local, a, 6);
}

static tocl_status nll_params(tocl_reduction red, int64_t ignore_index, int64_t n, int64_t c, int64_t s,
                              const tocl_tensor *target, const tocl_tensor *weight, tocl_nn_nll *p) {
    if ((int)red < TOCL_REDUCE_NONE || red > TOCL_REDUCE_SUM)
        return tocl_fail(TOCL_E_INVALID, "nll_loss: unknown reduction %d", (int)red);
    if (n < 0 || c < 0 || s < 0)
        return tocl_fail(TOCL_E_INVALID, "nll_loss: negative size");
    TOCL_TRY(tocl_ops_check_tensor(target, "target"));
    if (target->dtype != TOCL_I64)
        return tocl_fail(TOCL_E_INVALID, "nll_loss: target must be int64, got %s", tocl_dtype_name(target->dtype));
    memset(p, 0, sizeof *p);
    p->N = n, p->C = c, p->S = s;
    p->ignore_index = ignore_index;
    p->reduction = red;
    p->has_w = weight != NULL;
    return TOCL_OK;
}

tocl_status tocl_nn_nll_forward(int dev, int stream, tocl_reduction red, int64_t ignore_index, int64_t n, int64_t c,
                                int64_t s, const tocl_tensor *input, const tocl_tensor *target,
                                const tocl_tensor *weight, const tocl_tensor *out, const tocl_tensor *total_weight,
                                const tocl_tensor *flag) {
    TOCL_TRY(tocl_device_check(dev));
    tocl_nn_nll p;
    TOCL_TRY(nll_params(red, ignore_index, n, c, s, target, weight, &p));
    TOCL_TRY(tocl_ops_check_tensor(input, "input"));
    cl_mem xb, tb, wb, yb, twb, fb;
    cl_long fo;
    TOCL_TRY(tocl_nn_operand(dev, input, "input", n * c * s, &xb, &p.x_off));
    TOCL_TRY(tocl_nn_operand(dev, target, "target", n * s, &tb, &p.t_off));
    TOCL_TRY(tocl_nn_operand(dev, out, "output", red == TOCL_REDUCE_NONE ? n * s : 1, &yb, &p.y_off));
    twb = yb;
    if (red != TOCL_REDUCE_NONE) {
        TOCL_TRY(tocl_nn_operand(dev, total_weight, "total_weight", 1, &twb, &p.tw_off));
        if (total_weight->dtype != out->dtype)
            return tocl_fail(TOCL_E_INVALID, "nll_loss: total_weight must have the output's dtype");
    }
    if (!flag || flag->dtype != TOCL_I64)
        return tocl_fail(TOCL_E_INVALID, "nll_loss needs an int64 flag tensor");
    TOCL_TRY(tocl_nn_operand(dev, flag, "flag", 2, &fb, &fo));
    p.flag_off = fo;
    wb = yb;
    if (weight)
        TOCL_TRY(tocl_nn_operand(dev, weight, "weight", c, &wb, &p.w_off));
    if (!yb)
        return TOCL_OK;
    if (!xb)
        xb = tb = yb;
    if (!wb)
        wb = yb;
    tocl_dtype dts[2] = {input->dtype, weight ? weight->dtype : input->dtype};
    tocl_dtype all[6] = {dts[0], TOCL_F32, dts[1], out->dtype, input->dtype, input->dtype};
    char opts[1024];
    TOCL_TRY(tocl_nn_options(dev, "XTWYGZ", all, 0, opts, sizeof opts));
    tocl_ops_kernel *k;
    TOCL_TRY(tocl_ops_kernel_get(dev, "loss", "nn_nll_fwd", opts, &k));
    size_t local = tocl_nn_group_size(dev, k);
    size_t global = red == TOCL_REDUCE_NONE ? loss_global(n * s, local) : local;
    tocl_ops_arg a[] = {{sizeof xb, &xb},   {sizeof tb, &tb}, {sizeof wb, &wb}, {sizeof yb, &yb},
                       {sizeof twb, &twb}, {sizeof fb, &fb}, {sizeof p, &p}};
    return tocl_nn_launch(dev, stream, k, global, local, a, 7);
}

tocl_status tocl_nn_nll_backward(int dev, int stream, tocl_reduction red, int64_t ignore_index, int64_t n, int64_t c,
                                 int64_t s, const tocl_tensor *target, const tocl_tensor *weight,
                                 const tocl_tensor *grad_out, const tocl_tensor *total_weight,
                                 const tocl_tensor *grad_in) {
    TOCL_TRY(tocl_device_check(dev));
    tocl_nn_nll p;
    TOCL_TRY(nll_params(red, ignore_index, n, c, s, target, weight, &p));
    cl_mem tb, wb, gb, twb, zb;
    TOCL_TRY(tocl_nn_operand(dev, target, "target", n * s, &tb, &p.t_off));
    TOCL_TRY(tocl_nn_operand(dev, grad_out, "grad_output", red == TOCL_REDUCE_NONE ? n * s : 1, &gb, &p.g_off));
    TOCL_TRY(tocl_nn_operand(dev, grad_in, "grad_input", n * c * s, &zb, &p.z_off));
    TOCL_TRY(tocl_nn_operand(dev, total_weight, "total_weight", 1, &twb, &p.tw_off));
    wb = zb;
    if (weight)
        TOCL_TRY(tocl_nn_operand(dev, weight, "weight", c, &wb, &p.w_off));
    if (n * s == 0 || n * c * s == 0)
        return TOCL_OK;
    tocl_dtype all[6] = {grad_in->dtype, TOCL_F32, weight ? weight->dtype : grad_in->dtype, total_weight->dtype,
                         grad_out->dtype, grad_in->dtype};
    char opts[1024];
    TOCL_TRY(tocl_nn_options(dev, "XTWYGZ", all, 0, opts, sizeof opts));
    tocl_ops_kernel *k;
    TOCL_TRY(tocl_ops_kernel_get(dev, "loss", "nn_nll_bwd", opts, &k));
    size_t local = tocl_nn_item_size(dev, k);
    tocl_ops_arg a[] = {{sizeof tb, &tb}, {sizeof wb, &wb}, {sizeof gb, &gb},
                       {sizeof twb, &twb}, {sizeof zb, &zb}, {sizeof p, &p}};
    return tocl_nn_launch(dev, stream, k, loss_global(n * s, local), local, a, 6);
}
