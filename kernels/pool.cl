/* pool.cl - max and average pooling over [nc, D, H, W], fixed or adaptive
 * windows, forward and backward. One work-item per output element forward,
 * one per input element backward (in chunks of a row): the backward gathers from the outputs
 * whose windows cover the element, so it needs no atomics and sums in a
 * fixed order. Roles (nn_params.h): X input, Y output, G grad_output,
 * Z grad_input; indices are int64 flat positions in D*H*W as on the CPU. */
#include "nn_params.h"
#include "pool_params.h"

/* Window [*lo, *hi) of output o along dimension j, and for fixed windows
 * its start before clipping (for max pooling with dilation). */
inline void pool_window(const tocl_pool_params *p, int j, long o, long *lo, long *hi)
{
    long I = p->in[j], O = p->out[j];
    if (p->kind >= TOCL_POOL_K_ADAPTIVE_MAX) {
        *lo = (o * I) / O;
        *hi = ((o + 1) * I + O - 1) / O;
    } else {
        *lo = o * p->s[j] - p->p[j];
        *hi = *lo + (p->k[j] - 1) * p->d[j] + 1;
    }
}

/* Outputs along dimension j whose windows may hold input i: [*lo, *hi]. */
inline void pool_cover(const tocl_pool_params *p, int j, long i, long *lo, long *hi)
{
    long I = p->in[j], O = p->out[j];
    if (p->kind >= TOCL_POOL_K_ADAPTIVE_MAX) {
        *lo = (i * O) / I;
        *hi = ((i + 1) * O - 1) / I;
    } else {
        long t = i + p->p[j], span = (p->k[j] - 1) * p->d[j]; /* t >= 0 */
        *hi = t / p->s[j];
        *lo = t - span <= 0 ? 0 : (t - span + p->s[j] - 1) / p->s[j];
    }
    if (*hi > O - 1)
        *hi = O - 1;
}

/* Average divisor of output (od, oh, ow) for fixed windows, as the CPU:
 * the window clipped to the padded input, then (unless count_include_pad)
 * to the input. 0 when the window holds no input. */
inline long pool_avg_div(const tocl_pool_params *p, const long *o)
{
    long size = 1, inside = 1;
    for (int j = 0; j < 3; j++) {
        long a = o[j] * p->s[j] - p->p[j];
        long b = min(a + p->k[j], p->in[j] + p->p[j]);
        size *= b - a;
        a = max(a, 0L);
        b = min(b, p->in[j]);
        if (a >= b)
            return 0;
        inside *= b - a;
    }
    if (p->divisor)
        return p->divisor;
    return p->count_include_pad ? size : inside;
}

/* Work-item -> (row, first element of its chunk) over rows of length len:
 * the index divisions are paid once per POOL_CHUNK elements. */
#define POOL_CHUNK 8
inline long pool_chunk(long rows, long len, long *first)
{
    long nch = (len + POOL_CHUNK - 1) / POOL_CHUNK, g = get_global_id(0);
    long row = g / nch;
    *first = (g - row * nch) * POOL_CHUNK;
    return row < rows ? row : -1;
}

