/* test_program_disk.c - the disk cache refuses damaged, foreign and unsafe files and rebuilds them. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "program/program_internal.h"
#include "tocl_test.h"

static char g_nonce[64], g_dir[4096];

static const char *make_source(const char *kernel) {
    static char bufs[32][512];
    static int next;
    char *b = bufs[next++ % 32];
    snprintf(b, 512, "/* %s */\n__kernel void %s(__global int *x) { x[get_global_id(0)] += 1; }\n", g_nonce,
             kernel);
    return b;
}

static void path_of(const char *src, char *out, size_t cap) {
    char hex[TOCL_PROGRAM_KEY_HEX];
    tocl_program_key_hex(tocl_program_key_make(src, "", tocl_dev_props(0)), hex);
    snprintf(out, cap, "%s/%s.bin", g_dir, hex);
}

static long file_size(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0 ? (long)st.st_size : -1;
}

static tocl_program_stats stats(void) {
    tocl_program_stats s;
    tocl_program_stats_get(&s);
    return s;
}

/* Build `kernel` so its file exists, drop memory, let `tamper` damage the
 * file, then look it up again: it must be rejected (no disk hit), rebuilt,
 * written afresh, and the fresh file must give a disk hit next time. */
typedef void (*tamper_fn)(const char *path, const char *other_path);

static void expect_reject(const char *what, const char *kernel, tamper_fn tamper) {
    const char *src = make_source(kernel), *other = make_source("other_program");
    char path[4200], other_path[4200];
    path_of(src, path, sizeof path);
    path_of(other, other_path, sizeof other_path);
    CHECK_OK(tocl_program_prepare(0, src, "", kernel));
    CHECK_OK(tocl_program_prepare(0, other, "", "other_program"));
    CHECK(file_size(path) > 48);
    tocl_program_cache_drop_memory();
    tamper(path, other_path);
    tocl_program_stats_reset();
    CHECK_OK(tocl_program_prepare(0, src, "", kernel));
    tocl_program_stats s = stats();
    int ok = s.disk_rejects == 1 && s.disk_hits == 0 && s.builds == 1 && s.disk_writes == 1;
    CHECK(ok);
    if (!ok)
        fprintf(stderr, "  case %s: rejects %llu hits %llu builds %llu writes %llu\n", what,
                (unsigned long long)s.disk_rejects, (unsigned long long)s.disk_hits,
                (unsigned long long)s.builds, (unsigned long long)s.disk_writes);
    struct stat st;
    CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 077) == 0);
    tocl_program_cache_drop_memory();
    tocl_program_stats_reset();
    CHECK_OK(tocl_program_prepare(0, src, "", kernel));
    CHECK(stats().disk_hits == 1 && stats().builds == 0);
    char real[4300];
    snprintf(real, sizeof real, "%s.real", path); /* left by the symlink case */
    unlink(real);
}

static void flip_payload_byte(const char *path, const char *other) {
    int fd = open(path, O_RDWR);
    long off = 48 + (file_size(path) - 48) / 2;
    unsigned char c;
    pread(fd, &c, 1, off);
    c ^= 0x5A;
    pwrite(fd, &c, 1, off);
    close(fd);
}

static void flip_magic(const char *path, const char *other) {
    int fd = open(path, O_RDWR);
    pwrite(fd, "X", 1, 0);
    close(fd);
}

static void truncate_half(const char *path, const char *other) { truncate(path, file_size(path) / 2); }
static void truncate_header(const char *path, const char *other) { truncate(path, 10); }
static void truncate_empty(const char *path, const char *other) { truncate(path, 0); }

static void copy_other(const char *path, const char *other) {
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", other, path);
    CHECK(system(cmd) == 0);
}

static void world_writable(const char *path, const char *other) { chmod(path, 0666); }
static void group_writable(const char *path, const char *other) { chmod(path, 0620); }
static void foreign_owner(const char *path, const char *other) { chown(path, 12345, 12345); }

static void symlink_to_copy(const char *path, const char *other) {
    char real[4300];
    snprintf(real, sizeof real, "%s.real", path);
    rename(path, real);
    symlink(real, path);
}

static void fifo(const char *path, const char *other) {
    unlink(path);
    mkfifo(path, 0600); /* opening this blocking would hang the process */
}

/* A well-formed file (right header, checksum and key) whose payload the
 * driver cannot load: caught by clCreateProgramWithBinary/clBuildProgram. */
static void garbage_payload(const char *path, const char *other) {
    char dir[4096], hex[64];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    snprintf(hex, sizeof hex, "%.32s", slash + 1);
    tocl_program_key key;
    key.hi = strtoull((char[17]){hex[0], hex[1], hex[2], hex[3], hex[4], hex[5], hex[6], hex[7], hex[8], hex[9],
                                 hex[10], hex[11], hex[12], hex[13], hex[14], hex[15], 0},
                      NULL, 16);
    key.lo = strtoull(hex + 16, NULL, 16);
    unsigned char junk[256];
    for (int i = 0; i < 256; i++)
        junk[i] = (unsigned char)(i * 37 + 11);
    char why[256];
    CHECK(tocl_disk_store(dir, key, TOCL_DISK_BINARY, junk, sizeof junk, why, sizeof why) == 0);
}

