/* sort.c - segmented stable sort of rows (kernels/sort.cl) and the ops that
 * read a sorted row: sort, top-k, k-th value, median, mode. Also the shared
 * launch machinery of the sort family (sort_launch.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/sort_launch.h"

static const char *const sort_kernel_names[SORT_K_NUM] = {
    "tocl_sort_local", "tocl_sort_merge",  "tocl_sort_take",  "tocl_search",    "tocl_isin",
    "tocl_uniq_count", "tocl_uniq_scan",   "tocl_uniq_apply", "tocl_uniq_fill", "tocl_uniq_counts",
    "tocl_minmax",     "tocl_histc",       "tocl_histc_store", "tocl_bincount"};

static const char *sort_dtype_macro(tocl_dtype dt) {
    static const char *const m[TOCL_NUM_DTYPES] = {"BOOL", "U8", "I8", "I16", "I32", "I64", "F16", "BF16", "F32", "F64"};
    return m[dt];
}

/* Largest power of two <= v (v >= 1). */
static size_t sort_pow2_floor(size_t v) {
    size_t p = 1;
    while (p * 2 <= v)
        p *= 2;
    return p;
}

/* Barrier kernels size their local arrays from the work-group size; 256
 * keeps them well inside any device's local memory (2 * 256 * 16 bytes for
 * the sort) and is a wavefront multiple on GPUs. A power of two. */
static size_t sort_group(int dev, const tocl_ops_kernel *k) {
    size_t want = 256, kmax = tocl_ops_kernel_max_group(dev, k);
    if (kmax < want)
        want = kmax;
    const tocl_device_props *p = tocl_dev_props(dev);
    if (p->max_work_group_size > 0 && p->max_work_group_size < want)
        want = (size_t)p->max_work_group_size;
    if (p->local_mem_bytes > 0)
        while (want > 1 && want * 2 * 16 + 64 > p->local_mem_bytes)
            want /= 2;
    return sort_pow2_floor(want ? want : 1);
}

static tocl_status sort_kernel(int dev, tocl_dtype dt, sort_kid kid, tocl_ops_kernel **out) {
    char opt[64];
    snprintf(opt, sizeof opt, "-DTOCL_SORT_%s", sort_dtype_macro(dt));
    return tocl_ops_kernel_get(dev, "sort", sort_kernel_names[kid], opt, out);
}

tocl_status sort_local_size(int dev, tocl_dtype dt, sort_kid kid, size_t *out) {
    tocl_ops_kernel *e;
    TOCL_TRY(sort_kernel(dev, dt, kid, &e));
    *out = sort_group(dev, e);
    return TOCL_OK;
}

tocl_status sort_launch(int dev, int stream, tocl_dtype dt, sort_kid kid, size_t global, size_t local,
                        const sort_arg *args, int nargs) {
    if (global == 0)
        return TOCL_OK;
    tocl_ops_kernel *e;
    TOCL_TRY(sort_kernel(dev, dt, kid, &e));
    if (local == 0)
        local = sort_group(dev, e);
    global = (global + local - 1) / local * local;
    return tocl_ops_launch(dev, stream, e, 1, &global, &local, args, nargs);
}

tocl_status sort_check_dtype(int dev, tocl_dtype dt, const char *what) {
    if ((int)dt < 0 || dt >= TOCL_NUM_DTYPES)
        return tocl_fail(TOCL_E_INVALID, "%s: invalid dtype %d", what, (int)dt);
    if (dt == TOCL_F64 && !tocl_dev_props(dev)->has_fp64)
        return tocl_fail(TOCL_E_UNSUPPORTED, "%s: float64 is not supported on device %d (%s): it lacks cl_khr_fp64",
                         what, dev, tocl_dev_props(dev)->name);
    return TOCL_OK;
}

