/* fft.c - the FFT entry points (tocl/fft.h): argument checks, the batch
 * dims collapsed into a launch's slots (the rest walked on the host), and
 * the launches of a plan (fft_plan.c): one, two through scratch for a
 * split length, or Bluestein's two transforms through scratch. */
#include <stdio.h>
#include <string.h>

#include "ops/fft_internal.h"
#include "tocl/fft.h"

/* Work-groups per launch: a long batch is cut, keeping global sizes far
 * below 2^32 work-items. */
#define FFT_MAX_GROUPS ((int64_t)1 << 22)

/* One call, checked: the operands as sides of a launch (slot 0 unused, so
 * bs[0] = 0), the batch dims of a launch (slots 1.., innermost first) and
 * those walked on the host. */
typedef struct fft_call {
    int dev, stream, inverse, packed;
    tocl_dtype dt;
    double scale;
    fft_config cfg;
    const fft_plan *plan;
    cl_mem ib, ob, sbuf;
    int64_t soff; /* scratch, in scalars of sbuf */
    tocl_fft_side in, out;
    int64_t bsz[TOCL_FFT_MAXB], batch;
    int nx;
    int64_t xsz[TOCL_TENSOR_MAX_DIMS], xin[TOCL_TENSOR_MAX_DIMS], xout[TOCL_TENSOR_MAX_DIMS];
} fft_call;

/* A real (pair = 0) or complex operand; *rdim its ndim without the pair dim. */
static tocl_status fft_operand(const tocl_tensor *t, const char *op, const char *what, int pair, int *rdim) {
    if (!t)
        return tocl_fail(TOCL_E_INVALID, "%s: %s is missing", op, what);
    TOCL_TRY(tocl_ops_check_tensor(t, what));
    if (t->dtype != TOCL_F32 && t->dtype != TOCL_F64)
        return tocl_fail(TOCL_E_INVALID, "%s: %s has dtype %s, expected float32 or float64", op, what,
                         tocl_dtype_name(t->dtype));
    *rdim = t->ndim - (pair ? 1 : 0);
    if (pair && (t->ndim < 2 || t->sizes[t->ndim - 1] != 2 || t->strides[t->ndim - 1] != 1))
        return tocl_fail(TOCL_E_INVALID, "%s: complex %s must end in a (re, im) dim of size 2 and stride 1 (the "
                         "layout of torch.view_as_real), got %d dims ending in size %lld stride %lld",
                         op, what, t->ndim, t->ndim ? (long long)t->sizes[t->ndim - 1] : 0LL,
                         t->ndim ? (long long)t->strides[t->ndim - 1] : 0LL);
    if (*rdim < 1)
        return tocl_fail(TOCL_E_INVALID, "%s: %s has no dim to transform", op, what);
    return TOCL_OK;
}

/* The batch dims (every dim but `dim`, sizes equal in both operands):
 * size-1 dims dropped, neighbours that are one run in both merged; the
 * innermost TOCL_FFT_MAXB - 1 go to the launch, the rest to the host. */
static void fft_batch_dims(fft_call *c, const tocl_tensor *out, const tocl_tensor *in, int rdim, int dim) {
    int64_t sz[TOCL_TENSOR_MAX_DIMS], si[TOCL_TENSOR_MAX_DIMS], so[TOCL_TENSOR_MAX_DIMS];
    int k = 0;
    for (int d = rdim - 1; d >= 0; d--) {
        if (d == dim || in->sizes[d] == 1)
            continue;
        if (k > 0 && in->strides[d] == si[k - 1] * sz[k - 1] && out->strides[d] == so[k - 1] * sz[k - 1]) {
            sz[k - 1] *= in->sizes[d];
            continue;
        }
        sz[k] = in->sizes[d], si[k] = in->strides[d], so[k] = out->strides[d];
        k++;
    }
    c->batch = 1;
    c->nx = 0;
    for (int s = 0; s < TOCL_FFT_MAXB; s++)
        c->bsz[s] = 1;
    for (int i = 0; i < k; i++) {
        if (i < TOCL_FFT_MAXB - 1) {
            c->bsz[i + 1] = sz[i];
            c->in.bs[i + 1] = si[i];
            c->out.bs[i + 1] = so[i];
            c->batch *= sz[i];
        } else {
            c->xsz[c->nx] = sz[i], c->xin[c->nx] = si[i], c->xout[c->nx] = so[i];
            c->nx++;
        }
    }
}

