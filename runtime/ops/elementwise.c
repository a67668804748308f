/* elementwise.c - tocl_ew_run: checks operands, collapses dimensions, finds
 * or builds the rendered kernel for (device, graph, rank) and enqueues it.
 * In fused eager mode the checked, resolved launch is handed to the deferral
 * (fusion/defer.c) instead, which later launches merged graphs through
 * tocl_ew_launch; kernels it has not seen are built on a background thread. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fusion/defer.h"
#include "fusion/ir_internal.h"
#include "ops/ew_internal.h"
#include "ops/ops_internal.h"

#define MAX_OPERANDS TOCL_EW_MAX_OPERANDS
#define RENDER_CAP (256 * 1024) /* 128 nodes at rank 16 need well under this */
#define CACHE_BUCKETS 256

/* One rendered kernel. Entries live for the process, so a pointer found
 * under cache_lock stays valid after it is released. */
typedef struct ew_entry {
    struct ew_entry *next;
    int dev, rank;
    uint64_t hash;
    tocl_ir_graph graph; /* compared in full: a hash collision must not run the wrong kernel */
    cl_kernel kernel;
    size_t local;
    pthread_mutex_t lock; /* clSetKernelArg + enqueue must not interleave between threads */
} ew_entry;

static ew_entry *cache[CACHE_BUCKETS];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint_least64_t stat_launches, stat_created;

void tocl_ew_stats_get(tocl_ew_stats *out) {
    if (!out)
        return;
    out->launches = atomic_load(&stat_launches);
    out->kernels_created = atomic_load(&stat_created);
}

static ew_entry *cache_find(int dev, int rank, uint64_t h, const tocl_ir_graph *g) {
    for (ew_entry *e = cache[h % CACHE_BUCKETS]; e; e = e->next)
        if (e->dev == dev && e->rank == rank && e->hash == h && tocl_ir_equal(&e->graph, g))
            return e;
    return NULL;
}

/* Bytes of kernel arguments, to refuse graphs the device cannot take
 * (CL_DEVICE_MAX_PARAMETER_SIZE is only 1024 on many devices). */
static size_t arg_bytes(const tocl_ir_graph *g, int rank) {
    size_t n = 8 + (size_t)(g->n_outputs + g->n_inputs) * (sizeof(cl_mem) + 8);
    for (int k = 0; k < g->n_scalars; k++)
        n += tocl_dtype_size(g->scalar_dtypes[k]);
    return n + (size_t)rank * 8 * (1 + (size_t)(g->n_outputs + g->n_inputs));
}

/* Render and build outside the cache lock (a build can take 0.6 s), then
 * insert unless another thread won the race. */
static tocl_status cache_get(int dev, int layout, const tocl_ir_graph *g, ew_entry **out) {
    int rank = layout; /* the cache's key; TOCL_EW_LAYOUT_RANK(layout) is the kernel's rank */
    uint64_t h = tocl_ir_hash(g, rank);
    pthread_mutex_lock(&cache_lock);
    ew_entry *e = cache_find(dev, rank, h, g);
    pthread_mutex_unlock(&cache_lock);
    if (e) {
        *out = e;
        return TOCL_OK;
    }
    cl_ulong max_param = 1024;
    clGetDeviceInfo(tocl_dev_id(dev), CL_DEVICE_MAX_PARAMETER_SIZE, sizeof max_param, &max_param, NULL);
    int nrank = TOCL_EW_LAYOUT_RANK(layout);
    if (arg_bytes(g, nrank) > max_param)
        return tocl_fail(TOCL_E_UNSUPPORTED, "elementwise kernel with %d operands at rank %d needs %zu bytes of "
                         "kernel arguments; device %d allows %llu. Fuse fewer operands into one graph",
                         g->n_outputs + g->n_inputs, nrank, arg_bytes(g, nrank), dev, (unsigned long long)max_param);
    char *src = malloc(RENDER_CAP);
    e = calloc(1, sizeof *e);
    if (!src || !e) {
        free(src);
        free(e);
        return tocl_fail(TOCL_E_OOM, "out of host memory rendering an elementwise kernel");
    }
    tocl_status s = tocl_ir_render_layout(g, layout, src, RENDER_CAP);
    /* IEEE division, as PyTorch computes on the CPU and on CUDA. */
    if (s == TOCL_OK)
        s = tocl_kernel_create(dev, src, "-cl-fp32-correctly-rounded-divide-sqrt", "tocl_ew", &e->kernel);
    free(src);
    if (s != TOCL_OK) {
        free(e);
        tocl_error_context("building the elementwise kernel for a %d-node graph at rank %d on device %d",
                           g->n_nodes, nrank, dev);
        return s;
    }
    e->dev = dev;
    e->rank = rank;
    e->hash = h;
    e->graph = *g;
    e->local = tocl_ops_local_size(dev, e->kernel);
    pthread_mutex_init(&e->lock, NULL);
    pthread_mutex_lock(&cache_lock);
    ew_entry *won = cache_find(dev, rank, h, g);
    if (won) {
        pthread_mutex_unlock(&cache_lock);
        clReleaseKernel(e->kernel);
        pthread_mutex_destroy(&e->lock);
        free(e);
        *out = won;
        return TOCL_OK;
    }
    e->next = cache[h % CACHE_BUCKETS];
    cache[h % CACHE_BUCKETS] = e;
    atomic_fetch_add(&stat_created, 1);
    pthread_mutex_unlock(&cache_lock);
    *out = e;
    return TOCL_OK;
}

