/* custom.c - user kernel libraries: interning, building through the
 * program cache, kernel objects through the one kernel cache, and the
 * checked launch (see tocl/custom.h). */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "custom/custom_internal.h"
#include "launch/launch.h"
#include "queue/trace.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static tocl_custom_lib *g_libs;
static int g_hide_fp64;

void tocl_custom_test_hide_fp64(int hide) { __atomic_store_n(&g_hide_fp64, hide, __ATOMIC_RELAXED); }

static int same(const char *a, const char *b) { return !strcmp(a ? a : "", b ? b : ""); }

static void lib_free(tocl_custom_lib *lib) {
    if (!lib)
        return;
    free(lib->source);
    free(lib->options);
    free(lib->defines);
    free(lib->text);
    free(lib->kernels);
    free(lib);
}

/* ---- kernel objects: one kind of the kernel cache, keyed by the kernel ---- */

typedef struct custom_key {
    const tocl_custom_kernel *k; /* lives for the process */
} custom_key;

static tocl_status custom_create(int dev, const void *key, cl_kernel *out) {
    const tocl_custom_kernel *k = ((const custom_key *)key)->k;
    return tocl_kernel_create(dev, k->lib->text, k->lib->options, k->name, out);
}

static tocl_kernel_kind custom_kind = {.what = "custom", .key_size = sizeof(custom_key), .create = custom_create};

static tocl_status kernel_entry(const tocl_custom_kernel *k, int dev, tocl_kernel_entry **out) {
    custom_key key = {k};
    return tocl_kernels_get(&custom_kind, dev, &key, tocl_kernels_hash_bytes(0, &key, sizeof key), out);
}

/* ---- libraries ---- */

/* Build for dev; with `first`, also drop the parsed kernels the
 * preprocessor removed (#if/#ifdef around a kernel). */
static tocl_status prepare(tocl_custom_lib *lib, int dev, int first) {
    TOCL_TRY(tocl_device_check(dev));
    cl_program prog;
    tocl_status s = tocl_program_get(dev, lib->text, lib->options, &prog);
    if (s != TOCL_OK) {
        if (s == TOCL_E_BUILD)
            tocl_error_context("torch_ocl.compile_kernel: building the source on ocl:%d (line numbers are the "
                               "source's own; pointer parameters appear rewritten as p__tocl_buf, p__tocl_off)",
                               dev);
        return s;
    }
    if (first) {
        size_t n = 0;
        TOCL_CL_TRY(clGetProgramInfo(prog, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &n),
                    "clGetProgramInfo(CL_PROGRAM_KERNEL_NAMES)");
        char *names = malloc(n + 2);
        if (!names)
            return tocl_fail(TOCL_E_OOM, "out of host memory for kernel names");
        names[0] = ';';
        cl_int err = clGetProgramInfo(prog, CL_PROGRAM_KERNEL_NAMES, n, names + 1, NULL);
        names[n] = ';';
        names[n + 1] = '\0';
        int kept = 0;
        for (int i = 0; err == CL_SUCCESS && i < lib->nkernels; i++) {
            char key[TOCL_CUSTOM_NAME_MAX + 2];
            snprintf(key, sizeof key, ";%s;", lib->kernels[i].name);
            if (strstr(names, key))
                lib->kernels[kept++] = lib->kernels[i];
        }
        free(names);
        TOCL_CL_TRY(err, "clGetProgramInfo(CL_PROGRAM_KERNEL_NAMES)");
        if (kept == 0)
            return tocl_fail(TOCL_E_INVALID, "compile_kernel: the preprocessor removed every kernel of the source");
        lib->nkernels = kept;
        for (int i = 0; i < kept; i++)
            lib->kernels[i].lib = lib;
    }
    for (int i = 0; i < lib->nkernels; i++) {
        tocl_kernel_entry *e;
        TOCL_TRY(kernel_entry(&lib->kernels[i], dev, &e));
    }
    return TOCL_OK;
}

tocl_status tocl_custom_prepare(tocl_custom_lib *lib, int dev) { return prepare(lib, dev, 0); }

