/* attention_params.h - parameters of kernels/attention.cl (flash-style
 * scaled dot-product attention), shared with runtime/ops/attention.c.
 *
 * Operands are 4-D (batch, head, row, column) with arbitrary element strides
 * [4]: q [B, Hq, L, D], k [B, Hk, S, D], v [B, Hk, S, Dv], out / grad_out /
 * grad_q alike; mask [B, Hq, L, S] additive (stride 0 where broadcast).
 * lse and delta are dense [B, Hq, L]. Query head h reads key/value head
 * h / (Hq / Hk) (grouped-query attention). 8-byte fields first so host and
 * device lay the struct out identically. */
#ifndef TOCL_ATTENTION_PARAMS_H
#define TOCL_ATTENTION_PARAMS_H

#ifdef __OPENCL_VERSION__
typedef long tocl_att_i64;
typedef int tocl_att_i32;
typedef float tocl_att_f32;
#if defined(NN_ACC_F64)
typedef double tocl_att_f64;
#else
typedef ulong tocl_att_f64; /* a double's bits, unread without cl_khr_fp64 */
#endif
#else
#include <stdint.h>
typedef int64_t tocl_att_i64;
typedef int32_t tocl_att_i32;
typedef float tocl_att_f32;
typedef double tocl_att_f64;
#endif

/* Largest head dimension (of q/k and of v) the kernels take. */
#define TOCL_ATT_DMAX 256

typedef struct tocl_att_params {
    tocl_att_i64 B, Hq, Hk, L, S, D, Dv;
    tocl_att_i64 qs[4], ks[4], vs[4], os[4], ms[4]; /* element strides */
    tocl_att_i64 gs[4], dqs[4], dks[4], dvs[4];     /* backward only */
    tocl_att_i64 q_off, k_off, v_off, o_off, m_off, lse_off;
    tocl_att_i64 g_off, dq_off, dk_off, dv_off, delta_off;
    tocl_att_f64 scale;   /* read in double arithmetic */
    tocl_att_f32 scalef;  /* the same in float arithmetic */
    tocl_att_i32 causal;  /* key j is visible to query i iff j <= i (top-left aligned) */
    tocl_att_i32 has_mask;
    tocl_att_i32 pad;
} tocl_att_params;

/* The keys and values appended by att_cpu_row_append (a decoding step's
 * cache growth, kernels/attention_cpu.cl): keys j < Sc come from the
 * tocl_att_params operands k and v (the caches), keys Sc.. from kn and vn
 * ([B, Hk, S - Sc, D / Dv]); ko and vo ([B, Hk, S, D / Dv]) receive all
 * of them, the cat the attention read. A struct apart from
 * tocl_att_params, which the other kernels share unchanged. */
typedef struct tocl_att_append {
    tocl_att_i64 kns[4], vns[4], kos[4], vos[4]; /* element strides */
    tocl_att_i64 kn_off, vn_off, ko_off, vo_off, Sc;
} tocl_att_append;

/* One block of the route by matrix products (kernels/attention_rows.cl):
 * query rows [i0, i0 + rows) of query heads h = hk * (Hq / Hk) + r, for nb
 * (batch, kv head) pairs t (u = t0 + t, b = b0 + u / Hk, hk = u % Hk),
 * against keys [0, n). Scratch row (t, i - i0) starts at s_off (dp_off) +
 * t * bs + (i - i0) * n, in the accumulation type. */
typedef struct tocl_att_block {
    tocl_att_i64 b0, t0, r, i0, rows, n, nb, bs;
    tocl_att_i64 s_off, dp_off;
} tocl_att_block;

#endif
