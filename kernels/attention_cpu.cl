/* attention_cpu.cl - scaled dot-product attention on a CPU device: the
 * forward in one kernel, the backward in two (runtime/ops/attention.c routes
 * float32, float16 and bfloat16 calls here; float64 takes the route by
 * matrix products, attention_gemm.c). Storage role X (nn_params.h) is the
 * dtype of q, k, v, the output, the gradients and the additive mask;
 * arithmetic is float32, as are lse and delta.
 *
 * One work-item (one per work-group, as the CPU GEMM) owns QT query rows of
 * one (batch, head) and walks the keys KR at a time, online-softmax style:
 *
 *   s[r] = K[k0 + r] . Q^T            KR x QT scores, queries in the vector lanes
 *   m' = max(m, max_r s[r]);  p[r] = exp(s[r] - m');  l = l exp(m - m') + sum_r p[r]
 *   O^T = O^T exp(m - m') + V[k0 .. k0 + KR)^T p
 *
 * Queries in the lanes make every softmax step a lane-wise vector operation
 * (no horizontal max or sum), and both products broadcast one scalar of K or
 * V against vectors of the tile: KR x NV fused multiply-adds per step with
 * the accumulators in registers, the same shape as the GEMM's micro-kernel.
 * The tile's Q^T (pre-scaled) and O^T live in local memory, which on a CPU
 * is cached memory private to the work-item. Nothing is packed and no score
 * block goes to memory, which the route by matrix products pays for (at
 * L = 128 its packs and row kernel cost as much as its two products).
 * Causal tiles stop at their last visible key.
 *
 * The backward recomputes probabilities from lse, FlashAttention-2 style,
 * in the same register blocks: att_cpu_bwd_q owns query rows (lanes) and
 * makes dQ and delta = rowsum(dO o O); att_cpu_bwd_kv owns 32 keys (lanes),
 * walks the queries of every query head that shares its kv head, and makes
 * dK and dV. Each output has one writer: no atomics, deterministic. */
#include "nn_params.h"
#include "attention_params.h"

#define VW 16         /* lanes of one vector */
#define NV 2          /* vectors of queries per tile (3 measured within noise of 2, 1 and 4 slower) */
#define QT (VW * NV)  /* query rows per work-item: ATT_CPU_QT of attention.c */
#define KR 8          /* keys per step (6 and 4: within noise or slower) */
typedef float16 vf;
typedef int16 vi;

#define ATT_LANES ((vi)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))

/* acc[r][c] = sum over d < n of rows[r][d * rs] * tile[d][c]: KR rows of
 * global memory broadcast against the lanes of a [n][QT] local tile. */
#define ATT_BLOCK_DOT(acc, rows, rs, tile, n)                                  \
    do {                                                                       \
        _Pragma("unroll") for (int r_ = 0; r_ < KR; r_++)                      \
            _Pragma("unroll") for (int c_ = 0; c_ < NV; c_++)                  \
                acc[r_][c_] = (vf)0.0f;                                        \
        for (long d_ = 0; d_ < (n); d_++) {                                    \
            vf t_[NV];                                                         \
            _Pragma("unroll") for (int c_ = 0; c_ < NV; c_++)                  \
                t_[c_] = vload16(0, (tile) + d_ * QT + c_ * VW);               \
            const long o_ = d_ * (rs);                                         \
            _Pragma("unroll") for (int r_ = 0; r_ < KR; r_++) {                \
                vf a_ = (vf)LDX(rows[r_], o_);                                 \
                _Pragma("unroll") for (int c_ = 0; c_ < NV; c_++)              \
                    acc[r_][c_] = fma(a_, t_[c_], acc[r_][c_]);                \
            }                                                                  \
        }                                                                      \
    } while (0)

/* tile[e][c] = tile[e][c] (x keep[c] when scaled) + sum over r of
 * rows[r][e * rs] * w[r][c], for e < n: a rank-KR update of a local tile. */
