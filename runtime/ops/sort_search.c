/* sort_search.c - the search side of the sort family (kernels/sort.cl):
 * searchsorted, isin, min/max, histc, bincount and unique. */
#include <string.h>

#include "ops/sort_launch.h"

/* A 1-D operand: buffer, element offset and stride. */
typedef struct sort_vec {
    cl_mem buf;
    cl_long off, inner, n;
} sort_vec;

static tocl_status sort_vec_get(int dev, const tocl_tensor *t, const char *what, int k, int need_dense,
                                sort_vec *v) {
    TOCL_TRY(tocl_ops_check_tensor(t, what));
    if (t->ndim != 1)
        return tocl_fail(TOCL_E_INVALID, "%s: operand %d must be 1-D, got %d dims", what, k, t->ndim);
    if (need_dense && t->sizes[0] > 1 && t->strides[0] != 1)
        return tocl_fail(TOCL_E_INVALID, "%s: operand %d must be contiguous (stride %lld)", what, k,
                         (long long)t->strides[0]);
    memset(v, 0, sizeof *v);
    v->n = t->sizes[0];
    v->inner = t->strides[0];
    if (v->n == 0)
        return TOCL_OK;
    int mdev;
    return tocl_ops_resolve(dev, t, what, k, &v->buf, &v->off, &mdev);
}

tocl_status tocl_searchsorted(int dev, int stream, const tocl_tensor *sorted, const tocl_tensor *values,
                              const tocl_tensor *sorter, const tocl_tensor *out, int right) {
    const char *what = "searchsorted";
    TOCL_TRY(tocl_device_check(dev));
    if (!sorted || !values || !out)
        return tocl_fail(TOCL_E_INVALID, "%s: sorted, values and out are required", what);
    const tocl_tensor *ts[4] = {out, sorted, values, sorter};
    tocl_sort_shape sh;
    tocl_sort_layout ls[4];
    cl_mem bufs[4];
    TOCL_TRY(sort_rows_prep(dev, what, 4, ts, &sh, ls, bufs));
    TOCL_TRY(sort_check_dtype(dev, values->dtype, what));
    int last = values->ndim - 1;
    if (sorted->dtype != values->dtype)
        return tocl_fail(TOCL_E_INVALID, "%s: boundaries (%s) and values (%s) must have one dtype", what,
                         tocl_dtype_name(sorted->dtype), tocl_dtype_name(values->dtype));
    if (out->dtype != TOCL_I32 && out->dtype != TOCL_I64)
        return tocl_fail(TOCL_E_INVALID, "%s: out must be int32 or int64, got %s", what, tocl_dtype_name(out->dtype));
    if (out->sizes[last] != values->sizes[last])
        return tocl_fail(TOCL_E_INVALID, "%s: out rows have %lld elements, values rows %lld", what,
                         (long long)out->sizes[last], (long long)values->sizes[last]);
    if (sorter && (sorter->dtype != TOCL_I64 || sorter->sizes[last] != sorted->sizes[last]))
        return tocl_fail(TOCL_E_INVALID, "%s: sorter must be int64 rows as long as the boundaries", what);
    cl_long nb = sorted->sizes[last], nv = values->sizes[last];
    if (sh.nrows * nv == 0)
        return TOCL_OK;
    cl_int use_sorter = sorter != NULL, out32 = out->dtype == TOCL_I32, r = right != 0;
    sort_arg a[] = {SORT_ARG(bufs[1]), SORT_ARG(ls[1]), SORT_ARG(nb),      SORT_ARG(bufs[2]), SORT_ARG(ls[2]),
                    SORT_ARG(nv),      SORT_ARG(sh),    SORT_ARG(bufs[3]), SORT_ARG(ls[3]),   SORT_ARG(use_sorter),
                    SORT_ARG(bufs[0]), SORT_ARG(ls[0]), SORT_ARG(out32),   SORT_ARG(r)};
    return sort_launch(dev, stream, values->dtype, SORT_K_SEARCH, (size_t)(sh.nrows * nv), 0, a, 14);
}

