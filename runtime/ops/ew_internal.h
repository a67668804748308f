/* ew_internal.h - the elementwise launcher's entry points for fused eager
 * (runtime/fusion/defer.c), below tocl_ew_run's checks. */
#ifndef TOCL_EW_INTERNAL_H
#define TOCL_EW_INTERNAL_H

#include "internal.h"
#include "tocl/ops.h"

#define TOCL_EW_MAX_OPERANDS (TOCL_IR_MAX_OUTPUTS + TOCL_IR_MAX_INPUTS)

typedef enum tocl_ew_build {
    TOCL_EW_BUILD = 0,  /* build the kernel now if it is not cached */
    TOCL_EW_ASYNC = 1   /* if not cached: launch nothing, build on the background thread */
} tocl_ew_build;

/* Launch graph g over operands already checked and resolved to buffers and
 * element offsets (outputs first, then inputs; every operand has ops[0]'s
 * ndim and sizes). *launched (may be NULL) says whether a kernel was
 * enqueued; with TOCL_EW_ASYNC it is 0 while the kernel is being built. The
 * queue is taken without flushing deferred work (the caller is the flush or
 * has flushed). */
tocl_status tocl_ew_launch(int dev, int stream, const tocl_ir_graph *g, const tocl_tensor *const *ops,
                           const cl_mem *bufs, const cl_long *offs, const tocl_scalar *scalars, tocl_ew_build mode,
                           int *launched);

/* The background builder: run fn(key) on the builder thread unless the same
 * (fn, key bytes) is queued or running. Fused eager uses it for merged
 * elementwise graphs and for reductions with a fused prologue. */
void tocl_build_async(void (*fn)(const void *key), const void *key, size_t size, uint64_t hash);
/* Wait until the background thread has built every kernel asked of it. */
void tocl_ew_wait_builds(void);
/* At exit: drop the queued builds, refuse new ones, and wait for the one in
 * the driver until `seconds` after the first call; 1 if the thread is idle. */
int tocl_ew_abandon_builds(double seconds);
/* Background builds finished so far and the seconds they took. */
void tocl_ew_build_stats(uint64_t *builds, double *seconds);

/* queue/: the queue of (dev, stream) without flushing deferred work. */
tocl_status tocl_queue_get_nodefer(int dev, int stream, cl_command_queue *out);

#endif
