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

/* Guard mode, for tests: with TORCH_OCL_GUARD=1 (read at the first
 * allocation) every block gets 512 canary bytes before the caller's range and
 * 512-1023 after it, written at allocation and checked when the block is
 * freed (without a host wait: the block is reused once the read-back is done),
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
/* Device-to-device, raw bytes; the two may be on different devices, in which
 * case the source device's current stream is synchronised first. */
tocl_status tocl_copy_d2d(int dev, int stream, tocl_addr dst, tocl_addr src, size_t nbytes);
/* Fill nbytes at dst with a repeated pattern of 1, 2, 4 or 8 bytes. */
tocl_status tocl_mem_fill(int dev, int stream, tocl_addr dst, const void *pattern, size_t pattern_bytes, size_t nbytes);

/* Pinned (page-locked where the platform allows) host memory, suitable for
 * asynchronous copies. */
tocl_status tocl_host_alloc(size_t nbytes, void **out);
tocl_status tocl_host_free(void *ptr);
int tocl_host_is_pinned(const void *ptr); /* any address inside a live block */
/* Keep the pinned block containing ptr alive until the work queued so far
 * on (dev, stream) is done (called by async copies). */
tocl_status tocl_host_record_use(const void *ptr, int dev, int stream);

#ifdef __cplusplus
}
#endif
#endif
