/* disk_cache.c - the program cache's files: location, safe loading, atomic writes, admin. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "program/program_internal.h"

/* File layout, all integers little-endian:
 *   0  magic "TOCLBIN\0"          8 bytes
 *   8  format version            u32
 *  12  reserved (0)              u32
 *  16  payload length            u64
 *  24  payload checksum (XXH64)  u64
 *  32  key echo (lo, hi)         2 x u64: a file copied to another key's name is refused
 *  48  payload (CL_PROGRAM_BINARIES for one device)
 * A build the compiler refused is remembered the same way in <key>.fail,
 * magic "TOCLERR\0", its payload the error message with the build log, so
 * later processes report it without compiling again. */
#define HDR_BYTES 48
#define MAX_PAYLOAD ((uint64_t)1 << 30) /* no real program binary is this large */
#define CHECKSUM_SEED 0x636B73756D564531ULL
#define STALE_TEMP_SECONDS 600 /* older temp files belong to a process that died mid-write */

static const char k_magic[2][8] = {{'T', 'O', 'C', 'L', 'B', 'I', 'N', '\0'}, {'T', 'O', 'C', 'L', 'E', 'R', 'R', '\0'}};
static const char *const k_suffix[2] = {".bin", ".fail"};

static void put64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* $TORCH_OCL_CACHE_DIR, else $XDG_CACHE_HOME/torch_ocl, else ~/.cache/torch_ocl. */
static int resolve_path(char *buf, size_t cap) {
    const char *dir = tocl_env("TORCH_OCL_CACHE_DIR");
    if (dir)
        return snprintf(buf, cap, "%s", dir) < (int)cap ? 0 : -1;
    const char *xdg = tocl_env("XDG_CACHE_HOME");
    if (xdg && xdg[0] == '/') /* the XDG spec says relative values are ignored */
        return snprintf(buf, cap, "%s/torch_ocl", xdg) < (int)cap ? 0 : -1;
    const char *home = tocl_env("HOME");
    if (!home) {
        struct passwd pw, *res = NULL;
        char tmp[4096];
        if (getpwuid_r(getuid(), &pw, tmp, sizeof tmp, &res) == 0 && res)
            home = res->pw_dir;
    }
    if (!home)
        return -1;
    return snprintf(buf, cap, "%s/.cache/torch_ocl", home) < (int)cap ? 0 : -1;
}

static void mkdir_p(const char *path) {
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp)
        return;
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        mkdir(tmp, 0700); /* errors surface in the stat() check that follows */
        *p = '/';
    }
    mkdir(tmp, 0700);
}

static atomic_int g_unsafe_noted;

/* A symbolic link on the way to the cache is a place where someone else can
 * redirect it: refused when it is the cache directory itself, or when a
 * user other than this one (or root) owns it. A link the user made higher
 * up (~/.cache -> /data/cache) is the user's choice and is followed. */
static const char *symlink_problem(const char *dir, char *why, size_t cap) {
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", dir) >= (int)sizeof tmp)
        return "path too long";
    size_t n = strlen(tmp);
    while (n > 1 && tmp[n - 1] == '/')
        tmp[--n] = '\0';
    for (char *p = tmp + 1;; p++) {
        int last = *p == '\0';
        if (*p != '/' && !last)
            continue;
        char c = *p;
        *p = '\0';
        struct stat st;
        if (lstat(tmp, &st) == 0 && S_ISLNK(st.st_mode)) {
            if (last) {
                snprintf(why, cap, "it is a symbolic link; set TORCH_OCL_CACHE_DIR to the directory it names");
                return why;
            }
            if (st.st_uid != getuid() && st.st_uid != 0) {
                snprintf(why, cap, "%s on its path is a symbolic link owned by another user (uid %u)", tmp,
                         (unsigned)st.st_uid);
                return why;
            }
        }
        if (last)
            break;
        *p = c;
    }
    return NULL;
}

