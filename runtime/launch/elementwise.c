/* elementwise.c - launching generated elementwise kernels: the kernel of
 * (device, graph, layout) from the one kernel cache, dimensions collapsed
 * as TensorIterator does, arguments set and the range enqueued. Used by
 * strict eager (ops/elementwise.c), by fused eager's flush, and next by
 * compiled graphs. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/ir_internal.h"
#include "launch/launch.h"
#include "queue/trace.h"

#define MAX_OPERANDS TOCL_EW_MAX_OPERANDS
#define RENDER_CAP (256 * 1024) /* 128 nodes at rank 16 need well under this */

static atomic_uint_least64_t stat_launches;

/* The kernel cache's key: the graph and the kernel's layout (rank and
 * which operands walk the innermost dim with stride 1 or 0). The graph is
 * compared in full: a hash collision must not run the wrong kernel. */
typedef struct ew_key {
    int layout;
    tocl_ir_graph graph;
} ew_key;

static int ew_equal(const void *a, const void *b) {
    const ew_key *x = a, *y = b;
    return x->layout == y->layout && tocl_ir_equal(&x->graph, &y->graph);
}

/* Bytes of kernel arguments, to refuse graphs the device cannot take
 * (CL_DEVICE_MAX_PARAMETER_SIZE is only 1024 on many devices). */
static size_t arg_bytes(const tocl_ir_graph *g, int rank) {
    size_t n = 8 + (size_t)(g->n_outputs + g->n_inputs) * (sizeof(cl_mem) + 8);
    for (int k = 0; k < g->n_scalars; k++)
        n += tocl_dtype_size(g->scalar_dtypes[k]);
    return n + (size_t)rank * 8 * (1 + (size_t)(g->n_outputs + g->n_inputs));
}

static tocl_status ew_create(int dev, const void *key, cl_kernel *out) {
    const ew_key *k = key;
    const tocl_ir_graph *g = &k->graph;
    cl_ulong max_param = 1024;
    clGetDeviceInfo(tocl_dev_id(dev), CL_DEVICE_MAX_PARAMETER_SIZE, sizeof max_param, &max_param, NULL);
    int nrank = TOCL_EW_LAYOUT_RANK(k->layout);
    if (arg_bytes(g, nrank) > max_param)
        return tocl_fail(TOCL_E_UNSUPPORTED, "elementwise kernel with %d operands at rank %d needs %zu bytes of "
                         "kernel arguments; device %d allows %llu. Fuse fewer operands into one graph",
                         g->n_outputs + g->n_inputs, nrank, arg_bytes(g, nrank), dev, (unsigned long long)max_param);
    char *src = malloc(RENDER_CAP);
    if (!src)
        return tocl_fail(TOCL_E_OOM, "out of host memory rendering an elementwise kernel");
    tocl_status s = tocl_ir_render_layout(g, k->layout, src, RENDER_CAP);
    /* IEEE division, as PyTorch computes on the CPU and on CUDA. */
    if (s == TOCL_OK)
        s = tocl_kernel_create(dev, src, "-cl-fp32-correctly-rounded-divide-sqrt", "tocl_ew", out);
    free(src);
    if (s != TOCL_OK)
        tocl_error_context("building the elementwise kernel for a %d-node graph at rank %d on device %d",
                           g->n_nodes, nrank, dev);
    return s;
}

static tocl_kernel_kind ew_kind = {.what = "elementwise", .key_size = sizeof(ew_key), .equal = ew_equal, .create = ew_create};

void tocl_ew_stats_get(tocl_ew_stats *out) {
    if (!out)
        return;
    out->launches = atomic_load(&stat_launches);
    out->kernels_created = atomic_load(&ew_kind.created);
}

/* Iteration space after collapsing: sizes outermost first, strides per
 * operand (outputs first, then inputs). */
typedef struct {
    int rank, nops;
    int64_t sizes[TOCL_TENSOR_MAX_DIMS];
    int64_t strides[MAX_OPERANDS][TOCL_TENSOR_MAX_DIMS];
} iter_space;

