/* attention_internal.h - what attention.c (checks, the flash kernels, route
 * choice) and attention_gemm.c (the route by matrix products) share. */
#ifndef TOCL_ATTENTION_INTERNAL_H
#define TOCL_ATTENTION_INTERNAL_H

#include "attention_params.h"
#include "ops/nn_internal.h"
#include "tocl/attention.h"

/* One call's operands after the checks: sizes, strides and element offsets
 * in p, buffers of q, k, v and the mask (q's buffer when there is none). */
typedef struct tocl_att_ctx {
    tocl_att_params p;
    tocl_dtype dt, acc_dt; /* storage; lse/delta */
    cl_mem q, k, v, m;
} tocl_att_ctx;

/* Forward by matrix products: t = {q, k, v, out}; lse resolved to (buffer,
 * p.lse_off). float16/bfloat16 operands are widened to float32 copies. */
tocl_status tocl_att_gemm_forward(int dev, int stream, const tocl_att_ctx *c, const tocl_tensor *const t[4],
                                  cl_mem lse);

/* Backward likewise: t = {q, k, v, out, grad_out, grad_q, grad_k, grad_v}. */
tocl_status tocl_att_gemm_backward(int dev, int stream, const tocl_att_ctx *c, const tocl_tensor *const t[8],
                                   cl_mem lse, cl_mem delta);

#endif