/* Remember that g does not build: an entry without a kernel. */
static void cache_put_failed(int dev, int rank, uint64_t h, const tocl_ir_graph *g) {
    ew_entry *e = calloc(1, sizeof *e);
    if (!e)
        return;
    e->dev = dev;
    e->rank = rank;
    e->hash = h;
    e->graph = *g;
    pthread_mutex_init(&e->lock, NULL);
    pthread_mutex_lock(&cache_lock);
    if (cache_find(dev, rank, h, g)) {
        pthread_mutex_unlock(&cache_lock);
        pthread_mutex_destroy(&e->lock);
        free(e);
        return;
    }
    e->next = cache[h % CACHE_BUCKETS];
    cache[h % CACHE_BUCKETS] = e;
    pthread_mutex_unlock(&cache_lock);
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

static tocl_status check_operands(int dev, const tocl_ir_graph *g, const tocl_tensor *outputs,
                                  const tocl_tensor *inputs, const tocl_scalar *scalars) {
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

/* ---- background builds -------------------------------------------------------
 * Fused eager meets many new graphs; building one takes 0.1-1 s on PoCL.
 * Rather than stall the stream, the flush runs the ops one kernel each (their
 * kernels are already built) and asks this thread for the fused kernel, which
 * later flushes of the same graph find in the cache.
 *
 * At exit nobody needs the queued builds: they are dropped, and the one in
 * the driver gets EXIT_BOUND_S to finish. The thread must not be inside the
 * driver when exit() runs the driver's static destructors: LLVM's pass
 * registry is destroyed under a running compile and the process segfaults
 * (it did every time in a test that skipped the wait). So the exit guard
 * below runs before those destructors and, if the build outlives the bound,
 * ends the process with _exit (the status kept, stdio flushed) instead of
 * running them. */
#define EXIT_BOUND_S 1.0

typedef struct build_job {
    struct build_job *next;
    void (*fn)(const void *key);
    uint64_t hash;
    size_t size;
    unsigned char key[]; /* what fn builds; compared byte for byte */
} build_job;

static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t build_cv = PTHREAD_COND_INITIALIZER, build_done_cv = PTHREAD_COND_INITIALIZER;
static build_job *build_head, *build_tail, *build_current;
static int build_thread_started;
static int build_exiting;     /* set at exit: no job is queued or taken any more */
static double exit_deadline;  /* when the build in the driver stops being waited for */
static pid_t build_pid;       /* the process the thread runs in (a fork child has none) */
static uint64_t builds_finished;
static double build_seconds;

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *build_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&build_lock);
    for (;;) {
        /* At exit the queue stays empty: the thread sleeps here, outside the
         * driver, until the process ends. */
        while (!build_head || build_exiting)
            pthread_cond_wait(&build_cv, &build_lock);
        build_job *j = build_head;
        build_head = j->next;
        if (!build_head)
            build_tail = NULL;
        build_current = j;
        pthread_mutex_unlock(&build_lock);
        double t0 = now_seconds();
        j->fn(j->key);
        double dt = now_seconds() - t0;
        pthread_mutex_lock(&build_lock);
        build_current = NULL;
        builds_finished++;
        build_seconds += dt;
        free(j);
        pthread_cond_broadcast(&build_done_cv);
    }
    return NULL;
}