/* >0 if dim a (now outer of b) should move inside b: the first operand that
 * is not broadcast in either dim decides, as in PyTorch's TensorIterator. */
static int should_swap(const iter_space *it, const int64_t *const *st, int a, int b) {
    for (int k = 0; k < it->nops; k++) {
        int64_t sa = st[k][a], sb = st[k][b];
        if (sa == 0 || sb == 0)
            continue;
        return sa < sb ? 1 : (sa > sb ? -1 : 0);
    }
    return 0;
}

/* Drop size-1 dims, order dims by stride (so operands that are dense in the
 * same permuted order become contiguous), then merge neighbours where every
 * operand satisfies stride[outer] == stride[inner] * size[inner]. */
static void collapse(iter_space *it, const tocl_tensor *const *ops, int nops) {
    const int64_t *st[MAX_OPERANDS];
    int perm[TOCL_TENSOR_MAX_DIMS], n = 0;
    it->nops = nops;
    for (int k = 0; k < nops; k++)
        st[k] = ops[k]->strides;
    for (int d = 0; d < ops[0]->ndim; d++)
        if (ops[0]->sizes[d] != 1)
            perm[n++] = d;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0; j--) {
            int c = should_swap(it, st, perm[j - 1], perm[j]);
            if (c < 0)
                break;
            if (c > 0) {
                int tmp = perm[j - 1];
                perm[j - 1] = perm[j];
                perm[j] = tmp;
            }
        }
    it->rank = 0;
    for (int i = 0; i < n; i++) {
        int d = perm[i], r = it->rank;
        int merge = r > 0;
        for (int k = 0; k < nops && merge; k++)
            merge = it->strides[k][r - 1] == st[k][d] * ops[0]->sizes[d];
        if (merge) {
            it->sizes[r - 1] *= ops[0]->sizes[d];
            for (int k = 0; k < nops; k++)
                it->strides[k][r - 1] = st[k][d];
        } else {
            it->sizes[r] = ops[0]->sizes[d];
            for (int k = 0; k < nops; k++)
                it->strides[k][r] = st[k][d];
            it->rank++;
        }
    }
}

tocl_status tocl_ew_check(int dev, const tocl_ir_graph *g, const tocl_tensor *outputs, const tocl_tensor *inputs,
                          const tocl_scalar *scalars) {
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(tocl_ir_validate(g));
    if (!outputs || (g->n_inputs && !inputs) || (g->n_scalars && !scalars))
        return tocl_fail(TOCL_E_INVALID, "tocl_ew_run: operand arrays must not be NULL");
    if (tocl_ir_uses_f64(g) && !tocl_dev_props(dev)->has_fp64)
        return tocl_fail(TOCL_E_UNSUPPORTED, "float64 is not supported on device %d (%s): it lacks cl_khr_fp64; "
                         "use float32 on this device", dev, tocl_dev_props(dev)->name);
    for (int k = 0; k < g->n_outputs + g->n_inputs; k++) {
        int is_out = k < g->n_outputs;
        const tocl_tensor *t = is_out ? &outputs[k] : &inputs[k - g->n_outputs];
        int idx = is_out ? k : k - g->n_outputs;
        const char *what = is_out ? "output" : "input";
        TOCL_TRY(tocl_ops_check_tensor(t, what));
        tocl_dtype want = is_out ? g->output_dtypes[idx] : g->input_dtypes[idx];
        if (t->dtype != want)
            return tocl_fail(TOCL_E_INVALID, "%s %d has dtype %s but the graph expects %s", what, idx,
                             tocl_dtype_name(t->dtype), tocl_dtype_name(want));
        if (t->ndim != outputs[0].ndim)
            return tocl_fail(TOCL_E_INVALID, "%s %d has %d dims but output 0 has %d: expand inputs to the "
                             "iteration shape (stride 0) first", what, idx, t->ndim, outputs[0].ndim);
        for (int d = 0; d < t->ndim; d++) {
            if (t->sizes[d] != outputs[0].sizes[d])
                return tocl_fail(TOCL_E_INVALID, "%s %d has size %lld in dim %d but output 0 has %lld", what, idx,
                                 (long long)t->sizes[d], d, (long long)outputs[0].sizes[d]);
            if (is_out && t->strides[d] == 0 && t->sizes[d] > 1)
                return tocl_fail(TOCL_E_INVALID, "output %d has stride 0 in dim %d of size %lld: several elements "
                                 "would be written to one location", idx, d, (long long)t->sizes[d]);
        }
    }
    return TOCL_OK;
}

