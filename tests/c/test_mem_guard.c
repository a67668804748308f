/* test_mem_guard.c - TORCH_OCL_GUARD=1: canaries around device blocks.
 * A clean workload (copies, fills, in-bounds kernels, reuse, two streams)
 * counts no violation; writes one byte past the end, before the start, and a
 * kernel writing one element too many are each reported once, naming the
 * block size and the offset of the first bad byte. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "tocl_test.h"

static const char *k_src =
    "__kernel void iota(__global float *p, ulong off, uint n) {\n"
    "    uint i = get_global_id(0);\n"
    "    if (i < n) p[off / 4 + i] = (float)i;\n"
    "}\n";

/* Run iota over n floats at device address a (the kernel does not check
 * bounds: n past the block's end writes out of bounds). */
static void iota(int stream, tocl_addr a, unsigned n) {
    cl_kernel k;
    CHECK_OK(tocl_kernel_create(0, k_src, "", "iota", &k));
    cl_mem buf;
    size_t off;
    int dev;
    CHECK_OK(tocl_mem_resolve(a, &dev, &buf, &off));
    cl_command_queue q;
    CHECK_OK(tocl_queue_get(0, stream, &q));
    cl_ulong o = off;
    size_t gws = (n + 63) / 64 * 64;
    clSetKernelArg(k, 0, sizeof buf, &buf);
    clSetKernelArg(k, 1, sizeof o, &o);
    clSetKernelArg(k, 2, sizeof n, &n);
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 0, NULL, NULL) == CL_SUCCESS);
    clReleaseKernel(k);
}

/* Write raw bytes at a + delta, bypassing the allocator's range checks. */
static void poke(tocl_addr a, long delta, size_t n) {
    cl_mem buf;
    size_t off;
    int dev;
    CHECK_OK(tocl_mem_resolve(a, &dev, &buf, &off));
    cl_command_queue q;
    CHECK_OK(tocl_queue_get(0, 0, &q));
    unsigned char zeros[16] = {0};
    CHECK(clEnqueueWriteBuffer(q, buf, CL_TRUE, (size_t)((long)off + delta), n, zeros, 0, NULL, NULL) ==
          CL_SUCCESS);
}

/* stderr goes to a file while fn runs; returns what it printed. */
static char g_err[8192];
static const char *capture_stderr(void (*fn)(void)) {
    char path[] = "/tmp/test_mem_guard_XXXXXX";
    int fd = mkstemp(path);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    fn();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, g_err, sizeof g_err - 1);
    g_err[n > 0 ? n : 0] = 0;
    close(fd);
    unlink(path);
    fputs(g_err, stderr); /* still visible in the test log */
    return g_err;
}

static void test_clean_run(void) {
    static const size_t sizes[] = {1, 3, 100, 512, 1000, 4096, 65536 + 4, (size_t)1 << 20, 3u << 20, 25u << 20};
    enum { N = sizeof sizes / sizeof *sizes };
    tocl_addr a[N], b[N];
    unsigned char *host = malloc(25u << 20), *back = malloc(25u << 20);
    for (size_t i = 0; i < (25u << 20); i++)
        host[i] = (unsigned char)(i * 7 + 1);
    tocl_mem_stats s0;
    CHECK_OK(tocl_mem_stats_get(0, &s0));
    for (int r = 0; r < 3; r++) { /* rounds 2 and 3 reuse the cached blocks */
        for (int i = 0; i < N; i++) {
            size_t n = sizes[i];
            CHECK_OK(tocl_mem_alloc(0, n, &a[i]));
            CHECK_OK(tocl_mem_alloc(0, n, &b[i]));
            CHECK(a[i] % 512 == 0);
            CHECK(tocl_mem_bytes_after(a[i]) == n);        /* ends at the requested size */
            CHECK(tocl_mem_bytes_after(a[i] + n - 1) == 1);
            CHECK_OK(tocl_copy_h2d(0, 0, a[i], host, n, 1));
            CHECK_STATUS(tocl_copy_h2d(0, 0, a[i], host, n + 1, 1), TOCL_E_INVALID); /* not into the canaries */
            CHECK_OK(tocl_copy_d2d(0, 0, b[i], a[i], n));
            memset(back, 0, n);
            CHECK_OK(tocl_copy_d2h(0, 0, back, b[i], n, 1));
            CHECK(memcmp(back, host, n) == 0);
            unsigned char v = 0xff;
            CHECK_OK(tocl_mem_fill(0, 0, a[i], &v, 1, n));
            if (n >= 4)
                iota(0, b[i], (unsigned)(n / 4));           /* exactly in bounds */
        }
        for (int i = 0; i < N; i++) {
            CHECK_OK(tocl_mem_free(a[i]));
            CHECK_OK(tocl_mem_free(b[i]));
        }
    }
    /* Statistics leave the guard bytes out. */
    CHECK_OK(tocl_mem_alloc(0, 1000, &a[0]));
    tocl_mem_stats s1;
    CHECK_OK(tocl_mem_stats_get(0, &s1));
    CHECK(s1.allocated_bytes - s0.allocated_bytes == 1024 && s1.requested_bytes - s0.requested_bytes == 1000);
    CHECK_OK(tocl_mem_free(a[0]));
    /* A block used on a second stream, freed while that stream still works. */
    tocl_addr c;
    CHECK_OK(tocl_mem_alloc(0, 4000, &c));
    CHECK_OK(tocl_mem_record_stream(c, 1));
    /* As PyTorch requires: stream 1 waits for the allocating stream (whose
     * queue still holds work on this memory: here the read-backs of the
     * blocks freed above). */
    CHECK_OK(tocl_stream_wait_stream(0, 1, 0, 0));
    iota(1, c, 1000);
    CHECK_OK(tocl_mem_free(c));
    CHECK_OK(tocl_mem_guard_check(0));
    CHECK_OK(tocl_mem_empty_cache(0));
    CHECK(tocl_mem_guard_violations() == 0);
    free(host);
    free(back);
}

