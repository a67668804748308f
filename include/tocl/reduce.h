/* reduce.h - reductions and scans of the op library.
 *
 * A reduction is described by a tocl_reduce_desc: a prologue IR graph that
 * computes one value per input element (so sum of squares or a norm's |x|^p
 * is one kernel), an optional fixed map applied to that value, a combine
 * rule (sum, prod, max, argmax, Welford, log-sum-exp, ...) and a finaliser
 * (mean, sqrt, p-th root, variance). Kernels are rendered per description
 * and collapsed rank, never per size, and reduce with a tree in each
 * work-group plus a second pass over per-group partials when one row is
 * split over several groups: no atomics, so results are bit-identical for a
 * given input and device.
 *
 * Reduced dimensions are implicit: every output has the inputs' ndim, with
 * size 1 (any stride) in each reduced dimension and the input's size in each
 * kept one, exactly TensorIterator's "viewed result" of a reduction. */
#ifndef TOCL_REDUCE_H
#define TOCL_REDUCE_H

#include <stdint.h>

#include "tocl/dtype.h"
#include "tocl/ir.h"
#include "tocl/ops.h"
#include "tocl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Combine rules. Outputs, in order:
 *   SUM PROD MAX MIN ANY ALL LOGSUMEXP: the value.
 *   ARGMAX ARGMIN: [value,] int64 index (1 output: index only). The index is
 *     the row-major position over the reduced dimensions in their logical
 *     order; ties give the first index, a NaN wins (the first NaN), as CPU.
 *   WELFORD: variance (or std with TOCL_REDUCE_FINAL_STD) [, mean].
 *   XOR: the bitwise exclusive or of integer values (hash_tensor).
 * MAX/MIN propagate NaN. */
typedef enum tocl_reduce_kind {
    TOCL_REDUCE_SUM = 0,
    TOCL_REDUCE_PROD,
    TOCL_REDUCE_MAX,
    TOCL_REDUCE_MIN,
    TOCL_REDUCE_ARGMAX,
    TOCL_REDUCE_ARGMIN,
    TOCL_REDUCE_ANY,
    TOCL_REDUCE_ALL,
    TOCL_REDUCE_WELFORD,
    TOCL_REDUCE_LOGSUMEXP,
    TOCL_REDUCE_XOR,
    TOCL_REDUCE_KIND_COUNT
} tocl_reduce_kind;

/* Applied to the prologue's value(s) before combining. */
typedef enum tocl_reduce_map {
    TOCL_REDUCE_MAP_NONE = 0,
    TOCL_REDUCE_MAP_ABS,      /* |x| */
    TOCL_REDUCE_MAP_SQUARE,   /* x * x */
    TOCL_REDUCE_MAP_ABS_POW,  /* |x| ^ p */
    TOCL_REDUCE_MAP_NAN_ZERO, /* NaN -> 0 (nansum) */
    TOCL_REDUCE_MAP_EQ,       /* prologue outputs 0 and 1: a == b (NaN != NaN) */
    TOCL_REDUCE_MAP_COUNT
} tocl_reduce_map;

typedef enum tocl_reduce_final {
    TOCL_REDUCE_FINAL_NONE = 0,
    TOCL_REDUCE_FINAL_MEAN, /* divide by the number of reduced elements */
    TOCL_REDUCE_FINAL_SQRT,
    TOCL_REDUCE_FINAL_ROOT, /* x ^ (1 / p) */
    TOCL_REDUCE_FINAL_STD,  /* WELFORD: sqrt of the variance */
    TOCL_REDUCE_FINAL_COUNT
} tocl_reduce_final;

