/* cache.c - the in-memory program table, lookup order (memory, disk, build), stats and kernels. */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program/kernels.h"
#include "program/program_internal.h"

/* One entry per (device index, key). Devices are separate even when their
 * names match: a cl_program is built for one device. An entry with prog ==
 * NULL and fail == NULL is being built by some thread; others wait for it
 * instead of compiling the same program again, and the global lock is never
 * held during a build (hundreds of ms) so unrelated lookups stay fast. An
 * entry with `fail` is a source the compiler refused: every later lookup
 * gets the same error without compiling again (as from a .fail file). */
typedef struct entry {
    struct entry *next;
    int dev;
    tocl_program_key key;
    cl_program prog;
    char *fail; /* the error message of a remembered compile error */
} entry;

#define NBUCKETS 1024 /* programs number in the hundreds; chains stay short */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_built = PTHREAD_COND_INITIALIZER;
static entry *g_table[NBUCKETS];
static tocl_program_stats g_stats;

static entry **bucket(int dev, tocl_program_key key) {
    return &g_table[(key.lo ^ (uint64_t)(unsigned)dev * 0x9E3779B97F4A7C15ULL) & (NBUCKETS - 1)];
}

static entry *find(int dev, tocl_program_key key) {
    for (entry *e = *bucket(dev, key); e; e = e->next)
        if (e->dev == dev && e->key.lo == key.lo && e->key.hi == key.hi)
            return e;
    return NULL;
}

static void unlink_entry(entry *target) {
    for (entry **p = bucket(target->dev, target->key); *p; p = &(*p)->next)
        if (*p == target) {
            *p = target->next;
            return;
        }
}


static void count(uint64_t *counter) {
    pthread_mutex_lock(&g_lock);
    (*counter)++;
    pthread_mutex_unlock(&g_lock);
}

/* Said once per process: every later program would say it again. */
static atomic_int g_unwritable_noted;

static void note_unwritable(const char *dir, const char *why) {
    if (!atomic_exchange(&g_unwritable_noted, 1))
        tocl_warn("cannot write to the program cache %s (%s); programs are kept in memory for this process and "
                  "built again by the next one", dir, why);
}

/* The message a remembered failure is reported with. */
static tocl_status known_failure(const char *msg, const char *where) {
    return tocl_fail(TOCL_E_BUILD, "%s\n(a known build failure, remembered %s; `python -m torch_ocl cache clear` "
                     "forgets it)", msg, where);
}

/* Writing a built program to disk. A failed write costs only a future rebuild. */
static void save_now(int dev, tocl_program_key key, cl_program prog, const char *dir) {
    char hex[TOCL_PROGRAM_KEY_HEX], why[512];
    tocl_program_key_hex(key, hex);
    unsigned char *bin = NULL;
    size_t len = 0;
    if (tocl_program_binary(prog, tocl_dev_id(dev), &bin, &len) != TOCL_OK) {
        snprintf(why, sizeof why, "%s", tocl_last_error());
    } else if (tocl_disk_store(dir, key, TOCL_DISK_BINARY, bin, len, why, sizeof why) == 0) {
        count(&g_stats.disk_writes);
        free(bin);
        tocl_log(TOCL_LOG_CACHE, "wrote program %s to the disk cache", hex);
        return;
    } else {
        note_unwritable(dir, why);
    }
    free(bin);
    tocl_log(TOCL_LOG_CACHE, "could not cache program %s on disk: %s", hex, why);
}

/* A save for the builder's lower lane: the program is retained until it runs. */
typedef struct save_job {
    int dev;
    tocl_program_key key;
    cl_program prog;
    char dir[4096];
} save_job;

static atomic_int g_saves_pending;

static void save_job_run(const void *arg) {
    const save_job *j = arg;
    save_now(j->dev, j->key, j->prog, j->dir);
    clReleaseProgram(j->prog);
    atomic_fetch_sub(&g_saves_pending, 1);
}

/* Later on CPU devices: there the driver compiles every kernel of the
 * program again to produce its binary (PoCL: 12 of the demo's 19 s first
 * step), a cost only the next process gains from. Elsewhere the binary is
 * already made and saving costs a file write. TORCH_OCL_CACHE_SAVE=now|later
 * overrides. */
static int save_later(int dev) {
    const char *v = tocl_env("TORCH_OCL_CACHE_SAVE");
    if (v && !strcmp(v, "now"))
        return 0;
    if (v && !strcmp(v, "later"))
        return 1;
    return tocl_dev_props(dev)->kind == TOCL_DEVICE_CPU;
}