/* Output o (flat index e) of the plane starting at element `base` of x. */
inline void pool_fwd_one(__global const X_T *x, __global Y_T *y, __global long *ind, const tocl_pool_params *pp,
                         long base, const long *o, long e)
{
    tocl_pool_params p = *pp;
    long lo[3], hi[3], step[3];
    int adaptive = p.kind >= TOCL_POOL_K_ADAPTIVE_MAX;
    for (int j = 0; j < 3; j++) {
        pool_window(&p, j, o[j], &lo[j], &hi[j]);
        step[j] = adaptive ? 1 : p.d[j];
        while (lo[j] < 0) /* first tap inside the input */
            lo[j] += step[j];
        hi[j] = min(hi[j], p.in[j]);
    }
    long H = p.in[1], W = p.in[2];
    int is_max = p.kind == TOCL_POOL_K_MAX || p.kind == TOCL_POOL_K_ADAPTIVE_MAX;
    if (is_max) {
        long best = (lo[0] * H + lo[1]) * W + lo[2];
        acc_t m = -INFINITY;
        for (long a = lo[0]; a < hi[0]; a += step[0])
            for (long b = lo[1]; b < hi[1]; b += step[1])
                for (long c = lo[2]; c < hi[2]; c += step[2]) {
                    long k = (a * H + b) * W + c;
                    acc_t v = LDX(x, base + k);
                    if (v > m || isnan(v)) { /* the CPU's rule: the last NaN wins */
                        m = v;
                        best = k;
                    }
                }
        STY(y, p.y_off + e, m);
        ind[p.i_off + e] = best;
        return;
    }
    acc_t s = 0;
    for (long a = lo[0]; a < hi[0]; a++)
        for (long b = lo[1]; b < hi[1]; b++)
            for (long c = lo[2]; c < hi[2]; c++)
                s += LDX(x, base + (a * H + b) * W + c);
    long div = adaptive ? (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]) : pool_avg_div(&p, o);
    STY(y, p.y_off + e, div ? s / (acc_t)div : (acc_t)0);
}

__kernel void pool_fwd(__global const X_T *x, __global Y_T *y, __global long *ind, tocl_pool_params p)
{
    long OD = p.out[0], OH = p.out[1], OW = p.out[2], ow0;
    long row = pool_chunk(p.nc * OD * OH, OW, &ow0);
    if (row < 0)
        return;
    long o[3] = {(row / OH) % OD, row % OH, 0};
    long base = p.x_off + row / (OH * OD) * p.in[0] * p.in[1] * p.in[2];
    long end = min(ow0 + POOL_CHUNK, OW);
    for (o[2] = ow0; o[2] < end; o[2]++)
        pool_fwd_one(x, y, ind, &p, base, o, row * OW + o[2]);
}

/* z[i] := sum of g[o] over outputs o whose window holds i (avg: divided by
 * o's divisor; max: only where ind[o] == i). */
inline void pool_bwd_one(__global const G_T *g, __global const long *ind, __global Z_T *z,
                         const tocl_pool_params *pp, long obase, const long *i, long e)
{
    tocl_pool_params p = *pp;
    long r = (i[0] * p.in[1] + i[1]) * p.in[2] + i[2]; /* flat position within the plane */
    long lo[3], hi[3];
    for (int j = 0; j < 3; j++)
        pool_cover(&p, j, i[j], &lo[j], &hi[j]);
    long OH = p.out[1], OW = p.out[2];
    int is_max = p.kind == TOCL_POOL_K_MAX || p.kind == TOCL_POOL_K_ADAPTIVE_MAX;
    acc_t s = 0;
    long o[3];
    for (o[0] = lo[0]; o[0] <= hi[0]; o[0]++)
        for (o[1] = lo[1]; o[1] <= hi[1]; o[1]++)
            for (o[2] = lo[2]; o[2] <= hi[2]; o[2]++) {
                long k = obase + (o[0] * OH + o[1]) * OW + o[2];
                if (is_max) {
                    if (ind[p.i_off + k] == r)
                        s += LDG(g, p.y_off + k);
                } else if (p.kind == TOCL_POOL_K_ADAPTIVE_AVG) {
                    long n = 1;
                    for (int j = 0; j < 3; j++) {
                        long a, b;
                        pool_window(&p, j, o[j], &a, &b);
                        n *= b - a;
                    }
                    s += LDG(g, p.y_off + k) / (acc_t)n;
                } else {
                    long div = pool_avg_div(&p, o);
                    if (div)
                        s += LDG(g, p.y_off + k) / (acc_t)div;
                }
            }
    STZ(z, p.x_off + e, s);
}

