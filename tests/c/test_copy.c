/* test_copy.c - host/device copies with offsets, bounds errors, overlapping
 * device copies, fills, pinned async copies, and copies between two devices. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tocl_test.h"

#define MiB ((size_t)1 << 20)

static void test_roundtrip_offsets(void) {
    size_t n = MiB + 100;
    unsigned char *src = malloc(n), *dst = malloc(n);
    for (size_t i = 0; i < n; i++)
        src[i] = (unsigned char)(i * 31 + 7);
    tocl_addr a;
    CHECK_OK(tocl_mem_alloc(0, n, &a));
    CHECK_OK(tocl_copy_h2d(0, 0, a, src, n, 1));
    memset(dst, 0, n);
    CHECK_OK(tocl_copy_d2h(0, 0, dst, a, n, 1));
    CHECK(memcmp(src, dst, n) == 0);
    /* Offset views: write 1000 bytes at +37, read them back at +37 and +537. */
    CHECK_OK(tocl_copy_h2d(0, 0, a + 37, src + 5000, 1000, 0)); /* pageable: done synchronously */
    memset(dst, 0, n);
    CHECK_OK(tocl_copy_d2h(0, 0, dst, a + 37, 1000, 1));
    CHECK(memcmp(dst, src + 5000, 1000) == 0);
    CHECK_OK(tocl_copy_d2h(0, 0, dst, a + 537, 500, 1));
    CHECK(memcmp(dst, src + 5500, 500) == 0);
    CHECK_OK(tocl_copy_d2h(0, 0, dst, a, 37, 1));
    CHECK(memcmp(dst, src, 37) == 0); /* untouched before the view */

    /* Ranges past the block's end are refused with the address in the message. */
    size_t end = tocl_mem_bytes_after(a);
    CHECK(end >= n);
    CHECK_STATUS(tocl_copy_h2d(0, 0, a + end - 10, src, 20, 1), TOCL_E_INVALID);
    char hex[32];
    snprintf(hex, sizeof hex, "%llx", (unsigned long long)(a + end - 10));
    CHECK(strstr(tocl_last_error(), hex) != NULL);
    CHECK(strstr(tocl_last_error(), "20 bytes") != NULL);
    CHECK_STATUS(tocl_copy_d2h(0, 0, dst, a + end, 1, 1), TOCL_E_INVALID);
    CHECK_STATUS(tocl_copy_d2h(0, 0, NULL, a, 1, 1), TOCL_E_INVALID);
    CHECK_OK(tocl_copy_d2h(0, 0, dst, 0, 0, 1)); /* nothing to do */

    /* Device to device within one block, overlapping both ways (memmove). */
    CHECK_OK(tocl_copy_h2d(0, 0, a, src, n, 1));
    CHECK_OK(tocl_copy_d2d(0, 0, a + 100, a, 4096));
    CHECK_OK(tocl_copy_d2h(0, 0, dst, a + 100, 4096, 1));
    CHECK(memcmp(dst, src, 4096) == 0);
    CHECK_OK(tocl_copy_h2d(0, 0, a, src, n, 1));
    CHECK_OK(tocl_copy_d2d(0, 0, a, a + 100, 4096));
    CHECK_OK(tocl_copy_d2h(0, 0, dst, a, 4096, 1));
    CHECK(memcmp(dst, src + 100, 4096) == 0);
    CHECK_OK(tocl_copy_d2d(0, 0, a, a, 4096)); /* onto itself */

    /* Device to device between blocks, on a non-default stream. */
    tocl_addr b;
    CHECK_OK(tocl_mem_alloc(0, 3 * MiB, &b));
    CHECK_OK(tocl_copy_h2d(0, 0, a, src, n, 1));
    CHECK_OK(tocl_copy_d2d(0, 2, b + 512, a + 3, n - 3));
    CHECK_OK(tocl_copy_d2h(0, 2, dst, b + 512, n - 3, 1));
    CHECK(memcmp(dst, src + 3, n - 3) == 0);
    CHECK_STATUS(tocl_copy_d2d(0, 0, a, b, n + 1000), TOCL_E_INVALID); /* past a's end */
    CHECK_OK(tocl_mem_free(b));
    CHECK_STATUS(tocl_copy_d2d(0, 0, a, b, 16), TOCL_E_INVALID);       /* b is freed */
    CHECK(strstr(tocl_last_error(), "source") != NULL);
    CHECK_OK(tocl_mem_free(a));
    free(src);
    free(dst);
}

static void test_fill(void) {
    tocl_addr a;
    CHECK_OK(tocl_mem_alloc(0, 4096, &a));
    uint8_t b1 = 0xab;
    uint16_t b2 = 0x1234;
    uint32_t b4 = 0xdeadbeef;
    uint64_t b8 = 0x0102030405060708ull;
    uint8_t out[4096];
    CHECK_OK(tocl_mem_fill(0, 0, a, &b1, 1, 4096));
    CHECK_OK(tocl_mem_fill(0, 0, a + 2, &b2, 2, 6));
    CHECK_OK(tocl_mem_fill(0, 0, a + 16, &b4, 4, 16));
    CHECK_OK(tocl_mem_fill(0, 0, a + 64, &b8, 8, 64));
    CHECK_OK(tocl_copy_d2h(0, 0, out, a, 4096, 1));
    CHECK(out[0] == 0xab && out[1] == 0xab && out[8] == 0xab && out[4095] == 0xab);
    uint16_t v2;
    memcpy(&v2, out + 6, 2);
    CHECK(v2 == 0x1234);
    uint32_t v4;
    memcpy(&v4, out + 28, 4);
    CHECK(v4 == 0xdeadbeef && out[32] == 0xab);
    uint64_t v8;
    memcpy(&v8, out + 120, 8);
    CHECK(v8 == b8 && out[128] == 0xab);
    CHECK_STATUS(tocl_mem_fill(0, 0, a, &b4, 3, 6), TOCL_E_INVALID);     /* pattern size */
    CHECK_STATUS(tocl_mem_fill(0, 0, a, &b4, 4, 6), TOCL_E_INVALID);     /* not a multiple */
    CHECK_STATUS(tocl_mem_fill(0, 0, a + 2, &b4, 4, 8), TOCL_E_INVALID); /* misaligned */
    CHECK_STATUS(tocl_mem_fill(0, 0, a + 4000, &b4, 4, 128), TOCL_E_INVALID); /* past the end */
    CHECK_STATUS(tocl_mem_fill(0, 0, a, NULL, 4, 8), TOCL_E_INVALID);
    CHECK_OK(tocl_mem_free(a));
}

