/* nn_internal.h - what softmax.c, norm.c and loss.c share: dtype roles as
 * build options, operand resolution and launches (implemented in softmax.c;
 * kernel objects come from the one kernel cache, launch/launch.h). */
#ifndef TOCL_NN_INTERNAL_H
#define TOCL_NN_INTERNAL_H

#include <stddef.h>

#include "nn_params.h"
#include "launch/launch.h"
#include "tocl/nn.h"

/* Build options for storage roles: roles[i] (a letter such as 'X') has
 * dtype dts[i]; float64 anywhere selects double arithmetic. Fails with
 * TOCL_E_UNSUPPORTED for a non-floating dtype or float64 on a device
 * without cl_khr_fp64. item: one work-item per row (-DNN_ITEM). */
tocl_status tocl_nn_options(int dev, const char *roles, const tocl_dtype *dts, int item, char *buf, size_t cap);

/* Enqueue `global` work-items in groups of `local` (global a multiple). */
static inline tocl_status tocl_nn_launch(int dev, int stream, tocl_ops_kernel *k, size_t global, size_t local,
                                         const tocl_ops_arg *args, int nargs) {
    return tocl_ops_launch(dev, stream, k, 1, &global, &local, args, nargs);
}

/* Work-group size of the one-group-per-row kernels (<= TOCL_NN_LOCAL_MAX)
 * and of one-item-per-row launches. */
size_t tocl_nn_group_size(int dev, tocl_ops_kernel *k);
size_t tocl_nn_item_size(int dev, tocl_ops_kernel *k);
/* The item size for a launch of `rows` rows, one per work-item: on a CPU the
 * largest power of two no more than rows / compute units, so that few rows
 * still make a group for every core. */
size_t tocl_nn_rows_local(int dev, tocl_ops_kernel *k, int64_t rows);

/* A dense operand on dev's context: (buffer, element offset). */
tocl_status tocl_nn_operand(int dev, const tocl_tensor *t, const char *what, int64_t numel, cl_mem *buf,
                            cl_long *off);

/* One row per work-item when rows are short, or strided and many, or (on
 * CPUs) contiguous: a CPU runs a group's work-items one after another, so a
 * row per group pays a local-memory tree and its barriers for nothing
 * (layer norm over [1024, 256] is 7x faster on PoCL this way; over
 * [32, 256], a decoding step's, 98 us went to 3 us). Few rows still reach
 * every core because tocl_nn_rows_local makes their groups small. Rows
 * longer than 64K with few of them keep the tree, whose sums round less. Batch norm (strided
 * rows) keeps the tree: its statistics over few elements feed
 * ill-conditioned gradients, and the tree's rounding matched the CPU's
 * closer (wide_resnet50_2's train step at 32x32 failed the sweep with
 * sequential Welford); batch_norm says which. On CPUs batch norm does not
 * come here: see tocl_nn_bn_runs. */
static inline int tocl_nn_use_items(int dev, int64_t rows, int64_t n, int strided, int batch_norm) {
    const tocl_device_props *pr = tocl_dev_props(dev);
    int64_t cu = pr->compute_units ? pr->compute_units : 1;
    if (pr->kind == TOCL_DEVICE_CPU && !strided && !batch_norm && (rows >= 256 * cu || n <= 65536))
        return 1;
    return n <= 32 || (strided && rows >= 64);
}

/* Batch norm on a CPU device: one work-item per channel in groups of
 * TOCL_NN_BN_LOCAL (so that even 3 channels spread over the compute units:
 * PoCL runs a group on one thread; fixed, as PoCL compiles per local size),
 * walking the channel's N runs of HW contiguous elements NN_VW at a time
 * with two-pass, cascaded sums (kernels/norm.cl, TOCL_NN_RUNS). A row per
 * group made each lane stride the channel by 256: every cache line was
 * fetched ~16 times. Channels of at most 32 elements keep the item path
 * above (cheap; the model sweep validated it there). Which sums are double:
 * norm_runs_options in norm.c. */
#define TOCL_NN_BN_LOCAL 1
static inline int tocl_nn_bn_runs(int dev, int batch_norm, int64_t n) {
    return batch_norm && n > 32 && tocl_dev_props(dev)->kind == TOCL_DEVICE_CPU;
}

#endif
