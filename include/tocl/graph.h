/* graph.h - graph capture and replay (the CUDA graphs of this runtime).
 *
 * Between tocl_graph_begin and tocl_graph_end the calling thread runs its
 * work as usual on (dev, current stream), and every command it enqueues
 * there is recorded. tocl_graph_replay enqueues the recorded commands again
 * on the current stream: the same kernels with the same argument values on
 * the same memory, without the host code that chose them. So a replay
 * reads the inputs where the capture read them and writes the outputs where
 * the capture wrote them; memory allocated during the capture stays
 * reserved for the graph (even once freed) until tocl_graph_destroy.
 *
 * A capture that reads device results on the host (a copy to the host, a
 * synchronize), waits on another stream or launches on one is not
 * replayable: tocl_graph_end says why, and tocl_graph_replay refuses. The
 * work done during the capture itself ran normally either way. Random
 * numbers are drawn on the host per launch, so a replay repeats the
 * capture's draws: callers must not capture random ops. */
#ifndef TOCL_GRAPH_H
#define TOCL_GRAPH_H

#include <stdint.h>

#include "tocl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tocl_graph tocl_graph;

/* Flush work deferred on dev's current stream, then start recording. */
tocl_status tocl_graph_begin(int dev, tocl_graph **out);
/* Flush the work deferred during the capture (recorded too), stop
 * recording. *why: NULL if replayable, else the reason (lives with g). */
tocl_status tocl_graph_end(tocl_graph *g, const char **why);
/* Enqueue the recorded commands on dev's current stream (after the work
 * deferred there). Does not wait for them. Fails with an earlier replay's
 * bad index if its check has arrived (tocl_graph_check_bounds). */
tocl_status tocl_graph_replay(tocl_graph *g);
/* 1 while the calling thread captures. */
int tocl_graph_capturing(void);
/* Commands recorded (0 before tocl_graph_end). */
int tocl_graph_commands(const tocl_graph *g);
/* After an index op checked the bounds tocl_index_minmax gave it: values
 * in [lo, hi] pass. Under capture, each replay repeats that check without
 * a host wait: a bad index fails the next synchronization of that stream
 * or device, event wait, blocking copy to the host or replay (once the
 * check's read has arrived), as CUDA reports a device-side assert; the
 * index kernels skip it meanwhile. Otherwise this does nothing. */
void tocl_graph_check_bounds(int64_t lo, int64_t hi);
/* The calling thread's next copy to the host is a flag pair [bad, value]
 * that an op then checks (nll_loss: a target out of range). Under capture
 * it is recorded as a check, as index bounds are: a replay reads it back
 * without waiting and a bad flag fails a later synchronization. Otherwise
 * this does nothing. */
void tocl_graph_next_read_is_flag(void);
/* Release the recording; memory it held returns to the allocator. NULL is fine. */
void tocl_graph_destroy(tocl_graph *g);

#ifdef __cplusplus
}
#endif
#endif
