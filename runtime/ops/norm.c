/* norm.c - layer, group and batch normalisation (kernels/norm.cl): each
 * kind is a row geometry (which elements share statistics) plus a weight
 * index map, so one forward and one backward kernel serve all three. */
#include <string.h>

#include "ops/nn_internal.h"

/* Rows of statistics, their elements, and the weight map of d. */
static tocl_status norm_geometry(const tocl_norm_desc *d, tocl_nn_rows *p, tocl_nn_norm *q, tocl_nn_cols *c) {
    if (d->n < 0 || d->c < 0 || d->hw < 0)
        return tocl_fail(TOCL_E_INVALID, "normalisation: negative size (n %lld, c %lld, hw %lld)", (long long)d->n,
                         (long long)d->c, (long long)d->hw);
    memset(p, 0, sizeof *p);
    memset(q, 0, sizeof *q);
    memset(c, 0, sizeof *c);
    q->eps = d->eps;
    q->momentum = d->momentum;
    q->epsf = (float)d->eps;
    q->momentumf = (float)d->momentum;
    p->inner = 1;
    c->cols = d->c;
    c->A = d->n;
    switch (d->kind) {
    case TOCL_NORM_LAYER:
        if (d->hw != 1)
            return tocl_fail(TOCL_E_INVALID, "layer norm expects hw 1, got %lld", (long long)d->hw);
        p->rows = d->n, p->n = d->c, p->so = d->c, p->b = d->c;
        q->wmod = 1, q->wrs = 0, q->wdiv = 1;
        c->B = 1, c->sa = d->c, c->sc = 1, c->ss = 1, c->cdiv = d->c + 1;
        return TOCL_OK;
    case TOCL_NORM_GROUP: {
        if (d->groups <= 0 || d->c % d->groups)
            return tocl_fail(TOCL_E_INVALID, "group norm expects channels (%lld) divisible by groups (%lld)",
                             (long long)d->c, (long long)d->groups);
        int64_t cg = d->c / d->groups;
        p->rows = d->n * d->groups, p->n = cg * d->hw, p->so = p->n, p->b = p->n;
        q->wmod = d->groups, q->wrs = cg, q->wdiv = d->hw ? d->hw : 1;
        c->B = d->hw, c->sa = d->c * d->hw, c->sc = d->hw, c->ss = d->groups, c->cdiv = cg ? cg : 1;
        return TOCL_OK;
    }
    case TOCL_NORM_BATCH:
        p->rows = d->c, p->n = d->n * d->hw, p->inner = d->c ? d->c : 1, p->si = d->hw, p->so = 0;
        p->b = d->hw ? d->hw : 1, p->sa = d->c * d->hw;
        q->wmod = d->c ? d->c : 1, q->wrs = 1, q->wdiv = p->n ? p->n : 1;
        return TOCL_OK;
    }
    return tocl_fail(TOCL_E_INVALID, "normalisation: unknown kind %d", (int)d->kind);
}

typedef struct norm_operand {
    const tocl_tensor *t;
    const char *what;
    int64_t numel;
    cl_mem buf;
    cl_long off;
} norm_operand;

/* Resolve present operands; absent ones alias `fallback`'s buffer. */
static tocl_status norm_resolve(int dev, norm_operand *ops, int n, cl_mem fallback) {
    for (int i = 0; i < n; i++) {
        ops[i].buf = fallback;
        ops[i].off = 0;
        if (ops[i].t)
            TOCL_TRY(tocl_nn_operand(dev, ops[i].t, ops[i].what, ops[i].numel, &ops[i].buf, &ops[i].off));
        if (!ops[i].buf)
            ops[i].buf = fallback;
    }
    return TOCL_OK;
}

/* Batch norm's backward runs on a CPU sum in double where the device has
 * it (-DNN_SUM_F64, kernels/norm.cl); the forward only for channels of
 * 2^18 elements or more: below that its float cascade is within twice the
 * CPU's error of a float64 referee on the tests (at 1M elements it was
 * not), and wide_resnet50_2's train step at 32x32 (batch norm over 4 values
 * in layer4, where dx cancels) amplifies the last bits of upstream
 * statistics: it passed the sweep at 3.7x the CPU's error with float
 * forward sums, failed at 9.5x with double ones (3.8x on the old path). */
