/* program_internal.h - private: what the program cache's files share (build, disk, memory). */
#ifndef TOCL_PROGRAM_INTERNAL_H
#define TOCL_PROGRAM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "program/program_hash.h"

/* build.c: compile for one device in that device's context. On failure the
 * thread's message holds the build log and the first lines of the source. */
typedef enum tocl_build_outcome {
    TOCL_BUILD_OK = 0,
    TOCL_BUILD_COMPILE_ERROR, /* the compiler refused the source: the same every time, worth remembering */
    TOCL_BUILD_OTHER_ERROR,   /* out of memory, bad options, ...: may pass next time */
    TOCL_BUILD_INJECTED       /* a test asked for it (tocl_program_inject_build_failures) */
} tocl_build_outcome;
tocl_status tocl_build_from_source(int dev, const char *source, const char *options, cl_program *out,
                                   tocl_build_outcome *outcome);
/* Returns TOCL_OK or a failure status with a message; never leaves a program
 * behind on failure. A binary the driver refuses is a disk reject, not an error. */
tocl_status tocl_build_from_binary(int dev, const unsigned char *bin, size_t len, const char *options,
                                   cl_program *out);
/* The program's binary for device `id` (malloc'd; caller frees). */
tocl_status tocl_program_binary(cl_program prog, cl_device_id id, unsigned char **bin, size_t *len);

/* lean_header.c: on PoCL, the text to build ahead of `source` (built with `options`) with
 * TOCL_LEAN_HEADER_OPTION instead of clang's whole opencl-c.h (malloc'd),
 * or NULL where that does not apply (another driver, the header not found,
 * TORCH_OCL_LEAN_HEADER=0). */
char *tocl_lean_header(int dev, const char *source, const char *options);
#define TOCL_LEAN_HEADER_OPTION " -D_OPENCL_H_"
/* Count a lean build: built, or failed there but built behind the full header. */
void tocl_lean_header_count(int fell_back);
/* The counts so far (and zero them with `reset`). */
void tocl_lean_header_stats(uint64_t *builds, uint64_t *fallbacks, int reset);

/* disk_cache.c. The directory is resolved on every disk access (misses are
 * rare) so that tests and users can change TORCH_OCL_CACHE_DIR at run time.
 * Returns 0 with `dir` filled if the disk cache may be used. */
int tocl_disk_dir(char *dir, size_t cap);

typedef enum tocl_disk_result {
    TOCL_DISK_MISS = 0, /* no file */
    TOCL_DISK_HIT = 1,  /* *bin holds a validated payload */
    TOCL_DISK_REJECT = 2 /* a file existed but failed validation; it was removed */
} tocl_disk_result;

/* What a file holds: a program binary (<key>.bin) or the error message of
 * a build the compiler refused (<key>.fail). */
typedef enum tocl_disk_kind { TOCL_DISK_BINARY = 0, TOCL_DISK_FAILURE = 1 } tocl_disk_kind;

/* Read and validate <dir>/<key>.bin or .fail; `why` (if not NULL) names the
 * reason for a reject. A binary still has to pass the driver's own check. */
tocl_disk_result tocl_disk_load(const char *dir, tocl_program_key key, tocl_disk_kind kind, unsigned char **bin,
                                size_t *len, char *why, size_t why_cap);
/* Write atomically (temp file + rename). Returns 0 on success; a failure is
 * only logged by the caller, never fatal: the program is already built. */
int tocl_disk_store(const char *dir, tocl_program_key key, tocl_disk_kind kind, const unsigned char *bin,
                    size_t len, char *why, size_t why_cap);
/* Remove <dir>/<key>.bin or .fail (after the driver refused its payload). */
void tocl_disk_remove(const char *dir, tocl_program_key key, tocl_disk_kind kind);

/* driver_output.c: around every clBuildProgram. Between the first begin
 * and the last end, fd 2 is an anonymous file; the compiler's summary lines
 * are dropped from it, anything else is passed on to stderr. */
void tocl_driver_output_begin(void);
void tocl_driver_output_end(void);
/* At exit, with a build still in the driver: give fd 2 back now, so what
 * the process writes while it ends reaches the terminal. */
void tocl_driver_output_release(void);

/* Seconds on a monotonic clock. */
double tocl_program_now(void);

/* build_notice.c: a program was built from source in `seconds`; says so on
 * stderr once the waiting adds up (cache_dir NULL: no disk cache). */
void tocl_build_notice(const char *devname, double seconds, const char *cache_dir);

#endif