tocl_status tocl_custom_compile(int dev, const char *source, const char *options, const char *defines,
                                tocl_custom_lib **out) {
    if (!source || !out)
        return tocl_fail(TOCL_E_INVALID, "tocl_custom_compile: source and out must not be NULL");
    TOCL_TRY(tocl_device_check(dev));
    /* A kernel calling clang's AMX tile builtins on a PoCL CPU device runs on
     * threads of this process, which die by SIGILL until Linux has granted
     * the tiles: ask first, as the runtime does for its own tile kernels. */
    if (tocl_dev_is_pocl(dev) && (strstr(source, "__builtin_ia32_til") || strstr(source, "__builtin_ia32_tdp")))
        (void)tocl_host_amx_permit();
    pthread_mutex_lock(&g_lock);
    tocl_custom_lib *lib = g_libs;
    for (; lib; lib = lib->next)
        if (!strcmp(lib->source, source) && same(lib->options, options) && same(lib->defines, defines))
            break;
    pthread_mutex_unlock(&g_lock);
    if (lib) {
        TOCL_TRY(tocl_custom_prepare(lib, dev));
        *out = lib;
        return TOCL_OK;
    }
    lib = calloc(1, sizeof *lib);
    if (!lib)
        return tocl_fail(TOCL_E_OOM, "out of host memory for a kernel library");
    lib->source = strdup(source);
    lib->options = strdup(options ? options : "");
    lib->defines = strdup(defines ? defines : "");
    if (!lib->source || !lib->options || !lib->defines) {
        lib_free(lib);
        return tocl_fail(TOCL_E_OOM, "out of host memory for a kernel library");
    }
    tocl_status s = tocl_custom_parse(source, defines, &lib->kernels, &lib->nkernels, &lib->text);
    int built = 0;
    if (s == TOCL_OK) {
        for (int i = 0; i < lib->nkernels; i++)
            lib->kernels[i].lib = lib;
        s = prepare(lib, dev, 1);
        built = s != TOCL_E_BUILD;
    }
    if (s != TOCL_OK) {
        /* A failed build leaves nothing in the program or kernel caches, so
         * the library can go. After a build, kernel cache entries may be
         * keyed by its kernels' addresses: it is kept (a few KiB) so that
         * no later library can reuse those addresses. */
        if (!built)
            lib_free(lib);
        return s;
    }
    pthread_mutex_lock(&g_lock);
    tocl_custom_lib *won = g_libs;
    for (; won; won = won->next)
        if (!strcmp(won->source, source) && same(won->options, options) && same(won->defines, defines))
            break;
    if (!won) {
        lib->next = g_libs;
        g_libs = lib;
    }
    pthread_mutex_unlock(&g_lock);
    /* Another thread interned the same library first: its kernel entries
     * are keyed by its kernels, ours were made for nothing but are valid
     * (entries live for the process), so keep ours alive too. */
    *out = won ? won : lib;
    return TOCL_OK;
}

int tocl_custom_kernel_count(const tocl_custom_lib *lib) { return lib->nkernels; }
const tocl_custom_kernel *tocl_custom_kernel_at(const tocl_custom_lib *lib, int i) {
    return i >= 0 && i < lib->nkernels ? &lib->kernels[i] : NULL;
}
const tocl_custom_kernel *tocl_custom_kernel_find(const tocl_custom_lib *lib, const char *name) {
    for (int i = 0; i < lib->nkernels; i++)
        if (!strcmp(lib->kernels[i].name, name))
            return &lib->kernels[i];
    return NULL;
}
const char *tocl_custom_lib_text(const tocl_custom_lib *lib) { return lib->text; }
const char *tocl_custom_lib_options(const tocl_custom_lib *lib) { return lib->options; }
const char *tocl_custom_kernel_name(const tocl_custom_kernel *k) { return k->name; }
int tocl_custom_param_count(const tocl_custom_kernel *k) { return k->nparams; }
const tocl_custom_param *tocl_custom_param_at(const tocl_custom_kernel *k, int i) {
    return i >= 0 && i < k->nparams ? &k->params[i] : NULL;
}