tocl_status tocl_isin_sorted(int dev, int stream, const tocl_tensor *elements, const tocl_tensor *sorted_test,
                             const tocl_tensor *out, int invert) {
    const char *what = "isin";
    TOCL_TRY(tocl_device_check(dev));
    if (!elements || !sorted_test || !out)
        return tocl_fail(TOCL_E_INVALID, "%s: elements, test and out are required", what);
    const tocl_tensor *ts[2] = {out, elements};
    tocl_sort_shape sh;
    tocl_sort_layout ls[2];
    cl_mem bufs[2];
    TOCL_TRY(sort_rows_prep(dev, what, 2, ts, &sh, ls, bufs));
    TOCL_TRY(sort_check_dtype(dev, elements->dtype, what));
    sort_vec t;
    TOCL_TRY(sort_vec_get(dev, sorted_test, what, 2, 1, &t));
    if (sorted_test->dtype != elements->dtype || out->dtype != TOCL_BOOL)
        return tocl_fail(TOCL_E_INVALID, "%s: test values must have the elements' dtype %s and out must be bool",
                         what, tocl_dtype_name(elements->dtype));
    int last = elements->ndim - 1;
    if (out->sizes[last] != elements->sizes[last])
        return tocl_fail(TOCL_E_INVALID, "%s: out and elements differ in shape", what);
    cl_long n = elements->sizes[last];
    if (sh.nrows * n == 0)
        return TOCL_OK;
    if (!t.buf)
        t.buf = bufs[0];
    cl_int inv = invert != 0;
    sort_arg a[] = {SORT_ARG(bufs[1]), SORT_ARG(ls[1]), SORT_ARG(n),       SORT_ARG(sh),    SORT_ARG(t.buf),
                    SORT_ARG(t.off),   SORT_ARG(t.n),   SORT_ARG(bufs[0]), SORT_ARG(ls[0]), SORT_ARG(inv)};
    return sort_launch(dev, stream, elements->dtype, SORT_K_ISIN, (size_t)(sh.nrows * n), 0, a, 10);
}

tocl_status tocl_minmax(int dev, int stream, const tocl_tensor *src, tocl_scalar *min, tocl_scalar *max,
                        int *has_nan) {
    const char *what = "minmax";
    TOCL_TRY(tocl_device_check(dev));
    sort_vec v;
    TOCL_TRY(sort_vec_get(dev, src, what, 0, 0, &v));
    TOCL_TRY(sort_check_dtype(dev, src->dtype, what));
    if (v.n == 0)
        return tocl_fail(TOCL_E_INVALID, "%s: empty input", what);
    tocl_dtype dt = src->dtype;
    int is_float = tocl_dtype_is_float(dt);
    size_t cts = (dt == TOCL_I64 || dt == TOCL_F64) ? 8 : 4, lsz;
    TOCL_TRY(sort_local_size(dev, dt, SORT_K_MINMAX, &lsz));
    sort_scratch scr;
    TOCL_TRY(sort_scratch_get(dev, stream, 3 * 8, &scr));
    cl_long so = (cl_long)(scr.off / 8);
    sort_arg a[] = {SORT_ARG(v.buf),   SORT_ARG(v.off),        SORT_ARG(v.inner),      SORT_ARG(v.n),
                    SORT_ARG(scr.buf), SORT_ARG(so),           SORT_LOCAL(lsz * cts),  SORT_LOCAL(lsz * cts),
                    SORT_LOCAL(lsz * sizeof(cl_int))};
    uint64_t host[3];
    tocl_status s = sort_launch(dev, stream, dt, SORT_K_MINMAX, lsz, lsz, a, 9);
    /* Host wait: the caller needs the range on the host (output size or a
     * range check that PyTorch reports as an error). */
    if (s == TOCL_OK)
        s = tocl_copy_d2h(dev, stream, host, scr.addr, sizeof host, 1);
    sort_scratch_free(&scr);
    TOCL_TRY(s);
    memset(min, 0, sizeof *min);
    memset(max, 0, sizeof *max);
    min->is_float = max->is_float = is_float;
    if (is_float) {
        memcpy(&min->f, &host[0], 8);
        memcpy(&max->f, &host[1], 8);
    } else {
        min->i = (int64_t)host[0];
        max->i = (int64_t)host[1];
    }
    *has_nan = host[2] != 0;
    return TOCL_OK;
}

