/* freelist.c - the pools' free lists: sorted arrays of blocks ordered by
 * (stream, size, address), so best fit is one binary search. */
#include <stdlib.h>
#include <string.h>

#include "mem_impl.h"

static int key_less(const mem_block *b, int stream, size_t size, tocl_addr addr) {
    if (b->stream != stream)
        return b->stream < stream;
    if (b->size != size)
        return b->size < size;
    return b->addr < addr;
}

static int fl_lower(const mem_freelist *fl, int stream, size_t size, tocl_addr addr) {
    int lo = 0, hi = fl->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (key_less(fl->v[mid], stream, size, addr))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

tocl_status mem_fl_insert(mem_freelist *fl, mem_block *b) {
    if (fl->n == fl->cap) {
        int cap = fl->cap ? fl->cap * 2 : 64;
        mem_block **v = realloc(fl->v, (size_t)cap * sizeof *v);
        if (!v)
            return tocl_fail(TOCL_E_INTERNAL, "out of host memory growing a free list");
        fl->v = v;
        fl->cap = cap;
    }
    int at = fl_lower(fl, b->stream, b->size, b->addr);
    memmove(&fl->v[at + 1], &fl->v[at], (size_t)(fl->n - at) * sizeof *fl->v);
    fl->v[at] = b;
    fl->n++;
    return TOCL_OK;
}

void mem_fl_remove(mem_freelist *fl, mem_block *b) {
    int at = fl_lower(fl, b->stream, b->size, b->addr);
    if (at < fl->n && fl->v[at] == b) {
        memmove(&fl->v[at], &fl->v[at + 1], (size_t)(fl->n - at - 1) * sizeof *fl->v);
        fl->n--;
    }
}

/* Smallest free block of `stream` holding `size` bytes: blocks are reused
 * only on their own stream, whose queue orders the new user after the old. */
mem_block *mem_fl_best(const mem_freelist *fl, int stream, size_t size) {
    int at = fl_lower(fl, stream, size, 0);
    return at < fl->n && fl->v[at]->stream == stream ? fl->v[at] : NULL;
}