static tocl_status query_limits(const tocl_custom_kernel *k, int dev, tocl_kernel_entry *e, tocl_custom_limits *out) {
    memset(out, 0, sizeof *out);
    cl_device_id id = tocl_dev_id(dev);
    size_t wg = 0, mult = 0;
    cl_ulong lmem = 0, pmem = 0;
    TOCL_CL_TRY(clGetKernelWorkGroupInfo(e->kernel, id, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL),
                "clGetKernelWorkGroupInfo(CL_KERNEL_WORK_GROUP_SIZE)");
    TOCL_CL_TRY(clGetKernelWorkGroupInfo(e->kernel, id, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof mult,
                                         &mult, NULL),
                "clGetKernelWorkGroupInfo(CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE)");
    TOCL_CL_TRY(clGetKernelWorkGroupInfo(e->kernel, id, CL_KERNEL_LOCAL_MEM_SIZE, sizeof lmem, &lmem, NULL),
                "clGetKernelWorkGroupInfo(CL_KERNEL_LOCAL_MEM_SIZE)");
    if (clGetKernelWorkGroupInfo(e->kernel, id, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof pmem, &pmem, NULL) != CL_SUCCESS)
        pmem = 0;
    size_t dims[3] = {0, 0, 0};
    TOCL_CL_TRY(clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof dims, dims, NULL),
                "clGetDeviceInfo(CL_DEVICE_MAX_WORK_ITEM_SIZES)");
    out->max_work_group_size = wg;
    out->preferred_group_multiple = mult;
    out->local_mem_bytes = lmem;
    out->private_mem_bytes = pmem;
    out->device_local_mem_bytes = tocl_dev_props(dev)->local_mem_bytes;
    for (int d = 0; d < 3; d++)
        out->device_max_group_dims[d] = dims[d];
    return TOCL_OK;
}

/* The kernel object and limits of k on dev, remembered for the first
 * devices (the kernel struct lives for the process; its cache slots are
 * the only part written after compile). */
static tocl_status kernel_state(const tocl_custom_kernel *k, int dev, tocl_kernel_entry **e, tocl_custom_limits *lim) {
    tocl_custom_kernel *mk = (tocl_custom_kernel *)k;
    if (dev >= 0 && dev < TOCL_CUSTOM_FAST_DEVICES && __atomic_load_n(&mk->ready[dev], __ATOMIC_ACQUIRE)) {
        *e = mk->entry[dev];
        *lim = mk->limits[dev];
        return TOCL_OK;
    }
    TOCL_TRY(kernel_entry(k, dev, e));
    TOCL_TRY(query_limits(k, dev, *e, lim));
    if (dev >= 0 && dev < TOCL_CUSTOM_FAST_DEVICES) {
        /* Two threads may both fill the slot; they write the same values. */
        mk->entry[dev] = *e;
        mk->limits[dev] = *lim;
        __atomic_store_n(&mk->ready[dev], 1, __ATOMIC_RELEASE);
    }
    return TOCL_OK;
}

tocl_status tocl_custom_kernel_limits(const tocl_custom_kernel *k, int dev, tocl_custom_limits *out) {
    TOCL_TRY(tocl_device_check(dev));
    tocl_kernel_entry *e;
    return kernel_state(k, dev, &e, out);
}

/* ---- scalars ---- */

static size_t base_size(tocl_custom_type t) {
    switch (t) {
    case TOCL_CT_CHAR: case TOCL_CT_UCHAR: return 1;
    case TOCL_CT_SHORT: case TOCL_CT_USHORT: case TOCL_CT_HALF: return 2;
    case TOCL_CT_INT: case TOCL_CT_UINT: case TOCL_CT_FLOAT: return 4;
    case TOCL_CT_LONG: case TOCL_CT_ULONG: case TOCL_CT_DOUBLE: return 8;
    default: return 0;
    }
}

static tocl_status fault_fail(tocl_custom_fault *fault, tocl_custom_fault kind, tocl_status s) {
    if (fault)
        *fault = kind;
    return s;
}

#define FAIL_TYPE(...) fault_fail(fault, TOCL_CUSTOM_FAULT_TYPE, tocl_fail(TOCL_E_INVALID, __VA_ARGS__))
#define FAIL_VALUE(...) fault_fail(fault, TOCL_CUSTOM_FAULT_VALUE, tocl_fail(TOCL_E_INVALID, __VA_ARGS__))

