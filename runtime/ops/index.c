/* index.c - host side of kernels/index.cl: gather/scatter through index
 * tensors, index bounds, stream compaction, scatter_reduce(mean) division. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index_params.h"
#include "ops/index_internal.h"
#include "queue/trace.h"
#include "tocl/graph.h"

const char *idx_dt_option(tocl_dtype t) {
    static const char *opt[TOCL_NUM_DTYPES] = {"-DDT_BOOL", "-DDT_U8",   "-DDT_I8",  "-DDT_I16", "-DDT_I32",
                                               "-DDT_I64",  "-DDT_F16", "-DDT_BF16", "-DDT_F32", "-DDT_F64"};
    return (int)t >= 0 && t < TOCL_NUM_DTYPES ? opt[t] : "-DDT_INVALID";
}

const char *idx_move_option(tocl_dtype t) {
    switch (tocl_dtype_size(t)) {
    case 1: return "-DDT_B1";
    case 2: return "-DDT_B2";
    case 4: return "-DDT_B4";
    default: return "-DDT_B8";
    }
}

tocl_status idx_check_fp64(int dev, tocl_dtype t, const char *op) {
    if (t == TOCL_F64 && !tocl_dev_props(dev)->has_fp64)
        return tocl_fail(TOCL_E_UNSUPPORTED, "%s: float64 is not supported on device %d (%s): it lacks cl_khr_fp64",
                         op, dev, tocl_dev_props(dev)->name);
    return TOCL_OK;
}

tocl_status idx_resolve(int dev, const tocl_tensor *t, const char *what, cl_mem *buf, cl_long *off) {
    int mdev = dev;
    TOCL_TRY(tocl_ops_resolve(dev, t, what, 0, buf, off, &mdev));
    if (mdev != dev)
        return tocl_fail(TOCL_E_INVALID, "%s lives on device %d, not on device %d that runs the op; move it first",
                         what, mdev, dev);
    return TOCL_OK;
}

/* ---- gather / scatter ------------------------------------------------ */

/* Iteration plan: parallel dims first, then serial dims, each group in its
 * original order, size-1 dims dropped, neighbours merged where every operand
 * allows. ops[0..nops) point at strides of the iteration shape. */
static tocl_status plan(const int64_t *sizes, int ndim, uint32_t serial, const int64_t *const *ops, int nops,
                        tocl_idx_params *p, int64_t *const *out_strides) {
    int r = 0, npar = 0;
    p->n_par = 1;
    p->n_ser = 1;
    for (int group = 0; group < 2; group++) {
        int start = r;
        for (int d = 0; d < ndim; d++) {
            int is_ser = (serial >> d) & 1u;
            if (is_ser != group || sizes[d] == 1)
                continue;
            int merge = r > start;
            for (int k = 0; k < nops && merge; k++)
                merge = out_strides[k][r - 1] == ops[k][d] * sizes[d];
            if (merge) {
                p->sizes[r - 1] *= sizes[d];
                for (int k = 0; k < nops; k++)
                    out_strides[k][r - 1] = ops[k][d];
            } else {
                if (r >= TOCL_IDX_MAX_DIMS)
                    return tocl_fail(TOCL_E_UNSUPPORTED, "indexing over %d dims that cannot be merged; at most %d are "
                                     "supported (make the operands contiguous first)", ndim, TOCL_IDX_MAX_DIMS);
                p->sizes[r] = sizes[d];
                for (int k = 0; k < nops; k++)
                    out_strides[k][r] = ops[k][d];
                r++;
            }
            if (group == 0)
                p->n_par *= sizes[d];
            else
                p->n_ser *= sizes[d];
        }
        if (group == 0)
            npar = r;
    }
    p->rank = r;
    p->n_par_dims = npar;
    return TOCL_OK;
}

