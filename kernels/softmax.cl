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

__kernel void nn_softmax_fwd(__global const X_T *x, __global Y_T *y, tocl_nn_rows p, int log_)
{
    long r = NN_ROW();
    NN_ROW_GUARD(r, p.rows);
    long base = nn_base(&p, r);
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
