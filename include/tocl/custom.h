/* custom.h - user-written OpenCL C kernels (torch_ocl.compile_kernel).
 *
 * A library is one OpenCL C source plus build options and defines. Each
 * `__kernel` definition's signature is parsed, and the source is rewritten
 * so that every `__global` or `__constant` pointer parameter `p` becomes two
 * parameters, `p__tocl_buf` (the allocator segment's cl_mem) and
 * `p__tocl_off` (a byte offset, ulong), with `p` declared again at the top of
 * the kernel body as `base + offset`. Tensors live at offsets inside the
 * allocator's segments (synthetic addresses, tocl/mem.h), and a sub-buffer
 * must start on the device's base alignment, so a plain `cl_mem` per tensor
 * is not available. The rewrite stays on the lines it touches, so line
 * numbers in a build log are the user's own. Defines become `#define` lines
 * before a `#line 1`, so they are part of the program cache key like the
 * source and the options.
 *
 * Builds go through the one program cache (memory, disk), and kernel objects
 * through the one kernel cache (program/kernels.h). Libraries are interned:
 * compiling the same (source, options, defines) twice returns the same
 * library, which lives for the process, like the programs it refers to.
 *
 * A launch checks its arguments against the parsed signature (count, kind,
 * pointer element type against the tensor's dtype, scalar ranges, double
 * without cl_khr_fp64, alignment, device), the work sizes against the
 * device and the kernel (group size dividing the global size, group size
 * limits, local memory), then enqueues on (dev, stream) after fused eager's
 * recorded work on that stream. Tensors used on a stream other than the one
 * their block was allocated on are marked as with record_stream. */
#ifndef TOCL_CUSTOM_H
#define TOCL_CUSTOM_H

#include <stddef.h>
#include <stdint.h>

#include "tocl/dtype.h"
#include "tocl/mem.h"
#include "tocl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TOCL_CUSTOM_NAME_MAX 64
#define TOCL_CUSTOM_MAX_PARAMS 64

typedef enum tocl_custom_kind {
    TOCL_CUSTOM_BUFFER = 0, /* __global / __constant pointer: takes a device tensor */
    TOCL_CUSTOM_LOCAL = 1,  /* __local pointer: takes a byte count (torch_ocl.Local) */
    TOCL_CUSTOM_SCALAR = 2, /* a scalar or vector type passed by value: takes numbers */
    TOCL_CUSTOM_UNSUPPORTED = 3 /* images, samplers, pointers to pointers, structs by value */
} tocl_custom_kind;

/* Element types a parameter can name. */
typedef enum tocl_custom_type {
    TOCL_CT_CHAR = 0, TOCL_CT_UCHAR, TOCL_CT_SHORT, TOCL_CT_USHORT, TOCL_CT_INT, TOCL_CT_UINT,
    TOCL_CT_LONG, TOCL_CT_ULONG, TOCL_CT_HALF, TOCL_CT_FLOAT, TOCL_CT_DOUBLE, TOCL_CT_BOOL,
    TOCL_CT_VOID,  /* void pointers take a tensor of any dtype */
    TOCL_CT_OTHER  /* a struct or typedef the parser cannot see through: any dtype */
} tocl_custom_type;

typedef struct tocl_custom_param {
    char name[TOCL_CUSTOM_NAME_MAX];
    char type[TOCL_CUSTOM_NAME_MAX]; /* element type after defines, e.g. "float", "float4", "uint" */
    char decl[2 * TOCL_CUSTOM_NAME_MAX]; /* as declared: "__global const float*", "int" */
    tocl_custom_kind kind;
    tocl_custom_type base;
    int vec;       /* vector width (1, 2, 3, 4, 8, 16) */
    int is_const;  /* pointee declared const (or __constant) */
} tocl_custom_param;

typedef struct tocl_custom_lib tocl_custom_lib;       /* opaque, lives for the process */
typedef struct tocl_custom_kernel tocl_custom_kernel; /* one __kernel of a library */

/* Parse, rewrite and build `source` for dev. `defines` is "NAME=VALUE"
 * entries separated by '\n' (NAME may be function-like, "F(x)=..."), or
 * NULL. A build failure is TOCL_E_BUILD with the build log; a source with no
 * kernel, or a signature the parser cannot read, is TOCL_E_INVALID. */
