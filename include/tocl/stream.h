/* stream.h - streams (in-order command queues) and events.
 *
 * Each device has TOCL_MAX_STREAMS streams, identified by a small index:
 * 0 is the default stream, 1.. are a pool, created lazily on first use. All
 * queues are in-order with profiling enabled. Work is only enqueued; the host
 * waits only in the *_sync calls. */
#ifndef TOCL_STREAM_H
#define TOCL_STREAM_H

#include "tocl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TOCL_MAX_STREAMS 32

/* The calling thread's current stream of dev (default 0). */
int tocl_stream_current(int dev);
tocl_status tocl_stream_set_current(int dev, int stream);

/* Next pool stream (1..TOCL_MAX_STREAMS-1), round robin. */
tocl_status tocl_stream_from_pool(int dev, int *stream);

tocl_status tocl_stream_sync(int dev, int stream);   /* wait for all queued work */
tocl_status tocl_stream_query(int dev, int stream, int *done); /* no waiting */
tocl_status tocl_stream_flush(int dev, int stream);  /* submit queued work */
tocl_status tocl_device_sync(int dev);               /* every created stream of dev */

typedef struct tocl_event tocl_event; /* opaque */

tocl_status tocl_event_create(tocl_event **out);
void tocl_event_destroy(tocl_event *e); /* NULL is fine */
/* Capture the work queued so far on (dev, stream). Re-recording replaces. */
tocl_status tocl_event_record(tocl_event *e, int dev, int stream);
/* Make later work on (dev, stream) wait for e, without the host waiting.
 * An event never recorded is complete. */
tocl_status tocl_event_block(tocl_event *e, int dev, int stream);
tocl_status tocl_event_query(tocl_event *e, int *done);
tocl_status tocl_event_sync(tocl_event *e);
/* Milliseconds between two recorded, completed events (device profiling
 * clock); TOCL_E_INVALID if either was never recorded. */
tocl_status tocl_event_elapsed_ms(tocl_event *start, tocl_event *end, double *ms);
/* Device index an event was last recorded on, or -1. */
int tocl_event_device(const tocl_event *e);

#ifdef __cplusplus
}
#endif
#endif
