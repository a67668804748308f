/* random.c - the Philox4x32-10 kernels of kernels/philox.cl: uniform, normal,
 * the other distributions (random_, bernoulli, exponential, ...), randperm
 * and multinomial, each writing through a strided destination. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "launch/launch.h"
#include "philox_params.h"
#include "tocl/random.h"

enum { KIND_UNIFORM = 0, KIND_NORMAL = 1 };

static const char *rng_dtype_option(tocl_dtype dt) {
    static const char *opt[TOCL_NUM_DTYPES] = {
        [TOCL_BOOL] = "-DTOCL_DST_BOOL", [TOCL_U8] = "-DTOCL_DST_U8",   [TOCL_I8] = "-DTOCL_DST_I8",
        [TOCL_I16] = "-DTOCL_DST_I16",   [TOCL_I32] = "-DTOCL_DST_I32", [TOCL_I64] = "-DTOCL_DST_I64",
        [TOCL_F16] = "-DTOCL_DST_F16",   [TOCL_BF16] = "-DTOCL_DST_BF16", [TOCL_F32] = "-DTOCL_DST_F32",
        [TOCL_F64] = "-DTOCL_DST_F64"};
    return (unsigned)dt < TOCL_NUM_DTYPES ? opt[dt] : "-DTOCL_DST_F32";
}

/* The kernel `name` of philox.cl for destination dtype dt (shared cache). */
static tocl_status rng_kernel(int dev, tocl_dtype dt, const char *name, tocl_ops_kernel **out) {
    return tocl_ops_kernel_get(dev, "philox", name, rng_dtype_option(dt), out);
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
    tocl_ops_kernel *e = NULL;
    TOCL_TRY(rng_kernel(dev, dst->dtype, kind == KIND_UNIFORM ? "tocl_philox_uniform" : "tocl_philox_normal", &e));

    /* Parameters travel in the compute type: double only for float64. */
    float fa = (float)a, fb = (float)b;
    size_t psz = dst->dtype == TOCL_F64 ? sizeof(double) : sizeof(float);
    const void *pa = dst->dtype == TOCL_F64 ? (const void *)&a : (const void *)&fa;
    const void *pb = dst->dtype == TOCL_F64 ? (const void *)&b : (const void *)&fb;
    size_t groups = (size_t)((numel + 3) / 4); /* one work-item per counter */
    size_t global = (groups + e->local - 1) / e->local * e->local;
    const tocl_ops_arg args[] = {{sizeof(cl_mem), &buf}, {sizeof p, &p}, {psz, pa}, {psz, pb}};
    return tocl_ops_launch(dev, stream, e, 1, &global, &e->local, args, 4);
}

tocl_status tocl_op_uniform(int dev, int stream, const tocl_tensor *dst, double from, double to, uint64_t seed,
                            uint64_t offset) {
    return rng_run(dev, stream, dst, KIND_UNIFORM, from, to, seed, offset);
}

tocl_status tocl_op_normal(int dev, int stream, const tocl_tensor *dst, double mean, double std, uint64_t seed,
                           uint64_t offset) {
    return rng_run(dev, stream, dst, KIND_NORMAL, mean, std, seed, offset);
}

/* ------------------------------------------------------------------ shared helpers */

typedef tocl_ops_arg rng_arg;

/* Set args and enqueue `items` work-items (rounded up to the local size). */
static tocl_status rng_launch(int dev, int stream, tocl_ops_kernel *e, size_t items, const rng_arg *args, int nargs) {
    size_t global = (items + e->local - 1) / e->local * e->local;
    return tocl_ops_launch(dev, stream, e, 1, &global, &e->local, args, nargs);
}

/* (buffer, element offset) of t, which must live on dev. */
static tocl_status rng_resolve(int dev, const tocl_tensor *t, const char *what, cl_mem *buf, cl_long *off) {
    int mdev;
    TOCL_TRY(tocl_ops_check_tensor(t, what));
    TOCL_TRY(tocl_ops_resolve(dev, t, what, 0, buf, off, &mdev));
    if (mdev != dev)
        return tocl_fail(TOCL_E_INVALID, "%s lives on device %d, not on device %d", what, mdev, dev);
    return TOCL_OK;
}

