/* factory.c - host side of kernels/factory.cl: arange, linspace, logspace
 * and triangle indices into a dense destination. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch/launch.h"
#include "tocl/factory.h"

/* The kernel `name` of factory.cl for destination dtype dt (shared cache). */
static tocl_status fac_kernel(int dev, tocl_dtype dt, const char *name, tocl_ops_kernel **out) {
    static const char *dtopt[TOCL_NUM_DTYPES] = {
        [TOCL_BOOL] = "-DTOCL_DST_BOOL", [TOCL_U8] = "-DTOCL_DST_U8",     [TOCL_I8] = "-DTOCL_DST_I8",
        [TOCL_I16] = "-DTOCL_DST_I16",   [TOCL_I32] = "-DTOCL_DST_I32",   [TOCL_I64] = "-DTOCL_DST_I64",
        [TOCL_F16] = "-DTOCL_DST_F16",   [TOCL_BF16] = "-DTOCL_DST_BF16", [TOCL_F32] = "-DTOCL_DST_F32",
        [TOCL_F64] = "-DTOCL_DST_F64"};
    char opt[64];
    snprintf(opt, sizeof opt, "%s%s", dtopt[dt], tocl_dev_props(dev)->has_fp64 ? " -DTOCL_HAS_FP64" : "");
    return tocl_ops_kernel_get(dev, "factory", name, opt, out);
}

typedef tocl_ops_arg fac_arg;

/* Check dst (dense, on dev, dtype supported), then launch `items` work-items
 * of `name` with the destination as (buffer, offset) followed by args. */
static tocl_status fac_run(int dev, int stream, const tocl_tensor *dst, const char *name, size_t items,
                           const fac_arg *args, int nargs) {
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(tocl_ops_check_tensor(dst, name));
    if (!tocl_ops_is_contiguous(dst))
        return tocl_fail(TOCL_E_INVALID, "%s: the destination must be contiguous (copy into strided outputs)", name);
    if (dst->dtype == TOCL_F64 && !tocl_dev_props(dev)->has_fp64)
        return tocl_fail(TOCL_E_UNSUPPORTED, "float64 is not supported on device %d (%s): it lacks cl_khr_fp64",
                         dev, tocl_dev_props(dev)->name);
    if (items == 0)
        return TOCL_OK;
    cl_mem buf;
    cl_long off;
    int mdev;
    TOCL_TRY(tocl_ops_resolve(dev, dst, name, 0, &buf, &off, &mdev));
    if (mdev != dev)
        return tocl_fail(TOCL_E_INVALID, "%s: destination lives on device %d, not on device %d", name, mdev, dev);
    tocl_ops_kernel *e = NULL;
    TOCL_TRY(fac_kernel(dev, dst->dtype, name, &e));
    tocl_ops_arg all[16] = {{sizeof buf, &buf}, {sizeof off, &off}};
    if (nargs > 14)
        return tocl_fail(TOCL_E_INTERNAL, "%s: too many kernel arguments", name);
    for (int k = 0; k < nargs; k++)
        all[k + 2] = args[k];
    size_t global = (items + e->local - 1) / e->local * e->local;
    return tocl_ops_launch(dev, stream, e, 1, &global, &e->local, all, nargs + 2);
}

/* A double kernel argument in the device's wide type (float without fp64). */
typedef struct fac_wide {
    double d;
    float f;
} fac_wide;

static fac_arg fac_wide_arg(int dev, fac_wide *w, double v) {
    w->d = v;
    w->f = (float)v;
    fac_arg a = {tocl_dev_props(dev)->has_fp64 ? sizeof(double) : sizeof(float),
                 tocl_dev_props(dev)->has_fp64 ? (const void *)&w->d : (const void *)&w->f};
    return a;
}

static int fac_is_low(tocl_dtype t) { return t == TOCL_F16 || t == TOCL_BF16; }

