/* program.h - the one program cache every OpenCL kernel is built through.
 *
 * Lookup order: memory, then disk, then a build. The disk cache lives in
 * $TORCH_OCL_CACHE_DIR or ~/.cache/torch_ocl (created mode 0700). A file's
 * name is a hash of: source, build options, device name, driver version,
 * platform version and the cache format version. Files are written to a temp
 * file and renamed, and validated on load (magic, format version, length,
 * checksum, owner is the user and not writable by group/others); a bad file
 * is rebuilt and replaced, never trusted. A source the compiler refused is
 * remembered (in memory and as <key>.fail) and reported again without a
 * build. TORCH_OCL_CACHE_DISABLE=1 turns the disk cache off.
 * TORCH_OCL_LOG=builds prints one line per build to stderr. */
#ifndef TOCL_PROGRAM_H
#define TOCL_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "tocl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TOCL_CACHE_FORMAT_VERSION 1

typedef struct tocl_program_stats {
    uint64_t memory_hits;
    uint64_t disk_hits;
    uint64_t builds;        /* programs compiled from source */
    uint64_t disk_writes;
    uint64_t disk_rejects;  /* corrupt, truncated, foreign or unsafe files */
    double build_seconds;   /* total time spent compiling */
    uint64_t build_failures; /* builds from source that failed (the compiler's error, or injected) */
    uint64_t known_failures; /* lookups answered by a remembered failure (memory or a .fail file) */
    uint64_t disk_writes_pending; /* built programs waiting for a quiet moment to be written */
    uint64_t lean_builds;    /* PoCL builds behind only the builtin declarations the source names */
    uint64_t lean_fallbacks; /* failed behind the lean header but built behind the whole opencl-c.h: a
                              * builtin the lean text left out (a real compile error fails both, uncounted) */
} tocl_program_stats;

tocl_status tocl_program_stats_get(tocl_program_stats *out);
void tocl_program_stats_reset(void);

/* Build-or-fetch a program and check it has kernel `name`; only validates
 * (used by tests and warm-up). */
tocl_status tocl_program_prepare(int dev, const char *source, const char *options, const char *kernel_name);

/* Disk cache administration (python -m torch_ocl cache info|clear). */
tocl_status tocl_cache_dir(char *buf, size_t cap);
tocl_status tocl_cache_info(uint64_t *files, uint64_t *bytes);
tocl_status tocl_cache_clear(uint64_t *removed_files);
/* Write the programs still waiting to go to the disk cache, now (on CPU
 * devices they wait for a quiet moment; see TORCH_OCL_CACHE_SAVE). */
void tocl_program_cache_flush(void);
/* Drop in-memory programs and remembered failures (tests use this to force
 * a disk lookup). */
void tocl_program_cache_drop_memory(void);

/* Tests: the next n builds from source fail in the driver (the source is
 * compiled behind an #error line, so the error carries a real build log).
 * Injected failures are never remembered. 0 cancels. */
void tocl_program_inject_build_failures(int n);

/* TORCH_OCL_STRICT_BUILDS=1: a generated kernel (fused eager's merged
 * graphs and reduction prologues) that fails to build is an error raised at
 * the op, or at the next op when the build ran on the background thread,
 * instead of a silent fallback to the unfused kernels. Generated code that
 * does not compile is a bug; `make test` sets this. Read at each use. */
int tocl_strict_builds(void);

/* 1 in a child forked after its parent made OpenCL calls: every call that
 * would reach the driver fails (TOCL_E_UNSUPPORTED, with a message naming
 * fork and the 'spawn' start method), because the driver's threads stay in
 * the parent and the child would hang; frees are no-ops. (Declared here,
 * beside the other process-level switches, so that adding it recompiled one
 * adapter file rather than every file that includes status.h.) */
int tocl_in_bad_fork(void);

#ifdef __cplusplus
}
#endif
#endif
