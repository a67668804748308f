/* test_mem.c - the caching allocator: reuse, split/coalesce, statistics,
 * empty_cache, address resolution at block edges, OOM and retry,
 * record_stream deferral, bad frees. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tocl_test.h"

#define MiB ((size_t)1 << 20)

static tocl_mem_stats stats(int dev) {
    tocl_mem_stats s;
    memset(&s, 0, sizeof s);
    tocl_mem_stats_get(dev, &s);
    return s;
}

/* Keep stream `s` busy for a while: fills of a 64 MiB block. */
static void make_busy(int s, tocl_addr big, int fills) {
    unsigned char v = 1;
    for (int i = 0; i < fills; i++)
        tocl_mem_fill(0, s, big, &v, 1, 64 * MiB);
    tocl_stream_flush(0, s);
}

static void test_reuse_split_coalesce(void) {
    tocl_mem_stats s0 = stats(0);
    tocl_addr a, b, c, d;
    CHECK_OK(tocl_mem_alloc(0, 1000, &a));
    CHECK(a != 0 && a % 512 == 0);
    tocl_mem_stats s1 = stats(0);
    CHECK(s1.segments == s0.segments + 1);                    /* one 2 MiB small segment */
    CHECK(s1.reserved_bytes == s0.reserved_bytes + 2 * MiB);
    CHECK(s1.allocated_bytes == s0.allocated_bytes + 1024);   /* rounded to 512 */
    CHECK(s1.requested_bytes == s0.requested_bytes + 1000);
    CHECK(s1.active_blocks == s0.active_blocks + 1);
    CHECK(s1.alloc_count == s0.alloc_count + 1);
    CHECK(s1.cache_hits == s0.cache_hits);

    /* Free then allocate the same size: the cached block, no new segment. */
    CHECK_OK(tocl_mem_free(a));
    tocl_mem_stats s2 = stats(0);
    CHECK(s2.allocated_bytes == s0.allocated_bytes && s2.active_blocks == s0.active_blocks);
    CHECK(s2.free_count == s1.free_count + 1);
    CHECK(s2.reserved_bytes == s1.reserved_bytes);            /* cached, not released */
    CHECK_OK(tocl_mem_alloc(0, 1000, &b));
    CHECK(b == a);
    tocl_mem_stats s3 = stats(0);
    CHECK(s3.segments == s1.segments);
    CHECK(s3.cache_hits == s1.cache_hits + 1);

    /* Blocks are carved front to back; two adjacent frees coalesce. */
    CHECK_OK(tocl_mem_alloc(0, 4096, &c));
    CHECK_OK(tocl_mem_alloc(0, 4096, &d));
    CHECK(c == b + 1024 && d == c + 4096);
    tocl_addr e;
    CHECK_OK(tocl_mem_alloc(0, 512, &e)); /* a fence after d */
    CHECK(e == d + 4096);
    CHECK_OK(tocl_mem_free(c));
    CHECK_OK(tocl_mem_free(d));
    tocl_addr cd;
    CHECK_OK(tocl_mem_alloc(0, 8192, &cd)); /* best fit is exactly the merged c+d */
    CHECK(cd == c);
    CHECK(stats(0).segments == s1.segments);
    /* Freeing everything merges the segment back into one block, which
     * empty_cache can then release. */
    CHECK_OK(tocl_mem_free(b));
    CHECK_OK(tocl_mem_free(cd));
    CHECK_OK(tocl_mem_free(e));
    CHECK_OK(tocl_mem_empty_cache(0));
    tocl_mem_stats s4 = stats(0);
    CHECK(s4.reserved_bytes == s0.reserved_bytes && s4.segments == s0.segments);
    CHECK(s4.allocated_bytes == s0.allocated_bytes && s4.requested_bytes == s0.requested_bytes);

    /* Large pool: > 1 MiB, from a 20 MiB segment, remainder kept when > 1 MiB. */
    tocl_addr l1, l2;
    CHECK_OK(tocl_mem_alloc(0, 3 * MiB + 1, &l1));
    tocl_mem_stats s5 = stats(0);
    CHECK(s5.reserved_bytes == s4.reserved_bytes + 20 * MiB);
    CHECK(s5.allocated_bytes == s4.allocated_bytes + 3 * MiB + 512);
    CHECK_OK(tocl_mem_alloc(0, 2 * MiB, &l2));
    CHECK(l2 == l1 + 3 * MiB + 512);
    CHECK(stats(0).segments == s5.segments);
    CHECK_OK(tocl_mem_free(l1));
    CHECK_OK(tocl_mem_free(l2));
    /* A big request gets its own segment, rounded to 2 MiB. */
    CHECK_OK(tocl_mem_alloc(0, 33 * MiB, &l1));
    CHECK(stats(0).reserved_bytes == s5.reserved_bytes + 34 * MiB);
    CHECK_OK(tocl_mem_free(l1));
    CHECK_OK(tocl_mem_empty_cache(0));
    CHECK(stats(0).reserved_bytes == s4.reserved_bytes);
}

