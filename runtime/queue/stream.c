/* stream.c - per-device in-order command queues (streams), created lazily,
 * and the calling thread's current stream. */
#include <pthread.h>
#include <stdlib.h>

#include "internal.h"

/* Same cap as device/discover.c, which never selects more devices. */
#define DEV_MAX 64

/* Knowing when a stream is idle: OpenCL 1.2 cannot ask a queue whether it is
 * empty, and a fresh marker on an idle queue is not complete the instant it
 * is enqueued, so "sync; query" would spuriously say "busy". Every enqueue in
 * the runtime first calls tocl_queue_get, which counts in `gets`; when the
 * stream is seen idle (after clFinish, or a completed query marker) we note
 * the count then, and a query with no tocl_queue_get since answers "done"
 * without touching the queue. */
typedef struct dev_queues {
    pthread_mutex_t mu;                       /* serialises queue creation */
    cl_command_queue q[TOCL_MAX_STREAMS];     /* read lock-free once set (atomic loads) */
    unsigned long long gets[TOCL_MAX_STREAMS];    /* atomic: tocl_queue_get calls */
    unsigned long long idle_at[TOCL_MAX_STREAMS]; /* atomic: gets + 1 when last seen idle; 0 never */
    unsigned next_pool;                       /* round-robin cursor, atomic */
} dev_queues;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static dev_queues *g_q;
static int g_ndev;

/* Like CUDA: a thread that never set a stream uses the default stream 0. */
static _Thread_local unsigned char tl_current[DEV_MAX];

static void queues_init(void) {
    int n = tocl_device_count();
    if (n <= 0)
        return;
    g_q = calloc((size_t)n, sizeof *g_q);
    if (!g_q)
        return;
    for (int i = 0; i < n; i++)
        pthread_mutex_init(&g_q[i].mu, NULL);
    g_ndev = n;
}

static tocl_status check(int dev, int stream) {
    TOCL_TRY(tocl_device_check(dev));
    pthread_once(&g_once, queues_init);
    if (dev >= g_ndev)
        return tocl_fail(TOCL_E_INTERNAL, "stream table for OpenCL device %d could not be allocated", dev);
    if (stream < 0 || stream >= TOCL_MAX_STREAMS)
        return tocl_fail(TOCL_E_INVALID, "stream index %d is out of range: valid streams are 0..%d", stream,
                         TOCL_MAX_STREAMS - 1);
    return TOCL_OK;
}

/* The queue if it was already created, else NULL (nothing was ever queued). */
static cl_command_queue existing(int dev, int stream) {
    return __atomic_load_n(&g_q[dev].q[stream], __ATOMIC_ACQUIRE);
}

static unsigned long long gets_now(int dev, int stream) {
    return __atomic_load_n(&g_q[dev].gets[stream], __ATOMIC_ACQUIRE);
}

static void mark_idle(int dev, int stream, unsigned long long gets) {
    __atomic_store_n(&g_q[dev].idle_at[stream], gets + 1, __ATOMIC_RELEASE);
}

/* Whoever takes a queue is about to enqueue work or wait on it: elementwise
 * ops deferred on that stream (fused eager) must be enqueued first. */
static tocl_status queue_lookup(int dev, int stream, cl_command_queue *out);

tocl_status tocl_queue_get(int dev, int stream, cl_command_queue *out) {
    TOCL_TRY(check(dev, stream));
    TOCL_TRY(tocl_sched_flush(dev, stream));
    return queue_lookup(dev, stream, out);
}

tocl_status tocl_queue_get_nodefer(int dev, int stream, cl_command_queue *out) {
    TOCL_TRY(check(dev, stream));
    return queue_lookup(dev, stream, out);
}