/* A dense row-major workspace or operand of dtype dt with at least n elements. */
static tocl_status rng_check_dense(const tocl_tensor *t, tocl_dtype dt, int64_t n, const char *what) {
    TOCL_TRY(tocl_ops_check_tensor(t, what));
    if (t->dtype != dt || !tocl_ops_is_contiguous(t) || tocl_ops_numel(t) < n)
        return tocl_fail(TOCL_E_INVALID, "%s must be a contiguous %s tensor of at least %lld elements, got %s with "
                         "%lld elements%s", what, tocl_dtype_name(dt), (long long)n, tocl_dtype_name(t->dtype),
                         (long long)tocl_ops_numel(t), tocl_ops_is_contiguous(t) ? "" : " (not contiguous)");
    return TOCL_OK;
}

/* Destination checks shared by every generator: device, dtype support, no
 * overlapping (stride 0) elements. */
static tocl_status rng_check_dst(int dev, const tocl_tensor *dst, const char *what) {
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(tocl_ops_check_tensor(dst, what));
    if (dst->dtype == TOCL_F64 && !tocl_dev_props(dev)->has_fp64)
        return tocl_fail(TOCL_E_UNSUPPORTED, "float64 is not supported on device %d (%s): it lacks cl_khr_fp64",
                         dev, tocl_dev_props(dev)->name);
    for (int d = 0; d < dst->ndim; d++)
        if (dst->strides[d] == 0 && dst->sizes[d] > 1)
            return tocl_fail(TOCL_E_INVALID, "%s: destination has stride 0 in dim %d of size %lld", what, d,
                             (long long)dst->sizes[d]);
    return TOCL_OK;
}

/* Philox parameters for writing dst in logical order (n = numel(dst)). */
static tocl_status rng_params(int dev, const tocl_tensor *dst, const char *what, uint64_t seed, uint64_t offset,
                              tocl_philox_params *p, cl_mem *buf) {
    memset(p, 0, sizeof *p);
    p->seed = seed;
    p->offset = offset;
    p->n = tocl_ops_numel(dst);
    rng_collapse(dst, p);
    cl_long off;
    TOCL_TRY(rng_resolve(dev, dst, what, buf, &off));
    p->dst_off = off;
    return TOCL_OK;
}

int64_t tocl_rand_sort_length(int64_t n) {
    int64_t m = 1;
    while (m < n)
        m <<= 1;
    return m;
}

/* Bitonic network over npad (a power of two) (key, value) pairs, ascending. */
static tocl_status rng_sort(int dev, int stream, cl_mem kb, cl_long ko, cl_mem vb, cl_long vo,
                            int64_t npad) {
    tocl_ops_kernel *e = NULL;
    TOCL_TRY(rng_kernel(dev, TOCL_I64, "tocl_rng_bitonic_step", &e));
    cl_long np = npad;
    for (cl_long k = 2; k <= np; k <<= 1)
        for (cl_long j = k >> 1; j > 0; j >>= 1) {
            rng_arg a[] = {{sizeof kb, &kb}, {sizeof ko, &ko}, {sizeof vb, &vb}, {sizeof vo, &vo},
                           {sizeof np, &np}, {sizeof j, &j},   {sizeof k, &k}};
            TOCL_TRY(rng_launch(dev, stream, e, (size_t)np, a, 7));
        }
    return TOCL_OK;
}

/* ------------------------------------------------------------------ distributions */

