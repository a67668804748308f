/* status.h - result codes and the thread-local error message of the torch-ocl runtime.
 *
 * Every runtime function returns a tocl_status. On failure it also leaves a
 * human-readable message (what failed, the OpenCL error name, the op and
 * shapes, a build log) that tocl_last_error() returns until the next failure
 * on the same thread. Nothing in the runtime aborts or exits the process. */
#ifndef TOCL_STATUS_H
#define TOCL_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tocl_status {
    TOCL_OK = 0,
    TOCL_E_INVALID,     /* the caller passed a bad argument: index, shape, dtype, pointer */
    TOCL_E_NO_DEVICE,   /* no OpenCL driver/device, or a device index out of range */
    TOCL_E_OOM,         /* device memory exhausted even after releasing the cache */
    TOCL_E_OPENCL,      /* an OpenCL call failed; the message names the call and error */
    TOCL_E_BUILD,       /* an OpenCL program failed to build; the message holds the log */
    TOCL_E_UNSUPPORTED, /* a dtype or feature the device or runtime does not support */
    TOCL_E_IO,          /* a file operation of the program cache failed */
    TOCL_E_INTERNAL     /* a bug in torch-ocl; please report it */
} tocl_status;

/* Short constant name of a status, e.g. "TOCL_E_OOM". */
const char *tocl_status_name(tocl_status s);

/* Message of the last failure on this thread ("" if none). */
const char *tocl_last_error(void);

/* Set this thread's message (printf-style) and return s, so that code can
 * write `return tocl_fail(TOCL_E_INVALID, "bad index %d", i);`. */
tocl_status tocl_fail(tocl_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Append context to the current message: "<message>\n  while <context>". */
void tocl_error_context(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Name of an OpenCL error code, e.g. -4 -> "CL_MEM_OBJECT_ALLOCATION_FAILURE". */
const char *tocl_cl_error_name(int cl_error);

/* Propagate a failure to the caller. */
#define TOCL_TRY(expr)                        \
    do {                                      \
        tocl_status tocl_try_s_ = (expr);     \
        if (tocl_try_s_ != TOCL_OK)           \
            return tocl_try_s_;               \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