static void test_peaks_and_counters(void) {
    tocl_addr a, b;
    CHECK_OK(tocl_mem_alloc(0, 4 * MiB, &a));
    CHECK_OK(tocl_mem_alloc(0, 4 * MiB, &b));
    tocl_mem_stats s = stats(0);
    CHECK(s.peak_allocated_bytes >= s.allocated_bytes);
    CHECK(s.peak_reserved_bytes >= s.reserved_bytes);
    CHECK_OK(tocl_mem_free(a));
    CHECK_OK(tocl_mem_free(b));
    CHECK(stats(0).peak_allocated_bytes == s.peak_allocated_bytes);
    CHECK_OK(tocl_mem_reset_peak(0));
    tocl_mem_stats r = stats(0);
    CHECK(r.peak_allocated_bytes == r.allocated_bytes);
    CHECK(r.peak_reserved_bytes == r.reserved_bytes);
    CHECK_OK(tocl_mem_reset_counters(0));
    r = stats(0);
    CHECK(r.alloc_count == 0 && r.free_count == 0 && r.cache_hits == 0 && r.ooms == 0 && r.alloc_retries == 0);
    CHECK_OK(tocl_mem_empty_cache(0));
}

static void test_address_edges(void) {
    tocl_addr a;
    CHECK_OK(tocl_mem_alloc(0, 4096, &a));
    CHECK(tocl_mem_device_of(a) == 0);
    CHECK(tocl_mem_bytes_after(a) == 4096);
    CHECK(tocl_mem_device_of(a + 4095) == 0);
    CHECK(tocl_mem_bytes_after(a + 4095) == 1);
    CHECK(tocl_mem_device_of(a + 4096) == -1); /* one past the end: the free rest of the segment */
    CHECK(tocl_mem_bytes_after(a + 4096) == 0);
    CHECK(tocl_mem_device_of(a - 1) == -1);    /* before the segment */
    CHECK(tocl_mem_device_of(0) == -1);
    CHECK(tocl_mem_bytes_after(0) == 0);
    int dev = -1;
    cl_mem buf = NULL, buf2 = NULL;
    size_t off = 1, off2 = 0;
    CHECK_OK(tocl_mem_resolve(a, &dev, &buf, &off));
    CHECK(dev == 0 && buf != NULL);
    CHECK_OK(tocl_mem_resolve(a + 4095, &dev, &buf2, &off2));
    CHECK(buf2 == buf && off2 == off + 4095);
    size_t seg_bytes = 0;
    CHECK(clGetMemObjectInfo(buf, CL_MEM_SIZE, sizeof seg_bytes, &seg_bytes, NULL) == CL_SUCCESS);
    CHECK(off + 4096 <= seg_bytes);
    CHECK_STATUS(tocl_mem_resolve(a + 4096, &dev, &buf, &off), TOCL_E_INVALID);
    CHECK_OK(tocl_mem_free(a));
    CHECK(tocl_mem_device_of(a) == -1); /* freed: no longer live */
    CHECK_STATUS(tocl_mem_resolve(a, &dev, &buf, &off), TOCL_E_INVALID);
    CHECK_OK(tocl_mem_empty_cache(0));
    /* Addresses are never reused, even after the segment is released. */
    tocl_addr b;
    CHECK_OK(tocl_mem_alloc(0, 4096, &b));
    CHECK(b > a);
    CHECK(tocl_mem_device_of(a) == -1);
    CHECK_OK(tocl_mem_free(b));
}