tocl_status tocl_op_random(int dev, int stream, const tocl_tensor *dst, const tocl_rand_args *args,
                           const tocl_tensor *p, uint64_t seed, uint64_t offset) {
    const char *what = "random";
    TOCL_TRY(rng_check_dst(dev, dst, what));
    int kind = args->kind;
    if (kind < TOCL_RAND_FROM_TO || kind > TOCL_RAND_LOG_NORMAL)
        return tocl_fail(TOCL_E_INVALID, "random: unknown distribution kind %d", kind);
    int continuous = kind == TOCL_RAND_EXPONENTIAL || kind == TOCL_RAND_CAUCHY || kind == TOCL_RAND_LOG_NORMAL;
    if (continuous && !tocl_dtype_is_float(dst->dtype))
        return tocl_fail(TOCL_E_UNSUPPORTED, "random: a continuous distribution needs a floating destination, got %s",
                         tocl_dtype_name(dst->dtype));
    if (kind == TOCL_RAND_BERNOULLI && args->range > ((uint64_t)1 << 32))
        return tocl_fail(TOCL_E_INVALID, "bernoulli: threshold %llu exceeds 2^32", (unsigned long long)args->range);
    if (kind == TOCL_RAND_GEOMETRIC && !(args->a > 0 && args->a < 1))
        return tocl_fail(TOCL_E_INVALID, "geometric expects p in (0, 1), got %g", args->a);
    int64_t numel = tocl_ops_numel(dst);
    if (kind == TOCL_RAND_BERNOULLI_TENSOR) {
        if (!p)
            return tocl_fail(TOCL_E_INVALID, "bernoulli: a probability tensor is required");
        TOCL_TRY(rng_check_dense(p, TOCL_F32, numel, "bernoulli probabilities"));
    }
    if (numel == 0)
        return TOCL_OK;
    tocl_philox_params prm;
    cl_mem buf, pbuf;
    cl_long poff = 0;
    TOCL_TRY(rng_params(dev, dst, what, seed, offset, &prm, &buf));
    if (kind == TOCL_RAND_BERNOULLI_TENSOR)
        TOCL_TRY(rng_resolve(dev, p, "bernoulli probabilities", &pbuf, &poff));
    else
        pbuf = buf; /* unused */
    tocl_ops_kernel *e = NULL;
    TOCL_TRY(rng_kernel(dev, dst->dtype, "tocl_philox_dist", &e));
    cl_int k = kind;
    cl_ulong range = args->range;
    cl_long base = args->base;
    float fa = (float)args->a, fb = (float)args->b;
    int dbl = dst->dtype == TOCL_F64;
    rng_arg a[] = {{sizeof buf, &buf},
                   {sizeof prm, &prm},
                   {sizeof k, &k},
                   {sizeof range, &range},
                   {sizeof base, &base},
                   {dbl ? sizeof(double) : sizeof(float), dbl ? (const void *)&args->a : (const void *)&fa},
                   {dbl ? sizeof(double) : sizeof(float), dbl ? (const void *)&args->b : (const void *)&fb},
                   {sizeof pbuf, &pbuf},
                   {sizeof poff, &poff}};
    return rng_launch(dev, stream, e, (size_t)((numel + 3) / 4), a, 9);
}

tocl_status tocl_op_check_range(int dev, int stream, const tocl_tensor *src, double lo, double hi,
                                const tocl_tensor *flag) {
    TOCL_TRY(tocl_device_check(dev));
    int64_t n = tocl_ops_numel(src);
    TOCL_TRY(rng_check_dense(src, TOCL_F32, n, "checked values"));
    TOCL_TRY(rng_check_dense(flag, TOCL_I32, 1, "check flag"));
    if (n == 0)
        return TOCL_OK;
    cl_mem sb, fb;
    cl_long so, fo;
    TOCL_TRY(rng_resolve(dev, src, "checked values", &sb, &so));
    TOCL_TRY(rng_resolve(dev, flag, "check flag", &fb, &fo));
    tocl_ops_kernel *e = NULL;
    TOCL_TRY(rng_kernel(dev, TOCL_F32, "tocl_rng_check_range", &e));
    cl_long cn = n;
    float flo = (float)lo, fhi = (float)hi;
    rng_arg a[] = {{sizeof sb, &sb},   {sizeof so, &so},   {sizeof cn, &cn}, {sizeof flo, &flo},
                   {sizeof fhi, &fhi}, {sizeof fb, &fb},   {sizeof fo, &fo}};
    return rng_launch(dev, stream, e, (size_t)n, a, 7);
}

/* ------------------------------------------------------------------ randperm */

