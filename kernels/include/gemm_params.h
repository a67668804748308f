/* gemm_params.h - parameters of the GEMM kernels (kernels/gemm.cl), shared
 * with runtime/ops/gemm.c. 8-byte fields come first so host and device lay
 * the structs out alike; sizes stay far below the 1024 bytes of kernel
 * arguments OpenCL guarantees.
 *
 * C[b, m, n] = act(alpha * sum_k A[b, m, k] * B[b, k, n] + beta * D[b, m, n] + bias)
 *
 * The packed kernels read A and B from a workspace written by
 * tocl_gemm_pack: a matrix of `rows` x K (A: rows = M; B: rows = N) is
 * stored as panels of W rows, each panel K x W and k-major, so element
 * (r, k) lives at (r / W) * K * W + k * W + r % W and rows past the end are
 * zero. W = the register block (CPU: one micro-panel streams through L1) or
 * the padded row count (GPU: neighbouring work-items read neighbouring
 * addresses). The epilogue fields are plain data so the fusion engine can
 * add stages later without touching the inner loop. */
#ifndef TOCL_GEMM_PARAMS_H
#define TOCL_GEMM_PARAMS_H

#ifdef __OPENCL_VERSION__
typedef long tocl_gp_i64;
typedef int tocl_gp_i32;
#else
#include <stdint.h>
typedef int64_t tocl_gp_i64;
typedef int32_t tocl_gp_i32;
#endif

#ifdef __OPENCL_VERSION__
/* Activations of the epilogue (applied last, before the store); the host
 * side has the same values as enum tocl_gemm_act in include/tocl/gemm.h. */
#define TOCL_GEMM_ACT_NONE 0
#define TOCL_GEMM_ACT_RELU 1
#define TOCL_GEMM_ACT_GELU 2      /* exact: x * (1 + erf(x / sqrt 2)) / 2 */
#define TOCL_GEMM_ACT_GELU_TANH 3 /* tanh approximation */
#define TOCL_GEMM_ACT_SIGMOID 4
#define TOCL_GEMM_ACT_TANH 5
#define TOCL_GEMM_ACT_SILU 6
#define TOCL_GEMM_ACT_COUNT 7

/* Bias broadcast of the epilogue. */
#define TOCL_GEMM_BIAS_NONE 0
#define TOCL_GEMM_BIAS_ROW 1 /* bias[n]: one value per column, the same for every row (linear) */
#define TOCL_GEMM_BIAS_COL 2 /* bias[m]: one value per row */
#endif

/* Copy one operand into the packed layout (one work-item per (k, panel,
 * batch)). The grid's fastest dimension walks the source's unit stride:
 * k where the operand's rows are strided (A row-major), the panel where
 * they are contiguous (B row-major), so that a work-group reads runs of
 * memory instead of one short piece of each of 64 rows. */
/* AMX packing (kernels/gemm.cl tocl_gemm_amx_pack): tiles per work-item. */
#define TOCL_GEMM_AMX_PACK_RUN 8

typedef struct tocl_gemm_pack_params {
    tocl_gp_i64 off;            /* source element offset */
    tocl_gp_i64 bs, rs, ks;     /* source strides: batch, row (m or n), depth (k) */
    tocl_gp_i64 rows, depth;    /* rows (M or N) and K */
    tocl_gp_i64 dst_off, dst_bs;/* workspace element offset and per-batch stride */
    tocl_gp_i64 width;          /* panel width W */
    tocl_gp_i64 panel_fast;     /* grid (panel, k, batch) instead of (k, panel, batch) */
} tocl_gemm_pack_params;

typedef struct tocl_gemm_params {
    tocl_gp_i64 M, N, K, batch;
    /* A and B: the packed workspace (packed kernels) or the operands
     * themselves (direct kernel: a_rs/a_ks, b_ks/b_rs are their strides). */
    tocl_gp_i64 a_off, a_bs, a_rs, a_ks, a_w;
    tocl_gp_i64 b_off, b_bs, b_rs, b_ks, b_w;
    tocl_gp_i64 c_off, c_bs, c_rs, c_cs;          /* output, any strides */
    tocl_gp_i64 d_off, d_bs, d_rs, d_cs;          /* beta input (may alias C, strides may be 0) */
    tocl_gp_i64 bias_off, bias_bs, bias_s;        /* bias vector */
    tocl_gp_i64 tm, tn, kc; /* tile of C per work-group and K block (CPU macro kernel) */
    tocl_gp_i32 has_d;      /* 0: beta is ignored and D is never read (NaN in it too) */
    tocl_gp_i32 bias_mode;  /* TOCL_GEMM_BIAS_* */
    tocl_gp_i32 act;        /* TOCL_GEMM_ACT_* */
    tocl_gp_i32 pad;
    /* Panel strides of the packed A and B (CPU macro kernel): elements from
     * one panel to the next; 0 means K * W (panels packed for this K). A
     * caller that packed an operand once for a longer K (attention: V for
     * all keys, used by blocks that stop early) gives its stride here. */
    tocl_gp_i64 a_ps, b_ps;
} tocl_gemm_params;

/* The one-row kernel's row normalisation of A (tocl_gemm_normed): A's row
 * is read as (a - mean) * rstd [* gamma[k]] [+ beta[k]], its mean and
 * variance over the K values (a LayerNorm in front of a linear layer).
 * gamma and beta are contiguous along k. */
typedef struct tocl_gemm_norm_params {
    tocl_gp_i64 g_off, bt_off; /* element offsets of gamma and beta */
    float eps;
    tocl_gp_i32 has_g, has_bt;
    tocl_gp_i32 pad;
} tocl_gemm_norm_params;
#endif