tocl_status tocl_histc(int dev, int stream, const tocl_tensor *src, const tocl_tensor *out, double lo, double hi) {
    const char *what = "histc";
    TOCL_TRY(tocl_device_check(dev));
    sort_vec v, o;
    TOCL_TRY(sort_vec_get(dev, src, what, 0, 0, &v));
    TOCL_TRY(sort_vec_get(dev, out, what, 1, 0, &o));
    TOCL_TRY(sort_check_dtype(dev, src->dtype, what));
    if (!tocl_dtype_is_float(src->dtype) || out->dtype != src->dtype)
        return tocl_fail(TOCL_E_INVALID, "%s: input and out must share a floating dtype (got %s and %s)", what,
                         tocl_dtype_name(src->dtype), tocl_dtype_name(out->dtype));
    if (!(lo < hi))
        return tocl_fail(TOCL_E_INVALID, "%s: range [%g, %g] is empty", what, lo, hi);
    if (o.n == 0)
        return TOCL_OK;
    sort_scratch scr;
    TOCL_TRY(sort_scratch_get(dev, stream, (size_t)o.n * 4, &scr));
    cl_uint zero = 0;
    tocl_status s = tocl_mem_fill(dev, stream, scr.addr, &zero, 4, (size_t)o.n * 4);
    cl_long co = (cl_long)(scr.off / 4);
    float flo = (float)lo, fhi = (float)hi;
    int f64 = src->dtype == TOCL_F64;
    sort_arg plo = f64 ? (sort_arg)SORT_ARG(lo) : (sort_arg)SORT_ARG(flo);
    sort_arg phi = f64 ? (sort_arg)SORT_ARG(hi) : (sort_arg)SORT_ARG(fhi);
    if (s == TOCL_OK && v.n > 0) {
        sort_arg a[] = {SORT_ARG(v.buf), SORT_ARG(v.off), SORT_ARG(v.inner), SORT_ARG(v.n), plo, phi,
                        SORT_ARG(o.n),   SORT_ARG(scr.buf), SORT_ARG(co)};
        s = sort_launch(dev, stream, src->dtype, SORT_K_HISTC, (size_t)v.n, 0, a, 9);
    }
    if (s == TOCL_OK) {
        sort_arg a[] = {SORT_ARG(scr.buf), SORT_ARG(co), SORT_ARG(o.n), SORT_ARG(o.buf), SORT_ARG(o.off),
                        SORT_ARG(o.inner)};
        s = sort_launch(dev, stream, src->dtype, SORT_K_HSTORE, (size_t)o.n, 0, a, 6);
    }
    sort_scratch_free(&scr);
    return s;
}