typedef struct tocl_reduce_desc {
    tocl_reduce_kind kind;
    /* dtype of the value that is combined (the accumulator): float32 for
     * float16/bfloat16/float32, float64, int64 for integer sums, BOOL for
     * any/all, the input's compute dtype for max/min. */
    tocl_dtype acc;
    tocl_reduce_map map;
    tocl_reduce_final final;
    double p;          /* exponent of MAP_ABS_POW and FINAL_ROOT */
    double correction; /* WELFORD: divisor is max(0, n - correction) */
    /* Optional: a graph over the inputs whose output 0 (and 1 for MAP_EQ)
     * has compute dtype `acc` (MAP_EQ: any one dtype). NULL means input 0
     * converted to `acc`. The graph's scalars come from `scalars`. */
    const tocl_ir_graph *prologue;
    /* Fused eager: the recorded ops that compute an input may be computed in
     * the prologue instead of read from memory. Worth it only when their
     * result then dies unwritten, so callers set it when they hold the only
     * reference to input 0's storage (a temporary); a value that autograd
     * saved or that stays alive is still written, and reading it back is
     * cheaper than computing it twice. 0 (the default) never fuses. */
    int fuse_producer;
} tocl_reduce_desc;

/* Run a reduction. n_in inputs share one shape (stride 0 broadcasts);
 * outputs follow the rules above. Reducing zero elements gives the combine
 * rule's identity (sum 0, prod 1, max -inf, mean NaN, ...): callers refuse
 * the reductions PyTorch refuses. No host wait. */
tocl_status tocl_reduce_run(int dev, int stream, const tocl_reduce_desc *d, int n_out, const tocl_tensor *outs,
                            int n_in, const tocl_tensor *ins, const tocl_scalar *scalars);

/* Render the reduction kernel (kernel `tocl_red`) for d with kept rank kr
 * and reduced rank rr (1..TOCL_MAX_DIMS each; kr 0 means one output row).
 * out_dtypes/n_out describe the outputs. No OpenCL calls. */
tocl_status tocl_reduce_render(const tocl_reduce_desc *d, const tocl_ir_graph *prologue, int n_out,
                               const tocl_dtype *out_dtypes, int kr, int rr, char *buf, size_t cap);

/* The column kernel (`tocl_redc`, tocl_red's arguments) for reductions
 * whose innermost kept dim has stride 1 in every input: each work-item
 * folds `lanes` (8 or 16) adjacent outputs. Only where
 * tocl_reduce_col_ok; tocl_reduce_col_lanes(acc) gives the lanes. */
tocl_status tocl_reduce_render_col(const tocl_reduce_desc *d, const tocl_ir_graph *prologue, int n_out,
                                   const tocl_dtype *out_dtypes, int kr, int rr, int lanes, char *buf, size_t cap);
int tocl_reduce_col_ok(const tocl_reduce_desc *d, const tocl_ir_graph *prologue, int kr);
int tocl_reduce_col_lanes(tocl_dtype acc);

/* Scans along dimension `dim` of in; out (and idx, int64, for CUMMAX and
 * CUMMIN) have in's shape. in and out have the same dtype (convert first).
 * Integer and bool sums and products accumulate in int64 (callers give an
 * int64 output as PyTorch does); float16/bfloat16 accumulate in float32. */
typedef enum tocl_scan_kind {
    TOCL_SCAN_SUM = 0,
    TOCL_SCAN_PROD,
    TOCL_SCAN_MAX,       /* cummax: ties and NaNs take the later index, as CPU */
    TOCL_SCAN_MIN,
    TOCL_SCAN_LOGSUMEXP, /* logcumsumexp */
    /* complex logcumsumexp: in and out are complex tensors in pairs layout
     * (their real dtype, a trailing dim [..., 2] of stride 1), scanned
     * over the other dims. Each row runs in order in one work-item, as on
     * the CPU: the imaginary part accumulates unreduced angles, so another
     * order would give a different (2 pi apart) answer. */
    TOCL_SCAN_LOGSUMEXP_PAIRS,
    TOCL_SCAN_KIND_COUNT
} tocl_scan_kind;

tocl_status tocl_scan_run(int dev, int stream, tocl_scan_kind kind, int dim, const tocl_tensor *out,
                          const tocl_tensor *idx, const tocl_tensor *in);

#ifdef __cplusplus
}
#endif
#endif