static void test_bad_calls(void) {
    tocl_addr a, z = 123;
    CHECK_OK(tocl_mem_alloc(0, 0, &z));
    CHECK(z == 0);
    CHECK_OK(tocl_mem_free(0));
    CHECK_OK(tocl_mem_alloc(0, 2048, &a));
    CHECK_STATUS(tocl_mem_free(a + 512), TOCL_E_INVALID); /* inside, not the start */
    CHECK(strstr(tocl_last_error(), "not the start") != NULL);
    CHECK_OK(tocl_mem_free(a));
    CHECK_STATUS(tocl_mem_free(a), TOCL_E_INVALID);       /* double free */
    CHECK_STATUS(tocl_mem_free(42), TOCL_E_INVALID);
    CHECK_STATUS(tocl_mem_record_stream(a, 1), TOCL_E_INVALID);
    CHECK_STATUS(tocl_mem_record_stream(a, TOCL_MAX_STREAMS), TOCL_E_INVALID);
    CHECK_STATUS(tocl_mem_alloc(99, 16, &a), TOCL_E_NO_DEVICE);
    CHECK_STATUS(tocl_mem_stats_get(-1, &(tocl_mem_stats){0}), TOCL_E_NO_DEVICE);
    /* One request bigger than the device's largest buffer fails cleanly. */
    uint64_t max = tocl_dev_props(0)->max_alloc_bytes;
    CHECK_STATUS(tocl_mem_alloc(0, (size_t)max + 1, &a), TOCL_E_OOM);
    CHECK(strstr(tocl_last_error(), "CL_DEVICE_MAX_MEM_ALLOC_SIZE") != NULL);
    CHECK_STATUS(tocl_mem_alloc(0, SIZE_MAX, &a), TOCL_E_OOM);
}

static void test_oom(void) {
    CHECK_OK(tocl_mem_empty_cache(0));
    tocl_mem_stats s0 = stats(0);
    CHECK(s0.limit_bytes == tocl_dev_props(0)->global_mem_bytes);
    CHECK_OK(tocl_mem_set_limit(0, s0.reserved_bytes + 64 * MiB));
    CHECK(stats(0).limit_bytes == s0.reserved_bytes + 64 * MiB);
    tocl_addr a, b;
    CHECK_OK(tocl_mem_alloc(0, 40 * MiB, &a));
    CHECK_STATUS(tocl_mem_alloc(0, 40 * MiB, &b), TOCL_E_OOM);
    const char *msg = tocl_last_error();
    printf("OOM message: %s\n", msg);
    CHECK(strstr(msg, "OpenCL device 0 out of memory") != NULL);
    CHECK(strstr(msg, "tried to allocate 40.00 MiB") != NULL);
    CHECK(strstr(msg, "40.00 MiB allocated") != NULL);
    CHECK(strstr(msg, "40.00 MiB reserved") != NULL);
    CHECK(strstr(msg, "total on the device") != NULL);
    tocl_mem_stats s1 = stats(0);
    CHECK(s1.ooms == s0.ooms + 1);
    CHECK(s1.alloc_retries == s0.alloc_retries + 1);
    /* Works again after freeing: the cached block is reused. */
    CHECK_OK(tocl_mem_free(a));
    CHECK_OK(tocl_mem_alloc(0, 40 * MiB, &b));
    CHECK(b == a);
    CHECK_OK(tocl_mem_free(b));
    /* A request that fits only without the cache: release it and retry. */
    CHECK_OK(tocl_mem_alloc(0, 50 * MiB, &b));
    tocl_mem_stats s2 = stats(0);
    CHECK(s2.alloc_retries == s1.alloc_retries + 1);
    CHECK(s2.reserved_bytes == s0.reserved_bytes + 50 * MiB);
    CHECK_OK(tocl_mem_free(b));
    /* A padded 20 MiB segment that does not fit falls back to a tight one. */
    CHECK_OK(tocl_mem_alloc(0, 50 * MiB, &a));
    CHECK_OK(tocl_mem_alloc(0, 6 * MiB, &b));
    CHECK(stats(0).reserved_bytes == s0.reserved_bytes + 56 * MiB);
    CHECK_OK(tocl_mem_free(a));
    CHECK_OK(tocl_mem_free(b));
    CHECK_OK(tocl_mem_set_limit(0, 0));
    CHECK(stats(0).limit_bytes == tocl_dev_props(0)->global_mem_bytes);
    CHECK_OK(tocl_mem_empty_cache(0));
}

