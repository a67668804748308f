/* event.c - events: markers on in-order queues, cross-stream waits, timing.
 *
 * An event wraps the cl_event of a marker. On an in-order queue a marker
 * completes only after all work queued before it, so it captures "the work
 * queued so far" exactly like cudaEventRecord.
 *
 * Timing: elapsed_ms uses the device profiling clock (CL_PROFILING_COMMAND_END
 * of the two markers). Some drivers report 0 or CL_PROFILING_INFO_NOT_AVAILABLE
 * for markers, and devices of different platforms have unrelated clocks; then
 * it falls back to a host timestamp (CLOCK_MONOTONIC) taken by a completion
 * callback (clSetEventCallback), which is later than the device's completion by
 * the driver's callback latency (microseconds on PoCL). */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "internal.h"

/* Host completion time, shared between the event and its callback: whichever
 * lets go last frees it, so destroying an event before it completes is safe. */
typedef struct host_stamp {
    int refs;   /* atomic */
    int set;    /* atomic: ms is valid */
    double ms;
} host_stamp;

struct tocl_event {
    pthread_mutex_t mu;
    cl_event ev;        /* NULL until recorded */
    int dev, stream;
    host_stamp *stamp;  /* NULL if the callback could not be registered */
};

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void stamp_unref(host_stamp *h) {
    if (h && __atomic_sub_fetch(&h->refs, 1, __ATOMIC_ACQ_REL) == 0)
        free(h);
}

static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *user) {
    host_stamp *h = user;
    h->ms = now_ms();
    __atomic_store_n(&h->set, 1, __ATOMIC_RELEASE);
    stamp_unref(h);
}

tocl_status tocl_event_create(tocl_event **out) {
    if (!out)
        return tocl_fail(TOCL_E_INVALID, "tocl_event_create: out is NULL");
    tocl_event *e = calloc(1, sizeof *e);
    if (!e)
        return tocl_fail(TOCL_E_INTERNAL, "out of host memory creating an event");
    pthread_mutex_init(&e->mu, NULL);
    e->dev = -1;
    *out = e;
    return TOCL_OK;
}

void tocl_event_destroy(tocl_event *e) {
    if (!e || tocl_in_bad_fork()) /* the driver is unusable in a forked child: leak it */
        return;
    if (e->ev)
        clReleaseEvent(e->ev);
    stamp_unref(e->stamp);
    pthread_mutex_destroy(&e->mu);
    free(e);
}

tocl_status tocl_event_record(tocl_event *e, int dev, int stream) {
    if (!e)
        return tocl_fail(TOCL_E_INVALID, "tocl_event_record: event is NULL");
    cl_command_queue q;
    TOCL_TRY(tocl_queue_get(dev, stream, &q));
    cl_event ev = NULL;
    TOCL_CL_TRY(clEnqueueMarkerWithWaitList(q, 0, NULL, &ev), "clEnqueueMarkerWithWaitList");
    host_stamp *h = malloc(sizeof *h);
    if (h) {
        h->refs = 2; /* the event's and the callback's */
        h->set = 0;
        h->ms = 0;
        if (clSetEventCallback(ev, CL_COMPLETE, on_complete, h) != CL_SUCCESS) {
            free(h); /* timing then relies on the profiling clock alone */
            h = NULL;
        }
    }
    pthread_mutex_lock(&e->mu);
    cl_event old = e->ev;
    host_stamp *old_h = e->stamp;
    e->ev = ev;
    e->stamp = h;
    e->dev = dev;
    e->stream = stream;
    pthread_mutex_unlock(&e->mu);
    if (old)
        clReleaseEvent(old);
    stamp_unref(old_h);
    return TOCL_OK;
}

/* Take a reference to the recorded cl_event (NULL if never recorded), and
 * submit its queue so that a waiter on another queue or the host can see it
 * complete without anyone else flushing. */
static tocl_status grab(tocl_event *e, cl_event *ev, int *dev, int *stream) {
    pthread_mutex_lock(&e->mu);
    *ev = e->ev;
    *dev = e->dev;
    *stream = e->stream;
    if (*ev)
        clRetainEvent(*ev);
    pthread_mutex_unlock(&e->mu);
    if (*ev) {
        tocl_status s = tocl_stream_flush(*dev, *stream);
        if (s != TOCL_OK) {
            clReleaseEvent(*ev);
            return s;
        }
    }
    return TOCL_OK;
}

tocl_status tocl_event_block(tocl_event *e, int dev, int stream) {
    if (!e)
        return tocl_fail(TOCL_E_INVALID, "tocl_event_block: event is NULL");
    cl_command_queue q;
    TOCL_TRY(tocl_queue_get(dev, stream, &q));
    cl_event ev;
    int edev, estream;
    TOCL_TRY(grab(e, &ev, &edev, &estream));
    if (!ev)
        return TOCL_OK; /* never recorded: complete */
    cl_int err = CL_SUCCESS;
    const char *what = "clEnqueueBarrierWithWaitList";
    if (edev == dev && estream == stream) {
        /* Same in-order queue: later work already runs after the marker. */
    } else if (tocl_dev_context(edev) == tocl_dev_context(dev)) {
        err = clEnqueueBarrierWithWaitList(q, 1, &ev, NULL);
    } else {
        /* A cl_event cannot be waited on by a queue of another context;
         * the host has to wait instead. */
        what = "clWaitForEvents";
        err = clWaitForEvents(1, &ev);
    }
    clReleaseEvent(ev);
    TOCL_CL_TRY(err, what);
    return TOCL_OK;
}

