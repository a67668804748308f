/* alloc.c - the caching allocator: two pools of cl_mem segments, best-fit
 * blocks split and coalesced, stream-aware reuse, release-and-retry on OOM. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem_impl.h"

_Static_assert(TOCL_MAX_STREAMS <= 32, "mem_block.used_streams is a 32-bit stream mask");

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

static int is_free(const mem_block *b) { return !b->allocated && !b->pending && !b->held; }

/* Graph capture: the graph whose capture this thread is running (0: none).
 * Blocks allocated during a capture belong to its graph. Freed during the
 * capture they go back to the pool as usual, still the graph's, so the
 * capture reuses memory as an uncaptured run would (the same peak, the
 * same hot blocks); tocl_mem_capture_owner(0) then holds every free block
 * of the graph, and a block of the graph freed after its capture is held at
 * once: the replays write them all. Blocks of different owners never merge. */
static __thread uint64_t t_owner;

static tocl_status graph_blocks(uint64_t graph, int release);

void tocl_mem_capture_owner(uint64_t graph) {
    if (!graph && t_owner) {
        pthread_mutex_lock(&tocl_mem_lock);
        graph_blocks(t_owner, 0);
        pthread_mutex_unlock(&tocl_mem_lock);
    }
    t_owner = graph;
}

/* ---- blocks ---------------------------------------------------------------- */

/* Return a block to its pool, merging it with free neighbours so that a
 * segment whose blocks are all free becomes one block again. */
static tocl_status free_block(mem_dev *d, mem_block *b) {
    mem_segment *seg = b->seg;
    mem_freelist *fl = &d->free[seg->large];
    b->allocated = b->pending = b->held = 0;
    b->used_streams = 0;
    b->requested = 0;
    b->front = 0;
    b->armed = 0;
    int i = mem_block_index(seg, b);
    if (i + 1 < seg->nblocks && is_free(seg->blocks[i + 1]) && seg->blocks[i + 1]->owner == b->owner) {
        mem_block *next = seg->blocks[i + 1];
        mem_fl_remove(fl, next);
        b->size += next->size;
        mem_block_remove(seg, i + 1);
        free(next);
    }
    if (i > 0 && is_free(seg->blocks[i - 1]) && seg->blocks[i - 1]->owner == b->owner) {
        mem_block *prev = seg->blocks[i - 1];
        mem_fl_remove(fl, prev);
        prev->size += b->size;
        mem_block_remove(seg, i);
        free(b);
        b = prev;
    }
    return mem_fl_insert(fl, b);
}

/* Cut `size` bytes off the front of b, returning the rest to the pool when it
 * is worth keeping: any 512 B in the small pool; in the large pool only more
 * than 1 MiB, so that big segments are not shredded into slivers. */
static void split(mem_dev *d, mem_block *b, size_t size) {
    size_t rest = b->size - size;
    if (rest < MEM_ALIGN || (b->seg->large && rest <= MEM_SMALL_MAX))
        return;
    mem_block *r = calloc(1, sizeof *r);
    if (!r)
        return; /* keep the block whole: wasteful, not wrong */
    r->addr = b->addr + size;
    r->size = rest;
    r->seg = b->seg;
    r->stream = b->stream;
    r->owner = b->owner; /* a graph's replays may write any part of its block */
    if (mem_block_insert(b->seg, mem_block_index(b->seg, b) + 1, r) != TOCL_OK) {
        free(r);
        return;
    }
    b->size = size;
    if (mem_fl_insert(&d->free[b->seg->large], r) != TOCL_OK) {
        /* Not in the free list yet marked free: found again when a neighbour
         * is freed and coalesces with it, so nothing leaks for good. */
    }
}

/* ---- segments -------------------------------------------------------------- */

static size_t segment_size(size_t size, int large, uint64_t max_alloc) {
    size_t want = !large ? MEM_SMALL_SEGMENT
                         : size < MEM_LARGE_SHARED_MAX ? MEM_LARGE_SEGMENT : round_up(size, MEM_SMALL_SEGMENT);
    if (want > max_alloc)
        want = (size_t)max_alloc; /* the device cannot make one bigger buffer */
    return want < size ? size : want;
}

static int cl_out_of_memory(cl_int e) {
    return e == CL_MEM_OBJECT_ALLOCATION_FAILURE || e == CL_OUT_OF_RESOURCES || e == CL_OUT_OF_HOST_MEMORY ||
           e == CL_INVALID_BUFFER_SIZE;
}

