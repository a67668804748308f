/* observe.c - what the allocator tells about itself: the event observer
 * (memory profilers, allocation history) and snapshots of every segment and
 * block (PyTorch's memory snapshot and viewer). */
#include <stdlib.h>
#include <string.h>

#include "mem_impl.h"

tocl_mem_observer mem_observer; /* read and written under tocl_mem_lock */
static void *g_observer_user;

void tocl_mem_set_observer(tocl_mem_observer fn, void *user) {
    pthread_mutex_lock(&tocl_mem_lock);
    mem_observer = fn;
    g_observer_user = user;
    pthread_mutex_unlock(&tocl_mem_lock);
}

void mem_emit(tocl_mem_event_kind kind, int dev, const mem_dev *d, int stream, tocl_addr addr, uint64_t size,
              uint64_t requested) {
    tocl_mem_event ev = {
        .kind = kind,
        .dev = dev,
        .stream = stream,
        .addr = addr,
        .size = size,
        .requested = requested,
        .allocated_bytes = d->st.allocated_bytes,
        .reserved_bytes = d->st.reserved_bytes,
    };
    if (kind == TOCL_MEM_EV_OOM) {
        uint64_t limit = mem_limit(dev);
        ev.device_free = d->st.reserved_bytes < limit ? limit - d->st.reserved_bytes : 0;
    }
    mem_observer(&ev, g_observer_user);
}

static tocl_mem_block_state block_state(const mem_block *b) {
    if (b->allocated)
        return TOCL_MEM_BLOCK_ACTIVE_ALLOCATED;
    return b->pending ? TOCL_MEM_BLOCK_AWAITING_FREE : TOCL_MEM_BLOCK_INACTIVE;
}

tocl_status tocl_mem_snapshot_take(tocl_mem_snapshot *out) {
    if (!out)
        return tocl_fail(TOCL_E_INVALID, "tocl_mem_snapshot_take: out is NULL");
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&tocl_mem_lock);
    int n;
    mem_segment **segs = mem_seg_all(&n);
    int nblocks = 0;
    for (int i = 0; i < n; i++)
        nblocks += segs[i]->nblocks;
    /* Guard mode splits a held block into canaries, the caller's range and
     * canaries, so up to three entries each; one extra element each, so
     * that an empty allocator still gets non-NULL arrays. */
    out->segments = calloc((size_t)n + 1, sizeof *out->segments);
    out->blocks = calloc(3 * (size_t)nblocks + 1, sizeof *out->blocks);
    if (!out->segments || !out->blocks) {
        pthread_mutex_unlock(&tocl_mem_lock);
        tocl_mem_snapshot_release(out);
        return tocl_fail(TOCL_E_INTERNAL, "out of host memory taking a snapshot of %d segments", n);
    }
    for (int i = 0; i < n; i++) {
        const mem_segment *seg = segs[i];
        tocl_mem_segment_info *si = &out->segments[out->nsegments++];
        si->dev = seg->dev;
        si->stream = seg->stream;
        si->large = seg->large;
        si->addr = seg->base;
        si->size = seg->size;
        si->first_block = out->nblocks;
        for (int k = 0; k < seg->nblocks; k++) {
            const mem_block *b = seg->blocks[k];
            tocl_mem_block_state st = block_state(b);
            int held = st != TOCL_MEM_BLOCK_INACTIVE;
            size_t front = held ? b->front : 0;
            size_t user = b->size - 2 * front;
            /* Guard mode: the canaries read as inactive bytes on either side,
             * so the caller's block has the caller's address and the blocks
             * still tile the segment. */
            if (front)
                out->blocks[out->nblocks++] =
                    (tocl_mem_block_info){.addr = b->addr, .size = front, .stream = b->stream};
            out->blocks[out->nblocks++] = (tocl_mem_block_info){
                .addr = b->addr + front,
                .size = user,
                .requested = held ? b->requested : 0,
                .stream = b->stream,
                .state = st,
            };
            if (front)
                out->blocks[out->nblocks++] =
                    (tocl_mem_block_info){.addr = b->addr + front + user, .size = front, .stream = b->stream};
            if (st == TOCL_MEM_BLOCK_ACTIVE_ALLOCATED)
                si->allocated += user;
            if (held)
                si->active += user;
        }
        si->nblocks = out->nblocks - si->first_block;
    }
    pthread_mutex_unlock(&tocl_mem_lock);
    return TOCL_OK;
}

void tocl_mem_snapshot_release(tocl_mem_snapshot *s) {
    if (!s)
        return;
    free(s->segments);
    free(s->blocks);
    memset(s, 0, sizeof *s);
}
