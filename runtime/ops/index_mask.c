/* index_mask.c - stream compaction over a mask (nonzero, masked_select,
 * masked_scatter) with the two-pass kernels of kernels/index.cl: count per
 * chunk, read the counts back (the output size depends on the data, so the
 * host must wait once), prefix them on the host, then write in order. The
 * order of the output is the row-major order of the mask, as on the CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index_params.h"
#include "ops/index_internal.h"
#include "queue/trace.h"

/* Mask geometry in p: full rank, no collapsing (nonzero writes coordinates
 * of the original dims). */
static tocl_status mask_params(const tocl_tensor *mask, tocl_idx_params *p, const char *op) {
    memset(p, 0, sizeof *p);
    if (mask->ndim > TOCL_IDX_MAX_DIMS)
        return tocl_fail(TOCL_E_UNSUPPORTED, "%s: mask with %d dims; at most %d are supported", op, mask->ndim,
                         TOCL_IDX_MAX_DIMS);
    p->rank = mask->ndim;
    for (int d = 0; d < mask->ndim; d++) {
        p->sizes[d] = mask->sizes[d];
        p->idx_strides[0][d] = mask->strides[d];
    }
    p->n_par = tocl_ops_numel(mask);
    return TOCL_OK;
}

/* Chunks: enough for a GPU to spread, few enough that the counts read back
 * stay small (at most 16384 x 8 bytes). */
static int64_t pick_chunk(int64_t n) {
    int64_t chunk = (n + 16383) / 16384;
    return chunk < 64 ? 64 : chunk;
}

static tocl_status scratch_buf(tocl_addr a, cl_mem *buf, cl_long *off) {
    int mdev;
    size_t boff;
    TOCL_TRY(tocl_mem_resolve(a, &mdev, buf, &boff));
    *off = (cl_long)(boff / sizeof(int64_t));
    return TOCL_OK;
}

tocl_status tocl_mask_count(int dev, int stream, const tocl_tensor *mask, tocl_mask_scan *out) {
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(tocl_ops_check_tensor(mask, "mask"));
    memset(out, 0, sizeof *out);
    TOCL_TRY(idx_check_fp64(dev, mask->dtype, "nonzero"));
    tocl_idx_params p;
    TOCL_TRY(mask_params(mask, &p, "nonzero"));
    int64_t n = p.n_par;
    if (n == 0)
        return TOCL_OK;
    cl_mem bm;
    cl_long om;
    TOCL_TRY(idx_resolve(dev, mask, "mask", &bm, &om));
    p.idx_off[0] = om;
    int64_t chunk = pick_chunk(n), nch = (n + chunk - 1) / chunk;
    char opts[96];
    snprintf(opts, sizeof opts, "%s -DMASK_DT -DVT=uchar -DMODE=1", idx_dt_option(mask->dtype));
    tocl_ops_kernel *e;
    TOCL_TRY(tocl_ops_kernel_get(dev, "index", "tocl_mask_count", opts, &e));
    size_t bytes = (size_t)nch * sizeof(int64_t);
    int64_t *host = malloc(bytes);
    if (!host)
        return tocl_fail(TOCL_E_OOM, "out of host memory for %lld mask chunk counts", (long long)nch);
    tocl_addr counts;
    tocl_status s = tocl_mem_alloc(dev, bytes, &counts);
    if (s != TOCL_OK) {
        free(host);
        return s;
    }
    cl_mem bc;
    cl_long oc;
    cl_command_queue q;
    s = scratch_buf(counts, &bc, &oc);
    if (s == TOCL_OK)
        s = tocl_queue_get(dev, stream, &q);
    if (s == TOCL_OK) {
        size_t global = (size_t)((nch + (int64_t)e->local - 1) / (int64_t)e->local) * e->local;
        pthread_mutex_lock(&e->lock);
        cl_int err = clSetKernelArg(e->kernel, 0, sizeof(cl_mem), &bm);
        if (err == CL_SUCCESS)
            err = clSetKernelArg(e->kernel, 1, sizeof p, &p);
        if (err == CL_SUCCESS)
            err = clSetKernelArg(e->kernel, 2, sizeof(cl_long), &chunk);
        if (err == CL_SUCCESS)
            err = clSetKernelArg(e->kernel, 3, sizeof(cl_mem), &bc);
        if (err == CL_SUCCESS)
            err = clSetKernelArg(e->kernel, 4, sizeof(cl_long), &oc);
        if (err == CL_SUCCESS) {
            cl_event ev, *evp = tocl_trace_slot(&ev);
            err = clEnqueueNDRangeKernel(q, e->kernel, 1, NULL, &global, &e->local, 0, NULL, evp);
            TOCL_TRACE_KEEP(evp, err, TOCL_TRACE_KERNEL, dev, stream, tocl_ops_kernel_name(e), 0);
        }
        pthread_mutex_unlock(&e->lock);
        if (err != CL_SUCCESS)
            s = tocl_fail(TOCL_E_OPENCL, "launching the mask count kernel on device %d: %s (%d)", dev,
                          tocl_cl_error_name(err), (int)err);
    }
    /* The host wait: the number of selected elements sizes the output. */
    if (s == TOCL_OK)
        s = tocl_copy_d2h(dev, stream, host, counts, bytes, 1);
    int64_t total = 0;
    for (int64_t c = 0; s == TOCL_OK && c < nch; c++) {
        int64_t k = host[c];
        host[c] = total;
        total += k;
    }
    if (s == TOCL_OK)
        s = tocl_copy_h2d(dev, stream, counts, host, bytes, 1);
    free(host);
    if (s != TOCL_OK) {
        tocl_mem_free(counts);
        return s;
    }
    out->offsets = counts;
    out->chunk = chunk;
    out->nchunks = nch;
    out->total = total;
    return TOCL_OK;
}