static void test_record_stream(void) {
    CHECK_OK(tocl_mem_empty_cache(0));
    tocl_addr big;
    CHECK_OK(tocl_mem_alloc(0, 64 * MiB, &big)); /* on stream 0 */
    tocl_mem_stats s0 = stats(0);

    /* Freed while stream 1 may still use it: not reused until stream 1 is done. */
    tocl_addr x, y;
    CHECK_OK(tocl_mem_alloc(0, 4096, &x));
    CHECK_OK(tocl_mem_record_stream(x, 1));
    CHECK_OK(tocl_mem_record_stream(x + 100, 0)); /* its own stream: nothing to do */
    make_busy(1, big, 16);
    CHECK_OK(tocl_mem_free(x));
    CHECK(stats(0).allocated_bytes == s0.allocated_bytes); /* freed for accounting */
    int done = 1;
    CHECK_OK(tocl_stream_query(0, 1, &done));
    CHECK_OK(tocl_mem_alloc(0, 4096, &y));
    if (!done)
        CHECK(y != x); /* stream 1 was still busy, so x was held back */
    CHECK_OK(tocl_stream_sync(0, 1));
    CHECK_OK(tocl_mem_free(y));
    CHECK_OK(tocl_mem_alloc(0, 512, &y)); /* processes pending frees */
    CHECK_OK(tocl_mem_free(y));
    CHECK_OK(tocl_mem_empty_cache(0));
    CHECK(stats(0).reserved_bytes == s0.reserved_bytes); /* x came back and the segment went */

    /* When the only memory left is held by pending frees, allocation waits. */
    CHECK_OK(tocl_mem_set_limit(0, s0.reserved_bytes + 2 * MiB));
    tocl_addr filler;
    CHECK_OK(tocl_mem_alloc(0, MiB, &x));
    CHECK_OK(tocl_mem_alloc(0, MiB, &filler)); /* the 2 MiB segment is now full */
    CHECK_OK(tocl_mem_record_stream(x, 2));
    make_busy(2, big, 8);
    CHECK_OK(tocl_mem_free(x));
    tocl_mem_stats s1 = stats(0);
    CHECK_OK(tocl_mem_alloc(0, MiB, &y));
    CHECK(y == x);
    CHECK(stats(0).alloc_retries == s1.alloc_retries); /* no cache release needed */
    CHECK_OK(tocl_mem_free(y));
    CHECK_OK(tocl_mem_free(filler));
    CHECK_OK(tocl_mem_set_limit(0, 0));
    CHECK_OK(tocl_device_sync(0));
    CHECK_OK(tocl_mem_free(big));
    CHECK_OK(tocl_mem_empty_cache(0));
}

static void test_streams_do_not_share(void) {
    tocl_addr a, b;
    CHECK_OK(tocl_mem_alloc(0, 4096, &a));
    CHECK_OK(tocl_mem_free(a));
    CHECK_OK(tocl_stream_set_current(0, 4));
    CHECK_OK(tocl_mem_alloc(0, 4096, &b)); /* another stream: a is not its to reuse */
    CHECK(b != a);
    CHECK(tocl_mem_device_of(b) == 0);
    CHECK_OK(tocl_mem_free(b));
    CHECK_OK(tocl_stream_set_current(0, 0));
    CHECK_OK(tocl_mem_alloc(0, 4096, &b));
    CHECK(b == a);
    CHECK_OK(tocl_mem_free(b));
    CHECK_OK(tocl_mem_empty_cache(0));
}

int main(void) {
    CHECK_OK(tocl_init());
    if (tocl_device_count() < 1) {
        printf("no OpenCL device; skipped\n");
        TOCL_TEST_END();
    }
    test_reuse_split_coalesce();
    test_peaks_and_counters();
    test_address_edges();
    test_bad_calls();
    test_oom();
    test_record_stream();
    test_streams_do_not_share();
    tocl_mem_stats s = stats(0);
    CHECK(s.allocated_bytes == 0 && s.requested_bytes == 0 && s.active_blocks == 0);
    CHECK(s.reserved_bytes == 0 && s.segments == 0);
    TOCL_TEST_END();
}
