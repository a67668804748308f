/* sort.cl - segmented stable sort and the search family (top-k, k-th value,
 * median, mode, searchsorted, isin, unique, histc, bincount) over the rows
 * of a batch.
 *
 * Built once per element dtype (-DTOCL_SORT_<DT>); the direction, sizes and
 * strides are arguments (one program per dtype keeps first-use compiles
 * few on drivers that compile lazily, like PoCL).
 *
 * Sorting works on keys: every value maps to an unsigned integer whose
 * order is the value order (floats: sign-flip trick, -0.0 as +0.0, every
 * NaN as the largest key; descending inverts the key). A (key, position)
 * pair is unique within a row, so ordering pairs lexicographically makes
 * every stage stable and the result deterministic:
 *   tocl_sort_local  bitonic sort of power-of-two segments in local memory
 *   tocl_sort_merge  merges pairs of sorted runs: each element finds its
 *                    place in the partner run by binary search
 *   tocl_sort_take   writes values (copied bit-exactly from the source) and
 *                    indices of chosen sorted positions */
#include "round_storage.h"
#include "sort_params.h"

#if defined(TOCL_SORT_F64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#if defined(TOCL_SORT_BOOL) || defined(TOCL_SORT_U8)
typedef uchar val_t;
typedef int ct_t;
#elif defined(TOCL_SORT_I8)
typedef char val_t;
typedef int ct_t;
#elif defined(TOCL_SORT_I16)
typedef short val_t;
typedef int ct_t;
#elif defined(TOCL_SORT_I32)
typedef int val_t;
typedef int ct_t;
#elif defined(TOCL_SORT_I64)
typedef long val_t;
typedef long ct_t;
#elif defined(TOCL_SORT_F16) || defined(TOCL_SORT_BF16)
typedef ushort val_t;
typedef float ct_t;
#define SORT_FLOAT 1
#elif defined(TOCL_SORT_F32)
typedef float val_t;
typedef float ct_t;
#define SORT_FLOAT 1
#elif defined(TOCL_SORT_F64)
typedef double val_t;
typedef double ct_t;
#define SORT_FLOAT 1
#else
#error "sort.cl: define TOCL_SORT_<dtype>"
#endif

#if defined(TOCL_SORT_I64) || defined(TOCL_SORT_F64)
typedef ulong sk_t;
#define SK_MAX ((sk_t)0xffffffffffffffffUL)
#define SK_SIGN ((sk_t)0x8000000000000000UL)
#else
typedef uint sk_t;
#define SK_MAX ((sk_t)0xffffffffu)
#define SK_SIGN ((sk_t)0x80000000u)
#endif

#ifndef SORT_FLOAT
#define SORT_FLOAT 0
#endif
/* Key of a NaN in ascending order (floats only). */
#define SK_NAN SK_MAX

inline ct_t sort_ld(__global const val_t *p, long i)
{
#if defined(TOCL_SORT_F16)
    return vload_half(i, (__global const half *)p);
#elif defined(TOCL_SORT_BF16)
    return as_float((uint)p[i] << 16);
#else
    return (ct_t)p[i];
#endif
}

/* Round a compute value to storage precision (float16/bfloat16 only). */
inline ct_t sort_round(ct_t v)
{
#if defined(TOCL_SORT_F16)
    return tocl_round_f16(v);
#elif defined(TOCL_SORT_BF16)
    return tocl_round_bf16(v);
#else
    return v;
#endif
}

inline void sort_st(__global val_t *p, long i, ct_t v)
{
#if defined(TOCL_SORT_F16)
    vstore_half_rte(v, i, (__global half *)p);
#elif defined(TOCL_SORT_BF16)
    p[i] = (ushort)(as_uint(sort_round(v)) >> 16);
#elif defined(TOCL_SORT_BOOL)
    p[i] = v != 0;
#else
    p[i] = (val_t)v;
#endif
}

inline sk_t sort_key(ct_t x, int desc)
{
    sk_t k;
#if SORT_FLOAT
    if (isnan(x)) {
        k = SK_MAX;
    } else {
        x = x == (ct_t)0 ? (ct_t)0 : x; /* -0.0 sorts with +0.0, as comparisons say */
#if defined(TOCL_SORT_F64)
        sk_t u = as_ulong(x);
#else
        sk_t u = as_uint(x);
#endif
        k = (u & SK_SIGN) ? ~u : (u | SK_SIGN);
    }
#else
    k = ((sk_t)x) ^ SK_SIGN; /* two's complement -> offset binary */
#endif
    return desc ? ~k : k;
}

