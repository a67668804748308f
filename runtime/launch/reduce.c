/* reduce.c - launching generated reduction kernels: checks operands,
 * splits dimensions into kept (one output row each) and reduced ones,
 * collapses both, picks the launch shape, and runs the rendered `tocl_red`
 * kernel once, or twice when a row is split over several work-groups
 * (partials, then a final pass). The eager entry (ops/reduce.c) decides
 * whether fused eager's recorded ops join the prologue. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/ir_internal.h"
#include "codegen/reduce_rules.h"
#include "launch/reduce_launch.h"
#include "queue/trace.h"

#define RENDER_CAP (256 * 1024)
#define MAX_OPS TOCL_RED_MAX_OPS
#define STATE_BYTES 32 /* upper bound of sizeof(st_t) in render_reduce.c */
#define PART_DEVS 64 /* devices with a partials buffer (as the queue table) */

/* The kernel cache's key. p and correction are kernel arguments, not part
 * of the key. */
typedef struct red_key {
    int kr, rr, n_out;
    int col; /* lanes of the column kernel tocl_redc; 0: tocl_red */
    tocl_reduce_kind kind;
    tocl_dtype acc;
    tocl_reduce_map map;
    tocl_reduce_final final;
    tocl_dtype od[2];
    tocl_ir_graph graph;
} red_key;

static int red_equal(const void *a, const void *b) {
    const red_key *x = a, *y = b;
    if (x->kr != y->kr || x->rr != y->rr || x->col != y->col || x->n_out != y->n_out || x->kind != y->kind || x->acc != y->acc ||
        x->map != y->map || x->final != y->final || x->od[0] != y->od[0] || (x->n_out > 1 && x->od[1] != y->od[1]))
        return 0;
    return tocl_ir_equal(&x->graph, &y->graph);
}

static tocl_status red_create(int dev, const void *key, cl_kernel *out) {
    const red_key *k = key;
    tocl_reduce_desc d;
    memset(&d, 0, sizeof d);
    d.kind = k->kind;
    d.acc = k->acc;
    d.map = k->map;
    d.final = k->final;
    d.prologue = &k->graph;
    char *src = malloc(RENDER_CAP);
    if (!src)
        return tocl_fail(TOCL_E_OOM, "out of host memory rendering a reduction kernel");
    tocl_status s = k->col ? tocl_reduce_render_col(&d, &k->graph, k->n_out, k->od, k->kr, k->rr, k->col, src, RENDER_CAP)
                           : tocl_reduce_render(&d, &k->graph, k->n_out, k->od, k->kr, k->rr, src, RENDER_CAP);
    if (s == TOCL_OK)
        s = tocl_kernel_create(dev, src, "-cl-fp32-correctly-rounded-divide-sqrt", k->col ? "tocl_redc" : "tocl_red",
                               out);
    free(src);
    if (s != TOCL_OK)
        tocl_error_context("building the reduction kernel (kind %d, kept rank %d, reduced rank %d) on device %d",
                           (int)k->kind, k->kr, k->rr, dev);
    return s;
}

static tocl_kernel_kind red_kind = {.what = "reduction", .key_size = sizeof(red_key), .equal = red_equal, .create = red_create};

/* The key of (d, g, dtypes, ranks) in a thread-local buffer, and its hash. */
static const red_key *make_key(const tocl_reduce_desc *d, const tocl_ir_graph *g, int n_out, const tocl_dtype *od,
                               int kr, int rr, int col, uint64_t *hash) {
    static _Thread_local red_key k;
    k.kr = kr;
    k.col = col;
    k.rr = rr;
    k.n_out = n_out;
    k.kind = d->kind;
    k.acc = d->acc;
    k.map = d->map;
    k.final = d->final;
    k.od[0] = od[0];
    k.od[1] = n_out > 1 ? od[1] : TOCL_I64;
    k.graph = *g;
    uint64_t h = tocl_ir_hash(g, kr * 64 + rr);
    int64_t f[9] = {d->kind, d->acc, d->map, d->final, n_out, od[0], n_out > 1 ? (int64_t)od[1] : -1, 0x7ed, col};
    for (int i = 0; i < 9; i++) {
        h ^= (uint64_t)f[i];
        h *= 0x100000001b3ull;
    }
    *hash = h;
    return &k;
}

