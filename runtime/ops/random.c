/* random.c - tocl_op_uniform / tocl_op_normal: launches the Philox4x32-10
 * kernels of kernels/philox.cl through a strided destination. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel_source.h"
#include "ops/ops_internal.h"
#include "philox_params.h"

enum { KIND_UNIFORM = 0, KIND_NORMAL = 1 };

/* One kernel object per (device, dtype, kind); entries live for the process. */
typedef struct rng_entry {
    struct rng_entry *next;
    int dev, kind;
    tocl_dtype dtype;
    cl_kernel kernel;
    size_t local;
    pthread_mutex_t lock; /* set-args + enqueue as one step */
} rng_entry;

static rng_entry *rng_cache;
static pthread_mutex_t rng_lock = PTHREAD_MUTEX_INITIALIZER;

static rng_entry *rng_find(int dev, tocl_dtype dt, int kind) {
    for (rng_entry *e = rng_cache; e; e = e->next)
        if (e->dev == dev && e->dtype == dt && e->kind == kind)
            return e;
    return NULL;
}

static tocl_status rng_kernel(int dev, tocl_dtype dt, int kind, rng_entry **out) {
    pthread_mutex_lock(&rng_lock);
    rng_entry *e = rng_find(dev, dt, kind);
    pthread_mutex_unlock(&rng_lock);
    if (e) {
        *out = e;
        return TOCL_OK;
    }
    const char *src, *opt = dt == TOCL_F64 ? "-DTOCL_DST_F64" : dt == TOCL_F16 ? "-DTOCL_DST_F16"
                                         : dt == TOCL_BF16 ? "-DTOCL_DST_BF16" : "-DTOCL_DST_F32";
    TOCL_TRY(tocl_kernel_source("philox", &src));
    e = calloc(1, sizeof *e);
    if (!e)
        return tocl_fail(TOCL_E_OOM, "out of host memory creating a Philox kernel");
    tocl_status s = tocl_kernel_create(dev, src, opt, kind == KIND_UNIFORM ? "tocl_philox_uniform"
                                                                           : "tocl_philox_normal", &e->kernel);
    if (s != TOCL_OK) {
        free(e);
        return s;
    }
    e->dev = dev;
    e->dtype = dt;
    e->kind = kind;
    e->local = tocl_ops_local_size(dev, e->kernel);
    pthread_mutex_init(&e->lock, NULL);
    pthread_mutex_lock(&rng_lock);
    rng_entry *won = rng_find(dev, dt, kind);
    if (won) { /* another thread built it meanwhile */
        pthread_mutex_unlock(&rng_lock);
        clReleaseKernel(e->kernel);
        pthread_mutex_destroy(&e->lock);
        free(e);
        *out = won;
        return TOCL_OK;
    }
    e->next = rng_cache;
    rng_cache = e;
    pthread_mutex_unlock(&rng_lock);
    *out = e;
    return TOCL_OK;
}

/* Logical (row-major) order must be kept, so dimensions are only dropped
 * (size 1) or merged when already nested row-major; never reordered. */
static void rng_collapse(const tocl_tensor *t, tocl_philox_params *p) {
    int r = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->sizes[d] == 1)
            continue;
        if (r > 0 && p->strides[r - 1] == t->strides[d] * t->sizes[d]) {
            p->sizes[r - 1] *= t->sizes[d];
            p->strides[r - 1] = t->strides[d];
        } else {
            p->sizes[r] = t->sizes[d];
            p->strides[r] = t->strides[d];
            r++;
        }
    }
    p->ndim = (r == 0 || (r == 1 && p->strides[0] == 1)) ? 0 : r;
}