__kernel void pool_bwd(__global const G_T *g, __global const long *ind, __global Z_T *z, tocl_pool_params p)
{
    long ID = p.in[0], IH = p.in[1], IW = p.in[2], iw0;
    long row = pool_chunk(p.nc * ID * IH, IW, &iw0);
    if (row < 0)
        return;
    long i[3] = {(row / IH) % ID, row % IH, 0};
    long obase = row / (IH * ID) * p.out[0] * p.out[1] * p.out[2];
    long end = min(iw0 + POOL_CHUNK, IW);
    for (i[2] = iw0; i[2] < end; i[2]++)
        pool_bwd_one(g, ind, z, &p, obase, i, row * IW + i[2]);
}

/* ---- CPU devices, fixed windows (kinds MAX and AVG): row and plane walkers.
 * pool_fwd_row: one work-item per output row (plane, od, oh); the D and H
 * windows are found once per row and the W window advances by the stride,
 * so no division per element. Taps in the CPU's order (d, h, w), the same
 * comparisons and sums as pool_fwd_one. */
inline void pool_clip(long a, long span, long step, long n, long *lo, long *hi)
{
    long b = a + span; /* one past the last tap (before clipping) */
    while (a < 0)
        a += step;
    *lo = a;
    *hi = min(b, n);
}

/* One output row of max pooling, taps every (d0, d1, d2). */
inline void pool_max_row(__global const X_T *x, __global Y_T *y, __global long *ind, const tocl_pool_params *pp,
                         long od, long oh, long base, long yo, long io, long d0, long d1, long d2)
{
    long D = pp->in[0], H = pp->in[1], W = pp->in[2], OW = pp->out[2], s2 = pp->s[2], a2 = -pp->p[2];
    long lo0, hi0, lo1, hi1;
    pool_clip(od * pp->s[0] - pp->p[0], (pp->k[0] - 1) * d0 + 1, d0, D, &lo0, &hi0);
    pool_clip(oh * pp->s[1] - pp->p[1], (pp->k[1] - 1) * d1 + 1, d1, H, &lo1, &hi1);
    long span2 = (pp->k[2] - 1) * d2 + 1;
    for (long ow = 0; ow < OW; ow++, a2 += s2) {
        long lo2, hi2;
        pool_clip(a2, span2, d2, W, &lo2, &hi2);
        long best = (lo0 * H + lo1) * W + lo2;
        acc_t m = -INFINITY;
        for (long a = lo0; a < hi0; a += d0)
            for (long b = lo1; b < hi1; b += d1) {
                long r = (a * H + b) * W;
                for (long c = lo2; c < hi2; c += d2) {
                    acc_t v = LDX(x, base + r + c);
                    int t = v > m || v != v; /* the CPU's rule: the last NaN wins */
                    m = t ? v : m;
                    best = t ? r + c : best;
                }
            }
        STY(y, yo + ow, m);
        ind[io + ow] = best;
    }
}

__kernel void pool_fwd_row(__global const X_T *x, __global Y_T *y, __global long *ind, tocl_pool_params p)
{
    long OD = p.out[0], OH = p.out[1], OW = p.out[2];
    long row = get_global_id(0);
    if (row >= p.nc * OD * OH)
        return;
    long oh = row % OH, od = (row / OH) % OD, plane = row / (OH * OD);
    long D = p.in[0], H = p.in[1], W = p.in[2];
    long base = p.x_off + plane * D * H * W, yo = p.y_off + row * OW, io = p.i_off + row * OW;
    long s2 = p.s[2], a2 = -p.p[2];
    if (p.kind == TOCL_POOL_K_MAX) {
        if (p.d[0] == 1 && p.d[1] == 1 && p.d[2] == 1) /* literal steps: the common case compiles tighter */
            pool_max_row(x, y, ind, &p, od, oh, base, yo, io, 1, 1, 1);
        else
            pool_max_row(x, y, ind, &p, od, oh, base, yo, io, p.d[0], p.d[1], p.d[2]);
        return;
    }
    /* avg: window clipped to the padded input (size), then to the input */
    long k2 = p.k[2], lo[2], hi[2], size01 = 1, in01 = 1;
    long oo[2] = {od, oh};
    for (int j = 0; j < 2; j++) {
        long a = oo[j] * p.s[j] - p.p[j], b = min(a + p.k[j], p.in[j] + p.p[j]);
        size01 *= b - a;
        lo[j] = max(a, 0L);
        hi[j] = min(b, p.in[j]);
        in01 *= hi[j] - lo[j];
    }
    for (long ow = 0; ow < OW; ow++, a2 += s2) {
        long b2 = min(a2 + k2, W + p.p[2]), lo2 = max(a2, 0L), hi2 = min(b2, W);
        acc_t s = 0;
        long div = 0;
        if (lo[0] < hi[0] && lo[1] < hi[1] && lo2 < hi2) {
            for (long a = lo[0]; a < hi[0]; a++)
                for (long b = lo[1]; b < hi[1]; b++) {
                    long r = base + (a * H + b) * W;
                    for (long c = lo2; c < hi2; c++)
                        s += LDX(x, r + c);
                }
            div = p.divisor ? p.divisor : p.count_include_pad ? size01 * (b2 - a2) : in01 * (hi2 - lo2);
        }
        STY(y, yo + ow, div ? s / (acc_t)div : (acc_t)0);
    }
}