/* TORCH_OCL_RED_COLUMN=0 keeps column reductions on tocl_red, for
 * comparisons. */
static int col_enabled(void) {
    return !tocl_env_off("TORCH_OCL_RED_COLUMN");
}

/* Lanes of the column kernel for this reduction, 0 for tocl_red: on CPU
 * devices, when every input is contiguous along the innermost kept dim
 * and that dim holds at least one lane block (x.sum(0), a bias gradient,
 * channels_last sums over (0, 2, 3)). GPUs coalesce tocl_red's
 * interleaved walk already. */
static int col_lanes(int dev, const tocl_reduce_desc *d, const tocl_ir_graph *g, int n_out, const tocl_red_space *sp) {
    if (tocl_dev_props(dev)->kind != TOCL_DEVICE_CPU || !tocl_reduce_col_ok(d, g, sp->kr) || !col_enabled())
        return 0;
    int W = tocl_reduce_col_lanes(d->acc), K = sp->kr - 1;
    if (sp->ks[K] < W)
        return 0;
    for (int k = 0; k < g->n_inputs; k++)
        if (sp->kst[n_out + k][K] != 1)
            return 0;
    return W;
}

tocl_status tocl_reduce_kernel_ready(int dev, const tocl_reduce_desc *d, const tocl_ir_graph *g, int n_out,
                                     const tocl_dtype *od, const tocl_red_space *sp, int sync, int *ready) {
    uint64_t h;
    const red_key *k = make_key(d, g, n_out, od, sp->kr, sp->rr, col_lanes(dev, d, g, n_out, sp), &h);
    tocl_kernel_entry *e;
    *ready = 0;
    if (sync) {
        tocl_status s = tocl_kernels_get(&red_kind, dev, k, h, &e);
        *ready = s == TOCL_OK;
        /* A fused prologue that does not build is a code generator bug:
         * said under strict builds, otherwise the unfused reduction runs. */
        return s == TOCL_OK || !tocl_strict_builds() ? TOCL_OK : s;
    }
    TOCL_TRY(tocl_kernels_get_async(&red_kind, dev, k, h, &e));
    *ready = e && e->kernel;
    return TOCL_OK;
}

/* Arg-reductions number reduced positions in logical order, so their
 * reduced dims are never reordered; the others put the smallest input
 * stride innermost so each worker streams memory. */
static void collapse(tocl_red_space *sp, int n_out, const tocl_tensor *outs, int n_in, const tocl_tensor *ins,
                     int keep_order) {
    int nd = ins[0].ndim, red[TOCL_TENSOR_MAX_DIMS], nred = 0;
    sp->kr = sp->rr = 0;
    for (int d = 0; d < nd; d++) {
        int64_t n = ins[0].sizes[d];
        if (n == 1)
            continue;
        if (outs[0].sizes[d] == 1) {
            red[nred++] = d;
            continue;
        }
        int r = sp->kr, merge = r > 0;
        for (int k = 0; k < n_out + n_in && merge; k++) {
            const tocl_tensor *t = k < n_out ? &outs[k] : &ins[k - n_out];
            merge = sp->kst[k][r - 1] == t->strides[d] * n;
        }
        if (merge) {
            sp->ks[r - 1] *= n;
        } else {
            sp->ks[r] = n;
            sp->kr++;
        }
        for (int k = 0; k < n_out + n_in; k++)
            sp->kst[k][sp->kr - 1] = k < n_out ? outs[k].strides[d] : ins[k - n_out].strides[d];
    }
    if (!keep_order) /* stable insertion sort, larger input-0 stride outermost */
        for (int i = 1; i < nred; i++)
            for (int j = i; j > 0 && ins[0].strides[red[j - 1]] < ins[0].strides[red[j]]; j--) {
                int t = red[j];
                red[j] = red[j - 1];
                red[j - 1] = t;
            }
    for (int i = 0; i < nred; i++) {
        int d = red[i], r = sp->rr, merge = r > 0;
        int64_t n = ins[0].sizes[d];
        for (int k = 0; k < n_in && merge; k++)
            merge = sp->rst[k][r - 1] == ins[k].strides[d] * n;
        if (merge) {
            sp->rs[r - 1] *= n;
        } else {
            sp->rs[r] = n;
            sp->rr++;
        }
        for (int k = 0; k < n_in; k++)
            sp->rst[k][sp->rr - 1] = ins[k].strides[d];
    }
    if (sp->rr == 0) { /* nothing to reduce: each row folds its one element */
        sp->rr = 1;
        sp->rs[0] = 1;
        for (int k = 0; k < n_in; k++)
            sp->rst[k][0] = 0;
    }
}