/* Element offset of row r's first element. */
inline long sort_row(const tocl_sort_shape *s, const tocl_sort_layout *l, long r)
{
    long off = l->off;
    for (int d = s->nbatch - 1; d >= 0; d--) {
        long sz = s->sizes[d];
        off += (r % sz) * l->strides[d];
        r /= sz;
    }
    return off;
}

inline int sort_less(sk_t ka, long ia, sk_t kb, long ib)
{
    return ka < kb || (ka == kb && ia < ib);
}

/* Each work-group sorts 2 * local_size buffer slots holding segments of
 * `seg` elements (a power of two); segment s is chunk s % cpr of row
 * s / cpr. Slots past the row end hold (SK_MAX, LONG_MAX): they sort last
 * and are not written back. keys/idx are dense [nrows, n]. */
__kernel void tocl_sort_local(__global const val_t *src, tocl_sort_shape sh, tocl_sort_layout sl, long n, int desc,
                              long seg,
                              __global sk_t *keys, long koff, __global long *idx, long ioff, __local sk_t *lk,
                              __local long *li)
{
    keys += koff;
    idx += ioff;
    int lid = get_local_id(0);
    long lsz = get_local_size(0);
    long spg = 2 * lsz / seg;
    long cpr = (n + seg - 1) / seg;
    long nseg = sh.nrows * cpr;
    long g = get_group_id(0);
    for (int h = 0; h < 2; h++) {
        long p = lid + h * lsz;
        long s = g * spg + p / seg;
        long j = (s % cpr) * seg + p % seg;
        sk_t k = SK_MAX;
        long id = LONG_MAX;
        if (s < nseg && j < n) {
            k = sort_key(sort_ld(src, sort_row(&sh, &sl, s / cpr) + j * sl.inner), desc);
            id = j;
        }
        lk[p] = k;
        li[p] = id;
    }
    for (long size = 2; size <= seg; size <<= 1) {
        for (long stride = size >> 1; stride > 0; stride >>= 1) {
            barrier(CLK_LOCAL_MEM_FENCE);
            long pos = 2 * lid - (lid & (stride - 1));
            int asc = size == seg || (pos & size) == 0;
            sk_t ka = lk[pos], kb = lk[pos + stride];
            long ia = li[pos], ib = li[pos + stride];
            if (sort_less(kb, ib, ka, ia) == asc) {
                lk[pos] = kb;
                lk[pos + stride] = ka;
                li[pos] = ib;
                li[pos + stride] = ia;
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = 0; h < 2; h++) {
        long p = lid + h * lsz;
        long s = g * spg + p / seg;
        long j = (s % cpr) * seg + p % seg;
        if (s < nseg && j < n) {
            long o = (s / cpr) * n + j;
            keys[o] = lk[p];
            idx[o] = li[p];
        }
    }
}

/* Merge sorted runs of length w pairwise (rows of n, total = nrows * n). */
__kernel void tocl_sort_merge(__global const sk_t *kin, long kin_off, __global const long *iin, long iin_off,
                              __global sk_t *kout, long kout_off, __global long *iout, long iout_off, long n,
                              long total, long w)
{
    kin += kin_off;
    iin += iin_off;
    kout += kout_off;
    iout += iout_off;
    long i = get_global_id(0);
    if (i >= total)
        return;
    long r = i / n, p = i - r * n, base = r * n;
    long run = p / w, rs = run * w, ps = (run ^ 1) * w;
    sk_t k = kin[i];
    long id = iin[i];
    long outp = p;
    if (ps < n) {
        long lo = ps, hi = min(ps + w, n);
        while (lo < hi) {
            long m = (lo + hi) >> 1;
            if (sort_less(kin[base + m], iin[base + m], k, id))
                lo = m + 1;
            else
                hi = m;
        }
        outp = min(rs, ps) + (p - rs) + (lo - ps);
    }
    kout[base + outp] = k;
    iout[base + outp] = id;
}

/* First position of a NaN key in a sorted ascending row (n if none). */
inline long sort_first_nan(__global const sk_t *keys, long base, long n)
{
#if SORT_FLOAT
    long lo = 0, hi = n;
    while (lo < hi) {
        long m = (lo + hi) >> 1;
        if (keys[base + m] != SK_NAN)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
#else
    return n;
#endif
}

/* Last position of the longest run of equal keys (NaNs never equal), the
 * first such run on ties: the smallest value, at its largest index. */
inline long sort_mode_pos(__global const sk_t *keys, long base, long n)
{
    long best_f = 0, best_p = 0, rs = 0;
    for (long q = 0; q < n; q++) {
        sk_t kq = keys[base + q];
        int nan = SORT_FLOAT && kq == SK_NAN;
        if (q == n - 1 || nan || keys[base + q + 1] != kq) {
            long f = q - rs + 1;
            if (f > best_f) {
                best_f = f;
                best_p = q;
            }
            rs = q + 1;
        }
    }
    return best_p;
}

/* For row r and output column j < kout: the sorted position chosen by
 * `mode` (TOCL_TAKE_*), its value copied from the source and its index. */
__kernel void tocl_sort_take(__global const val_t *src, tocl_sort_shape sh, tocl_sort_layout sl, long n,
                             __global const sk_t *keys, long koff, __global const long *idx, long ioff, long kout,
                             int mode, long k, __global val_t *vals, tocl_sort_layout vl, __global long *oidx,
                             tocl_sort_layout il)
{
    keys += koff;
    idx += ioff;
    long i = get_global_id(0);
    if (i >= sh.nrows * kout)
        return;
    long r = i / kout, j = i - r * kout, base = r * n, p = j;
    if (mode == TOCL_TAKE_KTH) {
        p = k;
    } else if (mode == TOCL_TAKE_MEDIAN) {
        long nn = sort_first_nan(keys, base, n);
        p = nn < n ? nn : (n - 1) / 2;
    } else if (mode == TOCL_TAKE_NANMEDIAN) {
        long nn = sort_first_nan(keys, base, n);
        p = nn == 0 ? 0 : (nn - 1) / 2;
    } else if (mode == TOCL_TAKE_MODE) {
        p = sort_mode_pos(keys, base, n);
    }
    long id = idx[base + p];
    vals[sort_row(&sh, &vl, r) + j * vl.inner] = src[sort_row(&sh, &sl, r) + id * sl.inner];
    oidx[sort_row(&sh, &il, r) + j * il.inner] = id;
}

/* searchsorted: for value j of row r, the first boundary position p with
 * bd[p] >= v (right: bd[p] > v), through `sorter` when use_sorter; the same
 * comparisons as PyTorch's CPU kernel, so NaNs land where they do there. */
__kernel void tocl_search(__global const val_t *bd, tocl_sort_layout bl, long nb, __global const val_t *vals,
                          tocl_sort_layout vl, long nv, tocl_sort_shape sh, __global const long *sorter,
                          tocl_sort_layout sol, int use_sorter, __global long *out, tocl_sort_layout ol, int out32,
                          int right)
{
    long i = get_global_id(0);
    if (i >= sh.nrows * nv)
        return;
    long r = i / nv, j = i - r * nv;
    ct_t v = sort_ld(vals, sort_row(&sh, &vl, r) + j * vl.inner);
    long bbase = sort_row(&sh, &bl, r), sbase = sort_row(&sh, &sol, r);
    long lo = 0, hi = nb;
    while (lo < hi) {
        long m = lo + ((hi - lo) >> 1);
        long bi = use_sorter ? sorter[sbase + m * sol.inner] : m;
        ct_t mv = sort_ld(bd, bbase + bi * bl.inner);
        int go = right ? !(mv > v) : !(mv >= v);
        if (go)
            lo = m + 1;
        else
            hi = m;
    }
    long o = sort_row(&sh, &ol, r) + j * ol.inner;
    if (out32)
        ((__global int *)out)[o] = (int)lo;
    else
        out[o] = lo;
}

/* isin: element j of row r is in the sorted test values ts[0 .. m). */
__kernel void tocl_isin(__global const val_t *el, tocl_sort_layout el_l, long n, tocl_sort_shape sh,
                        __global const val_t *ts, long ts_off, long m, __global uchar *out, tocl_sort_layout ol,
                        int invert)
{
    long i = get_global_id(0);
    if (i >= sh.nrows * n)
        return;
    long r = i / n, j = i - r * n;
    ct_t v = sort_ld(el, sort_row(&sh, &el_l, r) + j * el_l.inner);
    long lo = 0, hi = m;
    while (lo < hi) {
        long mid = (lo + hi) >> 1;
        if (sort_ld(ts, ts_off + mid) < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    int found = lo < m && sort_ld(ts, ts_off + lo) == v;
    out[sort_row(&sh, &ol, r) + j * ol.inner] = (uchar)(found != invert);
}

/* ---- unique: group ids of a sorted (or consecutive) 1-D sequence ---- */

/* Element i starts a new group (NaN != NaN, so each NaN is its own). */
inline int uniq_flag(__global const val_t *s, long off, long i)
{
    return i == 0 || !(sort_ld(s, off + i) == sort_ld(s, off + i - 1));
}

/* Work-group g covers [g * lsz * chunk, ...): bsum[g] = its group starts. */
__kernel void tocl_uniq_count(__global const val_t *s, long off, long n, long chunk, __global long *bsum,
                              long boff, __local long *lc)
{
    bsum += boff;
    int lid = get_local_id(0);
    long lsz = get_local_size(0), g = get_group_id(0);
    long a = (g * lsz + lid) * chunk, c = 0;
    for (long i = a; i < a + chunk && i < n; i++)
        c += uniq_flag(s, off, i);
    lc[lid] = c;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        long t = 0;
        for (long q = 0; q < lsz; q++)
            t += lc[q];
        bsum[g] = t;
    }
}

/* One work-item: exclusive scan of the block sums; bsum[nblocks] = total. */
__kernel void tocl_uniq_scan(__global long *bsum, long boff, long nblocks)
{
    bsum += boff;
    if (get_global_id(0) != 0)
        return;
    long t = 0;
    for (long b = 0; b < nblocks; b++) {
        long v = bsum[b];
        bsum[b] = t;
        t += v;
    }
    bsum[nblocks] = t;
}

/* gid[i] = group index of element i (inclusive count of starts - 1). */
__kernel void tocl_uniq_apply(__global const val_t *s, long off, long n, long chunk, __global const long *bsum,
                              long boff, __global long *gid, long gid_off, __local long *lc)
{
    bsum += boff;
    gid += gid_off;
    int lid = get_local_id(0);
    long lsz = get_local_size(0), g = get_group_id(0);
    long a = (g * lsz + lid) * chunk, c = 0;
    for (long i = a; i < a + chunk && i < n; i++)
        c += uniq_flag(s, off, i);
    lc[lid] = c;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        long t = bsum[g];
        for (long q = 0; q < lsz; q++) {
            long v = lc[q];
            lc[q] = t;
            t += v;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    long t = lc[lid];
    for (long i = a; i < a + chunk && i < n; i++) {
        t += uniq_flag(s, off, i);
        gid[i] = t - 1;
    }
}

/* Unique values, group starts (starts[ngroups] = n) and the inverse. */
__kernel void tocl_uniq_fill(__global const val_t *s, long off, long n, __global const long *perm, long perm_off,
                             int use_perm, __global const long *gid, long gid_off, __global val_t *vals,
                             long vals_off, __global long *starts, long starts_off, __global long *inv,
                             long inv_off, int use_inv)
{
    perm += perm_off;
    gid += gid_off;
    starts += starts_off;
    long i = get_global_id(0);
    if (i >= n)
        return;
    long g = gid[i];
    if (uniq_flag(s, off, i)) {
        vals[vals_off + g] = s[off + i];
        starts[g] = i;
    }
    if (i == n - 1)
        starts[g + 1] = n;
    if (use_inv)
        inv[inv_off + (use_perm ? perm[i] : i)] = g;
}

__kernel void tocl_uniq_counts(__global const long *starts, long starts_off, long ngroups, __global long *counts,
                               long counts_off)
{
    starts += starts_off;
    long g = get_global_id(0);
    if (g < ngroups)
        counts[counts_off + g] = starts[g + 1] - starts[g];
}

/* ---- reductions and histograms ---- */

/* One work-group: min and max of n elements at off + i * inner into out[0..1]
 * (as double bits for floats, as long for integers); out[2] = 1 if a NaN was
 * seen. */
__kernel void tocl_minmax(__global const val_t *src, long off, long inner, long n, __global ulong *out,
                          long out_off, __local ct_t *lmin, __local ct_t *lmax, __local int *lnan)
{
    out += out_off;
    int lid = get_local_id(0);
    long lsz = get_local_size(0);
    ct_t mn = 0, mx = 0;
    int any = 0, nan = 0;
    for (long i = lid; i < n; i += lsz) {
        ct_t v = sort_ld(src, off + i * inner);
#if SORT_FLOAT
        if (isnan(v)) {
            nan = 1;
            continue;
        }
#endif
        if (!any || v < mn)
            mn = v;
        if (!any || v > mx)
            mx = v;
        any = 1;
    }
    lmin[lid] = mn;
    lmax[lid] = mx;
    lnan[lid] = nan | (any << 1);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        int seen = 0;
        nan = 0;
        for (long q = 0; q < lsz; q++) {
            nan |= lnan[q] & 1;
            if (!(lnan[q] & 2))
                continue;
            if (!seen || lmin[q] < mn)
                mn = lmin[q];
            if (!seen || lmax[q] > mx)
                mx = lmax[q];
            seen = 1;
        }
#if SORT_FLOAT
        out[0] = as_ulong((double)mn);
        out[1] = as_ulong((double)mx);
#else
        out[0] = (ulong)(long)mn;
        out[1] = (ulong)(long)mx;
#endif
        out[2] = (ulong)nan;
    }
}

/* histc: counts of elements in [lo, hi] over `bins` equal bins, with the
 * arithmetic of PyTorch's CPU kernel (each step rounded to the storage type
 * for float16/bfloat16, where c10's operators do the same). */
__kernel void tocl_histc(__global const val_t *src, long off, long inner, long n, ct_t lo, ct_t hi, long bins,
                         __global uint *cnt, long cnt_off)
{
    cnt += cnt_off;
    long i = get_global_id(0);
    if (i >= n)
        return;
    ct_t x = sort_ld(src, off + i * inner);
    if (!(x >= lo && x <= hi))
        return; /* outside the range, or NaN */
    long pos = (long)(sort_round(sort_round(sort_round(x - lo) * sort_round((ct_t)bins)) / sort_round(hi - lo)));
    if (pos == bins)
        pos -= 1;
    atomic_inc(&cnt[pos]);
}

__kernel void tocl_histc_store(__global const uint *cnt, long cnt_off, long bins, __global val_t *out, long off,
                               long inner)
{
    cnt += cnt_off;
    long b = get_global_id(0);
    if (b < bins)
        sort_st(out, off + b * inner, (ct_t)cnt[b]);
}

/* bincount over sorted non-negative int64 values: bin b sums the weights of
 * its elements in input order (perm is increasing within a bin, the sort
 * being stable), so float sums match a sequential loop bit for bit. Built
 * for the output dtype; use_w = 0 counts into int64 (TOCL_SORT_I64). */
__kernel void tocl_bincount(__global const long *sorted, long s_off, long n, __global const long *perm, long p_off,
                            __global const val_t *w, long w_off, long w_inner, int use_w, long nbins,
                            __global val_t *out, long out_off, long out_inner)
{
    long b = get_global_id(0);
    if (b >= nbins)
        return;
    sorted += s_off;
    perm += p_off;
    long lo = 0, hi = n;
    while (lo < hi) {
        long m = (lo + hi) >> 1;
        if (sorted[m] < b)
            lo = m + 1;
        else
            hi = m;
    }
    long e = lo;
    hi = n;
    while (e < hi) {
        long m = (e + hi) >> 1;
        if (sorted[m] <= b)
            e = m + 1;
        else
            hi = m;
    }
    if (use_w) {
        ct_t acc = 0;
        for (long j = lo; j < e; j++)
            acc += sort_ld(w, w_off + perm[j] * w_inner);
        sort_st(out, out_off + b * out_inner, acc);
    } else {
        sort_st(out, out_off + b * out_inner, (ct_t)(e - lo));
    }
}
