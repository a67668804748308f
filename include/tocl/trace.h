/* trace.h - device activity tracing for profilers: while a trace is on,
 * every kernel, copy and fill the runtime enqueues is kept with its OpenCL
 * event, and collected afterwards as records with start and end times on
 * the host's clock.
 *
 * Times are nanoseconds since the Unix epoch (CLOCK_REALTIME), the clock
 * PyTorch's profiler and Kineto use. OpenCL profiling counters have their
 * own origin (PoCL reports no host timer), so tocl_trace_begin calibrates
 * each device with markers: a marker's CL_PROFILING_COMMAND_QUEUED time is
 * stamped as clEnqueueMarker starts, just after a host clock read
 * (queue/trace.c; good to about a microsecond on PoCL).
 *
 * Correlation: the profiler pushes the id of the op being run on the
 * calling thread (tocl_trace_corr_push/pop), and each record carries the id
 * that was on top when the work was issued. Fused eager issues work at
 * flush time, so it captures the id when an op is recorded and reissues it
 * (tocl_trace_corr_set_launch) around the launch. A fused kernel that
 * merged several recorded ops carries the FIRST op's id (one flow per
 * kernel, no device time counted twice) and the count of ops merged. */
#ifndef TOCL_TRACE_H
#define TOCL_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "tocl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tocl_trace_kind {
    TOCL_TRACE_KERNEL = 0,
    TOCL_TRACE_COPY_H2D = 1,
    TOCL_TRACE_COPY_D2H = 2,
    TOCL_TRACE_COPY_D2D = 3,
    TOCL_TRACE_FILL = 4
} tocl_trace_kind;

#define TOCL_TRACE_NAME_MAX 96

typedef struct tocl_trace_record {
    tocl_trace_kind kind;
    int dev, stream;
    uint64_t corr;      /* correlation id of the issuing op; 0 if none was pushed */
    int fused_ops;      /* recorded ops merged into this kernel (1 when not fused) */
    uint64_t bytes;     /* copies and fills; 0 for kernels */
    int64_t start_ns, end_ns; /* on the device; host clock, ns since the epoch */
    /* The enqueue call on the host: from the command's QUEUED stamp to the
     * call's return (a blocking copy includes its wait), on thread
     * host_thread (the system thread id). */
    int64_t enqueue_start_ns, enqueue_end_ns;
    uint64_t host_thread;
    char name[TOCL_TRACE_NAME_MAX];
} tocl_trace_record;

/* Start keeping enqueued work (drops anything an earlier trace left
 * uncollected). Calibrates every device's clock. Fails while a trace is on. */
tocl_status tocl_trace_begin(void);
/* Stop keeping work; what was kept waits for tocl_trace_collect. */
tocl_status tocl_trace_end(void);
int tocl_trace_active(void);

/* Wait for the kept work to finish, convert its times and hand over the
 * records (*out is malloc'ed, free with tocl_trace_free; NULL when *n is 0).
 * Work kept since begin is returned once. */
tocl_status tocl_trace_collect(tocl_trace_record **out, size_t *n);
void tocl_trace_free(tocl_trace_record *records);

/* The calling thread's correlation stack (ids of the ops being run). */
void tocl_trace_corr_push(uint64_t id);
void tocl_trace_corr_pop(void);
uint64_t tocl_trace_corr_current(void);

/* Host clock in ns since the epoch, the clock of the records. */
int64_t tocl_trace_now_ns(void);

#ifdef __cplusplus
}
#endif
#endif