tocl_status sort_rows_prep(int dev, const char *what, int nops, const tocl_tensor *const *ts, tocl_sort_shape *sh,
                           tocl_sort_layout *ls, cl_mem *bufs) {
    const tocl_tensor *ref = NULL;
    for (int k = 0; k < nops; k++) {
        if (!ts[k])
            continue;
        TOCL_TRY(tocl_ops_check_tensor(ts[k], what));
        if (ts[k]->ndim < 1)
            return tocl_fail(TOCL_E_INVALID, "%s: operand %d has 0 dims; rows need at least 1", what, k);
        if (!ref) {
            ref = ts[k];
            continue;
        }
        if (ts[k]->ndim != ref->ndim)
            return tocl_fail(TOCL_E_INVALID, "%s: operand %d has %d dims, operand 0 has %d", what, k, ts[k]->ndim,
                             ref->ndim);
        for (int d = 0; d + 1 < ref->ndim; d++)
            if (ts[k]->sizes[d] != ref->sizes[d])
                return tocl_fail(TOCL_E_INVALID, "%s: operand %d has batch size %lld in dim %d, expected %lld", what,
                                 k, (long long)ts[k]->sizes[d], d, (long long)ref->sizes[d]);
    }
    if (!ref)
        return tocl_fail(TOCL_E_INVALID, "%s: no operands", what);
    memset(sh, 0, sizeof *sh);
    memset(ls, 0, sizeof *ls * (size_t)nops);
    /* Collapse batch dims: drop size 1, merge neighbours nested in every operand. */
    int nb = 0;
    int64_t sizes[TOCL_TENSOR_MAX_DIMS], strides[8][TOCL_TENSOR_MAX_DIMS];
    if (nops > 8)
        return tocl_fail(TOCL_E_INTERNAL, "%s: too many row operands (%d)", what, nops);
    sh->nrows = 1;
    for (int d = 0; d + 1 < ref->ndim; d++) {
        int64_t sz = ref->sizes[d];
        sh->nrows *= sz;
        if (sz == 1)
            continue;
        int merge = nb > 0;
        for (int k = 0; k < nops && merge; k++)
            if (ts[k] && strides[k][nb - 1] != ts[k]->strides[d] * sz)
                merge = 0;
        if (merge) {
            sizes[nb - 1] *= sz;
            for (int k = 0; k < nops; k++)
                if (ts[k])
                    strides[k][nb - 1] = ts[k]->strides[d];
            continue;
        }
        sizes[nb] = sz;
        for (int k = 0; k < nops; k++)
            if (ts[k])
                strides[k][nb] = ts[k]->strides[d];
        nb++;
    }
    if (nb > TOCL_SORT_MAX_BATCH)
        return tocl_fail(TOCL_E_UNSUPPORTED, "%s: %d batch dimensions remain after collapsing; at most %d are "
                         "supported (make the input contiguous)", what, nb, TOCL_SORT_MAX_BATCH);
    sh->nbatch = nb;
    for (int d = 0; d < nb; d++)
        sh->sizes[d] = sizes[d];
    cl_mem any = NULL;
    for (int k = 0; k < nops; k++) {
        bufs[k] = NULL;
        if (!ts[k] || tocl_ops_numel(ts[k]) == 0)
            continue;
        cl_long off;
        int mdev;
        TOCL_TRY(tocl_ops_resolve(dev, ts[k], what, k, &bufs[k], &off, &mdev));
        ls[k].off = off;
        ls[k].inner = ts[k]->strides[ts[k]->ndim - 1];
        for (int d = 0; d < nb; d++)
            ls[k].strides[d] = strides[k][d];
        if (!any)
            any = bufs[k];
    }
    for (int k = 0; k < nops; k++)
        if (!bufs[k])
            bufs[k] = any;
    return TOCL_OK;
}

tocl_status sort_scratch_get(int dev, int stream, size_t bytes, sort_scratch *s) {
    memset(s, 0, sizeof *s);
    int mdev;
    TOCL_TRY(tocl_mem_alloc(dev, bytes ? bytes : 8, &s->addr));
    tocl_status st = tocl_mem_resolve(s->addr, &mdev, &s->buf, &s->off);
    if (st == TOCL_OK && stream != tocl_stream_current(dev))
        st = tocl_mem_record_stream(s->addr, stream);
    if (st != TOCL_OK) {
        tocl_mem_free(s->addr);
        s->addr = 0;
    }
    return st;
}

void sort_scratch_free(sort_scratch *s) {
    if (s->addr)
        tocl_mem_free(s->addr); /* stream-ordered: reused only after queued work */
    s->addr = 0;
}

/* Sort every row of src (shape sh, layout sl in buffer sbuf, rows of n)
 * into (key, index) pairs in scratch *scr: on return keys of row r start at
 * element *koff (of the key type) and indices at *ioff (int64) of scr->buf. */