static int same_job(const build_job *j, void (*fn)(const void *), const void *key, size_t size, uint64_t h) {
    return j && j->fn == fn && j->hash == h && j->size == size && !memcmp(j->key, key, size);
}

static void exit_guard(int status, void *arg);

void tocl_build_async(void (*fn)(const void *key), const void *key, size_t size, uint64_t hash) {
    pthread_mutex_lock(&build_lock);
    int dup = build_exiting || same_job(build_current, fn, key, size, hash);
    for (build_job *j = build_head; j && !dup; j = j->next)
        dup = same_job(j, fn, key, size, hash);
    build_job *j = dup ? NULL : malloc(sizeof *j + size);
    if (j && !build_thread_started) {
        pthread_t t;
        if (pthread_create(&t, NULL, build_main, NULL) == 0) {
            pthread_detach(t);
            build_thread_started = 1;
            build_pid = getpid();
            /* Registered now, after the driver has loaded and built kernels,
             * so that exit() runs it before the driver's destructors. */
#if defined(__GLIBC__)
            on_exit(exit_guard, NULL);
#else
            atexit(tocl_ew_wait_builds); /* no exit status to keep: wait as long as it takes */
#endif
        }
    }
    if (j && build_thread_started) {
        j->next = NULL;
        j->fn = fn;
        j->hash = hash;
        j->size = size;
        memcpy(j->key, key, size);
        if (build_tail)
            build_tail->next = j;
        else
            build_head = j;
        build_tail = j;
        pthread_cond_signal(&build_cv);
    } else {
        free(j);
    }
    pthread_mutex_unlock(&build_lock);
}

/* An elementwise kernel: (dev, rank, graph). A graph that fails to build
 * (too many kernel arguments, a driver limit) is remembered as failed, so
 * that its ops keep running one kernel each without asking again. */
typedef struct ew_key {
    int dev, rank;
    tocl_ir_graph graph;
} ew_key;

static void ew_build(const void *key) {
    const ew_key *k = key;
    ew_entry *e = NULL;
    if (cache_get(k->dev, k->rank, &k->graph, &e) != TOCL_OK)
        cache_put_failed(k->dev, k->rank, tocl_ir_hash(&k->graph, k->rank), &k->graph);
}

static void build_async(int dev, int rank, uint64_t h, const tocl_ir_graph *g) {
    static _Thread_local ew_key k;
    memset(&k, 0, sizeof k);
    k.dev = dev;
    k.rank = rank;
    k.graph = *g;
    tocl_build_async(ew_build, &k, sizeof k, h);
}

void tocl_ew_wait_builds(void) {
    pthread_mutex_lock(&build_lock);
    while (build_head || build_current)
        pthread_cond_wait(&build_done_cv, &build_lock);
    pthread_mutex_unlock(&build_lock);
}

int tocl_ew_abandon_builds(double seconds) {
    if (!build_thread_started || build_pid != getpid())
        return 1; /* no thread here; a fork child must not take a lock the parent's thread held */
    pthread_mutex_lock(&build_lock);
    build_exiting = 1;
    while (build_head) {
        build_job *j = build_head;
        build_head = j->next;
        free(j);
    }
    build_tail = NULL;
    /* One deadline for every call, so that the wait at exit stays within the
     * first caller's bound however many callers there are. */
    double now = now_seconds();
    if (exit_deadline == 0 || now + seconds < exit_deadline)
        exit_deadline = now + seconds;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until); /* the condition variable's clock */
    double wait = exit_deadline - now;
    if (wait > 0) {
        double t = (double)until.tv_sec + 1e-9 * (double)until.tv_nsec + wait;
        until.tv_sec = (time_t)t;
        until.tv_nsec = (long)((t - (double)until.tv_sec) * 1e9);
        while (build_current && pthread_cond_timedwait(&build_done_cv, &build_lock, &until) == 0)
            ;
    }
    int idle = build_current == NULL;
    pthread_cond_broadcast(&build_done_cv); /* wake tocl_ew_wait_builds: the queue is empty */
    pthread_mutex_unlock(&build_lock);
    return idle;
}

static void exit_guard(int status, void *arg) {
    (void)arg;
    if (!tocl_ew_abandon_builds(EXIT_BOUND_S)) {
        fflush(NULL);
        _exit(status);
    }
}