/* The queue of a checked (dev, stream), created on first use. */
static tocl_status queue_lookup(int dev, int stream, cl_command_queue *out) {
    __atomic_add_fetch(&g_q[dev].gets[stream], 1ull, __ATOMIC_ACQ_REL);
    cl_command_queue q = existing(dev, stream);
    if (q) {
        *out = q;
        return TOCL_OK;
    }
    dev_queues *d = &g_q[dev];
    pthread_mutex_lock(&d->mu);
    q = d->q[stream];
    if (!q) {
        cl_int err = CL_SUCCESS;
        /* Profiling on every queue: event timing needs it and it costs
         * nothing measurable on the drivers we know. */
        q = clCreateCommandQueue(tocl_dev_context(dev), tocl_dev_id(dev), CL_QUEUE_PROFILING_ENABLE, &err);
        if (err != CL_SUCCESS) {
            pthread_mutex_unlock(&d->mu);
            return tocl_fail(TOCL_E_OPENCL, "clCreateCommandQueue for OpenCL device %d stream %d failed: %s (%d)",
                             dev, stream, tocl_cl_error_name(err), err);
        }
        __atomic_store_n(&d->q[stream], q, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&d->mu);
    *out = q;
    return TOCL_OK;
}

int tocl_stream_current(int dev) {
    if (dev < 0 || dev >= DEV_MAX)
        return 0;
    return tl_current[dev];
}

tocl_status tocl_stream_set_current(int dev, int stream) {
    TOCL_TRY(check(dev, stream));
    tl_current[dev] = (unsigned char)stream;
    return TOCL_OK;
}

tocl_status tocl_stream_from_pool(int dev, int *stream) {
    if (!stream)
        return tocl_fail(TOCL_E_INVALID, "tocl_stream_from_pool: stream is NULL");
    TOCL_TRY(check(dev, 0));
    unsigned k = __atomic_fetch_add(&g_q[dev].next_pool, 1u, __ATOMIC_RELAXED);
    *stream = 1 + (int)(k % (TOCL_MAX_STREAMS - 1));
    return TOCL_OK;
}

tocl_status tocl_stream_sync(int dev, int stream) {
    TOCL_TRY(check(dev, stream));
    TOCL_TRY(tocl_sched_flush(dev, stream));
    cl_command_queue q = existing(dev, stream);
    unsigned long long g = gets_now(dev, stream);
    if (q)
        TOCL_CL_TRY(clFinish(q), "clFinish");
    mark_idle(dev, stream, g);
    return tocl_deferred_collect(dev, stream, 1); /* a replay's bad index fails here */
}

tocl_status tocl_stream_flush(int dev, int stream) {
    TOCL_TRY(check(dev, stream));
    TOCL_TRY(tocl_sched_flush(dev, stream));
    cl_command_queue q = existing(dev, stream);
    if (q)
        TOCL_CL_TRY(clFlush(q), "clFlush");
    return TOCL_OK;
}

tocl_status tocl_stream_query(int dev, int stream, int *done) {
    if (!done)
        return tocl_fail(TOCL_E_INVALID, "tocl_stream_query: done is NULL");
    TOCL_TRY(check(dev, stream));
    TOCL_TRY(tocl_sched_flush(dev, stream));
    cl_command_queue q = existing(dev, stream);
    unsigned long long g = gets_now(dev, stream);
    *done = 1;
    if (!q || __atomic_load_n(&g_q[dev].idle_at[stream], __ATOMIC_ACQUIRE) == g + 1)
        return TOCL_OK;
    /* A marker on an in-order queue completes after everything before it. */
    cl_event ev = NULL;
    TOCL_CL_TRY(clEnqueueMarkerWithWaitList(q, 0, NULL, &ev), "clEnqueueMarkerWithWaitList");
    cl_int st = CL_QUEUED;
    cl_int err = clFlush(q); /* so the queue makes progress without a host wait */
    if (err == CL_SUCCESS)
        err = clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
    clReleaseEvent(ev);
    TOCL_CL_TRY(err, "querying a stream's marker event");
    if (st < 0)
        return tocl_fail(TOCL_E_OPENCL, "work on OpenCL device %d stream %d failed: %s (%d)", dev, stream,
                         tocl_cl_error_name(st), st);
    *done = st == CL_COMPLETE;
    if (*done)
        mark_idle(dev, stream, g);
    return *done ? tocl_deferred_collect(dev, stream, 1) : TOCL_OK;
}

tocl_status tocl_device_sync(int dev) {
    TOCL_TRY(check(dev, 0));
    TOCL_TRY(tocl_sched_flush_device(dev));
    for (int s = 0; s < TOCL_MAX_STREAMS; s++) {
        cl_command_queue q = existing(dev, s);
        unsigned long long g = gets_now(dev, s);
        if (q)
            TOCL_CL_TRY(clFinish(q), "clFinish");
        mark_idle(dev, s, g);
    }
    tocl_mem_guard_after_sync();
    return tocl_deferred_collect(dev, -1, 1);
}

/* Cross-device ordering without a host wait when both queues share a
 * context: a marker on the producer and a barrier on the waiter. Queues of
 * different contexts cannot share events, so then the host waits. */
tocl_status tocl_stream_wait_stream(int wdev, int wstream, int dev, int stream) {
    if (wdev == dev && wstream == stream)
        return TOCL_OK;
    if (tocl_dev_context(wdev) != tocl_dev_context(dev))
        return tocl_stream_sync(dev, stream);
    cl_command_queue producer, waiter;
    TOCL_TRY(tocl_queue_get(dev, stream, &producer));
    cl_event ev;
    TOCL_CL_TRY(clEnqueueMarkerWithWaitList(producer, 0, NULL, &ev), "clEnqueueMarkerWithWaitList");
    /* The waiter may sit on another device: make sure the marker is submitted. */
    cl_int err = clFlush(producer);
    tocl_status s = tocl_queue_get(wdev, wstream, &waiter);
    if (s == TOCL_OK && err == CL_SUCCESS)
        err = clEnqueueBarrierWithWaitList(waiter, 1, &ev, NULL);
    clReleaseEvent(ev);
    TOCL_TRY(s);
    TOCL_CL_TRY(err, "clEnqueueBarrierWithWaitList (cross-stream wait)");
    return TOCL_OK;
}
