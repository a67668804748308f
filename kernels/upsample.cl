/* upsample.cl - nearest, nearest-exact, (bi/tri)linear and bicubic
 * resampling over [nc, D, H, W], forward and backward. Each output element
 * reads up to 4 taps per dimension with separable weights, computed as the
 * CPU computes them. The backward gathers, per input element, from the
 * outputs whose taps reach it (found by binary search: a tap's index never
 * decreases with the output index), so it needs no atomics and sums in a
 * fixed order. Roles (nn_params.h): X input, Y output, G grad_output,
 * Z grad_input. The mode is a build option (UP_MODE, one of TOCL_UP_*),
 * so the tap count is a constant and the loops unroll. The taps of every
 * output position along each dimension are computed once per call into a
 * table (up_table) that both passes read. Each work-item handles a chunk
 * of UP_CHUNK consecutive elements of one row, so the index divisions and
 * the taps of the outer dimensions are paid once per chunk. */
#include "nn_params.h"
#include "pool_params.h"

inline acc_t up_ratio(const tocl_upsample_params *p, int j)
{
    return (acc_t)NN_REAL(p->ratio[j], p->ratiof[j]);
}

/* PyTorch's cubic convolution with A = -0.75. */
inline acc_t up_cc1(acc_t x)
{
    const acc_t A = (acc_t)-0.75;
    return ((A + 2) * x - (A + 3)) * x * x + 1;
}
inline acc_t up_cc2(acc_t x)
{
    const acc_t A = (acc_t)-0.75;
    return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
}

/* Taps per dimension: a constant of the mode. */
#if UP_MODE == TOCL_UP_CUBIC
#define UP_NT 4
#elif UP_MODE == TOCL_UP_LINEAR
#define UP_NT 2
#else
#define UP_NT 1
#endif
#define UP_CHUNK 8

/* Taps (index, weight) of output o along dimension j, as the CPU computes
 * them (UpSample.h: nearest_idx, nearest_exact_idx,
 * compute_source_index_and_lambda, cubic coefficients with A = -0.75). */
inline void up_taps(const tocl_upsample_params *p, int j, long o, long *idx, acc_t *w)
{
    long I = p->in[j], O = p->out[j];
#if UP_MODE == TOCL_UP_NEAREST || UP_MODE == TOCL_UP_NEAREST_EXACT
    float sc = p->ratiof[j]; /* the CPU uses float here whatever the dtype */
#if UP_MODE == TOCL_UP_NEAREST_EXACT
    idx[0] = min((long)floor(((float)o + 0.5f) * sc), I - 1);
#else
    if (O == I)
        idx[0] = o;
    else if (O == 2 * I)
        idx[0] = o >> 1;
    else
        idx[0] = min((long)floor((float)o * sc), I - 1);
#endif
    w[0] = 1;
#else
    acc_t r = up_ratio(p, j);
    acc_t src = p->align_corners ? r * (acc_t)o : r * ((acc_t)o + (acc_t)0.5) - (acc_t)0.5;
#if UP_MODE == TOCL_UP_LINEAR
    if (O == I) { /* the CPU copies */
        idx[0] = idx[1] = o;
        w[0] = 1;
        w[1] = 0;
        return;
    }
    if (src < 0)
        src = 0;
    long i0 = min((long)floor(src), I - 1);
    acc_t l = fmin(fmax(src - (acc_t)i0, (acc_t)0), (acc_t)1);
    idx[0] = i0;
    idx[1] = i0 + (i0 < I - 1 ? 1 : 0);
    w[0] = 1 - l;
    w[1] = l;
#else
    long i0 = min((long)floor(src), I - 1); /* the CPU's guard against huge scales */
    acc_t t = fmin(fmax(src - (acc_t)i0, (acc_t)0), (acc_t)1);
    w[0] = up_cc2(t + 1);
    w[1] = up_cc1(t);
    w[2] = up_cc1(1 - t);
    w[3] = up_cc2(2 - t);
    for (int k = 0; k < 4; k++)
        idx[k] = clamp(i0 - 1 + k, 0L, I - 1);
#endif
#endif
}

__kernel void up_table(__global long *ti, __global acc_t *tw, tocl_upsample_params p)
{
    long g = get_global_id(0);
    int j = g < p.t_base[1] ? 0 : g < p.t_base[2] ? 1 : 2;
    long o = g - p.t_base[j];
    if (o >= p.out[j])
        return;
    long idx[UP_NT];
    acc_t w[UP_NT];
    up_taps(&p, j, o, idx, w);
    for (int k = 0; k < UP_NT; k++) {
        ti[p.ti_off + g * UP_NT + k] = idx[k];
        tw[p.tw_off + g * UP_NT + k] = w[k];
    }
}

/* Taps of output o along dimension j, from the table. */
inline void up_load(__global const long *ti, __global const acc_t *tw, const tocl_upsample_params *p, int j, long o,
                    long *idx, acc_t *w)
{
    long e = (p->t_base[j] + o) * UP_NT;
    for (int k = 0; k < UP_NT; k++) {
        idx[k] = ti[p->ti_off + e + k];
        w[k] = tw[p->tw_off + e + k];
    }
}