static tocl_status rng_run(int dev, int stream, const tocl_tensor *dst, int kind, double a, double b, uint64_t seed,
                           uint64_t offset) {
    const char *what = kind == KIND_UNIFORM ? "uniform" : "normal";
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(tocl_ops_check_tensor(dst, what));
    if (!tocl_dtype_is_float(dst->dtype))
        return tocl_fail(TOCL_E_UNSUPPORTED, "%s random numbers for dtype %s are not supported; use a floating "
                         "dtype (float16, bfloat16, float32, float64)", what, tocl_dtype_name(dst->dtype));
    if (dst->dtype == TOCL_F64 && !tocl_dev_props(dev)->has_fp64)
        return tocl_fail(TOCL_E_UNSUPPORTED, "float64 is not supported on device %d (%s): it lacks cl_khr_fp64",
                         dev, tocl_dev_props(dev)->name);
    if (kind == KIND_UNIFORM && !(isfinite(a) && isfinite(b) && a <= b))
        return tocl_fail(TOCL_E_INVALID, "uniform expects finite from <= to, got from=%g to=%g", a, b);
    if (kind == KIND_NORMAL && !(isfinite(a) && isfinite(b) && b >= 0))
        return tocl_fail(TOCL_E_INVALID, "normal expects a finite mean and std >= 0, got mean=%g std=%g", a, b);
    for (int d = 0; d < dst->ndim; d++)
        if (dst->strides[d] == 0 && dst->sizes[d] > 1)
            return tocl_fail(TOCL_E_INVALID, "%s: destination has stride 0 in dim %d of size %lld", what, d,
                             (long long)dst->sizes[d]);
    int64_t numel = tocl_ops_numel(dst);
    if (numel == 0)
        return TOCL_OK;

    tocl_philox_params p;
    memset(&p, 0, sizeof p);
    p.seed = seed;
    p.offset = offset;
    p.n = numel;
    rng_collapse(dst, &p);
    cl_mem buf;
    cl_long off;
    int mdev;
    TOCL_TRY(tocl_ops_resolve(dev, dst, what, 0, &buf, &off, &mdev));
    if (mdev != dev)
        return tocl_fail(TOCL_E_INVALID, "%s: destination lives on device %d, not on device %d", what, mdev, dev);
    p.dst_off = off;
    cl_command_queue q;
    TOCL_TRY(tocl_queue_get(dev, stream, &q));
    rng_entry *e = NULL;
    TOCL_TRY(rng_kernel(dev, dst->dtype, kind, &e));

    /* Parameters travel in the compute type: double only for float64. */
    float fa = (float)a, fb = (float)b;
    size_t psz = dst->dtype == TOCL_F64 ? sizeof(double) : sizeof(float);
    const void *pa = dst->dtype == TOCL_F64 ? (const void *)&a : (const void *)&fa;
    const void *pb = dst->dtype == TOCL_F64 ? (const void *)&b : (const void *)&fb;
    size_t groups = (size_t)((numel + 3) / 4); /* one work-item per counter */
    size_t global = (groups + e->local - 1) / e->local * e->local;
    pthread_mutex_lock(&e->lock);
    cl_int err = clSetKernelArg(e->kernel, 0, sizeof(cl_mem), &buf);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(e->kernel, 1, sizeof p, &p);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(e->kernel, 2, psz, pa);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(e->kernel, 3, psz, pb);
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(q, e->kernel, 1, NULL, &global, &e->local, 0, NULL, NULL);
    pthread_mutex_unlock(&e->lock);
    if (err != CL_SUCCESS)
        return tocl_fail(TOCL_E_OPENCL, "launching Philox %s kernel (%s, %lld elements) on device %d: %s (%d)", what,
                         tocl_dtype_name(dst->dtype), (long long)numel, dev, tocl_cl_error_name(err), (int)err);
    return TOCL_OK;
}

tocl_status tocl_op_uniform(int dev, int stream, const tocl_tensor *dst, double from, double to, uint64_t seed,
                            uint64_t offset) {
    return rng_run(dev, stream, dst, KIND_UNIFORM, from, to, seed, offset);
}

tocl_status tocl_op_normal(int dev, int stream, const tocl_tensor *dst, double mean, double std, uint64_t seed,
                           uint64_t offset) {
    return rng_run(dev, stream, dst, KIND_NORMAL, mean, std, seed, offset);
}