static void save(int dev, tocl_program_key key, cl_program prog, const char *dir) {
    if (save_later(dev)) {
        save_job j;
        memset(&j, 0, sizeof j);
        j.dev = dev;
        j.key = key;
        j.prog = prog;
        snprintf(j.dir, sizeof j.dir, "%s", dir);
        /* Counted and retained before the builder can see it; undone if it was not queued. */
        atomic_fetch_add(&g_saves_pending, 1);
        clRetainProgram(prog);
        size_t used = offsetof(save_job, dir) + strlen(j.dir) + 1;
        int queued = tocl_build_save_later(save_job_run, &j, used, key.lo ^ (uint64_t)(unsigned)dev);
        if (queued == 1)
            return;
        clReleaseProgram(prog);
        atomic_fetch_sub(&g_saves_pending, 1);
        if (queued == 2) /* already queued: that job writes it */
            return;
    }
    save_now(dev, key, prog, dir);
}

void tocl_program_cache_flush(void) { tocl_builder_flush_saves(); }

/* Disk, then source. Runs without the lock; only the counters take it.
 * On a compile error *fail gets the message to remember (malloc'd). */
static tocl_status load_or_build(int dev, tocl_program_key key, const char *source, const char *opts,
                                 cl_program *out, char **fail) {
    const char *devname = tocl_dev_props(dev)->name;
    char dir[4096], hex[TOCL_PROGRAM_KEY_HEX], why[512];
    tocl_program_key_hex(key, hex);
    int disk = tocl_disk_dir(dir, sizeof dir) == 0;
    if (disk) {
        unsigned char *bin = NULL;
        size_t len = 0;
        double t0 = tocl_program_now();
        tocl_disk_result r = tocl_disk_load(dir, key, TOCL_DISK_BINARY, &bin, &len, why, sizeof why);
        if (r == TOCL_DISK_HIT) {
            tocl_status s = tocl_build_from_binary(dev, bin, len, opts, out);
            free(bin);
            if (s == TOCL_OK) {
                pthread_mutex_lock(&g_lock);
                g_stats.disk_hits++;
                pthread_mutex_unlock(&g_lock);
                tocl_log(TOCL_LOG_BUILDS, "loaded program %s for %s from the disk cache in %.4f s", hex, devname,
                         tocl_program_now() - t0);
                return TOCL_OK;
            }
            /* Valid on paper but the driver says no (e.g. a driver update
             * that kept its version string): same treatment as corruption. */
            snprintf(why, sizeof why, "%s", tocl_last_error());
            tocl_disk_remove(dir, key, TOCL_DISK_BINARY);
            r = TOCL_DISK_REJECT;
        }
        if (r == TOCL_DISK_REJECT) {
            count(&g_stats.disk_rejects);
            /* Always said: rare, and a planted or damaged file is worth knowing about. */
            tocl_warn("rejected program cache file %s/%s.bin (%s); rebuilding it", dir, hex, why);
        }
        /* A source an earlier process could not compile. */
        r = tocl_disk_load(dir, key, TOCL_DISK_FAILURE, &bin, &len, why, sizeof why);
        if (r == TOCL_DISK_HIT) {
            char *msg = realloc(bin, len + 1);
            if (msg) {
                msg[len] = '\0';
                count(&g_stats.known_failures);
                tocl_log(TOCL_LOG_BUILDS, "program %s for %s failed to build in an earlier process", hex, devname);
                char where[4200];
                snprintf(where, sizeof where, "in %s/%s.fail", dir, hex);
                tocl_status s = known_failure(msg, where);
                *fail = msg;
                return s;
            }
            free(bin);
        } else if (r == TOCL_DISK_REJECT) {
            count(&g_stats.disk_rejects);
            tocl_warn("rejected program cache file %s/%s.fail (%s); building the program again", dir, hex, why);
        }
    }
    double t0 = tocl_program_now();
    tocl_build_outcome outcome;
    tocl_builder_note_build(1);
    tocl_status bs = tocl_build_from_source(dev, source, opts, out, &outcome);
    tocl_builder_note_build(0);
    if (bs != TOCL_OK) {
        count(&g_stats.build_failures);
        tocl_log(TOCL_LOG_BUILDS, "program %s for %s failed to build", hex, devname);
        if (outcome != TOCL_BUILD_COMPILE_ERROR)
            return bs; /* may pass next time (an injected failure always does) */
        *fail = strdup(tocl_last_error());
        if (disk && *fail && tocl_disk_store(dir, key, TOCL_DISK_FAILURE, (const unsigned char *)*fail,
                                             strlen(*fail), why, sizeof why) != 0)
            note_unwritable(dir, why);
        return bs;
    }
    double dt = tocl_program_now() - t0;
    pthread_mutex_lock(&g_lock);
    g_stats.builds++;
    g_stats.build_seconds += dt;
    pthread_mutex_unlock(&g_lock);
    tocl_log(TOCL_LOG_BUILDS, "built program %s for %s in %.2f s", hex, devname, dt);
    tocl_build_notice(devname, dt, disk && !atomic_load(&g_unwritable_noted) ? dir : NULL);
    if (disk)
        save(dev, key, *out, dir);
    return TOCL_OK;
}

/* The returned program is owned by the cache (callers do not release it)
 * and stays valid until tocl_program_cache_drop_memory(); kernels made from
 * it hold their own reference and outlive a drop. */
