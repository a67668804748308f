/* cl_live.c - how many OpenCL objects a process holds, for leak checks (make soak).
 *
 * A preload shim for any OpenCL program: it wraps the calls that create,
 * retain and release memory objects, events, programs and kernels (and every
 * enqueue that hands back an event) and keeps, per kind, the references the
 * process holds: created + retained - released. A program that does not leak
 * holds a flat number of them however long it runs.
 *
 *   make cl-live   (builds build/cl_live.so)
 *   LD_PRELOAD=build/cl_live.so python examples/train_gpt.py ...
 *
 * Read the counts from inside the process with ctypes:
 *   lib = ctypes.CDLL(None); lib.cl_live_counts(arr)   (long long[4]: mem, event, program, kernel)
 * The wrappers forward to the next definition (the ICD loader) through
 * dlsym(RTLD_NEXT); a failed create is not counted. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>

enum { K_MEM, K_EVENT, K_PROGRAM, K_KERNEL, K_N };
static _Atomic long long live[K_N];

void cl_live_counts(long long out[K_N]) {
    for (int i = 0; i < K_N; i++)
        out[i] = atomic_load(&live[i]);
}

/* The next definition: the ICD loader. When it was loaded only as a dependency
 * of a Python extension (dlopen'd RTLD_LOCAL), RTLD_NEXT cannot see it, so it
 * is opened by name. */
static void *next(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        static void *lib;
        if (!lib)
            lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
        if (lib)
            f = dlsym(lib, name);
    }
    return f;
}

#define NEXT(fn) static __typeof__(&fn) real; if (!real) real = (__typeof__(&fn))next(#fn)

/* ---- memory objects ---- */
cl_mem clCreateBuffer(cl_context c, cl_mem_flags f, size_t n, void *host, cl_int *err) {
    NEXT(clCreateBuffer);
    cl_mem m = real(c, f, n, host, err);
    if (m) atomic_fetch_add(&live[K_MEM], 1);
    return m;
}
cl_mem clCreateSubBuffer(cl_mem b, cl_mem_flags f, cl_buffer_create_type t, const void *info, cl_int *err) {
    NEXT(clCreateSubBuffer);
    cl_mem m = real(b, f, t, info, err);
    if (m) atomic_fetch_add(&live[K_MEM], 1);
    return m;
}
cl_int clRetainMemObject(cl_mem m) {
    NEXT(clRetainMemObject);
    cl_int r = real(m);
    if (r == CL_SUCCESS) atomic_fetch_add(&live[K_MEM], 1);
    return r;
}
cl_int clReleaseMemObject(cl_mem m) {
    NEXT(clReleaseMemObject);
    cl_int r = real(m);
    if (r == CL_SUCCESS) atomic_fetch_sub(&live[K_MEM], 1);
    return r;
}

/* ---- events: every enqueue that returns one, user events, retain/release ---- */
#define EV(ev, r) do { if ((r) == CL_SUCCESS && (ev)) atomic_fetch_add(&live[K_EVENT], 1); } while (0)

cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint d, const size_t *o, const size_t *g,
                              const size_t *l, cl_uint n, const cl_event *w, cl_event *ev) {
    NEXT(clEnqueueNDRangeKernel);
    cl_int r = real(q, k, d, o, g, l, n, w, ev);
    EV(ev, r);
    return r;
}
cl_int clEnqueueCopyBuffer(cl_command_queue q, cl_mem s, cl_mem d, size_t so, size_t dof, size_t cb, cl_uint n,
                           const cl_event *w, cl_event *ev) {
    NEXT(clEnqueueCopyBuffer);
    cl_int r = real(q, s, d, so, dof, cb, n, w, ev);
    EV(ev, r);
    return r;
}
cl_int clEnqueueFillBuffer(cl_command_queue q, cl_mem b, const void *p, size_t ps, size_t o, size_t sz, cl_uint n,
                           const cl_event *w, cl_event *ev) {
    NEXT(clEnqueueFillBuffer);
    cl_int r = real(q, b, p, ps, o, sz, n, w, ev);
    EV(ev, r);
    return r;
}
cl_int clEnqueueReadBuffer(cl_command_queue q, cl_mem b, cl_bool bl, size_t o, size_t sz, void *p, cl_uint n,
                           const cl_event *w, cl_event *ev) {
    NEXT(clEnqueueReadBuffer);
    cl_int r = real(q, b, bl, o, sz, p, n, w, ev);
    EV(ev, r);
    return r;
}
cl_int clEnqueueWriteBuffer(cl_command_queue q, cl_mem b, cl_bool bl, size_t o, size_t sz, const void *p, cl_uint n,
                            const cl_event *w, cl_event *ev) {
    NEXT(clEnqueueWriteBuffer);
    cl_int r = real(q, b, bl, o, sz, p, n, w, ev);
    EV(ev, r);
    return r;
}
cl_int clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint n, const cl_event *w, cl_event *ev) {
    NEXT(clEnqueueMarkerWithWaitList);
    cl_int r = real(q, n, w, ev);
    EV(ev, r);
    return r;
}
cl_int clEnqueueBarrierWithWaitList(cl_command_queue q, cl_uint n, const cl_event *w, cl_event *ev) {
    NEXT(clEnqueueBarrierWithWaitList);
    cl_int r = real(q, n, w, ev);
    EV(ev, r);
    return r;
}
void *clEnqueueMapBuffer(cl_command_queue q, cl_mem b, cl_bool bl, cl_map_flags f, size_t o, size_t sz, cl_uint n,
                         const cl_event *w, cl_event *ev, cl_int *err) {
    NEXT(clEnqueueMapBuffer);
    cl_int e = CL_SUCCESS;
    void *p = real(q, b, bl, f, o, sz, n, w, ev, &e);
    if (err) *err = e;
    EV(ev, e);
    return p;
}
cl_int clEnqueueUnmapMemObject(cl_command_queue q, cl_mem m, void *p, cl_uint n, const cl_event *w, cl_event *ev) {
    NEXT(clEnqueueUnmapMemObject);
    cl_int r = real(q, m, p, n, w, ev);
    EV(ev, r);
    return r;
}
cl_event clCreateUserEvent(cl_context c, cl_int *err) {
    NEXT(clCreateUserEvent);
    cl_event e = real(c, err);
    if (e) atomic_fetch_add(&live[K_EVENT], 1);
    return e;
}
cl_int clRetainEvent(cl_event e) {
    NEXT(clRetainEvent);
    cl_int r = real(e);
    if (r == CL_SUCCESS) atomic_fetch_add(&live[K_EVENT], 1);
    return r;
}
cl_int clReleaseEvent(cl_event e) {
    NEXT(clReleaseEvent);
    cl_int r = real(e);
    if (r == CL_SUCCESS) atomic_fetch_sub(&live[K_EVENT], 1);
    return r;
}

/* ---- programs and kernels ---- */
cl_program clCreateProgramWithSource(cl_context c, cl_uint n, const char **s, const size_t *l, cl_int *err) {
    NEXT(clCreateProgramWithSource);
    cl_program p = real(c, n, s, l, err);
    if (p) atomic_fetch_add(&live[K_PROGRAM], 1);
    return p;
}
cl_program clCreateProgramWithBinary(cl_context c, cl_uint n, const cl_device_id *d, const size_t *l,
                                     const unsigned char **b, cl_int *st, cl_int *err) {
    NEXT(clCreateProgramWithBinary);
    cl_program p = real(c, n, d, l, b, st, err);
    if (p) atomic_fetch_add(&live[K_PROGRAM], 1);
    return p;
}
cl_int clRetainProgram(cl_program p) {
    NEXT(clRetainProgram);
    cl_int r = real(p);
    if (r == CL_SUCCESS) atomic_fetch_add(&live[K_PROGRAM], 1);
    return r;
}
cl_int clReleaseProgram(cl_program p) {
    NEXT(clReleaseProgram);
    cl_int r = real(p);
    if (r == CL_SUCCESS) atomic_fetch_sub(&live[K_PROGRAM], 1);
    return r;
}
cl_kernel clCreateKernel(cl_program p, const char *name, cl_int *err) {
    NEXT(clCreateKernel);
    cl_kernel k = real(p, name, err);
    if (k) atomic_fetch_add(&live[K_KERNEL], 1);
    return k;
}
cl_int clRetainKernel(cl_kernel k) {
    NEXT(clRetainKernel);
    cl_int r = real(k);
    if (r == CL_SUCCESS) atomic_fetch_add(&live[K_KERNEL], 1);
    return r;
}
cl_int clReleaseKernel(cl_kernel k) {
    NEXT(clReleaseKernel);
    cl_int r = real(k);
    if (r == CL_SUCCESS) atomic_fetch_sub(&live[K_KERNEL], 1);
    return r;
}
