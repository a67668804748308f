/* internal.h - what runtime subsystems share with each other but not with
 * the adapter: OpenCL handles behind device indices, streams and addresses.
 * Only runtime/ and tests/c/ include this file. */
#ifndef TOCL_INTERNAL_H
#define TOCL_INTERNAL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include "tocl/device.h"
#include "tocl/mem.h"
#include "tocl/program.h"
#include "tocl/status.h"
#include "tocl/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fail with TOCL_E_OPENCL naming the call and the error if err != CL_SUCCESS. */
#define TOCL_CL_TRY(err, what)                                                      \
    do {                                                                            \
        cl_int tocl_cl_err_ = (err);                                                \
        if (tocl_cl_err_ != CL_SUCCESS)                                             \
            return tocl_fail(TOCL_E_OPENCL, "%s failed: %s (%d)", (what),           \
                             tocl_cl_error_name(tocl_cl_err_), (int)tocl_cl_err_);  \
    } while (0)

/* device/: handles of a usable device (caller has checked the index).
 * Devices of one platform share one context, so buffers are usable by every
 * device of that platform and clEnqueueCopyBuffer works between them. */
cl_context tocl_dev_context(int dev);
cl_device_id tocl_dev_id(int dev);
cl_platform_id tocl_dev_platform(int dev);
const tocl_device_props *tocl_dev_props(int dev);
int tocl_dev_is_pocl(int dev); /* the device's platform is PoCL */
/* 1 if this process may run AMX tile instructions: the host CPU has
 * AMX-BF16 and Linux granted the tiles (asked once). tocl_host_amx: the
 * same, unless TORCH_OCL_AMX=0 keeps the runtime's kernels off them. */
int tocl_host_amx_permit(void);
int tocl_host_amx(void);

/* queue/: the command queue of (dev, stream), created on first use.
 * tocl_queue_get first runs the work fused eager deferred on that stream
 * (through the scheduler hooks, queue/sched.c); _nodefer does not (its
 * caller is that flush, or has flushed). */
tocl_status tocl_queue_get(int dev, int stream, cl_command_queue *out);
tocl_status tocl_queue_get_nodefer(int dev, int stream, cl_command_queue *out);

/* queue/sched.c: the hooks through which the queue and the allocator reach
 * a scheduler above them (fused eager) without knowing it: a scheduler that
 * holds back work installs the table before it holds back anything, and the
 * calls below do nothing until then. Like a backend's interface struct in
 * ggml, the lower layer owns the table's shape; the upper one fills it. */
typedef struct tocl_sched_hooks {
    /* Enqueue the work held back for (dev, stream) / for every stream of dev. */
    tocl_status (*flush)(int dev, int stream);
    tocl_status (*flush_device)(int dev);
    /* The allocator freed [addr, addr + size): held-back writes there belong
     * to a dead tensor. Called with the allocator's lock held. */
    void (*note_free)(int dev, tocl_addr addr, size_t size);
} tocl_sched_hooks;
void tocl_sched_install(const tocl_sched_hooks *hooks);
tocl_status tocl_sched_flush(int dev, int stream);
tocl_status tocl_sched_flush_device(int dev);
void tocl_sched_note_free(int dev, tocl_addr addr, size_t size);

/* queue/deferred.c: a replayed graph's checks (index bounds, flags), read
 * back without a host wait. tocl_deferred_check takes ev (the read) and vals
 * (malloc'd, `groups` [min, max] pairs the read fills); values outside
 * [lo, hi] fail a later tocl_deferred_collect. groups 0: vals is a flag
 * pair [bad, value], failing when bad is not 0. Collect judges the pending
 * checks of dev (stream < 0: every stream) that have arrived, or all of
 * them when waited (the caller has waited for that work); it returns the
 * first failure. */
tocl_status tocl_deferred_check(int dev, int stream, cl_event ev, int64_t *vals, int groups, int64_t lo,
                                int64_t hi);