static tocl_status status_of(cl_event ev, int *done) {
    cl_int st = CL_QUEUED;
    TOCL_CL_TRY(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL),
                "clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)");
    if (st < 0)
        return tocl_fail(TOCL_E_OPENCL, "work before an event failed: %s (%d)", tocl_cl_error_name(st), st);
    *done = st == CL_COMPLETE;
    return TOCL_OK;
}

tocl_status tocl_event_query(tocl_event *e, int *done) {
    if (!e || !done)
        return tocl_fail(TOCL_E_INVALID, "tocl_event_query: NULL argument");
    cl_event ev;
    int dev, stream;
    TOCL_TRY(grab(e, &ev, &dev, &stream));
    if (!ev) {
        *done = 1;
        return TOCL_OK;
    }
    tocl_status s = status_of(ev, done);
    clReleaseEvent(ev);
    return s;
}

tocl_status tocl_event_sync(tocl_event *e) {
    if (!e)
        return tocl_fail(TOCL_E_INVALID, "tocl_event_sync: event is NULL");
    cl_event ev;
    int dev, stream;
    TOCL_TRY(grab(e, &ev, &dev, &stream));
    if (!ev)
        return TOCL_OK;
    cl_int err = clWaitForEvents(1, &ev); /* outside the event's lock: others may query meanwhile */
    clReleaseEvent(ev);
    TOCL_CL_TRY(err, "clWaitForEvents");
    return tocl_deferred_collect(dev, -1, 0); /* the replays' checks that have arrived */
}

static int device_time(cl_event ev, cl_ulong *t) {
    *t = 0;
    return clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof *t, t, NULL) == CL_SUCCESS && *t != 0;
}

/* The callback runs shortly after the status turns CL_COMPLETE; give it a
 * moment rather than failing a query the caller made correctly. */
static int host_time(host_stamp *h, double *ms) {
    if (!h)
        return 0;
    double give_up = now_ms() + 1000.0;
    while (!__atomic_load_n(&h->set, __ATOMIC_ACQUIRE)) {
        if (now_ms() > give_up)
            return 0;
        sched_yield();
    }
    *ms = h->ms;
    return 1;
}

tocl_status tocl_event_elapsed_ms(tocl_event *start, tocl_event *end, double *ms) {
    if (!start || !end || !ms)
        return tocl_fail(TOCL_E_INVALID, "tocl_event_elapsed_ms: NULL argument");
    tocl_event *ends[2] = {start, end};
    cl_event evs[2] = {NULL, NULL};
    host_stamp *hs[2] = {NULL, NULL};
    int devs[2] = {-1, -1};
    tocl_status s = TOCL_OK;
    for (int i = 0; i < 2; i++) {
        pthread_mutex_lock(&ends[i]->mu);
        evs[i] = ends[i]->ev;
        devs[i] = ends[i]->dev;
        hs[i] = ends[i]->stamp;
        if (evs[i])
            clRetainEvent(evs[i]);
        if (hs[i])
            __atomic_add_fetch(&hs[i]->refs, 1, __ATOMIC_ACQ_REL);
        pthread_mutex_unlock(&ends[i]->mu);
        int done = 0;
        if (!evs[i])
            s = tocl_fail(TOCL_E_INVALID, "elapsed time needs two recorded events; the %s event was never recorded",
                          i ? "end" : "start");
        else if ((s = status_of(evs[i], &done)) == TOCL_OK && !done)
            s = tocl_fail(TOCL_E_INVALID, "elapsed time: the %s event has not completed yet; synchronize it first",
                          i ? "end" : "start");
        if (s != TOCL_OK)
            break;
    }
    if (s == TOCL_OK) {
        cl_ulong t0, t1;
        double h0, h1;
        int same_clock = tocl_dev_platform(devs[0]) == tocl_dev_platform(devs[1]);
        if (same_clock && device_time(evs[0], &t0) && device_time(evs[1], &t1))
            *ms = ((double)t1 - (double)t0) / 1e6;
        else if (host_time(hs[0], &h0) && host_time(hs[1], &h1))
            *ms = h1 - h0;
        else
            s = tocl_fail(TOCL_E_UNSUPPORTED, "elapsed time: the OpenCL driver reports no timing for markers");
    }
    for (int i = 0; i < 2; i++) {
        if (evs[i])
            clReleaseEvent(evs[i]);
        stamp_unref(hs[i]);
    }
    return s;
}

int tocl_event_device(const tocl_event *e) {
    if (!e)
        return -1;
    tocl_event *m = (tocl_event *)e; /* the lock is not part of the logical state */
    pthread_mutex_lock(&m->mu);
    int dev = m->dev;
    pthread_mutex_unlock(&m->mu);
    return dev;
}