static tocl_addr g_a;

static void one_past_end(void) {
    CHECK_OK(tocl_mem_alloc(0, 1000, &g_a));
    poke(g_a, 1000, 1); /* the first byte after the caller's range */
    CHECK_OK(tocl_mem_free(g_a));
    CHECK_OK(tocl_mem_guard_check(0)); /* the freed block's read-back completes and is checked */
}

static void before_start(void) {
    CHECK_OK(tocl_mem_alloc(0, 64, &g_a));
    poke(g_a, -3, 1);
    CHECK_OK(tocl_mem_free(g_a));
    CHECK_OK(tocl_mem_guard_check(0));
}

static void kernel_overrun_live(void) {
    CHECK_OK(tocl_mem_alloc(0, 256 * sizeof(float), &g_a));
    iota(0, g_a, 257);                 /* one float too many */
    CHECK_OK(tocl_mem_empty_cache(0)); /* live blocks are checked there too */
}

static void test_violations(void) {
    uint64_t v0 = tocl_mem_guard_violations();
    const char *err = capture_stderr(one_past_end);
    CHECK(tocl_mem_guard_violations() == v0 + 1);
    CHECK(strstr(err, "AFTER the end") != NULL);
    CHECK(strstr(err, "(1000 bytes,") != NULL);
    CHECK(strstr(err, "first bad byte at offset 1000 (0 bytes past the end)") != NULL);
    CHECK(strstr(err, "when the block was freed") != NULL);

    err = capture_stderr(before_start);
    CHECK(tocl_mem_guard_violations() == v0 + 2);
    CHECK(strstr(err, "BEFORE the start") != NULL);
    CHECK(strstr(err, "first bad byte at offset -3") != NULL);

    err = capture_stderr(kernel_overrun_live);
    CHECK(tocl_mem_guard_violations() == v0 + 3);
    CHECK(strstr(err, "(1024 bytes,") != NULL);
    CHECK(strstr(err, "first bad byte at offset 1024 (0 bytes past the end)") != NULL);
    CHECK(strstr(err, "while the block was live") != NULL);
    /* Reported once: the canaries were rewritten, so freeing it is clean. */
    CHECK_OK(tocl_mem_free(g_a));
    CHECK_OK(tocl_mem_guard_check(0));
    CHECK(tocl_mem_guard_violations() == v0 + 3);
}

/* Frees after the last allocation leave their read-backs in flight (one
 * cl_event and a host buffer each) until something polls them: a device sync
 * must, since they are complete then. Without it the cl_event count a soak
 * samples after synchronize varied with how many frees followed the last
 * allocation (156..177 in the GPT soak), and a canary hit went unreported. */
static void sync_then_free_overrun(void) {
    CHECK_OK(tocl_mem_alloc(0, 1000, &g_a));
    poke(g_a, 1000, 1);
    CHECK_OK(tocl_mem_free(g_a));
    CHECK_OK(tocl_device_sync(0));
}

static void test_sync_completes_read_backs(void) {
    enum { N = 50 };
    tocl_addr a[N];
    CHECK_OK(tocl_device_sync(0));
    CHECK(tocl_mem_guard_in_flight() == 0);
    for (int i = 0; i < N; i++)
        CHECK_OK(tocl_mem_alloc(0, 256 + 64 * (size_t)i, &a[i]));
    for (int i = 0; i < N; i++)
        CHECK_OK(tocl_mem_free(a[i]));
    /* No allocation since: every read-back is still held. */
    CHECK(tocl_mem_guard_in_flight() == N);
    CHECK_OK(tocl_device_sync(0));
    CHECK(tocl_mem_guard_in_flight() == 0);

    uint64_t v0 = tocl_mem_guard_violations();
    const char *err = capture_stderr(sync_then_free_overrun);
    CHECK(tocl_mem_guard_violations() == v0 + 1); /* reported at the sync, no allocation needed */
    CHECK(strstr(err, "(1000 bytes,") != NULL);
    CHECK(tocl_mem_guard_in_flight() == 0);
}

int main(void) {
    setenv("TORCH_OCL_GUARD", "1", 1); /* read at the first allocation */
    CHECK_OK(tocl_init());
    if (tocl_device_count() < 1) {
        printf("no OpenCL device; skipped\n");
        TOCL_TEST_END();
    }
    CHECK(tocl_mem_guard_enabled());
    test_clean_run();
    test_violations();
    test_sync_completes_read_backs();
    CHECK_OK(tocl_mem_empty_cache(0));
    tocl_mem_stats s;
    CHECK_OK(tocl_mem_stats_get(0, &s));
    CHECK(s.allocated_bytes == 0 && s.active_blocks == 0 && s.segments == 0);
    TOCL_TEST_END();
}