static void fft_side_init(tocl_fft_side *s, int mode, int64_t len, int64_t nvalid) {
    memset(s, 0, sizeof *s);
    s->mode = mode;
    s->im = 1;
    s->lmul = 1;
    s->len = len;
    s->nvalid = nvalid;
    s->tab = s->tw4 = -1;
}

/* A contiguous complex side in scratch: transforms of length n, one after
 * another in the order of the batch slots 1.. */
static void fft_scratch_side(tocl_fft_side *s, const fft_call *c, int64_t off, int64_t n) {
    fft_side_init(s, TOCL_FFT_COMPLEX, n, n);
    s->off = off;
    s->stride = 2;
    int64_t run = 2 * n;
    for (int d = 1; d < TOCL_FFT_MAXB; d++) {
        s->bs[d] = run;
        run *= c->bsz[d];
    }
}

/* Check what both operands share (device, dtypes, ranks, dim, batch
 * sizes) and start c; *rdim: their ndim without the pair dim. */
static tocl_status fft_check(int dev, const char *op, const tocl_tensor *out, int opair, const tocl_tensor *in,
                             int ipair, int dim, fft_call *c, int *rdim) {
    TOCL_TRY(tocl_device_check(dev));
    int ri, ro;
    TOCL_TRY(fft_operand(in, op, "input", ipair, &ri));
    TOCL_TRY(fft_operand(out, op, "output", opair, &ro));
    if (in->dtype != out->dtype)
        return tocl_fail(TOCL_E_INVALID, "%s: input is %s but output is %s; they must match", op,
                         tocl_dtype_name(in->dtype), tocl_dtype_name(out->dtype));
    if (ri != ro)
        return tocl_fail(TOCL_E_INVALID, "%s: input has %d dims and output %d (pair dims not counted); they must "
                         "match", op, ri, ro);
    if (dim < 0 || dim >= ri)
        return tocl_fail(TOCL_E_INVALID, "%s: dim %d is out of range for %d dims (pair dim not counted)", op, dim,
                         ri);
    for (int d = 0; d < ri; d++)
        if (d != dim && in->sizes[d] != out->sizes[d])
            return tocl_fail(TOCL_E_INVALID, "%s: batch dim %d has size %lld in the input but %lld in the output",
                             op, d, (long long)in->sizes[d], (long long)out->sizes[d]);
    memset(c, 0, sizeof *c);
    c->dev = dev;
    c->dt = in->dtype;
    *rdim = ri;
    return TOCL_OK;
}

static tocl_status fft_kernel(const fft_call *c, tocl_ops_kernel **k) {
    char opt[64];
    snprintf(opt, sizeof opt, "-DFFT_V=%d%s", c->cfg.lanes, c->dt == TOCL_F64 ? " -DFFT_F64" : "");
    return tocl_ops_kernel_get(c->dev, "fft", "fft_local", opt, k);
}

/* Work-items per group: the configured number, on GPUs fewer for short
 * lengths (down to 32: a warp), within what the kernel allows. */
static size_t fft_group(const fft_call *c, const tocl_ops_kernel *k, int64_t n) {
    size_t want = (size_t)c->cfg.group;
    if (tocl_dev_props(c->dev)->kind != TOCL_DEVICE_CPU)
        while (want > 32 && (int64_t)want * 4 > n)
            want /= 2;
    size_t kmax = tocl_ops_kernel_max_group(c->dev, k);
    while (want > kmax)
        want /= 2;
    return want ? want : 1;
}

/* One launch: the passes ps from side in (buffer ib) to side out (ob) for
 * every transform of batch slots bsz. */
