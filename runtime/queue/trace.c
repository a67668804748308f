/* trace.c - keeping enqueued work while a profiler traces (tocl/trace.h):
 * the kept events, the per-thread correlation stack, and the calibration of
 * each device's profiling clock against the host's. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "queue/trace.h"

/* Deeper nesting of profiled ops than this keeps the deepest id pushed
 * within the limit (record_function inside ops nests a few levels). */
#define CORR_DEPTH 64

typedef struct kept {
    tocl_trace_record rec;
    cl_event ev;
} kept;

int tocl_trace_on_;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static kept *g_kept;
static size_t g_n, g_cap;
/* Per device: host ns minus device ns, measured at begin. */
static int64_t *g_offset;
static int g_ndev;

static _Thread_local uint64_t tl_corr[CORR_DEPTH];
static _Thread_local int tl_depth;
static _Thread_local uint64_t tl_launch_corr;
static _Thread_local int tl_launch_nops;
static _Thread_local uint64_t tl_thread;

/* The id profilers show for host threads (torch's trace uses it too). */
static uint64_t thread_id(void) {
    if (!tl_thread)
        tl_thread = (uint64_t)syscall(SYS_gettid);
    return tl_thread;
}

int64_t tocl_trace_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void tocl_trace_corr_push(uint64_t id) {
    if (tl_depth < CORR_DEPTH)
        tl_corr[tl_depth] = id;
    tl_depth++;
}

void tocl_trace_corr_pop(void) {
    if (tl_depth > 0)
        tl_depth--;
}

uint64_t tocl_trace_corr_current(void) {
    if (tl_depth <= 0)
        return 0;
    return tl_corr[(tl_depth <= CORR_DEPTH ? tl_depth : CORR_DEPTH) - 1];
}

void tocl_trace_launch_begin(uint64_t corr, int nops) {
    tl_launch_corr = corr;
    tl_launch_nops = nops;
}

void tocl_trace_launch_end(void) {
    tl_launch_corr = 0;
    tl_launch_nops = 0;
}

int tocl_trace_active(void) { return __atomic_load_n(&tocl_trace_on_, __ATOMIC_ACQUIRE); }

static void drop_kept_locked(void) {
    for (size_t i = 0; i < g_n; i++)
        clReleaseEvent(g_kept[i].ev);
    g_n = 0;
}

/* The device's profiling clock against the host's. A marker's QUEUED time
 * is stamped on the calling thread as clEnqueueMarkerWithWaitList starts
 * (on PoCL 3.1 the call then takes ~20 us: it runs the marker on an idle
 * queue before returning), so host time t0, read just before the call, is
 * at most the stamp: t0 - QUEUED bounds the offset from below, within the
 * call's first instructions. The largest of a few tries is the tightest
 * bound; successive tries agree to ~0.2 us. */
#define CALIBRATION_TRIES 5

static tocl_status calibrate(int dev, int64_t *offset) {
    cl_command_queue q;
    TOCL_TRY(tocl_queue_get_nodefer(dev, 0, &q));
    int64_t best = INT64_MIN;
    for (int i = 0; i < CALIBRATION_TRIES; i++) {
        cl_event ev;
        int64_t t0 = tocl_trace_now_ns();
        TOCL_CL_TRY(clEnqueueMarkerWithWaitList(q, 0, NULL, &ev), "clEnqueueMarkerWithWaitList (trace calibration)");
        cl_ulong queued = 0;
        cl_int err = clWaitForEvents(1, &ev);
        if (err == CL_SUCCESS)
            err = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED, sizeof queued, &queued, NULL);
        clReleaseEvent(ev);
        TOCL_CL_TRY(err, "clGetEventProfilingInfo (trace calibration)");
        if (t0 - (int64_t)queued > best)
            best = t0 - (int64_t)queued;
    }
    *offset = best;
    return TOCL_OK;
}

tocl_status tocl_trace_begin(void) {
    if (tocl_trace_active())
        return tocl_fail(TOCL_E_INVALID, "a device trace is already on: end it (tocl_trace_end) before beginning another");
    int n = tocl_device_count();
    if (n < 0)
        n = 0;
    int64_t *off = calloc((size_t)(n ? n : 1), sizeof *off);
    if (!off)
        return tocl_fail(TOCL_E_OOM, "out of host memory starting a device trace");
    for (int d = 0; d < n; d++) {
        tocl_status s = calibrate(d, &off[d]);
        if (s != TOCL_OK) {
            free(off);
            tocl_error_context("calibrating the clock of OpenCL device %d for a trace", d);
            return s;
        }
    }
    pthread_mutex_lock(&g_mu);
    drop_kept_locked();
    free(g_offset);
    g_offset = off;
    g_ndev = n;
    pthread_mutex_unlock(&g_mu);
    __atomic_store_n(&tocl_trace_on_, 1, __ATOMIC_RELEASE);
    return TOCL_OK;
}

