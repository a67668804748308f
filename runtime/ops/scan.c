/* scan.c - tocl_scan_run: cumulative sum/prod/max/min/log-sum-exp along one
 * dimension with the kernels of kernels/scan.cl. Rows (all positions of the
 * other dims) are independent; a long row is cut into chunks so that a few
 * rows still fill the device (totals, carries, apply), while many rows run
 * one work-item per row in a single launch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch/launch.h"
#include "scan_params.h"
#include "tocl/reduce.h"

#define STATE_BYTES 16 /* sizeof(st_t) in scan.cl: an 8-byte value (or less) and a long */

#define N_KERNELS 3 /* totals, carry, apply */

/* The three kernels of (kind, dtype), from the one kernel cache. */
static tocl_status scan_kernels(int dev, tocl_scan_kind kind, tocl_dtype dt, tocl_ops_kernel **k) {
    /* complex64 log-sum-exp accumulates in complex128 where it can (scan.cl) */
    int acc64 = kind == TOCL_SCAN_LOGSUMEXP_PAIRS && dt == TOCL_F32 && tocl_dev_props(dev)->has_fp64;
    static const char *tnames[TOCL_NUM_DTYPES] = {"BOOL", "U8", "I8", "I16", "I32", "I64", "F16", "BF16", "F32", "F64"};
    static const char *onames[TOCL_SCAN_KIND_COUNT] = {"SUM", "PROD", "MAX", "MIN", "LSE", "CLSE"};
    static const char *knames[N_KERNELS] = {"tocl_scan_totals", "tocl_scan_carry", "tocl_scan_apply"};
    char opt[128];
    snprintf(opt, sizeof opt, "-DTOCL_SCAN_T_%s -DTOCL_SCAN_OP_%s%s", tnames[dt], onames[kind],
             acc64 ? " -DTOCL_SCAN_ACC_F64" : "");
    for (int i = 0; i < N_KERNELS; i++)
        TOCL_TRY(tocl_ops_kernel_get(dev, "scan", knames[i], opt, &k[i]));
    return TOCL_OK;
}

/* Row dims: every dim but `dim`, size-1 dims dropped, neighbours merged
 * where in, out and idx all nest (logical order kept). */
static tocl_status scan_collapse(tocl_scan_params *p, int dim, const tocl_tensor *out, const tocl_tensor *idx,
                                 const tocl_tensor *in) {
    int r = 0;
    for (int d = 0; d < in->ndim; d++) {
        int64_t n = in->sizes[d];
        if (d == dim || n == 1)
            continue;
        int64_t xs = idx ? idx->strides[d] : 0;
        if (r > 0 && p->in_rst[r - 1] == in->strides[d] * n && p->out_rst[r - 1] == out->strides[d] * n &&
            p->idx_rst[r - 1] == xs * n) {
            p->sizes[r - 1] *= n;
        } else {
            if (r == TOCL_SCAN_MAX_OUTER)
                return tocl_fail(TOCL_E_UNSUPPORTED, "scan over a tensor whose other dims do not collapse to %d; "
                                 "make it contiguous first", TOCL_SCAN_MAX_OUTER);
            p->sizes[r++] = n;
        }
        p->in_rst[r - 1] = in->strides[d];
        p->out_rst[r - 1] = out->strides[d];
        p->idx_rst[r - 1] = xs;
    }
    p->ndim = r;
    return TOCL_OK;
}

/* A complex tensor in pairs layout as the tensor of its pairs: the trailing
 * [2] dim of stride 1 dropped; the kernel reads offsets i and i + 1. */
static tocl_status scan_unpair(const tocl_tensor *t, const char *what, tocl_tensor *pairs) {
    if (t->dtype != TOCL_F32 && t->dtype != TOCL_F64)
        return tocl_fail(TOCL_E_INVALID, "complex logcumsumexp: %s must be complex64/complex128 pairs (float32 or "
                         "float64), got %s", what, tocl_dtype_name(t->dtype));
    if (t->ndim < 2 || t->sizes[t->ndim - 1] != 2 || t->strides[t->ndim - 1] != 1)
        return tocl_fail(TOCL_E_INVALID, "complex logcumsumexp: %s must end in a pair dim [..., 2] of stride 1", what);
    *pairs = *t;
    pairs->ndim = t->ndim - 1;
    return TOCL_OK;
}