tocl_status tocl_op_randperm(int dev, int stream, const tocl_tensor *dst, const tocl_tensor *keys,
                             const tocl_tensor *vals, uint64_t seed, uint64_t offset) {
    const char *what = "randperm";
    TOCL_TRY(rng_check_dst(dev, dst, what));
    int64_t n = tocl_ops_numel(dst), npad = tocl_rand_sort_length(n);
    TOCL_TRY(rng_check_dense(keys, TOCL_I64, npad, "randperm keys"));
    TOCL_TRY(rng_check_dense(vals, TOCL_I64, npad, "randperm values"));
    if (n == 0)
        return TOCL_OK;
    tocl_philox_params prm;
    cl_mem buf, kb, vb;
    cl_long ko, vo;
    TOCL_TRY(rng_params(dev, dst, what, seed, offset, &prm, &buf));
    TOCL_TRY(rng_resolve(dev, keys, "randperm keys", &kb, &ko));
    TOCL_TRY(rng_resolve(dev, vals, "randperm values", &vb, &vo));
    tocl_ops_kernel *ek = NULL, *es = NULL;
    TOCL_TRY(rng_kernel(dev, TOCL_I64, "tocl_rng_perm_keys", &ek));
    TOCL_TRY(rng_kernel(dev, dst->dtype, "tocl_rng_perm_store", &es));
    cl_long np = npad;
    rng_arg a[] = {{sizeof kb, &kb}, {sizeof ko, &ko}, {sizeof vb, &vb}, {sizeof vo, &vo},
                   {sizeof prm, &prm}, {sizeof np, &np}};
    TOCL_TRY(rng_launch(dev, stream, ek, (size_t)((npad + 3) / 4), a, 6));
    TOCL_TRY(rng_sort(dev, stream, kb, ko, vb, vo, npad));
    rng_arg b[] = {{sizeof buf, &buf}, {sizeof prm, &prm}, {sizeof vb, &vb}, {sizeof vo, &vo}};
    return rng_launch(dev, stream, es, (size_t)n, b, 4);
}

/* ------------------------------------------------------------------ multinomial */

static tocl_status mn_shape(const tocl_tensor *probs, int64_t *rows, int64_t *ncat) {
    TOCL_TRY(tocl_ops_check_tensor(probs, "multinomial probabilities"));
    if (probs->ndim != 2 || probs->dtype != TOCL_F32 || !tocl_ops_is_contiguous(probs))
        return tocl_fail(TOCL_E_INVALID, "multinomial probabilities must be a contiguous 2-D float32 tensor "
                         "(rows x categories), got %d-D %s", probs->ndim, tocl_dtype_name(probs->dtype));
    *rows = probs->sizes[0];
    *ncat = probs->sizes[1];
    return TOCL_OK;
}

tocl_status tocl_op_multinomial_scan(int dev, int stream, const tocl_tensor *probs, const tocl_tensor *cdf,
                                     const tocl_tensor *flags) {
    TOCL_TRY(tocl_device_check(dev));
    int64_t rows, ncat;
    TOCL_TRY(mn_shape(probs, &rows, &ncat));
    TOCL_TRY(rng_check_dense(cdf, TOCL_F32, rows * ncat, "multinomial running sums"));
    TOCL_TRY(rng_check_dense(flags, TOCL_I32, 3, "multinomial flags"));
    if (rows == 0 || ncat == 0)
        return TOCL_OK;
    cl_mem pb, cb, fb;
    cl_long po, co, fo;
    TOCL_TRY(rng_resolve(dev, probs, "multinomial probabilities", &pb, &po));
    TOCL_TRY(rng_resolve(dev, cdf, "multinomial running sums", &cb, &co));
    TOCL_TRY(rng_resolve(dev, flags, "multinomial flags", &fb, &fo));
    tocl_ops_kernel *e = NULL;
    TOCL_TRY(rng_kernel(dev, TOCL_I64, "tocl_mn_scan", &e));
    cl_long r = rows, c = ncat;
    rng_arg a[] = {{sizeof pb, &pb}, {sizeof po, &po}, {sizeof r, &r},   {sizeof c, &c},
                   {sizeof cb, &cb}, {sizeof co, &co}, {sizeof fb, &fb}, {sizeof fo, &fo}};
    return rng_launch(dev, stream, e, (size_t)rows, a, 8);
}

