/* shape.cl - coordinate remaps (flip, roll, constant/reflect/replicate/
 * circular pads, tril/triu) and the backward of reflection/replication pads.
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