#define ATT_TILE_UPDATE(tile, n, rows, rs, w, scaled, keep)                    \
    do {                                                                       \
        for (long e_ = 0; e_ < (n); e_++) {                                    \
            vf acc_[NV];                                                       \
            _Pragma("unroll") for (int c_ = 0; c_ < NV; c_++) {                \
                acc_[c_] = vload16(0, (tile) + e_ * QT + c_ * VW);             \
                if (scaled)                                                    \
                    acc_[c_] *= keep[c_];                                      \
            }                                                                  \
            const long o_ = e_ * (rs);                                         \
            _Pragma("unroll") for (int r_ = 0; r_ < KR; r_++) {                \
                vf a_ = (vf)LDX(rows[r_], o_);                                 \
                _Pragma("unroll") for (int c_ = 0; c_ < NV; c_++)              \
                    acc_[c_] = fma(a_, w[r_][c_], acc_[c_]);                   \
            }                                                                  \
            _Pragma("unroll") for (int c_ = 0; c_ < NV; c_++)                  \
                vstore16(acc_[c_], 0, (tile) + e_ * QT + c_ * VW);             \
        }                                                                      \
    } while (0)

/* tile[d][c] = f * x[min(c0 + c, n - 1) * xs + d * ds] for d < nd: QT rows
 * of a strided operand, transposed into the lanes (rows past n repeat the
 * last one; their results are never stored). */
inline void att_load_t(__local float *tile, __global const X_T *x, long c0, long n, long xs, long ds, long nd,
                       float f)
{
    for (int c = 0; c < QT; c++) {
        __global const X_T *row = x + min(c0 + c, n - 1) * xs;
        for (long d = 0; d < nd; d++)
            tile[d * QT + c] = LDX(row, d * ds) * f;
    }
}

/* x[(c0 + c) * xs + d * ds] = f * tile[d][c] for the rows c0 + c < n: the
 * inverse of att_load_t, storing a transposed result tile. */
inline void att_store_t(__global X_T *x, __local const float *tile, long c0, long n, long xs, long ds, long nd,
                        float f)
{
    for (int c = 0; c < QT && c0 + c < n; c++) {
        __global X_T *row = x + (c0 + c) * xs;
        for (long d = 0; d < nd; d++)
            STX(row, d * ds, tile[d * QT + c] * f);
    }
}

inline void att_zero(__local float *tile, long n)
{
    for (long j = 0; j < n * QT; j++)
        tile[j] = 0.0f;
}

/* exp(s - base) with base -inf (a row that sees no key) read as 0, so
 * hidden scores (-inf) give 0 rather than NaN. */
inline vf att_exp_from(vf s, vf base)
{
    return exp(s - select(base, (vf)0.0f, base == (vf)(-INFINITY)));
}

/* s[r][c] += mask element (row r0 + r, lane l0 + c), rows rs and lanes ls
 * apart in mk (indices past rn and ln repeat the last one): the additive
 * mask gathered into the block, whichever of queries and keys the lanes
 * hold. Uses p, mk. */
#define ATT_ADD_MASK(s, r0, rn, rs, l0, ln, ls)                                                     \
    do {                                                                                            \
        if (p.has_mask) {                                                                           \
            _Pragma("unroll") for (int r = 0; r < KR; r++) {                                        \
                __global const X_T *mr = mk + min((r0) + r, (rn) - 1) * (rs);                       \
                float lanes[QT];                                                                    \
                for (int c = 0; c < QT; c++)                                                        \
                    lanes[c] = LDX(mr, min((l0) + c, (ln) - 1) * (ls));                             \
                _Pragma("unroll") for (int c = 0; c < NV; c++)                                      \
                    s[r][c] += vload16(0, lanes + c * VW);                                          \
            }                                                                                       \
        }                                                                                           \
    } while (0)

/* Queries in the lanes (rows i0 + lane), keys k0 + r in the rows: add the
 * mask, then hide keys at or past kend and, with causality, keys after a
 * lane's query. Uses p, mk, i0, S. */
