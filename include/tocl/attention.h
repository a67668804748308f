/* attention.h - scaled dot-product attention. Two routes, chosen per device
 * (runtime/ops/attention.c): flash style (kernels/attention.cl; keys visited
 * a tile at a time with an online softmax, memory O(L + S) per head), and on
 * CPU devices blocked matrix products through the GEMM family with a bounded
 * scratch block (runtime/ops/attention_gemm.c). TORCH_OCL_ATTENTION=
 * flash|gemm forces one.
 *
 * Tensors are 4-D with any element strides: q [B, Hq, L, D], k [B, Hk, S, D],
 * v [B, Hk, S, Dv] (Hk divides Hq: grouped-query attention), out and
 * grad_out [B, Hq, L, Dv], grad_q/grad_k/grad_v shaped as q/k/v. All share
 * one floating dtype (float16/bfloat16 computed in float32). mask (NULL for
 * none) is additive, of that dtype, with sizes [B, Hq, L, S] (stride 0 where
 * it broadcasts). lse and delta are dense [B, Hq, L] of float32 (float64 for
 * float64 inputs). Calls only enqueue work. */
#ifndef TOCL_ATTENTION_H
#define TOCL_ATTENTION_H

#include "tocl/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tocl_attn_desc {
    double scale; /* multiplies q.k before the mask is added */
    int causal;   /* key j is visible to query i iff j <= i (top-left aligned when L != S) */
} tocl_attn_desc;

/* 1 if the kernels take this case on dev: a floating dtype the device has
 * (float64 needs cl_khr_fp64) and head dims 1..TOCL_ATT_DMAX (256). */
int tocl_attn_supported(int dev, tocl_dtype dtype, int64_t head_dim, int64_t v_head_dim);

/* 1 if tocl_attn_forward on dev reads q, k, v and out of this dtype with
 * any strides in one launch; 0 where it runs the route by matrix products,
 * which loops over batch items whose batch stride is not heads x head
 * stride (a caller may copy such operands dense first). */
int tocl_attn_forward_in_place(int dev, tocl_dtype dtype);

/* out := softmax(q k^T * scale + mask) v; lse := log of each row's softmax
 * denominator (after the max shift is undone), -inf for a fully masked row
 * (whose output is 0). */
tocl_status tocl_attn_forward(int dev, int stream, const tocl_attn_desc *d, const tocl_tensor *q,
                              const tocl_tensor *k, const tocl_tensor *v, const tocl_tensor *mask,
                              const tocl_tensor *out, const tocl_tensor *lse);

/* A decoding step's cache growth and attention in one launch: k_out :=
 * cat(k_cache, k_new) and v_out := cat(v_cache, v_new) along the sequence
 * dim ([B, Hk, Sc + Sn, D] / Dv), and out and lse as tocl_attn_forward of
 * q over k_out and v_out without a mask, the same bits as those two calls.
 * Only where tocl_attn_append_usable says so (the one-row kernel of a CPU
 * device: float32/float16/bfloat16, 1..4 query rows, head dims multiples
 * of 8 up to 256, non-empty caches and new parts, every operand and result
 * contiguous along its head dim;
 * TORCH_OCL_ATTENTION_APPEND=0 turns it off); TOCL_E_UNSUPPORTED
 * elsewhere, where the caller runs the cat and tocl_attn_forward. */
int tocl_attn_append_usable(int dev, const tocl_tensor *q, const tocl_tensor *k_cache, const tocl_tensor *k_new,
                            const tocl_tensor *v_cache, const tocl_tensor *v_new);
tocl_status tocl_attn_forward_append(int dev, int stream, const tocl_attn_desc *d, const tocl_tensor *q,
                                     const tocl_tensor *k_cache, const tocl_tensor *k_new,
                                     const tocl_tensor *v_cache, const tocl_tensor *v_new, const tocl_tensor *out,
                                     const tocl_tensor *lse, const tocl_tensor *k_out, const tocl_tensor *v_out);

/* Gradients of tocl_attn_forward from its out and lse, recomputing scores
 * tile by tile; delta is scratch of lse's shape and dtype. grad_q, grad_k and
 * grad_v are all written (deterministically: no atomics). */
tocl_status tocl_attn_backward(int dev, int stream, const tocl_attn_desc *d, const tocl_tensor *q,
                               const tocl_tensor *k, const tocl_tensor *v, const tocl_tensor *mask,
                               const tocl_tensor *out, const tocl_tensor *lse, const tocl_tensor *grad_out,
                               const tocl_tensor *grad_q, const tocl_tensor *grad_k, const tocl_tensor *grad_v,
                               const tocl_tensor *delta);

/* Paged attention for serving (kernels/paged_attention.cl; layout and
 * masking in kernels/include/paged_attention_params.h). Caches are 4-D
 * [blocks, block_size, Hk, D]; packed tokens are 3-D [T, H, D]; all share
 * one floating dtype. */
typedef struct tocl_paged_desc {
    double scale; /* multiplies q.k */
    int causal;   /* bottom-right aligned: query i of q_len sees keys up to kv_len - q_len + i */
    int64_t window; /* sliding window in tokens (causal only), 0 for none */
} tocl_paged_desc;

/* key/value [T, Hk, D] into key_cache/value_cache at slot_mapping [T]
 * (int64; a negative slot is a padding token and is skipped). */
tocl_status tocl_paged_cache_write(int dev, int stream, const tocl_tensor *key, const tocl_tensor *value,
                                   const tocl_tensor *key_cache, const tocl_tensor *value_cache,
                                   const tocl_tensor *slot_mapping);

/* out [T, Hq, D] := attention of query [T, Hq, D] over each sequence's
 * cached keys/values: sequence n has queries [cu_q[n], cu_q[n + 1]) and
 * kv_len[n] cached tokens listed by row n of block_table [N, max_blocks]
 * (cu_q [N + 1], kv_len [N] and block_table all int32). A query with no
 * visible key gets 0. */
tocl_status tocl_paged_attention(int dev, int stream, const tocl_paged_desc *d, const tocl_tensor *query,
                                 const tocl_tensor *key_cache, const tocl_tensor *value_cache,
                                 const tocl_tensor *block_table, const tocl_tensor *cu_q, const tocl_tensor *kv_len,
                                 const tocl_tensor *out);

#ifdef __cplusplus
}
#endif

#endif