tocl_status tocl_op_multinomial(int dev, int stream, const tocl_tensor *dst, const tocl_tensor *probs,
                                const tocl_tensor *cdf, int replacement, const tocl_tensor *keys,
                                const tocl_tensor *vals, uint64_t seed, uint64_t offset) {
    const char *what = "multinomial";
    TOCL_TRY(rng_check_dst(dev, dst, what));
    int64_t rows, ncat;
    TOCL_TRY(mn_shape(probs, &rows, &ncat));
    if (dst->dtype != TOCL_I64 || dst->ndim != 2 || dst->sizes[0] != rows)
        return tocl_fail(TOCL_E_INVALID, "multinomial: destination must be an int64 tensor of %lld rows",
                         (long long)rows);
    int64_t ns = dst->sizes[1];
    if (!replacement && ns > ncat)
        return tocl_fail(TOCL_E_INVALID, "multinomial: cannot draw %lld of %lld categories without replacement",
                         (long long)ns, (long long)ncat);
    if (rows * ns == 0)
        return TOCL_OK;
    if (ncat == 0)
        return tocl_fail(TOCL_E_INVALID, "multinomial: no categories to draw from");
    cl_long c = ncat, s = ns;
    tocl_philox_params prm;
    cl_mem buf;
    if (replacement) {
        TOCL_TRY(rng_check_dense(cdf, TOCL_F32, rows * ncat, "multinomial running sums"));
        TOCL_TRY(rng_params(dev, dst, what, seed, offset, &prm, &buf));
        cl_mem cb;
        cl_long co;
        TOCL_TRY(rng_resolve(dev, cdf, "multinomial running sums", &cb, &co));
        tocl_ops_kernel *e;
        TOCL_TRY(rng_kernel(dev, TOCL_I64, "tocl_mn_sample", &e));
        rng_arg a[] = {{sizeof buf, &buf}, {sizeof prm, &prm}, {sizeof cb, &cb},
                       {sizeof co, &co},   {sizeof c, &c},     {sizeof s, &s}};
        return rng_launch(dev, stream, e, (size_t)((rows * ns + 3) / 4), a, 6);
    }
    int64_t n = rows * ncat, npad = tocl_rand_sort_length(n);
    TOCL_TRY(rng_check_dense(keys, TOCL_I64, npad, "multinomial keys"));
    TOCL_TRY(rng_check_dense(vals, TOCL_I64, npad, "multinomial values"));
    cl_mem pb, kb, vb;
    cl_long po, ko, vo;
    TOCL_TRY(rng_resolve(dev, probs, "multinomial probabilities", &pb, &po));
    TOCL_TRY(rng_resolve(dev, keys, "multinomial keys", &kb, &ko));
    TOCL_TRY(rng_resolve(dev, vals, "multinomial values", &vb, &vo));
    /* keys: one uniform per probability, counters offset + i / 4 */
    tocl_philox_params kp;
    memset(&kp, 0, sizeof kp);
    kp.seed = seed;
    kp.offset = offset;
    kp.n = n;
    tocl_ops_kernel *ek = NULL, *et = NULL;
    TOCL_TRY(rng_kernel(dev, TOCL_I64, "tocl_mn_keys", &ek));
    TOCL_TRY(rng_kernel(dev, TOCL_I64, "tocl_mn_take", &et));
    cl_long np = npad;
    rng_arg a[] = {{sizeof kb, &kb}, {sizeof ko, &ko}, {sizeof vb, &vb}, {sizeof vo, &vo}, {sizeof kp, &kp},
                   {sizeof pb, &pb}, {sizeof po, &po}, {sizeof c, &c},   {sizeof np, &np}};
    TOCL_TRY(rng_launch(dev, stream, ek, (size_t)((npad + 3) / 4), a, 9));
    TOCL_TRY(rng_sort(dev, stream, kb, ko, vb, vo, npad));
    TOCL_TRY(rng_params(dev, dst, what, seed, offset, &prm, &buf));
    rng_arg b[] = {{sizeof buf, &buf}, {sizeof prm, &prm}, {sizeof vb, &vb},
                   {sizeof vo, &vo},   {sizeof c, &c},     {sizeof s, &s}};
    return rng_launch(dev, stream, et, (size_t)(rows * ns), b, 6);
}
