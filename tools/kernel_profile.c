/* kernel_profile.c - where the device time goes, per OpenCL kernel.
 *
 * A preload shim for any OpenCL program (torch-ocl included): it wraps
 * clEnqueueNDRangeKernel, keeps an event per launch, and prints the device
 * time per kernel name (from the queue's profiling clock; torch-ocl's queues
 * have profiling on) when the process exits or when kprof_dump() is called.
 *
 *   make kernel-profile   (builds build/kernel_profile.so)
 *   LD_PRELOAD=build/kernel_profile.so KPROF=1 python train.py
 *
 * KPROF=1 records from the start; without it nothing is recorded until
 * kprof_start() (ctypes: ctypes.CDLL("build/kernel_profile.so")), so a
 * script can time just its steady state:
 *   kp.kprof_start(); ...; kp.kprof_dump()   (dump also stops and resets)
 * KPROF_SHAPES=1 splits each name by argument count and global size.
 * KPROF_ORDER=N also lists the first N recorded launches in the order they
 * ran, each with its device time and the idle gap before it (to compare two
 * paths that launch the same kernels, e.g. eager against compiled).
 * It waits for every recorded launch when it dumps, so use it to find
 * where time goes, not to time a run. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef cl_int (*enqueue_fn)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *,
                             cl_uint, const cl_event *, cl_event *);

#define MAX_LAUNCHES (1 << 20)
#define MAX_NAMES 1024
#define NAME_LEN 96

typedef struct {
    cl_event ev;
    int name;
} launch;

static launch *launches;
static int n_launches, recording = -1;
static char names[MAX_NAMES][NAME_LEN];
static int n_names;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static int name_index(const char *s) {
    for (int i = 0; i < n_names; i++)
        if (!strcmp(names[i], s))
            return i;
    if (n_names == MAX_NAMES)
        return -1;
    snprintf(names[n_names], NAME_LEN, "%s", s);
    return n_names++;
}

void kprof_start(void) {
    pthread_mutex_lock(&mu);
    recording = 1;
    pthread_mutex_unlock(&mu);
}

cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dims, const size_t *off, const size_t *global,
                              const size_t *local, cl_uint nwait, const cl_event *wait, cl_event *event) {
    static enqueue_fn real;
    if (!real)
        real = (enqueue_fn)dlsym(RTLD_NEXT, "clEnqueueNDRangeKernel");
    pthread_mutex_lock(&mu);
    if (recording < 0)
        recording = getenv("KPROF") && !strcmp(getenv("KPROF"), "1");
    int on = recording && (launches || (launches = malloc(MAX_LAUNCHES * sizeof *launches)) != NULL);
    pthread_mutex_unlock(&mu);
    if (!on)
        return real(q, k, dims, off, global, local, nwait, wait, event);
    cl_event ev;
    cl_int rc = real(q, k, dims, off, global, local, nwait, wait, &ev);
    if (rc != CL_SUCCESS)
        return rc;
    char nm[NAME_LEN] = {0};
    clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof nm - 32, nm, NULL);
    if (getenv("KPROF_SHAPES")) {
        cl_uint nargs = 0;
        size_t items = 1;
        clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL);
        for (cl_uint d = 0; d < dims; d++)
            items *= global[d];
        snprintf(nm + strlen(nm), 32, " a%u g%zu", nargs, items);
    }
    if (event) {
        clRetainEvent(ev);
        *event = ev;
    }
    pthread_mutex_lock(&mu);
    int ni = name_index(nm);
    if (n_launches < MAX_LAUNCHES && ni >= 0) {
        launches[n_launches].ev = ev;
        launches[n_launches++].name = ni;
    } else {
        clReleaseEvent(ev);
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

void kprof_dump(void) {
    static double ms[MAX_NAMES];
    static long count[MAX_NAMES];
    int order[MAX_NAMES];
    pthread_mutex_lock(&mu);
    memset(ms, 0, sizeof ms);
    memset(count, 0, sizeof count);
    double total = 0;
    int listed = getenv("KPROF_ORDER") ? atoi(getenv("KPROF_ORDER")) : 0;
    cl_ulong prev_end = 0;
    for (int i = 0; i < n_launches; i++) {
        cl_ulong t0 = 0, t1 = 0;
        clWaitForEvents(1, &launches[i].ev);
        clGetEventProfilingInfo(launches[i].ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
        clGetEventProfilingInfo(launches[i].ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
        clReleaseEvent(launches[i].ev);
        double d = t1 > t0 ? (double)(t1 - t0) / 1e6 : 0;
        if (i < listed)
            fprintf(stderr, "  #%-5d %-44s %9.1f us  gap %9.1f us\n", i, names[launches[i].name], d * 1e3,
                    prev_end && t0 > prev_end ? (double)(t0 - prev_end) / 1e3 : 0.0);
        prev_end = t1;
        ms[launches[i].name] += d;
        count[launches[i].name]++;
        total += d;
    }
    int launched = n_launches;
    n_launches = 0;
    recording = 0;
    for (int i = 0; i < n_names; i++)
        order[i] = i;
    for (int i = 1; i < n_names; i++) /* insertion sort, most time first */
        for (int j = i; j > 0 && ms[order[j]] > ms[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    fprintf(stderr, "kernel profile: %d launches, %.2f ms of device time\n", launched, total);
    for (int i = 0; i < n_names; i++)
        if (count[order[i]])
            fprintf(stderr, "  %-44s %10.2f ms %6.1f%% %8ld launches\n", names[order[i]], ms[order[i]],
                    total > 0 ? 100.0 * ms[order[i]] / total : 0.0, count[order[i]]);
    pthread_mutex_unlock(&mu);
}

__attribute__((destructor)) static void at_exit_dump(void) {
    if (n_launches)
        kprof_dump();
}
