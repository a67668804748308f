/* paged_attention.cl - attention over a paged KV cache (block tables), for
 * serving: pa_write stores new keys/values at their cache slots
 * (reshape_and_cache), pa_attend runs ragged attention for a batch that
 * mixes prefills and decodes in one launch. Layout and masking rules are in
 * paged_attention_params.h.
 *
 * pa_attend: one work-item per (query token, query head); it finds its
 * sequence by binary search in cu_q, walks that sequence's visible keys
 * through the block table and folds each into an online softmax, so no
 * gathered copy of the context and no score matrix exist. Query head h
 * reads key/value head h / (Hq / Hk) (grouped-query attention). Rows are
 * held as vectors of 8 (zero-padded past D): PoCL runs a work-item's loops
 * as scalar code, and explicit vectors are what gets SIMD there. No
 * barriers, so items past the end return at once.
 *
 * Roles (nn_params.h macros): X storage of queries, keys, values, caches and
 * output; arithmetic in acc_t. Build option PA_DM: head dims are at most
 * this (a multiple of 8). */
#include "nn_params.h"
#include "paged_attention_params.h"

#define PA_NV (PA_DM / 8)
#if defined(NN_ACC_F64)
typedef double8 pa_accv;
#else
typedef float8 pa_accv;
#endif

inline acc_t pa_hsum(pa_accv v)
{
    v.lo += v.hi;
    v.lo.lo += v.lo.hi;
    return v.s0 + v.s1;
}

/* D elements from x at base with stride s, times mul, zero-padded to whole vectors. */
inline void pa_row(__global const X_T *x, long base, long s, long D, acc_t mul, pa_accv *v)
{
    acc_t *e = (acc_t *)v;
    long dp = (D + 7) / 8 * 8;
    for (long d = 0; d < dp; d++)
        e[d] = d < D ? LDX(x, base + d * s) * mul : (acc_t)0;
}

/* The sequence owning packed token t: the largest n < N with cu[n] <= t. */
inline long pa_seq(__global const int *cu, long off, long N, long t)
{
    long lo = 0, hi = N - 1;
    while (lo < hi) {
        long mid = (lo + hi + 1) / 2;
        if (cu[off + mid] <= t)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

__kernel void pa_write(__global const X_T *k, __global const X_T *v, __global X_T *kc, __global X_T *vc,
                       __global const long *slots, tocl_pa_params p)
{
    long gid = get_global_id(0);
    if (gid >= p.T * p.Hk)
        return;
    long t = gid / p.Hk, h = gid - t * p.Hk;
    long s = slots[p.slot_off + t * p.slot_s];
    if (s < 0)
        return; /* padding token */
    long blk = s / p.block_size, r = s - blk * p.block_size;
    if (blk >= p.nblocks)
        return;
    long ksrc = p.k_off + t * p.ks[0] + h * p.ks[1], vsrc = p.v_off + t * p.vs[0] + h * p.vs[1];
    long kdst = p.kc_off + blk * p.kcs[0] + r * p.kcs[1] + h * p.kcs[2];
    long vdst = p.vc_off + blk * p.vcs[0] + r * p.vcs[1] + h * p.vcs[2];
    for (long d = 0; d < p.D; d++) {
        STX(kc, kdst + d * p.kcs[3], LDX(k, ksrc + d * p.ks[2]));
        STX(vc, vdst + d * p.vcs[3], LDX(v, vsrc + d * p.vs[2]));
    }
}

__kernel void pa_attend(__global const X_T *q, __global const X_T *kc, __global const X_T *vc,
                        __global const int *bt, __global const int *cu, __global const int *kvlen, __global X_T *o,
                        tocl_pa_params p)
{
    long gid = get_global_id(0);
    if (gid >= p.T * p.Hq)
        return;
    long t = gid / p.Hq, h = gid - t * p.Hq, hk = h / (p.Hq / p.Hk);
    long n = pa_seq(cu, p.cu_off, p.N, t);
    long q0 = cu[p.cu_off + n], qlen = cu[p.cu_off + n + 1] - q0;
    long klen = kvlen[p.len_off + n];
    long pos = klen - qlen + (t - q0);
    long lo = 0, hi = klen - 1;
    if (p.causal) {
        hi = min(hi, pos);
        if (p.window > 0)
            lo = max(0L, pos - p.window + 1);
    }
    pa_accv qv[PA_NV], kv[PA_NV], acc[PA_NV];
    long nv = (p.D + 7) / 8;
    pa_row(q, p.q_off + t * p.qs[0] + h * p.qs[1], p.qs[2], p.D, (acc_t)p.scale, qv);
    for (long c = 0; c < nv; c++)
        acc[c] = 0;
    acc_t mx = -INFINITY, l = 0;
    long btrow = p.bt_off + n * p.bts[0];
    for (long j = lo; j <= hi; j++) {
        long blk = bt[btrow + (j / p.block_size) * p.bts[1]];
        if (blk < 0 || blk >= p.nblocks)
            continue; /* an unfilled table entry: nothing to read */
        long r = j % p.block_size;
        pa_row(kc, p.kc_off + blk * p.kcs[0] + r * p.kcs[1] + hk * p.kcs[2], p.kcs[3], p.D, 1, kv);
        pa_accv sv = 0;
        for (long c = 0; c < nv; c++)
            sv += qv[c] * kv[c];
        acc_t s = pa_hsum(sv);
        if (s > mx) {
            acc_t f = exp(mx - s);
            l *= f;
            for (long c = 0; c < nv; c++)
                acc[c] *= f;
            mx = s;
        }
        acc_t e = exp(s - mx);
        l += e;
        pa_row(vc, p.vc_off + blk * p.vcs[0] + r * p.vcs[1] + hk * p.vcs[2], p.vcs[3], p.D, 1, kv);
        for (long c = 0; c < nv; c++)
            acc[c] += e * kv[c];
    }
    acc_t inv = l > 0 ? (acc_t)1 / l : (acc_t)0; /* no visible key: output 0 */
    const acc_t *a = (const acc_t *)acc;
    long ob = p.o_off + t * p.os[0] + h * p.os[1];
    for (long d = 0; d < p.D; d++)
        STX(o, ob + d * p.os[2], a[d] * inv);
}