tocl_status tocl_custom_scalar_bytes(const tocl_custom_param *p, const tocl_scalar *values, int count,
                                     int has_fp64, int has_fp16, unsigned char *out, size_t *size,
                                     tocl_custom_fault *fault) {
    size_t es = base_size(p->base);
    int vec = p->vec, slots = vec == 3 ? 4 : vec;
    if (p->kind != TOCL_CUSTOM_SCALAR || !es)
        return FAIL_TYPE("(%s, declared %s) does not take numbers", p->name, p->decl);
    if (count != 1 && count != vec)
        return FAIL_VALUE("(%s, declared %s) takes one number or %d; got %d", p->name, p->decl, vec, count);
    if (p->base == TOCL_CT_DOUBLE && !has_fp64)
        return FAIL_TYPE("(%s, declared %s): the device has no cl_khr_fp64 (no double precision); "
                         "declare it float",
                         p->name, p->decl);
    if (p->base == TOCL_CT_HALF && !has_fp16)
        return FAIL_TYPE("(%s, declared %s): the device has no cl_khr_fp16; declare it float and "
                         "convert in the kernel",
                         p->name, p->decl);
    memset(out, 0, es * (size_t)slots);
    for (int j = 0; j < vec; j++) {
        tocl_scalar v = values[count == 1 ? 0 : j];
        unsigned char *dst = out + (size_t)j * es;
        if (p->base == TOCL_CT_FLOAT || p->base == TOCL_CT_DOUBLE || p->base == TOCL_CT_HALF) {
            double f = v.is_float ? v.f : (double)v.i;
            if (p->base == TOCL_CT_DOUBLE) {
                memcpy(dst, &f, 8);
            } else {
                if (isfinite(f) && fabs(f) > (p->base == TOCL_CT_HALF ? 65504.0 : 3.4028234663852886e38))
                    return FAIL_VALUE("(%s, declared %s): %g is out of its range", p->name, p->decl, f);
                tocl_ops_scalar_bits((tocl_scalar){1, f, 0}, p->base == TOCL_CT_HALF ? TOCL_F16 : TOCL_F32, dst);
            }
            continue;
        }
        if (v.is_float)
            return FAIL_TYPE("(%s, declared %s) takes an int, not the float %g", p->name, p->decl, v.f);
        int64_t i = v.i;
        int is_unsigned = p->base == TOCL_CT_UCHAR || p->base == TOCL_CT_USHORT || p->base == TOCL_CT_UINT ||
                          p->base == TOCL_CT_ULONG;
        int bits = (int)es * 8;
        int64_t lo = is_unsigned ? 0 : bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
        int64_t hi = bits == 64 ? INT64_MAX : is_unsigned ? ((int64_t)1 << bits) - 1 : ((int64_t)1 << (bits - 1)) - 1;
        if (i < lo || i > hi)
            return FAIL_VALUE("(%s, declared %s): %" PRId64 " is out of its range [%" PRId64 ", %" PRId64 "]",
                              p->name, p->decl, i, lo, hi);
        uint64_t u = (uint64_t)i; /* little-endian hosts and devices: the low bytes */
        memcpy(dst, &u, es);
    }
    *size = es * (size_t)slots;
    return TOCL_OK;
}

/* ---- launch ---- */

/* Whether a tensor of dtype d may be passed for a pointer to t. */
static int dtype_fits(tocl_custom_type t, tocl_dtype d) {
    switch (t) {
    case TOCL_CT_CHAR: return d == TOCL_I8;
    case TOCL_CT_UCHAR: return d == TOCL_U8 || d == TOCL_BOOL;
    case TOCL_CT_SHORT: return d == TOCL_I16;
    case TOCL_CT_USHORT: return d == TOCL_F16 || d == TOCL_BF16; /* raw 16-bit storage */
    case TOCL_CT_INT: return d == TOCL_I32;
    case TOCL_CT_UINT: return 0;
    case TOCL_CT_LONG: return d == TOCL_I64;
    case TOCL_CT_ULONG: return 0;
    case TOCL_CT_HALF: return d == TOCL_F16;
    case TOCL_CT_FLOAT: return d == TOCL_F32;
    case TOCL_CT_DOUBLE: return d == TOCL_F64;
    case TOCL_CT_BOOL: return d == TOCL_BOOL;
    default: return 1; /* void, structs, typedefs: raw memory */
    }
}

static const char *expected_dtypes(tocl_custom_type t) {
    switch (t) {
    case TOCL_CT_CHAR: return "int8";
    case TOCL_CT_UCHAR: return "uint8 or bool";
    case TOCL_CT_SHORT: return "int16";
    case TOCL_CT_USHORT: return "float16 or bfloat16 (as raw 16-bit values)";
    case TOCL_CT_INT: return "int32";
    case TOCL_CT_LONG: return "int64";
    case TOCL_CT_HALF: return "float16";
    case TOCL_CT_FLOAT: return "float32";
    case TOCL_CT_DOUBLE: return "float64";
    case TOCL_CT_BOOL: return "bool";
    default: return "none of torch's dtypes (declare int/long, or void*)";
    }
}

