/* index.cl - gather/scatter over index tensors, index bounds reduction,
 * stream compaction (nonzero, masked_select, masked_scatter).
 *
 * Built with -DDT_<dtype> (see index_params.h; DT_B1..DT_B8 for pure moves),
 * -DIDX_T=long|int, -DNIDX=1..4, -DOP=<n>, -DSCATTER, -DSRC_SCALAR. Sizes
 * and strides are always arguments. Out-of-range indices are skipped here as
 * a last guard; the host has already raised an error for them (see
 * runtime/ops/index.c), so a skipped index never goes unreported. */
#include "index_params.h"

#if defined(DT_B1) || defined(DT_B2) || defined(DT_B4) || defined(DT_B8)
typedef T ACC;
#define MOVE_ONLY 1
#endif

#ifndef IDX_T
#define IDX_T long
#endif
#ifndef NIDX
#define NIDX 1
#endif

/* OP: 0 assign, 1 add (times alpha), 2 multiply, 3 max, 4 min. */
#ifndef OP
#define OP 0
#endif

#ifdef MOVE_ONLY
typedef T VAL_T;
#else
typedef ACC VAL_T;
#endif

inline ACC tocl_idx_combine(ACC old, ACC v, ACC alpha)
{
#if OP == 1
#if defined(DT_BOOL)
    return (old != 0) | (v != 0 && alpha != 0);
#else
    return old + v * alpha;
#endif
#elif OP == 2
#if defined(DT_BOOL)
    return (old != 0) & (v != 0);
#else
    return old * v;
#endif
#elif OP == 3 /* NaN in src wins; NaN already in dst stays (as the CPU) */
#if IS_FLOAT
    if (isnan(v))
        return v;
#endif
    return old < v ? v : old;
#elif OP == 4
#if IS_FLOAT
    if (isnan(v))
        return v;
#endif
    return v < old ? v : old;
#else
    return v;
#endif
}

__kernel void tocl_idx_move(__global T *dst, __global const T *src, __global const IDX_T *i0,
                            __global const IDX_T *i1, __global const IDX_T *i2, __global const IDX_T *i3,
                            tocl_idx_params p, VAL_T value, VAL_T alpha)
{
    long g = get_global_id(0);
    if (g >= p.n_par)
        return;
    __global const IDX_T *ib[4] = {i0, i1, i2, i3};
    long doff = p.dst_off, soff = p.src_off, ioff[NIDX];
    for (int k = 0; k < NIDX; k++)
        ioff[k] = p.idx_off[k];
    long r = g;
    for (int d = p.n_par_dims - 1; d >= 0; d--) {
        long c = r % p.sizes[d];
        r /= p.sizes[d];
        doff += c * p.dst_strides[d];
        soff += c * p.src_strides[d];
        for (int k = 0; k < NIDX; k++)
            ioff[k] += c * p.idx_strides[k][d];
    }
    for (long s = 0; s < p.n_ser; s++) {
        long dd = doff, ss = soff, ii[NIDX];
        for (int k = 0; k < NIDX; k++)
            ii[k] = ioff[k];
        long r2 = s;
        for (int d = p.rank - 1; d >= p.n_par_dims; d--) {
            long c = r2 % p.sizes[d];
            r2 /= p.sizes[d];
            dd += c * p.dst_strides[d];
            ss += c * p.src_strides[d];
            for (int k = 0; k < NIDX; k++)
                ii[k] += c * p.idx_strides[k][d];
        }
        long off = 0;
        int ok = 1;
        for (int k = 0; k < NIDX; k++) {
            long v = (long)ib[k][ii[k]];
            if (p.has_skip && v == p.skip)
                ok = 0;
            if (v < 0)
                v += p.bound[k];
            if (v < 0 || v >= p.bound[k])
                ok = 0;
            off += v * p.istride[k];
        }
        if (!ok)
            continue;
#ifdef SCATTER
#ifdef SRC_SCALAR
        VAL_T v = value;
#elif defined(MOVE_ONLY)
        VAL_T v = src[ss];
#else
        VAL_T v = LD(src, ss);
#endif
#if OP == 0
#ifdef MOVE_ONLY
        dst[dd + off] = v;
#else
        ST(dst, dd + off, v);
#endif
#else
        ST(dst, dd + off, tocl_idx_combine(LD(dst, dd + off), v, alpha));
#endif
#elif defined(MOVE_ONLY) /* gather */
        dst[dd] = src[ss + off];
#else
        ST(dst, dd, LD(src, ss + off));
#endif
    }
}

/* Min and max of a strided index tensor: each group reduces its share into
 * out[2 * group], out[2 * group + 1]. Geometry: sizes/idx_strides[0]/idx_off[0]
 * of p, n_par elements. */
