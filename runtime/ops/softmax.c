/* softmax.c - softmax and log-softmax along any dim (kernels/softmax.cl),
 * and the kernel cache, dtype roles and launches shared by the nn row
 * kernels (nn_internal.h); kernel objects come from the one kernel cache
 * (program/kernels.c). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/nn_internal.h"

tocl_status tocl_nn_options(int dev, const char *roles, const tocl_dtype *dts, int item, char *buf, size_t cap) {
    size_t len = 0;
    int f64 = 0;
    buf[0] = 0;
    for (int i = 0; roles[i]; i++) {
        const char *ty, *sfx;
        switch (dts[i]) {
        case TOCL_F32: ty = "float", sfx = "F32"; break;
        case TOCL_F64: ty = "double", sfx = "F64", f64 = 1; break;
        case TOCL_F16: ty = "half", sfx = "F16"; break;
        case TOCL_BF16: ty = "ushort", sfx = "BF16"; break;
        default:
            return tocl_fail(TOCL_E_UNSUPPORTED, "nn kernels support floating dtypes (float16, bfloat16, float32, "
                             "float64), got %s", tocl_dtype_name(dts[i]));
        }
        char r = roles[i];
        int k = snprintf(buf + len, cap - len, "-D%c_T=%s -DLD%c=NN_LD_%s -DST%c=NN_ST_%s ", r, ty, r, sfx, r, sfx);
        if (k < 0 || (size_t)k >= cap - len)
            return tocl_fail(TOCL_E_INTERNAL, "nn kernel options do not fit %zu bytes", cap);
        len += (size_t)k;
    }
    /* a family's program holds every kernel of its file: roles a kernel
     * does not use still need a type */
    for (const char *r = "XYGZWSRT"; *r; r++) {
        if (strchr(roles, *r))
            continue;
        int k = snprintf(buf + len, cap - len, "-D%c_T=float -DLD%c=NN_LD_F32 -DST%c=NN_ST_F32 ", *r, *r, *r);
        if (k < 0 || (size_t)k >= cap - len)
            return tocl_fail(TOCL_E_INTERNAL, "nn kernel options do not fit %zu bytes", cap);
        len += (size_t)k;
    }
    if (f64 && !tocl_dev_props(dev)->has_fp64)
        return tocl_fail(TOCL_E_UNSUPPORTED, "float64 is not supported on device %d (%s): it lacks cl_khr_fp64", dev,
                         tocl_dev_props(dev)->name);
    /* NN_VEC: a CPU's work-item walks its row NN_VW elements at a time
     * (its work-item loop cannot vectorise across rows that far apart) */
    int vec = item && tocl_dev_props(dev)->kind == TOCL_DEVICE_CPU;
    int k = snprintf(buf + len, cap - len, "%s%s%s", f64 ? "-DNN_ACC_F64 " : "", item ? "-DNN_ITEM" : "",
                     vec ? " -DNN_VEC" : "");
    if (k < 0 || (size_t)k >= cap - len)
        return tocl_fail(TOCL_E_INTERNAL, "nn kernel options do not fit %zu bytes", cap);
    return TOCL_OK;
}

/* Fixed per device, because PoCL compiles a kernel anew per local size. */
size_t tocl_nn_group_size(int dev, tocl_ops_kernel *k) {
    size_t want = TOCL_NN_LOCAL_MAX, kmax = tocl_ops_kernel_max_group(dev, k);
    while (want > kmax && want > 1)
        want >>= 1;
    return want;
}

size_t tocl_nn_item_size(int dev, tocl_ops_kernel *k) {
    size_t want = tocl_dev_props(dev)->kind == TOCL_DEVICE_CPU ? 256 : 128, kmax = tocl_ops_kernel_max_group(dev, k);
    while (want > kmax && want > 1)
        want >>= 1;
    return want;
}

size_t tocl_nn_rows_local(int dev, tocl_ops_kernel *k, int64_t rows) {
    size_t want = tocl_nn_item_size(dev, k);
    const tocl_device_props *pr = tocl_dev_props(dev);
    int64_t cu = pr->compute_units ? pr->compute_units : 1;
    /* Powers of two only: PoCL compiles a kernel once per local size, and
     * rows / cu itself would make a new size for every sequence length of
     * a decoding loop. */
    if (pr->kind == TOCL_DEVICE_CPU && rows > 0) {
        int64_t per = (rows + cu - 1) / cu;
        while (want > 1 && (int64_t)want > per)
            want >>= 1;
    }
    return want;
}

tocl_status tocl_nn_operand(int dev, const tocl_tensor *t, const char *what, int64_t numel, cl_mem *buf,
                            cl_long *off) {
    TOCL_TRY(tocl_ops_check_tensor(t, what));
    if (!tocl_ops_is_contiguous(t))
        return tocl_fail(TOCL_E_INVALID, "%s must be contiguous (row-major dense)", what);
    if (tocl_ops_numel(t) != numel)
        return tocl_fail(TOCL_E_INVALID, "%s has %lld elements, expected %lld", what, (long long)tocl_ops_numel(t),
                         (long long)numel);
    if (numel == 0) { /* never read; any valid handle will do */
        *buf = NULL;
        *off = 0;
        return TOCL_OK;
    }
    int mdev;
    TOCL_TRY(tocl_ops_resolve(dev, t, what, 0, buf, off, &mdev));
    return TOCL_OK;
}