#define ATT_QROWS_MASK_AND_HIDE(s, k0, kend)                                                        \
    do {                                                                                            \
        ATT_ADD_MASK(s, k0, S, p.ms[3], i0, p.L, p.ms[2]);                                          \
        if ((k0) + KR > (kend) || (p.causal && (k0) + KR - 1 > i0)) {                                \
            _Pragma("unroll") for (int r = 0; r < KR; r++)                                          \
                _Pragma("unroll") for (int c = 0; c < NV; c++) {                                    \
                    vi hide = (k0) + r >= (kend) ? (vi)(-1)                                         \
                              : p.causal ? ((vi)(int)((k0) + r) > ATT_LANES + (vi)(int)(i0 + c * VW)) \
                                         : (vi)0;                                                   \
                    s[r][c] = select(s[r][c], (vf)(-INFINITY), hide);                               \
                }                                                                                   \
        }                                                                                           \
    } while (0)

/* The start of a kernel over query tiles: this work-item's rows i0 .. i0 +
 * QT of head h of batch item b (nothing to do past L), its kv head's K and V
 * and its mask, and the pre-scaled Q^T tile in qt. */
#define ATT_QTILE_BEGIN()                                                                          \
    const long i0 = get_global_id(0) * QT, h = get_global_id(1), b = get_global_id(2);             \
    if (i0 >= p.L)                                                                                 \
        return;                                                                                    \
    const long hk = h / (p.Hq / p.Hk), D = p.D, Dv = p.Dv, S = p.S;                                \
    __global const X_T *k = K + p.k_off + b * p.ks[0] + hk * p.ks[1];                              \
    __global const X_T *v = V + p.v_off + b * p.vs[0] + hk * p.vs[1];                              \
    __global const X_T *mk = M + p.m_off + b * p.ms[0] + h * p.ms[1];                              \
    att_load_t(qt, Q + p.q_off + b * p.qs[0] + h * p.qs[1], i0, p.L, p.qs[2], p.qs[3], D, p.scalef)

/* Scores of keys k0 .. k0 + KR (rows) against the pre-scaled Q^T tile qt
 * (queries in the lanes), masked and hidden; kr and vr are pointed at those
 * keys' rows of K and V (keys past S at the last one). Uses p, k, v, qt,
 * mk, i0, S, D. */
#define ATT_QROWS_SCORES(s, kr, vr, k0, kend)                                  \
    do {                                                                       \
        _Pragma("unroll") for (int r = 0; r < KR; r++) {                       \
            kr[r] = k + min((k0) + r, S - 1) * p.ks[2];                        \
            vr[r] = v + min((k0) + r, S - 1) * p.vs[2];                        \
        }                                                                      \
        ATT_BLOCK_DOT(s, kr, p.ks[3], qt, D);                                  \
        ATT_QROWS_MASK_AND_HIDE(s, k0, kend);                                  \
    } while (0)

__kernel void att_cpu_fwd(__global const X_T *Q, __global const X_T *K, __global const X_T *V,
                          __global const X_T *M, __global X_T *O, __global float *lse, tocl_att_params p,
                          __local float *qt, __local float *ot)
{
    ATT_QTILE_BEGIN();
    att_zero(ot, Dv);
    vf m[NV], l[NV];
    _Pragma("unroll") for (int c = 0; c < NV; c++)
        m[c] = (vf)(-INFINITY), l[c] = (vf)0.0f;
    const long kend = p.causal ? min(S, i0 + QT) : S; /* keys past it are hidden from every row */
    for (long k0 = 0; k0 < kend; k0 += KR) {
        __global const X_T *kr[KR], *vr[KR];
        vf s[KR][NV];
        ATT_QROWS_SCORES(s, kr, vr, k0, kend);
        vf alpha[NV];
        _Pragma("unroll") for (int c = 0; c < NV; c++) {
            vf mx = s[0][c];
            _Pragma("unroll") for (int r = 1; r < KR; r++)
                mx = fmax(mx, s[r][c]);
            vf mn = fmax(m[c], mx);
            alpha[c] = att_exp_from(m[c], mn);
            vf sum = (vf)0.0f;
            _Pragma("unroll") for (int r = 0; r < KR; r++) {
                s[r][c] = att_exp_from(s[r][c], mn);
                sum += s[r][c];
            }
            l[c] = l[c] * alpha[c] + sum;
            m[c] = mn;
        }
        ATT_TILE_UPDATE(ot, Dv, vr, p.vs[3], s, 1, alpha);
    }
    float ls[QT], ms[QT];
    _Pragma("unroll") for (int c = 0; c < NV; c++) {
        vstore16(l[c], 0, ls + c * VW);
        vstore16(m[c], 0, ms + c * VW);
    }
    __global float *lrow = lse + p.lse_off + (b * p.Hq + h) * p.L;
    for (int c = 0; c < QT && i0 + c < p.L; c++) {
        /* A row that saw no key: output 0 and lse -inf, as the other routes. */
        const float inv = ls[c] > 0.0f ? 1.0f / ls[c] : 0.0f;
        __global X_T *orow = O + p.o_off + b * p.os[0] + h * p.os[1] + (i0 + c) * p.os[2];
        for (long e = 0; e < Dv; e++)
            STX(orow, e * p.os[3], ot[e * QT + c] * inv);
        lrow[i0 + c] = ls[c] > 0.0f ? ms[c] + log(ls[c]) : -INFINITY;
    }
}

