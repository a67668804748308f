/* test_program.c - program cache: memory and disk hits, build errors, kernels, devices, threads, admin. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "program/program_internal.h"
#include "tocl_test.h"

/* A nonce kernel in every source keeps PoCL's own kernel cache (keyed by
 * the compiled code, so a comment would not do) from turning our builds
 * into its cache hits: the timings below are real compiles. */
static char g_nonce[64];

static char *make_source(const char *kernel, float add) {
    static char bufs[16][512];
    static int next;
    char *b = bufs[next++ % 16];
    snprintf(b, 512,
             "__kernel void nonce_%s_%s(void) {}\n__kernel void %s(__global float *x, float a) {\n"
             "    x[get_global_id(0)] = x[get_global_id(0)] * a + %.1ff;\n}\n",
             g_nonce, kernel, kernel, add);
    return b;
}

static tocl_program_stats stats(void) {
    tocl_program_stats s;
    tocl_program_stats_get(&s);
    return s;
}

/* Run kernel `name` (x = x * 2 + add) on 16 floats and check the result:
 * proves a program loaded from disk is not only accepted but correct. */
static int run_kernel(int dev, const char *src, const char *name, float add) {
    cl_kernel k;
    if (tocl_kernel_create(dev, src, "", name, &k) != TOCL_OK)
        return 0;
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(tocl_dev_context(dev), tocl_dev_id(dev), 0, &err);
    float host[16];
    for (int i = 0; i < 16; i++)
        host[i] = (float)i;
    cl_mem buf = clCreateBuffer(tocl_dev_context(dev), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host,
                                host, &err);
    float a = 2.0f;
    size_t gws = 16;
    clSetKernelArg(k, 0, sizeof buf, &buf);
    clSetKernelArg(k, 1, sizeof a, &a);
    clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 0, NULL, NULL);
    clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL);
    int ok = 1;
    for (int i = 0; i < 16; i++)
        ok &= host[i] == (float)i * 2.0f + add;
    clReleaseMemObject(buf);
    clReleaseCommandQueue(q);
    clReleaseKernel(k);
    return ok;
}

static void test_hashes(void) {
    /* Published XXH64 test vectors guard against a typo in the constants. */
    CHECK(tocl_hash_xxh64("", 0, 0) == 0xEF46DB3751D8E999ULL);
    CHECK(tocl_hash_xxh64("a", 1, 0) == 0xD24EC4F1A98C6E5BULL);
    CHECK(tocl_hash_xxh64("Nobody inspects the spammish repetition", 39, 0) == 0xFBCEA83C8A378BF1ULL);
    tocl_device_props p;
    memset(&p, 0, sizeof p);
    strcpy(p.name, "dev");
    tocl_program_key k1 = tocl_program_key_make("src", "", &p), k2 = tocl_program_key_make("src", "", &p);
    CHECK(k1.lo == k2.lo && k1.hi == k2.hi);
    k2 = tocl_program_key_make("src", "-DX", &p);
    CHECK(k1.lo != k2.lo && k1.hi != k2.hi);
    k2 = tocl_program_key_make("sr", "c", &p); /* field boundaries matter */
    CHECK(k1.lo != k2.lo && k1.hi != k2.hi);
    strcpy(p.driver_version, "2");
    k2 = tocl_program_key_make("src", "", &p);
    CHECK(k1.lo != k2.lo && k1.hi != k2.hi);
    char hex[TOCL_PROGRAM_KEY_HEX];
    tocl_program_key_hex(k1, hex);
    CHECK(strlen(hex) == 32);
}