static tocl_status check_args(int dev, const tocl_reduce_desc *d, int n_out, const tocl_tensor *outs, int n_in,
                              const tocl_tensor *ins) {
    TOCL_TRY(tocl_device_check(dev));
    if (!d || !outs || !ins)
        return tocl_fail(TOCL_E_INVALID, "tocl_reduce_run: NULL argument");
    if (!tocl_reduce_rule_of(d->kind))
        return tocl_fail(TOCL_E_INVALID, "tocl_reduce_run: invalid reduction kind %d", (int)d->kind);
    if (n_out < 1 || n_out > tocl_reduce_max_outputs(d->kind))
        return tocl_fail(TOCL_E_INVALID, "tocl_reduce_run: %d outputs for reduction kind %d", n_out, (int)d->kind);
    if (n_in < 1 || n_in > TOCL_IR_MAX_INPUTS)
        return tocl_fail(TOCL_E_INVALID, "tocl_reduce_run: %d inputs; expected 1..%d", n_in, TOCL_IR_MAX_INPUTS);
    for (int k = 0; k < n_in; k++) {
        TOCL_TRY(tocl_ops_check_tensor(&ins[k], "reduction input"));
        if (ins[k].ndim != ins[0].ndim)
            return tocl_fail(TOCL_E_INVALID, "reduction input %d has %d dims, input 0 has %d", k, ins[k].ndim,
                             ins[0].ndim);
        for (int e = 0; e < ins[0].ndim; e++)
            if (ins[k].sizes[e] != ins[0].sizes[e])
                return tocl_fail(TOCL_E_INVALID, "reduction input %d has size %lld in dim %d, input 0 has %lld", k,
                                 (long long)ins[k].sizes[e], e, (long long)ins[0].sizes[e]);
    }
    for (int k = 0; k < n_out; k++) {
        TOCL_TRY(tocl_ops_check_tensor(&outs[k], "reduction output"));
        if (outs[k].ndim != ins[0].ndim)
            return tocl_fail(TOCL_E_INVALID, "reduction output %d has %d dims but the input has %d: give outputs "
                             "the input's rank with size 1 in reduced dims", k, outs[k].ndim, ins[0].ndim);
        for (int e = 0; e < ins[0].ndim; e++) {
            int64_t o = outs[k].sizes[e], i = ins[0].sizes[e];
            if (o != i && o != 1)
                return tocl_fail(TOCL_E_INVALID, "reduction output %d has size %lld in dim %d; expected %lld or 1", k,
                                 (long long)o, e, (long long)i);
            if (o != outs[0].sizes[e])
                return tocl_fail(TOCL_E_INVALID, "reduction outputs 0 and %d differ in dim %d", k, e);
            if (o > 1 && outs[k].strides[e] == 0)
                return tocl_fail(TOCL_E_INVALID, "reduction output %d has stride 0 in kept dim %d", k, e);
        }
    }
    return TOCL_OK;
}