static void param_list(const tocl_custom_kernel *k, char *buf, size_t cap) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < k->nparams && used + 1 < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", k->params[i].name);
}

static const char *kind_word(tocl_custom_kind kind) {
    return kind == TOCL_CUSTOM_BUFFER ? "a tensor" : kind == TOCL_CUSTOM_LOCAL ? "torch_ocl.Local" : "a number";
}

tocl_status tocl_custom_launch(const tocl_custom_kernel *k, int dev, int stream, int dims, const size_t *global,
                               const size_t *local, const tocl_custom_arg *args, int nargs,
                               tocl_custom_fault *fault) {
    if (fault)
        *fault = TOCL_CUSTOM_FAULT_NONE;
    TOCL_TRY(tocl_device_check(dev));
    if (nargs != k->nparams) {
        char names[1024];
        param_list(k, names, sizeof names);
        return FAIL_TYPE("kernel %s takes %d arguments (%s); got %d", k->name, k->nparams, names, nargs);
    }
    if (dims < 1 || dims > 3)
        return FAIL_VALUE("kernel %s: threads must have 1, 2 or 3 dimensions; got %d", k->name, dims);
    tocl_kernel_entry *e;
    tocl_custom_limits lim;
    TOCL_TRY(kernel_state(k, dev, &e, &lim));
    size_t items = 1;
    for (int d = 0; d < dims; d++)
        items *= global[d];
    if (local) {
        size_t group = 1;
        for (int d = 0; d < dims; d++) {
            if (local[d] == 0)
                return FAIL_VALUE("kernel %s: group_size must be positive in every dimension", k->name);
            if (global[d] % local[d])
                return FAIL_VALUE("kernel %s: group_size %zu does not divide threads %zu in dimension %d (OpenCL "
                                  "1.2 devices run whole work-groups only): round threads up to a multiple of "
                                  "the group size and skip the extra work-items in the kernel",
                                  k->name, local[d], global[d], d);
            if (local[d] > lim.device_max_group_dims[d])
                return FAIL_VALUE("kernel %s: group_size %zu in dimension %d is over the device's limit %" PRIu64,
                                  k->name, local[d], d, lim.device_max_group_dims[d]);
            group *= local[d];
        }
        if (group > lim.max_work_group_size)
            return FAIL_VALUE("kernel %s: a work-group of %zu work-items is over this kernel's limit of %" PRIu64
                              " on this device (max_work_group_size)",
                              k->name, group, lim.max_work_group_size);
    }
    const tocl_device_props *props = tocl_dev_props(dev);
    int has_fp64 = props->has_fp64 && !__atomic_load_n(&g_hide_fp64, __ATOMIC_RELAXED);
    unsigned char scalars[TOCL_CUSTOM_MAX_PARAMS][128];
    size_t scalar_size[TOCL_CUSTOM_MAX_PARAMS];
    cl_mem bufs[TOCL_CUSTOM_MAX_PARAMS];
    cl_ulong offs[TOCL_CUSTOM_MAX_PARAMS];
    uint64_t local_total = lim.local_mem_bytes;
    for (int i = 0; i < nargs; i++) {
        const tocl_custom_param *p = &k->params[i];
        const tocl_custom_arg *a = &args[i];
        if (p->kind == TOCL_CUSTOM_UNSUPPORTED)
            return FAIL_TYPE("kernel %s: parameter %s (%s) cannot be passed from Python (images, samplers, "
                             "structs by value and pointers to pointers are not supported)",
                             k->name, p->name, p->decl);
        if (a->kind != p->kind)
            return FAIL_TYPE("kernel %s: argument %d (%s, declared %s) takes %s; got %s", k->name, i, p->name,
                             p->decl, kind_word(p->kind), kind_word(a->kind));
        if (p->kind == TOCL_CUSTOM_SCALAR) {
            tocl_status s = tocl_custom_scalar_bytes(p, a->values, a->count, has_fp64, props->has_fp16,
                                                     scalars[i], &scalar_size[i], fault);
            if (s != TOCL_OK) {
                char msg[512];
                snprintf(msg, sizeof msg, "%s", tocl_last_error());
                return tocl_fail(s, "kernel %s: argument %d %s", k->name, i, msg);
            }
        } else if (p->kind == TOCL_CUSTOM_LOCAL) {
            if (a->nbytes == 0)
                return FAIL_VALUE("kernel %s: argument %d (%s) needs Local(nbytes) with nbytes > 0", k->name, i,
                                  p->name);
            local_total += a->nbytes;
        } else {
            if (!dtype_fits(p->base, a->dtype))
                return FAIL_TYPE("kernel %s: argument %d (%s, declared %s) takes %s tensors; got %s", k->name, i,
                                 p->name, p->decl, expected_dtypes(p->base), tocl_dtype_name(a->dtype));
            bufs[i] = NULL;
            offs[i] = 0;
            if (a->addr == 0 && a->nbytes == 0)
                continue; /* an empty tensor: a NULL buffer the kernel must not touch */
            size_t off;
            int mdev = -1;
            if (tocl_mem_resolve(a->addr, &mdev, &bufs[i], &off) != TOCL_OK)
                return FAIL_VALUE("kernel %s: argument %d (%s) is not inside a live ocl allocation", k->name, i,
                                  p->name);
            if (mdev != dev)
                return FAIL_VALUE("kernel %s: argument %d (%s) is on ocl:%d, but the kernel runs on ocl:%d", k->name,
                                  i, p->name, mdev, dev);
            if (tocl_mem_bytes_after(a->addr) < a->nbytes)
                return FAIL_VALUE("kernel %s: argument %d (%s) spans %" PRIu64 " bytes beyond its allocation",
                                  k->name, i, p->name, a->nbytes);
            size_t align = base_size(p->base) * (size_t)(p->vec == 3 ? 4 : p->vec);
            if (align > 1 && off % align)
                return FAIL_VALUE("kernel %s: argument %d (%s, %s) starts at byte offset %zu, not a multiple of its "
                                  "element size %zu",
                                  k->name, i, p->name, p->type, off, align);
            offs[i] = off;
        }
    }
    if (local_total > lim.device_local_mem_bytes)
        return FAIL_VALUE("kernel %s needs %" PRIu64 " bytes of local memory (%" PRIu64 " declared in the kernel, "
                          "the rest from Local arguments); the device has %" PRIu64,
                          k->name, local_total, lim.local_mem_bytes, lim.device_local_mem_bytes);
    if (items == 0)
        return TOCL_OK;
    /* Fused eager's recorded work on this stream runs first. */
    cl_command_queue q;
    TOCL_TRY(tocl_queue_get(dev, stream, &q));
    for (int i = 0; i < nargs; i++)
        if (k->params[i].kind == TOCL_CUSTOM_BUFFER && bufs[i])
            TOCL_TRY(tocl_mem_record_stream(args[i].addr, stream));
    cl_int err = CL_SUCCESS;
    cl_uint ai = 0;
    pthread_mutex_lock(&e->lock);
    for (int i = 0; i < nargs && err == CL_SUCCESS; i++) {
        switch (k->params[i].kind) {
        case TOCL_CUSTOM_BUFFER:
            err = clSetKernelArg(e->kernel, ai++, sizeof(cl_mem), &bufs[i]);
            if (err == CL_SUCCESS)
                err = clSetKernelArg(e->kernel, ai++, sizeof(cl_ulong), &offs[i]);
            break;
        case TOCL_CUSTOM_LOCAL: err = clSetKernelArg(e->kernel, ai++, (size_t)args[i].nbytes, NULL); break;
        default: err = clSetKernelArg(e->kernel, ai++, scalar_size[i], scalars[i]); break;
        }
    }
    /* No group size given: a 1-D range that the runtime's fixed group size
     * divides uses it (PoCL compiles a kernel anew for each local size, and
     * the size it picks itself ran y += a * x over 1024 floats 1.5x slower
     * than 64); otherwise the driver chooses. */
    size_t chosen = e->local;
    if (!local && dims == 1 && chosen > 1 && chosen <= lim.max_work_group_size && global[0] % chosen == 0)
        local = &chosen;
    cl_event ev, *evp = tocl_trace_slot(&ev);
    if (err == CL_SUCCESS) {
        err = clEnqueueNDRangeKernel(q, e->kernel, (cl_uint)dims, NULL, global, local, 0, NULL, evp);
        TOCL_TRACE_KEEP(evp, err, TOCL_TRACE_KERNEL, dev, stream, k->name, 0);
    }
    pthread_mutex_unlock(&e->lock);
    if (err != CL_SUCCESS)
        return tocl_fail(TOCL_E_OPENCL, "launching custom kernel %s (%zu work-items) on ocl:%d: %s (%d)", k->name,
                         items, dev, tocl_cl_error_name(err), (int)err);
    return TOCL_OK;
}
