/* attention_cpu.cl - scaled dot-product attention forward on a CPU device
 * in one kernel (runtime/ops/attention.c routes float32, float16 and
 * bfloat16 calls here; float64 takes the route by matrix products,
 * attention_gemm.c). Storage role X (nn_params.h) is the dtype of q, k, v,
 * the output and the additive mask; arithmetic is float32.
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
 * Causal tiles stop at their last visible key. */
#include "nn_params.h"
#include "attention_params.h"

#define VW 16         /* lanes of one vector */
#define NV 2          /* vectors of queries per tile (3 measured within noise of 2, 1 and 4 slower) */
#define QT (VW * NV)  /* query rows per work-item: ATT_CPU_QT of attention.c */
#define KR 8          /* keys per step (6 and 4: within noise or slower) */
typedef float16 vf;
typedef int16 vi;

__kernel void att_cpu_fwd(__global const X_T *Q, __global const X_T *K, __global const X_T *V,
                          __global const X_T *M, __global X_T *O, __global float *lse, tocl_att_params p,
                          __local float *qt, __local float *ot)
{
    const long i0 = get_global_id(0) * QT, h = get_global_id(1), b = get_global_id(2);
    if (i0 >= p.L)
        return;
    const long hk = h / (p.Hq / p.Hk), D = p.D, Dv = p.Dv, S = p.S;
    __global const X_T *q = Q + p.q_off + b * p.qs[0] + h * p.qs[1];
    __global const X_T *k = K + p.k_off + b * p.ks[0] + hk * p.ks[1];
    __global const X_T *v = V + p.v_off + b * p.vs[0] + hk * p.vs[1];
    __global const X_T *mk = M + p.m_off + b * p.ms[0] + h * p.ms[1];
    /* qt[d][lane] = scale * q[i0 + lane][d]; rows past L repeat row L - 1 (never stored) */
    for (int c = 0; c < QT; c++) {
        __global const X_T *qr = q + min(i0 + c, p.L - 1) * p.qs[2];
        for (long d = 0; d < D; d++)
            qt[d * QT + c] = LDX(qr, d * p.qs[3]) * p.scalef;
    }
    for (long j = 0; j < Dv * QT; j++)
        ot[j] = 0.0f;
    const vi lane = (vi)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    vf m[NV], l[NV];
    _Pragma("unroll") for (int c = 0; c < NV; c++)
        m[c] = (vf)(-INFINITY), l[c] = (vf)0.0f;
    const long kend = p.causal ? min(S, i0 + QT) : S; /* keys past it are hidden from every row */
    for (long k0 = 0; k0 < kend; k0 += KR) {
        __global const X_T *kr[KR];
        _Pragma("unroll") for (int r = 0; r < KR; r++)
            kr[r] = k + min(k0 + r, S - 1) * p.ks[2];
        vf s[KR][NV];
        _Pragma("unroll") for (int r = 0; r < KR; r++)
            _Pragma("unroll") for (int c = 0; c < NV; c++)
                s[r][c] = (vf)0.0f;
        for (long d = 0; d < D; d++) {
            vf qv[NV];
            _Pragma("unroll") for (int c = 0; c < NV; c++)
                qv[c] = vload16(0, qt + d * QT + c * VW);
            const long kd = d * p.ks[3];
            _Pragma("unroll") for (int r = 0; r < KR; r++) {
                vf a = (vf)LDX(kr[r], kd);
                _Pragma("unroll") for (int c = 0; c < NV; c++)
                    s[r][c] = fma(a, qv[c], s[r][c]);
            }
        }
        if (p.has_mask) { /* the additive mask: a column of it per key, gathered */
            _Pragma("unroll") for (int r = 0; r < KR; r++) {
                __global const X_T *mc = mk + min(k0 + r, S - 1) * p.ms[3];
                float col[QT];
                for (int c = 0; c < QT; c++)
                    col[c] = LDX(mc, min(i0 + c, p.L - 1) * p.ms[2]);
                _Pragma("unroll") for (int c = 0; c < NV; c++)
                    s[r][c] += vload16(0, col + c * VW);
            }
        }
        /* Keys past S, and with causality keys after a lane's query, are hidden. */
        if (k0 + KR > kend || (p.causal && k0 + KR - 1 > i0)) {
            _Pragma("unroll") for (int r = 0; r < KR; r++)
                _Pragma("unroll") for (int c = 0; c < NV; c++) {
                    vi hide = k0 + r >= kend ? (vi)(-1)
                              : p.causal ? ((vi)(int)(k0 + r) > lane + (vi)(int)(i0 + c * VW))
                                         : (vi)0;
                    s[r][c] = select(s[r][c], (vf)(-INFINITY), hide);
                }
        }
        vf alpha[NV];
        _Pragma("unroll") for (int c = 0; c < NV; c++) {
            vf mx = s[0][c];
            _Pragma("unroll") for (int r = 1; r < KR; r++)
                mx = fmax(mx, s[r][c]);
            vf mn = fmax(m[c], mx);
            vf base = select(mn, (vf)0.0f, mn == (vf)(-INFINITY)); /* no key seen yet: exp(-inf) = 0 */
            alpha[c] = exp(m[c] - base);
            vf sum = (vf)0.0f;
            _Pragma("unroll") for (int r = 0; r < KR; r++) {
                s[r][c] = exp(s[r][c] - base);
                sum += s[r][c];
            }
            l[c] = l[c] * alpha[c] + sum;
            m[c] = mn;
        }
        __global const X_T *vr[KR];
        _Pragma("unroll") for (int r = 0; r < KR; r++)
            vr[r] = v + min(k0 + r, S - 1) * p.vs[2];
        for (long e = 0; e < Dv; e++) {
            vf acc[NV];
            _Pragma("unroll") for (int c = 0; c < NV; c++)
                acc[c] = vload16(0, ot + e * QT + c * VW) * alpha[c];
            const long ve = e * p.vs[3];
            _Pragma("unroll") for (int r = 0; r < KR; r++) {
                vf a = (vf)LDX(vr[r], ve);
                _Pragma("unroll") for (int c = 0; c < NV; c++)
                    acc[c] = fma(a, s[r][c], acc[c]);
            }
            _Pragma("unroll") for (int c = 0; c < NV; c++)
                vstore16(acc[c], 0, ot + e * QT + c * VW);
        }
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