/* Input 0 converted to the accumulator dtype. */
static void default_prologue(tocl_ir_graph *g, const tocl_reduce_desc *d, tocl_dtype in) {
    tocl_ir_init(g);
    int x = tocl_ir_input(g, in);
    tocl_ir_output(g, tocl_ir_cast(g, x, d->acc), d->acc);
}

static size_t pow2_floor(size_t v) {
    size_t p = 1;
    while (p * 2 <= v)
        p *= 2;
    return p;
}

#define SET(idx_, size_, ptr_)                                        \
    do {                                                              \
        if (err == CL_SUCCESS)                                        \
            err = clSetKernelArg(kk, (idx_), (size_), (ptr_));        \
    } while (0)

typedef struct {
    cl_mem bufs[MAX_OPS];
    cl_long offs[MAX_OPS];
    cl_mem part;
    cl_long part_off;
} red_mem;

/* One launch of tocl_red; `pass` 1 = inputs -> partials or outputs,
 * 2 = partials -> outputs. */
static tocl_status launch(int dev, int stream, cl_command_queue q, tocl_kernel_entry *e, const tocl_reduce_desc *d,
                          const tocl_ir_graph *g, int n_out, const tocl_red_space *sp, const red_mem *mem, const tocl_scalar *scalars, int64_t M,
                          int64_t R, int64_t count, int64_t per, int64_t nwork, int interleave, int from_part,
                          int direct, int col, const size_t local[2], const size_t global[2]) {
    cl_kernel kk = e->kernel;
    cl_int err = CL_SUCCESS;
    cl_uint a = 0;
    int n_in = g->n_inputs;
    pthread_mutex_lock(&e->lock);
    for (int k = 0; k < n_out + n_in; k++) {
        SET(a++, sizeof(cl_mem), &mem->bufs[k]);
        SET(a++, sizeof(cl_long), &mem->offs[k]);
    }
    for (int k = 0; k < g->n_scalars; k++) {
        unsigned char bits[8];
        tocl_ops_scalar_bits(scalars[k], g->scalar_dtypes[k], bits);
        SET(a++, tocl_dtype_size(g->scalar_dtypes[k]), bits);
    }
    SET(a++, sizeof(cl_mem), &mem->part);
    SET(a++, sizeof(cl_long), &mem->part_off);
    SET(a++, STATE_BYTES * local[0] * local[1], NULL);
    cl_long lv[5] = {M, R, count, per, nwork};
    for (int i = 0; i < 5; i++)
        SET(a++, sizeof(cl_long), &lv[i]);
    cl_int iv[3] = {interleave, from_part, direct};
    for (int i = 0; i < 3; i++)
        SET(a++, sizeof(cl_int), &iv[i]);
    double pd[3] = {d->p, d->p != 0 ? 1.0 / d->p : 0.0, d->correction};
    for (int i = 0; i < 3; i++) {
        if (d->acc == TOCL_F64) {
            SET(a++, sizeof(double), &pd[i]);
        } else {
            float f = (float)pd[i];
            SET(a++, sizeof(float), &f);
        }
    }
    for (int i = 0; i < sp->kr; i++)
        SET(a++, sizeof(cl_long), &sp->ks[i]);
    for (int k = 0; k < n_out + n_in; k++)
        for (int i = 0; i < sp->kr; i++)
            SET(a++, sizeof(cl_long), &sp->kst[k][i]);
    for (int i = 0; i < sp->rr; i++)
        SET(a++, sizeof(cl_long), &sp->rs[i]);
    for (int k = 0; k < n_in; k++)
        for (int i = 0; i < sp->rr; i++)
            SET(a++, sizeof(cl_long), &sp->rst[k][i]);
    cl_event ev, *evp = tocl_trace_slot(&ev);
    if (err == CL_SUCCESS) {
        err = clEnqueueNDRangeKernel(q, kk, 2, NULL, global, local, 0, NULL, evp);
        if (__builtin_expect(evp != NULL, 0)) {
            char kernel[48], name[TOCL_TRACE_NAME_MAX];
            const tocl_reduce_rule *rule = tocl_reduce_rule_of(d->kind);
            snprintf(kernel, sizeof kernel, "tocl_red%s_%s", col ? "c" : "", rule ? rule->name : "?");
            tocl_launch_trace_name(kernel, g, name, sizeof name);
            tocl_trace_keep(ev, err, TOCL_TRACE_KERNEL, dev, stream, name, 0);
        }
    }
    pthread_mutex_unlock(&e->lock);
    if (err != CL_SUCCESS)
        return tocl_fail(TOCL_E_OPENCL, "launching reduction kernel (kind %d, %lld rows of %lld) : %s (%d)",
                         (int)d->kind, (long long)M, (long long)R, tocl_cl_error_name(err), (int)err);
    return TOCL_OK;
}