static tocl_status check_spec(const tocl_index_spec *ix, const tocl_tensor *shape, const char *op) {
    if (!ix || ix->nidx < 1 || ix->nidx > TOCL_INDEX_MAX_INDICES)
        return tocl_fail(TOCL_E_UNSUPPORTED, "%s: %d index tensors; 1..%d are supported", op, ix ? ix->nidx : 0,
                         TOCL_INDEX_MAX_INDICES);
    tocl_dtype it = ix->idx[0].dtype;
    for (int k = 0; k < ix->nidx; k++) {
        const tocl_tensor *t = &ix->idx[k];
        TOCL_TRY(tocl_ops_check_tensor(t, "index"));
        if (t->dtype != TOCL_I64 && t->dtype != TOCL_I32)
            return tocl_fail(TOCL_E_INVALID, "%s: index tensors must be int64 or int32, got %s", op,
                             tocl_dtype_name(t->dtype));
        if (t->dtype != it)
            return tocl_fail(TOCL_E_INVALID, "%s: index tensors mix int32 and int64; convert them to one dtype", op);
        if (t->ndim != shape->ndim)
            return tocl_fail(TOCL_E_INVALID, "%s: index %d has %d dims, the iteration shape %d", op, k, t->ndim,
                             shape->ndim);
        for (int d = 0; d < t->ndim; d++)
            if (t->sizes[d] != shape->sizes[d])
                return tocl_fail(TOCL_E_INVALID, "%s: index %d has size %lld in dim %d, the iteration shape %lld", op,
                                 k, (long long)t->sizes[d], d, (long long)shape->sizes[d]);
        if (ix->bound[k] < 0)
            return tocl_fail(TOCL_E_INVALID, "%s: negative bound %lld", op, (long long)ix->bound[k]);
    }
    return TOCL_OK;
}

static tocl_status same_shape(const tocl_tensor *a, const tocl_tensor *b, const char *op, const char *what) {
    if (a->ndim != b->ndim)
        return tocl_fail(TOCL_E_INVALID, "%s: %s has %d dims, expected %d", op, what, a->ndim, b->ndim);
    for (int d = 0; d < a->ndim; d++)
        if (a->sizes[d] != b->sizes[d])
            return tocl_fail(TOCL_E_INVALID, "%s: %s has size %lld in dim %d, expected %lld", op, what,
                             (long long)a->sizes[d], d, (long long)b->sizes[d]);
    return TOCL_OK;
}

/* Size in bytes and bits of the kernel's VAL_T for a build. */
static size_t val_bits(tocl_scalar v, tocl_dtype t, int move_only, unsigned char bits[8]) {
    if (move_only) {
        tocl_ops_scalar_bits(v, t, bits);
        return tocl_dtype_size(t);
    }
    tocl_dtype acc = tocl_dtype_is_float(t) ? tocl_dtype_compute(t) : t == TOCL_I64 ? TOCL_I64 : TOCL_I32;
    if (t == TOCL_BOOL) /* any nonzero is true, then computed as int */
        v = (tocl_scalar){0, 0.0, v.is_float ? v.f != 0 : v.i != 0};
    tocl_ops_scalar_bits(v, acc, bits);
    return tocl_dtype_size(acc);
}