__kernel void att_cpu_bwd_q(__global const X_T *Q, __global const X_T *K, __global const X_T *V,
                            __global const X_T *M, __global const X_T *O, __global const X_T *G,
                            __global X_T *DQ, __global const float *lse, __global float *delta, tocl_att_params p,
                            __local float *qt, __local float *gt, __local float *dqt, __local float *pt)
{
    ATT_QTILE_BEGIN();
    __global const X_T *o = O + p.o_off + b * p.os[0] + h * p.os[1];
    __global const X_T *g = G + p.g_off + b * p.gs[0] + h * p.gs[1];
    att_load_t(gt, g, i0, p.L, p.gs[2], p.gs[3], Dv, 1.0f);
    att_zero(dqt, D);
    /* delta = rowsum(dO o O), which att_cpu_bwd_kv reads after this kernel */
    float dl[QT], lr[QT];
    const long row0 = (b * p.Hq + h) * p.L;
    for (int c = 0; c < QT; c++) {
        const long i = min(i0 + c, p.L - 1);
        __global const X_T *orow = o + i * p.os[2];
        float acc = 0.0f;
        for (long e = 0; e < Dv; e++)
            acc += gt[e * QT + c] * LDX(orow, e * p.os[3]);
        dl[c] = acc;
        lr[c] = lse[p.lse_off + row0 + i];
        if (i0 + c < p.L)
            delta[p.delta_off + row0 + i] = acc;
    }
    vf dlt[NV], lsv[NV];
    _Pragma("unroll") for (int c = 0; c < NV; c++) {
        dlt[c] = vload16(0, dl + c * VW);
        lsv[c] = vload16(0, lr + c * VW);
    }
    const long kend = p.causal ? min(S, i0 + QT) : S;
    for (long k0 = 0; k0 < kend; k0 += KR) {
        __global const X_T *kr[KR], *vr[KR];
        vf s[KR][NV];
        ATT_QROWS_SCORES(s, kr, vr, k0, kend);
        _Pragma("unroll") for (int r = 0; r < KR; r++)
            _Pragma("unroll") for (int c = 0; c < NV; c++)
                vstore16(att_exp_from(s[r][c], lsv[c]), 0, pt + r * QT + c * VW);
        ATT_BLOCK_DOT(s, vr, p.vs[3], gt, Dv); /* dP = dO V^T, into the same registers */
        _Pragma("unroll") for (int r = 0; r < KR; r++)
            _Pragma("unroll") for (int c = 0; c < NV; c++)
                s[r][c] = vload16(0, pt + r * QT + c * VW) * (s[r][c] - dlt[c]); /* dS */
        ATT_TILE_UPDATE(dqt, D, kr, p.ks[3], s, 0, dlt);
    }
    att_store_t(DQ + p.dq_off + b * p.dqs[0] + h * p.dqs[1], dqt, i0, p.L, p.dqs[2], p.dqs[3], D, p.scalef);
}