static tocl_status fft_launch(const fft_call *c, const fft_passes *ps, cl_mem ib, const tocl_fft_side *in, cl_mem ob,
                              const tocl_fft_side *out, const int64_t *bsz, double scale) {
    tocl_fft_params p;
    memset(&p, 0, sizeof p);
    p.in = *in;
    p.out = *out;
    p.n = ps->n;
    p.tw = ps->tw;
    p.perm = ps->perm;
    p.npass = ps->npass;
    memcpy(p.radix, ps->radix, sizeof p.radix);
    p.batch = 1;
    for (int d = 0; d < TOCL_FFT_MAXB; d++) {
        p.bsz[d] = bsz[d];
        p.batch *= bsz[d];
    }
    int lanes = c->cfg.lanes;
    int64_t groups = (p.batch + lanes - 1) / lanes;
    tocl_ops_kernel *k;
    TOCL_TRY(fft_kernel(c, &k));
    size_t local = fft_group(c, k, ps->n);
    float sf = (float)scale;
    cl_mem tab = c->plan->tab, perm = c->plan->perm;
    size_t lbytes = (size_t)(ps->direct ? 2 * ps->n : ps->n) * 2 * tocl_dtype_size(c->dt) * (size_t)lanes;
    tocl_ops_arg args[] = {{sizeof ib, &ib},
                           {sizeof ob, &ob},
                           {sizeof tab, &tab},
                           {sizeof perm, &perm},
                           {lbytes, NULL},
                           {c->dt == TOCL_F64 ? sizeof scale : sizeof sf, c->dt == TOCL_F64 ? (void *)&scale : &sf},
                           {sizeof p, &p}};
    for (p.g0 = 0; p.g0 < groups; p.g0 += FFT_MAX_GROUPS) {
        int64_t now = groups - p.g0 < FFT_MAX_GROUPS ? groups - p.g0 : FFT_MAX_GROUPS;
        size_t global = (size_t)now * local;
        TOCL_TRY(tocl_ops_launch(c->dev, c->stream, k, 1, &global, &local, args, 7));
    }
    return TOCL_OK;
}

/* The complex transform `core` from side in to side out: one launch, or
 * the four-step pair through scratch at element soff. */
static tocl_status fft_core_run(const fft_call *c, const fft_core *core, cl_mem ib, const tocl_fft_side *in,
                                cl_mem ob, const tocl_fft_side *out, double scale, int64_t soff) {
    int64_t bsz[TOCL_FFT_MAXB];
    memcpy(bsz, c->bsz, sizeof bsz);
    if (!core->split)
        return fft_launch(c, &core->a, ib, in, ob, out, bsz, scale);
    int64_t n1 = core->a.n, n2 = core->b.n;
    /* input j = i1 n2 + i2: n1-point transforms along i1, one per i2 (slot 0) */
    tocl_fft_side i1 = *in, s;
    i1.lmul = n2;
    i1.lb0 = 1;
    fft_scratch_side(&s, c, soff, core->n);
    s.lmul = n2; /* scratch k1 n2 + i2, twiddled by w_n^(k1 i2) */
    s.lb0 = 1;
    s.tw4 = core->tw4;
    bsz[0] = n2;
    TOCL_TRY(fft_launch(c, &core->a, ib, &i1, c->sbuf, &s, bsz, 1));
    /* n2-point transforms along i2, one per k1; output k = k1 + n1 k2 */
    s.tw4 = -1;
    s.lmul = 1;
    s.lb0 = n2;
    tocl_fft_side o2 = *out;
    o2.lmul = n1;
    o2.lb0 = 1;
    bsz[0] = n1;
    return fft_launch(c, &core->b, c->sbuf, &s, ob, &o2, bsz, scale);
}

/* The transforms of one set of host batch coordinates (c->in, c->out
 * already offset). Inverse transforms conjugate on both ends. */