static void test_accepts_readable(void) {
    /* Readable by others is fine (0644 is the usual umask result); only
     * writable-by-others is a planting risk. */
    const char *src = make_source("readable");
    char path[4200];
    path_of(src, path, sizeof path);
    CHECK_OK(tocl_program_prepare(0, src, "", "readable"));
    tocl_program_cache_drop_memory();
    chmod(path, 0644);
    tocl_program_stats_reset();
    CHECK_OK(tocl_program_prepare(0, src, "", "readable"));
    CHECK(stats().disk_hits == 1 && stats().disk_rejects == 0);
}

static void test_unsafe_dir(void) {
    /* A directory others can write to is not used at all (and said once). */
    const char *src = make_source("unsafe_dir");
    char path[4200];
    path_of(src, path, sizeof path);
    chmod(g_dir, 0777);
    tocl_program_stats_reset();
    CHECK_OK(tocl_program_prepare(0, src, "", "unsafe_dir"));
    CHECK(stats().builds == 1 && stats().disk_writes == 0);
    CHECK(file_size(path) < 0);
    chmod(g_dir, 0700);
    if (getuid() == 0) {
        chown(g_dir, 12345, 12345);
        tocl_program_cache_drop_memory();
        CHECK_OK(tocl_program_prepare(0, src, "", "unsafe_dir"));
        CHECK(stats().builds == 2 && stats().disk_writes == 0);
        chown(g_dir, 0, 0);
    }
    tocl_program_cache_drop_memory();
    tocl_program_stats_reset();
    CHECK_OK(tocl_program_prepare(0, src, "", "unsafe_dir"));
    CHECK(stats().disk_writes == 1);
}

static void empty_directory(const char *path, const char *other) {
    unlink(path);
    mkdir(path, 0700);
}

/* A directory with something in it where the file was: rejected and
 * rebuilt every time (it cannot be replaced), never loaded. */
static void test_nonempty_directory(void) {
    const char *src = make_source("k_dir");
    char path[4200], inner[4300];
    path_of(src, path, sizeof path);
    CHECK_OK(tocl_program_prepare(0, src, "", "k_dir"));
    tocl_program_cache_drop_memory();
    unlink(path);
    mkdir(path, 0700);
    snprintf(inner, sizeof inner, "%s/x", path);
    close(open(inner, O_CREAT | O_WRONLY, 0600));
    for (int round = 1; round <= 2; round++) {
        tocl_program_stats_reset();
        CHECK_OK(tocl_program_prepare(0, src, "", "k_dir"));
        CHECK(stats().disk_rejects == 1 && stats().builds == 1 && stats().disk_hits == 0 && stats().disk_writes == 0);
        tocl_program_cache_drop_memory();
    }
    unlink(inner);
    rmdir(path);
}

/* The path of <other>.fail for the source of `other`. */
static void fail_path_of(const char *src, char *out, size_t cap) {
    char hex[TOCL_PROGRAM_KEY_HEX];
    tocl_program_key_hex(tocl_program_key_make(src, "", tocl_dev_props(0)), hex);
    snprintf(out, cap, "%s/%s.fail", g_dir, hex);
}

/* A remembered failure is a file like the others: one planted by another
 * user, or writable by others, is not believed (the program builds). */
static void test_planted_failure(void) {
    const char *bad = "/* planted */ __kernel void p(__global int *x) { x[0] = nope; }\n";
    char bad_fail[4200];
    fail_path_of(bad, bad_fail, sizeof bad_fail);
    tocl_program_stats_reset();
    CHECK_STATUS(tocl_program_prepare(0, bad, "", "p"), TOCL_E_BUILD);
    struct stat st;
    CHECK(lstat(bad_fail, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 077) == 0);
    for (int c = 0; c < 2; c++) {
        if (c == 1 && getuid() != 0)
            break; /* only root can give a file away */
        const char *good = make_source(c ? "k_fail_owner" : "k_fail_mode");
        char good_fail[4200];
        fail_path_of(good, good_fail, sizeof good_fail);
        char cmd[9000];
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", bad_fail, good_fail);
        CHECK(system(cmd) == 0);
        if (c)
            chown(good_fail, 12345, 12345);
        else
            chmod(good_fail, 0666);
        tocl_program_cache_drop_memory();
        tocl_program_stats_reset();
        CHECK_OK(tocl_program_prepare(0, good, "", c ? "k_fail_owner" : "k_fail_mode"));
        CHECK(stats().disk_rejects == 1 && stats().known_failures == 0 && stats().builds == 1);
        CHECK(lstat(good_fail, &st) != 0); /* removed */
    }
    /* The genuine one is believed: no build. */
    tocl_program_cache_drop_memory();
    tocl_program_stats_reset();
    CHECK_STATUS(tocl_program_prepare(0, bad, "", "p"), TOCL_E_BUILD);
    CHECK(stats().known_failures == 1 && stats().build_failures == 0);
}

