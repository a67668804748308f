/* conv_amx.cl - bfloat16 convolution on Intel AMX tiles, with no column
 * matrix (runtime/ops/conv_amx.c; built only where the GEMM's AMX probe
 * passed, runtime/ops/gemm_amx.c).
 *
 * The grid-position trick of the implicit GEMM (conv_params.h): the source
 * is copied zero-padded, split by the strides f into f0 f1 f2 phase planes
 * of G0 x G1 x G2 positions (phase r holds padded position f u + r at grid
 * position u), and output position (o0, o1, o2) is grid position
 * q = (o0 G1 + o1) G2 + o2; tap j, at padded distance a = j d, reads phase
 * (a mod f) at q + ((a0 div f0) G1 + a1 div f1) G2 + a2 div f2: one offset
 * for every q. At stride 1 there is one phase, the padded source itself.
 *
 * Here the copy is laid out for the tiles: xp[n][c / 2][phase][S][2], each
 * pair of channels a plane of S positions per phase with the two channels
 * side by side. Sixteen consecutive positions of 32 channels are then a
 * tile in the VNNI layout of a product's B operand, rows (channel pairs)
 * phases * S * 4 bytes apart: loaded straight from the padded copy, for any
 * tap, with no packing. The weight is the A operand, packed once into tiles
 * of 16 output channels x 32 source channels per tap.
 *
 * Parameters: tocl_conv_ig_params, with cb the source's 32-channel tiles,
 * Mp the output channels padded to 32, tn the output rows per work-item, f
 * and G as above, PS = f0 f1 f2 (phases) and S the positions per channel
 * pair and phase (zeros after the last grid row, so that every block's
 * reads stay inside). */
#include "conv_params.h"
#include "nn_params.h" /* nn_f2bf */
#include "amx_tiles.h"

/* Phase and grid offset of tap (j0, j1, j2). */
inline long cva_tap(const tocl_conv_ig_params *p, long j0, long j1, long j2, long *ph)
{
    long a0 = j0 * p->d0, a1 = j1 * p->d1, a2 = j2 * p->d2;
    *ph = ((a0 % p->f0) * p->f1 + a1 % p->f1) * p->f2 + a2 % p->f2;
    return ((a0 / p->f0) * p->G1 + a1 / p->f1) * p->G2 + a2 / p->f2;
}

/* Grid position q of phase ph to the source offset of its padded position
 * ((u0 x1 + u1) x2 + u2 of one channel), or -1 in the padding or past the
 * grid. */
inline long cva_source(const tocl_conv_ig_params *p, long ph, long q)
{
    long r2 = ph % p->f2, r1 = (ph / p->f2) % p->f1, r0 = ph / (p->f1 * p->f2);
    long g2 = q % p->G2, g = q / p->G2, g1 = g % p->G1, g0 = g / p->G1;
    long u0 = p->f0 * g0 + r0 - p->p0, u1 = p->f1 * g1 + r1 - p->p1, u2 = p->f2 * g2 + r2 - p->p2;
    return g0 < p->G0 && u0 >= 0 && u0 < p->x0 && u1 >= 0 && u1 < p->x1 && u2 >= 0 && u2 < p->x2
               ? (u0 * p->x1 + u1) * p->x2 + u2
               : -1;
}

/* Work-item (pair, phase, n): the pair's plane of that phase, every grid
 * row; rows past the grid are zero. Source coordinates per row, then a
 * stride f2 along it: no division per element. */
