/* nn.h - row kernels of the neural-network op family: softmax and
 * log-softmax, layer/group/batch normalisation and losses, forward and
 * backward (kernels/softmax.cl, norm.cl, loss.cl).
 *
 * Every tensor here is dense row-major (the adapter makes it so); each may
 * have its own floating dtype (float16/bfloat16 are computed in float,
 * float64 in double where the device has cl_khr_fp64). Statistics are kept
 * in float or double whatever the storage dtype. Calls only enqueue work;
 * flags that need a host decision are read back by the caller. */
#ifndef TOCL_NN_H
#define TOCL_NN_H

#include <stdint.h>

#include "tocl/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out := softmax (or log-softmax) of in along dim; same sizes, numerically
 * stable (max subtracted). out may have another floating dtype than in
 * (half_to_float). */
tocl_status tocl_nn_softmax(int dev, int stream, const tocl_tensor *out, const tocl_tensor *in, int dim,
                            int log_softmax);

/* grad_in := backward of softmax (grad_out * out summed along dim) or of
 * log-softmax, given the forward's output. */
tocl_status tocl_nn_softmax_backward(int dev, int stream, const tocl_tensor *grad_in, const tocl_tensor *grad_out,
                                     const tocl_tensor *out, int dim, int log_softmax);

typedef enum tocl_norm_kind {
    TOCL_NORM_LAYER = 0, /* x [n, c]: statistics per row n, weight [c] */
    TOCL_NORM_GROUP = 1, /* x [n, c, hw]: statistics per (n, group), weight [c] */
    TOCL_NORM_BATCH = 2  /* x [n, c, hw]: statistics per channel c, weight [c] */
} tocl_norm_kind;

typedef struct tocl_norm_desc {
    tocl_norm_kind kind;
    int64_t n, c, hw; /* hw is 1 for layer norm */
    int64_t groups;   /* group norm only */
    double eps;
    double momentum;  /* batch norm running-statistics update */
} tocl_norm_desc;

/* Normalise x into y (NULL: statistics only). weight/bias NULL for none.
 * training (always for layer/group norm): statistics from x, stored in
 * mean/rstd if given (one per statistics row: biased variance, rstd =
 * 1 / sqrt(var + eps)), and running_mean/running_var updated if given
 * (momentum; unbiased variance). Batch norm eval (training 0): statistics
 * from running_mean/running_var. */
tocl_status tocl_nn_norm_forward(int dev, int stream, const tocl_norm_desc *d, int training, const tocl_tensor *x,
                                 const tocl_tensor *y, const tocl_tensor *weight, const tocl_tensor *bias,
                                 const tocl_tensor *mean, const tocl_tensor *rstd, const tocl_tensor *running_mean,
                                 const tocl_tensor *running_var);

/* Gradients of tocl_nn_norm_forward: grad_in (NULL: not wanted) from the
 * saved mean/rstd (training) or the running statistics (batch norm eval);
 * grad_weight/grad_bias (NULL: not wanted) have weight's dtype. */
tocl_status tocl_nn_norm_backward(int dev, int stream, const tocl_norm_desc *d, int training, const tocl_tensor *x,
                                  const tocl_tensor *grad_out, const tocl_tensor *grad_in, const tocl_tensor *weight,
                                  const tocl_tensor *mean, const tocl_tensor *rstd, const tocl_tensor *running_mean,
                                  const tocl_tensor *running_var, const tocl_tensor *grad_weight,
                                  const tocl_tensor *grad_bias);

typedef enum tocl_loss_kind {
    TOCL_LOSS_MSE = 0,
    TOCL_LOSS_L1 = 1,
    TOCL_LOSS_SMOOTH_L1 = 2, /* param: beta */
    TOCL_LOSS_HUBER = 3,     /* param: delta */
    TOCL_LOSS_BCE = 4        /* binary cross entropy; input must lie in [0, 1] */
} tocl_loss_kind;

/* Reductions, with PyTorch's numbering (at::Reduction). */
typedef enum tocl_reduction { TOCL_REDUCE_NONE = 0, TOCL_REDUCE_MEAN = 1, TOCL_REDUCE_SUM = 2 } tocl_reduction;

/* out := loss of (input, target) elementwise times weight (NULL: none),
 * then reduced (out has one element) or not (out has input's numel).
 * input, target and weight have equal numel. flag (int64, 2 elements,
 * zeroed by the caller; required for BCE): flag[0] := 1 if an input lies
 * outside [0, 1]. */
tocl_status tocl_nn_loss_forward(int dev, int stream, tocl_loss_kind kind, tocl_reduction red, double param,
                                 const tocl_tensor *input, const tocl_tensor *target, const tocl_tensor *weight,
                                 const tocl_tensor *out, const tocl_tensor *flag);

/* grad_in := d loss / d input times grad_out (one element after a
 * reduction, input's numel without). */
tocl_status tocl_nn_loss_backward(int dev, int stream, tocl_loss_kind kind, tocl_reduction red, double param,
                                  const tocl_tensor *input, const tocl_tensor *target, const tocl_tensor *weight,
                                  const tocl_tensor *grad_out, const tocl_tensor *grad_in);

/* Negative log likelihood over input [n, c, s] with int64 target [n, s] and
 * weight [c] (NULL: ones). out: [n, s] (no reduction) or one element;
 * total_weight (input's dtype, one element) := sum of the weights of the
 * targets not ignored (written for reductions only). flag (int64, 2
 * elements, zeroed by the caller): [0] := 1, [1] := the target, when a
 * target other than ignore_index lies outside [0, c). */
tocl_status tocl_nn_nll_forward(int dev, int stream, tocl_reduction red, int64_t ignore_index, int64_t n, int64_t c,
                                int64_t s, const tocl_tensor *input, const tocl_tensor *target,
                                const tocl_tensor *weight, const tocl_tensor *out, const tocl_tensor *total_weight,
                                const tocl_tensor *flag);

/* grad_in ([n, c, s], zeroed by the caller) at each target := -weight *
 * grad_out (divided by total_weight for the mean). */
tocl_status tocl_nn_nll_backward(int dev, int stream, tocl_reduction red, int64_t ignore_index, int64_t n, int64_t c,
                                 int64_t s, const tocl_tensor *target, const tocl_tensor *weight,
                                 const tocl_tensor *grad_out, const tocl_tensor *total_weight,
                                 const tocl_tensor *grad_in);

#ifdef __cplusplus
}
#endif
#endif
