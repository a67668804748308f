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

#if defined(NN_VEC)
/* Mean and sum of squared deviations of a contiguous row, NN_VW lanes at a
 * time: two passes (the exact mean first), no division per element. */
inline void nn_moments_vec(__global const X_T *x, long n, acc_t *mean, acc_t *m2)
{
    long nv = n - n % NN_VW, j;
    accv_t sv = 0;
    for (j = 0; j < nv; j += NN_VW)
        sv += LDVX(x, j);
    acc_t s = nn_hsum(sv);
    for (; j < n; j++)
        s += LDX(x, j);
    acc_t m = s / (acc_t)n;
    accv_t qv = 0;
    for (j = 0; j < nv; j += NN_VW) {
        accv_t d = LDVX(x, j) - m;
        qv += d * d;
    }
    acc_t q = nn_hsum(qv);
    for (; j < n; j++) {
        acc_t d = LDX(x, j) - m;
        q += d * d;
    }
    *mean = m;
    *m2 = q;
}

/* y = (x - mean) * rstd [* w] [+ b] over a contiguous row; w and b (when
 * present) contiguous along it. */
inline void nn_norm_write_vec(__global const X_T *x, __global Y_T *y, __global const W_T *w,
                              __global const W_T *b, long n, acc_t mean, acc_t rstd, int flags)
{
    long nv = n - n % NN_VW, j;
    for (j = 0; j < nv; j += NN_VW) {
        accv_t v = (LDVX(x, j) - mean) * rstd;
        if (flags & TOCL_NN_HAS_W)
            v *= LDVW(w, j);
        if (flags & TOCL_NN_HAS_B)
            v += LDVW(b, j);
        STVY(y, j, v);
    }
    for (; j < n; j++) {
        acc_t v = (LDX(x, j) - mean) * rstd;
        if (flags & TOCL_NN_HAS_W)
            v *= LDW(w, j);
        if (flags & TOCL_NN_HAS_B)
            v += LDW(b, j);
        STY(y, j, v);
    }
}
#define NN_VEC_AFFINE(q) ((q).wdiv == 1 || !((q).flags & (TOCL_NN_HAS_W | TOCL_NN_HAS_B)))

/* Batch norm on a CPU (TOCL_NN_RUNS): a work-item walks its channel's
 * p.n / p.b runs of p.b contiguous elements (run a at a * p.sa), NN_VW
 * lanes at a time. Rows are long (N * HW, up to millions), so sums are
 * cascaded: lanes over blocks of at most NN_BLK elements of a run (a fresh
 * vector each), blocks into a chunk until it holds NN_BLK elements, 64
 * chunks into a group, groups into the total: no partial sum grows much
 * longer than the terms added to it. NN_RUNS_SUM defines
 * name(x, g, sa, b, runs, mean, rstd, o) with the per-element terms VEC
 * (lanes of v0, v1 from xv, and dy when G is read) and SCL (scalars). */
#define NN_BLK 512
/* NN_SUM_F64 (the host's choice, norm_runs_options: the backward, and the
 * forward of long channels, where the device has cl_khr_fp64): the sums
 * are double for float, float16 and bfloat16 too (a double8 add per float8
 * loaded costs nothing at memory bandwidth; float lanes of 64 terms were up
 * to 4x further from a float64 referee than the CPU on 4K-element
 * channels) */
#if defined(NN_SUM_F64) && !defined(NN_ACC_F64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double sum_t;
typedef double8 sumv_t;
#define NN_SUMV(v) convert_double8(v)
#else
typedef acc_t sum_t;
typedef accv_t sumv_t;
#define NN_SUMV(v) (v)
#endif
inline sum_t nn_hsum_s(sumv_t v)
{
    return ((v.s0 + v.s1) + (v.s2 + v.s3)) + ((v.s4 + v.s5) + (v.s6 + v.s7));
}
#define NN_RUNS_SUM(name, VEC, SCL)                                                                                \
    inline void name(__global const X_T *x, __global const G_T *g, long sa, long b, long runs, acc_t mean,          \
                     acc_t rstd, sum_t *o)                                                                         \
    {                                                                                                              \
        sum_t c0 = 0, c1 = 0, m0 = 0, m1 = 0, t0 = 0, t1 = 0;                                                      \
        long cn = 0, mn = 0;                                                                                       \
        for (long a = 0; a < runs; a++) {                                                                          \
            __global const X_T *xr = x + a * sa;                                                                   \
            __global const G_T *gr = g + a * sa;                                                                   \
            for (long j0 = 0; j0 < b; j0 += NN_BLK) {                                                              \
                long j1 = min(b, j0 + (long)NN_BLK), jv = j0 + (j1 - j0) / NN_VW * NN_VW, j;                       \
                sumv_t v0 = 0, v1 = 0;                                                                             \
                for (j = j0; j < jv; j += NN_VW) {                                                                 \
                    VEC;                                                                                           \
                }                                                                                                  \
                sum_t s0 = nn_hsum_s(v0), s1 = nn_hsum_s(v1);                                                      \
                for (; j < j1; j++) {                                                                              \
                    SCL;                                                                                           \
                }                                                                                                  \
                c0 += s0, c1 += s1, cn += j1 - j0;                                                                 \
                if (cn >= NN_BLK) {                                                                                \
                    m0 += c0, m1 += c1, c0 = 0, c1 = 0, cn = 0;                                                    \
                    if (++mn == 64)                                                                                \
                        t0 += m0, t1 += m1, m0 = 0, m1 = 0, mn = 0;                                                \
                }                                                                                                  \
            }                                                                                                      \
        }                                                                                                          \
        o[0] = t0 + (m0 + c0), o[1] = t1 + (m1 + c1);                                                              \
    }