__kernel void conv_amx_pad(__global const ushort *src, __global ushort *xp, tocl_conv_ig_params p)
{
    long pr = get_global_id(0), ph = get_global_id(1), n = get_global_id(2);
    if (pr >= p.cb * 16 || ph >= p.PS)
        return;
    long c = 2 * pr, rows = p.S / p.G2, plane = p.x0 * p.x1 * p.x2;
    long r2 = ph % p.f2, r1 = (ph / p.f2) % p.f1, r0 = ph / (p.f1 * p.f2);
    __global const ushort *s0 = src + p.src_off + (n * p.C + c) * plane, *s1 = s0 + plane;
    int has0 = c < p.C, has1 = c + 1 < p.C;
    /* positions u of a row read source column f2 u + r2 - p2: [lo, hi) inside */
    long lo = max(0L, (p.p2 - r2 + p.f2 - 1) / p.f2), hi = min(p.G2, (p.x2 + p.p2 - r2 + p.f2 - 1) / p.f2);
    for (long row = 0; row < rows; row++) {
        __global ushort *d = xp + p.xp_off + (((n * p.cb * 16 + pr) * p.PS + ph) * p.S + row * p.G2) * 2;
        long g0 = row / p.G1, g1 = row % p.G1;
        long u0 = p.f0 * g0 + r0 - p.p0, u1 = p.f1 * g1 + r1 - p.p1;
        int in = g0 < p.G0 && u0 >= 0 && u0 < p.x0 && u1 >= 0 && u1 < p.x1;
        long u = 0;
        if (!in || !has0 || lo >= hi) {
            for (; u < p.G2; u++)
                d[2 * u] = 0, d[2 * u + 1] = 0;
            continue;
        }
        __global const ushort *a = s0 + (u0 * p.x1 + u1) * p.x2 + r2 - p.p2, *b = s1 + (u0 * p.x1 + u1) * p.x2 + r2 - p.p2;
        for (; u < lo; u++)
            d[2 * u] = 0, d[2 * u + 1] = 0;
        if (p.f2 == 1 && has1) {
            for (; u + 16 <= hi; u += 16) /* a channel pair is one uint */
                vstore16(convert_uint16(vload16(0, a + u)) | convert_uint16(vload16(0, b + u)) << 16, 0,
                         (__global uint *)(d + 2 * u));
        }
        for (; u < hi; u++)
            d[2 * u] = a[p.f2 * u], d[2 * u + 1] = has1 ? b[p.f2 * u] : 0;
        for (; u < p.G2; u++)
            d[2 * u] = 0, d[2 * u + 1] = 0;
    }
}

/* Work-item (m, channel tile): row m of the weight's tiles (m / 16, tap,
 * ct) for every tap, 32 source channels each: w[m, c, j], or with flip
 * (input gradient: the weight is [C, M, kvol]) w[c, m, kvol - 1 - j];
 * zeros past M and C. Each channel's taps are read as one run. */
__kernel void conv_amx_pack_w(__global const ushort *w, __global ushort *ap, tocl_conv_ig_params p)
{
    long m = get_global_id(0), ct = get_global_id(1);
    if (m >= p.Mp || ct >= p.cb)
        return;
    __global ushort *d = ap + p.ap_off + ((m / 16) * p.kvol * p.cb + ct) * AMX_TILE + (m % 16) * 32;
    long tap = p.cb * AMX_TILE; /* from one tap's tile to the next */
    for (int i = 0; i < 32; i++) {
        long c = ct * 32 + i;
        if (m >= p.M || c >= p.C) {
            for (long j = 0; j < p.kvol; j++)
                d[j * tap + i] = 0;
            continue;
        }
        __global const ushort *r = w + p.w_off + (p.flip ? c * p.wC + m : m * p.C + c) * p.kvol;
        for (long j = 0; j < p.kvol; j++)
            d[j * tap + i] = r[p.flip ? p.kvol - 1 - j : j];
    }
}

/* sums[32 m][32 q] of output channels [m0, m0 + 32) at grid positions
 * [q, q + 32): tiles 0-3 the sums (m halves x q halves), 4-5 the weight's
 * two row tiles, 6-7 two position tiles of the padded source. */
