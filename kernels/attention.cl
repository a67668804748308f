/* attention.cl - scaled dot-product attention, flash style: scores are made
 * one tile of ATT_T keys (or queries) at a time and folded into running
 * statistics, so no L x S matrix ever exists. One work-item owns one query
 * row (forward, grad_q) or one key row (grad_k/grad_v); its work-group of
 * ATT_T items shares the other side's tile through local memory.
 *
 * Roles (nn_params.h macros): X storage of q, k, v, out, mask and grads;
 * Y of lse and delta (float, double for float64). Arithmetic in acc_t.
 * Build options: ATT_T (group size and tile length), ATT_DM (head dims are
 * at most this; sizes themselves are arguments). Rows are held as vectors
 * of 8 (zero-padded past the head dim): PoCL runs a work-item's loops as
 * scalar code, and explicit vectors are what gets SIMD there.
 *
 * A query whose every key is masked out gives output 0 and lse -inf, and
 * no gradient (as PyTorch's math path, which uses a safe softmax). No
 * work-item returns early: PoCL miscompiles a return ahead of a barrier. */
#include "nn_params.h"
#include "attention_params.h"

#define ATT_NV (ATT_DM / 8)
#if defined(NN_ACC_F64)
typedef double8 accv;
#else
typedef float8 accv;
#endif

inline long att_at(const long *s, long b, long h, long r, long c)
{
    return b * s[0] + h * s[1] + r * s[2] + c * s[3];
}

inline acc_t att_hsum(accv v)
{
    v.lo += v.hi;
    v.lo.lo += v.lo.hi;
    return v.s0 + v.s1;
}

/* Dot product of two zero-padded rows of nv vectors. */
inline acc_t att_dot(const accv *a, __local const accv *b, long nv)
{
    accv s = 0;
    for (long c = 0; c < nv; c++)
        s += a[c] * b[c];
    return att_hsum(s);
}

inline acc_t att_mask(__global const X_T *m, const tocl_att_params *p, long b, long h, long i, long j)
{
    if (p->causal && j > i)
        return -INFINITY;
    return p->has_mask ? LDX(m, p->m_off + att_at(p->ms, b, h, i, j)) : (acc_t)0;
}

inline acc_t att_scale(const tocl_att_params *p)
{
    return NN_REAL(p->scale, p->scalef);
}

/* Row r of a [rows, cols] slice at base with strides (rs, cs), times mul,
 * into the private vectors v (zero past cols). */
inline void att_row(__global const X_T *x, long base, long rs, long cs, long r, long cols, acc_t mul, accv *v)
{
    acc_t *e = (acc_t *)v;
    long cp = (cols + 7) / 8 * 8;
    for (long c = 0; c < cp; c++)
        e[c] = c < cols ? LDX(x, base + r * rs + c * cs) * mul : (acc_t)0;
}

inline void att_store(__global X_T *x, long base, long rs, long cs, long r, long cols, acc_t mul, const accv *v)
{
    const acc_t *e = (const acc_t *)v;
    for (long c = 0; c < cols; c++)
        STX(x, base + r * rs + c * cs, e[c] * mul);
}

/* Rows [r0, r0 + n) of such a slice into the local tile t (row pitch ATT_DM, zero-padded). */
inline void att_tile(__global const X_T *x, long base, long rs, long cs, long r0, long n, long cols, acc_t mul,
                     __local accv *tv)
{
    __local acc_t *t = (__local acc_t *)tv;
    long cp = (cols + 7) / 8 * 8;
    for (long e = get_local_id(0); e < n * cp; e += ATT_T) {
        long r = e / cp, c = e - r * cp;
        t[r * ATT_DM + c] = c < cols ? LDX(x, base + (r0 + r) * rs + c * cs) * mul : (acc_t)0;
    }
}

/* The last key a query row of [i0, i0 + ATT_T) may see, plus one. */
inline long att_key_end(const tocl_att_params *p, long i0)
{
    long last = min(i0 + ATT_T, p->L) - 1;
    return p->causal ? min(p->S, last + 1) : p->S;
}