/* A new segment holding one free block (not in a free list), or TOCL_E_OOM
 * without a message (the caller retries and then explains). */
static tocl_status new_segment(int dev, mem_dev *d, size_t size, int large, int stream, mem_block **out,
                               cl_int *cl_err) {
    const tocl_device_props *p = tocl_dev_props(dev);
    uint64_t limit = mem_limit(dev);
    size_t seg_size = segment_size(size, large, p->max_alloc_bytes);
    /* A padded segment that would break the limit: try the smallest that fits. */
    size_t minimal = large ? round_up(size, MEM_SMALL_SEGMENT) : seg_size;
    if (d->st.reserved_bytes + seg_size > limit && minimal < seg_size)
        seg_size = minimal;
    if (d->st.reserved_bytes + seg_size > limit)
        return TOCL_E_OOM;
    cl_int err = CL_SUCCESS;
    cl_mem buf = clCreateBuffer(tocl_dev_context(dev), CL_MEM_READ_WRITE, seg_size, NULL, &err);
    if (err != CL_SUCCESS) {
        *cl_err = err;
        if (cl_out_of_memory(err))
            return TOCL_E_OOM;
        return tocl_fail(TOCL_E_OPENCL, "clCreateBuffer of %zu bytes on OpenCL device %d failed: %s (%d)", seg_size,
                         dev, tocl_cl_error_name(err), err);
    }
    mem_segment *seg = calloc(1, sizeof *seg);
    mem_block *b = calloc(1, sizeof *b);
    tocl_status s = seg && b ? TOCL_OK : tocl_fail(TOCL_E_INTERNAL, "out of host memory creating a segment");
    if (s == TOCL_OK) {
        seg->base = mem_addr_reserve(seg_size);
        seg->size = seg_size;
        seg->buf = buf;
        seg->dev = dev;
        seg->large = large;
        b->addr = seg->base;
        b->size = seg_size;
        b->seg = seg;
        b->stream = stream;
        s = mem_block_insert(seg, 0, b);
    }
    if (s == TOCL_OK && (s = mem_seg_add(seg)) == TOCL_OK) {
        seg->stream = stream;
        d->st.reserved_bytes += seg_size;
        d->st.segments++;
        if (d->st.reserved_bytes > d->st.peak_reserved_bytes)
            d->st.peak_reserved_bytes = d->st.reserved_bytes;
        MEM_EMIT(TOCL_MEM_EV_SEGMENT_ALLOC, dev, d, stream, seg->base, seg_size, 0);
        *out = b;
        return TOCL_OK;
    }
    if (seg)
        free(seg->blocks);
    free(seg);
    free(b);
    clReleaseMemObject(buf);
    return s;
}

void mem_release_free_segments(int dev) {
    mem_dev *d;
    if (mem_dev_get(dev, &d) != TOCL_OK)
        return;
    /* Deferred elementwise ops (fused eager) hold buffers without a queued
     * command keeping them alive: enqueue them before releasing any. */
    if (tocl_sched_flush_device(dev) != TOCL_OK)
        return;
    int n;
    mem_segment **segs = mem_seg_all(&n);
    for (int i = n - 1; i >= 0; i--) { /* backwards: removal shifts only later entries */
        mem_segment *seg = segs[i];
        if (seg->dev != dev || seg->nblocks != 1 || !is_free(seg->blocks[0]))
            continue;
        mem_fl_remove(&d->free[seg->large], seg->blocks[0]);
        mem_seg_remove(seg);
        /* OpenCL keeps the buffer alive until queued commands using it finish. */
        clReleaseMemObject(seg->buf);
        d->st.reserved_bytes -= seg->size;
        d->st.segments--;
        MEM_EMIT(TOCL_MEM_EV_SEGMENT_FREE, dev, d, seg->stream, seg->base, seg->size, 0);
        free(seg->blocks[0]);
        free(seg->blocks);
        free(seg);
    }
}

/* Move freed blocks whose other-stream markers have completed back into the
 * pools; with `wait`, wait for the markers first (only when out of memory). */