static tocl_status norm_runs_options(int dev, int runs, char *opts, size_t cap) {
    size_t len = strlen(opts);
    if (!runs || !tocl_dev_props(dev)->has_fp64)
        return TOCL_OK;
    if (len + 16 > cap)
        return tocl_fail(TOCL_E_INTERNAL, "nn kernel options do not fit %zu bytes", cap);
    strcat(opts, " -DNN_SUM_F64");
    return TOCL_OK;
}

static tocl_dtype dt_or(const tocl_tensor *t, const tocl_tensor *alt) { return t ? t->dtype : alt->dtype; }

tocl_status tocl_nn_norm_forward(int dev, int stream, const tocl_norm_desc *d, int training, const tocl_tensor *x,
                                 const tocl_tensor *y, const tocl_tensor *weight, const tocl_tensor *bias,
                                 const tocl_tensor *mean, const tocl_tensor *rstd, const tocl_tensor *running_mean,
                                 const tocl_tensor *running_var) {
    TOCL_TRY(tocl_device_check(dev));
    tocl_nn_rows p;
    tocl_nn_norm q;
    tocl_nn_cols c;
    TOCL_TRY(norm_geometry(d, &p, &q, &c));
    if (!training && d->kind != TOCL_NORM_BATCH)
        return tocl_fail(TOCL_E_INVALID, "only batch norm has an eval mode");
    if (!training && !(running_mean && running_var && y))
        return tocl_fail(TOCL_E_INVALID, "batch norm eval needs running_mean, running_var and an output");
    if ((running_mean != NULL) != (running_var != NULL))
        return tocl_fail(TOCL_E_INVALID, "batch norm needs both running_mean and running_var, or neither");
    if ((mean != NULL) != (rstd != NULL))
        return tocl_fail(TOCL_E_INVALID, "normalisation stores both mean and rstd, or neither");
    int64_t numel = d->n * d->c * d->hw;
    TOCL_TRY(tocl_ops_check_tensor(x, "input"));
    cl_mem xb;
    cl_long xo;
    TOCL_TRY(tocl_nn_operand(dev, x, "input", numel, &xb, &xo));
    norm_operand ops[] = {{y, "output", numel, 0, 0},          {weight, "weight", d->c, 0, 0},
                          {bias, "bias", d->c, 0, 0},          {mean, "mean", p.rows, 0, 0},
                          {rstd, "rstd", p.rows, 0, 0},        {running_mean, "running_mean", p.rows, 0, 0},
                          {running_var, "running_var", p.rows, 0, 0}};
    if (p.rows == 0 || (numel == 0 && training && !mean && !running_mean))
        return TOCL_OK;
    if (!xb) { /* empty rows of statistics: still produce them */
        xb = NULL;
        for (int i = 0; i < 7 && !xb; i++)
            if (ops[i].t && tocl_ops_numel(ops[i].t) > 0)
                TOCL_TRY(tocl_nn_operand(dev, ops[i].t, ops[i].what, ops[i].numel, &xb, &xo));
        xo = 0;
    }
    TOCL_TRY(norm_resolve(dev, ops, 7, xb));
    if (weight && bias && weight->dtype != bias->dtype)
        return tocl_fail(TOCL_E_INVALID, "normalisation expects weight and bias of one dtype, got %s and %s",
                         tocl_dtype_name(weight->dtype), tocl_dtype_name(bias->dtype));
    q.flags = (weight ? TOCL_NN_HAS_W : 0) | (bias ? TOCL_NN_HAS_B : 0) | (y ? TOCL_NN_WRITE_Y : 0) |
              (!training ? TOCL_NN_GIVEN_STATS : 0) | (training && mean ? TOCL_NN_WRITE_STATS : 0) |
              (training && running_mean ? TOCL_NN_UPDATE_RUNNING : 0);
    p.x_off = xo;
    p.y_off = ops[0].off;
    q.w_off = ops[1].off, q.b_off = ops[2].off, q.mean_off = ops[3].off, q.rstd_off = ops[4].off;
    q.rm_off = ops[5].off, q.rv_off = ops[6].off;
    int runs = tocl_nn_bn_runs(dev, d->kind == TOCL_NORM_BATCH, p.n);
    int item = runs || tocl_nn_use_items(dev, p.rows, p.n, 0, d->kind == TOCL_NORM_BATCH);
    q.flags |= runs ? TOCL_NN_RUNS : 0;
    tocl_dtype dts[5] = {x->dtype, dt_or(y, x), weight ? weight->dtype : dt_or(bias, x), dt_or(mean, x),
                         dt_or(running_mean, x)};
    char opts[1024];
    TOCL_TRY(tocl_nn_options(dev, "XYWSR", dts, item, opts, sizeof opts));
    TOCL_TRY(norm_runs_options(dev, runs && p.n >= ((int64_t)1 << 18), opts, sizeof opts));
    tocl_ops_kernel *k;
    TOCL_TRY(tocl_ops_kernel_get(dev, "norm", "nn_norm_fwd", opts, &k));
    size_t local = runs ? TOCL_NN_BN_LOCAL : item ? tocl_nn_rows_local(dev, k, p.rows) : tocl_nn_group_size(dev, k);
    size_t global = item ? ((size_t)p.rows + local - 1) / local * local : (size_t)p.rows * local;
    tocl_ops_arg a[] = {{sizeof xb, &xb},
                       {sizeof(cl_mem), &ops[0].buf},
                       {sizeof(cl_mem), &ops[1].buf},
                       {sizeof(cl_mem), &ops[2].buf},
                       {sizeof(cl_mem), &ops[3].buf},
                       {sizeof(cl_mem), &ops[4].buf},
                       {sizeof(cl_mem), &ops[5].buf},
                       {sizeof(cl_mem), &ops[6].buf},
                       {sizeof p, &p},
                       {sizeof q, &q}};
    return tocl_nn_launch(dev, stream, k, global, local, a, 10);
}