int tocl_disk_dir(char *dir, size_t cap) {
    if (tocl_env_flag("TORCH_OCL_CACHE_DISABLE") || resolve_path(dir, cap) != 0)
        return -1;
    mkdir_p(dir);
    struct stat st;
    char linkwhy[4400];
    const char *why = symlink_problem(dir, linkwhy, sizeof linkwhy);
    if (why)
        ;
    else if (stat(dir, &st) != 0)
        why = strerror(errno);
    else if (!S_ISDIR(st.st_mode))
        why = "not a directory";
    else if (st.st_uid != getuid())
        why = "not owned by the current user";
    else if (st.st_mode & (S_IWGRP | S_IWOTH))
        why = "writable by group or others";
    if (!why)
        return 0;
    /* Others could plant native code here, so the disk cache stays off. Say
     * so once: repeating it on every build would drown the user's output. */
    if (!atomic_exchange(&g_unsafe_noted, 1))
        tocl_warn("not using the program cache directory %s (%s); programs are rebuilt in every process. "
                  "Fix with: chmod 700 %s, or set TORCH_OCL_CACHE_DIR", dir, why, dir);
    return -1;
}

static void entry_path(char *buf, size_t cap, const char *dir, tocl_program_key key, tocl_disk_kind kind) {
    char hex[TOCL_PROGRAM_KEY_HEX];
    tocl_program_key_hex(key, hex);
    snprintf(buf, cap, "%s/%s%s", dir, hex, k_suffix[kind]);
}

/* Whatever is at path goes: a file, or an empty directory planted in its
 * place (a directory with contents stays, and the write beside it fails). */
static void remove_entry(const char *path) {
    if (unlink(path) != 0 && (errno == EISDIR || errno == EPERM))
        rmdir(path);
}

void tocl_disk_remove(const char *dir, tocl_program_key key, tocl_disk_kind kind) {
    char path[4200];
    entry_path(path, sizeof path, dir, key, kind);
    remove_entry(path);
}

static int read_all(int fd, unsigned char *buf, size_t len) {
    size_t done = 0;
    while (done < len) {
        ssize_t n = read(fd, buf + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        done += (size_t)n;
    }
    return 0;
}

static tocl_disk_result reject(const char *path, int fd, unsigned char *buf, char *why, size_t cap,
                               const char *reason) {
    if (why)
        snprintf(why, cap, "%s", reason);
    if (fd >= 0)
        close(fd);
    free(buf);
    remove_entry(path); /* the rebuild writes a fresh file; until then nobody trusts this one */
    return TOCL_DISK_REJECT;
}

tocl_disk_result tocl_disk_load(const char *dir, tocl_program_key key, tocl_disk_kind kind, unsigned char **bin,
                                size_t *len, char *why, size_t why_cap) {
    char path[4200];
    entry_path(path, sizeof path, dir, key, kind);
    /* O_NOFOLLOW: a symlink could point at anything; O_NONBLOCK: a planted
     * FIFO must not hang the process before fstat says it is not a file. */
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT)
            return TOCL_DISK_MISS;
        return reject(path, -1, NULL, why, why_cap, errno == ELOOP ? "is a symbolic link" : strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0)
        return reject(path, fd, NULL, why, why_cap, "fstat failed");
    if (!S_ISREG(st.st_mode))
        return reject(path, fd, NULL, why, why_cap, "not a regular file");
    if (st.st_uid != getuid())
        return reject(path, fd, NULL, why, why_cap, "not owned by the current user");
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return reject(path, fd, NULL, why, why_cap, "writable by group or others");
    if (st.st_size < HDR_BYTES || (uint64_t)st.st_size > MAX_PAYLOAD + HDR_BYTES)
        return reject(path, fd, NULL, why, why_cap, "truncated or oversized");
    size_t total = (size_t)st.st_size;
    unsigned char *buf = malloc(total);
    if (!buf || read_all(fd, buf, total) != 0)
        return reject(path, fd, buf, why, why_cap, "read failed");
    close(fd);
    fd = -1;
    uint64_t payload = get64(buf + 16);
    if (memcmp(buf, k_magic[kind], 8) != 0)
        return reject(path, fd, buf, why, why_cap, "bad magic");
    if (get64(buf + 8) != (uint64_t)TOCL_CACHE_FORMAT_VERSION) /* version and reserved word */
        return reject(path, fd, buf, why, why_cap, "other format version");
    if (payload != total - HDR_BYTES)
        return reject(path, fd, buf, why, why_cap, "length mismatch (truncated)");
    if (get64(buf + 32) != key.lo || get64(buf + 40) != key.hi)
        return reject(path, fd, buf, why, why_cap, "key echo does not match the file name");
    if (tocl_hash_xxh64(buf + HDR_BYTES, payload, CHECKSUM_SEED) != get64(buf + 24))
        return reject(path, fd, buf, why, why_cap, "checksum mismatch");
    /* Hand back the payload in the same allocation; the caller frees *bin. */
    memmove(buf, buf + HDR_BYTES, payload);
    *bin = buf;
    *len = (size_t)payload;
    return TOCL_DISK_HIT;
}