__attribute__((target("amx-tile,amx-bf16"))) static void cva_block(__global const ushort *a,
                                                                   __global const ushort *x, long q,
                                                                   const tocl_conv_ig_params *pp, float *sums)
{
    tocl_conv_ig_params p = *pp;
    amx_sums_load(sums, 128, 1);
    long arow = p.kvol * p.cb * AMX_TILE; /* the second row tile of the weight */
    long xs = p.PS * p.S * 4;             /* bytes from one channel pair to the next */
    long j = 0;
    for (long j0 = 0; j0 < p.k0; j0++)
        for (long j1 = 0; j1 < p.k1; j1++)
            for (long j2 = 0; j2 < p.k2; j2++, j++) {
                long ph, off = q + cva_tap(&p, j0, j1, j2, &ph);
                for (long ct = 0; ct < p.cb; ct++) {
                    __global const ushort *at = a + (j * p.cb + ct) * AMX_TILE;
                    __global const ushort *xt = x + ((ct * 16 * p.PS + ph) * p.S + off) * 2;
                    __builtin_ia32_tileloadd64(4, AMX_PTR(at), 64);
                    __builtin_ia32_tileloadd64(6, AMX_PTR(xt), xs);
                    __builtin_ia32_tdpbf16ps(0, 4, 6);
                    __builtin_ia32_tileloadd64(7, AMX_PTR(xt + 32), xs);
                    __builtin_ia32_tdpbf16ps(1, 4, 7);
                    __builtin_ia32_tileloadd64(5, AMX_PTR(at + arow), 64);
                    __builtin_ia32_tdpbf16ps(2, 5, 6);
                    __builtin_ia32_tdpbf16ps(3, 5, 7);
                }
            }
    amx_sums_store(sums, 128);
}

/* Work-item (row block, 32 output channels, n): p.tn output rows (o0, o1)
 * from row block * tn, each in blocks of 32 positions along o2; the block's
 * positions past y2 are computed and not stored. Output y[n, m, o] dense. */
__kernel void conv_amx(__global const ushort *ap, __global const ushort *xp, __global ushort *y,
                       __global const ushort *bias, tocl_conv_ig_params p)
{
    long rb = get_global_id(0), mb = get_global_id(1), n = get_global_id(2);
    long r0 = rb * p.tn, r1 = min(r0 + p.tn, p.y0 * p.y1), m0 = mb * 32;
    if (r0 >= r1 || m0 >= p.M)
        return;
    __global const ushort *a = ap + p.ap_off + (m0 / 16) * p.kvol * p.cb * AMX_TILE;
    __global const ushort *x = xp + p.xp_off + n * p.cb * 16 * p.PS * p.S * 2;
    float bsc[32];
    for (int i = 0; i < 32; i++)
        bsc[i] = p.has_bias && m0 + i < p.M ? as_float((uint)bias[p.b_off + m0 + i] << 16) : 0.0f;
    float sums[32 * 32];
    amx_begin();
    for (long r = r0; r < r1; r++) {
        long o0 = r / p.y1, o1 = r % p.y1;
        __global ushort *yr = y + p.y_off + (n * p.M + m0) * p.L + (o0 * p.y1 + o1) * p.y2;
        for (long o2 = 0; o2 < p.y2; o2 += 32) {
            cva_block(a, x, (o0 * p.G1 + o1) * p.G2 + o2, &p, sums);
            long nv = min(32L, p.y2 - o2);
            int mn = (int)min(32L, p.M - m0);
            for (int i = 0; i < mn; i++) {
                __global ushort *yo = yr + i * p.L + o2;
                float16 v0 = vload16(0, sums + i * 32) + bsc[i], v1 = vload16(1, sums + i * 32) + bsc[i];
                /* round to nearest even; a NaN of arithmetic is quiet, so its top half stays NaN */
                uint16 u0 = as_uint16(v0), u1 = as_uint16(v1);
                ushort16 h0 = convert_ushort16((u0 + 0x7fffu + ((u0 >> 16) & 1u)) >> 16);
                ushort16 h1 = convert_ushort16((u1 + 0x7fffu + ((u1 >> 16) & 1u)) >> 16);
                if (nv == 32) {
                    vstore16(h0, 0, yo);
                    vstore16(h1, 1, yo);
                } else {
                    ushort t[32];
                    vstore16(h0, 0, t);
                    vstore16(h1, 1, t);
                    for (int k = 0; k < nv; k++)
                        yo[k] = t[k];
                }
            }
        }
    }
    amx_end();
}