/* Symbolic links on the cache path: the cache directory itself as a link,
 * or a link on its path owned by another user, turn the disk cache off. A
 * link the user owns higher up is followed. */
static void test_symlinks(void) {
    char base[4200], link[4300], sub[4400], ownlink[4300];
    snprintf(base, sizeof base, "%s.links", g_dir);
    mkdir(base, 0700);
    snprintf(link, sizeof link, "%s/cache_link", base);
    unlink(link);
    CHECK(symlink(g_dir, link) == 0);
    const char *old = getenv("TORCH_OCL_CACHE_DIR");
    char saved[4200];
    snprintf(saved, sizeof saved, "%s", old ? old : "");
    const char *src = make_source("k_via_link");
    setenv("TORCH_OCL_CACHE_DIR", link, 1);
    tocl_program_stats_reset();
    CHECK_OK(tocl_program_prepare(0, src, "", "k_via_link"));
    CHECK(stats().builds == 1 && stats().disk_writes == 0 && stats().disk_hits == 0);
    /* A link to the directory holding the cache, owned by the user: used. */
    snprintf(ownlink, sizeof ownlink, "%s/parent_link", base);
    unlink(ownlink);
    char parent[4200];
    snprintf(parent, sizeof parent, "%s", g_dir);
    char *slash = strrchr(parent, '/');
    *slash = '\0';
    CHECK(symlink(parent, ownlink) == 0);
    snprintf(sub, sizeof sub, "%s/%s", ownlink, slash + 1);
    setenv("TORCH_OCL_CACHE_DIR", sub, 1);
    tocl_program_cache_drop_memory();
    tocl_program_stats_reset();
    CHECK_OK(tocl_program_prepare(0, src, "", "k_via_link"));
    CHECK(stats().builds == 1 && stats().disk_writes == 1);
    if (getuid() == 0) { /* the same link owned by someone else: refused */
        CHECK(lchown(ownlink, 12345, 12345) == 0);
        tocl_program_cache_drop_memory();
        tocl_program_stats_reset();
        CHECK_OK(tocl_program_prepare(0, src, "", "k_via_link"));
        CHECK(stats().builds == 1 && stats().disk_hits == 0 && stats().disk_rejects == 0);
    }
    setenv("TORCH_OCL_CACHE_DIR", saved, 1);
    tocl_program_cache_drop_memory();
    tocl_program_stats_reset();
    CHECK_OK(tocl_program_prepare(0, src, "", "k_via_link")); /* the real path: the file written above */
    CHECK(stats().disk_hits == 1 && stats().builds == 0);
    unlink(link);
    unlink(ownlink);
    rmdir(base);
}

int main(void) {
    /* The counts below expect a build's file on disk at once (test_program.c tests saving later). */
    setenv("TORCH_OCL_CACHE_SAVE", "now", 1);
    snprintf(g_nonce, sizeof g_nonce, "disk %d-%ld", (int)getpid(), (long)time(NULL));
    CHECK_OK(tocl_cache_dir(g_dir, sizeof g_dir));
    CHECK_OK(tocl_cache_clear(NULL));
    if (tocl_device_count() < 1) {
        printf("no OpenCL device: skipping\n");
        TOCL_TEST_END();
    }
    expect_reject("flipped payload byte", "k_flip", flip_payload_byte);
    expect_reject("bad magic", "k_magic", flip_magic);
    expect_reject("truncated to half", "k_half", truncate_half);
    expect_reject("truncated inside the header", "k_hdr", truncate_header);
    expect_reject("empty file", "k_empty", truncate_empty);
    expect_reject("another key's file", "k_copy", copy_other);
    expect_reject("mode 0666", "k_0666", world_writable);
    expect_reject("mode 0620", "k_0620", group_writable);
    expect_reject("symbolic link", "k_link", symlink_to_copy);
    expect_reject("fifo", "k_fifo", fifo);
    expect_reject("payload the driver refuses", "k_junk", garbage_payload);
    if (getuid() == 0) /* only root can give a file away */
        expect_reject("owned by another user", "k_owner", foreign_owner);
    expect_reject("replaced by an empty directory", "k_emptydir", empty_directory);
    test_nonempty_directory();
    test_planted_failure();
    test_symlinks();
    test_accepts_readable();
    test_unsafe_dir();
    tocl_program_cache_drop_memory();
    TOCL_TEST_END();
}
