/* kernel_launch.c - the hand-written kernel families (factory, random,
 * sort, index/shape, GEMM, convolution, the nn row kernels, ...): their
 * kernels as one kind of the one kernel cache (program/kernels.c), keyed by
 * (family, kernel name, build options), and the launch helper that goes
 * with them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel_source.h"
#include "launch/launch.h"
#include "queue/trace.h"

#define OPTIONS_CAP 480

#define GENERATED_MARKER "/* TOCL_GENERATED */"

typedef struct family_key {
    const char *family, *name; /* string literals */
    const char *generated;     /* text for the family's generated section (kept for the process), or NULL */
    char options[OPTIONS_CAP];
} family_key;

static int family_equal(const void *a, const void *b) {
    const family_key *x = a, *y = b;
    return x->generated == y->generated && !strcmp(x->name, y->name) && !strcmp(x->family, y->family) &&
           !strcmp(x->options, y->options);
}

/* The family's text with `generated` in place of its marker line. */
static tocl_status splice(const char *family, const char *src, const char *generated, char **out) {
    const char *at = strstr(src, GENERATED_MARKER);
    if (!at)
        return tocl_fail(TOCL_E_INTERNAL, "kernels/%s.cl has no %s marker for its generated code", family,
                         GENERATED_MARKER);
    size_t head = (size_t)(at - src), gen = strlen(generated), tail = strlen(at + strlen(GENERATED_MARKER));
    char *text = malloc(head + gen + tail + 1);
    if (!text)
        return tocl_fail(TOCL_E_OOM, "out of host memory building kernels/%s.cl", family);
    memcpy(text, src, head);
    memcpy(text + head, generated, gen);
    memcpy(text + head + gen, at + strlen(GENERATED_MARKER), tail + 1);
    *out = text;
    return TOCL_OK;
}

static tocl_status family_create(int dev, const void *key, cl_kernel *out) {
    const family_key *k = key;
    const char *src;
    char *spliced = NULL;
    TOCL_TRY(tocl_kernel_source(k->family, &src));
    if (k->generated) {
        TOCL_TRY(splice(k->family, src, k->generated, &spliced));
        src = spliced;
    }
    tocl_status s = tocl_kernel_create(dev, src, k->options, k->name, out);
    free(spliced);
    if (s != TOCL_OK)
        tocl_error_context("building kernel %s of %s.cl with options '%s'", k->name, k->family, k->options);
    return s;
}

static tocl_kernel_kind family_kind = {
    .what = "hand-written", .key_size = sizeof(family_key), .equal = family_equal, .create = family_create};

tocl_status tocl_ops_kernel_get(int dev, const char *family, const char *name, const char *options,
                                tocl_ops_kernel **out) {
    return tocl_ops_kernel_get_generated(dev, family, name, options, NULL, out);
}

tocl_status tocl_ops_kernel_get_generated(int dev, const char *family, const char *name, const char *options,
                                          const char *generated, tocl_ops_kernel **out) {
    /* Only the strings are hashed and compared, so the key is filled
     * without clearing its unused bytes. */
    static _Thread_local family_key k;
    size_t n = strlen(options);
    if (n >= OPTIONS_CAP)
        return tocl_fail(TOCL_E_INVALID, "build options of kernel %s are %zu bytes; at most %d", name, n,
                         OPTIONS_CAP - 1);
    k.family = family;
    k.name = name;
    k.generated = generated;
    memcpy(k.options, options, n + 1);
    uint64_t h = tocl_kernels_hash_bytes(0, family, strlen(family));
    h = tocl_kernels_hash_bytes(h, &generated, sizeof generated);
    h = tocl_kernels_hash_bytes(h, name, strlen(name));
    h = tocl_kernels_hash_bytes(h, options, n);
    return tocl_kernels_get(&family_kind, dev, &k, h, out);
}

size_t tocl_ops_kernel_max_group(int dev, const tocl_ops_kernel *k) {
    size_t kmax = 0;
    if (clGetKernelWorkGroupInfo(k->kernel, tocl_dev_id(dev), CL_KERNEL_WORK_GROUP_SIZE, sizeof kmax, &kmax, NULL) !=
            CL_SUCCESS || kmax == 0)
        kmax = 1;
    return kmax;
}

const char *tocl_ops_kernel_name(const tocl_ops_kernel *k) {
    const family_key *key = k->key;
    return key->name;
}

tocl_status tocl_ops_launch(int dev, int stream, tocl_ops_kernel *k, cl_uint dims, const size_t *global,
                            const size_t *local, const tocl_ops_arg *args, int nargs) {
    size_t items = 1;
    for (cl_uint d = 0; d < dims; d++)
        items *= global[d];
    if (items == 0)
        return TOCL_OK;
    cl_command_queue q;
    TOCL_TRY(tocl_queue_get(dev, stream, &q));
    cl_int err = CL_SUCCESS;
    pthread_mutex_lock(&k->lock);
    for (int i = 0; i < nargs && err == CL_SUCCESS; i++)
        err = clSetKernelArg(k->kernel, (cl_uint)i, args[i].size, args[i].ptr);
    cl_event ev, *evp = tocl_trace_slot(&ev);
    if (err == CL_SUCCESS) {
        err = clEnqueueNDRangeKernel(q, k->kernel, dims, NULL, global, local, 0, NULL, evp);
        TOCL_TRACE_KEEP(evp, err, TOCL_TRACE_KERNEL, dev, stream, tocl_ops_kernel_name(k), 0);
    }
    pthread_mutex_unlock(&k->lock);
    if (err != CL_SUCCESS) {
        const family_key *key = k->key;
        return tocl_fail(TOCL_E_OPENCL, "launching %s (%s.cl, %zu work-items in groups of %zu) on device %d: %s (%d)",
                         key->name, key->family, items, local ? local[0] : (size_t)0, dev, tocl_cl_error_name(err),
                         (int)err);
    }
    return TOCL_OK;
}