/* ------------------------------------------------------------------ weight gradient */

/* gw[m, c, j] = sum over n and grid positions q of dyg[n, m, q] * (the
 * padded source of phase ph(j) at q + off(j)): dy placed on the grid (zeros
 * where o1 >= y1 or o2 >= y2), so that every q counts and each tap is one
 * phase and offset again. As a product per tap, dyg is A (rows m, k along
 * q: tile rows Lg * 2 bytes apart) and the source B, in the VNNI layout of
 * position pairs: xq[n][ph][e][i][c][2] = (plane ph at 2i + e, at 2i + e +
 * 1) for parity e, so that a tap at an odd offset reads the odd plane.
 * p.Lg: grid positions of dyg (a multiple of 32); p.S: pairs per (phase,
 * parity) plane; p.cb: 32-channel blocks of c; p.Mp: m padded to 32; p.hb:
 * 32-position steps per K block. */

/* Work-item (grid row, m, n): G2 positions of dyg (zeros past the end). */
__kernel void conv_amx_wg_dy(__global const ushort *dy, __global ushort *dyg, tocl_conv_ig_params p)
{
    long r = get_global_id(0), m = get_global_id(1), n = get_global_id(2);
    if (r * p.G2 >= p.Lg || m >= p.Mp)
        return;
    __global ushort *d = dyg + p.dyt_off + (n * p.Mp + m) * p.Lg + r * p.G2;
    long o0 = r / p.G1, o1 = r % p.G1, len = min(p.G2, p.Lg - r * p.G2);
    int in = m < p.M && o0 < p.y0 && o1 < p.y1;
    __global const ushort *s = dy + p.y_off + ((n * p.M + m) * p.y0 + o0) * p.y1 * p.y2 + o1 * p.y2;
    for (long u = 0; u < len; u++)
        d[u] = in && u < p.y2 ? s[u] : 0;
}

/* Work-item (pair i, phase, n): row i of both parity planes, every channel. */
__kernel void conv_amx_wg_x(__global const ushort *x, __global uint *xq, tocl_conv_ig_params p)
{
    long i = get_global_id(0), ph = get_global_id(1), n = get_global_id(2);
    if (i >= p.S || ph >= p.PS)
        return;
    long cp = p.cb * 32, plane = p.x0 * p.x1 * p.x2;
    long off[3]; /* source offsets of grid positions 2i, 2i + 1, 2i + 2 (-1: zero) */
    for (int t = 0; t < 3; t++)
        off[t] = cva_source(&p, ph, 2 * i + t);
    __global const ushort *s = x + p.src_off + n * p.C * plane;
    __global uint *d0 = xq + p.xp_off / 2 + (((n * p.PS + ph) * 2 + 0) * p.S + i) * cp;
    __global uint *d1 = xq + p.xp_off / 2 + (((n * p.PS + ph) * 2 + 1) * p.S + i) * cp;
    for (long c = 0; c < cp; c++) {
        uint v0 = 0, v1 = 0, v2 = 0;
        if (c < p.C) {
            __global const ushort *sc = s + c * plane;
            v0 = off[0] >= 0 ? sc[off[0]] : 0;
            v1 = off[1] >= 0 ? sc[off[1]] : 0;
            v2 = off[2] >= 0 ? sc[off[2]] : 0;
        }
        d0[c] = v0 | v1 << 16;
        d1[c] = v1 | v2 << 16;
    }
}

/* Work-item (32 m x 32 c block, split): K steps [k0, k1) of the depth (n,
 * 32-position step), in blocks of hb steps; within a block, every tap in
 * turn adds to its 32 x 32 float sums in part (tiles in, products, tiles
 * out), so that the block's dyg rows (A) are reused from cache by all taps. */