void mem_process_pending(int dev, int wait) {
    mem_dev *d;
    if (mem_dev_get(dev, &d) != TOCL_OK)
        return;
    for (int i = 0; i < d->npending;) {
        mem_block *b = d->pending[i];
        int done = 1;
        for (int k = 0; k < b->nevents && done; k++) {
            cl_int st = CL_QUEUED;
            if (wait)
                clWaitForEvents(1, &b->events[k]);
            /* A failed command (st < 0) will never touch the block again. */
            if (clGetEventInfo(b->events[k], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) == CL_SUCCESS &&
                st > CL_COMPLETE)
                done = 0;
        }
        if (!done) {
            i++;
            continue;
        }
        for (int k = 0; k < b->nevents; k++)
            clReleaseEvent(b->events[k]);
        free(b->events);
        b->events = NULL;
        b->nevents = 0;
        d->pending[i] = d->pending[--d->npending];
        MEM_EMIT(TOCL_MEM_EV_FREE_COMPLETED, dev, d, b->stream, b->addr + b->front, b->size - 2 * (size_t)b->front,
                 0);
        free_block(d, b);
    }
}

/* ---- public entry points --------------------------------------------------- */

static tocl_status oom(int dev, mem_dev *d, size_t nbytes, cl_int cl_err) {
    char want[32], alloc[32], resv[32], total[32], lim[32];
    uint64_t limit = mem_limit(dev), dev_total = tocl_dev_props(dev)->global_mem_bytes;
    mem_format_bytes(want, sizeof want, nbytes);
    mem_format_bytes(alloc, sizeof alloc, d->st.allocated_bytes);
    mem_format_bytes(resv, sizeof resv, d->st.reserved_bytes);
    mem_format_bytes(total, sizeof total, dev_total);
    mem_format_bytes(lim, sizeof lim, limit);
    char extra[160] = "";
    if (cl_err != CL_SUCCESS)
        snprintf(extra, sizeof extra, "; clCreateBuffer failed: %s (%d)", tocl_cl_error_name(cl_err), cl_err);
    else if (limit != dev_total)
        snprintf(extra, sizeof extra, "; the allocator limit is %s (TORCH_OCL_MEMORY_LIMIT or set_limit)", lim);
    return tocl_fail(TOCL_E_OOM,
                     "OpenCL device %d out of memory: tried to allocate %s; %s allocated, %s reserved, %s total on "
                     "the device%s. Free tensors you no longer need, or use smaller batches.",
                     dev, want, alloc, resv, total, extra);
}

tocl_status tocl_mem_alloc(int dev, size_t nbytes, tocl_addr *out) {
    if (!out)
        return tocl_fail(TOCL_E_INVALID, "tocl_mem_alloc: out is NULL");
    *out = 0;
    if (nbytes == 0)
        return TOCL_OK;
    mem_dev *d;
    TOCL_TRY(mem_dev_get(dev, &d));
    uint64_t max_alloc = tocl_dev_props(dev)->max_alloc_bytes;
    if (nbytes > max_alloc) {
        char want[32], most[32];
        mem_format_bytes(want, sizeof want, nbytes);
        mem_format_bytes(most, sizeof most, max_alloc);
        pthread_mutex_lock(&tocl_mem_lock);
        d->st.ooms++;
        MEM_EMIT(TOCL_MEM_EV_OOM, dev, d, tocl_stream_current(dev), 0, nbytes, nbytes);
        pthread_mutex_unlock(&tocl_mem_lock);
        return tocl_fail(TOCL_E_OOM,
                         "OpenCL device %d out of memory: tried to allocate %s in one piece, but its largest single "
                         "buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE) is %s", dev, want, most);
    }
    size_t size = round_up(nbytes, MEM_ALIGN);
    int large = size > MEM_SMALL_MAX;
    int stream = tocl_stream_current(dev);
    mem_freelist *fl = &d->free[large];
    cl_int cl_err = CL_SUCCESS;
    tocl_status s = TOCL_OK;

    pthread_mutex_lock(&tocl_mem_lock);
    mem_guard_poll(0);
    /* Guard mode: canaries before and after; the pool is chosen by the
     * caller's size, so a small pool block can exceed 1 MiB by 1 KiB. */
    size_t front = mem_guard_on() ? MEM_GUARD : 0;
    size += 2 * front;
    mem_process_pending(dev, 0);
    mem_block *b = mem_fl_best(fl, stream, size);
    int hit = b != NULL;
    if (b) {
        mem_fl_remove(fl, b);
    } else if ((s = new_segment(dev, d, size, large, stream, &b, &cl_err)) == TOCL_E_OOM) {
        /* Blocks freed on other streams may only need their markers. */
        if (d->npending) {
            mem_process_pending(dev, 1);
            if ((b = mem_fl_best(fl, stream, size)) != NULL) {
                mem_fl_remove(fl, b);
                hit = 1;
                s = TOCL_OK;
            }
        }
        if (!b) {
            d->st.alloc_retries++;
            mem_release_free_segments(dev);
            cl_err = CL_SUCCESS;
            s = new_segment(dev, d, size, large, stream, &b, &cl_err);
        }
    }
    if (s != TOCL_OK) {
        if (s == TOCL_E_OOM) {
            d->st.ooms++;
            MEM_EMIT(TOCL_MEM_EV_OOM, dev, d, stream, 0, nbytes, nbytes);
            s = oom(dev, d, nbytes, cl_err);
        }
        pthread_mutex_unlock(&tocl_mem_lock);
        return s;
    }
    split(d, b, size);
    b->allocated = 1;
    if (t_owner)
        b->owner = t_owner;
    b->requested = nbytes;
    b->front = (uint32_t)front;
    if (front)
        mem_guard_arm(b);
    /* Statistics leave the guard bytes out, so they read as without them. */
    d->st.allocated_bytes += b->size - 2 * front;
    d->st.requested_bytes += nbytes;
    d->st.active_blocks++;
    d->st.alloc_count++;
    d->st.cache_hits += hit;
    if (d->st.allocated_bytes > d->st.peak_allocated_bytes)
        d->st.peak_allocated_bytes = d->st.allocated_bytes;
    *out = b->addr + front;
    MEM_EMIT(TOCL_MEM_EV_ALLOC, dev, d, stream, *out, b->size - 2 * front, nbytes);
    pthread_mutex_unlock(&tocl_mem_lock);
    return TOCL_OK;
}