__kernel void att_cpu_bwd_kv(__global const X_T *Q, __global const X_T *K, __global const X_T *V,
                             __global const X_T *M, __global const X_T *G, __global X_T *DK, __global X_T *DV,
                             __global const float *lse, __global const float *delta, tocl_att_params p,
                             __local float *kt, __local float *vt, __local float *dkt, __local float *dvt,
                             __local float *pt)
{
    const long j0 = get_global_id(0) * QT, hk = get_global_id(1), b = get_global_id(2);
    if (j0 >= p.S)
        return;
    const long D = p.D, Dv = p.Dv, S = p.S, L = p.L, rep = p.Hq / p.Hk;
    att_load_t(kt, K + p.k_off + b * p.ks[0] + hk * p.ks[1], j0, S, p.ks[2], p.ks[3], D, 1.0f);
    att_load_t(vt, V + p.v_off + b * p.vs[0] + hk * p.vs[1], j0, S, p.vs[2], p.vs[3], Dv, 1.0f);
    att_zero(dkt, D);
    att_zero(dvt, Dv);
    /* queries before j0 see none of these keys under causality */
    const long qstart = p.causal ? (j0 / KR) * KR : 0;
    for (long hh = 0; hh < rep; hh++) {
        const long h = hk * rep + hh, row0 = (b * p.Hq + h) * L;
        __global const X_T *q = Q + p.q_off + b * p.qs[0] + h * p.qs[1];
        __global const X_T *g = G + p.g_off + b * p.gs[0] + h * p.gs[1];
        __global const X_T *mk = M + p.m_off + b * p.ms[0] + h * p.ms[1];
        for (long q0 = qstart; q0 < L; q0 += KR) {
            __global const X_T *qr[KR], *gr[KR];
            vf lsr[KR], dlr[KR];
            _Pragma("unroll") for (int r = 0; r < KR; r++) {
                const long i = min(q0 + r, L - 1);
                qr[r] = q + i * p.qs[2];
                gr[r] = g + i * p.gs[2];
                lsr[r] = (vf)lse[p.lse_off + row0 + i];
                dlr[r] = (vf)delta[p.delta_off + row0 + i];
            }
            vf s[KR][NV];
            ATT_BLOCK_DOT(s, qr, p.qs[3], kt, D);
            _Pragma("unroll") for (int r = 0; r < KR; r++)
                _Pragma("unroll") for (int c = 0; c < NV; c++)
                    s[r][c] *= p.scalef;
            ATT_ADD_MASK(s, q0, L, p.ms[2], j0, S, p.ms[3]); /* a row of the mask per query */
            /* hidden: keys past S, queries past L, and with causality a key after the query */
            if (j0 + QT > S || q0 + KR > L || (p.causal && j0 + QT - 1 > q0)) {
                _Pragma("unroll") for (int r = 0; r < KR; r++)
                    _Pragma("unroll") for (int c = 0; c < NV; c++) {
                        vi key = ATT_LANES + (vi)(int)(j0 + c * VW);
                        vi hide = q0 + r >= L ? (vi)(-1) : key >= (vi)(int)S;
                        if (p.causal)
                            hide |= key > (vi)(int)(q0 + r);
                        s[r][c] = select(s[r][c], (vf)(-INFINITY), hide);
                    }
            }
            _Pragma("unroll") for (int r = 0; r < KR; r++)
                _Pragma("unroll") for (int c = 0; c < NV; c++)
                    s[r][c] = att_exp_from(s[r][c], lsr[r]); /* P */
            ATT_TILE_UPDATE(dvt, Dv, gr, p.gs[3], s, 0, lsr); /* dV += P^T dO */
            _Pragma("unroll") for (int r = 0; r < KR; r++)
                _Pragma("unroll") for (int c = 0; c < NV; c++)
                    vstore16(s[r][c], 0, pt + r * QT + c * VW);
            ATT_BLOCK_DOT(s, gr, p.gs[3], vt, Dv); /* dP = dO V^T */
            _Pragma("unroll") for (int r = 0; r < KR; r++)
                _Pragma("unroll") for (int c = 0; c < NV; c++)
                    s[r][c] = vload16(0, pt + r * QT + c * VW) * (s[r][c] - dlr[r]); /* dS */
            ATT_TILE_UPDATE(dkt, D, qr, p.qs[3], s, 0, lsr); /* dK += dS^T Q (scaled below) */
        }
    }
    att_store_t(DK + p.dk_off + b * p.dks[0] + hk * p.dks[1], dkt, j0, S, p.dks[2], p.dks[3], D, p.scalef);
    att_store_t(DV + p.dv_off + b * p.dvs[0] + hk * p.dvs[1], dvt, j0, S, p.dvs[2], p.dvs[3], Dv, 1.0f);
}