__attribute__((target("amx-tile,amx-bf16"))) static void cva_wg_tap(__global const ushort *dyg,
                                                                    __global const ushort *xq, long ph, long t,
                                                                    long s0,
                                                                    long s1, long mb, long cbk,
                                                                    const tocl_conv_ig_params *pp, void *sums,
                                                                    int first)
{
    tocl_conv_ig_params p = *pp;
    amx_sums_load(sums, 128, first);
    long steps = p.Lg / 32, cp = p.cb * 32, e = t & 1;
    for (long st = s0; st < s1; st++) {
        long n = st / steps, q0 = (st % steps) * 32;
        __global const ushort *a = dyg + p.dyt_off + (n * p.Mp + mb * 32) * p.Lg + q0;
        __global const ushort *b =
            xq + p.xp_off + ((((n * p.PS + ph) * 2 + e) * p.S + (q0 + t - e) / 2) * cp + cbk * 32) * 2;
        __builtin_ia32_tileloadd64(4, AMX_PTR(a), p.Lg * 2);
        __builtin_ia32_tileloadd64(6, AMX_PTR(b), cp * 4);
        __builtin_ia32_tdpbf16ps(0, 4, 6);
        __builtin_ia32_tileloadd64(7, AMX_PTR(b + 32), cp * 4);
        __builtin_ia32_tdpbf16ps(1, 4, 7);
        __builtin_ia32_tileloadd64(5, AMX_PTR(a + 16 * p.Lg), p.Lg * 2);
        __builtin_ia32_tdpbf16ps(2, 5, 6);
        __builtin_ia32_tdpbf16ps(3, 5, 7);
    }
    amx_sums_store(sums, 128);
}

__kernel void conv_amx_wg(__global const ushort *dyg, __global const ushort *xq, __global float *part,
                          tocl_conv_ig_params p)
{
    long blk = get_global_id(0), split = get_global_id(1);
    long mbs = p.Mp / 32, mb = blk % mbs, cbk = blk / mbs;
    if (cbk >= p.cb || split >= p.nsplit)
        return;
    long total = p.N * (p.Lg / 32), k0 = total * split / p.nsplit, k1 = total * (split + 1) / p.nsplit;
    __global float *ps = part + p.part_off + (split * p.kvol * mbs * p.cb) * 1024;
    amx_begin();
    for (long b0 = k0; b0 < k1; b0 += p.hb) {
        long b1 = min(k1, b0 + p.hb);
        long j = 0;
        for (long j0 = 0; j0 < p.k0; j0++)
            for (long j1 = 0; j1 < p.k1; j1++)
                for (long j2 = 0; j2 < p.k2; j2++, j++) {
                    long ph, t = cva_tap(&p, j0, j1, j2, &ph);
                    __global float *sums = ps + ((j * mbs + mb) * p.cb + cbk) * 1024;
                    cva_wg_tap(dyg, xq, ph, t, b0, b1, mb, cbk, &p, AMX_PTR(sums), p.first && b0 == k0);
                }
    }
    amx_end();
}

/* Work-item (m, c): gw[m, c, j] for every tap j = the splits' sums in a
 * fixed order, rounded once; neighbouring work-items read neighbouring
 * sums of each tap's block. */
__kernel void conv_amx_wg_reduce(__global const float *part, __global ushort *gw, tocl_conv_ig_params p)
{
    long id = get_global_id(0);
    if (id >= p.M * p.C)
        return;
    long c = id % p.C, m = id / p.C, mbs = p.Mp / 32, tap = mbs * p.cb * 1024;
    __global const float *s0 = part + p.part_off + ((m / 32) * p.cb + c / 32) * 1024 + (m % 32) * 32 + c % 32;
    for (long j = 0; j < p.kvol; j++) {
        float s = 0.0f;
        for (long i = 0; i < p.nsplit; i++)
            s += s0[(i * p.kvol + j) * tap];
        gw[p.w_off + id * p.kvol + j] = nn_f2bf(s);
    }
}