static void test_cache_dir(void) {
    char saved[4096], buf[4096];
    snprintf(saved, sizeof saved, "%s", getenv("TORCH_OCL_CACHE_DIR"));
    CHECK_OK(tocl_cache_dir(buf, sizeof buf));
    CHECK(!strcmp(buf, saved));
    CHECK_STATUS(tocl_cache_dir(buf, 4), TOCL_E_INVALID);
    unsetenv("TORCH_OCL_CACHE_DIR");
    setenv("XDG_CACHE_HOME", "/tmp/xdg-test", 1);
    CHECK_OK(tocl_cache_dir(buf, sizeof buf));
    CHECK(!strcmp(buf, "/tmp/xdg-test/torch_ocl"));
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/tmp/home-test", 1);
    CHECK_OK(tocl_cache_dir(buf, sizeof buf));
    CHECK(!strcmp(buf, "/tmp/home-test/.cache/torch_ocl"));
    setenv("TORCH_OCL_CACHE_DIR", saved, 1);
}

static void test_memory_disk_timing(void) {
    const char *src = make_source("first", 1.0f);
    tocl_program_stats_reset();
    cl_program p1, p2;
    double t0 = tocl_program_now();
    CHECK_OK(tocl_program_get(0, src, "", &p1));
    double first_build = tocl_program_now() - t0;
    /* PoCL compiles the work-group function at the first launch; say so. */
    t0 = tocl_program_now();
    CHECK(run_kernel(0, src, "first", 1.0f));
    double first_launch = tocl_program_now() - t0;
    tocl_program_stats s = stats();
    CHECK(s.builds == 1 && s.disk_writes == 1 && s.memory_hits == 1 && s.disk_hits == 0);
    CHECK(s.build_seconds > 0.0);
    uint64_t files = 0, bytes = 0;
    CHECK_OK(tocl_cache_info(&files, &bytes));
    CHECK(files == 1 && bytes > 48);

    /* Memory hit: same program object, no build (run_kernel made one hit). */
    CHECK_OK(tocl_program_get(0, src, NULL, &p2)); /* NULL options == "" */
    CHECK(p1 == p2);
    s = stats();
    CHECK(s.memory_hits == 2 && s.builds == 1);

    /* Another source: a later build in the same process (the compiler is warm). */
    const char *src2 = make_source("second", 2.0f);
    t0 = tocl_program_now();
    CHECK_OK(tocl_program_get(0, src2, "", &p2));
    double later_build = tocl_program_now() - t0;
    CHECK_OK(tocl_program_prepare(0, src2, "", "second"));

    /* Drop memory: the next lookup comes from disk, with no build. */
    tocl_program_cache_drop_memory();
    tocl_program_stats_reset();
    t0 = tocl_program_now();
    CHECK_OK(tocl_program_get(0, src, "", &p1));
    double disk_load = tocl_program_now() - t0;
    s = stats();
    CHECK(s.disk_hits == 1 && s.builds == 0 && s.disk_rejects == 0 && s.disk_writes == 0);
    CHECK(run_kernel(0, src, "first", 1.0f));
    printf("timing on %s: first build %.3f s (+ first launch %.3f s), later build %.3f s, "
           "cached-binary load %.4f s\n",
           tocl_dev_props(0)->name, first_build, first_launch, later_build, disk_load);

    /* Different options are a different program. */
    tocl_program_stats_reset();
    CHECK_OK(tocl_program_prepare(0, src, "-cl-fast-relaxed-math", "first"));
    CHECK(stats().builds == 1);
}

static void test_kernel_names_and_args(void) {
    const char *src = make_source("named", 3.0f);
    cl_kernel k;
    CHECK_STATUS(tocl_kernel_create(0, src, "", "no_such_kernel", &k), TOCL_E_INVALID);
    CHECK(strstr(tocl_last_error(), "no_such_kernel") != NULL);
    CHECK(strstr(tocl_last_error(), "named") != NULL); /* lists what the program has */
    CHECK_STATUS(tocl_program_prepare(0, src, "", "missing"), TOCL_E_INVALID);
    CHECK_OK(tocl_program_prepare(0, src, "", "named"));
    CHECK(run_kernel(0, src, "named", 3.0f));
    cl_program p;
    CHECK_STATUS(tocl_program_get(0, NULL, "", &p), TOCL_E_INVALID);
    CHECK_STATUS(tocl_program_get(99, src, "", &p), TOCL_E_NO_DEVICE);
    CHECK_STATUS(tocl_kernel_create(0, src, "", NULL, &k), TOCL_E_INVALID);
    CHECK_STATUS(tocl_program_stats_get(NULL), TOCL_E_INVALID);
}