/* Layer norm's dw/db on a CPU device: chunks of whole rows, each summed by
 * one work-item into its partials (nn_norm_cols_rows), then the chunks
 * added in order per column (nn_norm_cols_sum); deterministic. */
static tocl_status norm_cols_by_rows(int dev, int stream, const tocl_nn_cols *c, const tocl_dtype *dts, cl_mem xb,
                                     cl_mem gb, cl_mem mb, cl_mem rb, cl_mem dwb, cl_mem dbb, cl_int fl) {
    const tocl_device_props *pr = tocl_dev_props(dev);
    int64_t cu = pr->compute_units ? pr->compute_units : 1;
    int64_t chunks = 4 * cu < c->A ? 4 * cu : c->A;
    cl_long rows_per = (c->A + chunks - 1) / chunks;
    chunks = (c->A + rows_per - 1) / rows_per;
    char opts[1024];
    TOCL_TRY(tocl_nn_options(dev, "XGSW", dts, 1, opts, sizeof opts));
    /* partials in the accumulation type: double when any role is float64 (tocl_nn_options) */
    int f64 = 0;
    for (int i = 0; i < 4; i++)
        f64 |= dts[i] == TOCL_F64;
    tocl_ops_scratch part;
    TOCL_TRY(tocl_ops_scratch_get(dev, stream, 2 * chunks * c->cols, f64 ? 8 : 4, &part));
    cl_mem pb = part.buf;
    cl_long pel = part.off;
    tocl_status s = TOCL_OK;
    tocl_ops_kernel *k1 = NULL, *k2 = NULL;
    if (s == TOCL_OK)
        s = tocl_ops_kernel_get(dev, "norm", "nn_norm_cols_rows", opts, &k1);
    if (s == TOCL_OK)
        s = tocl_ops_kernel_get(dev, "norm", "nn_norm_cols_sum", opts, &k2);
    if (s == TOCL_OK) {
        tocl_ops_arg a[] = {{sizeof xb, &xb}, {sizeof gb, &gb}, {sizeof mb, &mb},  {sizeof rb, &rb},
                            {sizeof pb, &pb}, {sizeof *c, c},   {sizeof rows_per, &rows_per}, {sizeof pel, &pel}};
        s = tocl_nn_launch(dev, stream, k1, (size_t)chunks, 1, a, 8);
    }
    if (s == TOCL_OK) {
        cl_long nch = chunks;
        tocl_ops_arg a[] = {{sizeof pb, &pb}, {sizeof dwb, &dwb}, {sizeof dbb, &dbb},
                            {sizeof *c, c},   {sizeof nch, &nch}, {sizeof fl, &fl}, {sizeof pel, &pel}};
        size_t local = tocl_nn_item_size(dev, k2);
        s = tocl_nn_launch(dev, stream, k2, ((size_t)c->cols + local - 1) / local * local, local, a, 7);
    }
    tocl_status fs = tocl_mem_free(part.addr);
    return s != TOCL_OK ? s : fs;
}