/* sum(x) */
NN_RUNS_SUM(nn_runs_sum_x, v0 += NN_SUMV(LDVX(xr, j)), s0 += LDX(xr, j))
/* sum((x - mean)^2) */
NN_RUNS_SUM(nn_runs_sum_dev2, sumv_t d = NN_SUMV(LDVX(xr, j)) - mean; v0 += d * d, sum_t d = (sum_t)LDX(xr, j) - mean;
            s0 += d * d)
/* sum(dy), sum(dy * xh) */
NN_RUNS_SUM(nn_runs_sum_bwd, sumv_t dy = NN_SUMV(LDVG(gr, j)); v0 += dy; v1 += dy * NN_SUMV((LDVX(xr, j) - mean) * rstd),
            acc_t dy = LDG(gr, j); s0 += dy; s1 += (sum_t)dy * ((LDX(xr, j) - mean) * rstd))
/* y = (x - mean) * rstd [* w] [+ b] over the runs (w, b: the channel's) */
inline void nn_runs_write(__global const X_T *x, __global Y_T *y, long sa, long b, long runs, acc_t mean, acc_t rstd,
                          acc_t w, acc_t bb, int flags)
{
    long bv = b - b % NN_VW;
    for (long a = 0; a < runs; a++) {
        __global const X_T *xr = x + a * sa;
        __global Y_T *yr = y + a * sa;
        long j;
        for (j = 0; j < bv; j += NN_VW) {
            accv_t v = (LDVX(xr, j) - mean) * rstd;
            if (flags & TOCL_NN_HAS_W)
                v *= w;
            if (flags & TOCL_NN_HAS_B)
                v += bb;
            STVY(yr, j, v);
        }
        for (; j < b; j++) {
            acc_t v = (LDX(xr, j) - mean) * rstd;
            if (flags & TOCL_NN_HAS_W)
                v *= w;
            if (flags & TOCL_NN_HAS_B)
                v += bb;
            STY(yr, j, v);
        }
    }
}
/* Batch norm rows walked as runs: the host asks (TOCL_NN_RUNS) for rows
 * of whole runs with one weight each. */
#define NN_RUNS(p, q) (((q).flags & TOCL_NN_RUNS) && (p).n > 0 && (p).b > 0 && (p).n % (p).b == 0 && (q).wdiv >= (p).n)
#endif

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
#if defined(NN_VEC)
    int vec = NN_VEC_ROW(p) && NN_VEC_AFFINE(q), runs = NN_RUNS(p, q);
