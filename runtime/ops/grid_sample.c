/* grid_sample.c - grid_sampler_2d/3d forward and backward
 * (kernels/grid_sample.cl): shape and dtype checks, strides per grid
 * coordinate, the grad_input accumulator (grad_input itself, or a float
 * scratch block for float16/bfloat16) and the launches. One program per
 * (dtype, dims, mode); padding and align_corners are arguments. */
#include <stdio.h>
#include <string.h>

#include "ops/nn_internal.h"
#include "grid_sample_params.h"
#include "tocl/grid_sample.h"

static const char *gs_op(int dims) { return dims == 3 ? "grid_sampler_3d" : "grid_sampler_2d"; }

/* t has ndim dims and sizes want[] (-1: any). */
static tocl_status gs_shape(const char *op, const tocl_tensor *t, const char *what, int ndim, const int64_t *want) {
    TOCL_TRY(tocl_ops_check_tensor(t, what));
    int ok = t->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++)
        ok = want[i] < 0 || t->sizes[i] == want[i];
    if (ok)
        return TOCL_OK;
    char got[128] = "", exp[128] = "";
    /* 5 dims of at most 22 characters each fit */
    for (int i = 0, a = 0; i < t->ndim && i < 5; i++)
        a += snprintf(got + a, sizeof got - (size_t)a, "%s%lld", i ? ", " : "", (long long)t->sizes[i]);
    for (int i = 0, b = 0; i < ndim; i++)
        b += want[i] < 0 ? snprintf(exp + b, sizeof exp - (size_t)b, "%s*", i ? ", " : "")
                         : snprintf(exp + b, sizeof exp - (size_t)b, "%s%lld", i ? ", " : "", (long long)want[i]);
    return tocl_fail(TOCL_E_INVALID, "%s: %s has sizes [%s], expected [%s]", op, what, got, exp);
}

/* Geometry of input x and grid t into p (zeroed first); *dims 2 or 3. */
static tocl_status gs_geometry(const tocl_grid_sample_desc *d, const tocl_tensor *x, const tocl_tensor *t,
                               tocl_gs_params *p, int *dims) {
    TOCL_TRY(tocl_ops_check_tensor(x, "input"));
    TOCL_TRY(tocl_ops_check_tensor(t, "grid"));
    if (x->ndim != 4 && x->ndim != 5)
        return tocl_fail(TOCL_E_INVALID, "grid_sampler: expected a 4-d or 5-d input, got %d dims", x->ndim);
    int nd = x->ndim - 2;
    const char *op = gs_op(nd);
    *dims = nd;
    if ((unsigned)d->mode > TOCL_GRID_SAMPLE_BICUBIC || (unsigned)d->padding > TOCL_GRID_SAMPLE_REFLECTION)
        return tocl_fail(TOCL_E_INVALID, "%s: unknown interpolation mode %d or padding mode %d", op, (int)d->mode,
                         (int)d->padding);
    if (d->mode == TOCL_GRID_SAMPLE_BICUBIC && nd != 2)
        return tocl_fail(TOCL_E_INVALID, "%s: bicubic interpolation only supports 4-d input", op);
    int64_t want[5] = {x->sizes[0], -1, -1, -1, -1};
    want[nd + 1] = nd;
    TOCL_TRY(gs_shape(op, t, "grid", x->ndim, want));
    for (int i = 2; i < x->ndim; i++)
        if (x->sizes[i] <= 0)
            return tocl_fail(TOCL_E_INVALID, "%s: input has an empty spatial dimension %d", op, i);
    if (t->dtype != x->dtype)
        return tocl_fail(TOCL_E_INVALID, "%s: grid dtype %s differs from input dtype %s", op,
                         tocl_dtype_name(t->dtype), tocl_dtype_name(x->dtype));
    memset(p, 0, sizeof *p);
    p->N = x->sizes[0];
    p->C = x->sizes[1];
    p->x_sn = x->strides[0];
    p->x_sc = x->strides[1];
    p->t_sn = t->strides[0];
    p->t_sk = t->strides[nd + 1];
    for (int j = 0; j < 3; j++) { /* positions D, H, W; 2-d has D = 1 */
        int gd = j - (3 - nd) + 1; /* grid dim of position j, < 1 when absent */
        p->osz[j] = gd >= 1 ? t->sizes[gd] : 1;
        p->t_sp[j] = gd >= 1 ? t->strides[gd] : 0;
    }
    for (int k = 0; k < 3; k++) { /* coordinate k reads input dim ndim - 1 - k */
        p->isz[k] = k < nd ? x->sizes[x->ndim - 1 - k] : 1;
        p->x_sk[k] = k < nd ? x->strides[x->ndim - 1 - k] : 0;
    }
    p->padding = (tocl_nn_i32)d->padding;
    p->align_corners = d->align_corners != 0;
    return TOCL_OK;
}

