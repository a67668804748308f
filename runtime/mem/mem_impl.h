/* mem_impl.h - the caching allocator's data structures, shared by the files
 * of runtime/mem/ only (segment table, pools, statistics).
 *
 * Everything here is guarded by tocl_mem_lock: one mutex for the whole
 * allocator keeps the invariants simple, and every critical section is short
 * (no host waits, except when an allocation would otherwise run out of memory). */
#ifndef TOCL_MEM_IMPL_H
#define TOCL_MEM_IMPL_H

#include <pthread.h>
#include <stdint.h>

#include "internal.h"

#define MEM_ALIGN ((size_t)512)                  /* block size and address granule */
#define MEM_SMALL_MAX ((size_t)1 << 20)          /* requests up to 1 MiB use the small pool */
#define MEM_SMALL_SEGMENT ((size_t)2 << 20)      /* small pool segments are 2 MiB */
#define MEM_LARGE_SEGMENT ((size_t)20 << 20)     /* ... large pool ones at least 20 MiB */
#define MEM_LARGE_SHARED_MAX ((size_t)10 << 20)  /* requests below this share a 20 MiB segment */
#define MEM_ADDR_GRANULE ((uint64_t)2 << 20)     /* segments start 2 MiB aligned in address space */
#define MEM_GUARD ((size_t)512)                  /* TORCH_OCL_GUARD: canary bytes before a block, and at
                                                    least this many after it (see guard.c) */

typedef struct mem_segment mem_segment;

typedef struct mem_block {
    tocl_addr addr;
    size_t size;            /* multiple of MEM_ALIGN */
    size_t requested;       /* bytes the caller asked for, while allocated */
    mem_segment *seg;
    int stream;             /* stream it was allocated on; reused only there */
    int allocated;          /* handed out to a caller */
    int pending;            /* freed, waiting for events of other streams */
    uint32_t used_streams;  /* bit s: recorded as used on stream s (tocl_mem_record_stream) */
    cl_event *events;       /* markers enqueued at free on each used stream */
    int nevents;
    /* TORCH_OCL_GUARD only (all 0 otherwise): the caller's range starts
     * `front` bytes into the block, canaries fill [addr, addr + front) and
     * [addr + front + requested, addr + front + round_up(requested) + front). */
    uint32_t front;
    int armed;              /* canaries written, so they are checked */
    /* Graph capture (runtime/graph/): a block allocated during a capture
     * belongs to that graph (owner != 0) until the graph is destroyed; freed
     * meanwhile it is `held`, neither allocated nor free, because the
     * graph's replays still write it. */
    uint64_t owner;
    int held;
} mem_block;

struct mem_segment {
    tocl_addr base;         /* first address; the range never overlaps another segment's */
    size_t size;            /* bytes of the cl_mem */
    cl_mem buf;
    int dev;
    int large;              /* pool: 0 small, 1 large */
    int stream;             /* the stream it was created for (snapshots) */
    mem_block **blocks;     /* sorted by address, tiling [base, base + size) */
    int nblocks, cap;
};

typedef struct mem_freelist {
    mem_block **v;          /* sorted by (stream, size, addr): best fit is a lower bound */
    int n, cap;
} mem_freelist;

typedef struct mem_dev {
    mem_freelist free[2];   /* [0] small pool, [1] large pool */
    mem_block **pending;    /* freed blocks waiting for other streams */
    int npending, cap_pending;
    tocl_mem_stats st;      /* st.limit_bytes is filled in on read */
    uint64_t limit_override;/* tocl_mem_set_limit; 0: default */
} mem_dev;

extern pthread_mutex_t tocl_mem_lock;

/* segment.c: synthetic addresses and the table of live segments. */
tocl_addr mem_addr_reserve(size_t bytes);
tocl_status mem_seg_add(mem_segment *seg);
void mem_seg_remove(mem_segment *seg);
mem_segment **mem_seg_all(int *n);               /* sorted by base address */
mem_block *mem_block_find(tocl_addr addr);       /* block containing addr, any state */
int mem_block_index(const mem_segment *seg, const mem_block *b);
tocl_status mem_block_insert(mem_segment *seg, int index, mem_block *b);
void mem_block_remove(mem_segment *seg, int index);
/* Resolve [addr, addr + nbytes) inside one live block; TOCL_E_INVALID naming
 * the address and sizes otherwise. `what` names the argument ("destination"). */
tocl_status mem_resolve_range(tocl_addr addr, size_t nbytes, const char *what, int *dev, cl_mem *buf,
                              size_t *offset);

/* freelist.c: insert/remove keep the order; remove of an absent block is a no-op. */
tocl_status mem_fl_insert(mem_freelist *fl, mem_block *b);
void mem_fl_remove(mem_freelist *fl, mem_block *b);
mem_block *mem_fl_best(const mem_freelist *fl, int stream, size_t size);

/* stats.c: per-device state, limits, human-readable sizes. */
tocl_status mem_dev_get(int dev, mem_dev **out); /* checks dev, creates the state on first use */
uint64_t mem_limit(int dev);                     /* caller holds tocl_mem_lock */
void mem_format_bytes(char *buf, size_t cap, uint64_t n);

/* guard.c: canaries around blocks (TORCH_OCL_GUARD=1). mem_guard_on reads
 * the knob once; the rest are called only for blocks with front != 0.
 * Caller holds tocl_mem_lock. */
int mem_guard_on(void);
void mem_guard_arm(mem_block *b);                /* write the canaries on b's stream */
/* At free: enqueue deferred ops of b's stream, then read the canaries back
 * on it after `wait` (markers of other streams); checked by mem_guard_poll
 * once the read completes. b itself may be reused meanwhile. */
void mem_guard_read_back(const mem_block *b, const cl_event *wait, int nwait);
void mem_guard_poll(int wait);                   /* check completed read-backs (all of them: wait) */
void mem_guard_check_live(int dev);              /* blocking check of every live block */

/* observe.c: tell the observer (tocl_mem_set_observer), if any. Caller
 * holds tocl_mem_lock; `d` gives the device totals. */
extern tocl_mem_observer mem_observer;
void mem_emit(tocl_mem_event_kind kind, int dev, const mem_dev *d, int stream, tocl_addr addr, uint64_t size,
              uint64_t requested);
#define MEM_EMIT(kind, dev, d, stream, addr, size, requested)                      \
    do {                                                                          \
        if (mem_observer)                                                         \
            mem_emit((kind), (dev), (d), (stream), (addr), (size), (requested));  \
    } while (0)

/* alloc.c: used by stats.c's tocl_mem_empty_cache. */
void mem_release_free_segments(int dev);
void mem_process_pending(int dev, int wait);

#endif
