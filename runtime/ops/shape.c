/* shape.c - host side of kernels/shape.cl: per-dim coordinate remaps (flip,
 * roll, pads, tril/triu), cat, and the reflection/replication pad backward. */
#include <stdio.h>
#include <string.h>

#include "index_params.h"
#include "ops/index_internal.h"
#include "queue/trace.h"

/* Fill p from dst/src, merging neighbouring identity dims whose strides
 * nest in both tensors; `keep_last` dims at the end are never merged
 * (tril/triu need their coordinates). */
static tocl_status remap_params(const tocl_tensor *dst, const tocl_tensor *src, const tocl_remap_mode *modes,
                                const int64_t *shift, int keep_last, tocl_remap_params *p, const char *op) {
    memset(p, 0, sizeof *p);
    if (dst->ndim != src->ndim)
        return tocl_fail(TOCL_E_INVALID, "%s: destination has %d dims, source %d", op, dst->ndim, src->ndim);
    int r = 0;
    for (int d = 0; d < dst->ndim; d++) {
        int mode = modes ? (int)modes[d] : TOCL_RM_ID;
        if (mode < TOCL_RM_ID || mode > TOCL_RM_CIRCULAR)
            return tocl_fail(TOCL_E_INVALID, "%s: unknown remap mode %d in dim %d", op, mode, d);
        if (mode == TOCL_RM_ID && dst->sizes[d] != src->sizes[d])
            return tocl_fail(TOCL_E_INVALID, "%s: dim %d keeps its coordinates but sizes differ (%lld vs %lld)", op,
                             d, (long long)dst->sizes[d], (long long)src->sizes[d]);
        if (mode != TOCL_RM_ID && mode != TOCL_RM_CONST && src->sizes[d] == 0 && dst->sizes[d] > 0)
            return tocl_fail(TOCL_E_INVALID, "%s: dim %d of the source is empty", op, d);
        int fixed = d >= dst->ndim - keep_last;
        if (r > 0 && mode == TOCL_RM_ID && p->mode[r - 1] == TOCL_RM_ID && !fixed &&
            p->dst_strides[r - 1] == dst->strides[d] * dst->sizes[d] &&
            p->src_strides[r - 1] == src->strides[d] * src->sizes[d]) {
            p->sizes[r - 1] *= dst->sizes[d];
            p->src_sizes[r - 1] *= dst->sizes[d];
            p->dst_strides[r - 1] = dst->strides[d];
            p->src_strides[r - 1] = src->strides[d];
            continue;
        }
        if (mode == TOCL_RM_ID && dst->sizes[d] == 1 && !fixed)
            continue;
        if (r >= TOCL_IDX_MAX_DIMS)
            return tocl_fail(TOCL_E_UNSUPPORTED, "%s over %d dims that cannot be merged; at most %d are supported",
                             op, dst->ndim, TOCL_IDX_MAX_DIMS);
        p->sizes[r] = dst->sizes[d];
        p->src_sizes[r] = src->sizes[d];
        p->dst_strides[r] = dst->strides[d];
        p->src_strides[r] = src->strides[d];
        p->shift[r] = shift ? shift[d] : 0;
        p->mode[r] = mode;
        r++;
    }
    p->rank = r;
    p->n = tocl_ops_numel(dst);
    return TOCL_OK;
}

