/* kernels.h - the one cache of kernel objects (kernels.c) and the
 * background builder (builder.c).
 *
 * The program cache (cache.c) keeps built programs in memory and on disk;
 * this cache keeps the cl_kernel made from them, so that a launch costs one
 * lookup and no clCreateKernel. Every user (generated elementwise and
 * reduction kernels, the hand-written families) describes its keys with a
 * tocl_kernel_kind: how big a key is, how two keys compare, and how to make
 * the kernel of a key. An entry lives for the process, so a pointer to it
 * stays valid without a lock; a cl_kernel holds its arguments, so each entry
 * has a lock that makes set-args + enqueue one step. */
#ifndef TOCL_PROGRAM_KERNELS_H
#define TOCL_PROGRAM_KERNELS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

typedef struct tocl_kernel_kind {
    const char *what; /* names the kind in messages ("elementwise", "reduction", ...) */
    size_t key_size;  /* keys are copied into entries byte for byte */
    /* 1 if the keys are equal; NULL compares bytes (the key must then be
     * fully initialised, padding included). */
    int (*equal)(const void *a, const void *b);
    /* Render or look up the source and create the kernel. Runs without the
     * cache's lock (a build can take a second); may fail with a message. */
    tocl_status (*create)(int dev, const void *key, cl_kernel *out);
    atomic_uint_least64_t created; /* kernels this kind has made */
} tocl_kernel_kind;

typedef struct tocl_kernel_entry {
    struct tocl_kernel_entry *next;
    tocl_kernel_kind *kind;
    int dev;
    uint64_t hash;
    cl_kernel kernel;     /* NULL: a background build failed; remembered, not retried */
    char *fail;           /* that failure's message (the build log) */
    size_t local;         /* tocl_kernel_local_size: the group size of 1-D launches */
    pthread_mutex_t lock; /* clSetKernelArg + enqueue must not interleave between threads */
    const void *key;      /* the entry's own copy */
} tocl_kernel_entry;

/* The entry of (kind, dev, key) if there is one, else NULL. */
tocl_kernel_entry *tocl_kernels_find(tocl_kernel_kind *kind, int dev, const void *key, uint64_t hash);

/* The entry, made now if missing. A build that fails here is not
 * remembered (the error reaches the caller); one that failed on the
 * background thread is reported as such. */
tocl_status tocl_kernels_get(tocl_kernel_kind *kind, int dev, const void *key, uint64_t hash,
                             tocl_kernel_entry **out);

/* *out: the entry if it is cached (its kernel may be NULL: a failed build);
 * otherwise NULL, and the background builder is asked to make it. Fails
 * only under TORCH_OCL_STRICT_BUILDS: with this key's remembered failure,
 * or with an earlier background failure no caller has been told of. */
tocl_status tocl_kernels_get_async(tocl_kernel_kind *kind, int dev, const void *key, uint64_t hash,
                                   tocl_kernel_entry **out);

/* FNV-1a over bytes, to hash keys (h: the running hash, or 0 to start). */
uint64_t tocl_kernels_hash_bytes(uint64_t h, const void *p, size_t n);

/* Work-group size for 1-D launches on dev, capped by the kernel's limit.
 * Fixed per device, because PoCL compiles a kernel anew for every distinct
 * local size it sees. */
size_t tocl_kernel_local_size(int dev, cl_kernel k);

/* ---- builder.c: the background builder ------------------------------------
 * Run fn(key) on the builder thread unless the same (fn, key bytes) is
 * queued or running. */
void tocl_build_async(void (*fn)(const void *key), const void *key, size_t size, uint64_t hash);
/* The lower lane: fn(key) runs once no build job is queued and no program
 * has been built from source for a few quiet seconds (or when flushed).
 * 1 if queued, 2 if the same job already was, 0 if it cannot be queued (no
 * thread, or exiting): the caller runs it itself or not at all. */
int tocl_build_save_later(void (*fn)(const void *key), const void *key, size_t size, uint64_t hash);
/* Around every build from source (begin 1, then 0): what the quiet is measured from. */
void tocl_builder_note_build(int begin);
/* Run the queued saves now and wait for them. */
void tocl_builder_flush_saves(void);
/* Wait until the builder has run every build job asked of it (not the saves). */
void tocl_builder_wait(void);
/* At exit: drop the queued jobs (both lanes), refuse new ones, and wait for the one in
 * the driver until `seconds` after the first call; 1 if the thread is idle. */
int tocl_builder_abandon(double seconds);
/* Jobs finished so far and the seconds they took. */
void tocl_builder_stats(uint64_t *builds, double *seconds);
/* 1 on the builder thread: nobody waits for what it builds. */
int tocl_on_builder_thread(void);

#endif