__kernel void tocl_idx_minmax(__global const IDX_T *idx, tocl_idx_params p, __global long *out, long out_off,
                              __local long *lmin, __local long *lmax)
{
    long mn = LONG_MAX, mx = LONG_MIN;
    for (long i = get_global_id(0); i < p.n_par; i += get_global_size(0)) {
        long off = p.idx_off[0], r = i;
        for (int d = p.rank - 1; d >= 0; d--) {
            off += (r % p.sizes[d]) * p.idx_strides[0][d];
            r /= p.sizes[d];
        }
        long v = (long)idx[off];
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
    }
    int l = get_local_id(0), n = get_local_size(0);
    lmin[l] = mn;
    lmax[l] = mx;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = n / 2; h > 0; h /= 2) { /* local size is a power of two */
        if (l < h) {
            lmin[l] = lmin[l + h] < lmin[l] ? lmin[l + h] : lmin[l];
            lmax[l] = lmax[l + h] > lmax[l] ? lmax[l + h] : lmax[l];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) {
        out[out_off + 2 * get_group_id(0)] = lmin[0];
        out[out_off + 2 * get_group_id(0) + 1] = lmax[0];
    }
}

/* Stream compaction in two passes over the row-major order of a mask:
 * pass 1 counts the nonzeros of each chunk of `chunk` elements, the host
 * turns counts into offsets, pass 2 writes each chunk's items in order.
 * Mask geometry: sizes, idx_strides[0], idx_off[0], rank; n_par elements. */
inline long tocl_mask_off(const tocl_idx_params *p, long i, int which)
{
    long off = which == 0 ? p->idx_off[0] : which == 1 ? p->src_off : p->dst_off;
    for (int d = p->rank - 1; d >= 0; d--) {
        long c = i % p->sizes[d];
        i /= p->sizes[d];
        off += c * (which == 0 ? p->idx_strides[0][d] : which == 1 ? p->src_strides[d] : p->dst_strides[d]);
    }
    return off;
}

#ifdef MASK_DT /* mask is T/LD of the DT_ build; values move as VT */
__kernel void tocl_mask_count(__global const T *mask, tocl_idx_params p, long chunk, __global long *counts,
                              long counts_off)
{
    long c = get_global_id(0), lo = c * chunk, hi = lo + chunk, n = 0;
    if (lo >= p.n_par)
        return;
    hi = hi < p.n_par ? hi : p.n_par;
    for (long i = lo; i < hi; i++)
        n += LD(mask, tocl_mask_off(&p, i, 0)) != 0;
    counts[counts_off + c] = n;
}

/* MODE 0 nonzero: out (VT long) is (total, rank) coordinates from p.dst_off.
 * MODE 1 masked_select: out[j] = src[i-th element].
 * MODE 2 masked_scatter: dst[i-th element] = src[j] (src contiguous). */
__kernel void tocl_mask_write(__global const T *mask, tocl_idx_params p, long chunk, __global const long *offsets,
                              long offsets_off, __global VT *out, __global const VT *src)
{
    long c = get_global_id(0), lo = c * chunk, hi = lo + chunk;
    if (lo >= p.n_par)
        return;
    hi = hi < p.n_par ? hi : p.n_par;
    long j = offsets[offsets_off + c];
    for (long i = lo; i < hi; i++) {
        if (LD(mask, tocl_mask_off(&p, i, 0)) == 0)
            continue;
#if MODE == 0
        long r = i;
        for (int d = p.rank - 1; d >= 0; d--) {
            out[p.dst_off + j * p.rank + d] = r % p.sizes[d];
            r /= p.sizes[d];
        }
#elif MODE == 1
        out[p.dst_off + j] = src[tocl_mask_off(&p, i, 1)];
#else
        out[tocl_mask_off(&p, i, 2)] = src[p.src_off + j];
#endif
        j++;
    }
}
#endif

/* scatter_reduce mean: dst /= count where count > 0 (floor division for
 * integers, as the CPU). Both laid out as p.sizes with dst_strides and
 * src_strides (count is int64). */
#ifdef DIVCOUNT
__kernel void tocl_idx_divcount(__global T *dst, __global const long *count, tocl_idx_params p)
{
    long i = get_global_id(0);
    if (i >= p.n_par)
        return;
    long doff = p.dst_off, coff = p.src_off, r = i;
    for (int d = p.rank - 1; d >= 0; d--) {
        long c = r % p.sizes[d];
        r /= p.sizes[d];
        doff += c * p.dst_strides[d];
        coff += c * p.src_strides[d];
    }
    long n = count[coff];
    if (n <= 0)
        return;
#if IS_FLOAT
    ST(dst, doff, LD(dst, doff) / (ACC)n);
#else
    long a = (long)LD(dst, doff), q = a / n;
    if ((a % n != 0) && ((a < 0) != (n < 0)))
        q--;
    ST(dst, doff, (ACC)q);
#endif
}
#endif
