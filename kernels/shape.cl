/* shape.cl - coordinate remaps (flip, roll, constant/reflect/replicate/
 * circular pads, tril/triu), cat, and the backward of reflection/replication pads.
 *
 * Remaps are pure moves built per element size (-DDT_B1..DT_B8); the pad
 * backward sums in the compute type of a floating dtype (-DDT_F32 ...). */
#include "index_params.h"

#if defined(DT_B1) || defined(DT_B2) || defined(DT_B4) || defined(DT_B8)
#define MOVE_ONLY 1

/* Source coordinate of dst coordinate c in a dim of source size n, or -1
 * when c falls in a constant pad. */
inline long tocl_remap(int mode, long c, long n, long shift)
{
    long s = c - shift;
    switch (mode) {
    case TOCL_RM_FLIP: return n - 1 - c;
    case TOCL_RM_CONST: return s >= 0 && s < n ? s : -1;
    case TOCL_RM_REFLECT:
        s = s < 0 ? -s : s;
        return s >= n ? 2 * (n - 1) - s : s;
    case TOCL_RM_REPLICATE: return s < 0 ? 0 : (s >= n ? n - 1 : s);
    case TOCL_RM_ROLL:
    case TOCL_RM_CIRCULAR:
        s %= n;
        return s < 0 ? s + n : s;
    default: return c;
    }
}

__kernel void tocl_shape_remap(__global T *dst, __global const T *src, tocl_remap_params p, T pad_value)
{
    long i = get_global_id(0);
    if (i >= p.n)
        return;
    long doff = p.dst_off, soff = p.src_off, r = i, row = 0, col = 0;
    int pad = 0;
    for (int d = p.rank - 1; d >= 0; d--) {
        long c = r % p.sizes[d];
        r /= p.sizes[d];
        doff += c * p.dst_strides[d];
        if (d == p.rank - 1)
            col = c;
        else if (d == p.rank - 2)
            row = c;
        long s = tocl_remap(p.mode[d], c, p.src_sizes[d], p.shift[d]);
        pad |= s < 0;
        soff += s * p.src_strides[d];
    }
    if ((p.tri == 1 && col - row > p.diag) || (p.tri == 2 && col - row < p.diag))
        pad = 1;
    dst[doff] = pad ? pad_value : src[soff];
}

#ifdef CAT_RANK
#ifndef IDX_T
#define IDX_T long
#endif
/* Element (x, y) of source K (pointer SRC). K is a constant in each copy:
 * with the source picked per element by a run-time index PoCL's vectoriser
 * turned every source field into a gather (5x slower than a strided copy). */
inline void tocl_cat_one(__global T *dst0, __global T *dst1, __global const T *src, const tocl_cat_params *p, int K,
                         long x, long y)
{
    long start = p->start[K], len = p->len[K];
    __global T *dst = K < p->split ? dst0 : dst1;
    long doff = K < p->split ? p->dst_off : p->dst1_off, soff = p->src_off[K], r = y;
    int inside = 1;
#pragma unroll
    for (int d = CAT_RANK - 1; d >= 0; d--) {
        long size = d == CAT_AXIS ? len : p->sizes[d];
        long c;
        if (d == CAT_RANK - 1) {
            c = x;
            inside = c < size;
        } else {
            /* 32-bit division when the rows fit (-DIDX_T=uint): with 64-bit
             * the KV cat [1,4,40,64] + [1,4,1,64] took 32 us against 7. */
            IDX_T q = (IDX_T)r / (IDX_T)size;
            c = r - (long)q * size;
            r = q;
        }
        doff += (d == CAT_AXIS ? c + start : c) * p->dst_strides[d];
        soff += c * p->src_strides[K][d];
    }
    /* One guarded store, no early return: PoCL vectorises a work-group's
     * loop only without divergent exits. */
    if (inside && r == 0 && len > 0)
        dst[doff] = src[soff];
}

/* Work-item (x, y): element x of a row of the source whose band of rows
 * holds y, rows being the sources' last dim. Each source's band starts at
 * a multiple of the work-group's height (rowbase), so a work-group serves
 * one source and picks it from its group id: uniform, as PoCL's vectoriser
 * needs. Built per rank and axis (-DCAT_RANK, -DCAT_AXIS): the loops unroll. */
__kernel void tocl_shape_cat(__global T *dst, __global const T *s0, __global const T *s1, __global const T *s2,
                             __global const T *s3, __global T *dst1, tocl_cat_params p)
{
    long x = get_global_id(0), gy = (long)get_group_id(1) * (long)get_local_size(1);
    int k = (gy >= p.rowbase[1]) + (gy >= p.rowbase[2]) + (gy >= p.rowbase[3]);
    long y = get_global_id(1) - (k == 0 ? 0 : k == 1 ? p.rowbase[1] : k == 2 ? p.rowbase[2] : p.rowbase[3]);
    switch (k) {
    case 0: tocl_cat_one(dst, dst1, s0, &p, 0, x, y); break;
    case 1: tocl_cat_one(dst, dst1, s1, &p, 1, x, y); break;
    case 2: tocl_cat_one(dst, dst1, s2, &p, 2, x, y); break;
    default: tocl_cat_one(dst, dst1, s3, &p, 3, x, y); break;
    }
}
#endif