static void test_build_failure(void) {
    uint64_t before = 0, after = 0;
    tocl_cache_info(&before, NULL);
    tocl_program_stats_reset();
    const char *bad = "/* broken kernel */\n__kernel void broken(__global float *x) {\n"
                      "    x[0] = undefined_identifier_xyz;\n}\n";
    CHECK_STATUS(tocl_program_prepare(0, bad, "", "broken"), TOCL_E_BUILD);
    const char *msg = tocl_last_error();
    char head[512];
    snprintf(head, sizeof head, "OpenCL program build failed on %s:\n", tocl_dev_props(0)->name);
    CHECK(!strncmp(msg, head, strlen(head)));
    CHECK(strstr(msg, "undefined_identifier_xyz") != NULL); /* from the log and the source excerpt */
    CHECK(strstr(msg, "2| __kernel void broken") != NULL);
    /* A compile error is remembered, in memory and as one .fail file beside
     * the binaries: a retry (here, or in a later process) reports the same
     * log without compiling again. */
    tocl_cache_info(&after, NULL);
    CHECK(after == before + 1);
    CHECK(stats().build_failures == 1 && stats().known_failures == 0 && stats().builds == 0);
    CHECK_STATUS(tocl_program_prepare(0, bad, "", "broken"), TOCL_E_BUILD);
    CHECK(strstr(tocl_last_error(), "undefined_identifier_xyz") != NULL);
    CHECK(strstr(tocl_last_error(), "known build failure") != NULL);
    CHECK(stats().build_failures == 1 && stats().known_failures == 1 && stats().disk_writes == 0);
    tocl_program_cache_drop_memory(); /* as a new process: the .fail file answers */
    CHECK_STATUS(tocl_program_prepare(0, bad, "", "broken"), TOCL_E_BUILD);
    CHECK(strstr(tocl_last_error(), "undefined_identifier_xyz") != NULL && strstr(tocl_last_error(), ".fail") != NULL);
    CHECK(stats().build_failures == 1 && stats().known_failures == 2);
    /* Bad build options are the caller's mistake. */
    CHECK_STATUS(tocl_program_prepare(0, make_source("opts", 0.0f), "-not-an-option-xyz", "opts"),
                 TOCL_E_INVALID);
    /* And the process keeps working. */
    const char *good = make_source("after_failure", 4.0f);
    CHECK_OK(tocl_program_prepare(0, good, "", "after_failure"));
    CHECK(run_kernel(0, good, "after_failure", 4.0f));
}

/* The compiler's own stderr line ("1 error generated.") never reaches the
 * process's stderr; other output written meanwhile does, and fd 2 is back
 * where it was. */
static void test_driver_output_kept_off_stderr(void) {
    char path[] = "/tmp/tocl_test_stderr_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    char src[256];
    snprintf(src, sizeof src, "/* %d-%ld */\n__kernel void quiet(__global int *x) { if () {} }\n", (int)getpid(),
             (long)time(NULL));
    tocl_status s = tocl_program_prepare(0, src, "", "quiet");
    fprintf(stderr, "still here\n");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    CHECK(s == TOCL_E_BUILD);
    CHECK(strstr(tocl_last_error(), "expected expression") != NULL); /* the log carries the diagnosis */
    char out[4096] = {0};
    ssize_t n = pread(fd, out, sizeof out - 1, 0);
    close(fd);
    unlink(path);
    CHECK(n > 0 && strstr(out, "still here") != NULL);
    CHECK(strstr(out, "generated") == NULL);
    if (strstr(out, "generated"))
        fprintf(stderr, "driver output reached stderr: %s\n", out);
}