/* Strides of an [N, C, positions] operand (output or grad_output) with
 * sizes checked against p. */
static tocl_status gs_nc_operand(const tocl_gs_params *p, int nd, const tocl_tensor *y, const char *what,
                                 tocl_dtype dt, int64_t *sn, int64_t *sc, int64_t *sp) {
    int64_t want[5] = {p->N, p->C};
    for (int j = 3 - nd; j < 3; j++)
        want[2 + j - (3 - nd)] = p->osz[j];
    TOCL_TRY(gs_shape(gs_op(nd), y, what, nd + 2, want));
    if (y->dtype != dt)
        return tocl_fail(TOCL_E_INVALID, "%s: %s dtype %s differs from input dtype %s", gs_op(nd), what,
                         tocl_dtype_name(y->dtype), tocl_dtype_name(dt));
    *sn = y->strides[0];
    *sc = y->strides[1];
    for (int j = 0; j < 3; j++)
        sp[j] = j >= 3 - nd ? y->strides[2 + j - (3 - nd)] : 0;
    return TOCL_OK;
}

/* (buffer, element offset) of a non-empty operand; an empty one gets NULL
 * and is never read. */
static tocl_status gs_resolve(int dev, const tocl_tensor *t, const char *what, cl_mem *buf, tocl_nn_i64 *off) {
    *buf = NULL;
    *off = 0;
    if (tocl_ops_numel(t) == 0)
        return TOCL_OK;
    cl_long o;
    int mdev;
    TOCL_TRY(tocl_ops_resolve(dev, t, what, 0, buf, &o, &mdev));
    *off = (tocl_nn_i64)o;
    return TOCL_OK;
}

static int gs_has_atomic64(int dev) {
    return strstr(tocl_dev_props(dev)->extensions, "cl_khr_int64_base_atomics") != NULL;
}

/* grad_input in the CPU's order (gs_bwd_in: a work-item per (batch,
 * channel block) over every grid point; deterministic, and the CPU's
 * rounding) when there are planes enough to keep every compute unit busy
 * (4 per unit on a CPU, 16 on others) or the walks are short. Otherwise
 * (few planes, many points) the atomics of gs_bwd scatter from a
 * work-item per point, and the sums of one element come in any order, as
 * on CUDA. */
static int gs_ordered_input(int dev, int64_t planes, int64_t points) {
    const tocl_device_props *pr = tocl_dev_props(dev);
    int64_t cu = pr->compute_units ? pr->compute_units : 1;
    return points <= 4096 || planes >= (pr->kind == TOCL_DEVICE_CPU ? 4 : 16) * cu;
}

/* Build options: one dtype for every role, dims, mode. */
static tocl_status gs_options(int dev, tocl_dtype dt, int nd, tocl_grid_sample_mode mode, char *opts, size_t cap) {
    tocl_dtype dts[6] = {dt, dt, dt, dt, dt, dt};
    TOCL_TRY(tocl_nn_options(dev, "XTYGZS", dts, 0, opts, cap - 64));
    size_t len = strlen(opts);
    snprintf(opts + len, cap - len, " -DGS_DIMS=%d -DGS_MODE=%d%s", nd, (int)mode,
             dt == TOCL_F64 && gs_has_atomic64(dev) ? " -DGS_ATOMIC64" : "");
    return TOCL_OK;
}

/* Enqueue `items` work-items of kernel `name`; spread: groups small
 * enough that every compute unit gets several (for few, long items). */
static tocl_status gs_launch_groups(int dev, int stream, const char *opts, const char *name, int64_t items,
                                    int spread, const tocl_ops_arg *args, int nargs) {
    if (items <= 0)
        return TOCL_OK;
    tocl_ops_kernel *k;
    TOCL_TRY(tocl_ops_kernel_get(dev, "grid_sample", name, opts, &k));
    size_t local = tocl_nn_item_size(dev, k);
    if (spread) {
        uint32_t cu = tocl_dev_props(dev)->compute_units;
        int64_t want = items / (4 * (int64_t)(cu ? cu : 1));
        while (local > 1 && (int64_t)local > want)
            local /= 2;
    }
    size_t global = ((size_t)items + local - 1) / local * local;
    return tocl_nn_launch(dev, stream, k, global, local, args, nargs);
}

