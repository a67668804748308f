/* record.h - the command recorder under graph capture (runtime/graph/).
 *
 * Every runtime file reaches OpenCL through internal.h, which includes this
 * header last: the enqueue calls below become tocl_rec_* wrappers. Outside
 * a capture each wrapper is the OpenCL call plus one thread-local load. While
 * the calling thread captures, the wrappers also record what they enqueue on
 * the capture's queue (kernels with their argument values, writes, copies,
 * fills), so that graph.c can enqueue the same commands again without the
 * host code that chose them. A command that cannot be replayed (a read back
 * to the host, a wait on another queue, a launch on another queue) leaves
 * the recording unreplayable, with the reason; the call itself still runs. */
#ifndef TOCL_QUEUE_RECORD_H
#define TOCL_QUEUE_RECORD_H

#include <stddef.h>

typedef struct tocl_rec tocl_rec;

/* Start recording the calling thread's commands on q (one recording per
 * thread at a time). */
tocl_status tocl_rec_begin(cl_command_queue q, tocl_rec **out);
/* Stop recording; *why is NULL if every command can be replayed, else the
 * first reason it cannot (owned by rec). */
tocl_status tocl_rec_end(tocl_rec *rec, const char **why);
/* Enqueue the recorded commands on q, the queue of (dev, stream) (of the
 * capture's context), in order. Bounds checks are read back without a wait
 * (queue/deferred.c). */
tocl_status tocl_rec_replay(const tocl_rec *rec, cl_command_queue q, int dev, int stream);
int tocl_rec_commands(const tocl_rec *rec);
/* 1 while the calling thread records. */
int tocl_rec_active(void);

/* Index bounds checks (ops/index.c, the adapter's range checks): the next
 * device-to-host read of the calling thread is the [min, max] pairs of
 * `groups` work-groups, recorded as a check instead of refusing the
 * capture. A replay reads them back without a host wait, and a value
 * outside the bounds the op then checked (tocl_graph_check_bounds) fails a
 * later synchronization or replay (queue/deferred.c); a check without bounds at the end of
 * the capture makes the graph unreplayable. */
void tocl_rec_next_read_is_check(int groups);
/* The same for a flag pair [bad, value] an op checks on the host (a target
 * out of range in nll_loss): recorded as a check that fails a later
 * synchronization when bad is not 0. */
void tocl_rec_next_read_is_flag(void);
/* While on (per thread), the wrappers neither record nor refuse: for the
 * runtime's own checks that are not part of the captured work (guard mode's
 * canary read-backs). */
void tocl_rec_bypass(int on);
void tocl_rec_check_bounds(int64_t lo, int64_t hi);
/* Release the recording's kernels, retained buffers and host data. */
void tocl_rec_free(tocl_rec *rec);

/* The wrappers (record.c defines TOCL_RECORD_IMPL and calls the real ones). */
cl_int tocl_rec_clSetKernelArg(cl_kernel k, cl_uint i, size_t size, const void *value);
cl_int tocl_rec_clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dims, const size_t *offset,
                                       const size_t *global, const size_t *local, cl_uint nwait,
                                       const cl_event *wait, cl_event *ev);
cl_int tocl_rec_clEnqueueWriteBuffer(cl_command_queue q, cl_mem buf, cl_bool blocking, size_t off, size_t n,
                                     const void *src, cl_uint nwait, const cl_event *wait, cl_event *ev);
cl_int tocl_rec_clEnqueueCopyBuffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t soff, size_t doff, size_t n,
                                    cl_uint nwait, const cl_event *wait, cl_event *ev);
cl_int tocl_rec_clEnqueueFillBuffer(cl_command_queue q, cl_mem buf, const void *pattern, size_t psize, size_t off,
                                    size_t n, cl_uint nwait, const cl_event *wait, cl_event *ev);
cl_int tocl_rec_clEnqueueReadBuffer(cl_command_queue q, cl_mem buf, cl_bool blocking, size_t off, size_t n, void *dst,
                                    cl_uint nwait, const cl_event *wait, cl_event *ev);
void *tocl_rec_clEnqueueMapBuffer(cl_command_queue q, cl_mem buf, cl_bool blocking, cl_map_flags flags, size_t off,
                                  size_t n, cl_uint nwait, const cl_event *wait, cl_event *ev, cl_int *err);
cl_int tocl_rec_clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint nwait, const cl_event *wait, cl_event *ev);
cl_int tocl_rec_clEnqueueBarrierWithWaitList(cl_command_queue q, cl_uint nwait, const cl_event *wait, cl_event *ev);
cl_int tocl_rec_clFinish(cl_command_queue q);
cl_mem tocl_rec_clCreateBuffer(cl_context ctx, cl_mem_flags flags, size_t size, void *host, cl_int *err);
cl_int tocl_rec_clReleaseMemObject(cl_mem m);

#ifndef TOCL_RECORD_IMPL
#define clSetKernelArg tocl_rec_clSetKernelArg
#define clEnqueueNDRangeKernel tocl_rec_clEnqueueNDRangeKernel
#define clEnqueueWriteBuffer tocl_rec_clEnqueueWriteBuffer
#define clEnqueueCopyBuffer tocl_rec_clEnqueueCopyBuffer
#define clEnqueueFillBuffer tocl_rec_clEnqueueFillBuffer
#define clEnqueueReadBuffer tocl_rec_clEnqueueReadBuffer
#define clEnqueueMapBuffer tocl_rec_clEnqueueMapBuffer
#define clEnqueueMarkerWithWaitList tocl_rec_clEnqueueMarkerWithWaitList
#define clEnqueueBarrierWithWaitList tocl_rec_clEnqueueBarrierWithWaitList
#define clFinish tocl_rec_clFinish
#define clCreateBuffer tocl_rec_clCreateBuffer
#define clReleaseMemObject tocl_rec_clReleaseMemObject
#endif

#endif