/* A marker on every other stream that used the block; the block is reused
 * once they complete. If a marker cannot be made, wait for that stream. */
static tocl_status mark_streams(mem_block *b) {
    int dev = b->seg->dev;
    b->events = calloc(TOCL_MAX_STREAMS, sizeof *b->events);
    for (int s = 0; s < TOCL_MAX_STREAMS; s++) {
        if (!(b->used_streams & (1u << s)))
            continue;
        cl_command_queue q;
        TOCL_TRY(tocl_queue_get(dev, s, &q));
        cl_event ev = NULL;
        cl_int err = b->events ? clEnqueueMarkerWithWaitList(q, 0, NULL, &ev) : CL_OUT_OF_HOST_MEMORY;
        if (err == CL_SUCCESS) {
            b->events[b->nevents++] = ev;
            clFlush(q); /* so the marker completes without anyone else flushing */
        } else {
            TOCL_CL_TRY(clFinish(q), "clFinish while freeing a block used on another stream");
        }
    }
    return TOCL_OK;
}

tocl_status tocl_mem_free(tocl_addr addr) {
    /* In a forked child the block is the parent's (and the allocator's lock
     * may have been held by a thread that did not survive the fork). */
    if (!addr || tocl_in_bad_fork())
        return TOCL_OK;
    pthread_mutex_lock(&tocl_mem_lock);
    mem_block *b = mem_block_find(addr);
    mem_dev *d = NULL;
    tocl_status s = TOCL_OK;
    if (!b || b->addr + b->front != addr || !b->allocated)
        s = tocl_fail(TOCL_E_INVALID,
                      "tocl_mem_free: 0x%" PRIx64 " is not the start of a live OpenCL allocation (double free, an "
                      "offset pointer, or not from this allocator)", addr);
    else
        s = mem_dev_get(b->seg->dev, &d);
    if (s != TOCL_OK) {
        pthread_mutex_unlock(&tocl_mem_lock);
        return s;
    }
    size_t user_size = b->size - 2 * (size_t)b->front;
    d->st.allocated_bytes -= user_size;
    d->st.requested_bytes -= b->requested;
    d->st.active_blocks--;
    d->st.free_count++;
    b->allocated = 0;
    MEM_EMIT(TOCL_MEM_EV_FREE_REQUESTED, b->seg->dev, d, b->stream, addr, user_size, b->requested);
    /* Deferred ops that write here belong to a dead tensor (fused eager). */
    tocl_sched_note_free(b->seg->dev, addr, b->size - 2 * (size_t)b->front);
    if (b->owner && (b->owner != t_owner || b->used_streams)) {
        /* A captured graph's replays write it: it stays reserved for the
         * graph (tocl_mem_owner_release). */
        b->held = 1;
    } else if (b->front && !b->used_streams) {
        /* Guard mode: the read-back is queued before any later user of the
         * block on this stream, so the block is reusable at once. */
        mem_guard_read_back(b, NULL, 0);
        MEM_EMIT(TOCL_MEM_EV_FREE_COMPLETED, b->seg->dev, d, b->stream, addr, user_size, 0);
        s = free_block(d, b);
    } else if (b->used_streams) {
        b->pending = 1;
        s = mark_streams(b);
        if (b->front) /* after every other stream that used the block */
            mem_guard_read_back(b, b->events, b->nevents);
        if (d->npending == d->cap_pending) {
            int cap = d->cap_pending ? d->cap_pending * 2 : 16;
            mem_block **v = realloc(d->pending, (size_t)cap * sizeof *v);
            if (v) {
                d->pending = v;
                d->cap_pending = cap;
            }
        }
        /* Even after a failed marker the block is queued: its events so far
         * are real, and a stream that could not be marked was finished. */
        if (d->npending < d->cap_pending)
            d->pending[d->npending++] = b;
        else if (s == TOCL_OK)
            s = tocl_fail(TOCL_E_INTERNAL, "out of host memory freeing a block; it stays reserved");
    } else {
        MEM_EMIT(TOCL_MEM_EV_FREE_COMPLETED, b->seg->dev, d, b->stream, addr, user_size, 0);
        s = free_block(d, b);
    }
    pthread_mutex_unlock(&tocl_mem_lock);
    return s;
}