static tocl_status sort_pairs(int dev, int stream, tocl_dtype dt, int desc, cl_mem sbuf, const tocl_sort_shape *sh,
                              const tocl_sort_layout *sl, int64_t n, sort_scratch *scr, cl_long *koff,
                              cl_long *ioff) {
    size_t ks = (dt == TOCL_I64 || dt == TOCL_F64) ? 8 : 4;
    size_t total = (size_t)(sh->nrows * n);
    size_t kbytes = (total * ks + 7) / 8 * 8, set = kbytes + total * 8;
    size_t lsz;
    TOCL_TRY(sort_local_size(dev, dt, SORT_K_LOCAL, &lsz));
    int64_t cap = 2 * (int64_t)lsz, seg = 1;
    while (seg < n && seg < cap)
        seg *= 2;
    int passes = 0;
    for (int64_t w = seg; w < n; w *= 2)
        passes++;
    TOCL_TRY(sort_scratch_get(dev, stream, passes ? 2 * set : set, scr));
    cl_long base = (cl_long)scr->off;
    cl_long k0 = base / (cl_long)ks, i0 = (base + (cl_long)kbytes) / 8;
    cl_long k1 = (base + (cl_long)set) / (cl_long)ks, i1 = (base + (cl_long)set + (cl_long)kbytes) / 8;
    cl_long nn = n, segl = seg;
    cl_int dsc = desc != 0;
    int64_t nseg = sh->nrows * ((n + seg - 1) / seg), spg = cap / seg;
    size_t groups = (size_t)((nseg + spg - 1) / spg);
    sort_arg la[] = {SORT_ARG(sbuf), SORT_ARG(*sh), SORT_ARG(*sl), SORT_ARG(nn), SORT_ARG(dsc), SORT_ARG(segl),
                     SORT_ARG(scr->buf), SORT_ARG(k0), SORT_ARG(scr->buf), SORT_ARG(i0),
                     SORT_LOCAL((size_t)cap * ks), SORT_LOCAL((size_t)cap * 8)};
    tocl_status s = sort_launch(dev, stream, dt, SORT_K_LOCAL, groups * lsz, lsz, la, 12);
    cl_long tot = (cl_long)total;
    for (int64_t w = seg; s == TOCL_OK && w < n; w *= 2) {
        cl_long wl = w;
        sort_arg ma[] = {SORT_ARG(scr->buf), SORT_ARG(k0), SORT_ARG(scr->buf), SORT_ARG(i0),
                         SORT_ARG(scr->buf), SORT_ARG(k1), SORT_ARG(scr->buf), SORT_ARG(i1),
                         SORT_ARG(nn),       SORT_ARG(tot), SORT_ARG(wl)};
        s = sort_launch(dev, stream, dt, SORT_K_MERGE, total, 0, ma, 11);
        cl_long t = k0;
        k0 = k1;
        k1 = t;
        t = i0;
        i0 = i1;
        i1 = t;
    }
    if (s != TOCL_OK) {
        sort_scratch_free(scr);
        return s;
    }
    *koff = k0;
    *ioff = i0;
    return TOCL_OK;
}

tocl_status tocl_sort_rows(int dev, int stream, const tocl_tensor *src, const tocl_tensor *values,
                           const tocl_tensor *indices, int descending, tocl_sort_take take, int64_t k) {
    const char *what = "sort";
    TOCL_TRY(tocl_device_check(dev));
    if (!src || !values || !indices)
        return tocl_fail(TOCL_E_INVALID, "%s: src, values and indices are required", what);
    const tocl_tensor *ts[3] = {src, values, indices};
    tocl_sort_shape sh;
    tocl_sort_layout ls[3];
    cl_mem bufs[3];
    TOCL_TRY(sort_rows_prep(dev, what, 3, ts, &sh, ls, bufs));
    TOCL_TRY(sort_check_dtype(dev, src->dtype, what));
    if (values->dtype != src->dtype || indices->dtype != TOCL_I64)
        return tocl_fail(TOCL_E_INVALID, "%s: values must have the source dtype %s and indices int64; got %s and %s",
                         what, tocl_dtype_name(src->dtype), tocl_dtype_name(values->dtype),
                         tocl_dtype_name(indices->dtype));
    int last = src->ndim - 1;
    int64_t n = src->sizes[last], kout = values->sizes[last];
    if (indices->sizes[last] != kout)
        return tocl_fail(TOCL_E_INVALID, "%s: values have %lld columns but indices %lld", what, (long long)kout,
                         (long long)indices->sizes[last]);
    if ((int)take < 0 || take > TOCL_SORT_TAKE_MODE)
        return tocl_fail(TOCL_E_INVALID, "%s: unknown selection %d", what, (int)take);
    if (take == TOCL_SORT_TAKE_RANGE ? kout > n : kout != 1)
        return tocl_fail(TOCL_E_INVALID, "%s: %lld output columns for rows of %lld", what, (long long)kout,
                         (long long)n);
    if (take == TOCL_SORT_TAKE_KTH && (k < 0 || k >= n))
        return tocl_fail(TOCL_E_INVALID, "%s: position k=%lld out of range for rows of %lld", what, (long long)k,
                         (long long)n);
    if (take != TOCL_SORT_TAKE_RANGE)
        descending = 0;
    if (sh.nrows == 0 || kout == 0)
        return TOCL_OK;
    sort_scratch scr;
    cl_long koff, ioff;
    TOCL_TRY(sort_pairs(dev, stream, src->dtype, descending, bufs[0], &sh, &ls[0], n, &scr, &koff, &ioff));
    cl_long nn = n, ko = kout, kk = k;
    cl_int mode = (cl_int)take;
    sort_arg ta[] = {SORT_ARG(bufs[0]), SORT_ARG(sh),       SORT_ARG(ls[0]),    SORT_ARG(nn),   SORT_ARG(scr.buf),
                     SORT_ARG(koff),    SORT_ARG(scr.buf),  SORT_ARG(ioff),     SORT_ARG(ko),   SORT_ARG(mode),
                     SORT_ARG(kk),      SORT_ARG(bufs[1]),  SORT_ARG(ls[1]),    SORT_ARG(bufs[2]), SORT_ARG(ls[2])};
    tocl_status s = sort_launch(dev, stream, src->dtype, SORT_K_TAKE, (size_t)(sh.nrows * kout), 0, ta, 15);
    sort_scratch_free(&scr);
    return s;
}
