/* mem.h - the caching device allocator, synthetic device addresses, pinned
 * host memory and raw copies.
 *
 * A tocl_addr is a 64-bit synthetic address. Each cl_mem segment the
 * allocator creates owns a unique, never reused address range, so any address
 * inside a live block (a tensor's data_ptr plus any byte offset) maps back to
 * (device, cl_mem segment, byte offset). Blocks are carved out of segments:
 * split on allocation, coalesced with free neighbours on release, cached for
 * reuse on the stream they were allocated on (see tocl_mem_record_stream). */
#ifndef TOCL_MEM_H
#define TOCL_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "tocl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t tocl_addr; /* 0 is the null address */

/* Allocate nbytes (0 gives the null address) on dev, for use on dev's
 * current stream. Block addresses are aligned to 512 bytes. On exhaustion the
 * cache is released and the allocation retried once; then TOCL_E_OOM with a
 * message naming requested, allocated, reserved and device-total bytes. */
tocl_status tocl_mem_alloc(int dev, size_t nbytes, tocl_addr *out);
/* Return a block to the cache (free of 0 is a no-op; of an unknown address,
 * TOCL_E_INVALID). The block is reused only once work already queued on its
 * stream and on every recorded stream can no longer touch it. */
tocl_status tocl_mem_free(tocl_addr addr);
/* Note that the block containing addr is used on another stream of its device. */
tocl_status tocl_mem_record_stream(tocl_addr addr, int stream);

/* Device of the live block that contains addr, or -1 if none does. */
int tocl_mem_device_of(tocl_addr addr);
/* Bytes from addr to the end of its live block (0 if not inside one). */
size_t tocl_mem_bytes_after(tocl_addr addr);

typedef struct tocl_mem_stats {
    uint64_t allocated_bytes;      /* in live blocks, as rounded */
    uint64_t requested_bytes;      /* as asked for */
    uint64_t reserved_bytes;       /* in segments (cl_mem buffers) */
    uint64_t peak_allocated_bytes;
    uint64_t peak_reserved_bytes;
    uint64_t active_blocks;
    uint64_t segments;
    uint64_t alloc_count;          /* successful allocations, cumulative */
    uint64_t free_count;
    uint64_t cache_hits;           /* allocations served without a new segment */
    uint64_t alloc_retries;        /* times the cache was released to retry */
    uint64_t ooms;
    uint64_t limit_bytes;          /* current cap on reserved bytes */
} tocl_mem_stats;

tocl_status tocl_mem_stats_get(int dev, tocl_mem_stats *out);
tocl_status tocl_mem_reset_peak(int dev);            /* peak := current */
tocl_status tocl_mem_reset_counters(int dev);        /* cumulative counts := 0 */
tocl_status tocl_mem_empty_cache(int dev);           /* release unused segments */
/* Cap reserved bytes on dev (0 restores the default: the device's global
 * memory size, or TORCH_OCL_MEMORY_LIMIT bytes if set). Used by tests. */
tocl_status tocl_mem_set_limit(int dev, uint64_t bytes);

/* What the allocator did, for memory profilers and snapshots. One observer
 * for the process (NULL: none, and then the allocator pays one pointer test
 * per event). It is called with the allocator's lock held, on the thread
 * that caused the event, so it must be quick, must not block, and must not
 * call any tocl_mem_* or tocl_host_* function. */
typedef enum tocl_mem_event_kind {
    TOCL_MEM_EV_ALLOC,           /* a block was handed out */
    TOCL_MEM_EV_FREE_REQUESTED,  /* tocl_mem_free was called */
    TOCL_MEM_EV_FREE_COMPLETED,  /* the block is reusable (other streams done) */
    TOCL_MEM_EV_SEGMENT_ALLOC,   /* a cl_mem segment was created */
    TOCL_MEM_EV_SEGMENT_FREE,    /* a cl_mem segment was released */
    TOCL_MEM_EV_OOM,             /* an allocation failed for want of memory */
} tocl_mem_event_kind;

typedef struct tocl_mem_event {
    tocl_mem_event_kind kind;
    int dev;
    int stream;
    tocl_addr addr;            /* the caller's address, or the segment base; 0 for OOM */
    uint64_t size;             /* block bytes as rounded, segment bytes, or (OOM) bytes asked for */
    uint64_t requested;        /* bytes asked for (ALLOC, FREE_*) */
    uint64_t allocated_bytes;  /* device totals after the event */
    uint64_t reserved_bytes;
    uint64_t device_free;      /* OOM only: bytes below the allocator's limit */
} tocl_mem_event;

typedef void (*tocl_mem_observer)(const tocl_mem_event *ev, void *user);
void tocl_mem_set_observer(tocl_mem_observer fn, void *user);

/* The allocator's state: every segment of every device and the blocks that
 * tile it, in address order. Taken under the lock, so it is consistent. */
typedef enum tocl_mem_block_state {
    TOCL_MEM_BLOCK_INACTIVE,          /* cached, free for reuse */
    TOCL_MEM_BLOCK_ACTIVE_ALLOCATED,  /* held by a caller */
    TOCL_MEM_BLOCK_AWAITING_FREE,     /* freed, waiting for other streams */
} tocl_mem_block_state;

typedef struct tocl_mem_block_info {
    tocl_addr addr;        /* the caller's address for allocated blocks */
    uint64_t size;         /* as rounded; TORCH_OCL_GUARD's canaries are inactive blocks of their own */
    uint64_t requested;    /* bytes asked for; 0 when inactive */
    int stream;
    tocl_mem_block_state state;
} tocl_mem_block_info;