tocl_status tocl_scan_run(int dev, int stream, tocl_scan_kind kind, int dim, const tocl_tensor *out,
                          const tocl_tensor *idx, const tocl_tensor *in) {
    TOCL_TRY(tocl_device_check(dev));
    if ((int)kind < 0 || kind >= TOCL_SCAN_KIND_COUNT)
        return tocl_fail(TOCL_E_INVALID, "tocl_scan_run: invalid scan kind %d", (int)kind);
    TOCL_TRY(tocl_ops_check_tensor(in, "scan input"));
    TOCL_TRY(tocl_ops_check_tensor(out, "scan output"));
    tocl_tensor in_pairs, out_pairs;
    int pairs = kind == TOCL_SCAN_LOGSUMEXP_PAIRS;
    if (pairs) {
        TOCL_TRY(scan_unpair(in, "input", &in_pairs));
        TOCL_TRY(scan_unpair(out, "output", &out_pairs));
        in = &in_pairs;
        out = &out_pairs;
    }
    int want_idx = kind == TOCL_SCAN_MAX || kind == TOCL_SCAN_MIN;
    if (want_idx != (idx != NULL))
        return tocl_fail(TOCL_E_INVALID, "tocl_scan_run: cummax/cummin need an index output, other scans none");
    if (idx)
        TOCL_TRY(tocl_ops_check_tensor(idx, "scan indices"));
    if (in->ndim < 1 || dim < 0 || dim >= in->ndim)
        return tocl_fail(TOCL_E_INVALID, "tocl_scan_run: dim %d out of range for %d dims", dim, in->ndim);
    if (out->dtype != in->dtype)
        return tocl_fail(TOCL_E_INVALID, "scan output has dtype %s, input %s: convert the input first",
                         tocl_dtype_name(out->dtype), tocl_dtype_name(in->dtype));
    if (idx && idx->dtype != TOCL_I64)
        return tocl_fail(TOCL_E_INVALID, "scan indices must be int64, got %s", tocl_dtype_name(idx->dtype));
    if (kind == TOCL_SCAN_LOGSUMEXP && !tocl_dtype_is_float(in->dtype))
        return tocl_fail(TOCL_E_INVALID, "logcumsumexp needs a floating dtype, got %s", tocl_dtype_name(in->dtype));
    if (in->dtype == TOCL_F64 && !tocl_dev_props(dev)->has_fp64)
        return tocl_fail(TOCL_E_UNSUPPORTED, "float64 is not supported on device %d (%s): it lacks cl_khr_fp64",
                         dev, tocl_dev_props(dev)->name);
    for (int k = 0; k < 1 + (idx != NULL); k++) {
        const tocl_tensor *t = k ? idx : out;
        if (t->ndim != in->ndim)
            return tocl_fail(TOCL_E_INVALID, "scan output has %d dims, input %d", t->ndim, in->ndim);
        for (int d = 0; d < in->ndim; d++) {
            if (t->sizes[d] != in->sizes[d])
                return tocl_fail(TOCL_E_INVALID, "scan output size %lld in dim %d differs from the input's %lld",
                                 (long long)t->sizes[d], d, (long long)in->sizes[d]);
            if (t->sizes[d] > 1 && t->strides[d] == 0)
                return tocl_fail(TOCL_E_INVALID, "scan output has stride 0 in dim %d", d);
        }
    }
    int64_t numel = tocl_ops_numel(in);
    if (numel == 0)
        return TOCL_OK;

    tocl_scan_params p;
    memset(&p, 0, sizeof p);
    TOCL_TRY(scan_collapse(&p, dim, out, idx, in));
    p.n = in->sizes[dim];
    p.rows = numel / p.n;
    p.in_st = in->strides[dim];
    p.out_st = out->strides[dim];
    p.idx_st = idx ? idx->strides[dim] : 0;

    cl_mem bin, bout, bidx;
    cl_long oin, oout, oidx = 0;
    int mdev;
    TOCL_TRY(tocl_ops_resolve(dev, in, "input", 0, &bin, &oin, &mdev));
    if (mdev != dev)
        return tocl_fail(TOCL_E_INVALID, "scan input lives on device %d, not %d", mdev, dev);
    TOCL_TRY(tocl_ops_resolve(dev, out, "output", 0, &bout, &oout, &mdev));
    if (mdev != dev)
        return tocl_fail(TOCL_E_INVALID, "scan output lives on device %d, not %d", mdev, dev);
    bidx = bout;
    if (idx) {
        TOCL_TRY(tocl_ops_resolve(dev, idx, "indices", 0, &bidx, &oidx, &mdev));
        if (mdev != dev)
            return tocl_fail(TOCL_E_INVALID, "scan indices live on device %d, not %d", mdev, dev);
    }
    p.in_off = oin;
    p.out_off = oout;
    p.idx_off = oidx;

    tocl_ops_kernel *k[N_KERNELS];
    TOCL_TRY(scan_kernels(dev, kind, in->dtype, k));
    const tocl_device_props *pr = tocl_dev_props(dev);
    int cpu = pr->kind == TOCL_DEVICE_CPU;
    int64_t cu = pr->compute_units ? pr->compute_units : 1;
    int64_t want = cu * (int64_t)k[2]->local * (cpu ? 2 : 4), min_chunk = cpu ? 256 : 32;
    p.nchunks = 1;
    p.chunk = p.n;
    if (p.rows < want && p.n > 2 * min_chunk && !pairs) { /* complex: in order (reduce.h) */
        int64_t nc = (want + p.rows - 1) / p.rows, by_len = p.n / min_chunk;
        nc = nc < by_len ? nc : by_len;
        p.chunk = (p.n + nc - 1) / nc;
        p.nchunks = (p.n + p.chunk - 1) / p.chunk;
    }
    tocl_addr tmp = 0;
    cl_mem btmp = bout;
    size_t toff = 0;
    if (p.nchunks > 1) {
        TOCL_TRY(tocl_mem_alloc(dev, (size_t)(p.rows * p.nchunks) * STATE_BYTES, &tmp));
        int tdev;
        tocl_status s = tocl_mem_resolve(tmp, &tdev, &btmp, &toff);
        if (s != TOCL_OK) {
            tocl_mem_free(tmp);
            return s;
        }
        p.tmp_off = (int64_t)(toff / STATE_BYTES); /* blocks are 512-byte aligned */
    }
    size_t local = k[2]->local;
    size_t gsz = (size_t)(p.rows * p.nchunks);
    size_t global = (gsz + local - 1) / local * local;
    size_t gcar = ((size_t)p.rows + local - 1) / local * local;
    cl_int has_carry = p.nchunks > 1;
    tocl_status s = TOCL_OK;
    if (has_carry) {
        tocl_ops_arg a0[] = {{sizeof(cl_mem), &bin}, {sizeof p, &p}, {sizeof(cl_mem), &btmp}};
        tocl_ops_arg a1[] = {{sizeof p, &p}, {sizeof(cl_mem), &btmp}};
        s = tocl_ops_launch(dev, stream, k[0], 1, &global, &local, a0, 3);
        if (s == TOCL_OK)
            s = tocl_ops_launch(dev, stream, k[1], 1, &gcar, &local, a1, 2);
    }
    if (s == TOCL_OK) {
        tocl_ops_arg a2[] = {{sizeof(cl_mem), &bin}, {sizeof(cl_mem), &bout}, {sizeof(cl_mem), &bidx},
                             {sizeof p, &p}, {sizeof(cl_mem), &btmp}, {sizeof has_carry, &has_carry}};
        s = tocl_ops_launch(dev, stream, k[2], 1, &global, &local, a2, 6);
    }
    if (tmp) {
        if (stream != tocl_stream_current(dev))
            tocl_mem_record_stream(tmp, stream);
        tocl_mem_free(tmp);
    }
    if (s != TOCL_OK)
        tocl_error_context("scanning %lld rows of %lld on device %d", (long long)p.rows, (long long)p.n, dev);
    return s;
}