/* A test switch makes the next build fail with a real build log; nothing
 * is remembered, and the next build of the same source works. */
static void test_injected_failure(void) {
    const char *good = make_source("injected", 5.0f);
    uint64_t before = 0, after = 0;
    tocl_cache_info(&before, NULL);
    tocl_program_stats_reset();
    tocl_program_inject_build_failures(1);
    CHECK_STATUS(tocl_program_prepare(0, good, "", "injected"), TOCL_E_BUILD);
    CHECK(strstr(tocl_last_error(), "build failure injected by a test") != NULL);
    CHECK(strstr(tocl_last_error(), "OpenCL program build failed") != NULL);
    tocl_cache_info(&after, NULL);
    CHECK(after == before && stats().build_failures == 1);
    CHECK_OK(tocl_program_prepare(0, good, "", "injected"));
    CHECK(run_kernel(0, good, "injected", 5.0f));
    CHECK(stats().builds == 1 && stats().known_failures == 0);
}

static void test_two_devices(void) {
    if (tocl_device_count() < 2) {
        printf("one device only: skipping the multi-device test\n");
        return;
    }
    const char *src = make_source("both", 5.0f);
    tocl_program_stats_reset();
    cl_program p0, p1;
    CHECK_OK(tocl_program_get(0, src, "", &p0));
    CHECK_OK(tocl_program_get(1, src, "", &p1));
    CHECK(p0 != p1); /* one program per device */
    tocl_program_stats s = stats();
    /* Identical device names share the disk file; a different device would build. */
    if (!strcmp(tocl_dev_props(0)->name, tocl_dev_props(1)->name))
        CHECK(s.builds == 1 && s.disk_hits == 1);
    else
        CHECK(s.builds == 2);
    CHECK_OK(tocl_program_get(1, src, "", &p1));
    CHECK(stats().memory_hits == 1);
    CHECK(run_kernel(1, src, "both", 5.0f));
}

static void test_disable(void) {
    const char *src = make_source("nodisk", 6.0f);
    uint64_t before = 0, after = 0;
    tocl_cache_info(&before, NULL);
    setenv("TORCH_OCL_CACHE_DISABLE", "1", 1);
    tocl_program_stats_reset();
    CHECK_OK(tocl_program_prepare(0, src, "", "nodisk"));
    CHECK_OK(tocl_program_prepare(0, src, "", "nodisk"));
    tocl_program_stats s = stats();
    CHECK(s.builds == 1 && s.memory_hits == 1 && s.disk_writes == 0);
    tocl_program_cache_drop_memory();
    CHECK_OK(tocl_program_prepare(0, src, "", "nodisk"));
    CHECK(stats().builds == 2 && stats().disk_hits == 0);
    tocl_cache_info(&after, NULL);
    CHECK(after == before);
    unsetenv("TORCH_OCL_CACHE_DISABLE");
}

/* Four threads ask for the same new program at once: one builds, the
 * others wait for it instead of compiling it again. */
static const char *g_thread_src;
static void *thread_get(void *arg) {
    cl_program p;
    *(tocl_status *)arg = tocl_program_get(0, g_thread_src, "", &p);
    return NULL;
}

/* On CPU devices a built program goes to disk later, once no program has
 * been built for a while (the driver compiles every kernel of it again to
 * produce the binary); a flush writes it at once. */