tocl_status tocl_bincount_sorted(int dev, int stream, const tocl_tensor *sorted, const tocl_tensor *perm,
                                 const tocl_tensor *weights, const tocl_tensor *out) {
    const char *what = "bincount";
    TOCL_TRY(tocl_device_check(dev));
    sort_vec s, p, w, o;
    TOCL_TRY(sort_vec_get(dev, sorted, what, 0, 1, &s));
    TOCL_TRY(sort_vec_get(dev, perm, what, 1, 1, &p));
    TOCL_TRY(sort_vec_get(dev, out, what, 3, 0, &o));
    memset(&w, 0, sizeof w);
    if (weights)
        TOCL_TRY(sort_vec_get(dev, weights, what, 2, 0, &w));
    if (sorted->dtype != TOCL_I64 || perm->dtype != TOCL_I64 || p.n != s.n)
        return tocl_fail(TOCL_E_INVALID, "%s: sorted values and permutation must be int64 of one length", what);
    if (weights ? (out->dtype != weights->dtype || (out->dtype != TOCL_F32 && out->dtype != TOCL_F64) || w.n != s.n)
                : out->dtype != TOCL_I64)
        return tocl_fail(TOCL_E_INVALID, "%s: out must be int64 without weights, or float32/float64 like the weights "
                         "(one per input element)", what);
    TOCL_TRY(sort_check_dtype(dev, out->dtype, what));
    if (o.n == 0)
        return TOCL_OK;
    if (!s.buf)
        s.buf = p.buf = o.buf;
    if (!w.buf)
        w.buf = o.buf;
    cl_int use_w = weights != NULL;
    sort_arg a[] = {SORT_ARG(s.buf), SORT_ARG(s.off), SORT_ARG(s.n),     SORT_ARG(p.buf),   SORT_ARG(p.off),
                    SORT_ARG(w.buf), SORT_ARG(w.off), SORT_ARG(w.inner), SORT_ARG(use_w),   SORT_ARG(o.n),
                    SORT_ARG(o.buf), SORT_ARG(o.off), SORT_ARG(o.inner)};
    return sort_launch(dev, stream, out->dtype, SORT_K_BINCOUNT, (size_t)o.n, 0, a, 13);
}

/* Elements per work-item in the unique scan: enough to amortise the
 * work-group's sequential step, few enough to keep many groups busy. */
#define UNIQ_CHUNK 16

tocl_status tocl_unique_groups(int dev, int stream, const tocl_tensor *sorted, const tocl_tensor *gid,
                               int64_t *count) {
    const char *what = "unique";
    TOCL_TRY(tocl_device_check(dev));
    sort_vec s, g;
    TOCL_TRY(sort_vec_get(dev, sorted, what, 0, 1, &s));
    TOCL_TRY(sort_vec_get(dev, gid, what, 1, 1, &g));
    TOCL_TRY(sort_check_dtype(dev, sorted->dtype, what));
    if (gid->dtype != TOCL_I64 || g.n != s.n)
        return tocl_fail(TOCL_E_INVALID, "%s: group ids must be int64, one per element", what);
    *count = 0;
    if (s.n == 0)
        return TOCL_OK;
    tocl_dtype dt = sorted->dtype;
    size_t lsz;
    TOCL_TRY(sort_local_size(dev, dt, SORT_K_UAPPLY, &lsz));
    cl_long chunk = UNIQ_CHUNK, per = (cl_long)lsz * chunk;
    cl_long nblocks = (s.n + per - 1) / per;
    sort_scratch scr;
    TOCL_TRY(sort_scratch_get(dev, stream, (size_t)(nblocks + 1) * 8, &scr));
    cl_long bo = (cl_long)(scr.off / 8);
    sort_arg ca[] = {SORT_ARG(s.buf), SORT_ARG(s.off), SORT_ARG(s.n), SORT_ARG(chunk), SORT_ARG(scr.buf),
                     SORT_ARG(bo),    SORT_LOCAL(lsz * 8)};
    tocl_status st = sort_launch(dev, stream, dt, SORT_K_UCOUNT, (size_t)nblocks * lsz, lsz, ca, 7);
    if (st == TOCL_OK) {
        sort_arg sa[] = {SORT_ARG(scr.buf), SORT_ARG(bo), SORT_ARG(nblocks)};
        st = sort_launch(dev, stream, dt, SORT_K_USCAN, 1, 1, sa, 3);
    }
    if (st == TOCL_OK) {
        sort_arg aa[] = {SORT_ARG(s.buf), SORT_ARG(s.off), SORT_ARG(s.n),   SORT_ARG(chunk),   SORT_ARG(scr.buf),
                         SORT_ARG(bo),    SORT_ARG(g.buf), SORT_ARG(g.off), SORT_LOCAL(lsz * 8)};
        st = sort_launch(dev, stream, dt, SORT_K_UAPPLY, (size_t)nblocks * lsz, lsz, aa, 9);
    }
    /* Host wait: the number of groups sizes the outputs. */
    if (st == TOCL_OK)
        st = tocl_copy_d2h(dev, stream, count, scr.addr + (tocl_addr)nblocks * 8, 8, 1);
    sort_scratch_free(&scr);
    return st;
}