static tocl_status run_move(int dev, int stream, int scatter, const tocl_tensor *dst, const tocl_tensor *src,
                            const tocl_tensor *shape, tocl_scalar value, tocl_index_reduce op, tocl_scalar alpha,
                            const tocl_index_spec *ix, const char *opname) {
    int64_t numel = tocl_ops_numel(shape);
    if (numel == 0)
        return TOCL_OK;
    tocl_idx_params p;
    memset(&p, 0, sizeof p);
    const int64_t *ops[2 + TOCL_INDEX_MAX_INDICES];
    int64_t *outs[2 + TOCL_INDEX_MAX_INDICES];
    int64_t zeros[TOCL_TENSOR_MAX_DIMS] = {0};
    ops[0] = dst->strides;
    ops[1] = src ? src->strides : zeros;
    outs[0] = p.dst_strides;
    outs[1] = p.src_strides;
    for (int k = 0; k < ix->nidx; k++) {
        ops[2 + k] = ix->idx[k].strides;
        outs[2 + k] = p.idx_strides[k];
    }
    TOCL_TRY(plan(shape->sizes, shape->ndim, ix->serial_dims, ops, 2 + ix->nidx, &p, outs));
    cl_mem bd, bs, bi[TOCL_INDEX_MAX_INDICES];
    cl_long od, os = 0, oi;
    TOCL_TRY(idx_resolve(dev, dst, scatter ? "destination" : "output", &bd, &od));
    bs = bd;
    if (src)
        TOCL_TRY(idx_resolve(dev, src, "source", &bs, &os));
    for (int k = 0; k < TOCL_INDEX_MAX_INDICES; k++) {
        if (k < ix->nidx) {
            TOCL_TRY(idx_resolve(dev, &ix->idx[k], "index", &bi[k], &oi));
            p.idx_off[k] = oi;
            p.bound[k] = ix->bound[k];
            p.istride[k] = ix->stride[k];
        } else {
            bi[k] = bi[0];
        }
    }
    p.dst_off = od;
    p.src_off = os;
    p.has_skip = ix->has_skip;
    p.skip = ix->skip;

    int move_only = !scatter || op == TOCL_INDEX_ASSIGN;
    char opts[160];
    snprintf(opts, sizeof opts, "%s -DIDX_T=%s -DNIDX=%d -DOP=%d%s%s",
             move_only ? idx_move_option(dst->dtype) : idx_dt_option(dst->dtype),
             ix->idx[0].dtype == TOCL_I32 ? "int" : "long", ix->nidx, move_only ? 0 : (int)op,
             scatter ? " -DSCATTER" : "", scatter && !src ? " -DSRC_SCALAR" : "");
    tocl_ops_kernel *e;
    TOCL_TRY(tocl_ops_kernel_get(dev, "index", "tocl_idx_move", opts, &e));
    unsigned char vb[8], ab[8];
    size_t vs = val_bits(value, dst->dtype, move_only, vb);
    val_bits(alpha, dst->dtype, move_only, ab);
    cl_command_queue q;
    TOCL_TRY(tocl_queue_get(dev, stream, &q));
    size_t global = (size_t)((p.n_par + (int64_t)e->local - 1) / (int64_t)e->local) * e->local;
    pthread_mutex_lock(&e->lock);
    cl_int err = clSetKernelArg(e->kernel, 0, sizeof(cl_mem), &bd);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(e->kernel, 1, sizeof(cl_mem), &bs);
    for (int k = 0; k < TOCL_INDEX_MAX_INDICES && err == CL_SUCCESS; k++)
        err = clSetKernelArg(e->kernel, 2 + k, sizeof(cl_mem), &bi[k]);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(e->kernel, 6, sizeof p, &p);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(e->kernel, 7, vs, vb);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(e->kernel, 8, vs, ab);
    if (err == CL_SUCCESS) {
        cl_event ev, *evp = tocl_trace_slot(&ev);
        err = clEnqueueNDRangeKernel(q, e->kernel, 1, NULL, &global, &e->local, 0, NULL, evp);
        TOCL_TRACE_KEEP(evp, err, TOCL_TRACE_KERNEL, dev, stream, tocl_ops_kernel_name(e), 0);
    }
    pthread_mutex_unlock(&e->lock);
    if (err != CL_SUCCESS)
        return tocl_fail(TOCL_E_OPENCL, "launching %s (%s, %lld elements) on device %d: %s (%d)", opname,
                         tocl_dtype_name(dst->dtype), (long long)numel, dev, tocl_cl_error_name(err), (int)err);
    return TOCL_OK;
}