tocl_status tocl_trace_end(void) {
    __atomic_store_n(&tocl_trace_on_, 0, __ATOMIC_RELEASE);
    return TOCL_OK;
}

void tocl_trace_keep(cl_event ev, cl_int err, tocl_trace_kind kind, int dev, int stream, const char *name,
                     uint64_t bytes) {
    if (err != CL_SUCCESS)
        return; /* no event was made; the caller reports the failure */
    kept k;
    memset(&k.rec, 0, sizeof k.rec);
    k.rec.enqueue_end_ns = tocl_trace_now_ns();
    k.rec.host_thread = thread_id();
    k.ev = ev;
    k.rec.kind = kind;
    k.rec.dev = dev;
    k.rec.stream = stream;
    k.rec.bytes = bytes;
    /* In a fused eager launch the ops it runs were recorded earlier: their
     * id, which is 0 for ops recorded before the trace began. */
    k.rec.corr = tl_launch_nops ? tl_launch_corr : tocl_trace_corr_current();
    k.rec.fused_ops = tl_launch_nops ? tl_launch_nops : 1;
    strncpy(k.rec.name, name ? name : "?", TOCL_TRACE_NAME_MAX - 1);
    pthread_mutex_lock(&g_mu);
    if (g_n == g_cap) {
        size_t cap = g_cap ? g_cap * 2 : 1024;
        kept *grown = realloc(g_kept, cap * sizeof *grown);
        if (!grown) { /* out of host memory: this record is lost, the work is not */
            pthread_mutex_unlock(&g_mu);
            clReleaseEvent(ev);
            return;
        }
        g_kept = grown;
        g_cap = cap;
    }
    g_kept[g_n++] = k;
    pthread_mutex_unlock(&g_mu);
}

tocl_status tocl_trace_collect(tocl_trace_record **out, size_t *n) {
    if (!out || !n)
        return tocl_fail(TOCL_E_INVALID, "tocl_trace_collect: out and n must not be NULL");
    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&g_mu);
    size_t count = g_n;
    tocl_trace_record *recs = count ? malloc(count * sizeof *recs) : NULL;
    if (count && !recs) {
        pthread_mutex_unlock(&g_mu);
        return tocl_fail(TOCL_E_OOM, "out of host memory collecting %zu trace records", count);
    }
    tocl_status rc = TOCL_OK;
    size_t m = 0;
    for (size_t i = 0; i < count; i++) {
        kept *k = &g_kept[i];
        cl_ulong start = 0, end = 0, queued = 0;
        cl_int err = clWaitForEvents(1, &k->ev);
        if (err == CL_SUCCESS)
            err = clGetEventProfilingInfo(k->ev, CL_PROFILING_COMMAND_QUEUED, sizeof queued, &queued, NULL);
        if (err == CL_SUCCESS)
            err = clGetEventProfilingInfo(k->ev, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL);
        if (err == CL_SUCCESS)
            err = clGetEventProfilingInfo(k->ev, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
        clReleaseEvent(k->ev);
        if (err != CL_SUCCESS) {
            if (rc == TOCL_OK)
                rc = tocl_fail(TOCL_E_OPENCL, "reading the profiling times of traced %s on device %d: %s (%d)",
                               k->rec.name, k->rec.dev, tocl_cl_error_name(err), (int)err);
            continue;
        }
        int64_t off = k->rec.dev < g_ndev ? g_offset[k->rec.dev] : 0;
        recs[m] = k->rec;
        recs[m].start_ns = (int64_t)start + off;
        recs[m].end_ns = (int64_t)end + off;
        recs[m].enqueue_start_ns = (int64_t)queued + off;
        if (recs[m].enqueue_start_ns > recs[m].enqueue_end_ns) /* calibration error */
            recs[m].enqueue_start_ns = recs[m].enqueue_end_ns;
        m++;
    }
    g_n = 0;
    pthread_mutex_unlock(&g_mu);
    if (rc != TOCL_OK) {
        free(recs);
        return rc;
    }
    *out = recs;
    *n = m;
    return TOCL_OK;
}

void tocl_trace_free(tocl_trace_record *records) { free(records); }