static tocl_status gs_launch(int dev, int stream, const char *opts, const char *name, int64_t items,
                             const tocl_ops_arg *args, int nargs) {
    return gs_launch_groups(dev, stream, opts, name, items, 0, args, nargs);
}

tocl_status tocl_grid_sample_forward(int dev, int stream, const tocl_grid_sample_desc *d, const tocl_tensor *input,
                                     const tocl_tensor *grid, const tocl_tensor *out) {
    TOCL_TRY(tocl_device_check(dev));
    tocl_gs_params p;
    int nd;
    TOCL_TRY(gs_geometry(d, input, grid, &p, &nd));
    TOCL_TRY(gs_nc_operand(&p, nd, out, "output", input->dtype, &p.y_sn, &p.y_sc, p.y_sp));
    if (tocl_ops_numel(out) == 0)
        return TOCL_OK;
    cl_mem bx, bt, by;
    TOCL_TRY(gs_resolve(dev, input, "input", &bx, &p.x_off));
    TOCL_TRY(gs_resolve(dev, grid, "grid", &bt, &p.t_off));
    TOCL_TRY(gs_resolve(dev, out, "output", &by, &p.y_off));
    char opts[1024];
    TOCL_TRY(gs_options(dev, input->dtype, nd, d->mode, opts, sizeof opts));
    tocl_ops_arg args[] = {{sizeof bx, &bx}, {sizeof bt, &bt}, {sizeof by, &by}, {sizeof p, &p}};
    return gs_launch(dev, stream, opts, "gs_fwd", p.N * p.osz[0] * p.osz[1] * p.osz[2], args, 4);
}