static tocl_status launch(int dev, int stream, tocl_ops_kernel *e, const tocl_tensor *dst, const tocl_tensor *src,
                          tocl_remap_params *p, const void *extra, size_t extra_size, const char *op) {
    cl_mem bd, bs;
    cl_long od, os;
    TOCL_TRY(idx_resolve(dev, dst, "destination", &bd, &od));
    TOCL_TRY(idx_resolve(dev, src, "source", &bs, &os));
    p->dst_off = od;
    p->src_off = os;
    cl_command_queue q;
    TOCL_TRY(tocl_queue_get(dev, stream, &q));
    size_t global = (size_t)((p->n + (int64_t)e->local - 1) / (int64_t)e->local) * e->local;
    pthread_mutex_lock(&e->lock);
    cl_int err = clSetKernelArg(e->kernel, 0, sizeof(cl_mem), &bd);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(e->kernel, 1, sizeof(cl_mem), &bs);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(e->kernel, 2, sizeof *p, p);
    if (err == CL_SUCCESS && extra)
        err = clSetKernelArg(e->kernel, 3, extra_size, extra);
    if (err == CL_SUCCESS) {
        cl_event ev, *evp = tocl_trace_slot(&ev);
        err = clEnqueueNDRangeKernel(q, e->kernel, 1, NULL, &global, &e->local, 0, NULL, evp);
        TOCL_TRACE_KEEP(evp, err, TOCL_TRACE_KERNEL, dev, stream, tocl_ops_kernel_name(e), 0);
    }
    pthread_mutex_unlock(&e->lock);
    if (err != CL_SUCCESS)
        return tocl_fail(TOCL_E_OPENCL, "launching %s (%s, %lld elements) on device %d: %s (%d)", op,
                         tocl_dtype_name(dst->dtype), (long long)p->n, dev, tocl_cl_error_name(err), (int)err);
    return TOCL_OK;
}

static tocl_status check_pair(int dev, const tocl_tensor *dst, const tocl_tensor *src, const char *op) {
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(tocl_ops_check_tensor(dst, "destination"));
    TOCL_TRY(tocl_ops_check_tensor(src, "source"));
    if (dst->dtype != src->dtype)
        return tocl_fail(TOCL_E_INVALID, "%s: source is %s but destination is %s", op, tocl_dtype_name(src->dtype),
                         tocl_dtype_name(dst->dtype));
    for (int d = 0; d < dst->ndim; d++)
        if (dst->strides[d] == 0 && dst->sizes[d] > 1)
            return tocl_fail(TOCL_E_INVALID, "%s: destination has stride 0 in dim %d", op, d);
    return TOCL_OK;
}

static tocl_status run_remap(int dev, int stream, const tocl_tensor *dst, const tocl_tensor *src,
                             const tocl_remap_mode *modes, const int64_t *shift, tocl_scalar value, int tri,
                             int64_t diag, const char *op) {
    TOCL_TRY(check_pair(dev, dst, src, op));
    tocl_remap_params p;
    TOCL_TRY(remap_params(dst, src, modes, shift, tri ? 2 : 0, &p, op));
    p.tri = tri;
    p.diag = diag;
    if (p.n == 0)
        return TOCL_OK;
    tocl_ops_kernel *e;
    TOCL_TRY(tocl_ops_kernel_get(dev, "shape", "tocl_shape_remap", idx_move_option(dst->dtype), &e));
    unsigned char bits[8];
    tocl_ops_scalar_bits(value, dst->dtype, bits);
    return launch(dev, stream, e, dst, src, &p, bits, tocl_dtype_size(dst->dtype), op);
}

tocl_status tocl_shape_remap(int dev, int stream, const tocl_tensor *dst, const tocl_tensor *src,
                             const tocl_remap_mode *modes, const int64_t *shift, tocl_scalar pad_value) {
    if (!modes || !dst || !src)
        return tocl_fail(TOCL_E_INVALID, "remap: NULL argument");
    for (int d = 0; d < dst->ndim && d < TOCL_TENSOR_MAX_DIMS; d++)
        if (modes[d] == TOCL_REMAP_ROLL && shift && (shift[d] < 0 || shift[d] >= (src->sizes[d] ? src->sizes[d] : 1)))
            return tocl_fail(TOCL_E_INVALID, "roll: shift %lld of dim %d is outside [0, %lld)", (long long)shift[d],
                             d, (long long)src->sizes[d]);
    return run_remap(dev, stream, dst, src, modes, shift, pad_value, 0, 0, "remap");
}

/* ---- cat ------------------------------------------------------------- */

_Static_assert(TOCL_CAT_MAX == TOCL_CAT_MAX_SOURCES, "kernels/include/index_params.h and tocl/index.h disagree");

/* Can dim d fold into the dim before it (kept in p at r - 1) in dst and in
 * every source? Neither may be the cat axis. */
