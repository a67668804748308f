/* queue/trace.h - what the runtime's enqueue points call to keep their work
 * for tocl/trace.h. With tracing off an enqueue pays one load and one
 * predictable branch:
 *
 *     cl_event ev, *evp = tocl_trace_slot(&ev);     // NULL when off
 *     err = clEnqueueNDRangeKernel(..., evp);
 *     TOCL_TRACE_KEEP(evp, err, TOCL_TRACE_KERNEL, dev, stream, name, 0);
 */
#ifndef TOCL_QUEUE_TRACE_H
#define TOCL_QUEUE_TRACE_H

#include <CL/cl.h>

#include "tocl/trace.h"

extern int tocl_trace_on_; /* atomic; set by tocl_trace_begin/end */

static inline cl_event *tocl_trace_slot(cl_event *ev) {
    return __atomic_load_n(&tocl_trace_on_, __ATOMIC_RELAXED) ? ev : NULL;
}

/* Keep (or, if the enqueue failed, ignore) the event an enqueue filled. The
 * name is copied. */
void tocl_trace_keep(cl_event ev, cl_int err, tocl_trace_kind kind, int dev, int stream, const char *name,
                     uint64_t bytes);

#define TOCL_TRACE_KEEP(evp, err, kind, dev, stream, name, bytes)             \
    do {                                                                      \
        if (__builtin_expect((evp) != NULL, 0))                               \
            tocl_trace_keep(*(evp), (err), (kind), (dev), (stream), (name), (bytes)); \
    } while (0)

/* Fused eager launches at flush time, on behalf of ops recorded earlier:
 * between begin and end, work kept on this thread carries the recording
 * op's correlation id and the number of ops merged, instead of the thread's
 * current op (the one that caused the flush). */
void tocl_trace_launch_begin(uint64_t corr, int nops);
void tocl_trace_launch_end(void);

#endif