tocl_status tocl_unique_fill(int dev, int stream, const tocl_tensor *sorted, const tocl_tensor *perm,
                             const tocl_tensor *gid, int64_t count, const tocl_tensor *values,
                             const tocl_tensor *inverse, const tocl_tensor *counts) {
    const char *what = "unique";
    TOCL_TRY(tocl_device_check(dev));
    sort_vec s, p, g, v, inv, c;
    TOCL_TRY(sort_vec_get(dev, sorted, what, 0, 1, &s));
    TOCL_TRY(sort_vec_get(dev, gid, what, 2, 1, &g));
    TOCL_TRY(sort_vec_get(dev, values, what, 3, 1, &v));
    memset(&p, 0, sizeof p);
    memset(&inv, 0, sizeof inv);
    memset(&c, 0, sizeof c);
    if (perm)
        TOCL_TRY(sort_vec_get(dev, perm, what, 1, 1, &p));
    if (counts)
        TOCL_TRY(sort_vec_get(dev, counts, what, 5, 1, &c));
    if (inverse) {
        TOCL_TRY(tocl_ops_check_tensor(inverse, what));
        if (!tocl_ops_is_contiguous(inverse) || inverse->dtype != TOCL_I64 || tocl_ops_numel(inverse) != s.n)
            return tocl_fail(TOCL_E_INVALID, "%s: inverse must be contiguous int64 with one entry per element", what);
        if (s.n > 0) {
            int mdev;
            TOCL_TRY(tocl_ops_resolve(dev, inverse, what, 4, &inv.buf, &inv.off, &mdev));
        }
    }
    if (v.n != count || (counts && c.n != count) || (perm && p.n != s.n) || g.n != s.n ||
        values->dtype != sorted->dtype)
        return tocl_fail(TOCL_E_INVALID, "%s: outputs must hold %lld groups of %s", what, (long long)count,
                         tocl_dtype_name(sorted->dtype));
    if (s.n == 0)
        return TOCL_OK;
    sort_scratch scr;
    TOCL_TRY(sort_scratch_get(dev, stream, (size_t)(count + 1) * 8, &scr));
    cl_long so = (cl_long)(scr.off / 8), nn = s.n, cnt = count;
    cl_int use_perm = perm != NULL, use_inv = inverse != NULL;
    if (!p.buf)
        p.buf = g.buf;
    if (!inv.buf)
        inv.buf = g.buf;
    sort_arg fa[] = {SORT_ARG(s.buf), SORT_ARG(s.off),   SORT_ARG(nn),     SORT_ARG(p.buf),   SORT_ARG(p.off),
                     SORT_ARG(use_perm), SORT_ARG(g.buf), SORT_ARG(g.off), SORT_ARG(v.buf),   SORT_ARG(v.off),
                     SORT_ARG(scr.buf), SORT_ARG(so),    SORT_ARG(inv.buf), SORT_ARG(inv.off), SORT_ARG(use_inv)};
    tocl_status st = sort_launch(dev, stream, sorted->dtype, SORT_K_UFILL, (size_t)s.n, 0, fa, 15);
    if (st == TOCL_OK && counts) {
        sort_arg ka[] = {SORT_ARG(scr.buf), SORT_ARG(so), SORT_ARG(cnt), SORT_ARG(c.buf), SORT_ARG(c.off)};
        st = sort_launch(dev, stream, sorted->dtype, SORT_K_UCOUNTS, (size_t)count, 0, ka, 5);
    }
    sort_scratch_free(&scr);
    return st;
}