static tocl_status fft_exec(const fft_call *c) {
    const fft_plan *pl = c->plan;
    tocl_fft_side in = c->in, out = c->out;
    in.conj_pre = c->inverse;
    if (c->packed) {
        out.conj_post = c->inverse;
        return fft_core_run(c, &pl->hcore, c->ib, &in, c->ob, &out, c->scale, c->soff);
    }
    if (!pl->blue) {
        out.conj_post = c->inverse;
        return fft_core_run(c, &pl->core, c->ib, &in, c->ob, &out, c->scale, c->soff);
    }
    /* Bluestein: X_k = w_k sum_j (x_j w_j) conj(w_(k-j)), a convolution of
     * length m: forward transform of x w, times the kernel's (1/m folded
     * in), then the inverse as conj(forward(conj(.))), times w_k. */
    int64_t m = pl->core.n, inner = c->soff + 2 * m * c->batch;
    tocl_fft_side s;
    fft_scratch_side(&s, c, c->soff, m);
    s.tab = pl->kern;
    in.tab = pl->chirp;
    TOCL_TRY(fft_core_run(c, &pl->core, c->ib, &in, c->sbuf, &s, 1, inner));
    s.tab = -1;
    s.conj_pre = 1;
    out.conj_pre = 1;
    out.tab = pl->chirp;
    out.conj_post = c->inverse;
    return fft_core_run(c, &pl->core, c->sbuf, &s, c->ob, &out, c->scale, inner);
}

/* A real transform of even n as a complex one of n / 2 when the plan has
 * it: two reals per complex value, split (r2c) or joined (c2r) by the
 * half-length sides (fft_params.h). */
static void fft_pack(fft_call *c, int64_t n) {
    if (!c->plan->half)
        return;
    int64_t h = n / 2;
    tocl_fft_side *r = c->in.mode == TOCL_FFT_REAL ? &c->in : &c->out, *z = r == &c->in ? &c->out : &c->in;
    r->mode = TOCL_FFT_COMPLEX; /* x_2j + i x_2j+1 */
    r->im = r->stride;
    r->stride *= 2;
    r->len = r->nvalid = h;
    z->mode = r == &c->in ? TOCL_FFT_HALF_UNPACK : TOCL_FFT_HALF_PACKED;
    z->htw = c->plan->htw;
    if (z == &c->in)
        z->nvalid = h;
    c->packed = 1;
}

/* Resolve buffers, get the plan and scratch, and run every host batch. */
static tocl_status fft_run(fft_call *c, const tocl_tensor *out, const tocl_tensor *in, int rdim, int dim, int64_t n,
                           int stream, int inverse, double scale) {
    fft_batch_dims(c, out, in, rdim, dim);
    if (n == 0 || tocl_ops_numel(in) == 0 || tocl_ops_numel(out) == 0)
        return TOCL_OK;
    if (c->dt == TOCL_F64 && !tocl_dev_props(c->dev)->has_fp64)
        return tocl_fail(TOCL_E_UNSUPPORTED, "fft: float64 is not supported on device %d (%s): it lacks cl_khr_fp64",
                         c->dev, tocl_dev_props(c->dev)->name);
    cl_long ioff, ooff;
    int mdev;
    TOCL_TRY(tocl_ops_resolve(c->dev, in, "input", 0, &c->ib, &ioff, &mdev));
    TOCL_TRY(tocl_ops_resolve(c->dev, out, "output", 1, &c->ob, &ooff, &mdev));
    c->in.off = ioff;
    c->in.stride = in->strides[dim];
    c->out.off = ooff;
    c->out.stride = out->strides[dim];
    c->stream = stream;
    c->inverse = inverse != 0;
    c->scale = scale;
    fft_config_get(c->dev, c->dt, &c->cfg);
    TOCL_TRY(fft_plan_get(c->dev, c->dt, &c->cfg, n, &c->plan));
    if (c->in.mode != TOCL_FFT_COMPLEX || c->out.mode != TOCL_FFT_COMPLEX)
        fft_pack(c, n);
    const fft_core *core = &c->plan->core;
    int64_t values = c->packed ? 0 : (c->plan->blue ? core->n : 0) + (core->split ? core->n : 0);
    tocl_addr scratch = 0;
    if (values) {
        size_t esz = tocl_dtype_size(c->dt), boff;
        TOCL_TRY(tocl_mem_alloc(c->dev, (size_t)(values * c->batch) * 2 * esz, &scratch));
        tocl_status s = tocl_mem_resolve(scratch, &mdev, &c->sbuf, &boff);
        if (s == TOCL_OK && stream != tocl_stream_current(c->dev))
            s = tocl_mem_record_stream(scratch, stream);
        if (s != TOCL_OK) {
            tocl_mem_free(scratch);
            return s;
        }
        c->soff = (int64_t)(boff / esz);
    }
    int64_t total = 1;
    for (int i = 0; i < c->nx; i++)
        total *= c->xsz[i];
    tocl_status s = TOCL_OK;
    for (int64_t t = 0; t < total && s == TOCL_OK; t++) {
        int64_t r = t;
        c->in.off = ioff;
        c->out.off = ooff;
        for (int i = 0; i < c->nx; i++) {
            int64_t x = r % c->xsz[i];
            r /= c->xsz[i];
            c->in.off += x * c->xin[i];
            c->out.off += x * c->xout[i];
        }
        s = fft_exec(c);
    }
    /* stream-ordered: the block is reused only after the launches above */
    tocl_status fs = scratch ? tocl_mem_free(scratch) : TOCL_OK;
    return s != TOCL_OK ? s : fs;
}