tocl_status tocl_index_gather(int dev, int stream, const tocl_tensor *dst, const tocl_tensor *src,
                              const tocl_index_spec *ix) {
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(tocl_ops_check_tensor(dst, "gather output"));
    TOCL_TRY(tocl_ops_check_tensor(src, "gather source"));
    TOCL_TRY(check_spec(ix, dst, "gather"));
    TOCL_TRY(same_shape(src, dst, "gather", "source view"));
    if (src->dtype != dst->dtype)
        return tocl_fail(TOCL_E_INVALID, "gather: source is %s but output is %s", tocl_dtype_name(src->dtype),
                         tocl_dtype_name(dst->dtype));
    for (int d = 0; d < dst->ndim; d++)
        if (dst->strides[d] == 0 && dst->sizes[d] > 1)
            return tocl_fail(TOCL_E_INVALID, "gather: output has stride 0 in dim %d", d);
    tocl_index_spec par = *ix;
    par.serial_dims = 0; /* each output element is written once */
    return run_move(dev, stream, 0, dst, src, dst, (tocl_scalar){0}, TOCL_INDEX_ASSIGN, (tocl_scalar){0}, &par,
                    "gather");
}

tocl_status tocl_index_scatter(int dev, int stream, const tocl_tensor *dst, const tocl_tensor *src,
                               tocl_scalar value, tocl_index_reduce op, tocl_scalar alpha,
                               const tocl_index_spec *ix) {
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(tocl_ops_check_tensor(dst, "scatter destination"));
    if (!ix || ix->nidx < 1)
        return tocl_fail(TOCL_E_INVALID, "scatter: no index tensor");
    const tocl_tensor *shape = src ? src : &ix->idx[0];
    if (src) {
        TOCL_TRY(tocl_ops_check_tensor(src, "scatter source"));
        if (src->dtype != dst->dtype)
            return tocl_fail(TOCL_E_INVALID, "scatter: source is %s but destination is %s",
                             tocl_dtype_name(src->dtype), tocl_dtype_name(dst->dtype));
    }
    TOCL_TRY(check_spec(ix, shape, "scatter"));
    TOCL_TRY(same_shape(dst, shape, "scatter", "destination view"));
    if ((int)op < 0 || op > TOCL_INDEX_MIN)
        return tocl_fail(TOCL_E_INVALID, "scatter: unknown reduction %d", (int)op);
    if (op != TOCL_INDEX_ASSIGN)
        TOCL_TRY(idx_check_fp64(dev, dst->dtype, "scatter"));
    return run_move(dev, stream, 1, dst, src, shape, value, op, alpha, ix, "scatter");
}

/* ---- bounds ---------------------------------------------------------- */

/* Queue the bounds kernel: idx's [min, max] per group of work-items, into
 * a new scratch block (*scratch, its buffer and offset, *groups pairs). */
