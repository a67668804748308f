/* test_mem_observe.c - the allocator's observer events (alloc, free
 * requested/completed, segment alloc/free, OOM, with device totals) and its
 * snapshots (segments tiled by blocks in address order, block states), plus
 * pinned host memory statistics. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tocl_test.h"

#define MiB ((size_t)1 << 20)
#define MAX_EVENTS 64

static tocl_mem_event g_ev[MAX_EVENTS];
static int g_nev;

static void observe(const tocl_mem_event *ev, void *user) {
    (void)user;
    if (g_nev < MAX_EVENTS)
        g_ev[g_nev++] = *ev;
}

static int count(tocl_mem_event_kind k) {
    int n = 0;
    for (int i = 0; i < g_nev; i++)
        n += g_ev[i].kind == k;
    return n;
}

static const tocl_mem_event *find(tocl_mem_event_kind k) {
    for (int i = 0; i < g_nev; i++)
        if (g_ev[i].kind == k)
            return &g_ev[i];
    return NULL;
}

static void test_events(void) {
    g_nev = 0;
    tocl_mem_set_observer(observe, NULL);
    tocl_addr a;
    CHECK_OK(tocl_mem_alloc(0, 1000, &a));
    tocl_addr base = a - (tocl_mem_guard_enabled() ? 512 : 0); /* guard mode: canaries first */
    /* A fresh allocator makes a segment, then hands out a block. */
    CHECK(g_nev == 2 && g_ev[0].kind == TOCL_MEM_EV_SEGMENT_ALLOC && g_ev[1].kind == TOCL_MEM_EV_ALLOC);
    CHECK(g_ev[0].size == 2 * MiB && g_ev[0].addr == base);
    CHECK(g_ev[1].addr == a && g_ev[1].size == 1024 && g_ev[1].requested == 1000 && g_ev[1].dev == 0);
    CHECK(g_ev[1].allocated_bytes == 1024 && g_ev[1].reserved_bytes == 2 * MiB);
    CHECK_OK(tocl_mem_free(a));
    CHECK(count(TOCL_MEM_EV_FREE_REQUESTED) == 1 && count(TOCL_MEM_EV_FREE_COMPLETED) == 1);
    const tocl_mem_event *f = find(TOCL_MEM_EV_FREE_COMPLETED);
    CHECK(f && f->addr == a && f->size == 1024 && f->allocated_bytes == 0);
    CHECK_OK(tocl_mem_empty_cache(0));
    const tocl_mem_event *sf = find(TOCL_MEM_EV_SEGMENT_FREE);
    CHECK(sf && sf->addr == base && sf->size == 2 * MiB && sf->reserved_bytes == 0);

    /* A block used on another stream completes its free only later. */
    g_nev = 0;
    CHECK_OK(tocl_mem_alloc(0, 4096, &a));
    CHECK_OK(tocl_mem_record_stream(a, 3));
    CHECK_OK(tocl_mem_free(a));
    CHECK(count(TOCL_MEM_EV_FREE_REQUESTED) == 1);
    CHECK_OK(tocl_stream_sync(0, 3));
    CHECK_OK(tocl_mem_empty_cache(0)); /* processes pending blocks */
    CHECK(count(TOCL_MEM_EV_FREE_COMPLETED) == 1);

    /* OOM: the bytes asked for, and what was left under the limit. */
    g_nev = 0;
    CHECK_OK(tocl_mem_set_limit(0, 4 * MiB));
    CHECK_STATUS(tocl_mem_alloc(0, 8 * MiB, &a), TOCL_E_OOM);
    const tocl_mem_event *o = find(TOCL_MEM_EV_OOM);
    CHECK(o && o->size == 8 * MiB && o->device_free <= 4 * MiB && o->addr == 0);
    CHECK_OK(tocl_mem_set_limit(0, 0));

    tocl_mem_set_observer(NULL, NULL);
    g_nev = 0;
    CHECK_OK(tocl_mem_alloc(0, 1000, &a));
    CHECK_OK(tocl_mem_free(a));
    CHECK(g_nev == 0); /* no observer, no events */
    CHECK_OK(tocl_mem_empty_cache(0));
}