/* ------------------------------------------------------------- one row */

/* A few query rows (decoding: one new token against its cache), one row
 * per work-item: the tiled kernel above puts 32 queries in its lanes, so a
 * single row used one lane in 32 (16 us for 4 heads x 41 keys x 64). Here
 * the head dimension is in the lanes, 8 at a time, and keys are taken one
 * by one with the same online softmax. The host sends rows whose q, k and v
 * are contiguous along the head dimension, with D and Dv multiples of 8 and
 * at most ATT_ROW_MAXV vectors (attention.c, att_row_usable). */
#define ATT_ROW_MAXV 32 /* 256 / 8 */

inline float8 att_row_ld8(__global const X_T *p)
{
    return (float8)(LDX(p, 0), LDX(p, 1), LDX(p, 2), LDX(p, 3), LDX(p, 4), LDX(p, 5), LDX(p, 6), LDX(p, 7));
}

inline float att_row_exp_from(float s, float base)
{
    return exp(s - (base == -INFINITY ? 0.0f : base));
}

/* Row i of head h, batch b: keys j < Sc from k / v, keys Sc.. from kn /
 * vn at their strides kns / vns (att_cpu_row_append; att_cpu_row passes
 * Sc = S). */
inline void att_row(__global const X_T *Q, __global const X_T *K, __global const X_T *V, __global const X_T *M,
                    __global X_T *O, __global float *lse, const tocl_att_params *pp, __global const X_T *kn,
                    __global const X_T *vn, long Sc, long kns, long vns, long i, long h, long b)
{
    const long hk = h / (pp->Hq / pp->Hk), nd = pp->D / 8, nv = pp->Dv / 8;
    __global const X_T *q = Q + pp->q_off + b * pp->qs[0] + h * pp->qs[1] + i * pp->qs[2];
    __global const X_T *k = K + pp->k_off + b * pp->ks[0] + hk * pp->ks[1];
    __global const X_T *v = V + pp->v_off + b * pp->vs[0] + hk * pp->vs[1];
    __global const X_T *mk = M + pp->m_off + b * pp->ms[0] + h * pp->ms[1] + i * pp->ms[2];
    float8 qv[ATT_ROW_MAXV], acc[ATT_ROW_MAXV];
    for (long c = 0; c < nd; c++)
        qv[c] = att_row_ld8(q + c * 8) * pp->scalef;
    for (long c = 0; c < nv; c++)
        acc[c] = (float8)0.0f;
    float m = -INFINITY, l = 0.0f;
    const long kend = pp->causal ? min(pp->S, i + 1) : pp->S; /* top-left aligned, as the tiled kernel */
    for (long j = 0; j < kend; j++) {
        __global const X_T *kr = j < Sc ? k + j * pp->ks[2] : kn + (j - Sc) * kns;
        __global const X_T *vr = j < Sc ? v + j * pp->vs[2] : vn + (j - Sc) * vns;
        float8 d8 = (float8)0.0f;
        for (long c = 0; c < nd; c++)
            d8 = fma(qv[c], att_row_ld8(kr + c * 8), d8);
        float4 d4 = d8.lo + d8.hi;
        float2 d2 = d4.lo + d4.hi;
        float s = d2.x + d2.y;
        if (pp->has_mask)
            s += LDX(mk, j * pp->ms[3]);
        if (s == -INFINITY) /* masked out: no weight, and no NaN from -inf - -inf */
            continue;
        float mn = fmax(m, s), alpha = att_row_exp_from(m, mn), w = att_row_exp_from(s, mn);
        l = l * alpha + w;
        m = mn;
        for (long c = 0; c < nv; c++)
            acc[c] = fma((float8)w, att_row_ld8(vr + c * 8), acc[c] * alpha);
    }
    /* A row that saw no key: output 0 and lse -inf, as the other routes. */
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
    __global X_T *orow = O + pp->o_off + b * pp->os[0] + h * pp->os[1] + i * pp->os[2];
    for (long c = 0; c < nv; c++) {
        float lanes[8];
        vstore8(acc[c] * inv, 0, lanes);
        for (int e = 0; e < 8; e++)
            STX(orow, (c * 8 + e) * pp->os[3], lanes[e]);
    }
    lse[pp->lse_off + (b * pp->Hq + h) * pp->L + i] = l > 0.0f ? m + log(l) : -INFINITY;
}

