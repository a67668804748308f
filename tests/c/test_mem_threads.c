/* test_mem_threads.c - allocation and free from several threads at once (as
 * PyTorch's autograd workers do), on different streams; statistics must add up. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tocl_test.h"

#define ITERS 20000
#define LIVE 24

typedef struct worker {
    int stream;
    unsigned seed;
    int failures;
    size_t allocs;
} worker;

static size_t pick_size(unsigned *seed) {
    unsigned r = (unsigned)rand_r(seed);
    switch (r % 8) {
    case 0: return 1 + r % 64;                    /* tiny */
    case 1: return (size_t)(1 << 20);             /* the small/large boundary */
    case 2: return (size_t)(1 << 20) + 1 + r % (3 << 20); /* large */
    default: return 1 + r % 200000;               /* small */
    }
}

static void *run(void *arg) {
    worker *w = arg;
    tocl_stream_set_current(0, w->stream);
    tocl_addr live[LIVE] = {0};
    for (int i = 0; i < ITERS; i++) {
        int k = rand_r(&w->seed) % LIVE;
        if (live[k]) {
            /* The address must still resolve to this thread's block. */
            if (tocl_mem_device_of(live[k]) != 0 || tocl_mem_bytes_after(live[k]) == 0)
                w->failures++;
            if (tocl_mem_free(live[k]) != TOCL_OK)
                w->failures++;
            live[k] = 0;
        } else {
            size_t n = pick_size(&w->seed);
            if (tocl_mem_alloc(0, n, &live[k]) != TOCL_OK || live[k] % 512 || tocl_mem_bytes_after(live[k]) < n)
                w->failures++;
            else
                w->allocs++;
            if (i % 97 == 0 && live[k])
                tocl_mem_record_stream(live[k], (w->stream + 1) % TOCL_MAX_STREAMS);
        }
        if (i % 1000 == 999)
            tocl_mem_empty_cache(0); /* races with the other thread's allocations */
    }
    for (int k = 0; k < LIVE; k++)
        if (live[k] && tocl_mem_free(live[k]) != TOCL_OK)
            w->failures++;
    return NULL;
}

int main(void) {
    CHECK_OK(tocl_init());
    if (tocl_device_count() < 1) {
        printf("no OpenCL device; skipped\n");
        TOCL_TEST_END();
    }
    CHECK_OK(tocl_mem_reset_counters(0));
    /* Two threads share stream 0, a third uses stream 3. */
    worker w[3] = {{0, 1, 0, 0}, {0, 2, 0, 0}, {3, 3, 0, 0}};
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, run, &w[i]);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    size_t total = 0;
    for (int i = 0; i < 3; i++) {
        CHECK(w[i].failures == 0);
        total += w[i].allocs;
    }
    CHECK_OK(tocl_device_sync(0));
    tocl_mem_stats s;
    CHECK_OK(tocl_mem_stats_get(0, &s));
    CHECK(s.allocated_bytes == 0);
    CHECK(s.requested_bytes == 0);
    CHECK(s.active_blocks == 0);
    CHECK(s.alloc_count == total);
    CHECK(s.free_count == total);
    CHECK(s.cache_hits > 0 && s.cache_hits <= total);
    CHECK(s.peak_allocated_bytes > 0 && s.peak_allocated_bytes <= s.peak_reserved_bytes);
    /* Pending frees are collected by the next allocation; then all is free. */
    tocl_addr a;
    CHECK_OK(tocl_mem_alloc(0, 16, &a));
    CHECK_OK(tocl_mem_free(a));
    CHECK_OK(tocl_mem_empty_cache(0));
    CHECK_OK(tocl_mem_stats_get(0, &s));
    CHECK(s.reserved_bytes == 0 && s.segments == 0);
    printf("%zu allocations from 3 threads, %llu cache hits\n", total, (unsigned long long)s.cache_hits);
    TOCL_TEST_END();
}