/* ------------------------------------------------------------------ softmax */

static tocl_status sm_geometry(const tocl_tensor *t, int dim, tocl_nn_rows *p) {
    if (t->ndim == 0 ? (dim != 0 && dim != -1) : (dim < 0 || dim >= t->ndim))
        return tocl_fail(TOCL_E_INVALID, "softmax: dim %d out of range for a %d-dim tensor", dim, t->ndim);
    int64_t outer = 1, n = t->ndim ? t->sizes[dim] : 1, inner = 1;
    for (int d = 0; d < dim && d < t->ndim; d++)
        outer *= t->sizes[d];
    for (int d = dim + 1; d < t->ndim; d++)
        inner *= t->sizes[d];
    memset(p, 0, sizeof *p);
    p->rows = outer * inner;
    p->n = n;
    p->inner = inner ? inner : 1;
    p->so = n * inner;
    p->si = 1;
    p->b = inner == 1 ? n : 1;
    p->sa = inner;
    return TOCL_OK;
}

static tocl_status sm_run(int dev, int stream, int backward, const tocl_tensor *z, const tocl_tensor *x,
                          const tocl_tensor *y, int dim, int log_softmax) {
    const char *what = backward ? (log_softmax ? "log_softmax_backward" : "softmax_backward")
                                : (log_softmax ? "log_softmax" : "softmax");
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(tocl_ops_check_tensor(x, what));
    tocl_nn_rows p;
    TOCL_TRY(sm_geometry(x, dim, &p));
    int64_t numel = tocl_ops_numel(x);
    const tocl_tensor *ops[3] = {x, y, z};
    for (int i = 0; i < 3; i++) {
        if (!ops[i])
            continue;
        if (ops[i]->ndim != x->ndim)
            return tocl_fail(TOCL_E_INVALID, "%s: operands differ in rank", what);
        for (int d = 0; d < x->ndim; d++)
            if (ops[i]->sizes[d] != x->sizes[d])
                return tocl_fail(TOCL_E_INVALID, "%s: operands differ in size in dim %d", what, d);
    }
    cl_mem bx, by, bz = NULL;
    cl_long ox, oy, oz = 0;
    TOCL_TRY(tocl_nn_operand(dev, x, backward ? "grad_output" : "input", numel, &bx, &ox));
    TOCL_TRY(tocl_nn_operand(dev, y, "output", numel, &by, &oy));
    if (backward)
        TOCL_TRY(tocl_nn_operand(dev, z, "grad_input", numel, &bz, &oz));
    if (numel == 0)
        return TOCL_OK;
    int item = tocl_nn_use_items(dev, p.rows, p.n, p.b < p.n, 0);
    tocl_dtype dts[3] = {x->dtype, y->dtype, backward ? z->dtype : TOCL_F32};
    char opts[1024];
    TOCL_TRY(tocl_nn_options(dev, "XYZ", dts, item, opts, sizeof opts));
    tocl_ops_kernel *k;
    TOCL_TRY(tocl_ops_kernel_get(dev, "softmax", backward ? "nn_softmax_bwd" : "nn_softmax_fwd", opts, &k));
    p.x_off = ox;
    p.y_off = oy;
    p.z_off = oz;
    cl_int lg = log_softmax != 0;
    size_t local = item ? tocl_nn_rows_local(dev, k, p.rows) : tocl_nn_group_size(dev, k);
    size_t global = item ? ((size_t)p.rows + local - 1) / local * local : (size_t)p.rows * local;
    if (backward) {
        tocl_ops_arg a[] = {{sizeof bx, &bx}, {sizeof by, &by}, {sizeof bz, &bz}, {sizeof p, &p}, {sizeof lg, &lg}};
        return tocl_nn_launch(dev, stream, k, global, local, a, 5);
    }
    tocl_ops_arg a[] = {{sizeof bx, &bx}, {sizeof by, &by}, {sizeof p, &p}, {sizeof lg, &lg}};
    return tocl_nn_launch(dev, stream, k, global, local, a, 4);
}

tocl_status tocl_nn_softmax(int dev, int stream, const tocl_tensor *out, const tocl_tensor *in, int dim,
                            int log_softmax) {
    return sm_run(dev, stream, 0, NULL, in, out, dim, log_softmax);
}

tocl_status tocl_nn_softmax_backward(int dev, int stream, const tocl_tensor *grad_in, const tocl_tensor *grad_out,
                                     const tocl_tensor *out, int dim, int log_softmax) {
    return sm_run(dev, stream, 1, grad_in, grad_out, out, dim, log_softmax);
}