#endif
    /* statistics are computed in eval mode too: every work-item passes the
     * same barriers (PoCL needs that), and eval then uses the running ones */
    acc_t mean, rstd;
    {
        acc_t c = 0, m = 0, m2 = 0;
#if defined(NN_VEC)
        if (runs) { /* eval (GIVEN_STATS) needs no statistics: no barriers here */
            sum_t o[2];
            __global const X_T *xr = x + p.x_off + base;
            c = (acc_t)p.n;
            if (!(q.flags & TOCL_NN_GIVEN_STATS)) {
                nn_runs_sum_x(xr, (__global const G_T *)xr, p.sa, p.b, p.n / p.b, 0, 0, o);
                m = (acc_t)(o[0] / p.n);
                nn_runs_sum_dev2(xr, (__global const G_T *)xr, p.sa, p.b, p.n / p.b, m, 0, o);
                m2 = (acc_t)o[0];
            }
        } else if (vec) {
            c = (acc_t)p.n;
            nn_moments_vec(x + p.x_off + base, p.n, &m, &m2);
        } else
#endif
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
#if defined(NN_VEC)
    if (runs) {
        acc_t wv = (q.flags & TOCL_NN_HAS_W) ? LDW(w, q.w_off + wb) : (acc_t)1;
        acc_t bv = (q.flags & TOCL_NN_HAS_B) ? LDW(bias, q.b_off + wb) : (acc_t)0;
        nn_runs_write(x + p.x_off + base, y + p.y_off + base, p.sa, p.b, p.n / p.b, mean, rstd, wv, bv, q.flags);
        return;
    }
    if (vec) {
        nn_norm_write_vec(x + p.x_off + base, y + p.y_off + base, w + q.w_off + wb, bias + q.b_off + wb, p.n, mean,
                          rstd, q.flags);
        return;
    }
#endif
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

#if defined(NN_VEC)
/* The four row sums of nn_norm_bwd over a contiguous row. */
inline void nn_norm_bwd_sums_vec(__global const X_T *x, __global const G_T *g, __global const W_T *w, long n,
                                 acc_t mean, acc_t rstd, int has_w, acc_t *sums)
{
    long nv = n - n % NN_VW, j;
    accv_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (j = 0; j < nv; j += NN_VW) {
        accv_t dy = LDVG(g, j), xh = (LDVX(x, j) - mean) * rstd;
        accv_t dyw = has_w ? dy * LDVW(w, j) : dy;
        a0 += dy, a1 += dy * xh, a2 += dyw, a3 += dyw * xh;
    }
    acc_t s0 = nn_hsum(a0), s1 = nn_hsum(a1), s2 = nn_hsum(a2), s3 = nn_hsum(a3);
    for (; j < n; j++) {
        acc_t dy = LDG(g, j), xh = (LDX(x, j) - mean) * rstd;
        acc_t dyw = has_w ? dy * LDW(w, j) : dy;
        s0 += dy, s1 += dy * xh, s2 += dyw, s3 += dyw * xh;
    }
    sums[0] = s0, sums[1] = s1, sums[2] = s2, sums[3] = s3;
}

/* dx of nn_norm_bwd (training formula) over a contiguous row. */
inline void nn_norm_bwd_write_vec(__global const X_T *x, __global const G_T *g, __global Z_T *z,
                                  __global const W_T *w, long n, acc_t mean, acc_t rstd, int has_w, acc_t c_dyw,
                                  acc_t c_dywxh)
{
    long nv = n - n % NN_VW, j;
    for (j = 0; j < nv; j += NN_VW) {
        accv_t dy = LDVG(g, j), xh = (LDVX(x, j) - mean) * rstd;
        accv_t dyw = has_w ? dy * LDVW(w, j) : dy;
        STVZ(z, j, rstd * (dyw - c_dyw - xh * c_dywxh));
    }
    for (; j < n; j++) {
        acc_t dy = LDG(g, j), xh = (LDX(x, j) - mean) * rstd;
        acc_t dyw = has_w ? dy * LDW(w, j) : dy;
        STZ(z, j, rstd * (dyw - c_dyw - xh * c_dywxh));
    }
}
#endif

#if defined(NN_VEC)
/* dx of nn_norm_bwd over the runs of a batch-norm row (w: the channel's) */
inline void nn_runs_bwd_write(__global const X_T *x, __global const G_T *g, __global Z_T *z, long sa, long b,
                              long runs, acc_t mean, acc_t rstd, acc_t w, int given, acc_t c_dyw, acc_t c_dywxh)
{
    long bv = b - b % NN_VW;
    for (long a = 0; a < runs; a++) {
        __global const X_T *xr = x + a * sa;
        __global const G_T *gr = g + a * sa;
        __global Z_T *zr = z + a * sa;
        long j;
        if (given) {
            for (j = 0; j < bv; j += NN_VW)
                STVZ(zr, j, LDVG(gr, j) * w * rstd);
            for (; j < b; j++)
                STZ(zr, j, LDG(gr, j) * w * rstd);
            continue;
        }
        for (j = 0; j < bv; j += NN_VW) {
            accv_t xh = (LDVX(xr, j) - mean) * rstd;
            STVZ(zr, j, rstd * (LDVG(gr, j) * w - c_dyw - xh * c_dywxh));
        }
        for (; j < b; j++) {
            acc_t xh = (LDX(xr, j) - mean) * rstd;
            STZ(zr, j, rstd * (LDG(gr, j) * w - c_dyw - xh * c_dywxh));
        }
    }
}
#endif

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
#if defined(NN_VEC)
    int vec = NN_VEC_ROW(p) && (q.wdiv == 1 || !has_w), runs = NN_RUNS(p, q);
    if (runs) {
        sum_t o[2];
        acc_t wv = has_w ? LDW(w, q.w_off + wb) : (acc_t)1;
        nn_runs_sum_bwd(x + p.x_off + base, g + p.g_off + base, p.sa, p.b, p.n / p.b, mean, rstd, o);
        s_dy = (acc_t)o[0], s_dyxh = (acc_t)o[1], s_dyw = (acc_t)(o[0] * wv), s_dywxh = (acc_t)(o[1] * wv);
    } else if (vec) {
        acc_t sums[4];
        nn_norm_bwd_sums_vec(x + p.x_off + base, g + p.g_off + base, w + q.w_off + wb, p.n, mean, rstd, has_w,
                             sums);
        s_dy = sums[0], s_dyxh = sums[1], s_dyw = sums[2], s_dywxh = sums[3];
    } else
#endif
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
#if defined(NN_VEC)
    if (runs) {
        acc_t wv = has_w ? LDW(w, q.w_off + wb) : (acc_t)1;
        nn_runs_bwd_write(x + p.x_off + base, g + p.g_off + base, z + p.z_off + base, p.sa, p.b, p.n / p.b, mean,
                          rstd, wv, given, s_dyw * inv_n, s_dywxh * inv_n);
        return;
    }
    if (vec && !given) {
        nn_norm_bwd_write_vec(x + p.x_off + base, g + p.g_off + base, z + p.z_off + base, w + q.w_off + wb, p.n,
                              mean, rstd, has_w, s_dyw * inv_n, s_dywxh * inv_n);
        return;
    }
#endif
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

#if defined(NN_VEC)
/* Layer norm's affine gradients on a CPU (nn_norm_cols walks a column per
 * work-item, a cache line per element): here a work-item streams a chunk
 * of whole contiguous rows and adds dy and dy * xh per column into its own
 * row pair of partials (part[chunk][0][c], part[chunk][1][c], which stay
 * in L1), NN_VW columns at a time; nn_norm_cols_sum adds the chunks in
 * order. Needs B == 1, sc == 1 and one statistic per row (c / cdiv == 0). */
__kernel void nn_norm_cols_rows(__global const X_T *x, __global const G_T *g, __global const S_T *smean,
                                __global const S_T *srstd, __global acc_t *part, tocl_nn_cols p, long rows_per,
                                long part_off)
{
    long ch = get_global_id(0), cols = p.cols;
    part += part_off;
    long a0 = ch * rows_per, a1 = min(p.A, a0 + rows_per), nv = cols - cols % NN_VW, c;
    __global acc_t *pdy = part + ch * 2 * cols, *pxh = pdy + cols;
    for (c = 0; c < cols; c++)
        pdy[c] = 0, pxh[c] = 0;
    for (long a = a0; a < a1; a++) {
        acc_t mean = LDS(smean, p.mean_off + a * p.ss), rstd = LDS(srstd, p.rstd_off + a * p.ss);
        __global const X_T *xr = x + p.x_off + a * p.sa;
        __global const G_T *gr = g + p.g_off + a * p.sa;
        for (c = 0; c < nv; c += NN_VW) {
            accv_t dy = LDVG(gr, c);
            vstore8(vload8(0, pdy + c) + dy, 0, pdy + c);
            vstore8(vload8(0, pxh + c) + dy * ((LDVX(xr, c) - mean) * rstd), 0, pxh + c);
        }
        for (; c < cols; c++) {
            acc_t dy = LDG(gr, c);
            pdy[c] += dy;
            pxh[c] += dy * ((LDX(xr, c) - mean) * rstd);
        }
    }
}

__kernel void nn_norm_cols_sum(__global const acc_t *part, __global W_T *dw, __global W_T *db, tocl_nn_cols p,
                               long chunks, int flags, long part_off)
{
    part += part_off;
    long c = get_global_id(0);
    if (c >= p.cols)
        return;
    acc_t s_dy = 0, s_dyxh = 0;
    for (long ch = 0; ch < chunks; ch++) {
        s_dy += part[(2 * ch) * p.cols + c];
        s_dyxh += part[(2 * ch + 1) * p.cols + c];
    }
    if (flags & TOCL_NN_HAS_W)
        STW(dw, p.dw_off + c, s_dyxh);
    if (flags & TOCL_NN_HAS_B)
        STW(db, p.db_off + c, s_dy);
}
#endif