static tocl_status minmax_enqueue(int dev, int stream, const tocl_tensor *idx, tocl_addr *scratch, cl_mem *bo,
                                  size_t *boff, size_t *groups_out) {
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(tocl_ops_check_tensor(idx, "index"));
    if (idx->dtype != TOCL_I64 && idx->dtype != TOCL_I32)
        return tocl_fail(TOCL_E_INVALID, "index bounds: expected an int64 or int32 tensor, got %s",
                         tocl_dtype_name(idx->dtype));
    int64_t n = tocl_ops_numel(idx);
    if (n == 0)
        return tocl_fail(TOCL_E_INVALID, "index bounds of an empty tensor");
    tocl_idx_params p;
    memset(&p, 0, sizeof p);
    const int64_t *ops[1] = {idx->strides};
    int64_t *outs[1] = {p.idx_strides[0]};
    TOCL_TRY(plan(idx->sizes, idx->ndim, 0, ops, 1, &p, outs));
    cl_mem bi;
    cl_long oi;
    TOCL_TRY(idx_resolve(dev, idx, "index", &bi, &oi));
    p.idx_off[0] = oi;
    char opts[96];
    snprintf(opts, sizeof opts, "-DDT_B8 -DIDX_T=%s -DNIDX=1 -DOP=0", idx->dtype == TOCL_I32 ? "int" : "long");
    tocl_ops_kernel *e;
    TOCL_TRY(tocl_ops_kernel_get(dev, "index", "tocl_idx_minmax", opts, &e));
    size_t local = 1;
    while (local * 2 <= e->local && (int64_t)local < n)
        local *= 2; /* the tree reduction needs a power of two; no wider than n needs (a decoding step's
                     * one token: 1 work-item, not 1024 to reduce, 17 -> 3 us on PoCL) */
    size_t groups = (size_t)((n + (int64_t)local - 1) / (int64_t)local);
    groups = groups > 64 ? 64 : groups;
    size_t global = groups * local, bytes = groups * 2 * sizeof(int64_t);
    TOCL_TRY(tocl_mem_alloc(dev, bytes, scratch));
    int mdev;
    tocl_status s = tocl_mem_resolve(*scratch, &mdev, bo, boff);
    cl_command_queue q;
    if (s == TOCL_OK)
        s = tocl_queue_get(dev, stream, &q);
    if (s == TOCL_OK) {
        cl_long ooff = (cl_long)(*boff / sizeof(int64_t)); /* blocks are 512-byte aligned */
        pthread_mutex_lock(&e->lock);
        cl_int err = clSetKernelArg(e->kernel, 0, sizeof(cl_mem), &bi);
        if (err == CL_SUCCESS)
            err = clSetKernelArg(e->kernel, 1, sizeof p, &p);
        if (err == CL_SUCCESS)
            err = clSetKernelArg(e->kernel, 2, sizeof(cl_mem), bo);
        if (err == CL_SUCCESS)
            err = clSetKernelArg(e->kernel, 3, sizeof ooff, &ooff);
        if (err == CL_SUCCESS)
            err = clSetKernelArg(e->kernel, 4, local * sizeof(cl_long), NULL);
        if (err == CL_SUCCESS)
            err = clSetKernelArg(e->kernel, 5, local * sizeof(cl_long), NULL);
        if (err == CL_SUCCESS) {
            cl_event ev, *evp = tocl_trace_slot(&ev);
            err = clEnqueueNDRangeKernel(q, e->kernel, 1, NULL, &global, &local, 0, NULL, evp);
            TOCL_TRACE_KEEP(evp, err, TOCL_TRACE_KERNEL, dev, stream, tocl_ops_kernel_name(e), 0);
        }
        pthread_mutex_unlock(&e->lock);
        if (err != CL_SUCCESS)
            s = tocl_fail(TOCL_E_OPENCL, "launching the index bounds kernel on device %d: %s (%d)", dev,
                          tocl_cl_error_name(err), (int)err);
    }
    if (s != TOCL_OK)
        tocl_mem_free(*scratch);
    *groups_out = groups;
    return s;
}

tocl_status tocl_index_minmax(int dev, int stream, const tocl_tensor *idx, int64_t *min, int64_t *max) {
    tocl_addr scratch;
    cl_mem bo;
    size_t boff, groups;
    TOCL_TRY(minmax_enqueue(dev, stream, idx, &scratch, &bo, &boff, &groups));
    /* The one host wait of an indexing op: PyTorch raises on a bad index
     * before writing anything, so the bounds must be known here. */
    int64_t host[128];
    tocl_rec_next_read_is_check((int)groups); /* a captured graph repeats the check (queue/record.h) */
    tocl_status s = tocl_copy_d2h(dev, stream, host, scratch, groups * 2 * sizeof(int64_t), 1);
    tocl_mem_free(scratch);
    TOCL_TRY(s);
    int64_t mn = host[0], mx = host[1];
    for (size_t g = 1; g < groups; g++) {
        mn = host[2 * g] < mn ? host[2 * g] : mn;
        mx = host[2 * g + 1] > mx ? host[2 * g + 1] : mx;
    }
    *min = mn;
    *max = mx;
    return TOCL_OK;
}