/* pool_bwd_plane: one work-item per (n, c) plane. It zeroes its plane of z
 * and adds each output's gradient where it came from, in output order, as
 * the CPU does (max: at the saved index, which is the flat position in the
 * plane, skipped when out of range; avg: g / divisor over the window), so
 * overlapping windows sum in the CPU's order, with no races. z is read and
 * written in its own dtype per add, as the CPU's scalar_t accumulation. */
__kernel void pool_bwd_plane(__global const G_T *g, __global const long *ind, __global Z_T *z, tocl_pool_params p)
{
    long plane = get_global_id(0);
    if (plane >= p.nc)
        return;
    long D = p.in[0], H = p.in[1], W = p.in[2], n_in = D * H * W;
    long OD = p.out[0], OH = p.out[1], OW = p.out[2], n_out = OD * OH * OW;
    long zb = p.x_off + plane * n_in, gb = p.y_off + plane * n_out;
    for (long i = 0; i < n_in; i++)
        STZ(z, zb + i, (acc_t)0);
    if (p.kind == TOCL_POOL_K_MAX) {
        __global const long *ip = ind + p.i_off + plane * n_out;
        for (long o = 0; o < n_out; o++) {
            long k = ip[o];
            if ((ulong)k < (ulong)n_in)
                STZ(z, zb + k, LDZ(z, zb + k) + LDG(g, gb + o));
        }
        return;
    }
    long o = 0;
    for (long od = 0; od < OD; od++) {
        long a0 = od * p.s[0] - p.p[0], b0 = min(a0 + p.k[0], D + p.p[0]);
        long lo0 = max(a0, 0L), hi0 = min(b0, D);
        for (long oh = 0; oh < OH; oh++) {
            long a1 = oh * p.s[1] - p.p[1], b1 = min(a1 + p.k[1], H + p.p[1]);
            long lo1 = max(a1, 0L), hi1 = min(b1, H);
            long a2 = -p.p[2];
            for (long ow = 0; ow < OW; ow++, o++, a2 += p.s[2]) {
                long b2 = min(a2 + p.k[2], W + p.p[2]), lo2 = max(a2, 0L), hi2 = min(b2, W);
                if (lo0 >= hi0 || lo1 >= hi1 || lo2 >= hi2)
                    continue;
                long div = p.divisor ? p.divisor
                         : p.count_include_pad ? (b0 - a0) * (b1 - a1) * (b2 - a2)
                                               : (hi0 - lo0) * (hi1 - lo1) * (hi2 - lo2);
                acc_t v = LDG(g, gb + o) / (acc_t)div;
                for (long a = lo0; a < hi0; a++)
                    for (long b = lo1; b < hi1; b++) {
                        long r = zb + (a * H + b) * W;
                        for (long c = lo2; c < hi2; c++)
                            STZ(z, r + c, LDZ(z, r + c) + v);
                    }
            }
        }
    }
}