tocl_status tocl_deferred_collect(int dev, int stream, int waited);
/* Enqueue a read of n bytes of buf at off on q without waiting, and hand it
 * to tocl_deferred_check (groups, lo, hi as there). */
tocl_status tocl_deferred_read(int dev, int stream, cl_command_queue q, cl_mem buf, size_t off, size_t n, int groups,
                               int64_t lo, int64_t hi);

/* Later work on (wdev, wstream) waits for all work queued so far on
 * (dev, stream); no host wait when both devices share a context. */
tocl_status tocl_stream_wait_stream(int wdev, int wstream, int dev, int stream);

/* mem/alloc.c, for graph capture: blocks the calling thread allocates
 * belong to `graph` (0: none) and stay reserved when freed, until
 * tocl_mem_owner_release hands the freed ones back to the pools. */
void tocl_mem_capture_owner(uint64_t graph);
tocl_status tocl_mem_owner_release(uint64_t graph);

/* mem/: map an address inside a live block to its buffer and byte offset. */
tocl_status tocl_mem_resolve(tocl_addr addr, int *dev, cl_mem *buf, size_t *offset);
/* mem/guard.c (TORCH_OCL_GUARD=1; no-ops otherwise): tocl_device_sync calls
 * after_sync to check and release the canary read-backs that have completed;
 * in_flight counts those still held (each holds one cl_event), for tests. */
void tocl_mem_guard_after_sync(void);
int tocl_mem_guard_in_flight(void);

/* program/: build-or-fetch a program, and make a new kernel object from it
 * (the caller owns the kernel and releases it; kernels are not shared
 * between threads, because clSetKernelArg is not thread-safe). */
tocl_status tocl_program_get(int dev, const char *source, const char *options, cl_program *out);
tocl_status tocl_kernel_create(int dev, const char *source, const char *options, const char *name,
                               cl_kernel *out);

/* core/log.c: the one logging switch, TORCH_OCL_LOG=topic,topic,... */
typedef enum tocl_log_topic {
    TOCL_LOG_FUSION = 0, /* fused eager's groups and flushes */
    TOCL_LOG_BUILDS,     /* each program compiled */
    TOCL_LOG_CACHE,      /* the disk program cache: rejects, failed writes */
    TOCL_LOG_TUNE,       /* GEMM tuning */
    TOCL_LOG_COMPILE,    /* torch.compile plans */
    TOCL_LOG_TOPIC_COUNT
} tocl_log_topic;
int tocl_log_on(tocl_log_topic topic);
/* One line (no trailing newline in fmt) to stderr when the topic is on. */
void tocl_log(tocl_log_topic topic, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Always printed: something the user must know (a bad setting, an unsafe file). */
void tocl_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Read TORCH_OCL_LOG again (tests change it at run time). */
void tocl_log_reload(void);

/* core/fork.c: refuse OpenCL work in a child forked after the parent used
 * the device. tocl_fork_note_used is called once the driver is loaded;
 * tocl_fork_check fails with TOCL_E_UNSUPPORTED in such a child. Subsystems that
 * hold process state the child must reset (a redirected fd) register a
 * handler that runs in every forked child. */
void tocl_fork_note_used(void);
tocl_status tocl_fork_check(void);
typedef void (*tocl_fork_child_fn)(void);
void tocl_fork_on_child(tocl_fork_child_fn fn);

/* core/: environment knobs, read in one place. */
const char *tocl_env(const char *name); /* getenv, NULL if unset or empty */
int tocl_env_flag(const char *name);    /* 1 for 1/true/yes/on */
int tocl_env_off(const char *name);     /* 1 for 0/false/no/off: a switch that is on unless turned off */
/* core/read_file.c: the whole file, NUL-terminated (malloc'd), its length in *len; NULL if unreadable. */
char *tocl_read_file(const char *path, size_t *len);

/* queue/record.h last: the OpenCL enqueue calls of every runtime file go
 * through the graph-capture recorder's wrappers. */
#include "queue/record.h"

#ifdef __cplusplus
}
#endif
#endif
