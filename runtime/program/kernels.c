/* kernels.c - the one cache of kernel objects: find, build outside the
 * lock, insert unless another thread won the race (then keep the winner),
 * and remember builds that failed on the background thread. */
#include <stdlib.h>
#include <string.h>

#include "program/kernels.h"

#define BUCKETS 512

static tocl_kernel_entry *buckets[BUCKETS];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

uint64_t tocl_kernels_hash_bytes(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    if (!h)
        h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static int same_key(const tocl_kernel_kind *kind, const void *a, const void *b) {
    return kind->equal ? kind->equal(a, b) : !memcmp(a, b, kind->key_size);
}

/* Under cache_lock. */
static tocl_kernel_entry *lookup(const tocl_kernel_kind *kind, int dev, const void *key, uint64_t hash) {
    for (tocl_kernel_entry *e = buckets[hash % BUCKETS]; e; e = e->next)
        if (e->hash == hash && e->kind == kind && e->dev == dev && same_key(kind, e->key, key))
            return e;
    return NULL;
}

tocl_kernel_entry *tocl_kernels_find(tocl_kernel_kind *kind, int dev, const void *key, uint64_t hash) {
    pthread_mutex_lock(&cache_lock);
    tocl_kernel_entry *e = lookup(kind, dev, key, hash);
    pthread_mutex_unlock(&cache_lock);
    return e;
}

/* A new entry holding a copy of key and `kernel` (NULL for a failure). */
static tocl_kernel_entry *entry_new(tocl_kernel_kind *kind, int dev, const void *key, uint64_t hash,
                                    cl_kernel kernel) {
    size_t head = (sizeof(tocl_kernel_entry) + _Alignof(max_align_t) - 1) / _Alignof(max_align_t) *
                  _Alignof(max_align_t);
    tocl_kernel_entry *e = calloc(1, head + kind->key_size);
    if (!e)
        return NULL;
    memcpy((char *)e + head, key, kind->key_size);
    e->key = (char *)e + head;
    e->kind = kind;
    e->dev = dev;
    e->hash = hash;
    e->kernel = kernel;
    e->local = kernel ? tocl_kernel_local_size(dev, kernel) : 1;
    pthread_mutex_init(&e->lock, NULL);
    return e;
}

/* Insert e unless the key is there already: then e is dropped and the
 * entry that won is returned. */
static tocl_kernel_entry *insert(tocl_kernel_entry *e) {
    pthread_mutex_lock(&cache_lock);
    tocl_kernel_entry *won = lookup(e->kind, e->dev, e->key, e->hash);
    if (!won) {
        e->next = buckets[e->hash % BUCKETS];
        buckets[e->hash % BUCKETS] = e;
        if (e->kernel)
            atomic_fetch_add(&e->kind->created, 1);
    }
    pthread_mutex_unlock(&cache_lock);
    if (won) {
        if (e->kernel)
            clReleaseKernel(e->kernel);
        pthread_mutex_destroy(&e->lock);
        free(e->fail);
        free(e);
        return won;
    }
    return e;
}

int tocl_strict_builds(void) { return tocl_env_flag("TORCH_OCL_STRICT_BUILDS"); }

/* Under TORCH_OCL_STRICT_BUILDS, the first background failure not yet
 * reported to any caller (malloc'd message), and what it was. */
static _Atomic(char *) g_pending;

static tocl_status failed(const tocl_kernel_entry *e) {
    return tocl_fail(TOCL_E_BUILD, "a generated %s kernel failed to build on the background thread "
                     "(TORCH_OCL_STRICT_BUILDS=1 makes this an error; without it the ops run unfused):\n%s",
                     e->kind->what, e->fail ? e->fail : "(no message)");
}

/* Strict builds: report a background failure nobody has seen yet. */
static tocl_status take_pending(void) {
    if (!atomic_load_explicit(&g_pending, memory_order_relaxed))
        return TOCL_OK;
    char *msg = atomic_exchange(&g_pending, NULL);
    if (!msg)
        return TOCL_OK;
    tocl_status s = tocl_fail(TOCL_E_BUILD, "%s", msg);
    free(msg);
    return s;
}

tocl_status tocl_kernels_get(tocl_kernel_kind *kind, int dev, const void *key, uint64_t hash,
                             tocl_kernel_entry **out) {
    tocl_kernel_entry *e = tocl_kernels_find(kind, dev, key, hash);
    if (e && !e->kernel)
        return failed(e);
    if (e) {
        *out = e;
        return TOCL_OK;
    }
    cl_kernel k = NULL;
    TOCL_TRY(kind->create(dev, key, &k));
    e = entry_new(kind, dev, key, hash, k);
    if (!e) {
        clReleaseKernel(k);
        return tocl_fail(TOCL_E_OOM, "out of host memory caching a %s kernel", kind->what);
    }
    *out = insert(e);
    return TOCL_OK;
}

/* A background job: which kind, which device, then the key's bytes. */
typedef struct job_head {
    tocl_kernel_kind *kind;
    int dev;
    uint64_t hash;
} job_head;

#define JOB_KEY_OFF ((sizeof(job_head) + _Alignof(max_align_t) - 1) / _Alignof(max_align_t) * _Alignof(max_align_t))
#define JOB_KEY(j) ((const char *)(j) + JOB_KEY_OFF)

static void build_job(const void *job) {
    const job_head *h = job;
    tocl_kernel_entry *e;
    if (tocl_kernels_get(h->kind, h->dev, JOB_KEY(job), h->hash, &e) == TOCL_OK)
        return;
    /* Remembered as failed, so the caller's fallback (the ops one kernel
     * each, a reduction with its own prologue) runs without asking again. */
    char *msg = strdup(tocl_last_error());
    tocl_log(TOCL_LOG_BUILDS, "a generated %s kernel failed to build on the background thread: %s", h->kind->what,
             msg ? msg : "");
    e = entry_new(h->kind, h->dev, JOB_KEY(job), h->hash, NULL);
    if (e) {
        e->fail = msg;
        if (insert(e) != e)
            return; /* another thread's entry won; msg went with ours */
        if (tocl_strict_builds()) {
            tocl_status s = failed(e);
            (void)s;
            char *pending = strdup(tocl_last_error()), *none = NULL;
            if (pending && !atomic_compare_exchange_strong(&g_pending, &none, pending))
                free(pending); /* one is waiting already: the first is reported */
        }
    } else {
        free(msg);
    }
}

tocl_status tocl_kernels_get_async(tocl_kernel_kind *kind, int dev, const void *key, uint64_t hash,
                                   tocl_kernel_entry **out) {
    *out = NULL;
    /* The environment is read only on a failure: this runs at every flush. */
    if (atomic_load_explicit(&g_pending, memory_order_relaxed) && tocl_strict_builds())
        TOCL_TRY(take_pending());
    tocl_kernel_entry *e = tocl_kernels_find(kind, dev, key, hash);
    if (e && !e->kernel && tocl_strict_builds())
        return failed(e);
    if (e) {
        *out = e;
        return TOCL_OK;
    }
    size_t off = JOB_KEY_OFF;
    size_t size = off + kind->key_size;
    /* The builder copies the job; this buffer only carries it there. */
    static _Thread_local unsigned char *buf;
    static _Thread_local size_t cap;
    if (cap < size) {
        unsigned char *nb = realloc(buf, size);
        if (!nb)
            return TOCL_OK; /* no memory for the job: the caller's fallback runs, and asks again later */
        buf = nb;
        cap = size;
    }
    memset(buf, 0, off);
    job_head *h = (job_head *)buf;
    h->kind = kind;
    h->dev = dev;
    h->hash = hash;
    memcpy(buf + off, key, kind->key_size);
    tocl_build_async(build_job, buf, size, hash);
    return TOCL_OK;
}

/* Measured on PoCL (16M float add): 1024 work-items per group was 5-10%
 * faster than 64 or 256; GPUs prefer 256, a common wavefront multiple. */
size_t tocl_kernel_local_size(int dev, cl_kernel k) {
    const tocl_device_props *p = tocl_dev_props(dev);
    size_t want = p && p->kind == TOCL_DEVICE_CPU ? 1024 : 256;
    size_t kmax = 0;
    if (clGetKernelWorkGroupInfo(k, tocl_dev_id(dev), CL_KERNEL_WORK_GROUP_SIZE, sizeof kmax, &kmax, NULL) ==
            CL_SUCCESS && kmax > 0 && kmax < want)
        want = kmax;
    if (p && p->max_work_group_size > 0 && p->max_work_group_size < want)
        want = (size_t)p->max_work_group_size;
    return want ? want : 1;
}