tocl_status tocl_op_arange(int dev, int stream, const tocl_tensor *dst, tocl_scalar start, tocl_scalar step) {
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(tocl_ops_check_tensor(dst, "arange"));
    cl_long n = tocl_ops_numel(dst);
    if (dst->dtype == TOCL_BOOL)
        return tocl_fail(TOCL_E_UNSUPPORTED, "arange is not implemented for bool");
    if (!tocl_dtype_is_float(dst->dtype)) {
        cl_long s0 = start.is_float ? (cl_long)start.f : start.i, s1 = step.is_float ? (cl_long)step.f : step.i;
        fac_arg a[] = {{sizeof n, &n}, {sizeof s0, &s0}, {sizeof s1, &s1}};
        return fac_run(dev, stream, dst, "tocl_arange", (size_t)n, a, 3);
    }
    double d0 = start.is_float ? start.f : (double)start.i, d1 = step.is_float ? step.f : (double)step.i;
    if (fac_is_low(dst->dtype)) {
        float f0 = (float)d0, f1 = (float)d1;
        fac_arg a[] = {{sizeof n, &n}, {sizeof f0, &f0}, {sizeof f1, &f1}};
        return fac_run(dev, stream, dst, "tocl_arange", (size_t)n, a, 3);
    }
    fac_wide w0, w1;
    fac_arg a[] = {{sizeof n, &n}, fac_wide_arg(dev, &w0, d0), fac_wide_arg(dev, &w1, d1)};
    if (dst->dtype == TOCL_F64) { /* ar_t is double there */
        a[1] = (fac_arg){sizeof(double), &w0.d};
        a[2] = (fac_arg){sizeof(double), &w1.d};
    }
    return fac_run(dev, stream, dst, "tocl_arange", (size_t)n, a, 3);
}

tocl_status tocl_op_linspace(int dev, int stream, const tocl_tensor *dst, double start, double end, double step) {
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(tocl_ops_check_tensor(dst, "linspace"));
    cl_long n = tocl_ops_numel(dst), half = n / 2;
    if (dst->dtype == TOCL_F64 || !tocl_dtype_is_float(dst->dtype)) { /* lin_t: double (or wide) */
        fac_wide w0, w1, w2;
        fac_arg a[] = {{sizeof n, &n}, fac_wide_arg(dev, &w0, start), fac_wide_arg(dev, &w1, end),
                       fac_wide_arg(dev, &w2, step), {sizeof half, &half}};
        if (dst->dtype == TOCL_F64)
            for (int k = 1; k <= 3; k++)
                a[k].size = sizeof(double), a[k].ptr = k == 1 ? (const void *)&w0.d : k == 2 ? (const void *)&w1.d
                                                                                             : (const void *)&w2.d;
        return fac_run(dev, stream, dst, "tocl_linspace", (size_t)n, a, 5);
    }
    float f0 = (float)start, f1 = (float)end, f2 = (float)step;
    fac_arg a[] = {{sizeof n, &n}, {sizeof f0, &f0}, {sizeof f1, &f1}, {sizeof f2, &f2}, {sizeof half, &half}};
    return fac_run(dev, stream, dst, "tocl_linspace", (size_t)n, a, 5);
}

tocl_status tocl_op_logspace(int dev, int stream, const tocl_tensor *dst, double start, double end, double step,
                             double base) {
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(tocl_ops_check_tensor(dst, "logspace"));
    cl_long n = tocl_ops_numel(dst), half = n / 2;
    fac_wide w0, w1, w2, w3;
    fac_arg a[] = {{sizeof n, &n},
                   fac_wide_arg(dev, &w0, start),
                   fac_wide_arg(dev, &w1, end),
                   fac_wide_arg(dev, &w2, step),
                   fac_wide_arg(dev, &w3, base),
                   {sizeof half, &half}};
    return fac_run(dev, stream, dst, "tocl_logspace", (size_t)n, a, 6);
}

tocl_status tocl_op_tri_indices(int dev, int stream, const tocl_tensor *dst, int64_t row, int64_t col,
                                int64_t offset, int upper) {
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(tocl_ops_check_tensor(dst, "tri_indices"));
    if (dst->dtype != TOCL_I32 && dst->dtype != TOCL_I64)
        return tocl_fail(TOCL_E_UNSUPPORTED, "tril/triu indices are int32 or int64, got %s",
                         tocl_dtype_name(dst->dtype));
    if (dst->ndim != 2 || dst->sizes[0] != 2 || row < 0 || col < 0)
        return tocl_fail(TOCL_E_INVALID, "tril/triu indices: destination must be 2 x count and row, col >= 0");
    cl_long count = dst->sizes[1], r = row, c = col, o = offset;
    cl_int up = upper != 0;
    fac_arg a[] = {{sizeof count, &count}, {sizeof r, &r}, {sizeof c, &c}, {sizeof o, &o}, {sizeof up, &up}};
    return fac_run(dev, stream, dst, "tocl_tri_indices", (size_t)count, a, 5);
}