static void test_pinned(void) {
    void *z = (void *)1;
    CHECK_OK(tocl_host_alloc(0, &z));
    CHECK(z == NULL);
    CHECK_OK(tocl_host_free(NULL));
    size_t n = 8 * MiB;
    unsigned char *p, *q;
    CHECK_OK(tocl_host_alloc(n, (void **)&p));
    CHECK_OK(tocl_host_alloc(n, (void **)&q));
    CHECK(((uintptr_t)p & 63) == 0);
    CHECK(tocl_host_is_pinned(p) && tocl_host_is_pinned(p + n - 1) && tocl_host_is_pinned(p + 12345));
    unsigned char stack_byte = 0;
    CHECK(!tocl_host_is_pinned(&stack_byte));
    CHECK_STATUS(tocl_host_free(p + 1), TOCL_E_INVALID);
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i ^ (i >> 9));
    tocl_addr a;
    CHECK_OK(tocl_mem_alloc(0, n, &a));
    /* Async upload from pinned memory, then free the pinned block at once:
     * its release is deferred until the copy has read it. */
    unsigned char *check = malloc(n);
    memcpy(check, p, n);
    CHECK_OK(tocl_copy_h2d(0, 1, a, p, n, 0));
    CHECK_OK(tocl_host_free(p));
    CHECK(!tocl_host_is_pinned(p));
    /* Async download into pinned memory, visible after a stream sync. */
    memset(q, 0, n);
    CHECK_OK(tocl_copy_d2h(0, 1, q, a, n, 0));
    CHECK_OK(tocl_stream_sync(0, 1));
    CHECK(memcmp(q, check, n) == 0);
    CHECK_OK(tocl_host_record_use(q + 100, 0, 1));
    CHECK_STATUS(tocl_host_record_use(check, 0, 1), TOCL_E_INVALID); /* not pinned */
    CHECK_OK(tocl_host_free(q));
    void *r;
    CHECK_OK(tocl_host_alloc(64, &r)); /* collects the deferred blocks */
    CHECK_OK(tocl_host_free(r));
    CHECK_OK(tocl_mem_free(a));
    free(check);
}

static void test_two_devices(void) {
    if (tocl_device_count() < 2) {
        printf("one device: cross-device copies skipped\n");
        return;
    }
    size_t n = 3 * MiB + 4;
    unsigned char *src = malloc(n), *dst = malloc(n);
    for (size_t i = 0; i < n; i++)
        src[i] = (unsigned char)(i * 13);
    tocl_addr a0, a1;
    CHECK_OK(tocl_mem_alloc(0, n, &a0));
    CHECK_OK(tocl_mem_alloc(1, n, &a1));
    CHECK(tocl_mem_device_of(a0) == 0 && tocl_mem_device_of(a1) == 1);
    tocl_mem_stats s1;
    CHECK_OK(tocl_mem_stats_get(1, &s1));
    CHECK(s1.allocated_bytes >= n && s1.active_blocks == 1);
    /* Device 1 writes (not waited for), device 0 copies from it. */
    CHECK_OK(tocl_copy_h2d(1, 0, a1, src, n, 1));
    uint32_t pat = 0x55aa55aa;
    CHECK_OK(tocl_mem_fill(1, 0, a1, &pat, 4, 4096));
    CHECK_OK(tocl_copy_d2d(0, 0, a0, a1, n));
    CHECK_OK(tocl_copy_d2h(0, 0, dst, a0, n, 1));
    uint32_t got;
    memcpy(&got, dst + 100, 4);
    CHECK(got == pat);
    CHECK(memcmp(dst + 4096, src + 4096, n - 4096) == 0);
    /* And back, with offsets, run on device 1's queue. */
    CHECK_OK(tocl_copy_h2d(0, 0, a0, src, n, 1));
    CHECK_OK(tocl_copy_d2d(1, 0, a1 + 8, a0 + 16, n - 16));
    memset(dst, 0, n);
    CHECK_OK(tocl_copy_d2h(1, 0, dst, a1 + 8, n - 16, 1));
    CHECK(memcmp(dst, src + 16, n - 16) == 0);
    CHECK_OK(tocl_mem_free(a0));
    CHECK_OK(tocl_mem_free(a1));
    CHECK_OK(tocl_mem_empty_cache(1));
    CHECK_OK(tocl_mem_stats_get(1, &s1));
    CHECK(s1.reserved_bytes == 0 && s1.allocated_bytes == 0);
    free(src);
    free(dst);
}

int main(void) {
    CHECK_OK(tocl_init());
    if (tocl_device_count() < 1) {
        printf("no OpenCL device; skipped\n");
        TOCL_TEST_END();
    }
    test_roundtrip_offsets();
    test_fill();
    test_pinned();
    test_two_devices();
    CHECK_OK(tocl_device_sync(0));
    TOCL_TEST_END();
}