static int cat_nests(const tocl_cat_params *p, int r, const tocl_tensor *dst, const tocl_tensor *const *src,
                     int nsrc, int d) {
    if (p->dst_strides[r - 1] != dst->strides[d] * dst->sizes[d])
        return 0;
    for (int k = 0; k < nsrc; k++)
        if (p->src_strides[k][r - 1] != src[k]->strides[d] * src[k]->sizes[d])
            return 0;
    return 1;
}

/* Does the merged layout in p (r dims, the axis at raxis) make every
 * source one contiguous run per outer index, in itself and in its
 * destination? Then write the runs kernel's parameters (kernels/shape.cl,
 * tocl_shape_cat_runs) to rp, offsets and row bases aside. At most one
 * outer dim; the axis innermost, or second innermost over a dim of stride 1
 * that it steps over whole. */
#define CAT_RUNS_GROUP 64 /* work-items (of 16 elements) per group: a KV cat pair 6.2-6.7 us, 7.6-8.0 at 16 */
static int cat_runs_layout(const tocl_cat_params *p, int r, int raxis, int nsrc, tocl_cat_runs_params *rp) {
    if (tocl_env_off("TORCH_OCL_CAT_RUNS") || raxis < r - 2 || raxis > 1)
        return 0;
    int64_t inner = raxis == r - 2 ? p->sizes[r - 1] : 1;
    if (p->dst_strides[r - 1] != 1 || (raxis == r - 2 && p->dst_strides[raxis] != inner))
        return 0;
    for (int k = 0; k < nsrc; k++)
        if (p->len[k] > 0 && (p->src_strides[k][r - 1] != 1 ||
                              (raxis == r - 2 && p->len[k] > 1 && p->src_strides[k][raxis] != inner)))
            return 0; /* (the stride of a dim of size 1 is never used) */
    memset(rp, 0, sizeof *rp);
    rp->outer = raxis == 1 ? p->sizes[0] : 1;
    rp->dst_stride = raxis == 1 ? p->dst_strides[0] : 0;
    rp->split = p->split;
    for (int k = 0; k < nsrc; k++) {
        rp->src_stride[k] = raxis == 1 ? p->src_strides[k][0] : 0;
        rp->len[k] = p->len[k] * inner;
        rp->start[k] = p->start[k] * inner;
    }
    return 1;
}

/* Sources [0, split) into dst, [split, nsrc) into dst1 (NULL: split =
 * nsrc), both destinations of one layout, in one launch. */