/* ---- launching ---------------------------------------------------------------- */

void tocl_launch_trace_name(const char *kernel, const tocl_ir_graph *g, char *buf, size_t cap) {
    size_t len = (size_t)snprintf(buf, cap, "%s[", kernel);
    int any = 0;
    for (int j = 0; g && j < g->n_nodes && len + 2 < cap; j++) {
        tocl_ir_op op = g->nodes[j].op;
        if (op == TOCL_IR_INPUT || op == TOCL_IR_SCALAR)
            continue;
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", any ? "+" : "", tocl_ir_op_name(op));
        any = 1;
    }
    if (!any && strcmp(kernel, "tocl_ew") != 0) { /* a reduction of its plain input: "tocl_red_sum" */
        snprintf(buf, cap, "%s", kernel);
        return;
    }
    if (!any && g) /* outputs written straight from an input or a scalar */
        len += (size_t)snprintf(buf + len, cap - len, "%s", g->n_inputs ? "copy" : "fill");
    if (len + 2 > cap) /* truncated: keep the closing bracket */
        len = cap - 2;
    snprintf(buf + len, cap - len, "]");
}

tocl_status tocl_ew_launch(int dev, int stream, const tocl_ir_graph *g, const tocl_tensor *const *ops,
                           const cl_mem *bufs, const cl_long *offs, const tocl_scalar *scalars, tocl_ew_build mode,
                           int *launched) {
    if (launched)
        *launched = 0;
    int nops = g->n_outputs + g->n_inputs;
    int64_t numel = tocl_ops_numel(ops[0]);
    if (numel == 0)
        return TOCL_OK;
    static _Thread_local iter_space it; /* ~3 KB, kept off the stack */
    collapse(&it, ops, nops);
    int contiguous = it.rank == 0 || (it.rank == 1);
    for (int k = 0; k < nops && it.rank == 1; k++)
        contiguous = contiguous && it.strides[k][0] == 1;
    int rank = contiguous ? 0 : it.rank;
    if (rank > TOCL_MAX_DIMS)
        return tocl_fail(TOCL_E_UNSUPPORTED, "elementwise op over %d dims that cannot be collapsed; at most %d are "
                         "supported (make an operand contiguous first)", rank, TOCL_MAX_DIMS);
    /* The kernel's layout: strided operands that walk the innermost
     * dimension with stride 1 or 0 are indexed without it. */
    int unit = 0, zero = 0;
    for (int k = 0; k < nops && k < TOCL_EW_LAYOUT_OPS && rank > 0; k++) {
        unit |= (it.strides[k][rank - 1] == 1) << k;
        zero |= (it.strides[k][rank - 1] == 0) << k;
    }
    int layout = TOCL_EW_LAYOUT(rank, unit, zero);
    cl_command_queue q;
    TOCL_TRY(tocl_queue_get_nodefer(dev, stream, &q));
    static _Thread_local ew_key key;
    key.layout = layout;
    key.graph = *g;
    uint64_t h = tocl_ir_hash(g, layout);
    tocl_kernel_entry *e = NULL;
    if (mode == TOCL_EW_ASYNC) {
        TOCL_TRY(tocl_kernels_get_async(&ew_kind, dev, &key, h, &e));
        if (!e || !e->kernel)
            return TOCL_OK; /* being built, or failed to build: the caller runs the ops one by one */
    } else {
        TOCL_TRY(tocl_kernels_get(&ew_kind, dev, &key, h, &e));
    }
/* Keep the first failure; later calls are skipped. */
#define SET_ARG(kern, idx, size, ptr)                         \
    do {                                                      \
        if (err == CL_SUCCESS)                                \
            err = clSetKernelArg((kern), (idx), (size), (ptr)); \
    } while (0)
    pthread_mutex_lock(&e->lock);
    cl_kernel kk = e->kernel;
    cl_uint a = 0;
    cl_int err = CL_SUCCESS;
    cl_long n = numel;
    SET_ARG(kk, a++, sizeof n, &n);
    for (int k = 0; k < nops; k++) {
        SET_ARG(kk, a++, sizeof(cl_mem), &bufs[k]);
        SET_ARG(kk, a++, sizeof(cl_long), &offs[k]);
    }
    for (int k = 0; k < g->n_scalars; k++) {
        unsigned char bits[8];
        tocl_ops_scalar_bits(scalars[k], g->scalar_dtypes[k], bits);
        SET_ARG(kk, a++, tocl_dtype_size(g->scalar_dtypes[k]), bits);
    }
    for (int d = 0; d < rank; d++)
        SET_ARG(kk, a++, sizeof(cl_long), &it.sizes[d]);
    for (int k = 0; k < nops; k++)
        for (int d = 0; d < rank; d++)
            SET_ARG(kk, a++, sizeof(cl_long), &it.strides[k][d]);
    /* Geometry as documented in render.c: 1-D up to rank 1, else 2-D with
     * the innermost dimension along x; a work-group spans several outer
     * rows when the innermost size is small. */
    size_t local[2] = {e->local, 1}, global[2] = {(size_t)numel, 1};
    cl_uint work_dims = rank >= 2 ? 2 : 1;
    if (rank >= 2) {
        /* When some operand walks the innermost dimension with a large
         * stride (a transpose), square-ish tiles keep its accesses within
         * cache lines across the tile's rows: for a 4096^2 transposed add
         * on PoCL, 32 x 32 ran at 3-4 GB/s, 1024 x 1 at 0.6 GB/s (16 x 16 and
         * 64 x 64 were a little slower than 32 x 32). */
        size_t inner = (size_t)it.sizes[rank - 1], lx = 1, cap = e->local;
        for (int k = 0; k < nops; k++)
            if (it.strides[k][rank - 1] > 1)
                cap = cap < 32 ? cap : 32;
        while (lx < inner && lx < cap)
            lx *= 2;
        local[0] = lx;
        local[1] = e->local / lx;
        global[0] = inner;
        global[1] = (size_t)numel / inner;
    }
    for (cl_uint d = 0; d < work_dims; d++)
        global[d] = (global[d] + local[d] - 1) / local[d] * local[d];
    cl_event ev, *evp = tocl_trace_slot(&ev);
    if (err == CL_SUCCESS) {
        err = clEnqueueNDRangeKernel(q, kk, work_dims, NULL, global, local, 0, NULL, evp);
        if (__builtin_expect(evp != NULL, 0)) {
            char name[TOCL_TRACE_NAME_MAX];
            tocl_launch_trace_name("tocl_ew", g, name, sizeof name);
            tocl_trace_keep(ev, err, TOCL_TRACE_KERNEL, dev, stream, name, 0);
        }
    }
    pthread_mutex_unlock(&e->lock);
    if (err != CL_SUCCESS)
        return tocl_fail(TOCL_E_OPENCL, "launching elementwise kernel (%d nodes, rank %d, %lld elements) on device "
                         "%d: %s (%d)", g->n_nodes, rank, (long long)numel, dev, tocl_cl_error_name(err), (int)err);
    atomic_fetch_add(&stat_launches, 1);
    if (launched)
        *launched = 1;
    return TOCL_OK;
}
