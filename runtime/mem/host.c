/* host.c - pinned host memory for asynchronous copies, kept alive after an
 * early free until the device work that reads or writes it is done. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

typedef struct host_block {
    char *ptr;
    size_t size;
    int locked;        /* mlock succeeded, so munlock on release */
    cl_event *events;  /* markers after the async copies that use the block */
    int nevents, cap;
} host_block;

typedef struct host_list {
    host_block *v;
    int n, cap;
} host_list;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static host_list g_live;     /* sorted by ptr, for lookups of any inner address */
static host_list g_deferred; /* freed by the caller, still used by queued copies */
static tocl_host_stats g_st;  /* deferred_* are counted on read */

static tocl_status list_reserve(host_list *l) {
    if (l->n < l->cap)
        return TOCL_OK;
    int cap = l->cap ? l->cap * 2 : 32;
    host_block *v = realloc(l->v, (size_t)cap * sizeof *v);
    if (!v)
        return tocl_fail(TOCL_E_INTERNAL, "out of host memory tracking pinned blocks");
    l->v = v;
    l->cap = cap;
    return TOCL_OK;
}

/* Index of the last live block starting at or before p, or -1. */
static int live_floor(const char *p) {
    int lo = 0, hi = g_live.n - 1, ans = -1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if ((uintptr_t)g_live.v[mid].ptr <= (uintptr_t)p) {
            ans = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return ans;
}

static int live_find(const void *p) {
    int i = live_floor(p);
    if (i >= 0 && (uintptr_t)p < (uintptr_t)g_live.v[i].ptr + g_live.v[i].size)
        return i;
    return -1;
}

/* Drop markers that have completed (or failed: then nothing touches the
 * memory any more either), without waiting. */
static void prune(host_block *b) {
    int k = 0;
    for (int i = 0; i < b->nevents; i++) {
        cl_int st = CL_QUEUED;
        cl_int err = clGetEventInfo(b->events[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
        if (err != CL_SUCCESS || st <= CL_COMPLETE)
            clReleaseEvent(b->events[i]);
        else
            b->events[k++] = b->events[i];
    }
    b->nevents = k;
}

static void release(host_block *b) {
    g_st.free_count++;
    if (b->locked)
        munlock(b->ptr, b->size);
    free(b->ptr);
    free(b->events);
}

/* Really free deferred blocks whose copies are done; called on every host
 * alloc and free so that memory comes back without any host wait. */
static void collect_deferred(void) {
    int k = 0;
    for (int i = 0; i < g_deferred.n; i++) {
        host_block *b = &g_deferred.v[i];
        prune(b);
        if (b->nevents == 0)
            release(b);
        else
            g_deferred.v[k++] = *b;
    }
    g_deferred.n = k;
}

tocl_status tocl_host_alloc(size_t nbytes, void **out) {
    if (!out)
        return tocl_fail(TOCL_E_INVALID, "tocl_host_alloc: out is NULL");
    *out = NULL;
    TOCL_TRY(tocl_fork_check()); /* its bookkeeping waits on the parent's copy events */
    if (nbytes == 0)
        return TOCL_OK;
    void *p = NULL;
    /* 64 bytes: a cache line, and enough for any vector type a driver may
     * use to read the memory directly. */
    if (posix_memalign(&p, 64, nbytes) != 0)
        return tocl_fail(TOCL_E_OOM, "out of host memory allocating %zu bytes of pinned memory", nbytes);
    /* Page-locking is an optimisation the user's RLIMIT_MEMLOCK may forbid;
     * the memory is still valid for async copies without it. */
    int locked = mlock(p, nbytes) == 0;
    pthread_mutex_lock(&g_mu);
    collect_deferred();
    tocl_status s = list_reserve(&g_live);
    if (s == TOCL_OK) {
        int at = live_floor(p) + 1;
        memmove(&g_live.v[at + 1], &g_live.v[at], (size_t)(g_live.n - at) * sizeof *g_live.v);
        g_live.v[at] = (host_block){.ptr = p, .size = nbytes, .locked = locked};
        g_live.n++;
        g_st.alloc_count++;
        g_st.live_bytes += nbytes;
        g_st.live_blocks++;
        if (g_st.live_bytes > g_st.peak_live_bytes)
            g_st.peak_live_bytes = g_st.live_bytes;
        if (g_st.live_blocks > g_st.peak_live_blocks)
            g_st.peak_live_blocks = g_st.live_blocks;
    }
    pthread_mutex_unlock(&g_mu);
    if (s != TOCL_OK) {
        if (locked)
            munlock(p, nbytes);
        free(p);
        return s;
    }
    *out = p;
    return TOCL_OK;
}

tocl_status tocl_host_free(void *ptr) {
    if (!ptr || tocl_in_bad_fork()) /* a forked child's copy of the parent's block: left alone */
        return TOCL_OK;
    pthread_mutex_lock(&g_mu);
    collect_deferred();
    int i = live_find(ptr);
    if (i < 0 || g_live.v[i].ptr != ptr) {
        pthread_mutex_unlock(&g_mu);
        return tocl_fail(TOCL_E_INVALID, "tocl_host_free: %p is not the start of a live pinned host block", ptr);
    }
    host_block b = g_live.v[i];
    memmove(&g_live.v[i], &g_live.v[i + 1], (size_t)(g_live.n - i - 1) * sizeof *g_live.v);
    g_live.n--;
    g_st.live_bytes -= b.size;
    g_st.live_blocks--;
    prune(&b);
    tocl_status s = TOCL_OK;
    if (b.nevents == 0) {
        release(&b);
    } else if ((s = list_reserve(&g_deferred)) == TOCL_OK) {
        g_deferred.v[g_deferred.n++] = b;
    } else {
        /* Freeing now could let a queued copy write into reused memory;
         * leaking it is the safe failure. */
    }
    pthread_mutex_unlock(&g_mu);
    return s;
}

int tocl_host_is_pinned(const void *ptr) {
    if (!ptr)
        return 0;
    pthread_mutex_lock(&g_mu);
    int found = live_find(ptr) >= 0;
    pthread_mutex_unlock(&g_mu);
    return found;
}

tocl_status tocl_host_record_use(const void *ptr, int dev, int stream) {
    cl_command_queue q;
    TOCL_TRY(tocl_queue_get(dev, stream, &q));
    cl_event ev = NULL;
    TOCL_CL_TRY(clEnqueueMarkerWithWaitList(q, 0, NULL, &ev), "clEnqueueMarkerWithWaitList");
    clFlush(q); /* so a deferred free can complete without anyone else flushing */
    pthread_mutex_lock(&g_mu);
    int i = live_find(ptr);
    tocl_status s = TOCL_OK;
    if (i < 0) {
        s = tocl_fail(TOCL_E_INVALID, "tocl_host_record_use: %p is not inside a live pinned host block", ptr);
    } else {
        host_block *b = &g_live.v[i];
        prune(b); /* a long-lived staging buffer must not collect events forever */
        if (b->nevents == b->cap) {
            int cap = b->cap ? b->cap * 2 : 4;
            cl_event *v = realloc(b->events, (size_t)cap * sizeof *v);
            if (v) {
                b->events = v;
                b->cap = cap;
            }
        }
        if (b->nevents < b->cap) {
            b->events[b->nevents++] = ev;
            ev = NULL;
        } else {
            s = tocl_fail(TOCL_E_INTERNAL, "out of host memory recording a pinned block's use");
        }
    }
    pthread_mutex_unlock(&g_mu);
    if (ev) {
        /* Could not track it: keep the promise by waiting for the work. */
        if (s == TOCL_E_INTERNAL && clWaitForEvents(1, &ev) == CL_SUCCESS)
            s = TOCL_OK;
        clReleaseEvent(ev);
    }
    return s;
}

tocl_status tocl_host_stats_get(tocl_host_stats *out) {
    if (!out)
        return tocl_fail(TOCL_E_INVALID, "tocl_host_stats_get: out is NULL");
    pthread_mutex_lock(&g_mu);
    *out = g_st;
    out->deferred_blocks = (uint64_t)g_deferred.n;
    out->deferred_bytes = 0;
    for (int i = 0; i < g_deferred.n; i++)
        out->deferred_bytes += g_deferred.v[i].size;
    pthread_mutex_unlock(&g_mu);
    return TOCL_OK;
}

void tocl_host_reset_peak(void) {
    pthread_mutex_lock(&g_mu);
    g_st.peak_live_bytes = g_st.live_bytes;
    g_st.peak_live_blocks = g_st.live_blocks;
    pthread_mutex_unlock(&g_mu);
}

void tocl_host_reset_counters(void) {
    pthread_mutex_lock(&g_mu);
    g_st.alloc_count = 0;
    g_st.free_count = 0;
    pthread_mutex_unlock(&g_mu);
}

void tocl_host_empty_cache(void) {
    pthread_mutex_lock(&g_mu);
    collect_deferred();
    pthread_mutex_unlock(&g_mu);
}