__kernel void att_fwd(__global const X_T *q, __global const X_T *k, __global const X_T *v, __global const X_T *m,
                      __global X_T *o, __global Y_T *lse, tocl_att_params p)
{
    long bh = get_group_id(1), b = bh / p.Hq, h = bh % p.Hq, hk = h / (p.Hq / p.Hk);
    long i0 = get_group_id(0) * ATT_T, i = i0 + get_local_id(0);
    int live = i < p.L;
    long ir = live ? i : p.L - 1; /* dead items compute a real row and store nothing */
    __local accv kt[ATT_T * ATT_NV], vt[ATT_T * ATT_NV];
    accv qv[ATT_NV], acc[ATT_NV];
    acc_t s[ATT_T];
    long nk = (p.D + 7) / 8, nv = (p.Dv + 7) / 8;
    long qb = p.q_off + b * p.qs[0] + h * p.qs[1];
    att_row(q, qb, p.qs[2], p.qs[3], ir, p.D, att_scale(&p), qv);
    for (long c = 0; c < nv; c++)
        acc[c] = 0;
    acc_t mx = -INFINITY, l = 0;
    long kb = p.k_off + b * p.ks[0] + hk * p.ks[1], vb = p.v_off + b * p.vs[0] + hk * p.vs[1];
    long send = att_key_end(&p, i0);
    for (long j0 = 0; j0 < send; j0 += ATT_T) {
        long n = min((long)ATT_T, send - j0);
        barrier(CLK_LOCAL_MEM_FENCE);
        att_tile(k, kb, p.ks[2], p.ks[3], j0, n, p.D, 1, kt);
        att_tile(v, vb, p.vs[2], p.vs[3], j0, n, p.Dv, 1, vt);
        barrier(CLK_LOCAL_MEM_FENCE);
        /* the tile's scores first, so the running sums are rescaled once per tile */
        acc_t tm = -INFINITY;
        for (long t = 0; t < n; t++) {
            acc_t x = att_mask(m, &p, b, h, ir, j0 + t);
            if (x != -INFINITY)
                x += att_dot(qv, kt + t * ATT_NV, nk);
            s[t] = x;
            tm = fmax(tm, x);
        }
        if (tm == -INFINITY)
            continue;
        if (tm > mx) {
            acc_t c = exp(mx - tm);
            l *= c;
            for (long d = 0; d < nv; d++)
                acc[d] *= c;
            mx = tm;
        }
        for (long t = 0; t < n; t++) {
            if (s[t] == -INFINITY)
                continue;
            acc_t e = exp(s[t] - mx);
            l += e;
            for (long d = 0; d < nv; d++)
                acc[d] += e * vt[t * ATT_NV + d];
        }
    }
    if (live) {
        att_store(o, p.o_off + b * p.os[0] + h * p.os[1], p.os[2], p.os[3], i, p.Dv, l > 0 ? (acc_t)1 / l : 0, acc);
        lse[p.lse_off + bh * p.L + i] = l > 0 ? mx + log(l) : -INFINITY;
    }
}

/* grad_q, and delta_i = sum_d grad_out * out (used by att_bwd_kv, queued after). */
__kernel void att_bwd_q(__global const X_T *q, __global const X_T *k, __global const X_T *v, __global const X_T *m,
                        __global const X_T *o, __global const Y_T *lse, __global const X_T *g, __global X_T *dq,
                        __global Y_T *delta, tocl_att_params p)
{
    long bh = get_group_id(1), b = bh / p.Hq, h = bh % p.Hq, hk = h / (p.Hq / p.Hk);
    long i0 = get_group_id(0) * ATT_T, i = i0 + get_local_id(0);
    int live = i < p.L;
    long ir = live ? i : p.L - 1;
    __local accv kt[ATT_T * ATT_NV], vt[ATT_T * ATT_NV];
    accv qv[ATT_NV], gv[ATT_NV], dqa[ATT_NV];
    long nk = (p.D + 7) / 8, nv = (p.Dv + 7) / 8;
    acc_t sc = att_scale(&p);
    att_row(q, p.q_off + b * p.qs[0] + h * p.qs[1], p.qs[2], p.qs[3], ir, p.D, sc, qv);
    att_row(g, p.g_off + b * p.gs[0] + h * p.gs[1], p.gs[2], p.gs[3], ir, p.Dv, 1, gv);
    att_row(o, p.o_off + b * p.os[0] + h * p.os[1], p.os[2], p.os[3], ir, p.Dv, 1, dqa); /* out, briefly */
    accv dv8 = 0;
    for (long c = 0; c < nv; c++)
        dv8 += gv[c] * dqa[c];
    acc_t dl = att_hsum(dv8);
    for (long c = 0; c < nk; c++)
        dqa[c] = 0;
    acc_t ls = lse[p.lse_off + bh * p.L + ir];
    long kb = p.k_off + b * p.ks[0] + hk * p.ks[1], vb = p.v_off + b * p.vs[0] + hk * p.vs[1];
    long send = att_key_end(&p, i0);
    for (long j0 = 0; j0 < send; j0 += ATT_T) {
        long n = min((long)ATT_T, send - j0);
        barrier(CLK_LOCAL_MEM_FENCE);
        att_tile(k, kb, p.ks[2], p.ks[3], j0, n, p.D, 1, kt);
        att_tile(v, vb, p.vs[2], p.vs[3], j0, n, p.Dv, 1, vt);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (ls == -INFINITY)
            continue;
        for (long t = 0; t < n; t++) {
            acc_t x = att_mask(m, &p, b, h, ir, j0 + t);
            if (x == -INFINITY)
                continue;
            acc_t pr = exp(x + att_dot(qv, kt + t * ATT_NV, nk) - ls);
            acc_t ds = pr * (att_dot(gv, vt + t * ATT_NV, nv) - dl);
            for (long c = 0; c < nk; c++)
                dqa[c] += ds * kt[t * ATT_NV + c];
        }
    }
    if (live) {
        att_store(dq, p.dq_off + b * p.dqs[0] + h * p.dqs[1], p.dqs[2], p.dqs[3], i, p.D, sc, dqa);
        delta[p.delta_off + bh * p.L + i] = dl;
    }
}