tocl_status tocl_index_check_later(int dev, int stream, const tocl_tensor *idx, int64_t lo, int64_t hi) {
    if (tocl_graph_capturing())
        return tocl_fail(TOCL_E_INVALID, "index check read back later: not while a graph is captured (a replay "
                         "reads new indices; tocl_index_minmax records a check it repeats)");
    if (stream != tocl_stream_current(dev)) {
        /* The scratch block is the current stream's: freed before the read
         * ran, another stream could reuse it first. Check now instead. */
        int64_t mn, mx;
        TOCL_TRY(tocl_index_minmax(dev, stream, idx, &mn, &mx));
        if (mn < lo || mx > hi)
            return tocl_fail(TOCL_E_INVALID, "index %lld is out of bounds [%lld, %lld]", (long long)(mn < lo ? mn : mx),
                             (long long)lo, (long long)hi);
        return TOCL_OK;
    }
    tocl_addr scratch;
    cl_mem bo;
    size_t boff, groups;
    TOCL_TRY(minmax_enqueue(dev, stream, idx, &scratch, &bo, &boff, &groups));
    cl_command_queue q;
    tocl_status s = tocl_queue_get(dev, stream, &q);
    if (s == TOCL_OK) /* judged at the next host wait (queue/deferred.c) */
        s = tocl_deferred_read(dev, stream, q, bo, boff, groups * 2 * sizeof(int64_t), (int)groups, lo, hi);
    tocl_mem_free(scratch); /* stream-ordered: the read is queued before any reuse */
    return s;
}

/* ---- scatter_reduce(mean) -------------------------------------------- */

tocl_status tocl_index_div_count(int dev, int stream, const tocl_tensor *dst, const tocl_tensor *count) {
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(tocl_ops_check_tensor(dst, "mean destination"));
    TOCL_TRY(tocl_ops_check_tensor(count, "mean count"));
    TOCL_TRY(same_shape(count, dst, "scatter_reduce mean", "count"));
    if (count->dtype != TOCL_I64)
        return tocl_fail(TOCL_E_INVALID, "scatter_reduce mean: count must be int64");
    if (dst->dtype == TOCL_BOOL)
        return tocl_fail(TOCL_E_UNSUPPORTED, "scatter_reduce mean is not supported for bool");
    TOCL_TRY(idx_check_fp64(dev, dst->dtype, "scatter_reduce mean"));
    int64_t n = tocl_ops_numel(dst);
    if (n == 0)
        return TOCL_OK;
    tocl_idx_params p;
    memset(&p, 0, sizeof p);
    const int64_t *ops[2] = {dst->strides, count->strides};
    int64_t *outs[2] = {p.dst_strides, p.src_strides};
    TOCL_TRY(plan(dst->sizes, dst->ndim, 0, ops, 2, &p, outs));
    cl_mem bd, bc;
    cl_long od, oc;
    TOCL_TRY(idx_resolve(dev, dst, "destination", &bd, &od));
    TOCL_TRY(idx_resolve(dev, count, "count", &bc, &oc));
    p.dst_off = od;
    p.src_off = oc;
    char opts[64];
    snprintf(opts, sizeof opts, "%s -DDIVCOUNT", idx_dt_option(dst->dtype));
    tocl_ops_kernel *e;
    TOCL_TRY(tocl_ops_kernel_get(dev, "index", "tocl_idx_divcount", opts, &e));
    cl_command_queue q;
    TOCL_TRY(tocl_queue_get(dev, stream, &q));
    size_t global = (size_t)((n + (int64_t)e->local - 1) / (int64_t)e->local) * e->local;
    pthread_mutex_lock(&e->lock);
    cl_int err = clSetKernelArg(e->kernel, 0, sizeof(cl_mem), &bd);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(e->kernel, 1, sizeof(cl_mem), &bc);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(e->kernel, 2, sizeof p, &p);
    if (err == CL_SUCCESS) {
        cl_event ev, *evp = tocl_trace_slot(&ev);
        err = clEnqueueNDRangeKernel(q, e->kernel, 1, NULL, &global, &e->local, 0, NULL, evp);
        TOCL_TRACE_KEEP(evp, err, TOCL_TRACE_KERNEL, dev, stream, tocl_ops_kernel_name(e), 0);
    }
    pthread_mutex_unlock(&e->lock);
    if (err != CL_SUCCESS)
        return tocl_fail(TOCL_E_OPENCL, "launching the scatter mean division on device %d: %s (%d)", dev,
                         tocl_cl_error_name(err), (int)err);
    return TOCL_OK;
}