static void test_snapshot(void) {
    tocl_addr a, b, c;
    CHECK_OK(tocl_mem_alloc(0, 1000, &a));
    CHECK_OK(tocl_mem_alloc(0, 3000, &b));
    CHECK_OK(tocl_mem_alloc(0, 3 * MiB, &c)); /* large pool */
    CHECK_OK(tocl_mem_free(b));
    tocl_mem_snapshot s;
    CHECK_OK(tocl_mem_snapshot_take(&s));
    CHECK(s.nsegments == 2);
    int small = -1, large = -1;
    for (int i = 0; i < s.nsegments; i++) {
        if (s.segments[i].large)
            large = i;
        else
            small = i;
    }
    CHECK(small >= 0 && large >= 0);
    if (small >= 0 && large >= 0) {
        const tocl_mem_segment_info *ss = &s.segments[small], *ls = &s.segments[large];
        CHECK(ss->size == 2 * MiB && ss->allocated == 1024 && ss->active == 1024 && ss->dev == 0);
        CHECK(ls->allocated == 3 * MiB && ls->size >= 3 * MiB);
        /* Blocks tile the segment in address order. */
        uint64_t sum = 0;
        tocl_addr at = ss->addr;
        for (int k = 0; k < ss->nblocks; k++) {
            const tocl_mem_block_info *bi = &s.blocks[ss->first_block + k];
            CHECK(bi->addr == at);
            at = bi->addr + bi->size;
            sum += bi->size;
        }
        CHECK(sum == ss->size);
        /* a is held (in guard mode between two canary blocks); b was freed
         * and coalesced into the free tail, so no other block is held. */
        int held = 0, found = 0;
        for (int k = 0; k < ss->nblocks; k++) {
            const tocl_mem_block_info *bi = &s.blocks[ss->first_block + k];
            held += bi->state != TOCL_MEM_BLOCK_INACTIVE;
            if (bi->addr == a) {
                found = 1;
                CHECK(bi->state == TOCL_MEM_BLOCK_ACTIVE_ALLOCATED && bi->requested == 1000 && bi->size == 1024);
            } else {
                CHECK(bi->requested == 0);
            }
        }
        CHECK(found && held == 1);
        CHECK(ss->nblocks == (tocl_mem_guard_enabled() ? 4 : 2));
    }
    tocl_mem_snapshot_release(&s);
    CHECK(s.segments == NULL && s.nsegments == 0);
    CHECK_OK(tocl_mem_free(a));
    CHECK_OK(tocl_mem_free(c));
    CHECK_OK(tocl_mem_empty_cache(0));
    CHECK_OK(tocl_mem_snapshot_take(&s));
    CHECK(s.nsegments == 0 && s.nblocks == 0);
    tocl_mem_snapshot_release(&s);
    CHECK_STATUS(tocl_mem_snapshot_take(NULL), TOCL_E_INVALID);
}

static void test_host_stats(void) {
    tocl_host_stats h0, h1, h2;
    CHECK_OK(tocl_host_stats_get(&h0));
    void *p;
    CHECK_OK(tocl_host_alloc(10000, &p));
    CHECK_OK(tocl_host_stats_get(&h1));
    CHECK(h1.live_bytes == h0.live_bytes + 10000 && h1.live_blocks == h0.live_blocks + 1);
    CHECK(h1.alloc_count == h0.alloc_count + 1 && h1.peak_live_bytes >= h1.live_bytes);
    CHECK_OK(tocl_host_free(p));
    tocl_host_empty_cache();
    CHECK_OK(tocl_host_stats_get(&h2));
    CHECK(h2.live_bytes == h0.live_bytes && h2.free_count == h0.free_count + 1 && h2.deferred_blocks == 0);
    tocl_host_reset_peak();
    tocl_host_reset_counters();
    CHECK_OK(tocl_host_stats_get(&h2));
    CHECK(h2.peak_live_bytes == h2.live_bytes && h2.alloc_count == 0 && h2.free_count == 0);
    CHECK_STATUS(tocl_host_stats_get(NULL), TOCL_E_INVALID);
}

int main(void) {
    CHECK_OK(tocl_init());
    if (tocl_device_count() < 1) {
        printf("no OpenCL device; skipped\n");
        TOCL_TEST_END();
    }
    test_events();
    test_snapshot();
    test_host_stats();
    TOCL_TEST_END();
}
