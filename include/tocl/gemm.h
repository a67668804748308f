/* gemm.h - batched matrix multiply with a fusable epilogue:
 *
 *   C[b] = act(alpha * A[b] @ B[b] + beta * D[b] + bias)     b = 0 .. batch-1
 *
 * Every operand is (address, batch stride, row stride, column stride), in
 * elements, so transposed, sliced and broadcast (stride 0) operands need no
 * copy: A is M x K, B is K x N, C and D are M x N. A, B, C, D and the bias
 * share one dtype: float32, float16 and bfloat16 (accumulated in float32) or
 * float64 (needs cl_khr_fp64). The call only enqueues work.
 *
 * Kernel choice (kernels/gemm.cl): tiny products and matrix-vector shapes
 * read the operands in place; larger ones pack A and B once into k-major
 * panels and run a register-blocked kernel, a cache-blocked macro kernel on
 * CPU devices. Tile sizes come from per-device defaults, refined by a short
 * one-time timing per size class (see tocl_gemm_tune_*). Knobs:
 *   TORCH_OCL_GEMM_TUNE=0        never time candidates; use the defaults
 *   TORCH_OCL_GEMM_KERNEL=direct|packed   force a path (tests, debugging) */
#ifndef TOCL_GEMM_H
#define TOCL_GEMM_H

#include <stdint.h>

#include "tocl/dtype.h"
#include "tocl/mem.h"
#include "tocl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Epilogue activations, applied last (kernels see the same values as
 * macros from kernels/include/gemm_params.h). */
typedef enum tocl_gemm_act {
    TOCL_GEMM_ACT_NONE = 0,
    TOCL_GEMM_ACT_RELU = 1,
    TOCL_GEMM_ACT_GELU = 2,      /* exact (erf) */
    TOCL_GEMM_ACT_GELU_TANH = 3, /* tanh approximation */
    TOCL_GEMM_ACT_SIGMOID = 4,
    TOCL_GEMM_ACT_TANH = 5,
    TOCL_GEMM_ACT_SILU = 6,
    TOCL_GEMM_ACT_COUNT
} tocl_gemm_act;

typedef enum tocl_gemm_bias {
    TOCL_GEMM_BIAS_NONE = 0,
    TOCL_GEMM_BIAS_ROW = 1, /* bias[n], the same for every row (nn.Linear) */
    TOCL_GEMM_BIAS_COL = 2  /* bias[m], the same for every column */
} tocl_gemm_bias;

/* A strided batch of matrices. data 0 means "absent" (D and bias only). */
typedef struct tocl_gemm_operand {
    tocl_addr data;             /* element [0, 0, 0], storage offset included */
    int64_t bs, rs, cs;         /* batch, row and column strides in elements (>= 0) */
} tocl_gemm_operand;

typedef struct tocl_gemm_desc {
    tocl_dtype dtype;
    int64_t batch, M, N, K;
    tocl_gemm_operand a, b, c;
    tocl_gemm_operand d;        /* read only when data != 0 and beta != 0; may alias c */
    double alpha, beta;
    tocl_gemm_operand bias;     /* bias vector (a 1 x len operand): bs per batch, cs along it; data 0 = none */
    tocl_gemm_bias bias_mode;
    tocl_gemm_act act;
} tocl_gemm_desc;

/* A zeroed descriptor with alpha = 1, beta = 0, batch = 1. */
tocl_gemm_desc tocl_gemm_desc_init(tocl_dtype dtype, int64_t M, int64_t N, int64_t K);

/* Run a product on (dev, stream). C must not overlap A or B. K = 0 gives
 * act(beta * D + bias) (zeros without D and bias); M or N = 0 does nothing. */
tocl_status tocl_gemm(int dev, int stream, const tocl_gemm_desc *g);

/* A LayerNorm in front of the product (a decoding step's norm -> linear):
 * A's rows are read as (a - mean) * rstd * gamma + beta, mean and variance
 * over each row's K values, as the layer-norm kernel computes them. gamma
 * and beta hold K contiguous values each; data 0 means none (1 and 0). */
typedef struct tocl_gemm_norm {
    tocl_addr gamma, beta;
    double eps;
} tocl_gemm_norm;
/* Whether tocl_gemm_normed takes this product: one float32 row (M = 1,
 * batch 1) on a CPU device, A contiguous along k, B contiguous along k
 * (x @ W^T), 8 <= K <= 16384, N >= 8. Elsewhere a caller runs the norm and
 * then tocl_gemm. */
int tocl_gemm_norm_usable(int dev, const tocl_gemm_desc *g, const tocl_gemm_norm *n);
/* tocl_gemm with A normalised as it is read, in one kernel. */
tocl_status tocl_gemm_normed(int dev, int stream, const tocl_gemm_desc *g, const tocl_gemm_norm *n);
/* A tile configuration: register block rm x (vw * nv), work-group tile tm x tn,
 * K block kc. */
typedef struct tocl_gemm_config {
    int rm, vw, nv;
    int64_t tm, tn, kc;
} tocl_gemm_config;

/* The configuration a product of this size would use on dev (tuning it
 * first if tuning is on and the size class has not been timed yet). */
tocl_status tocl_gemm_config_for(int dev, int stream, tocl_dtype dtype, int64_t M, int64_t N, int64_t K,
                                 tocl_gemm_config *out);

/* Forget tuned configurations in memory (tests; the file stays). */
void tocl_gemm_tune_reset(void);

#ifdef __cplusplus
}
#endif
#endif
