/* deferred.c - checks the host reads later (internal.h: tocl_deferred_*).
 *
 * A replayed graph does not wait for its index bounds checks: each replay
 * reads the [min, max] pairs back without a host wait (queue/record.c) and
 * hands the read here; so do nll_loss and index ops whose values the host
 * knows to be in range (tocl_copy_flag_later, tocl_index_check_later). The
 * values are checked when the host waits for the device anyway (a
 * synchronize, an event wait, a blocking copy to the host) and, once they
 * have arrived, at the next replay; a bad one fails that call. This is
 * how CUDA reports a device-side assert: at a later API call. Waiting at
 * each replay instead cost a decoding step its overlap of host
 * and device (1.72x -> 1.55x of fused eager on a KV-cache decode). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

/* Pending reads kept before the oldest are waited for (bounded memory when
 * a program replays without ever synchronizing). */
#define MAX_PENDING 256

typedef struct pending {
    struct pending *next;
    int dev, stream;
    cl_event ev;
    int64_t *vals; /* groups [min, max] pairs, or (groups 0) a flag pair [bad, value], filled by the read */
    int groups;
    int64_t lo, hi;
} pending;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pending *g_head, **g_tail = &g_head;
static int g_count;

static void drop(pending *p) {
    clReleaseEvent(p->ev);
    free(p->vals);
    free(p);
}

/* Wait for p's read (done already unless memory ran short) and return the
 * first problem its values show, as a failed status (TOCL_OK if none). */
static tocl_status verdict(const pending *p) {
    cl_int err = clWaitForEvents(1, &p->ev);
    if (err != CL_SUCCESS)
        return tocl_fail(TOCL_E_OPENCL, "reading a replayed graph's index bounds check failed: %s (%d)",
                         tocl_cl_error_name(err), (int)err);
    if (p->groups == 0 && p->vals[0] != 0) /* a flag pair [bad, value] */
        return tocl_fail(TOCL_E_INVALID,
                         "Target %lld is out of bounds: found by a check read back without a host wait (a replayed "
                         "graph's, or nll_loss's for targets whose values the host knew and that changed without "
                         "their version counter) and reported at the next synchronization or replay on device %d (as "
                         "CUDA reports a device-side assert); the work queued after that op ran with it",
                         (long long)p->vals[1], p->dev);
    for (int g = 0; g < p->groups; g++) {
        int64_t mn = p->vals[2 * g], mx = p->vals[2 * g + 1];
        if (mn < p->lo || mx > p->hi)
            return tocl_fail(TOCL_E_INVALID,
                             "index %lld is out of bounds [%lld, %lld]: found by a bounds check read back without a "
                             "host wait (a replayed graph's, or an index op's for indices whose range the host knew "
                             "and that changed without their version counter) and reported at the next "
                             "synchronization or replay on device %d (as CUDA reports a device-side assert); the work "
                             "queued after that index op ran with the index skipped",
                             (long long)(mn < p->lo ? mn : mx), (long long)p->lo, (long long)p->hi, p->dev);
    }
    return TOCL_OK;
}

static int arrived(const pending *p) {
    cl_int st = CL_QUEUED;
    if (clGetEventInfo(p->ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) != CL_SUCCESS)
        return 1; /* verdict() reports it */
    return st == CL_COMPLETE || st < 0;
}

tocl_status tocl_deferred_check(int dev, int stream, cl_event ev, int64_t *vals, int groups, int64_t lo,
                                int64_t hi) {
    pending *p = calloc(1, sizeof *p);
    if (!p) { /* no memory to keep it: check it now */
        pending now = {NULL, dev, stream, ev, vals, groups, lo, hi};
        tocl_status s = verdict(&now);
        clReleaseEvent(ev);
        free(vals);
        return s;
    }
    *p = (pending){NULL, dev, stream, ev, vals, groups, lo, hi};
    pthread_mutex_lock(&g_lock);
    *g_tail = p;
    g_tail = &p->next;
    __atomic_add_fetch(&g_count, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&g_lock);
    return TOCL_OK;
}

tocl_status tocl_deferred_read(int dev, int stream, cl_command_queue q, cl_mem buf, size_t off, size_t n, int groups,
                               int64_t lo, int64_t hi) {
    int64_t *v = malloc(n);
    if (!v)
        return tocl_fail(TOCL_E_OOM, "out of host memory for a check read back without waiting");
    cl_event ev = NULL;
    cl_int err = clEnqueueReadBuffer(q, buf, CL_FALSE, off, n, v, 0, NULL, &ev);
    if (err != CL_SUCCESS) {
        free(v);
        return tocl_fail(TOCL_E_OPENCL, "clEnqueueReadBuffer (a check read back without waiting): %s (%d)",
                         tocl_cl_error_name(err), (int)err);
    }
    return tocl_deferred_check(dev, stream, ev, v, groups, lo, hi);
}

tocl_status tocl_deferred_collect(int dev, int stream, int waited) {
    /* Take out, in order, what can be judged without waiting (and the
     * oldest beyond MAX_PENDING); judge it unlocked. */
    /* Every synchronize and blocking copy to the host comes here: without
     * a pending check (no replay since the last collect), no lock. A check
     * this thread queued is always seen; another thread's in flight is
     * judged at the next collect. */
    if (!__atomic_load_n(&g_count, __ATOMIC_ACQUIRE))
        return TOCL_OK;
    pending *ready = NULL, **rt = &ready;
    pthread_mutex_lock(&g_lock);
    int over = __atomic_load_n(&g_count, __ATOMIC_RELAXED) - MAX_PENDING;
    g_tail = &g_head;
    while (*g_tail) {
        pending *p = *g_tail;
        int mine = p->dev == dev && (stream < 0 || p->stream == stream);
        if (over > 0 || (mine && (waited || arrived(p)))) {
            *g_tail = p->next;
            p->next = NULL;
            *rt = p;
            rt = &p->next;
            __atomic_sub_fetch(&g_count, 1, __ATOMIC_RELAXED);
            over--;
        } else {
            g_tail = &p->next;
        }
    }
    pthread_mutex_unlock(&g_lock);
    tocl_status first = TOCL_OK;
    char msg[512] = "";
    while (ready) {
        pending *p = ready;
        ready = p->next;
        tocl_status s = verdict(p);
        if (s != TOCL_OK && first == TOCL_OK) {
            first = s;
            snprintf(msg, sizeof msg, "%s", tocl_last_error());
        }
        drop(p);
    }
    return first == TOCL_OK ? TOCL_OK : tocl_fail(first, "%s", msg);
}