tocl_status tocl_reduce_check(int dev, const tocl_reduce_desc *d, int n_out, const tocl_tensor *outs, int n_in,
                              const tocl_tensor *ins, const tocl_scalar *scalars, const tocl_ir_graph **g_out) {
    TOCL_TRY(check_args(dev, d, n_out, outs, n_in, ins));
    static _Thread_local tocl_ir_graph dflt;
    const tocl_ir_graph *g = d->prologue;
    if (!g) {
        default_prologue(&dflt, d, ins[0].dtype);
        g = &dflt;
    }
    *g_out = g;
    TOCL_TRY(tocl_ir_validate(g));
    if (g->n_inputs != n_in)
        return tocl_fail(TOCL_E_INVALID, "reduction prologue reads %d inputs but %d were given", g->n_inputs, n_in);
    for (int k = 0; k < n_in; k++)
        if (g->input_dtypes[k] != ins[k].dtype)
            return tocl_fail(TOCL_E_INVALID, "reduction input %d has dtype %s but the prologue expects %s", k,
                             tocl_dtype_name(ins[k].dtype), tocl_dtype_name(g->input_dtypes[k]));
    if (g->n_scalars && !scalars)
        return tocl_fail(TOCL_E_INVALID, "reduction prologue takes %d scalars; none given", g->n_scalars);
    if (d->map != TOCL_REDUCE_MAP_EQ && g->nodes[g->output_nodes[0]].dtype != tocl_dtype_compute(d->acc))
        return tocl_fail(TOCL_E_INVALID, "reduction prologue output has dtype %s, the accumulator %s",
                         tocl_dtype_name(g->nodes[g->output_nodes[0]].dtype), tocl_dtype_name(d->acc));
    int map_float = 0, final_float = 0;
    tocl_reduce_map_expr(d->map, &map_float);
    tocl_reduce_final_stmt(d->final, &final_float);
    if ((tocl_reduce_rule_of(d->kind)->needs_float || map_float || final_float) && !tocl_dtype_is_float(d->acc))
        return tocl_fail(TOCL_E_INVALID, "reduction kind %d with map %d / final %d needs a floating accumulator, "
                         "got %s", (int)d->kind, (int)d->map, (int)d->final, tocl_dtype_name(d->acc));
    if (tocl_reduce_rule_of(d->kind)->needs_int && tocl_dtype_is_float(d->acc))
        return tocl_fail(TOCL_E_INVALID, "reduction %s needs an integer accumulator, got %s",
                         tocl_reduce_rule_of(d->kind)->name, tocl_dtype_name(d->acc));
    tocl_dtype od[2] = {outs[0].dtype, n_out > 1 ? outs[1].dtype : TOCL_I64};
    int uses_f64 = d->acc == TOCL_F64 || tocl_ir_uses_f64(g) || od[0] == TOCL_F64 || (n_out > 1 && od[1] == TOCL_F64);
    if (uses_f64 && !tocl_dev_props(dev)->has_fp64)
        return tocl_fail(TOCL_E_UNSUPPORTED, "float64 is not supported on device %d (%s): it lacks cl_khr_fp64",
                         dev, tocl_dev_props(dev)->name);
    if (tocl_reduce_rule_of(d->kind)->store == TOCL_RSTORE_ARG && od[n_out - 1] != TOCL_I64)
        return tocl_fail(TOCL_E_INVALID, "arg-reduction indices must be int64, got %s",
                         tocl_dtype_name(od[n_out - 1]));
    return TOCL_OK;
}