static void test_save_later(void) {
    setenv("TORCH_OCL_CACHE_SAVE", "later", 1);
    tocl_program_stats_reset();
    uint64_t files0 = 0, files = 0, bytes = 0;
    CHECK_OK(tocl_cache_info(&files0, &bytes));
    cl_program p;
    double t0 = tocl_program_now();
    CHECK_OK(tocl_program_get(0, make_source("later_flushed", 3.0f), "", &p));
    tocl_program_stats s = stats();
    /* The builder waits 3 s of quiet; only a stall that long lets it write first. */
    CHECK(s.builds == 1 && ((s.disk_writes_pending == 1 && s.disk_writes == 0) || tocl_program_now() - t0 > 2.5));
    tocl_program_cache_flush();
    s = stats();
    CHECK(s.disk_writes == 1 && s.disk_writes_pending == 0);
    CHECK_OK(tocl_cache_info(&files, &bytes));
    CHECK(files == files0 + 1);

    /* Without a flush, the quiet after the last build lets the builder write it. */
    CHECK_OK(tocl_program_get(0, make_source("later_quiet", 4.0f), "", &p));
    t0 = tocl_program_now();
    while (stats().disk_writes < 2 && tocl_program_now() - t0 < 30)
        usleep(20000);
    s = stats();
    CHECK(s.disk_writes == 2 && s.disk_writes_pending == 0);
    printf("a quiet save followed its build after %.1f s\n", tocl_program_now() - t0);

    /* The saved binaries are what the next lookup loads. */
    tocl_program_cache_drop_memory();
    tocl_program_stats_reset();
    CHECK(run_kernel(0, make_source("later_flushed", 3.0f), "later_flushed", 3.0f));
    CHECK(run_kernel(0, make_source("later_quiet", 4.0f), "later_quiet", 4.0f));
    CHECK(stats().disk_hits == 2 && stats().builds == 0);
    setenv("TORCH_OCL_CACHE_SAVE", "now", 1);
}

static void test_threads(void) {
    g_thread_src = make_source("threaded", 7.0f);
    tocl_program_stats_reset();
    pthread_t t[4];
    tocl_status st[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, thread_get, &st[i]);
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CHECK(st[i] == TOCL_OK);
    }
    tocl_program_stats s = stats();
    CHECK(s.builds == 1 && s.memory_hits == 3);
}

static void test_admin(void) {
    char dir[4096], path[4200];
    tocl_cache_dir(dir, sizeof dir);
    uint64_t files = 0, removed = 0;
    CHECK_OK(tocl_cache_info(&files, NULL));
    CHECK(files >= 4);
    /* A temp file from a process that died mid-write is stale after a while;
     * a fresh one may be a write in flight and is left alone. */
    snprintf(path, sizeof path, "%s/deadbeef.tmp.AAAAAA", dir);
    fclose(fopen(path, "w"));
    struct timeval old[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
    utimes(path, old);
    snprintf(path, sizeof path, "%s/cafef00d.tmp.BBBBBB", dir);
    fclose(fopen(path, "w"));
    CHECK_OK(tocl_cache_clear(&removed));
    CHECK(removed == files + 1);
    CHECK_OK(tocl_cache_info(&files, NULL));
    CHECK(files == 0);
    CHECK(access(path, F_OK) == 0);
    unlink(path);
    /* With no files on disk, programs still in memory keep working. */
    CHECK_OK(tocl_program_prepare(0, make_source("first", 1.0f), "", "first"));
}

int main(void) {
    snprintf(g_nonce, sizeof g_nonce, "%d_%ld", (int)getpid(), (long)time(NULL));
    /* The counts below expect a build's file on disk at once (test_save_later tests the default). */
    setenv("TORCH_OCL_CACHE_SAVE", "now", 1);
    test_hashes();
    test_cache_dir();
    CHECK_OK(tocl_cache_clear(NULL));
    if (tocl_device_count() < 1) {
        printf("no OpenCL device: skipping the device tests\n");
        TOCL_TEST_END();
    }
    test_memory_disk_timing();
    test_kernel_names_and_args();
    test_build_failure();
    test_driver_output_kept_off_stderr();
    test_injected_failure();
    test_two_devices();
    test_disable();
    test_threads();
    test_save_later();
    test_admin();
    tocl_program_cache_drop_memory();
    TOCL_TEST_END();
}
