/* loss.cl - pointwise losses (mse, l1, smooth-l1, huber, binary cross
 * entropy) with their reductions, and the negative log likelihood, forward
 * and backward. Operands are dense; reductions run in one work-group (the
 * host launches one group then), so results do not depend on timing.
 * Roles: X input, T target, W weight, Y output, G grad_output, Z
 * grad_input; nll targets are int64. */
#include "nn_params.h"

/* Loss of one element; flag[0] := 1 for a BCE input outside [0, 1]. */
inline acc_t nn_loss1(int kind, acc_t x, acc_t t, acc_t prm, __global long *flag)
{
    acc_t d = x - t, a = fabs(d);
    switch (kind) {
    case TOCL_NN_LOSS_MSE:
        return d * d;
    case TOCL_NN_LOSS_L1:
        return a;
    case TOCL_NN_LOSS_SMOOTH_L1:
        return a < prm ? (acc_t)0.5 * d * d / prm : a - (acc_t)0.5 * prm;
    case TOCL_NN_LOSS_HUBER:
        return a < prm ? (acc_t)0.5 * d * d : prm * (a - (acc_t)0.5 * prm);
    default: { /* BCE: logs clamped at -100 as PyTorch */
        if (!(x >= 0 && x <= 1))
            flag[0] = 1;
        acc_t l1 = log(x), l0 = log1p(-x);
        l1 = l1 > (acc_t)-100 ? l1 : (acc_t)-100;
        l0 = l0 > (acc_t)-100 ? l0 : (acc_t)-100;
        return (t - (acc_t)1) * l0 - t * l1;
    }
    }
}

/* Derivative by x of one element's loss (as the CPU's backward kernels). */
inline acc_t nn_loss1_grad(int kind, acc_t x, acc_t t, acc_t prm)
{
    acc_t d = x - t;
    switch (kind) {
    case TOCL_NN_LOSS_MSE:
        return (acc_t)2 * d;
    case TOCL_NN_LOSS_L1:
        return d > 0 ? (acc_t)1 : d < 0 ? (acc_t)-1 : (acc_t)0;
    case TOCL_NN_LOSS_SMOOTH_L1:
        return d < -prm ? (acc_t)-1 : d > prm ? (acc_t)1 : d / prm;
    case TOCL_NN_LOSS_HUBER:
        return d < -prm ? -prm : d > prm ? prm : d;
    default: { /* BCE */
        acc_t den = ((acc_t)1 - x) * x;
        return d / (den > (acc_t)1e-12 ? den : (acc_t)1e-12);
    }
    }
}

__kernel void nn_loss_fwd(__global const X_T *x, __global const T_T *t, __global const W_T *w, __global Y_T *y,
                          __global long *flag, tocl_nn_loss p)
{
    flag += p.flag_off;
    acc_t s = 0, prm = (acc_t)NN_REAL(p.p, p.pf);
    for (long i = get_global_id(0); i < p.n; i += get_global_size(0)) {
        acc_t v = nn_loss1(p.kind, LDX(x, p.x_off + i), LDT(t, p.t_off + i), prm, flag);
        if (p.has_w)
            v *= LDW(w, p.w_off + i);
        if (p.reduction == TOCL_NN_RED_NONE)
            STY(y, p.y_off + i, v);
        else
            s += v;
    }
    NN_SCRATCH(scr); /* every launch reduces: no return ahead of a barrier */
    s = nn_sum(s, scr);
    if (p.reduction != TOCL_NN_RED_NONE && get_local_id(0) == 0)
        STY(y, p.y_off, p.reduction == TOCL_NN_RED_MEAN ? s / (acc_t)p.n : s);
}

__kernel void nn_loss_bwd(__global const X_T *x, __global const T_T *t, __global const W_T *w,
                          __global const G_T *g, __global Z_T *z, tocl_nn_loss p)
{
    long i = get_global_id(0);
    if (i >= p.n)
        return;
    acc_t prm = (acc_t)NN_REAL(p.p, p.pf);
    acc_t v = nn_loss1_grad(p.kind, LDX(x, p.x_off + i), LDT(t, p.t_off + i), prm);
    v *= LDG(g, p.g_off + (p.g_scalar ? 0 : i));
    if (p.has_w)
        v *= LDW(w, p.w_off + i);
    if (p.reduction == TOCL_NN_RED_MEAN)
        v /= (acc_t)p.n;
    STZ(z, p.z_off + i, v);
}

/* y = -w[t] * x[n, t, s] per (n, s); ignored targets give 0 and weigh 0.
 * flag[0] := 1 and flag[1] := the target when one is out of [0, C). */
__kernel void nn_nll_fwd(__global const X_T *x, __global const long *t, __global const W_T *w, __global Y_T *y,
                         __global Y_T *tw, __global long *flag, tocl_nn_nll p)
{
    flag += p.flag_off;
    long m = p.N * p.S;
    acc_t sl = 0, sw = 0;
    for (long i = get_global_id(0); i < m; i += get_global_size(0)) {
        long tg = t[p.t_off + i], n = i / p.S, s = i - n * p.S;
        acc_t v = 0, wv = 0;
        if (tg != p.ignore_index) {
            if (tg < 0 || tg >= p.C) {
                flag[0] = 1;
                flag[1] = tg;
            } else {
                wv = p.has_w ? LDW(w, p.w_off + tg) : (acc_t)1;
                v = -wv * LDX(x, p.x_off + (n * p.C + tg) * p.S + s);
            }
        }
        if (p.reduction == TOCL_NN_RED_NONE)
            STY(y, p.y_off + i, v);
        sl += v;
        sw += wv;
    }
    NN_SCRATCH(scr); /* every launch reduces: no return ahead of a barrier */
    sl = nn_sum(sl, scr);
    sw = nn_sum(sw, scr);
    if (p.reduction != TOCL_NN_RED_NONE && get_local_id(0) == 0) {
        STY(tw, p.tw_off, sw);
        STY(y, p.y_off, p.reduction == TOCL_NN_RED_MEAN ? sl / sw : sl);
    }
}

/* z[n, t, s] = -w[t] * g (divided by the total weight for the mean); z was
 * zeroed by the caller. tw has the input's dtype (role Y). */
__kernel void nn_nll_bwd(__global const long *t, __global const W_T *w, __global const G_T *g,
                         __global const Y_T *tw, __global Z_T *z, tocl_nn_nll p)
{
    long i = get_global_id(0);
    if (i >= p.N * p.S)
        return;
    long tg = t[p.t_off + i], n = i / p.S, s = i - n * p.S;
    if (tg == p.ignore_index || tg < 0 || tg >= p.C)
        return;
    acc_t v = -(p.has_w ? LDW(w, p.w_off + tg) : (acc_t)1);
    v *= LDG(g, p.g_off + (p.reduction == TOCL_NN_RED_NONE ? i : 0));
    if (p.reduction == TOCL_NN_RED_MEAN)
        v /= LDY(tw, p.tw_off);
    STZ(z, p.z_off + (n * p.C + tg) * p.S + s, v);
}