tocl_status tocl_program_get(int dev, const char *source, const char *options, cl_program *out) {
    if (!source || !out)
        return tocl_fail(TOCL_E_INVALID, "tocl_program_get: source and out must not be NULL");
    TOCL_TRY(tocl_device_check(dev));
    const char *opts = options ? options : "";
    tocl_program_key key = tocl_program_key_make(source, opts, tocl_dev_props(dev));

    pthread_mutex_lock(&g_lock);
    entry *e;
    for (;;) {
        e = find(dev, key);
        if (!e)
            break;
        if (e->prog) {
            g_stats.memory_hits++;
            *out = e->prog;
            pthread_mutex_unlock(&g_lock);
            return TOCL_OK;
        }
        if (e->fail) {
            g_stats.known_failures++;
            tocl_status s = known_failure(e->fail, "in this process");
            pthread_mutex_unlock(&g_lock);
            return s;
        }
        /* Another thread is building it. If that build fails its entry is
         * removed and this thread builds again, so it gets the error message
         * on its own thread (messages are thread-local). */
        pthread_cond_wait(&g_built, &g_lock);
    }
    e = calloc(1, sizeof *e);
    if (!e) {
        pthread_mutex_unlock(&g_lock);
        return tocl_fail(TOCL_E_OOM, "out of host memory for a program cache entry");
    }
    e->dev = dev;
    e->key = key;
    entry **b = bucket(dev, key);
    e->next = *b;
    *b = e;
    pthread_mutex_unlock(&g_lock);

    cl_program prog = NULL;
    char *fail = NULL;
    tocl_status s = load_or_build(dev, key, source, opts, &prog, &fail);

    pthread_mutex_lock(&g_lock);
    if (s == TOCL_OK) {
        e->prog = prog;
        *out = prog;
    } else if (fail) {
        e->fail = fail; /* kept: the same source fails the same way */
    } else {
        unlink_entry(e);
        free(e);
    }
    pthread_cond_broadcast(&g_built);
    pthread_mutex_unlock(&g_lock);
    return s;
}

/* CL_PROGRAM_KERNEL_NAMES ("a;b;c") for an error message, or "?" if unknown. */
static void kernel_names(cl_program prog, char *buf, size_t cap) {
    if (clGetProgramInfo(prog, CL_PROGRAM_KERNEL_NAMES, cap, buf, NULL) != CL_SUCCESS)
        snprintf(buf, cap, "?");
    buf[cap - 1] = '\0';
}

tocl_status tocl_kernel_create(int dev, const char *source, const char *options, const char *name,
                               cl_kernel *out) {
    if (!name || !out)
        return tocl_fail(TOCL_E_INVALID, "tocl_kernel_create: name and out must not be NULL");
    cl_program prog;
    TOCL_TRY(tocl_program_get(dev, source, options, &prog));
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(prog, name, &err);
    if (err == CL_INVALID_KERNEL_NAME) {
        char names[1024];
        kernel_names(prog, names, sizeof names);
        return tocl_fail(TOCL_E_INVALID, "no kernel named \"%s\" in the program (its kernels: %s)", name,
                         names);
    }
    TOCL_CL_TRY(err, "clCreateKernel");
    *out = k;
    return TOCL_OK;
}

tocl_status tocl_program_prepare(int dev, const char *source, const char *options, const char *kernel_name) {
    cl_kernel k;
    TOCL_TRY(tocl_kernel_create(dev, source, options, kernel_name, &k));
    clReleaseKernel(k);
    return TOCL_OK;
}

tocl_status tocl_program_stats_get(tocl_program_stats *out) {
    if (!out)
        return tocl_fail(TOCL_E_INVALID, "tocl_program_stats_get: out must not be NULL");
    pthread_mutex_lock(&g_lock);
    *out = g_stats;
    pthread_mutex_unlock(&g_lock);
    out->disk_writes_pending = (uint64_t)atomic_load(&g_saves_pending);
    tocl_lean_header_stats(&out->lean_builds, &out->lean_fallbacks, 0);
    return TOCL_OK;
}

void tocl_program_stats_reset(void) {
    pthread_mutex_lock(&g_lock);
    memset(&g_stats, 0, sizeof g_stats);
    pthread_mutex_unlock(&g_lock);
    uint64_t ignored[2];
    tocl_lean_header_stats(&ignored[0], &ignored[1], 1);
}

void tocl_program_cache_drop_memory(void) {
    /* Detach built entries under the lock, release them outside it.
     * Entries still being built belong to their builders and stay. */
    entry *dropped = NULL;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < NBUCKETS; i++) {
        entry **p = &g_table[i];
        while (*p) {
            entry *e = *p;
            if (e->prog || e->fail) {
                *p = e->next;
                e->next = dropped;
                dropped = e;
            } else {
                p = &e->next;
            }
        }
    }
    pthread_mutex_unlock(&g_lock);
    while (dropped) {
        entry *next = dropped->next;
        if (dropped->prog)
            clReleaseProgram(dropped->prog);
        free(dropped->fail);
        free(dropped);
        dropped = next;
    }
}
