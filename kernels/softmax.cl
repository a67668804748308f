/* softmax.cl - softmax and log-softmax along one dimension, forward and
 * backward, one row per work-group (or per work-item with -DNN_ITEM, for
 * short or strided rows). Roles: X input (forward) or grad_output
 * (backward), Y output (forward) or saved output (backward), Z grad_input.
 * float16/bfloat16 are computed in float.
 *
 * Forward reads a row twice: an online pass keeps (max, sum of exp(x - max))
 * per lane and merges lanes, the second writes. Elements of -inf add 0, so
 * a row mixing -inf with finite values is exact; a row of only -inf, or one
 * holding +inf or NaN, gives NaN as on the CPU. */
#include "nn_params.h"

inline void nn_online(acc_t x, acc_t *m, acc_t *s)
{
    if (x > *m) {
        *s = *s * exp(*m - x);
        *m = x;
    }
    if (x != -INFINITY)
        *s += exp(x - *m);
}

#if defined(NN_VEC)
/* A contiguous row, NN_VW lanes at a time: max, then the sum of exp(x - max)
 * (x = -inf adds exp(-inf) = 0; +inf or NaN make the row NaN, as above),
 * then the outputs. Three reads of a row that stays in cache. */
inline void nn_softmax_fwd_vec(__global const X_T *x, __global Y_T *y, long n, int log_)
{
    long nv = n - n % NN_VW, j;
    accv_t mv = (accv_t)(-INFINITY);
    for (j = 0; j < nv; j += NN_VW) {
        accv_t v = LDVX(x, j);
        mv = select(mv, v, v > mv);
    }
    acc_t m = nn_hmax(mv);
    for (; j < n; j++)
        m = LDX(x, j) > m ? LDX(x, j) : m;
    accv_t sv = 0;
    for (j = 0; j < nv; j += NN_VW)
        sv += exp(LDVX(x, j) - m);
    acc_t s = nn_hsum(sv);
    for (j = nv; j < n; j++)
        s += exp(LDX(x, j) - m);
    acc_t lse = log(s), inv = (acc_t)1 / s;
    for (j = 0; j < nv; j += NN_VW) {
        accv_t v = LDVX(x, j) - m;
        if (log_)
            STVY(y, j, v - lse);
        else
            STVY(y, j, exp(v) * inv);
    }
    for (; j < n; j++) {
        acc_t v = LDX(x, j) - m;
        if (log_)
            STY(y, j, v - lse);
        else
            STY(y, j, exp(v) * inv);
    }
}

inline void nn_softmax_bwd_vec(__global const X_T *g, __global const Y_T *y, __global Z_T *z, long n, int log_)
{
    long nv = n - n % NN_VW, j;
    accv_t sv = 0;
    for (j = 0; j < nv; j += NN_VW)
        sv += log_ ? LDVX(g, j) : LDVX(g, j) * LDVY(y, j);
    acc_t s = nn_hsum(sv);
    for (; j < n; j++)
        s += log_ ? LDX(g, j) : LDX(g, j) * LDY(y, j);
    for (j = 0; j < nv; j += NN_VW) {
        accv_t gv = LDVX(g, j), yv = LDVY(y, j);
        STVZ(z, j, log_ ? gv - exp(yv) * s : yv * (gv - s));
    }
    for (; j < n; j++) {
        acc_t gv = LDX(g, j), yv = LDY(y, j);
        STZ(z, j, log_ ? gv - exp(yv) * s : yv * (gv - s));
    }
}
#endif

__kernel void nn_softmax_fwd(__global const X_T *x, __global Y_T *y, tocl_nn_rows p, int log_)
{
    long r = NN_ROW();
    NN_ROW_GUARD(r, p.rows);
    long base = nn_base(&p, r);
#if defined(NN_VEC)
    if (NN_VEC_ROW(p)) {
        nn_softmax_fwd_vec(x + p.x_off + base, y + p.y_off + base, p.n, log_);
        return;
    }
#endif
    acc_t m = -INFINITY, s = 0;
    for (long j = NN_LANE; j < p.n; j += NN_LANES)
        nn_online(LDX(x, p.x_off + base + nn_elem(&p, j)), &m, &s);
#if !defined(NN_ITEM)
    __local acc_t sm[TOCL_NN_LOCAL_MAX], ss[TOCL_NN_LOCAL_MAX];
    int l = get_local_id(0), lanes = get_local_size(0);
    sm[l] = m;
    ss[l] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = TOCL_NN_LOCAL_MAX / 2; h > 0; h >>= 1) {
        if (l < h && l + h < lanes) {
            acc_t m1 = sm[l], m2 = sm[l + h], s1 = ss[l], s2 = ss[l + h];
            acc_t mm = m2 > m1 ? m2 : m1;
            sm[l] = mm;
            ss[l] = (m1 == mm ? s1 : s1 * exp(m1 - mm)) + (m2 == mm ? s2 : s2 * exp(m2 - mm));
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    m = sm[0];
    s = ss[0];
#endif
    acc_t lse = log(s), inv = (acc_t)1 / s;
    for (long j = NN_LANE; j < p.n; j += NN_LANES) {
        long e = base + nn_elem(&p, j);
        acc_t v = LDX(x, p.x_off + e) - m;
        if (log_)
            STY(y, p.y_off + e, v - lse);
        else
            STY(y, p.y_off + e, exp(v) * inv);
    }
}

/* softmax: z = y * (g - sum(g * y)); log-softmax: z = g - exp(y) * sum(g). */
__kernel void nn_softmax_bwd(__global const X_T *g, __global const Y_T *y, __global Z_T *z, tocl_nn_rows p,
                             int log_)
{
    long r = NN_ROW();
    NN_ROW_GUARD(r, p.rows);
    long base = nn_base(&p, r);
#if defined(NN_VEC)
    if (NN_VEC_ROW(p)) {
        nn_softmax_bwd_vec(g + p.x_off + base, y + p.y_off + base, z + p.z_off + base, p.n, log_);
        return;
    }
#endif
    acc_t s = 0;
    for (long j = NN_LANE; j < p.n; j += NN_LANES) {
        long e = base + nn_elem(&p, j);
        acc_t gv = LDX(g, p.x_off + e);
        s += log_ ? gv : gv * LDY(y, p.y_off + e);
    }
    NN_SCRATCH(scr);
    s = nn_sum(s, scr);
    for (long j = NN_LANE; j < p.n; j += NN_LANES) {
        long e = base + nn_elem(&p, j);
        acc_t gv = LDX(g, p.x_off + e), yv = LDY(y, p.y_off + e);
        STZ(z, p.z_off + e, log_ ? gv - exp(yv) * s : yv * (gv - s));
    }
}