static int write_all(int fd, const unsigned char *p, size_t len) {
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int tocl_disk_store(const char *dir, tocl_program_key key, tocl_disk_kind kind, const unsigned char *bin,
                    size_t len, char *why, size_t why_cap) {
    char hex[TOCL_PROGRAM_KEY_HEX], tmp[4200], path[4200];
    tocl_program_key_hex(key, hex);
    snprintf(tmp, sizeof tmp, "%s/%s.tmp.XXXXXX", dir, hex);
    entry_path(path, sizeof path, dir, key, kind);
    unsigned char hdr[HDR_BYTES];
    memcpy(hdr, k_magic[kind], 8);
    put64(hdr + 8, (uint64_t)TOCL_CACHE_FORMAT_VERSION);
    put64(hdr + 16, (uint64_t)len);
    put64(hdr + 24, tocl_hash_xxh64(bin, len, CHECKSUM_SEED));
    put64(hdr + 32, key.lo);
    put64(hdr + 40, key.hi);
    /* A unique temp file in the same directory, then rename(): readers see
     * either no file or a whole one, and when two processes race the last
     * rename wins with a file as valid as the other. No fsync: a file torn by
     * a power cut fails the length or checksum test and is rebuilt. */
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(why, why_cap, "mkstemp in %s: %s", dir, strerror(errno));
        return -1;
    }
    int ok = fchmod(fd, 0600) == 0 && write_all(fd, hdr, sizeof hdr) == 0 && write_all(fd, bin, len) == 0;
    if (close(fd) != 0)
        ok = 0;
    if (!ok || rename(tmp, path) != 0) {
        snprintf(why, why_cap, "writing %s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

/* Walk the cache directory: count *.bin and *.fail files (and remove them if `clear`);
 * with `clear`, also remove temp files left by processes that died. */
static tocl_status walk(int clear, uint64_t *files, uint64_t *bytes) {
    char dir[4096];
    if (resolve_path(dir, sizeof dir) != 0)
        return tocl_fail(TOCL_E_IO, "cannot locate the program cache: set TORCH_OCL_CACHE_DIR or HOME");
    uint64_t n = 0, b = 0;
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT)
            goto done; /* no cache yet is an empty cache */
        return tocl_fail(TOCL_E_IO, "cannot open the program cache %s: %s", dir, strerror(errno));
    }
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d))) {
        int is_bin = ends_with(e->d_name, ".bin") || ends_with(e->d_name, ".fail"), is_tmp = strstr(e->d_name, ".tmp.") != NULL;
        if (!is_bin && !is_tmp)
            continue;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) != 0)
            continue;
        if (is_tmp && (!clear || now - st.st_mtime < STALE_TEMP_SECONDS))
            continue; /* a fresh temp file may be another process's write in flight */
        if (clear) {
            if (unlink(path) == 0)
                n++;
        } else {
            n++;
            b += S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
        }
    }
    closedir(d);
done:
    if (files)
        *files = n;
    if (bytes)
        *bytes = b;
    return TOCL_OK;
}

tocl_status tocl_cache_dir(char *buf, size_t cap) {
    if (!buf || cap == 0)
        return tocl_fail(TOCL_E_INVALID, "tocl_cache_dir: buf is NULL or cap is 0");
    char dir[4096];
    if (resolve_path(dir, sizeof dir) != 0)
        return tocl_fail(TOCL_E_IO, "cannot locate the program cache: set TORCH_OCL_CACHE_DIR or HOME");
    if (strlen(dir) >= cap)
        return tocl_fail(TOCL_E_INVALID, "tocl_cache_dir: buffer of %zu bytes is too small for %s", cap, dir);
    memcpy(buf, dir, strlen(dir) + 1);
    return TOCL_OK;
}

tocl_status tocl_cache_info(uint64_t *files, uint64_t *bytes) { return walk(0, files, bytes); }

tocl_status tocl_cache_clear(uint64_t *removed_files) { return walk(1, removed_files, NULL); }