void tocl_ew_build_stats(uint64_t *builds, double *seconds) {
    pthread_mutex_lock(&build_lock);
    if (builds)
        *builds = builds_finished;
    if (seconds)
        *seconds = build_seconds;
    pthread_mutex_unlock(&build_lock);
}

/* ---- launching ---------------------------------------------------------------- */

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
    ew_entry *e = NULL;
    if (mode == TOCL_EW_ASYNC) {
        uint64_t h = tocl_ir_hash(g, layout);
        pthread_mutex_lock(&cache_lock);
        e = cache_find(dev, layout, h, g);
        pthread_mutex_unlock(&cache_lock);
        if (!e)
            build_async(dev, layout, h, g);
        if (!e || !e->kernel)
            return TOCL_OK; /* being built, or failed to build: the caller runs the ops one by one */
    } else {
        TOCL_TRY(cache_get(dev, layout, g, &e));
        if (!e->kernel)
            return tocl_fail(TOCL_E_BUILD, "the elementwise kernel for this %d-node graph failed to build on the "
                             "background thread", g->n_nodes);
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
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(q, kk, work_dims, NULL, global, local, 0, NULL, NULL);
    pthread_mutex_unlock(&e->lock);
    if (err != CL_SUCCESS)
        return tocl_fail(TOCL_E_OPENCL, "launching elementwise kernel (%d nodes, rank %d, %lld elements) on device "
                         "%d: %s (%d)", g->n_nodes, rank, (long long)numel, dev, tocl_cl_error_name(err), (int)err);
    atomic_fetch_add(&stat_launches, 1);
    if (launched)
        *launched = 1;
    return TOCL_OK;
}

tocl_status tocl_ew_run(int dev, int stream, const tocl_ir_graph *g, const tocl_tensor *outputs,
                        const tocl_tensor *inputs, const tocl_scalar *scalars) {
    TOCL_TRY(check_operands(dev, g, outputs, inputs, scalars));
    if (tocl_ops_numel(&outputs[0]) == 0)
        return TOCL_OK;
    const tocl_tensor *ops[MAX_OPERANDS];
    int nops = g->n_outputs + g->n_inputs;
    for (int k = 0; k < nops; k++)
        ops[k] = k < g->n_outputs ? &outputs[k] : &inputs[k - g->n_outputs];
    cl_mem bufs[MAX_OPERANDS];
    cl_long offs[MAX_OPERANDS];
    int in_dev[MAX_OPERANDS], other_dev = 0;
    for (int k = 0; k < nops; k++) {
        int is_out = k < g->n_outputs, mdev = dev;
        TOCL_TRY(tocl_ops_resolve(dev, ops[k], is_out ? "output" : "input", is_out ? k : k - g->n_outputs, &bufs[k],
                         &offs[k], &mdev));
        if (mdev != dev && is_out)
            return tocl_fail(TOCL_E_INVALID, "output %d lives on device %d, not on device %d that runs the op", k,
                             mdev, dev);
        in_dev[k] = mdev;
        other_dev |= mdev != dev;
    }
    /* Fused eager records the launch (operands checked and resolved above,
     * so errors still surface at this op). Reads from another device take
     * the strict path below, which orders them across the two queues. */
    if (!other_dev && tocl_defer_active()) {
        int recorded = 0;
        TOCL_TRY(tocl_defer_record(dev, stream, g, ops, bufs, offs, scalars, &recorded));
        if (recorded)
            return TOCL_OK;
    }
    /* An input from another device of the context is read directly, after
     * the work its device has queued (a device-side wait). */
    for (int k = g->n_outputs; k < nops; k++)
        if (in_dev[k] != dev)
            TOCL_TRY(tocl_stream_wait_stream(dev, stream, in_dev[k], tocl_stream_current(in_dev[k])));
    /* Taking the queue runs deferred work of this stream first. */
    cl_command_queue q;
    TOCL_TRY(tocl_queue_get(dev, stream, &q));
    TOCL_TRY(tocl_ew_launch(dev, stream, g, ops, bufs, offs, scalars, TOCL_EW_BUILD, NULL));
    /* Inputs read from another device: that device's later writes (or the
     * reuse of a freed block) must wait until this kernel has read them. */
    for (int k = g->n_outputs; k < nops; k++)
        if (in_dev[k] != dev)
            TOCL_TRY(tocl_stream_wait_stream(in_dev[k], tocl_stream_current(in_dev[k]), dev, stream));
    return TOCL_OK;
}
