/* defer.h - the runtime's side of fused eager (defer.c): recording
 * elementwise launches, and the hooks that flush them. */
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
 * when nothing is. Safe to call with the allocator's lock held. */
tocl_status tocl_defer_flush(int dev, int stream);
tocl_status tocl_defer_flush_device(int dev);

/* The allocator freed the block [addr, addr + size): recorded outputs that
 * start there belong to a dead tensor and need not reach memory. Called with
 * the allocator's lock held. */
void tocl_defer_note_free(int dev, tocl_addr addr, size_t size);

#endif