void tocl_mask_scan_release(tocl_mask_scan *scan) {
    if (scan && scan->offsets)
        tocl_mem_free(scan->offsets);
    if (scan)
        scan->offsets = 0;
}

static const char *vt_name(tocl_dtype t) {
    switch (tocl_dtype_size(t)) {
    case 1: return "uchar";
    case 2: return "ushort";
    case 4: return "uint";
    default: return "ulong";
    }
}

static tocl_status mask_write(int dev, int stream, const tocl_tensor *mask, const tocl_mask_scan *scan, int mode,
                              const tocl_tensor *out, const tocl_tensor *src, const char *op) {
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(tocl_ops_check_tensor(mask, "mask"));
    TOCL_TRY(tocl_ops_check_tensor(out, "output"));
    if (src)
        TOCL_TRY(tocl_ops_check_tensor(src, "source"));
    if (scan->total == 0 || tocl_ops_numel(mask) == 0 || tocl_ops_numel(out) == 0)
        return TOCL_OK; /* nothing to write (a 0-dim mask has no coordinates) */
    tocl_idx_params p;
    TOCL_TRY(mask_params(mask, &p, op));
    const tocl_tensor *strided = mode == 1 ? src : out; /* the one laid out like the mask */
    if (mode != 0) {
        if (strided->ndim != mask->ndim)
            return tocl_fail(TOCL_E_INVALID, "%s: tensor has %d dims, the mask %d", op, strided->ndim, mask->ndim);
        for (int d = 0; d < mask->ndim; d++) {
            if (strided->sizes[d] != mask->sizes[d])
                return tocl_fail(TOCL_E_INVALID, "%s: size %lld in dim %d differs from the mask's %lld", op,
                                 (long long)strided->sizes[d], d, (long long)mask->sizes[d]);
            (mode == 1 ? p.src_strides : p.dst_strides)[d] = strided->strides[d];
        }
        if (src->dtype != out->dtype)
            return tocl_fail(TOCL_E_INVALID, "%s: source is %s but output is %s", op, tocl_dtype_name(src->dtype),
                             tocl_dtype_name(out->dtype));
        const tocl_tensor *flat = mode == 1 ? out : src;
        if (tocl_ops_numel(flat) < scan->total || !tocl_ops_is_contiguous(flat))
            return tocl_fail(TOCL_E_INVALID, "%s: the flat operand needs %lld contiguous elements, has %lld", op,
                             (long long)scan->total, (long long)tocl_ops_numel(flat));
    } else if (out->dtype != TOCL_I64 || tocl_ops_numel(out) != scan->total * mask->ndim ||
               !tocl_ops_is_contiguous(out)) {
        return tocl_fail(TOCL_E_INVALID, "nonzero: output must be a contiguous int64 (%lld, %d) tensor",
                         (long long)scan->total, mask->ndim);
    }
    cl_mem bm, bo, bs, bf;
    cl_long om, oo, os = 0, of;
    TOCL_TRY(idx_resolve(dev, mask, "mask", &bm, &om));
    TOCL_TRY(idx_resolve(dev, out, "output", &bo, &oo));
    bs = bo;
    if (src)
        TOCL_TRY(idx_resolve(dev, src, "source", &bs, &os));
    TOCL_TRY(scratch_buf(scan->offsets, &bf, &of));
    p.idx_off[0] = om;
    p.dst_off = oo;
    p.src_off = os;
    char opts[96];
    snprintf(opts, sizeof opts, "%s -DMASK_DT -DVT=%s -DMODE=%d", idx_dt_option(mask->dtype),
             mode == 0 ? "long" : vt_name(out->dtype), mode);
    tocl_ops_kernel *e;
    TOCL_TRY(tocl_ops_kernel_get(dev, "index", "tocl_mask_write", opts, &e));
    cl_command_queue q;
    TOCL_TRY(tocl_queue_get(dev, stream, &q));
    cl_long chunk = scan->chunk;
    size_t global = (size_t)((scan->nchunks + (int64_t)e->local - 1) / (int64_t)e->local) * e->local;
    pthread_mutex_lock(&e->lock);
    cl_int err = clSetKernelArg(e->kernel, 0, sizeof(cl_mem), &bm);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(e->kernel, 1, sizeof p, &p);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(e->kernel, 2, sizeof chunk, &chunk);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(e->kernel, 3, sizeof(cl_mem), &bf);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(e->kernel, 4, sizeof of, &of);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(e->kernel, 5, sizeof(cl_mem), &bo);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(e->kernel, 6, sizeof(cl_mem), &bs);
    if (err == CL_SUCCESS) {
        cl_event ev, *evp = tocl_trace_slot(&ev);
        err = clEnqueueNDRangeKernel(q, e->kernel, 1, NULL, &global, &e->local, 0, NULL, evp);
        TOCL_TRACE_KEEP(evp, err, TOCL_TRACE_KERNEL, dev, stream, tocl_ops_kernel_name(e), 0);
    }
    pthread_mutex_unlock(&e->lock);
    if (err != CL_SUCCESS)
        return tocl_fail(TOCL_E_OPENCL, "launching %s on device %d: %s (%d)", op, dev, tocl_cl_error_name(err),
                         (int)err);
    return TOCL_OK;
}

tocl_status tocl_mask_nonzero(int dev, int stream, const tocl_tensor *mask, const tocl_mask_scan *scan,
                              const tocl_tensor *out) {
    return mask_write(dev, stream, mask, scan, 0, out, NULL, "nonzero");
}

tocl_status tocl_mask_select(int dev, int stream, const tocl_tensor *mask, const tocl_mask_scan *scan,
                             const tocl_tensor *src, const tocl_tensor *out) {
    if (!src)
        return tocl_fail(TOCL_E_INVALID, "masked_select: no source");
    return mask_write(dev, stream, mask, scan, 1, out, src, "masked_select");
}

tocl_status tocl_mask_scatter(int dev, int stream, const tocl_tensor *mask, const tocl_mask_scan *scan,
                              const tocl_tensor *dst, const tocl_tensor *source) {
    if (!source)
        return tocl_fail(TOCL_E_INVALID, "masked_scatter: no source");
    return mask_write(dev, stream, mask, scan, 2, dst, source, "masked_scatter");
}