tocl_status tocl_grid_sample_backward(int dev, int stream, const tocl_grid_sample_desc *d, const tocl_tensor *grad_out,
                                      const tocl_tensor *input, const tocl_tensor *grid,
                                      const tocl_tensor *grad_input, const tocl_tensor *grad_grid) {
    TOCL_TRY(tocl_device_check(dev));
    tocl_gs_params p;
    int nd;
    TOCL_TRY(gs_geometry(d, input, grid, &p, &nd));
    const char *op = gs_op(nd);
    tocl_dtype dt = input->dtype;
    TOCL_TRY(gs_nc_operand(&p, nd, grad_out, "grad_output", dt, &p.y_sn, &p.y_sc, p.y_sp));
    int no_atomics = 0;
    if (grad_input) {
        TOCL_TRY(gs_shape(op, grad_input, "grad_input", input->ndim, input->sizes));
        if (grad_input->dtype != dt || (tocl_ops_numel(grad_input) > 0 && !tocl_ops_is_contiguous(grad_input)))
            return tocl_fail(TOCL_E_INVALID, "%s: grad_input must be dense row-major with the input's dtype %s", op,
                             tocl_dtype_name(dt));
        /* float64 without 64-bit atomics (cl_khr_int64_base_atomics):
         * always the ordered walk, which needs none */
        no_atomics = dt == TOCL_F64 && !gs_has_atomic64(dev);
        /* dense strides of the accumulator, per coordinate */
        int64_t st = 1;
        for (int i = input->ndim - 1; i >= 0; i--) {
            if (i >= 2)
                p.z_sk[input->ndim - 1 - i] = st;
            else if (i == 1)
                p.z_sc = st;
            else
                p.z_sn = st;
            st *= input->sizes[i];
        }
        p.z_n = st;
        p.flags |= TOCL_GS_GRAD_INPUT;
    }
    if (grad_grid) {
        TOCL_TRY(gs_shape(op, grad_grid, "grad_grid", grid->ndim, grid->sizes));
        if (grad_grid->dtype != dt)
            return tocl_fail(TOCL_E_INVALID, "%s: grad_grid dtype %s differs from input dtype %s", op,
                             tocl_dtype_name(grad_grid->dtype), tocl_dtype_name(dt));
        p.s_sn = grad_grid->strides[0];
        p.s_sk = grad_grid->strides[nd + 1];
        for (int j = 0; j < 3; j++)
            p.s_sp[j] = j >= 3 - nd ? grad_grid->strides[j - (3 - nd) + 1] : 0;
        p.flags |= TOCL_GS_GRAD_GRID;
    }
    cl_mem bg, bx, bt, bq = NULL, bs = NULL;
    TOCL_TRY(gs_resolve(dev, grad_out, "grad_output", &bg, &p.y_off));
    TOCL_TRY(gs_resolve(dev, input, "input", &bx, &p.x_off));
    TOCL_TRY(gs_resolve(dev, grid, "grid", &bt, &p.t_off));
    if (grad_input)
        TOCL_TRY(gs_resolve(dev, grad_input, "grad_input", &bq, &p.q_off));
    if (grad_grid)
        TOCL_TRY(gs_resolve(dev, grad_grid, "grad_grid", &bs, &p.s_off));
    char opts[1024];
    TOCL_TRY(gs_options(dev, dt, nd, d->mode, opts, sizeof opts));

    /* The accumulator: grad_input itself when it has the arithmetic type,
     * else a float scratch block freed in stream order. */
    int scratch = grad_input && p.z_n > 0 && (dt == TOCL_F16 || dt == TOCL_BF16);
    tocl_addr tmp = 0;
    cl_mem bz = bq;
    p.z_off = p.q_off;
    tocl_status s = TOCL_OK;
    if (scratch) {
        TOCL_TRY(tocl_mem_alloc(dev, (size_t)p.z_n * sizeof(float), &tmp));
        s = stream != tocl_stream_current(dev) ? tocl_mem_record_stream(tmp, stream) : TOCL_OK;
        int mdev;
        size_t boff = 0;
        if (s == TOCL_OK)
            s = tocl_mem_resolve(tmp, &mdev, &bz, &boff);
        p.z_off = (tocl_nn_i64)(boff / sizeof(float)); /* blocks are 512-byte aligned */
    }
    /* Arguments never read (empty operands, unwanted outputs) still need a
     * buffer: any live one does. */
    cl_mem any = bz ? bz : bs ? bs : bx ? bx : bg ? bg : bt;
    cl_mem ag = bg ? bg : any, ax = bx ? bx : any, at = bt ? bt : any, az = bz ? bz : any, as = bs ? bs : any;
    if (s == TOCL_OK && grad_input) {
        tocl_ops_arg a[] = {{sizeof az, &az}, {sizeof p, &p}};
        s = gs_launch(dev, stream, opts, "gs_zero", p.z_n, a, 2);
    }
    int64_t points = p.osz[0] * p.osz[1] * p.osz[2];
    if (s == TOCL_OK && grad_input && (no_atomics || gs_ordered_input(dev, p.N * p.C, points))) {
        /* channel blocks: mapping a point to its taps costs more than
         * adding its channels, so a block of cb channels shares it, while
         * every compute unit still gets 4 blocks (a CPU) or 16 */
        const tocl_device_props *pr = tocl_dev_props(dev);
        int64_t cu = pr->compute_units ? pr->compute_units : 1, per = pr->kind == TOCL_DEVICE_CPU ? 4 : 16;
        cl_long cb = (cl_long)(p.N * p.C / (per * cu));
        cb = cb < 1 ? 1 : cb > p.C ? p.C : cb;
        cl_long blocks = p.N * ((p.C + cb - 1) / cb);
        tocl_ops_arg a[] = {{sizeof ag, &ag}, {sizeof at, &at}, {sizeof az, &az}, {sizeof p, &p}, {sizeof cb, &cb}};
        s = gs_launch_groups(dev, stream, opts, "gs_bwd_in", blocks, 1, a, 5);
        p.flags &= ~TOCL_GS_GRAD_INPUT; /* done: gs_bwd computes grad_grid alone */
    }
    if (s == TOCL_OK && any) {
        tocl_ops_arg a[] = {{sizeof ag, &ag}, {sizeof ax, &ax}, {sizeof at, &at},
                            {sizeof az, &az}, {sizeof as, &as}, {sizeof p, &p}};
        s = gs_launch(dev, stream, opts, "gs_bwd", p.flags ? p.N * points : 0, a, 6);
    }
    if (s == TOCL_OK && scratch) {
        tocl_ops_arg a[] = {{sizeof az, &az}, {sizeof bq, &bq}, {sizeof p, &p}};
        s = gs_launch(dev, stream, opts, "gs_store", p.z_n, a, 3);
    }
    if (tmp)
        tocl_mem_free(tmp); /* reused only by work ordered after these launches */
    return s;
}