tocl_status tocl_custom_compile(int dev, const char *source, const char *options, const char *defines,
                                tocl_custom_lib **out);
/* Build the library for another device (through the program cache). */
tocl_status tocl_custom_prepare(tocl_custom_lib *lib, int dev);

int tocl_custom_kernel_count(const tocl_custom_lib *lib);
const tocl_custom_kernel *tocl_custom_kernel_at(const tocl_custom_lib *lib, int i);
/* The kernel named `name`, or NULL. */
const tocl_custom_kernel *tocl_custom_kernel_find(const tocl_custom_lib *lib, const char *name);
/* The source as handed to the compiler (defines, #line, rewritten kernels). */
const char *tocl_custom_lib_text(const tocl_custom_lib *lib);
const char *tocl_custom_lib_options(const tocl_custom_lib *lib);

const char *tocl_custom_kernel_name(const tocl_custom_kernel *k);
int tocl_custom_param_count(const tocl_custom_kernel *k);
const tocl_custom_param *tocl_custom_param_at(const tocl_custom_kernel *k, int i);

/* What the driver says about a kernel on dev. */
typedef struct tocl_custom_limits {
    uint64_t max_work_group_size;      /* CL_KERNEL_WORK_GROUP_SIZE */
    uint64_t preferred_group_multiple; /* CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE */
    uint64_t local_mem_bytes;          /* CL_KERNEL_LOCAL_MEM_SIZE: static __local use */
    uint64_t private_mem_bytes;        /* CL_KERNEL_PRIVATE_MEM_SIZE */
    uint64_t device_local_mem_bytes;   /* CL_DEVICE_LOCAL_MEM_SIZE */
    uint64_t device_max_group_dims[3]; /* CL_DEVICE_MAX_WORK_ITEM_SIZES */
} tocl_custom_limits;
tocl_status tocl_custom_kernel_limits(const tocl_custom_kernel *k, int dev, tocl_custom_limits *out);

/* One argument of a launch, as the caller has it. */
typedef struct tocl_custom_arg {
    tocl_custom_kind kind; /* BUFFER: a tensor; LOCAL: a byte count; SCALAR: numbers */
    tocl_addr addr;        /* BUFFER: address of element 0 (0 for an empty tensor) */
    tocl_dtype dtype;      /* BUFFER */
    uint64_t nbytes;       /* BUFFER: bytes the tensor spans; LOCAL: bytes to reserve */
    int count;             /* SCALAR: how many values (1, or the vector width) */
    const tocl_scalar *values;
} tocl_custom_arg;

/* Which exception a failed launch deserves: a wrong kind or type of
 * argument (TypeError) or a wrong value, size or device (ValueError). */
typedef enum tocl_custom_fault {
    TOCL_CUSTOM_FAULT_NONE = 0,
    TOCL_CUSTOM_FAULT_TYPE = 1,
    TOCL_CUSTOM_FAULT_VALUE = 2
} tocl_custom_fault;

/* Check and enqueue k over a dims-D range (global sizes; local NULL lets
 * the driver choose) on (dev, stream). Asynchronous. An empty range checks
 * the arguments and enqueues nothing. *fault (may be NULL) classifies a
 * failure that is the caller's. */
tocl_status tocl_custom_launch(const tocl_custom_kernel *k, int dev, int stream, int dims, const size_t *global,
                               const size_t *local, const tocl_custom_arg *args, int nargs,
                               tocl_custom_fault *fault);

/* The bytes a parameter of `p`'s type takes from `values` (count of them):
 * converted to the declared type with range checks. has_fp64 = 0 refuses
 * double. *size receives the byte count (at most 128). Pure: used by
 * tocl_custom_launch and tested without a device. */
tocl_status tocl_custom_scalar_bytes(const tocl_custom_param *p, const tocl_scalar *values, int count,
                                     int has_fp64, int has_fp16, unsigned char *out, size_t *size,
                                     tocl_custom_fault *fault);

/* Parse and rewrite without building (tests, and the parser's golden
 * checks): *text is malloc'ed. */
tocl_status tocl_custom_rewrite(const char *source, const char *defines, char **text);

/* Tests only: pretend devices lack cl_khr_fp64 for custom kernels. */
void tocl_custom_test_hide_fp64(int hide);

#ifdef __cplusplus
}
#endif
#endif