__kernel void att_cpu_row(__global const X_T *Q, __global const X_T *K, __global const X_T *V,
                          __global const X_T *M, __global X_T *O, __global float *lse, tocl_att_params p)
{
    const long i = get_global_id(0), h = get_global_id(1), b = get_global_id(2);
    if (i < p.L)
        att_row(Q, K, V, M, O, lse, &p, K, V, p.S, 0, 0, i, h, b);
}

/* n elements (a multiple of 8), both rows contiguous, storage to storage
 * as their bits (half cannot be assigned without cl_khr_fp16; a cat keeps
 * NaN payloads). */
inline void att_row_copy(__global X_T *dst, __global const X_T *src, long n)
{
    for (long c = 0; c < n; c += 8)
        if (sizeof(X_T) == 2)
            vstore8(vload8(0, (__global const ushort *)src + c), 0, (__global ushort *)dst + c);
        else
            vstore8(vload8(0, (__global const uint *)src + c), 0, (__global uint *)dst + c);
}

/* att_cpu_row over keys cat(k, kn) and values cat(v, vn) along the
 * sequence (tocl_att_append), writing those cats to ko and vo as well: a
 * decoding step's cache growth and its attention in one launch instead of
 * a cat's and this one's. Row 0 of the first query head of each key head
 * copies that head's keys and values, after its own attention. */
__kernel void att_cpu_row_append(__global const X_T *Q, __global const X_T *K, __global const X_T *V,
                                 __global const X_T *M, __global X_T *O, __global float *lse, tocl_att_params p,
                                 __global const X_T *KN, __global const X_T *VN, __global X_T *KO,
                                 __global X_T *VO, tocl_att_append a)
{
    const long i = get_global_id(0), h = get_global_id(1), b = get_global_id(2);
    if (i >= p.L)
        return;
    const long hk = h / (p.Hq / p.Hk);
    __global const X_T *kn = KN + a.kn_off + b * a.kns[0] + hk * a.kns[1];
    __global const X_T *vn = VN + a.vn_off + b * a.vns[0] + hk * a.vns[1];
    att_row(Q, K, V, M, O, lse, &p, kn, vn, a.Sc, a.kns[2], a.vns[2], i, h, b);
    if (i != 0 || h % (p.Hq / p.Hk) != 0)
        return;
    __global const X_T *k = K + p.k_off + b * p.ks[0] + hk * p.ks[1];
    __global const X_T *v = V + p.v_off + b * p.vs[0] + hk * p.vs[1];
    __global X_T *ko = KO + a.ko_off + b * a.kos[0] + hk * a.kos[1];
    __global X_T *vo = VO + a.vo_off + b * a.vos[0] + hk * a.vos[1];
    for (long j = 0; j < p.S; j++) {
        __global const X_T *kr = j < a.Sc ? k + j * p.ks[2] : kn + (j - a.Sc) * a.kns[2];
        __global const X_T *vr = j < a.Sc ? v + j * p.vs[2] : vn + (j - a.Sc) * a.vns[2];
        att_row_copy(ko + j * a.kos[2], kr, p.D);
        att_row_copy(vo + j * a.vos[2], vr, p.Dv);
    }
}
