/* segment.c - synthetic device addresses: a never-reused address range per
 * cl_mem segment, and the sorted segment table that maps an address back to
 * (device, buffer, offset). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mem_impl.h"

pthread_mutex_t tocl_mem_lock = PTHREAD_MUTEX_INITIALIZER;

/* High enough to be recognisable in a debugger, far from 0 so that no
 * address is ever null, and leaving 2^64 - 2^47 bytes of range to bump
 * through: ranges are never reused, so a stale pointer never aliases a new
 * tensor, it just resolves to nothing. */
static tocl_addr g_next_addr = 0x7e0000000000ull;

static mem_segment **g_segs; /* sorted by base */
static int g_nsegs, g_capsegs;

tocl_addr mem_addr_reserve(size_t bytes) {
    tocl_addr base = g_next_addr;
    /* Round up, plus one granule of gap: one past the end of a segment is
     * then never inside the next segment. */
    uint64_t span = ((uint64_t)bytes + MEM_ADDR_GRANULE - 1) / MEM_ADDR_GRANULE * MEM_ADDR_GRANULE;
    g_next_addr += span + MEM_ADDR_GRANULE;
    return base;
}

/* Index of the last segment with base <= addr, or -1. */
static int seg_floor(tocl_addr addr) {
    int lo = 0, hi = g_nsegs - 1, ans = -1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (g_segs[mid]->base <= addr) {
            ans = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return ans;
}

tocl_status mem_seg_add(mem_segment *seg) {
    if (g_nsegs == g_capsegs) {
        int cap = g_capsegs ? g_capsegs * 2 : 64;
        mem_segment **v = realloc(g_segs, (size_t)cap * sizeof *v);
        if (!v)
            return tocl_fail(TOCL_E_INTERNAL, "out of host memory growing the segment table");
        g_segs = v;
        g_capsegs = cap;
    }
    /* Addresses only grow, so this is nearly always an append. */
    int at = seg_floor(seg->base) + 1;
    memmove(&g_segs[at + 1], &g_segs[at], (size_t)(g_nsegs - at) * sizeof *g_segs);
    g_segs[at] = seg;
    g_nsegs++;
    return TOCL_OK;
}

void mem_seg_remove(mem_segment *seg) {
    int at = seg_floor(seg->base);
    if (at < 0 || g_segs[at] != seg)
        return;
    memmove(&g_segs[at], &g_segs[at + 1], (size_t)(g_nsegs - at - 1) * sizeof *g_segs);
    g_nsegs--;
}

mem_segment **mem_seg_all(int *n) {
    *n = g_nsegs;
    return g_segs;
}

/* Index of the block of seg containing addr (addr must be inside seg). */
static int block_floor(const mem_segment *seg, tocl_addr addr) {
    int lo = 0, hi = seg->nblocks - 1, ans = 0;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (seg->blocks[mid]->addr <= addr) {
            ans = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return ans;
}

mem_block *mem_block_find(tocl_addr addr) {
    int i = seg_floor(addr);
    if (i < 0)
        return NULL;
    mem_segment *seg = g_segs[i];
    if (addr >= seg->base + seg->size)
        return NULL;
    return seg->blocks[block_floor(seg, addr)];
}

int mem_block_index(const mem_segment *seg, const mem_block *b) {
    return block_floor(seg, b->addr);
}

tocl_status mem_block_insert(mem_segment *seg, int index, mem_block *b) {
    if (seg->nblocks == seg->cap) {
        int cap = seg->cap ? seg->cap * 2 : 8;
        mem_block **v = realloc(seg->blocks, (size_t)cap * sizeof *v);
        if (!v)
            return tocl_fail(TOCL_E_INTERNAL, "out of host memory splitting a block");
        seg->blocks = v;
        seg->cap = cap;
    }
    memmove(&seg->blocks[index + 1], &seg->blocks[index], (size_t)(seg->nblocks - index) * sizeof *seg->blocks);
    seg->blocks[index] = b;
    seg->nblocks++;
    return TOCL_OK;
}

void mem_block_remove(mem_segment *seg, int index) {
    memmove(&seg->blocks[index], &seg->blocks[index + 1],
            (size_t)(seg->nblocks - index - 1) * sizeof *seg->blocks);
    seg->nblocks--;
}

/* The live block containing addr, or NULL; caller holds the lock. */
static mem_block *live_block(tocl_addr addr) {
    mem_block *b = addr ? mem_block_find(addr) : NULL;
    return b && b->allocated ? b : NULL;
}

/* Bytes the caller may use from addr to the end of live block b: to the
 * rounded end, or in guard mode to the requested end (never into canaries). */
static size_t usable_after(const mem_block *b, tocl_addr addr) {
    if (!b->front)
        return (size_t)(b->addr + b->size - addr);
    tocl_addr start = b->addr + b->front, end = start + b->requested;
    return addr >= start && addr <= end ? (size_t)(end - addr) : 0;
}

tocl_status tocl_mem_resolve(tocl_addr addr, int *dev, cl_mem *buf, size_t *offset) {
    pthread_mutex_lock(&tocl_mem_lock);
    mem_block *b = live_block(addr);
    if (b) {
        if (dev)
            *dev = b->seg->dev;
        if (buf)
            *buf = b->seg->buf;
        if (offset)
            *offset = (size_t)(addr - b->seg->base);
    }
    pthread_mutex_unlock(&tocl_mem_lock);
    if (!b)
        return tocl_fail(TOCL_E_INVALID,
                         "device address 0x%" PRIx64 " is not inside a live OpenCL allocation (freed, or not "
                         "from this allocator)", addr);
    return TOCL_OK;
}

tocl_status mem_resolve_range(tocl_addr addr, size_t nbytes, const char *what, int *dev, cl_mem *buf,
                              size_t *offset) {
    pthread_mutex_lock(&tocl_mem_lock);
    mem_block *b = live_block(addr);
    size_t after = b ? usable_after(b, addr) : 0;
    if (b && nbytes <= after) {
        *dev = b->seg->dev;
        *buf = b->seg->buf;
        *offset = (size_t)(addr - b->seg->base);
    }
    tocl_addr start = b ? b->addr + b->front : 0;
    size_t size = b ? (b->front ? b->requested : b->size) : 0;
    pthread_mutex_unlock(&tocl_mem_lock);
    if (!b)
        return tocl_fail(TOCL_E_INVALID,
                         "%s address 0x%" PRIx64 " is not inside a live OpenCL allocation (freed, or not from "
                         "this allocator)", what, addr);
    if (nbytes > after)
        return tocl_fail(TOCL_E_INVALID,
                         "%s range 0x%" PRIx64 " + %zu bytes runs past the end of its allocation (block 0x%" PRIx64
                         " of %zu bytes has %zu bytes from that address)", what, addr, nbytes, start, size, after);
    return TOCL_OK;
}

int tocl_mem_device_of(tocl_addr addr) {
    pthread_mutex_lock(&tocl_mem_lock);
    mem_block *b = live_block(addr);
    int dev = b ? b->seg->dev : -1;
    pthread_mutex_unlock(&tocl_mem_lock);
    return dev;
}

size_t tocl_mem_bytes_after(tocl_addr addr) {
    pthread_mutex_lock(&tocl_mem_lock);
    mem_block *b = live_block(addr);
    size_t n = b ? usable_after(b, addr) : 0;
    pthread_mutex_unlock(&tocl_mem_lock);
    return n;
}