static tocl_status cat_run(int dev, int stream, const tocl_tensor *dst, const tocl_tensor *dst1, int split, int nsrc,
                           const tocl_tensor *const *src, int axis) {
    TOCL_TRY(tocl_device_check(dev));
    if (!dst || !src || nsrc < 1 || nsrc > TOCL_CAT_MAX)
        return tocl_fail(TOCL_E_INVALID, "cat: %d sources (1..%d in one launch) or a NULL argument", nsrc,
                         TOCL_CAT_MAX);
    TOCL_TRY(tocl_ops_check_tensor(dst, "cat destination"));
    if (tocl_dtype_size(dst->dtype) > 8)
        return tocl_fail(TOCL_E_UNSUPPORTED, "cat: %s elements are wider than the kernel's 8 bytes",
                         tocl_dtype_name(dst->dtype));
    if (axis < 0 || axis >= dst->ndim)
        return tocl_fail(TOCL_E_INVALID, "cat: dim %d is out of range for %d dims", axis, dst->ndim);
    if (dst1) {
        TOCL_TRY(tocl_ops_check_tensor(dst1, "cat second destination"));
        TOCL_TRY(check_pair(dev, dst, dst1, "cat pair"));
        int same = dst1->dtype == dst->dtype && dst1->ndim == dst->ndim;
        for (int d = 0; same && d < dst->ndim; d++)
            same = dst1->sizes[d] == dst->sizes[d] && dst1->strides[d] == dst->strides[d];
        if (!same)
            return tocl_fail(TOCL_E_INVALID, "cat pair: the two destinations differ in dtype, sizes or strides");
        if (split < 1 || split >= nsrc)
            return tocl_fail(TOCL_E_INVALID, "cat pair: %d of %d sources for the first destination (each needs one)",
                             split, nsrc);
    } else
        split = nsrc;
    tocl_cat_params p;
    memset(&p, 0, sizeof p);
    int64_t total = 0;
    for (int k = 0; k < nsrc; k++) {
        if (!src[k])
            return tocl_fail(TOCL_E_INVALID, "cat: source %d is NULL", k);
        TOCL_TRY(check_pair(dev, dst, src[k], "cat"));
        if (src[k]->ndim != dst->ndim)
            return tocl_fail(TOCL_E_INVALID, "cat: source %d has %d dims, destination %d", k, src[k]->ndim,
                             dst->ndim);
        for (int d = 0; d < dst->ndim; d++)
            if (d != axis && src[k]->sizes[d] != dst->sizes[d])
                return tocl_fail(TOCL_E_INVALID, "cat: source %d has size %lld in dim %d, destination %lld", k,
                                 (long long)src[k]->sizes[d], d, (long long)dst->sizes[d]);
        if (k == split)
            total = 0;
        p.start[k] = total;
        p.len[k] = src[k]->sizes[axis];
        total += src[k]->sizes[axis];
        if ((k == split - 1 || k == nsrc - 1) && total != dst->sizes[axis])
            return tocl_fail(TOCL_E_INVALID, "cat: the sources cover %lld of dim %d, the destination has %lld",
                             (long long)total, axis, (long long)dst->sizes[axis]);
    }
    p.split = split;
    /* Dims in dst's order, size-1 ones dropped and nesting neighbours merged
     * (never across the axis), so a KV cache's [1, heads, L, dh] is 3 dims. */
    int r = 0, raxis = -1;
    for (int d = 0; d < dst->ndim; d++) {
        if (d != axis && dst->sizes[d] == 1)
            continue;
        if (d != axis && r > 0 && raxis != r - 1 && cat_nests(&p, r, dst, src, nsrc, d)) {
            p.sizes[r - 1] *= dst->sizes[d];
            p.dst_strides[r - 1] = dst->strides[d];
            for (int k = 0; k < nsrc; k++)
                p.src_strides[k][r - 1] = src[k]->strides[d];
            continue;
        }
        if (r >= TOCL_IDX_MAX_DIMS)
            return tocl_fail(TOCL_E_UNSUPPORTED, "cat over %d dims that cannot be merged; at most %d are supported",
                             dst->ndim, TOCL_IDX_MAX_DIMS);
        if (d == axis)
            raxis = r;
        p.sizes[r] = dst->sizes[d];
        p.dst_strides[r] = dst->strides[d];
        for (int k = 0; k < nsrc; k++)
            p.src_strides[k][r] = src[k]->strides[d];
        r++;
    }
    int64_t n = tocl_ops_numel(dst);
    if (n == 0)
        return TOCL_OK;
    /* NDRange (the last dim, every source's rows in bands): the widest
     * last dim; bands aligned to the work-group height. */
    int64_t inner = 0, tallest = 0, rows[TOCL_CAT_MAX];
    for (int k = 0; k < nsrc; k++) {
        int64_t count = n / dst->sizes[axis] * src[k]->sizes[axis];
        int64_t in = raxis == r - 1 ? src[k]->sizes[axis] : p.sizes[r - 1];
        rows[k] = in ? count / in : 0;
        inner = in > inner ? in : inner;
        tallest = rows[k] > tallest ? rows[k] : tallest;
    }
    tocl_cat_runs_params rp;
    int runs = cat_runs_layout(&p, r, raxis, nsrc, &rp);
    if (runs) { /* rows: the outer indices; inner: the longest run, 16 elements per work-item */
        inner = 0;
        for (int k = 0; k < nsrc; k++) {
            rows[k] = rp.len[k] ? rp.outer : 0;
            inner = (rp.len[k] + 15) / 16 > inner ? (rp.len[k] + 15) / 16 : inner;
        }
    }
    cl_mem bd, bd1, bs[TOCL_CAT_MAX];
    cl_long od;
    TOCL_TRY(idx_resolve(dev, dst, "cat destination", &bd, &od));
    p.dst_off = od;
    bd1 = bd;
    if (dst1) {
        TOCL_TRY(idx_resolve(dev, dst1, "cat second destination", &bd1, &od));
        p.dst1_off = od;
    }
    for (int k = 0; k < TOCL_CAT_MAX; k++) {
        cl_long os = 0;
        bs[k] = bd; /* unused slots: any valid buffer */
        if (k < nsrc && src[k]->sizes[axis] > 0)
            TOCL_TRY(idx_resolve(dev, src[k], "cat source", &bs[k], &os));
        p.src_off[k] = os;
    }
    tocl_ops_kernel *e;
    char opts[80];
    if (runs)
        snprintf(opts, sizeof opts, "%s -DCAT_RUNS", idx_move_option(dst->dtype));
    else
        snprintf(opts, sizeof opts, "%s -DCAT_RANK=%d -DCAT_AXIS=%d%s", idx_move_option(dst->dtype), r, raxis,
                 tallest < INT32_MAX ? " -DIDX_T=uint" : "");
    TOCL_TRY(tocl_ops_kernel_get(dev, "shape", runs ? "tocl_shape_cat_runs" : "tocl_shape_cat", opts, &e));
    cl_command_queue q;
    TOCL_TRY(tocl_queue_get(dev, stream, &q));
    size_t lx = 1, lmax = runs ? CAT_RUNS_GROUP : e->local;
    while (lx < lmax && (int64_t)lx < inner)
        lx *= 2;
    lx = lx > e->local ? e->local : lx;
    size_t ly = 1; /* rows per work-group too (PoCL pays per work-group); the runs kernel takes one */
    while (!runs && lx * ly * 2 <= e->local && (int64_t)ly < tallest)
        ly *= 2;
    int64_t band = 0;
    for (int k = 0; k < TOCL_CAT_MAX; k++) {
        p.rowbase[k] = k < nsrc ? band : INT64_MAX;
        if (k < nsrc)
            band += (rows[k] + (int64_t)ly - 1) / (int64_t)ly * (int64_t)ly;
    }
    size_t global[2] = {(size_t)((inner + (int64_t)lx - 1) / (int64_t)lx) * lx, (size_t)band};
    size_t local[2] = {lx, ly};
    pthread_mutex_lock(&e->lock);
    cl_int err = clSetKernelArg(e->kernel, 0, sizeof(cl_mem), &bd);
    for (int k = 0; k < TOCL_CAT_MAX && err == CL_SUCCESS; k++)
        err = clSetKernelArg(e->kernel, 1 + k, sizeof(cl_mem), &bs[k]);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(e->kernel, 1 + TOCL_CAT_MAX, sizeof(cl_mem), &bd1);
    if (runs) {
        memcpy(rp.rowbase, p.rowbase, sizeof rp.rowbase);
        memcpy(rp.src_off, p.src_off, sizeof rp.src_off);
        rp.dst_off = p.dst_off, rp.dst1_off = p.dst1_off;
    }
    if (err == CL_SUCCESS)
        err = runs ? clSetKernelArg(e->kernel, 2 + TOCL_CAT_MAX, sizeof rp, &rp)
                   : clSetKernelArg(e->kernel, 2 + TOCL_CAT_MAX, sizeof p, &p);
    if (err == CL_SUCCESS) {
        cl_event ev, *evp = tocl_trace_slot(&ev);
        err = clEnqueueNDRangeKernel(q, e->kernel, 2, NULL, global, local, 0, NULL, evp);
        TOCL_TRACE_KEEP(evp, err, TOCL_TRACE_KERNEL, dev, stream, tocl_ops_kernel_name(e), 0);
    }
    pthread_mutex_unlock(&e->lock);
    if (err != CL_SUCCESS)
        return tocl_fail(TOCL_E_OPENCL, "launching cat (%s, %d sources, %lld elements) on device %d: %s (%d)",
                         tocl_dtype_name(dst->dtype), nsrc, (long long)n, dev, tocl_cl_error_name(err), (int)err);
    return TOCL_OK;
}