tocl_status tocl_fft_c2c(int dev, int stream, const tocl_tensor *out, const tocl_tensor *in, int dim, int inverse,
                         double scale) {
    fft_call c;
    int rdim;
    TOCL_TRY(fft_check(dev, "fft_c2c", out, 1, in, 1, dim, &c, &rdim));
    int64_t n = in->sizes[dim];
    if (out->sizes[dim] != n)
        return tocl_fail(TOCL_E_INVALID, "fft_c2c: the input has %lld points along dim %d but the output %lld; "
                         "they must match", (long long)n, dim, (long long)out->sizes[dim]);
    fft_side_init(&c.in, TOCL_FFT_COMPLEX, n, n);
    fft_side_init(&c.out, TOCL_FFT_COMPLEX, n, n);
    return fft_run(&c, out, in, rdim, dim, n, stream, inverse, scale);
}

tocl_status tocl_fft_r2c(int dev, int stream, const tocl_tensor *out, const tocl_tensor *in, int dim, double scale) {
    fft_call c;
    int rdim;
    TOCL_TRY(fft_check(dev, "fft_r2c", out, 1, in, 0, dim, &c, &rdim));
    int64_t n = in->sizes[dim], k = out->sizes[dim];
    if (k != n / 2 + 1 && k != n)
        return tocl_fail(TOCL_E_INVALID, "fft_r2c: %lld real points along dim %d give %lld (onesided) or %lld "
                         "complex outputs, but the output has %lld", (long long)n, dim, (long long)(n / 2 + 1),
                         (long long)n, (long long)k);
    fft_side_init(&c.in, TOCL_FFT_REAL, n, n);
    fft_side_init(&c.out, TOCL_FFT_COMPLEX, n, k);
    return fft_run(&c, out, in, rdim, dim, n, stream, 0, scale);
}

tocl_status tocl_fft_c2r(int dev, int stream, const tocl_tensor *out, const tocl_tensor *in, int dim, double scale) {
    fft_call c;
    int rdim;
    TOCL_TRY(fft_check(dev, "fft_c2r", out, 0, in, 1, dim, &c, &rdim));
    int64_t n = out->sizes[dim];
    if (in->sizes[dim] < n / 2 + 1)
        return tocl_fail(TOCL_E_INVALID, "fft_c2r: %lld real outputs along dim %d need at least %lld complex "
                         "inputs, but the input has %lld", (long long)n, dim, (long long)(n / 2 + 1),
                         (long long)in->sizes[dim]);
    fft_side_init(&c.in, TOCL_FFT_HERMITIAN, n, n);
    fft_side_init(&c.out, TOCL_FFT_REAL, n, n);
    return fft_run(&c, out, in, rdim, dim, n, stream, 1, scale);
}