typedef struct tocl_mem_segment_info {
    int dev;
    int stream;            /* the stream it was created for */
    int large;             /* pool: 0 small (requests up to 1 MiB), 1 large */
    tocl_addr addr;
    uint64_t size;
    uint64_t allocated;    /* bytes in allocated blocks */
    uint64_t active;       /* ... plus blocks awaiting free */
    int first_block;       /* index into tocl_mem_snapshot.blocks */
    int nblocks;
} tocl_mem_segment_info;

typedef struct tocl_mem_snapshot {
    tocl_mem_segment_info *segments;
    int nsegments;
    tocl_mem_block_info *blocks;
    int nblocks;
} tocl_mem_snapshot;

tocl_status tocl_mem_snapshot_take(tocl_mem_snapshot *out);
void tocl_mem_snapshot_release(tocl_mem_snapshot *s);

/* Guard mode, for tests: with TORCH_OCL_GUARD=1 (read at the first
 * allocation) every block gets 512 canary bytes before the caller's range and
 * 512-1023 after it, written at allocation and checked when the block is
 * freed (without a host wait: the block is reused once the read-back is done;
 * the bytes read are compared at the next allocation or tocl_device_sync),
 * at tocl_mem_empty_cache and at tocl_mem_guard_check. A changed canary prints
 * a line on stderr (block address, its size, offset of the first bad byte)
 * and counts one violation. Range checks then end at the requested size.
 * Off, it costs nothing. */
int tocl_mem_guard_enabled(void);
uint64_t tocl_mem_guard_violations(void); /* since process start, all devices */
/* Check now: enqueue deferred ops, finish the checks of freed blocks, read the
 * canaries of every live block of dev (host waits). No-op when off. */
tocl_status tocl_mem_guard_check(int dev);

/* Copies. `blocking` = 0 only enqueues the copy on (dev, stream); the host
 * memory must then stay valid until the stream reaches it (pinned memory from
 * tocl_host_alloc is kept alive automatically when freed early). */
tocl_status tocl_copy_h2d(int dev, int stream, tocl_addr dst, const void *src, size_t nbytes, int blocking);
tocl_status tocl_copy_d2h(int dev, int stream, void *dst, tocl_addr src, size_t nbytes, int blocking);
/* Read the flag pair [bad, value] at src (two int64) back without a host
 * wait: a bad flag fails the next synchronization or blocking copy to the
 * host of (dev, stream), as a replayed graph's checks do (tocl/graph.h). For
 * an op whose check the host expects to pass (nll_loss with targets whose
 * range the host knows), so that the check costs no wait. */
tocl_status tocl_copy_flag_later(int dev, int stream, tocl_addr src);
/* Device-to-device, raw bytes; the two may be on different devices, in which
 * case the source device's current stream is synchronised first. */
tocl_status tocl_copy_d2d(int dev, int stream, tocl_addr dst, tocl_addr src, size_t nbytes);
/* Fill nbytes at dst with a repeated pattern of 1, 2, 4 or 8 bytes. */
tocl_status tocl_mem_fill(int dev, int stream, tocl_addr dst, const void *pattern, size_t pattern_bytes, size_t nbytes);

/* A device range as a host pointer, without a copy (runtime/mem/map.c):
 * only on CPU devices, whose memory is host memory; elsewhere
 * tocl_mem_map fails with TOCL_E_UNSUPPORTED and the caller copies. The map
 * waits for the work queued on (dev, stream); the range must not be used by
 * kernels until tocl_mem_unmap, which waits for the unmap. */
typedef struct tocl_map {
    void *host; /* the range's first byte */
    void *buf;  /* the segment (cl_mem), retained while mapped */
    int dev, stream;
} tocl_map;
int tocl_mem_map_supported(int dev);
tocl_status tocl_mem_map(int dev, int stream, tocl_addr addr, size_t nbytes, tocl_map *out);
tocl_status tocl_mem_unmap(tocl_map *m);

/* Pinned (page-locked where the platform allows) host memory, suitable for
 * asynchronous copies. */
tocl_status tocl_host_alloc(size_t nbytes, void **out);
tocl_status tocl_host_free(void *ptr);
int tocl_host_is_pinned(const void *ptr); /* any address inside a live block */
/* Keep the pinned block containing ptr alive until the work queued so far
 * on (dev, stream) is done (called by async copies). */
tocl_status tocl_host_record_use(const void *ptr, int dev, int stream);

typedef struct tocl_host_stats {
    uint64_t live_bytes;        /* in blocks the caller holds */
    uint64_t peak_live_bytes;
    uint64_t live_blocks;
    uint64_t peak_live_blocks;
    uint64_t deferred_bytes;    /* freed by the caller, still used by queued copies */
    uint64_t deferred_blocks;
    uint64_t alloc_count;       /* cumulative */
    uint64_t free_count;        /* blocks really released */
} tocl_host_stats;

tocl_status tocl_host_stats_get(tocl_host_stats *out);
void tocl_host_reset_peak(void);      /* peak := current */
void tocl_host_reset_counters(void);  /* cumulative counts := 0 */
/* Release freed blocks whose copies have completed (no host wait). Pinned
 * memory is not cached for reuse, so nothing else is held back. */
void tocl_host_empty_cache(void);

#ifdef __cplusplus
}
#endif
#endif