/* grad_k and grad_v: one item per key row of kv head hk, summing over every
 * query row of every query head that reads hk, in a fixed order (no atomics:
 * the result does not depend on scheduling). */
__kernel void att_bwd_kv(__global const X_T *q, __global const X_T *k, __global const X_T *v, __global const X_T *m,
                         __global const Y_T *lse, __global const X_T *g, __global const Y_T *delta,
                         __global X_T *dk, __global X_T *dv, tocl_att_params p)
{
    long bh = get_group_id(1), b = bh / p.Hk, hk = bh % p.Hk, rep = p.Hq / p.Hk;
    long j0 = get_group_id(0) * ATT_T, j = j0 + get_local_id(0);
    int live = j < p.S;
    long jr = live ? j : p.S - 1;
    __local accv qt[ATT_T * ATT_NV], gt[ATT_T * ATT_NV];
    __local acc_t lt[ATT_T], dt[ATT_T];
    accv kv[ATT_NV], vv[ATT_NV], dka[ATT_NV], dva[ATT_NV];
    long nk = (p.D + 7) / 8, nv = (p.Dv + 7) / 8;
    acc_t sc = att_scale(&p);
    att_row(k, p.k_off + b * p.ks[0] + hk * p.ks[1], p.ks[2], p.ks[3], jr, p.D, 1, kv);
    att_row(v, p.v_off + b * p.vs[0] + hk * p.vs[1], p.vs[2], p.vs[3], jr, p.Dv, 1, vv);
    for (long c = 0; c < nk; c++)
        dka[c] = 0;
    for (long c = 0; c < nv; c++)
        dva[c] = 0;
    /* causal: queries before the group's first key see none of its keys */
    long istart = p.causal ? j0 : 0;
    for (long h = hk * rep; h < (hk + 1) * rep; h++) {
        long qb = p.q_off + b * p.qs[0] + h * p.qs[1], gb = p.g_off + b * p.gs[0] + h * p.gs[1];
        long rb = (b * p.Hq + h) * p.L;
        for (long i0 = istart; i0 < p.L; i0 += ATT_T) {
            long n = min((long)ATT_T, p.L - i0);
            barrier(CLK_LOCAL_MEM_FENCE);
            att_tile(q, qb, p.qs[2], p.qs[3], i0, n, p.D, sc, qt);
            att_tile(g, gb, p.gs[2], p.gs[3], i0, n, p.Dv, 1, gt);
            for (long e = get_local_id(0); e < n; e += ATT_T) {
                lt[e] = lse[p.lse_off + rb + i0 + e];
                dt[e] = delta[p.delta_off + rb + i0 + e];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            for (long t = 0; t < n; t++) {
                acc_t x = att_mask(m, &p, b, h, i0 + t, jr);
                if (x == -INFINITY || lt[t] == -INFINITY)
                    continue;
                __local const accv *qr = qt + t * ATT_NV, *gr = gt + t * ATT_NV;
                acc_t pr = exp(x + att_dot(kv, qr, nk) - lt[t]);
                acc_t ds = pr * (att_dot(vv, gr, nv) - dt[t]);
                for (long c = 0; c < nv; c++)
                    dva[c] += pr * gr[c];
                for (long c = 0; c < nk; c++)
                    dka[c] += ds * qr[c];
            }
        }
    }
    if (live) {
        att_store(dk, p.dk_off + b * p.dks[0] + hk * p.dks[1], p.dks[2], p.dks[3], j, p.D, 1, dka);
        att_store(dv, p.dv_off + b * p.dvs[0] + hk * p.dvs[1], p.dvs[2], p.dvs[3], j, p.Dv, 1, dva);
    }
}