#ifdef CAT_RUNS
/* cat where every source is, per outer index, one contiguous run in itself
 * and in its destination (a KV cache's [1, heads, L, dh] along L: heads x
 * sources runs; index_params.h, tocl_cat_runs_params). A work-item moves 16
 * elements with one vector load and store; one NDRange row per work-group,
 * so the source is uniform in it. The per-element kernel above took 14 us
 * for the cat pair of [1, 4, 44, 64] + [1, 4, 1, 64]. */
__kernel void tocl_shape_cat_runs(__global T *dst, __global const T *s0, __global const T *s1,
                                  __global const T *s2, __global const T *s3, __global T *dst1,
                                  tocl_cat_runs_params p)
{
    long x = get_global_id(0) * 16, y = get_group_id(1);
    int k = (y >= p.rowbase[1]) + (y >= p.rowbase[2]) + (y >= p.rowbase[3]);
    long o = y - p.rowbase[k], len = p.len[k];
    if (o >= p.outer || x >= len)
        return;
    __global const T *s = (k == 0 ? s0 : k == 1 ? s1 : k == 2 ? s2 : s3) + p.src_off[k] + o * p.src_stride[k];
    __global T *d = (k < p.split ? dst + p.dst_off : dst1 + p.dst1_off) + p.start[k] + o * p.dst_stride;
    if (x + 16 <= len)
        vstore16(vload16(0, s + x), 0, d + x);
    else
        for (long i = x; i < len; i++)
            d[i] = s[i];
}
#endif
#else

/* grad_in[s] = sum of grad_out[c] over the c that read s. Per padded dim
 * at most three ranges of c (left pad, centre, right pad), ascending, so the
 * sum runs in row-major order of grad_out. */
__kernel void tocl_shape_pad_bwd(__global T *gin, __global const T *gout, tocl_remap_params p)
{
    long i = get_global_id(0);
    if (i >= p.n)
        return;
    long doff = p.dst_off, soff = p.src_off, r = i;
    long lo[3][3], hi[3][3], st[3];
    int nr[3], np = 0;
    for (int k = 0; k < 3; k++) {
        nr[k] = 1;
        lo[k][0] = 0;
        hi[k][0] = 1;
        st[k] = 0;
    }
    for (int d = p.rank - 1; d >= 0; d--) {
        long s = r % p.sizes[d];
        r /= p.sizes[d];
        doff += s * p.dst_strides[d];
        if (p.mode[d] == TOCL_RM_ID) {
            soff += s * p.src_strides[d];
            continue;
        }
        int k = 2 - np++; /* padded dims fill slots from the inside out */
        long n = p.sizes[d], m = p.src_sizes[d], b = p.shift[d], c;
        int q = 0;
        /* Pads may be negative (cropping): every candidate c is clipped
         * to [0, m). */
        if (p.mode[d] == TOCL_RM_REFLECT) {
            /* c - b = -s (left reflection), s, 2 (n - 1) - s (right) */
            c = b - s;
            if (s >= 1 && c >= 0 && c < m) {
                lo[k][q] = c;
                hi[k][q++] = c + 1;
            }
            c = s + b;
            if (c >= 0 && c < m) {
                lo[k][q] = c;
                hi[k][q++] = c + 1;
            }
            c = b + 2 * (n - 1) - s;
            if (s <= n - 2 && c >= 0 && c < m) {
                lo[k][q] = c;
                hi[k][q++] = c + 1;
            }
        } else { /* replicate: one range of c, open ended at the edges */
            long l = s == 0 ? 0 : s + b, h = s == n - 1 ? m : s + b + 1;
            l = l < 0 ? 0 : l;
            h = h > m ? m : h;
            if (l < h) {
                lo[k][q] = l;
                hi[k][q++] = h;
            }
        }
        nr[k] = q;
        st[k] = p.src_strides[d];
    }
    ACC acc = 0;
    for (int q0 = 0; q0 < nr[0]; q0++)
        for (long c0 = lo[0][q0]; c0 < hi[0][q0]; c0++)
            for (int q1 = 0; q1 < nr[1]; q1++)
                for (long c1 = lo[1][q1]; c1 < hi[1][q1]; c1++)
                    for (int q2 = 0; q2 < nr[2]; q2++)
                        for (long c2 = lo[2][q2]; c2 < hi[2][q2]; c2++)
                            acc += LD(gout, soff + c0 * st[0] + c1 * st[1] + c2 * st[2]);
    ST(gin, doff, acc);
}
#endif