void tocl_reduce_collapse(tocl_red_space *sp, const tocl_reduce_desc *d, int n_out, const tocl_tensor *outs, int n_in,
                          const tocl_tensor *ins) {
    collapse(sp, n_out, outs, n_in, ins, tocl_reduce_rule_of(d->kind)->keep_order);
}

/* Partials of a fused prologue's reduction: one buffer per (device,
 * stream), outside the caching allocator, grown on demand and returned
 * retained. Such a reduction is queued under fused eager's lock, where the
 * allocator's lock must not be taken; and the allocator could hand out
 * memory that the prologue still reads (a dead input of the recorded group:
 * free to the allocator, not yet read by the queued kernel). Launches on one
 * stream run in order, so they share its buffer; a replaced buffer lives
 * until the kernels already queued with it finish (OpenCL's reference). */
static struct {
    cl_mem buf;
    size_t bytes;
} g_part[PART_DEVS][TOCL_MAX_STREAMS];
static pthread_mutex_t g_part_mu = PTHREAD_MUTEX_INITIALIZER;

static tocl_status stream_scratch(int dev, int stream, size_t bytes, cl_mem *out) {
    if (dev < 0 || dev >= PART_DEVS || stream < 0 || stream >= TOCL_MAX_STREAMS)
        return tocl_fail(TOCL_E_INVALID, "reduction scratch for device %d stream %d", dev, stream);
    pthread_mutex_lock(&g_part_mu);
    cl_int err = CL_SUCCESS;
    if (g_part[dev][stream].bytes < bytes) {
        size_t want = bytes < 4096 ? 4096 : bytes;
        cl_mem b = clCreateBuffer(tocl_dev_context(dev), CL_MEM_READ_WRITE, want, NULL, &err);
        if (err == CL_SUCCESS) {
            if (g_part[dev][stream].buf)
                clReleaseMemObject(g_part[dev][stream].buf);
            g_part[dev][stream].buf = b;
            g_part[dev][stream].bytes = want;
        }
    }
    if (err == CL_SUCCESS)
        err = clRetainMemObject(g_part[dev][stream].buf);
    *out = err == CL_SUCCESS ? g_part[dev][stream].buf : NULL;
    pthread_mutex_unlock(&g_part_mu);
    if (err != CL_SUCCESS)
        return tocl_fail(err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
                                 err == CL_OUT_OF_HOST_MEMORY ? TOCL_E_OOM : TOCL_E_OPENCL,
                         "creating %zu bytes of reduction scratch on OpenCL device %d: %s (%d)", bytes, dev,
                         tocl_cl_error_name(err), err);
    return TOCL_OK;
}