tocl_status tocl_shape_cat(int dev, int stream, const tocl_tensor *dst, int nsrc, const tocl_tensor *const *src,
                           int axis) {
    return cat_run(dev, stream, dst, NULL, nsrc, nsrc, src, axis);
}

tocl_status tocl_shape_cat_pair(int dev, int stream, const tocl_tensor *dst0, const tocl_tensor *dst1, int nsrc0,
                                int nsrc, const tocl_tensor *const *src, int axis) {
    if (!dst1)
        return tocl_fail(TOCL_E_INVALID, "cat pair: the second destination is NULL");
    return cat_run(dev, stream, dst0, dst1, nsrc0, nsrc, src, axis);
}

tocl_status tocl_shape_tri(int dev, int stream, const tocl_tensor *dst, const tocl_tensor *src, int upper,
                           int64_t diagonal) {
    if (!dst || !src || dst->ndim < 2)
        return tocl_fail(TOCL_E_INVALID, "%s: expected a tensor of at least 2 dims", upper ? "triu" : "tril");
    tocl_scalar zero = {0, 0.0, 0};
    return run_remap(dev, stream, dst, src, NULL, NULL, zero, upper ? 2 : 1, diagonal, upper ? "triu" : "tril");
}

tocl_status tocl_shape_pad_backward(int dev, int stream, const tocl_tensor *grad_in, const tocl_tensor *grad_out,
                                    tocl_remap_mode mode, int npad, const int64_t *before) {
    const char *op = mode == TOCL_REMAP_REFLECT ? "reflection_pad backward" : "replication_pad backward";
    TOCL_TRY(check_pair(dev, grad_in, grad_out, op));
    if (mode != TOCL_REMAP_REFLECT && mode != TOCL_REMAP_REPLICATE)
        return tocl_fail(TOCL_E_INVALID, "pad backward: mode must be reflect or replicate");
    if (npad < 1 || npad > 3 || npad > grad_in->ndim)
        return tocl_fail(TOCL_E_INVALID, "%s: %d padded dims; 1..3 are supported", op, npad);
    if (!tocl_dtype_is_float(grad_in->dtype))
        return tocl_fail(TOCL_E_UNSUPPORTED, "%s: floating dtypes only, got %s", op, tocl_dtype_name(grad_in->dtype));
    TOCL_TRY(idx_check_fp64(dev, grad_in->dtype, op));
    tocl_remap_mode modes[TOCL_TENSOR_MAX_DIMS];
    int64_t shift[TOCL_TENSOR_MAX_DIMS];
    int first = grad_in->ndim - npad;
    for (int d = 0; d < grad_in->ndim; d++) {
        modes[d] = d >= first ? mode : TOCL_REMAP_ID;
        shift[d] = d >= first ? before[d - first] : 0;
        if (d >= first) {
            int64_t n = grad_in->sizes[d], m = grad_out->sizes[d], b = shift[d], a = m - n - b;
            /* negative pads crop; a reflection must land inside the input
             * after one bounce, which pads below n guarantee */
            if ((mode == TOCL_REMAP_REFLECT && (b >= n || a >= n) && (b || a)) || (n == 0 && m > 0))
                return tocl_fail(TOCL_E_INVALID, "%s: pads (%lld, %lld) do not fit input size %lld in dim %d", op,
                                 (long long)b, (long long)a, (long long)n, d);
        }
    }
    tocl_remap_params p;
    TOCL_TRY(remap_params(grad_in, grad_out, modes, shift, 0, &p, op));
    if (p.n == 0)
        return TOCL_OK;
    tocl_ops_kernel *e;
    TOCL_TRY(tocl_ops_kernel_get(dev, "shape", "tocl_shape_pad_bwd", idx_dt_option(grad_in->dtype), &e));
    return launch(dev, stream, e, grad_in, grad_out, &p, NULL, 0, op);
}