tocl_status tocl_nn_norm_backward(int dev, int stream, const tocl_norm_desc *d, int training, const tocl_tensor *x,
                                  const tocl_tensor *grad_out, const tocl_tensor *grad_in, const tocl_tensor *weight,
                                  const tocl_tensor *mean, const tocl_tensor *rstd, const tocl_tensor *running_mean,
                                  const tocl_tensor *running_var, const tocl_tensor *grad_weight,
                                  const tocl_tensor *grad_bias) {
    TOCL_TRY(tocl_device_check(dev));
    tocl_nn_rows p;
    tocl_nn_norm q;
    tocl_nn_cols c;
    TOCL_TRY(norm_geometry(d, &p, &q, &c));
    if (training && !(mean && rstd))
        return tocl_fail(TOCL_E_INVALID, "normalisation backward needs the saved mean and rstd");
    if (!training && (d->kind != TOCL_NORM_BATCH || !running_mean || !running_var))
        return tocl_fail(TOCL_E_INVALID, "normalisation backward in eval mode is batch norm with running stats");
    int64_t numel = d->n * d->c * d->hw;
    if (p.rows == 0 && !grad_weight && !grad_bias)
        return TOCL_OK;
    cl_mem xb, gb;
    cl_long xo, go;
    TOCL_TRY(tocl_nn_operand(dev, x, "input", numel, &xb, &xo));
    TOCL_TRY(tocl_nn_operand(dev, grad_out, "grad_output", numel, &gb, &go));
    norm_operand ops[] = {{grad_in, "grad_input", numel, 0, 0},         {weight, "weight", d->c, 0, 0},
                          {mean, "mean", p.rows, 0, 0},                 {rstd, "rstd", p.rows, 0, 0},
                          {running_mean, "running_mean", p.rows, 0, 0}, {running_var, "running_var", p.rows, 0, 0},
                          {grad_weight, "grad_weight", d->c, 0, 0},     {grad_bias, "grad_bias", d->c, 0, 0}};
    cl_mem any = xb;
    for (int i = 0; i < 8 && !any; i++)
        if (ops[i].t && tocl_ops_numel(ops[i].t) > 0)
            TOCL_TRY(tocl_nn_operand(dev, ops[i].t, ops[i].what, ops[i].numel, &any, &xo));
    if (!xb)
        xo = 0;
    if (!any)
        return TOCL_OK; /* nothing to read or write */
    TOCL_TRY(norm_resolve(dev, ops, 8, any));
    if (!xb)
        xb = gb = any;
    tocl_dtype wdt = weight ? weight->dtype : grad_weight ? grad_weight->dtype : dt_or(grad_bias, x);
    if (grad_weight && grad_weight->dtype != wdt)
        return tocl_fail(TOCL_E_INVALID, "grad_weight must have the weight's dtype");
    if (grad_bias && grad_bias->dtype != wdt)
        return tocl_fail(TOCL_E_INVALID, "grad_bias must have the weight's dtype");
    tocl_dtype sdt = dt_or(mean, x), rdt = dt_or(running_mean, x);
    int row_affine = d->kind == TOCL_NORM_BATCH;
    q.flags = (weight ? TOCL_NN_HAS_W : 0) | (grad_in ? TOCL_NN_WRITE_Y : 0) | (!training ? TOCL_NN_GIVEN_STATS : 0) |
              (row_affine && grad_weight ? TOCL_NN_STORE_DW : 0) | (row_affine && grad_bias ? TOCL_NN_STORE_DB : 0);
    p.x_off = xo, p.g_off = go, p.z_off = ops[0].off;
    q.w_off = ops[1].off, q.mean_off = ops[2].off, q.rstd_off = ops[3].off, q.rm_off = ops[4].off;
    q.rv_off = ops[5].off, q.dw_off = ops[6].off, q.db_off = ops[7].off;
    char opts[1024];
    tocl_ops_kernel *k;
    if ((grad_in || (row_affine && (grad_weight || grad_bias))) && p.rows > 0) {
        int runs = tocl_nn_bn_runs(dev, d->kind == TOCL_NORM_BATCH, p.n);
        int item = runs || tocl_nn_use_items(dev, p.rows, p.n, 0, d->kind == TOCL_NORM_BATCH);
        q.flags |= runs ? TOCL_NN_RUNS : 0;
        tocl_dtype dts[6] = {x->dtype, grad_out->dtype, dt_or(grad_in, x), wdt, sdt, rdt};
        TOCL_TRY(tocl_nn_options(dev, "XGZWSR", dts, item, opts, sizeof opts));
        TOCL_TRY(norm_runs_options(dev, runs, opts, sizeof opts));
        TOCL_TRY(tocl_ops_kernel_get(dev, "norm", "nn_norm_bwd", opts, &k));
        size_t local = runs ? TOCL_NN_BN_LOCAL : item ? tocl_nn_rows_local(dev, k, p.rows) : tocl_nn_group_size(dev, k);
        size_t global = item ? ((size_t)p.rows + local - 1) / local * local : (size_t)p.rows * local;
        tocl_ops_arg a[] = {{sizeof xb, &xb},
                           {sizeof gb, &gb},
                           {sizeof(cl_mem), &ops[0].buf},
                           {sizeof(cl_mem), &ops[1].buf},
                           {sizeof(cl_mem), &ops[2].buf},
                           {sizeof(cl_mem), &ops[3].buf},
                           {sizeof(cl_mem), &ops[4].buf},
                           {sizeof(cl_mem), &ops[5].buf},
                           {sizeof(cl_mem), &ops[6].buf},
                           {sizeof(cl_mem), &ops[7].buf},
                           {sizeof p, &p},
                           {sizeof q, &q}};
        TOCL_TRY(tocl_nn_launch(dev, stream, k, global, local, a, 12));
    }
    if (row_affine || !(grad_weight || grad_bias) || d->c == 0)
        return TOCL_OK;
    /* layer/group norm: dw/db summed over the statistics rows per column */
    tocl_dtype dts[4] = {x->dtype, grad_out->dtype, sdt, wdt};
    c.x_off = xo, c.g_off = go, c.mean_off = q.mean_off, c.rstd_off = q.rstd_off;
    c.dw_off = q.dw_off, c.db_off = q.db_off;
    cl_int fl = (grad_weight ? TOCL_NN_HAS_W : 0) | (grad_bias ? TOCL_NN_HAS_B : 0);
    if (tocl_dev_props(dev)->kind == TOCL_DEVICE_CPU && c.B == 1 && c.sc == 1 && c.cdiv >= c.cols && c.A >= 64)
        return norm_cols_by_rows(dev, stream, &c, dts, xb, gb, ops[2].buf, ops[3].buf, ops[6].buf, ops[7].buf, fl);
    TOCL_TRY(tocl_nn_options(dev, "XGSW", dts, 0, opts, sizeof opts));
    TOCL_TRY(tocl_ops_kernel_get(dev, "norm", "nn_norm_cols", opts, &k));
    size_t local = tocl_nn_item_size(dev, k);
    size_t global = ((size_t)c.cols + local - 1) / local * local;
    tocl_ops_arg a[] = {{sizeof xb, &xb},
                       {sizeof gb, &gb},
                       {sizeof(cl_mem), &ops[2].buf},
                       {sizeof(cl_mem), &ops[3].buf},
                       {sizeof(cl_mem), &ops[6].buf},
                       {sizeof(cl_mem), &ops[7].buf},
                       {sizeof c, &c},
                       {sizeof fl, &fl}};
    return tocl_nn_launch(dev, stream, k, global, local, a, 8);
}