/* Work-item -> (row, first element of its chunk) over rows of length len. */
inline long up_chunk(long rows, long len, long *first)
{
    long nch = (len + UP_CHUNK - 1) / UP_CHUNK, g = get_global_id(0);
    long row = g / nch;
    *first = (g - row * nch) * UP_CHUNK;
    return row < rows ? row : -1;
}

__kernel void up_fwd(__global const X_T *x, __global Y_T *y, __global const long *ti, __global const acc_t *tw,
                     tocl_upsample_params p)
{
    long OD = p.out[0], OH = p.out[1], OW = p.out[2], ow0;
    long row = up_chunk(p.nc * OD * OH, OW, &ow0);
    if (row < 0)
        return;
    long oh = row % OH, od = (row / OH) % OD, plane = row / (OH * OD);
    long id[UP_NT], ih[UP_NT], iw[UP_NT];
    acc_t wd[UP_NT], wh[UP_NT], ww[UP_NT];
    up_load(ti, tw, &p, 0, od, id, wd);
    up_load(ti, tw, &p, 1, oh, ih, wh);
    long H = p.in[1], W = p.in[2];
    long base = p.x_off + plane * p.in[0] * H * W;
    long end = min(ow0 + UP_CHUNK, OW);
    for (long ow = ow0; ow < end; ow++) {
        up_load(ti, tw, &p, 2, ow, iw, ww);
        acc_t s = 0;
        for (int a = 0; a < UP_NT; a++) {
            acc_t sa = 0;
            for (int b = 0; b < UP_NT; b++) {
                acc_t sb = 0;
                long r = base + (id[a] * H + ih[b]) * W;
                for (int c = 0; c < UP_NT; c++)
                    sb += ww[c] * LDX(x, r + iw[c]);
                sa += wh[b] * sb;
            }
            s += wd[a] * sa;
        }
        STY(y, p.y_off + row * OW + ow, s);
    }
}

/* Outputs along dimension j with a tap at input i: [*lo, *hi] (empty when
 * *lo > *hi), by binary search: the first and last tap indices never
 * decrease with the output index. */
inline void up_cover(__global const long *ti, const tocl_upsample_params *p, int j, long i, long *lo, long *hi)
{
    __global const long *t = ti + p->ti_off + p->t_base[j] * UP_NT;
    long a = 0, b = p->out[j]; /* first o whose last tap >= i */
    while (a < b) {
        long m = (a + b) / 2;
        if (t[m * UP_NT + UP_NT - 1] >= i)
            b = m;
        else
            a = m + 1;
    }
    *lo = a;
    b = p->out[j]; /* first o whose first tap > i (not before *lo) */
    while (a < b) {
        long m = (a + b) / 2;
        if (t[m * UP_NT] > i)
            b = m;
        else
            a = m + 1;
    }
    *hi = a - 1;
}

/* Weight with which output o's taps along dimension j read input i. */
inline acc_t up_weight(__global const long *ti, __global const acc_t *tw, const tocl_upsample_params *p, int j,
                       long o, long i)
{
    long e = (p->t_base[j] + o) * UP_NT;
    acc_t s = 0;
    for (int k = 0; k < UP_NT; k++)
        if (ti[p->ti_off + e + k] == i)
            s += tw[p->tw_off + e + k];
    return s;
}

__kernel void up_bwd(__global const G_T *g, __global Z_T *z, __global const long *ti, __global const acc_t *tw,
                     tocl_upsample_params p)
{
    long ID = p.in[0], IH = p.in[1], IW = p.in[2], iw0;
    long row = up_chunk(p.nc * ID * IH, IW, &iw0);
    if (row < 0)
        return;
    long ih = row % IH, id = (row / IH) % ID, plane = row / (IH * ID);
    long lo0, hi0, lo1, hi1;
    up_cover(ti, &p, 0, id, &lo0, &hi0);
    up_cover(ti, &p, 1, ih, &lo1, &hi1);
    long OH = p.out[1], OW = p.out[2];
    long base = p.y_off + plane * p.out[0] * OH * OW;
    long end = min(iw0 + UP_CHUNK, IW);
    for (long iw = iw0; iw < end; iw++) {
        long lo2, hi2;
        up_cover(ti, &p, 2, iw, &lo2, &hi2);
        acc_t s = 0;
        for (long a = lo0; a <= hi0; a++) {
            acc_t sa = 0;
            for (long b = lo1; b <= hi1; b++) {
                acc_t sb = 0;
                long r = base + (a * OH + b) * OW;
                for (long c = lo2; c <= hi2; c++)
                    sb += up_weight(ti, tw, &p, 2, c, iw) * LDG(g, r + c);
                sa += up_weight(ti, tw, &p, 1, b, ih) * sb;
            }
            s += up_weight(ti, tw, &p, 0, a, id) * sa;
        }
        STZ(z, p.x_off + row * IW + iw, s);
    }
}
