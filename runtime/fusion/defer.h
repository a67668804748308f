/* defer.h - fused eager (defer.c) for the eager entry points in ops/:
 * recording elementwise launches, and flushing them. */
#ifndef TOCL_DEFER_H
#define TOCL_DEFER_H

#include "internal.h"
#include "tocl/fusion.h"
#include "tocl/ops.h"

/* Cheap: is fused mode on? */
int tocl_defer_active(void);

/* Record a checked launch whose operands (outputs first) are resolved to
 * buffers. *recorded = 0 when this launch cannot be deferred (the caller
 * runs it strictly after flushing). */
tocl_status tocl_defer_record(int dev, int stream, const tocl_ir_graph *g, const tocl_tensor *const *ops,
                              const cl_mem *bufs, const cl_long *offs, const tocl_scalar *scalars, int *recorded);

/* Run what is recorded on (dev, stream), or on every stream of dev. Cheap
 * when nothing is. Safe to call with the allocator's lock held. The queue
 * and the allocator call these through the scheduler hooks (internal.h). */
tocl_status tocl_defer_flush(int dev, int stream);
tocl_status tocl_defer_flush_device(int dev);

/* The allocator freed the block [addr, addr + size): recorded outputs that
 * start there belong to a dead tensor and need not reach memory. Called with
 * the allocator's lock held. */
void tocl_defer_note_free(int dev, tocl_addr addr, size_t size);

/* Fused eager's reduction prologue (defer_reduce.c): when recorded ops
 * compute one of a reduction's inputs, begin returns 1 with *p the
 * reduction's prologue extended by those ops (reading their inputs, laid
 * out over the reduction's shape) and keeps the device locked while the
 * caller checks that the fused kernel is built. end(0) then leaves
 * everything as it was and unlocks. end(1) enqueues every other recorded
 * op and keeps those recorded (the reduction reads their inputs), and the
 * device stays locked until tocl_defer_reduce_release: in between the
 * caller enqueues the reduction, on the queue taken without flushing, with
 * operands it resolved before begin (the allocator's lock is never taken
 * under this one: the allocator calls in here holding its own). The
 * group's inputs may be dead tensors whose memory the allocator can hand
 * out again: holding the lock until the reduction is queued keeps another
 * thread on the stream from queueing a write to that memory first. */
typedef struct tocl_defer_prologue {
    tocl_ir_graph g;
    int n_in;
    tocl_tensor ins[TOCL_IR_MAX_INPUTS];
    int n_pre;                          /* ins[0..n_pre) are the group's inputs: use these */
    int input;                          /* the reduction's input they compute; ins[n_pre..) are the others */
    cl_mem bufs[TOCL_IR_MAX_INPUTS];    /* buffers and element offsets of ins[0..n_pre), resolved at recording */
    cl_long offs[TOCL_IR_MAX_INPUTS];
    tocl_scalar sc[TOCL_IR_MAX_SCALARS];
} tocl_defer_prologue;
int tocl_defer_reduce_begin(int dev, int stream, int n_out, const tocl_tensor *outs, int n_in,
                            const tocl_tensor *ins, const tocl_ir_graph *pro, const tocl_scalar *sc,
                            tocl_defer_prologue *p);
tocl_status tocl_defer_reduce_end(int commit);
void tocl_defer_reduce_release(void);
/* Tests ask for synchronous builds (tocl_fusion_set_sync_build); a fused
 * reduction is counted in the stats. */
int tocl_defer_sync_build(void);
void tocl_defer_count_reduction(void);

#endif