tocl_status tocl_mem_record_stream(tocl_addr addr, int stream) {
    if (stream < 0 || stream >= TOCL_MAX_STREAMS)
        return tocl_fail(TOCL_E_INVALID, "tocl_mem_record_stream: stream %d is out of range 0..%d", stream,
                         TOCL_MAX_STREAMS - 1);
    pthread_mutex_lock(&tocl_mem_lock);
    mem_block *b = addr ? mem_block_find(addr) : NULL;
    int live = b && b->allocated;
    if (live && stream != b->stream)
        b->used_streams |= 1u << stream;
    pthread_mutex_unlock(&tocl_mem_lock);
    if (!live)
        return tocl_fail(TOCL_E_INVALID, "tocl_mem_record_stream: 0x%" PRIx64 " is not inside a live OpenCL allocation",
                         addr);
    return TOCL_OK;
}

/* The blocks tagged with graph: hold (release 0) takes its free ones out of
 * the pools; release (1) drops the tag and hands its held ones back. Caller
 * holds tocl_mem_lock. */
static tocl_status graph_blocks(uint64_t graph, int release) {
    tocl_status s = TOCL_OK;
    int nseg = 0;
    mem_segment **segs = mem_seg_all(&nseg);
    for (int i = 0; i < nseg; i++) {
        mem_segment *seg = segs[i];
        mem_dev *d;
        if (mem_dev_get(seg->dev, &d) != TOCL_OK)
            continue;
        for (int j = 0; j < seg->nblocks; j++) {
            mem_block *b = seg->blocks[j];
            if (b->owner != graph)
                continue;
            if (!release) {
                if (is_free(b)) {
                    mem_fl_remove(&d->free[seg->large], b);
                    b->held = 1;
                }
                continue;
            }
            b->owner = 0; /* if still allocated: the caller's own from now on */
            if (b->held) {
                b->held = 0;
                MEM_EMIT(TOCL_MEM_EV_FREE_COMPLETED, seg->dev, d, b->stream, b->addr + b->front,
                         b->size - 2 * (size_t)b->front, 0);
                tocl_status fs = free_block(d, b);
                if (s == TOCL_OK)
                    s = fs;
                j = -1; /* free_block merged neighbours: rescan the segment */
            }
        }
    }
    return s;
}

tocl_status tocl_mem_owner_release(uint64_t graph) {
    if (!graph || tocl_in_bad_fork())
        return TOCL_OK;
    pthread_mutex_lock(&tocl_mem_lock);
    tocl_status s = graph_blocks(graph, 1);
    pthread_mutex_unlock(&tocl_mem_lock);
    return s;
}
