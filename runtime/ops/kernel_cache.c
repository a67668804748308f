/* kernel_cache.c - the one cache of kernel objects used by every op family
 * with hand-written kernels (factory, random, sort, index/shape, GEMM and
 * the nn row kernels), and the launch helper that goes with it.
 *
 * The program cache (runtime/program) already keeps built programs, in
 * memory and on disk; this layer keeps the cl_kernel made from them, so a
 * launch costs no clCreateKernel. A cl_kernel holds its arguments, so each
 * entry has a lock that makes set-args + enqueue one step. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel_source.h"
#include "ops/ops_internal.h"

static tocl_ops_kernel *cache;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static tocl_ops_kernel *find(int dev, const char *family, const char *name, const char *options) {
    for (tocl_ops_kernel *e = cache; e; e = e->next)
        if (e->dev == dev && !strcmp(e->name, name) && !strcmp(e->family, family) && !strcmp(e->options, options))
            return e;
    return NULL;
}

static void entry_free(tocl_ops_kernel *e) {
    if (e->kernel)
        clReleaseKernel(e->kernel);
    free(e->options);
    free(e);
}

tocl_status tocl_ops_kernel_get(int dev, const char *family, const char *name, const char *options,
                                tocl_ops_kernel **out) {
    pthread_mutex_lock(&cache_lock);
    tocl_ops_kernel *e = find(dev, family, name, options);
    pthread_mutex_unlock(&cache_lock);
    if (e) {
        *out = e;
        return TOCL_OK;
    }
    const char *src;
    TOCL_TRY(tocl_kernel_source(family, &src));
    e = calloc(1, sizeof *e);
    if (!e || !(e->options = strdup(options))) {
        free(e);
        return tocl_fail(TOCL_E_OOM, "out of host memory creating kernel %s", name);
    }
    tocl_status s = tocl_kernel_create(dev, src, options, name, &e->kernel);
    if (s != TOCL_OK) {
        entry_free(e);
        tocl_error_context("building kernel %s of %s.cl with options '%s'", name, family, options);
        return s;
    }
    e->dev = dev;
    e->family = family;
    e->name = name;
    e->local = tocl_ops_local_size(dev, e->kernel);
    pthread_mutex_init(&e->lock, NULL);
    pthread_mutex_lock(&cache_lock);
    tocl_ops_kernel *won = find(dev, family, name, options);
    if (won) { /* another thread built it meanwhile */
        pthread_mutex_unlock(&cache_lock);
        pthread_mutex_destroy(&e->lock);
        entry_free(e);
        *out = won;
        return TOCL_OK;
    }
    e->next = cache;
    cache = e;
    pthread_mutex_unlock(&cache_lock);
    *out = e;
    return TOCL_OK;
}

size_t tocl_ops_kernel_max_group(int dev, const tocl_ops_kernel *k) {
    size_t kmax = 0;
    if (clGetKernelWorkGroupInfo(k->kernel, tocl_dev_id(dev), CL_KERNEL_WORK_GROUP_SIZE, sizeof kmax, &kmax, NULL) !=
            CL_SUCCESS || kmax == 0)
        kmax = 1;
    return kmax;
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
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(q, k->kernel, dims, NULL, global, local, 0, NULL, NULL);
    pthread_mutex_unlock(&k->lock);
    if (err != CL_SUCCESS)
        return tocl_fail(TOCL_E_OPENCL, "launching %s (%s.cl, %zu work-items in groups of %zu) on device %d: %s (%d)",
                         k->name, k->family, items, local ? local[0] : (size_t)0, dev, tocl_cl_error_name(err),
                         (int)err);
    return TOCL_OK;
}