tocl_status tocl_reduce_launch(int dev, int stream, const tocl_reduce_desc *d, const tocl_ir_graph *g, int n_out,
                               const tocl_tensor *outs, int n_in, const tocl_tensor *ins, const tocl_scalar *scalars,
                               const tocl_red_space *sp, const tocl_red_resolved *pre, int nodefer) {
    if (tocl_ops_numel(&outs[0]) == 0)
        return TOCL_OK;
    int64_t M = tocl_ops_numel(&outs[0]);
    if (sp->kr > TOCL_MAX_DIMS || sp->rr > TOCL_MAX_DIMS)
        return tocl_fail(TOCL_E_UNSUPPORTED, "reduction over %d kept / %d reduced dims that cannot be collapsed; at "
                         "most %d each (make the input contiguous first)", sp->kr, sp->rr, TOCL_MAX_DIMS);
    int64_t R = 1;
    for (int i = 0; i < sp->rr; i++)
        R *= sp->rs[i];

    red_mem mem;
    memset(&mem, 0, sizeof mem);
    int mdevs[MAX_OPS];
    for (int k = 0; k < n_out + n_in; k++) {
        int is_out = k < n_out;
        const tocl_tensor *t = is_out ? &outs[k] : &ins[k - n_out];
        mdevs[k] = dev;
        if (!is_out && R == 0) { /* nothing is read: any buffer will do */
            mem.bufs[k] = mem.bufs[0];
            mem.offs[k] = 0;
            continue;
        }
        if (pre) {
            /* Resolved by the caller. A fused prologue's recorded inputs
             * among them were resolved when recorded: their tensors may have
             * died since (temporaries), but nothing has written their memory
             * (tocl_defer_reduce_begin checked, and fused eager's lock, held
             * until this launch is queued, keeps other threads out). */
            mem.bufs[k] = pre->bufs[k];
            mem.offs[k] = pre->offs[k];
            continue;
        }
        TOCL_TRY(tocl_ops_resolve(dev, t, is_out ? "output" : "input", is_out ? k : k - n_out, &mem.bufs[k],
                                  &mem.offs[k], &mdevs[k]));
        if (mdevs[k] != dev && is_out)
            return tocl_fail(TOCL_E_INVALID, "reduction output %d lives on device %d, not on device %d", k, mdevs[k],
                             dev);
        if (mdevs[k] != dev)
            TOCL_TRY(tocl_stream_wait_stream(dev, stream, mdevs[k], tocl_stream_current(mdevs[k])));
    }
    cl_command_queue q;
    if (nodefer) /* the group a fused prologue computes stays recorded */
        TOCL_TRY(tocl_queue_get_nodefer(dev, stream, &q));
    else
        TOCL_TRY(tocl_queue_get(dev, stream, &q));
    tocl_dtype od[2] = {outs[0].dtype, n_out > 1 ? outs[1].dtype : TOCL_I64};
    uint64_t h;
    int col = col_lanes(dev, d, g, n_out, sp);
    const red_key *key = make_key(d, g, n_out, od, sp->kr, sp->rr, col, &h);
    tocl_kernel_entry *e = NULL;
    TOCL_TRY(tocl_kernels_get(&red_kind, dev, key, h, &e));

    /* Launch shape. L: the device's work-group size (a power of two that
     * fits the local states). Rows of few elements, or enough rows to fill
     * the device, get one work-item each (LX = 1, LY = L rows per group);
     * otherwise a work-group of L workers per row, and a long row is split
     * over G groups whose partials a second pass folds. */
    const tocl_device_props *pr = tocl_dev_props(dev);
    int cpu = pr->kind == TOCL_DEVICE_CPU;
    size_t L = pow2_floor(e->local);
    while (L > 1 && pr->local_mem_bytes && L * STATE_BYTES > pr->local_mem_bytes / 2)
        L /= 2;
    int64_t cu = pr->compute_units ? pr->compute_units : 1;
    size_t lx = L, ly = 1, G = 1;
    /* Column kernel: work-items are (block of col outputs, split of the
     * reduced range). Split a long range when there are too few blocks to
     * give each compute unit 8 work-items, keeping at least 256 reduced
     * positions per split; then enough work-items per group to give each
     * compute unit 4 groups. */
    int64_t nblk = 0;
    if (col) {
        int64_t K0 = sp->ks[sp->kr - 1];
        nblk = (M / K0) * ((K0 + col - 1) / col);
        int64_t target = 8 * cu, by_rows = (target + nblk - 1) / nblk, by_size = R / 256;
        int64_t gg = by_rows < by_size ? by_rows : by_size;
        G = (size_t)(gg < 1 ? 1 : gg > 1024 ? 1024 : gg);
        lx = L;
        while (lx > 1 && ((nblk + (int64_t)lx - 1) / (int64_t)lx) * (int64_t)G < 4 * cu)
            lx /= 2;
    } else if (R <= 16 || M >= (cpu ? 2 * cu : 65536)) {
        lx = 1;
        ly = L;
        /* CPUs: at least two groups per compute unit; each work-item folds
         * a whole row, so no tree and no barrier. */
        while (cpu && ly > 1 && M < 2 * cu * (int64_t)ly)
            ly /= 2;
    } else {
        int64_t target = cu * (cpu ? 8 : 16), min_per = cpu ? 64 : 8;
        int64_t by_size = (R + (int64_t)L * min_per - 1) / ((int64_t)L * min_per);
        int64_t by_rows = (target + M - 1) / M;
        int64_t gg = by_size < by_rows ? by_size : by_rows;
        G = (size_t)(gg < 1 ? 1 : gg > 4096 ? 4096 : gg);
        /* CPUs: no more workers than give each min_per elements. A
         * barrier costs PoCL a pass over every work-item of the group, so
         * 1024 workers on a 1024-long row (a decoding step's argmax) spent
         * 28 us in the tree; 16 take 64 elements each. */
        while (cpu && lx > 1 && (int64_t)(G * lx) * min_per > R)
            lx /= 2;
    }
    int64_t nwork = col ? (int64_t)G : (int64_t)(G * lx);
    int64_t per = (R + nwork - 1) / nwork;
    int interleave = !cpu;
    tocl_addr tmp = 0;
    cl_mem held = NULL;
    if (G > 1 && nodefer) {
        TOCL_TRY(stream_scratch(dev, stream, (size_t)M * G * STATE_BYTES, &held));
        mem.part = held;
        mem.part_off = 0;
    } else if (G > 1) {
        TOCL_TRY(tocl_mem_alloc(dev, (size_t)M * G * STATE_BYTES, &tmp));
        int pdev;
        size_t poff;
        tocl_status s = tocl_mem_resolve(tmp, &pdev, &mem.part, &poff);
        if (s != TOCL_OK) {
            tocl_mem_free(tmp);
            return s;
        }
        mem.part_off = (cl_long)poff;
    } else {
        mem.part = mem.bufs[0];
    }
    tocl_status s;
    if (col) {
        size_t local[2] = {lx, 1}, global[2] = {(size_t)((nblk + (int64_t)lx - 1) / (int64_t)lx) * lx, G};
        s = launch(dev, stream, q, e, d, g, n_out, sp, &mem, scalars, M, R, R, per, nwork, 0, 0, G == 1, col, local,
                   global);
        /* the partials' fold: the same kernel, one split, R = G */
        size_t global2[2] = {global[0], 1};
        if (s == TOCL_OK && G > 1)
            s = launch(dev, stream, q, e, d, g, n_out, sp, &mem, scalars, M, (int64_t)G, R, 1, 1, 0, 1, 1, col, local,
                       global2);
    } else {
        size_t local[2] = {lx, ly}, global[2] = {G * lx, (size_t)((M + (int64_t)ly - 1) / (int64_t)ly) * ly};
        s = launch(dev, stream, q, e, d, g, n_out, sp, &mem, scalars, M, R, R, per, nwork, interleave, 0, G == 1, 0,
                   local, global);
        size_t L2 = L; /* the fold: on CPUs no wider than the G partials */
        while (cpu && L2 > 1 && L2 / 2 >= G)
            L2 /= 2;
        size_t local2[2] = {L2, 1}, global2[2] = {L2, (size_t)M};
        if (s == TOCL_OK && G > 1)
            s = launch(dev, stream, q, e, d, g, n_out, sp, &mem, scalars, M, (int64_t)G, R, 1, (int64_t)L2, 1, 1, 1, 0,
                       local2, global2);
    }
    if (held)
        clReleaseMemObject(held);
    if (tmp) {
        if (stream != tocl_stream_current(dev))
            tocl_mem_record_stream(tmp, stream);
        tocl_mem_free(tmp);
    }
    if (s != TOCL_OK)
        return s;
    for (int k = n_out; k < n_out + n_in; k++)
        if (mdevs[k] != dev)
            TOCL_TRY(tocl_stream_wait_stream(mdevs[k], tocl_stream_current(mdevs[k]), dev, stream));
    return TOCL_OK;
}
