/* paged_attention_params.h - parameters of kernels/paged_attention.cl,
 * shared with runtime/ops/paged_attention.c.
 *
 * Caches are 4-D [blocks, block_size, Hk, D] with any element strides (kcs,
 * vcs): token slot s lies in block s / block_size at row s % block_size.
 * New keys/values and queries are packed tokens [T, H, D] (strides ks, vs,
 * qs, os). Sequence n owns query tokens [cu_q[n], cu_q[n + 1]) and
 * kv_len[n] cached tokens (its new ones included) whose block ids are row n
 * of the int32 block table (strides bts). Query token i of a sequence with
 * q_len queries is at position kv_len - q_len + i (bottom-right aligned, as
 * flash-attention varlen and vLLM): it sees keys [lo, pos] with
 * lo = pos - window + 1 when window > 0 (else 0), or all keys when not
 * causal. 8-byte fields first so host and device lay the struct out
 * identically. */
#ifndef TOCL_PAGED_ATTENTION_PARAMS_H
#define TOCL_PAGED_ATTENTION_PARAMS_H

#ifdef __OPENCL_VERSION__
typedef long tocl_pa_i64;
typedef int tocl_pa_i32;
typedef float tocl_pa_f32;
#else
#include <stdint.h>
typedef int64_t tocl_pa_i64;
typedef int32_t tocl_pa_i32;
typedef float tocl_pa_f32;
#endif

/* Largest head dimension the kernels take. */
#define TOCL_PA_DMAX 256

typedef struct tocl_pa_params {
    tocl_pa_i64 T, N, Hq, Hk, D, block_size, max_blocks;
    tocl_pa_i64 qs[3], os[3], ks[3], vs[3]; /* packed token operands */
    tocl_pa_i64 kcs[4], vcs[4];             /* caches */
    tocl_pa_i64 bts[2];                     /* block table */
    tocl_pa_i64 q_off, o_off, k_off, v_off, kc_off, vc_off, bt_off, cu_off, len_off, slot_off, slot_s;
    tocl_pa_i64 window;  /* sliding window in tokens, 0 for none */
    tocl_pa_i64 nblocks; /* cache blocks: slots and table entries beyond are skipped */
    tocl_pa_f32 scale;   /* multiplies q.k */
    tocl_pa_i32 causal;
} tocl_pa_params;

#endif
