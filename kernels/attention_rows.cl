/* attention_rows.cl - the row step of attention by matrix products
 * (runtime/ops/attention_gemm.c): between the GEMMs that make a block of
 * scores and the ones that consume it, one work-item per score row applies
 * causality and the mask and turns scores into probabilities (forward) or
 * into the score gradient (backward), in place in the scratch block.
 *
 * Roles (nn_params.h macros): X storage of the additive mask; Y the
 * accumulation type, which the scratch block, lse, delta and (backward)
 * out and grad_out have on this route. Rows are walked as vectors of 8:
 * PoCL runs a work-item's loop as scalar code, and explicit vectors are
 * what gets SIMD (exp of a float8 is one vector call).
 *
 * A query whose every key is masked out gives probabilities 0 and lse -inf
 * (so output 0 and no gradient), as the flash kernels do. */
#include "nn_params.h"
#include "attention_params.h"

#if defined(NN_ACC_F64)
typedef double8 accv;
typedef long8 accm; /* isnan of an accv */
#else
typedef float8 accv;
typedef int8 accm;
#endif

/* Row gid of the block: its scratch row, and the (b, h, i) it belongs to. */
typedef struct att_row {
    long b, h, i, off; /* off: element offset of the row in the scratch blocks */
    long vis;          /* keys [0, vis) may be visible; the rest are causal-masked */
} att_row;

inline att_row att_row_of(const tocl_att_params *p, const tocl_att_block *k, long gid)
{
    att_row r;
    long t = gid / k->rows, ii = gid - t * k->rows, u = k->t0 + t, hk = u % p->Hk;
    r.b = k->b0 + u / p->Hk;
    r.h = hk * (p->Hq / p->Hk) + k->r;
    r.i = k->i0 + ii;
    r.off = t * k->bs + ii * k->n;
    r.vis = p->causal ? min(k->n, r.i + 1) : k->n;
    return r;
}

/* Scores j .. j + 7 of the row with the mask added. */
inline accv att_scores8(__global const Y_T *s, __global const X_T *m, const tocl_att_params *p, long mb, long j)
{
    accv x = vload8(0, s + j);
    if (p->has_mask) {
        acc_t *e = (acc_t *)&x;
        for (int c = 0; c < 8; c++)
            e[c] += LDX(m, mb + (j + c) * p->ms[3]);
    }
    return x;
}

inline acc_t att_score(__global const Y_T *s, __global const X_T *m, const tocl_att_params *p, long mb, long j)
{
    return s[j] + (p->has_mask ? LDX(m, mb + j * p->ms[3]) : (acc_t)0);
}

inline acc_t att_vmax(accv v)
{
    v.lo = fmax(v.lo, v.hi);
    v.lo.lo = fmax(v.lo.lo, v.lo.hi);
    return fmax(v.s0, v.s1);
}

inline acc_t att_vsum(accv v)
{
    v.lo += v.hi;
    v.lo.lo += v.lo.hi;
    return v.s0 + v.s1;
}

/* Scores -> probabilities in place; lse of the row. */
__kernel void att_rows_fwd(__global Y_T *s, __global const X_T *m, __global Y_T *lse, tocl_att_params p,
                           tocl_att_block k)
{
    long gid = get_global_id(0);
    if (gid >= k.nb * k.rows)
        return;
    att_row r = att_row_of(&p, &k, gid);
    __global Y_T *row = s + k.s_off + r.off;
    long mb = p.m_off + r.b * p.ms[0] + r.h * p.ms[1] + r.i * p.ms[2];
    long v8 = r.vis / 8 * 8;
    /* fmax skips NaN: NaN scores are tracked apart, so that they give a NaN
     * row (as on the CPU) rather than one that looks fully masked */
    accv mv = -INFINITY;
    accm nan8 = 0;
    for (long j = 0; j < v8; j += 8) {
        accv x = att_scores8(row, m, &p, mb, j);
        mv = fmax(mv, x);
        nan8 |= isnan(x);
    }
    acc_t mx = att_vmax(mv);
    int nan1 = any(nan8);
    for (long j = v8; j < r.vis; j++) {
        acc_t x = att_score(row, m, &p, mb, j);
        mx = fmax(mx, x);
        nan1 |= isnan(x);
    }
    if (nan1)
        mx = NAN;
    acc_t l = 0;
    if (mx != -INFINITY) {
        accv sv = 0;
        for (long j = 0; j < v8; j += 8) {
            accv e = exp(att_scores8(row, m, &p, mb, j) - mx);
            vstore8(e, 0, row + j);
            sv += e;
        }
        l = att_vsum(sv);
        for (long j = v8; j < r.vis; j++) {
            acc_t e = exp(att_score(row, m, &p, mb, j) - mx);
            row[j] = e;
            l += e;
        }
    }
    /* l is 0 only when every key is masked: then the row is all zeros. A NaN
     * score makes l NaN and the row NaN, as on the CPU. */
    acc_t inv = l != 0 ? (acc_t)1 / l : (acc_t)0;
    long end = l != 0 ? r.vis : 0;
    for (long j = 0; j < end / 8 * 8; j += 8)
        vstore8(vload8(0, row + j) * inv, 0, row + j);
    for (long j = end / 8 * 8; j < end; j++)
        row[j] *= inv;
    for (long j = end; j < k.n; j++)
        row[j] = 0;
    lse[p.lse_off + (r.b * p.Hq + r.h) * p.L + r.i] = l != 0 ? mx + log(l) : -INFINITY;
}

/* Scores -> probabilities P in s, dP -> dS = P * (dP - delta) in dp, with
 * delta = sum_d grad_out * out of the row (also stored). */
__kernel void att_rows_bwd(__global Y_T *s, __global Y_T *dp, __global const X_T *m, __global const Y_T *lse,
                           __global const Y_T *o, __global const Y_T *g, __global Y_T *delta, tocl_att_params p,
                           tocl_att_block k)
{
    long gid = get_global_id(0);
    if (gid >= k.nb * k.rows)
        return;
    att_row r = att_row_of(&p, &k, gid);
    __global Y_T *row = s + k.s_off + r.off, *drow = dp + k.dp_off + r.off;
    long mb = p.m_off + r.b * p.ms[0] + r.h * p.ms[1] + r.i * p.ms[2];
    long ob = p.o_off + r.b * p.os[0] + r.h * p.os[1] + r.i * p.os[2];
    long gb = p.g_off + r.b * p.gs[0] + r.h * p.gs[1] + r.i * p.gs[2];
    acc_t dl = 0;
    for (long d = 0; d < p.Dv; d++)
        dl += o[ob + d * p.os[3]] * g[gb + d * p.gs[3]];
    long ri = (r.b * p.Hq + r.h) * p.L + r.i;
    delta[p.delta_off + ri] = dl;
    acc_t ls = lse[p.lse_off + ri];
    long end = ls == -INFINITY ? 0 : r.vis;
    for (long j = 0; j < end / 8 * 8; j += 8) {
        accv pr = exp(att_scores8(row, m, &p, mb, j) - ls);
        vstore8(pr, 0, row + j);
        vstore8(pr * (vload8(0, drow + j) - dl), 0, drow + j);
    }
    for (long j = end / 8 * 8; j < end; j++) {
        acc_t pr = exp(att_score(row, m, &p, mb, j) - ls);
        row[j] = pr;
        drow[j] = pr * (drow[j] - dl);
    }
    for (long j = end; j < k.n; j++)
        row[j] = drow[j] = 0;
}
