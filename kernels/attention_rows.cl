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
    long t, ii;        /* GEMM batch item of the block, row within the block */
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
    r.t = t, r.ii = ii;
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

/* Scores -> probabilities; lse of the row. pw = 0: in place. pw > 0: the
 * probabilities go to s + poff instead, in the packed A layout of the GEMM
 * that multiplies them by V (gemm_params.h: panels of pw rows, element
 * (row, j) of batch item t at t * round_up(rows, pw) * n + (row / pw) * n *
 * pw + j * pw + row % pw), which then needs no packing pass of its own. */
__kernel void att_rows_fwd(__global Y_T *s, __global const X_T *m, __global Y_T *lse, tocl_att_params p,
                           tocl_att_block k, long poff, long pw)
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
    if (pw > 0) {
        __global Y_T *pr = s + poff + r.t * ((k.rows + pw - 1) / pw * pw) * k.n + r.ii / pw * k.n * pw + r.ii % pw;
        for (long j = 0; j < end / 8 * 8; j += 8) {
            accv x = vload8(0, row + j) * inv;
            pr[(j + 0) * pw] = x.s0, pr[(j + 1) * pw] = x.s1, pr[(j + 2) * pw] = x.s2, pr[(j + 3) * pw] = x.s3;
            pr[(j + 4) * pw] = x.s4, pr[(j + 5) * pw] = x.s5, pr[(j + 6) * pw] = x.s6, pr[(j + 7) * pw] = x.s7;
        }
        for (long j = end / 8 * 8; j < end; j++)
            pr[j * pw] = row[j] * inv;
        for (long j = end; j < k.n; j++)
            pr[j * pw] = 0;
        lse[p.lse_off + (r.b * p.Hq + r.h) * p.L + r.i] = l != 0 ? mx + log(l) : -INFINITY;
        return;
    }
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

/* Key j's transposed scores of 8 query rows (lanes; `rows` of them real)
 * with the mask added and, where `masked`, keys past a lane's visible
 * count vis set to -inf. */
inline accv att_scores8_t(__global const Y_T *st, __global const X_T *m, const tocl_att_params *p, long mb, long j,
                          long sld, long rows, bool masked, accm vis)
{
    accv x = vload8(0, st + j * sld);
    if (p->has_mask) {
        acc_t *e = (acc_t *)&x;
        for (int c = 0; c < 8 && c < rows; c++)
            e[c] += LDX(m, mb + c * p->ms[2] + j * p->ms[3]);
    }
    return masked ? select(x, (accv)(-INFINITY), (accm)j >= vis) : x;
}

/* The forward row step on transposed scores, 8 query rows per work-item,
 * one per vector lane (runtime/ops/attention_gemm.c, CPU devices whose
 * GEMM register block is 8 rows): s holds S^T of each batch item, element
 * (key j, row ii) at j * sld + ii, so the 8 rows of a panel are one
 * contiguous vector per key, and the probabilities go to s + poff in the
 * packed A layout of O = P V (panels of 8 rows: (ii / 8) * n * 8 + j * 8 +
 * ii % 8), also one contiguous vector per key. Every lane keeps its own
 * max, sum and NaN flag; causality is a compare per lane. Lanes past the
 * block's rows compute on whatever is there and are never stored. */
__kernel void att_rows_fwd_t(__global Y_T *s, __global const X_T *m, __global Y_T *lse, tocl_att_params p,
                             tocl_att_block k, long poff, long sld)
{
    long np = (k.rows + 7) / 8, gid = get_global_id(0);
    if (gid >= k.nb * np)
        return;
    long t = gid / np, r0 = (gid - t * np) * 8, u = k.t0 + t, hk = u % p.Hk;
    long b = k.b0 + u / p.Hk, h = hk * (p.Hq / p.Hk) + k.r, n = k.n;
    __global Y_T *st = s + k.s_off + t * n * sld + r0;
    __global Y_T *pp = s + poff + t * ((k.rows + 7) / 8 * 8) * n + r0 * n;
    long i0 = k.i0 + r0;
#if defined(NN_ACC_F64)
    long8 lane = (long8)(0, 1, 2, 3, 4, 5, 6, 7);
    long8 vis = p.causal ? min((long8)n, (long8)i0 + lane + 1) : (long8)n;
#else
    int8 lane = (int8)(0, 1, 2, 3, 4, 5, 6, 7);
    int8 vis = p.causal ? min((int8)(int)n, (int8)(int)i0 + lane + 1) : (int8)(int)n;
#endif
    long mb = p.m_off + b * p.ms[0] + h * p.ms[1] + i0 * p.ms[2];
    /* keys from jc on are causal-masked in some lane */
    long jc = p.causal ? min(n, i0 + 1) : n;
    accv mx = -INFINITY;
    accm nanm = 0;
    for (long j = 0; j < n; j++) {
        accv x = att_scores8_t(st, m, &p, mb, j, sld, k.rows - r0, j >= jc, vis);
        nanm |= isnan(x);
        mx = fmax(mx, x);
    }
    mx = select(mx, (accv)NAN, nanm);
    accv ms = select(mx, (accv)0, mx == (accv)(-INFINITY));
    accv l = 0;
    for (long j = 0; j < n; j++) {
        accv x = att_scores8_t(st, m, &p, mb, j, sld, k.rows - r0, j >= jc, vis);
        accv e = exp(x - ms);
        vstore8(e, 0, pp + j * 8);
        l += e;
    }
    accv inv = select((accv)1 / l, (accv)0, l == (accv)0);
    for (long j = 0; j < n; j++)
        vstore8(vload8(0, pp + j * 8) * inv, 0, pp + j * 8);
    accv ls = select(mx + log(l), (accv)(-INFINITY), l == (accv)0);
    acc_t *lv = (acc_t *)&ls;
    long lb = p.lse_off + (b * p.Hq + h) * p.L + i0;
    for (int c = 0; c < 8 && r0 + c < k.rows; c++)
        lse[lb + c] = lv[c];
}
