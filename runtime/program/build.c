/* build.c - compile OpenCL programs for one device, and turn failures into readable messages. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "program/program_internal.h"

#define LOG_KEEP 8192     /* the first errors matter; later ones are usually fallout */
#define SOURCE_LINES 12   /* enough to recognise which kernel family failed */
#define SOURCE_LINE_MAX 160
#define MAX_DEVICES 64   /* devices in one context; real platforms have a handful */

double tocl_program_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The build log of `prog` on `id` (malloc'd, trailing whitespace trimmed),
 * or NULL if the driver has none. */
static char *build_log(cl_program prog, cl_device_id id) {
    size_t n = 0;
    if (clGetProgramBuildInfo(prog, id, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS || n == 0)
        return NULL;
    char *log = malloc(n + 1);
    if (!log)
        return NULL;
    if (clGetProgramBuildInfo(prog, id, CL_PROGRAM_BUILD_LOG, n, log, NULL) != CL_SUCCESS) {
        free(log);
        return NULL;
    }
    log[n] = '\0';
    size_t len = strlen(log);
    while (len && (log[len - 1] == '\n' || log[len - 1] == ' ' || log[len - 1] == '\r'))
        log[--len] = '\0';
    return log;
}

/* Append printf-style to a fixed buffer, silently stopping when full. */
static void append(char *buf, size_t cap, size_t *used, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static void append(char *buf, size_t cap, size_t *used, const char *fmt, ...) {
    if (*used + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *used, cap - *used, fmt, ap);
    va_end(ap);
    if (n > 0)
        *used = *used + (size_t)n < cap ? *used + (size_t)n : cap - 1;
}

/* "OpenCL program build failed on <device>:\n<log>" then the options and the
 * first lines of the source, so the reader can tell which kernel it was. */
static tocl_status build_failure(cl_program prog, int dev, cl_int err, const char *source,
                                 const char *options) {
    const char *devname = tocl_dev_props(dev)->name;
    char *log = build_log(prog, tocl_dev_id(dev));
    size_t cap = LOG_KEEP + 4096, used = 0;
    char *msg = malloc(cap);
    if (!msg) {
        free(log);
        return tocl_fail(TOCL_E_BUILD, "OpenCL program build failed on %s (%s)", devname,
                         tocl_cl_error_name(err));
    }
    msg[0] = '\0';
    if (err == CL_BUILD_PROGRAM_FAILURE)
        append(msg, cap, &used, "OpenCL program build failed on %s:\n", devname);
    else
        append(msg, cap, &used, "OpenCL program build failed on %s: clBuildProgram returned %s (%d)\n",
               devname, tocl_cl_error_name(err), (int)err);
    size_t loglen = log ? strlen(log) : 0;
    if (loglen > LOG_KEEP)
        append(msg, cap, &used, "%.*s\n... (build log truncated: %zu of %zu bytes shown)\n", LOG_KEEP,
               log, (size_t)LOG_KEEP, loglen);
    else
        append(msg, cap, &used, "%s\n", loglen ? log : "(the driver gave no build log)");
    append(msg, cap, &used, "build options: \"%s\"\nsource begins:\n", options);
    const char *line = source;
    for (int i = 1; i <= SOURCE_LINES && *line; i++) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        append(msg, cap, &used, "%4d| %.*s%s\n", i, (int)(n < SOURCE_LINE_MAX ? n : SOURCE_LINE_MAX), line,
               n > SOURCE_LINE_MAX ? " ..." : "");
        if (!nl)
            break;
        line = nl + 1;
    }
    while (used && msg[used - 1] == '\n')
        msg[--used] = '\0';
    tocl_status s = err == CL_INVALID_BUILD_OPTIONS ? TOCL_E_INVALID : TOCL_E_BUILD;
    tocl_fail(s, "%s", msg);
    free(msg);
    free(log);
    return s;
}

static atomic_int g_inject; /* builds still to fail on purpose (tests) */

void tocl_program_inject_build_failures(int n) { atomic_store(&g_inject, n > 0 ? n : 0); }

/* Take one injected failure, if any is left. */
static int take_injected(void) {
    int n = atomic_load(&g_inject);
    while (n > 0 && !atomic_compare_exchange_weak(&g_inject, &n, n - 1))
        ;
    return n > 0;
}

#define INJECTED_LINE "#error \"torch_ocl: build failure injected by a test (tocl_program_inject_build_failures)\"\n"

/* Create `n` source strings as one program and build it for `dev`. On
 * failure *prog is the program that failed (for its log) or NULL. */
static cl_int create_and_build(int dev, cl_uint n, const char **strings, const char *options, cl_program *prog) {
    cl_device_id id = tocl_dev_id(dev);
    cl_int err = CL_SUCCESS;
    *prog = clCreateProgramWithSource(tocl_dev_context(dev), n, strings, NULL, &err);
    if (err != CL_SUCCESS) {
        *prog = NULL;
        return err;
    }
    /* One device only: its context may hold more, and each is built (and
     * cached) separately so they never wait on each other's compiles. */
    tocl_driver_output_begin();
    err = clBuildProgram(*prog, 1, &id, options, NULL, NULL);
    tocl_driver_output_end();
    return err;
}

/* On PoCL: the build behind only the builtin declarations the source names
 * (lean_header.c). 1 with *out built; 0 when it does not apply or failed
 * (*tried says which), and the caller builds behind the full header. */
static int build_lean(int dev, const char *source, const char *options, cl_program *out, int *tried) {
    *tried = 0;
    char *lean = tocl_lean_header(dev, source, options);
    if (!lean)
        return 0;
    *tried = 1;
    size_t n = strlen(options) + sizeof TOCL_LEAN_HEADER_OPTION;
    char *opts = malloc(n);
    cl_program prog = NULL;
    cl_int err = CL_OUT_OF_HOST_MEMORY;
    if (opts) {
        snprintf(opts, n, "%s" TOCL_LEAN_HEADER_OPTION, options);
        const char *strings[2] = {lean, source};
        err = create_and_build(dev, 2, strings, opts, &prog);
    }
    free(opts);
    free(lean);
    if (err == CL_SUCCESS) {
        tocl_lean_header_count(0);
        *out = prog;
        return 1;
    }
    if (prog)
        clReleaseProgram(prog);
    tocl_log(TOCL_LOG_BUILDS, "a lean build failed (%s); building again behind the whole opencl-c.h",
             tocl_cl_error_name(err));
    return 0;
}

tocl_status tocl_build_from_source(int dev, const char *source, const char *options, cl_program *out,
                                   tocl_build_outcome *outcome) {
    *outcome = TOCL_BUILD_OK;
    if (!options)
        options = "";
    /* An injected failure is a real one: the driver compiles the source
     * behind an #error line, so the error carries a genuine build log. */
    char *injected = NULL;
    int lean_tried = 0;
    if (take_injected()) {
        injected = malloc(sizeof INJECTED_LINE + strlen(source));
        if (!injected)
            return tocl_fail(TOCL_E_OOM, "out of host memory building a program");
        memcpy(injected, INJECTED_LINE, sizeof INJECTED_LINE - 1);
        strcpy(injected + sizeof INJECTED_LINE - 1, source);
        source = injected;
    } else if (build_lean(dev, source, options, out, &lean_tried)) {
        return TOCL_OK;
    }
    cl_program prog;
    cl_int err = create_and_build(dev, 1, &source, options, &prog);
    if (err != CL_SUCCESS && !prog) {
        free(injected);
        TOCL_CL_TRY(err, "clCreateProgramWithSource");
    }
    if (err != CL_SUCCESS) {
        tocl_status s = build_failure(prog, dev, err, source, options);
        clReleaseProgram(prog);
        free(injected);
        *outcome = injected ? TOCL_BUILD_INJECTED
                   : err == CL_BUILD_PROGRAM_FAILURE ? TOCL_BUILD_COMPILE_ERROR : TOCL_BUILD_OTHER_ERROR;
        return s;
    }
    free(injected);
    /* Built behind the full header after failing behind the lean one: a
     * builtin the lean text left out (a real compile error fails both). */
    if (lean_tried)
        tocl_lean_header_count(1);
    *out = prog;
    return TOCL_OK;
}

/* A PoCL binary ("poclbin" magic) is PoCL's own kernel cache directory
 * for the program, serialised, and always holds the program's bitcode
 * (program.bc). Seen here with several processes building at once
 * (2026-12-04): one binary came out without it, and loading it later
 * aborted the process inside PoCL (an assert in
 * pocl_binary_get_kernels_metadata), which no error code can report. Such a
 * binary is neither stored nor loaded; the program is built from source. */
static int pocl_binary_incomplete(const unsigned char *bin, size_t len) {
    static const char magic[] = "poclbin", member[] = "program.bc";
    if (len < sizeof magic || memcmp(bin, magic, sizeof magic) != 0)
        return 0; /* another driver's format: its own checks apply */
    for (size_t i = 0; i + sizeof member - 1 <= len; i++)
        if (bin[i] == 'p' && memcmp(bin + i, member, sizeof member - 1) == 0)
            return 0;
    return 1;
}

tocl_status tocl_build_from_binary(int dev, const unsigned char *bin, size_t len, const char *options,
                                   cl_program *out) {
    if (pocl_binary_incomplete(bin, len))
        return tocl_fail(TOCL_E_OPENCL, "a PoCL binary without its program's bitcode (program.bc)");
    cl_device_id id = tocl_dev_id(dev);
    cl_int err = CL_SUCCESS, bin_status = CL_SUCCESS;
    cl_program prog = clCreateProgramWithBinary(tocl_dev_context(dev), 1, &id, &len, &bin, &bin_status, &err);
    if (err == CL_SUCCESS && bin_status != CL_SUCCESS)
        err = bin_status;
    if (err != CL_SUCCESS) {
        if (prog)
            clReleaseProgram(prog);
        return tocl_fail(TOCL_E_OPENCL, "clCreateProgramWithBinary refused the cached binary: %s (%d)",
                         tocl_cl_error_name(err), (int)err);
    }
    /* Same options as the source build: some drivers re-link at this step. */
    tocl_driver_output_begin();
    err = clBuildProgram(prog, 1, &id, options, NULL, NULL);
    tocl_driver_output_end();
    if (err != CL_SUCCESS) {
        clReleaseProgram(prog);
        return tocl_fail(TOCL_E_OPENCL, "clBuildProgram of the cached binary failed: %s (%d)",
                         tocl_cl_error_name(err), (int)err);
    }
    *out = prog;
    return TOCL_OK;
}

tocl_status tocl_program_binary(cl_program prog, cl_device_id id, unsigned char **bin, size_t *len) {
    /* A program made from source belongs to every device of the context, so
     * the size and pointer arrays have one slot per device; only ours is read. */
    cl_uint ndev = 0;
    TOCL_CL_TRY(clGetProgramInfo(prog, CL_PROGRAM_NUM_DEVICES, sizeof ndev, &ndev, NULL),
                "clGetProgramInfo(CL_PROGRAM_NUM_DEVICES)");
    if (ndev == 0 || ndev > MAX_DEVICES)
        return tocl_fail(TOCL_E_INTERNAL, "program reports %u devices", (unsigned)ndev);
    cl_device_id devs[MAX_DEVICES];
    size_t sizes[MAX_DEVICES];
    unsigned char *ptrs[MAX_DEVICES] = {0};
    TOCL_CL_TRY(clGetProgramInfo(prog, CL_PROGRAM_DEVICES, ndev * sizeof devs[0], devs, NULL),
                "clGetProgramInfo(CL_PROGRAM_DEVICES)");
    TOCL_CL_TRY(clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, ndev * sizeof sizes[0], sizes, NULL),
                "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)");
    cl_uint i = 0;
    while (i < ndev && devs[i] != id)
        i++;
    if (i == ndev || sizes[i] == 0)
        return tocl_fail(TOCL_E_OPENCL, "the driver offers no binary for this program");
    ptrs[i] = malloc(sizes[i]);
    if (!ptrs[i])
        return tocl_fail(TOCL_E_OOM, "out of host memory for a %zu-byte program binary", sizes[i]);
    cl_int err = clGetProgramInfo(prog, CL_PROGRAM_BINARIES, ndev * sizeof ptrs[0], ptrs, NULL);
    if (err != CL_SUCCESS) {
        free(ptrs[i]);
        TOCL_CL_TRY(err, "clGetProgramInfo(CL_PROGRAM_BINARIES)");
    }
    if (pocl_binary_incomplete(ptrs[i], sizes[i])) {
        free(ptrs[i]);
        return tocl_fail(TOCL_E_OPENCL, "the driver's binary lacks the program's bitcode (program.bc): not cached");
    }
    *bin = ptrs[i];
    *len = sizes[i];
    return TOCL_OK;
}
