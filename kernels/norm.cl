/* norm.cl - layer, group and batch normalisation, forward and backward, one
 * row of statistics per work-group (or per work-item with -DNN_ITEM).
 * Statistics use Welford's update per lane and Chan's merge across lanes,
 * in float for float16/bfloat16 inputs (double for float64). Roles: X input,
 * Y output, G grad_output, Z grad_input, W weight/bias and their gradients,
 * S saved mean/rstd, R running mean/var. Unused pointers alias another
 * buffer and are never read. */
#include "nn_params.h"

inline void nn_welford_merge(acc_t *c, acc_t *m, acc_t *q, acc_t c2, acc_t m2, acc_t q2)
{
    acc_t n = *c + c2;
    if (n == 0)
        return;
    acc_t d = m2 - *m;
    *m += d * (c2 / n);
    *q += q2 + d * d * (*c * c2 / n);
    *c = n;
}

__kernel void nn_norm_fwd(__global const X_T *x, __global Y_T *y, __global const W_T *w, __global const W_T *bias,
                          __global S_T *smean, __global S_T *srstd, __global R_T *rmean, __global R_T *rvar,
                          tocl_nn_rows p, tocl_nn_norm q)
{
#if !defined(NN_ITEM)
    __local acc_t sc[TOCL_NN_LOCAL_MAX], sm[TOCL_NN_LOCAL_MAX], sq[TOCL_NN_LOCAL_MAX];
#endif
    long r = NN_ROW();
    NN_ROW_GUARD(r, p.rows);
    long base = nn_base(&p, r);
    /* statistics are computed in eval mode too: every work-item passes the
     * same barriers (PoCL needs that), and eval then uses the running ones */
    acc_t mean, rstd;
    {
        acc_t c = 0, m = 0, m2 = 0;
        for (long j = NN_LANE; j < p.n; j += NN_LANES) {
            acc_t v = LDX(x, p.x_off + base + nn_elem(&p, j));
            c += 1;
            acc_t d = v - m;
            m += d / c;
            m2 += d * (v - m);
        }
#if !defined(NN_ITEM)
        int l = get_local_id(0), lanes = get_local_size(0);
        sc[l] = c, sm[l] = m, sq[l] = m2;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int h = TOCL_NN_LOCAL_MAX / 2; h > 0; h >>= 1) {
            if (l < h && l + h < lanes) {
                acc_t c1 = sc[l], m1 = sm[l], q1 = sq[l];
                nn_welford_merge(&c1, &m1, &q1, sc[l + h], sm[l + h], sq[l + h]);
                sc[l] = c1, sm[l] = m1, sq[l] = q1;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        c = sc[0], m = sm[0], m2 = sq[0];
#endif
        acc_t var = m2 / c;
        mean = m;
        rstd = (acc_t)1 / sqrt((var > 0 ? var : 0) + (acc_t)NN_REAL(q.eps, q.epsf));
        if (NN_LANE == 0 && !(q.flags & TOCL_NN_GIVEN_STATS)) {
            if (q.flags & TOCL_NN_WRITE_STATS) {
                STS(smean, q.mean_off + r, mean);
                STS(srstd, q.rstd_off + r, rstd);
            }
            if (q.flags & TOCL_NN_UPDATE_RUNNING) {
                acc_t mo = (acc_t)NN_REAL(q.momentum, q.momentumf);
                STR(rmean, q.rm_off + r, mo * mean + ((acc_t)1 - mo) * LDR(rmean, q.rm_off + r));
                STR(rvar, q.rv_off + r, mo * (m2 / (c - 1)) + ((acc_t)1 - mo) * LDR(rvar, q.rv_off + r));
            }
        }
    }
    if (q.flags & TOCL_NN_GIVEN_STATS) {
        mean = LDR(rmean, q.rm_off + r);
        rstd = (acc_t)1 / sqrt(LDR(rvar, q.rv_off + r) + (acc_t)NN_REAL(q.eps, q.epsf));
    }
    if (!(q.flags & TOCL_NN_WRITE_Y))
        return;
    long wb = (r % q.wmod) * q.wrs;
    for (long j = NN_LANE; j < p.n; j += NN_LANES) {
        long e = base + nn_elem(&p, j);
        acc_t v = (LDX(x, p.x_off + e) - mean) * rstd;
        long k = wb + j / q.wdiv;
        if (q.flags & TOCL_NN_HAS_W)
            v *= LDW(w, q.w_off + k);
        if (q.flags & TOCL_NN_HAS_B)
            v += LDW(bias, q.b_off + k);
        STY(y, p.y_off + e, v);
    }
}

/* Per row: with dyw = dy * w and xh = (x - mean) * rstd,
 *   training: dx = rstd * (dyw - sum(dyw) / n - xh * sum(dyw * xh) / n)
 *   GIVEN_STATS (batch norm eval, running stats): dx = dyw * rstd
 *   STORE_DW/STORE_DB: dw[r] = sum(dy * xh), db[r] = sum(dy). */
__kernel void nn_norm_bwd(__global const X_T *x, __global const G_T *g, __global Z_T *z, __global const W_T *w,
                          __global const S_T *smean, __global const S_T *srstd, __global const R_T *rmean,
                          __global const R_T *rvar, __global W_T *dw, __global W_T *db, tocl_nn_rows p,
                          tocl_nn_norm q)
{
    long r = NN_ROW();
    NN_ROW_GUARD(r, p.rows);
    long base = nn_base(&p, r), wb = (r % q.wmod) * q.wrs;
    acc_t mean, rstd;
    int given = q.flags & TOCL_NN_GIVEN_STATS, has_w = q.flags & TOCL_NN_HAS_W;
    if (given) {
        mean = LDR(rmean, q.rm_off + r);
        rstd = (acc_t)1 / sqrt(LDR(rvar, q.rv_off + r) + (acc_t)NN_REAL(q.eps, q.epsf));
    } else {
        mean = LDS(smean, q.mean_off + r);
        rstd = LDS(srstd, q.rstd_off + r);
    }
    acc_t s_dy = 0, s_dyxh = 0, s_dyw = 0, s_dywxh = 0;
    for (long j = NN_LANE; j < p.n; j += NN_LANES) {
        long e = base + nn_elem(&p, j);
        acc_t dy = LDG(g, p.g_off + e), xh = (LDX(x, p.x_off + e) - mean) * rstd;
        acc_t wv = has_w ? LDW(w, q.w_off + wb + j / q.wdiv) : (acc_t)1;
        s_dy += dy;
        s_dyxh += dy * xh;
        s_dyw += dy * wv;
        s_dywxh += dy * wv * xh;
    }
    NN_SCRATCH(scr);
    s_dy = nn_sum(s_dy, scr);
    s_dyxh = nn_sum(s_dyxh, scr);
    s_dyw = nn_sum(s_dyw, scr);
    s_dywxh = nn_sum(s_dywxh, scr);
    if (NN_LANE == 0) {
        if (q.flags & TOCL_NN_STORE_DW)
            STW(dw, q.dw_off + r, s_dyxh);
        if (q.flags & TOCL_NN_STORE_DB)
            STW(db, q.db_off + r, s_dy);
    }
    if (!(q.flags & TOCL_NN_WRITE_Y))
        return;
    acc_t inv_n = (acc_t)1 / (acc_t)p.n;
    for (long j = NN_LANE; j < p.n; j += NN_LANES) {
        long e = base + nn_elem(&p, j);
        acc_t dy = LDG(g, p.g_off + e);
        acc_t wv = has_w ? LDW(w, q.w_off + wb + j / q.wdiv) : (acc_t)1;
        acc_t v;
        if (given) {
            v = dy * wv * rstd;
        } else {
            acc_t xh = (LDX(x, p.x_off + e) - mean) * rstd;
            v = rstd * (dy * wv - s_dyw * inv_n - xh * s_dywxh * inv_n);
        }
        STZ(z, p.z_off + e, v);
    }
}

/* Affine gradients of layer and group norm: one work-item per column c,
 * dw[c] = sum(dy * xh), db[c] = sum(dy) over a < A, k < B. */
__kernel void nn_norm_cols(__global const X_T *x, __global const G_T *g, __global const S_T *smean,
                           __global const S_T *srstd, __global W_T *dw, __global W_T *db, tocl_nn_cols p, int flags)
{
    long c = get_global_id(0);
    if (c >= p.cols)
        return;
    acc_t s_dy = 0, s_dyxh = 0;
    for (long a = 0; a < p.A; a++) {
        long si = a * p.ss + c / p.cdiv;
        acc_t mean = LDS(smean, p.mean_off + si), rstd = LDS(srstd, p.rstd_off + si);
        long e0 = a * p.sa + c * p.sc;
        for (long k = 0; k < p.B; k++) {
            acc_t dy = LDG(g, p.g_off + e0 + k);
            s_dy += dy;
            s_dyxh += dy * (LDX(x, p.x_off + e0 + k) - mean) * rstd;
        }
    }
    if (flags & TOCL_NN_HAS_W)
        STW(dw, p.dw_off + c, s_dyxh);
    if (flags & TOCL_NN_HAS_B)
        STW(db, p.db_off + c, s_dy);
}
