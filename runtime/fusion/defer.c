/* defer.c - fused eager: elementwise launches are recorded per (device,
 * stream) and, at the next flush, merged into as few kernels as possible.
 *
 * Recording happens after tocl_ew_run has checked and resolved the operands,
 * so errors still surface at the op. A flush is triggered by anything that
 * takes the stream's queue (queue/stream.c), by synchronisation, by the
 * allocator before it releases device buffers, and by a size limit.
 *
 * Grouping (decided at flush time, when it is known which intermediates
 * died): ops are visited in program order. An op joins the newest group it
 * conflicts with (reads or writes memory that group writes, or writes what
 * it reads) when every such overlap is the very same elements in the same
 * order, so each work-item only ever consumes values it produced itself.
 * An op that conflicts with no group may join any recent group over the same
 * elements (independent ops, e.g. one optimizer's updates of several
 * parameters). Groups run in creation order; an op only moves ahead of
 * groups it does not conflict with, so program order is kept where it
 * matters. Inside a merged graph a value written and read back is used
 * from the register (rounded as its storage would round it), and an output
 * is stored only when its tensor is still alive, a later group reads it, and
 * no later op of the group overwrites it. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fusion/defer.h"
#include "fusion/ir_internal.h"
#include "ops/ew_internal.h"
#include "ops/ops_internal.h"

#define DEV_MAX 64
#define REC_DIMS 8          /* iteration rank a deferred op may have (TensorIterator coalesces dims) */
#define MAX_OPS TOCL_EW_MAX_OPERANDS
#define MAX_RECORDS 4096    /* a stream with this many recorded ops flushes */
#define HASH_BUCKETS 4096
#define NEEDED_SCAN 1024    /* records walked back to find the writer of a value */

typedef struct d_operand {
    tocl_addr data;
    uint64_t lo, hi;   /* bytes touched: [lo, hi) */
    cl_mem buf;
    cl_long off;
    tocl_dtype dtype;
    int64_t flat_st;   /* the stride of a flat (rank <= 1) op's operand */
    int64_t st[REC_DIMS];
} d_operand;

typedef struct d_rec {
    int ndim, flat, nout, nops;
    int math; /* libm calls counted against the CPU limit: see math_calls() */
    int64_t numel;
    int64_t sizes[REC_DIMS];
    d_operand op[MAX_OPS];
    unsigned char dead[TOCL_IR_MAX_OUTPUTS];       /* storage freed since recording */
    unsigned char needed[TOCL_IR_MAX_OUTPUTS];     /* read from memory by a later group */
    unsigned char superseded[TOCL_IR_MAX_OUTPUTS]; /* overwritten by a later op of its group */
    int group, next_in_group;
    tocl_scalar sc[TOCL_IR_MAX_SCALARS];
    tocl_ir_graph g;
} d_rec;

typedef struct d_stream {
    d_rec *recs;
    int n, cap;
    unsigned epoch; /* bumped per flush: older free-table entries are stale */
} d_stream;

typedef struct h_entry {
    tocl_addr addr;
    int stream, rec, out, next;
    unsigned epoch;
} h_entry;

typedef struct d_dev {
    pthread_mutex_t mu;
    d_stream s[TOCL_MAX_STREAMS];
    int pending; /* records over all streams */
    int heads[HASH_BUCKETS];
    h_entry *ents;
    int nents, capents;
} d_dev;

typedef struct d_group {
    int first, last, nrec, math;
    int ndim, flat;
    int64_t numel;
    int64_t sizes[REC_DIMS];
    uint64_t lo, hi;
    int nodes, scalars, outputs; /* bounds on the merged graph's tables */
} d_group;

static d_dev *g_dev[DEV_MAX];
static pthread_mutex_t g_init_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int g_mode = -1;       /* -1: not read from the environment yet */
static atomic_long g_pending;        /* records over all devices: the hooks' fast check */
static atomic_int g_sync_build;
static int g_log = -1;
static _Thread_local int tl_flushing;

static struct {
    atomic_uint_least64_t ops_recorded, flushes, graphs, fused, kernels, separately, elided, hits, misses;
} st;

/* ---- mode ------------------------------------------------------------------- */

static int mode_now(void) {
    int m = atomic_load_explicit(&g_mode, memory_order_relaxed);
    if (m >= 0)
        return m;
    const char *v = tocl_env("TORCH_OCL_EAGER");
    int want = v && !strcmp(v, "fused") ? TOCL_EAGER_FUSED : TOCL_EAGER_STRICT;
    int expect = -1;
    atomic_compare_exchange_strong(&g_mode, &expect, want);
    return atomic_load(&g_mode);
}

int tocl_defer_active(void) { return mode_now() == TOCL_EAGER_FUSED; }

tocl_eager_mode tocl_eager_mode_get(void) { return (tocl_eager_mode)mode_now(); }

tocl_status tocl_eager_mode_set(tocl_eager_mode mode) {
    if (mode != TOCL_EAGER_STRICT && mode != TOCL_EAGER_FUSED)
        return tocl_fail(TOCL_E_INVALID, "eager mode %d is not strict (0) or fused (1)", (int)mode);
    mode_now();
    atomic_store(&g_mode, (int)mode);
    return tocl_fusion_flush_all();
}

void tocl_fusion_set_sync_build(int on) { atomic_store(&g_sync_build, on != 0); }
void tocl_fusion_wait_builds(void) { tocl_ew_wait_builds(); }

static int log_on(void) {
    if (g_log < 0) {
        const char *v = tocl_env("TORCH_OCL_LOG");
        g_log = v && strstr(v, "fusion") != NULL;
    }
    return g_log;
}

void tocl_fusion_stats_get(tocl_fusion_stats *out) {
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    out->ops_recorded = atomic_load(&st.ops_recorded);
    out->flushes = atomic_load(&st.flushes);
    out->graphs_flushed = atomic_load(&st.graphs);
    out->fused_launches = atomic_load(&st.fused);
    out->kernels_launched = atomic_load(&st.kernels);
    out->ops_run_separately = atomic_load(&st.separately);
    out->intermediates_elided = atomic_load(&st.elided);
    out->cache_hits = atomic_load(&st.hits);
    out->cache_misses = atomic_load(&st.misses);
    tocl_ew_build_stats(&out->builds, &out->build_seconds);
}

void tocl_fusion_stats_reset(void) {
    atomic_store(&st.ops_recorded, 0);
    atomic_store(&st.flushes, 0);
    atomic_store(&st.graphs, 0);
    atomic_store(&st.fused, 0);
    atomic_store(&st.kernels, 0);
    atomic_store(&st.separately, 0);
    atomic_store(&st.elided, 0);
    atomic_store(&st.hits, 0);
    atomic_store(&st.misses, 0);
}

static d_dev *dev_state(int dev, int create) {
    if (dev < 0 || dev >= DEV_MAX)
        return NULL;
    d_dev *d = __atomic_load_n(&g_dev[dev], __ATOMIC_ACQUIRE);
    if (d || !create)
        return d;
    pthread_mutex_lock(&g_init_mu);
    d = g_dev[dev];
    if (!d && (d = calloc(1, sizeof *d)) != NULL) {
        pthread_mutex_init(&d->mu, NULL);
        memset(d->heads, -1, sizeof d->heads);
        __atomic_store_n(&g_dev[dev], d, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&g_init_mu);
    return d;
}

/* ---- operands ------------------------------------------------------------- */

static int overlap(const d_operand *a, const d_operand *b) { return a->lo < b->hi && b->lo < a->hi; }

/* The same elements in the same iteration order (both described over one shape). */
static int identical(const d_operand *a, const d_operand *b, int ndim, const int64_t *sizes) {
    if (a->data != b->data || a->dtype != b->dtype)
        return 0;
    for (int d = 0; d < ndim; d++)
        if (sizes[d] > 1 && a->st[d] != b->st[d])
            return 0;
    return 1;
}

/* Describe a flat op over `sizes` (innermost first, as TensorIterator orders
 * them): every operand is walked in one consistent order, so the op is
 * unchanged, and it lines up with ops over that shape whose operands are
 * dense. Non-flat ops keep their shape. */
static void adapt(d_rec *r, int ndim, const int64_t *sizes) {
    if (!r->flat)
        return;
    r->ndim = ndim;
    for (int d = 0; d < ndim; d++)
        r->sizes[d] = sizes[d];
    for (int k = 0; k < r->nops; k++) {
        int64_t prod = 1;
        for (int d = 0; d < ndim; d++) {
            r->op[k].st[d] = r->op[k].flat_st * prod;
            prod *= sizes[d];
        }
    }
}

static unsigned hash_addr(tocl_addr a) { return (unsigned)((a >> 8) ^ (a >> 20)) % HASH_BUCKETS; }

/* On CPU devices (PoCL) a kernel with more than one libm call (exp, tanh,
 * sigmoid, sin, log, erf, ...) ran slower than the same ops as separate
 * kernels (tanh x4 fused: 0.51x; tanh then sigmoid chains 0.8x), while one
 * call among cheap arithmetic ran faster fused (mul, add, tanh: 1.18x; a
 * chain of 8 mul/add: 3.7x). So there a group holds at most one libm call;
 * GPUs fuse without this limit. Returns the number of libm calls in g, or
 * 0 when the device has no limit. */
static int math_calls(int dev, const tocl_ir_graph *g) {
    if (tocl_dev_props(dev)->kind != TOCL_DEVICE_CPU)
        return 0;
    int n = 0;
    for (int j = 0; j < g->n_nodes; j++) {
        tocl_ir_op op = g->nodes[j].op;
        if (!tocl_dtype_is_float(g->nodes[j].dtype))
            continue;
        switch (op) {
        case TOCL_IR_EXP: case TOCL_IR_EXP2: case TOCL_IR_EXPM1: case TOCL_IR_LOG: case TOCL_IR_LOG2:
        case TOCL_IR_LOG10: case TOCL_IR_LOG1P: case TOCL_IR_SIN: case TOCL_IR_COS: case TOCL_IR_TAN:
        case TOCL_IR_ASIN: case TOCL_IR_ACOS: case TOCL_IR_ATAN: case TOCL_IR_SINH: case TOCL_IR_COSH:
        case TOCL_IR_TANH: case TOCL_IR_ASINH: case TOCL_IR_ACOSH: case TOCL_IR_ATANH: case TOCL_IR_ERF:
        case TOCL_IR_ERFC: case TOCL_IR_ERFINV: case TOCL_IR_LGAMMA: case TOCL_IR_DIGAMMA: case TOCL_IR_SIGMOID:
        case TOCL_IR_ATAN2: case TOCL_IR_HYPOT: case TOCL_IR_XLOGY: case TOCL_IR_POW: case TOCL_IR_GELU:
        case TOCL_IR_GELU_TANH: case TOCL_IR_GELU_BACKWARD: case TOCL_IR_GELU_TANH_BACKWARD: case TOCL_IR_SILU:
        case TOCL_IR_SILU_BACKWARD: case TOCL_IR_MISH: case TOCL_IR_LOGSIGMOID: case TOCL_IR_LOGSIGMOID_BACKWARD:
        case TOCL_IR_SOFTPLUS: case TOCL_IR_FMOD: case TOCL_IR_REMAINDER: case TOCL_IR_FLOOR_DIV:
            n++;
            break;
        default:
            break;
        }
    }
    return n;
}

#define CPU_MATH_PER_GROUP 1

/* ---- recording --------------------------------------------------------------- */

static tocl_status flush_locked(d_dev *d, int dev, int stream);

tocl_status tocl_defer_record(int dev, int stream, const tocl_ir_graph *g, const tocl_tensor *const *ops,
                              const cl_mem *bufs, const cl_long *offs, const tocl_scalar *scalars, int *recorded) {
    *recorded = 0;
    int ndim = ops[0]->ndim, nops = g->n_outputs + g->n_inputs;
    if (ndim > REC_DIMS || stream < 0 || stream >= TOCL_MAX_STREAMS)
        return TOCL_OK;
    d_operand tmp[MAX_OPS];
    for (int k = 0; k < nops; k++) {
        const tocl_tensor *t = ops[k];
        d_operand *o = &tmp[k];
        uint64_t last = 0, es = tocl_dtype_size(t->dtype);
        for (int d = 0; d < ndim; d++) {
            o->st[d] = t->strides[d];
            last += (uint64_t)(t->sizes[d] - 1) * (uint64_t)t->strides[d];
        }
        o->data = t->data;
        o->lo = t->data;
        o->hi = t->data + (last + 1) * es;
        o->buf = bufs[k];
        o->off = offs[k];
        o->dtype = t->dtype;
        o->flat_st = ndim == 1 ? t->strides[0] : 0;
    }
    /* An op whose outputs overlap its own operands other than element for
     * element is left to strict mode, which runs it exactly as asked. */
    for (int a = 0; a < g->n_outputs; a++)
        for (int b = 0; b < nops; b++)
            if (b != a && overlap(&tmp[a], &tmp[b]) && !identical(&tmp[a], &tmp[b], ndim, ops[0]->sizes))
                return TOCL_OK;
    d_dev *d = dev_state(dev, 1);
    if (!d)
        return TOCL_OK;
    pthread_mutex_lock(&d->mu);
    d_stream *s = &d->s[stream];
    tocl_status rc = TOCL_OK;
    /* Work recorded on another stream is enqueued before this op, as strict
     * mode would have enqueued it: code that hands data between streams
     * without waiting (racy, but common and usually harmless) keeps the
     * order it saw in strict mode. */
    for (int o = 0; o < TOCL_MAX_STREAMS && rc == TOCL_OK && d->pending > s->n; o++)
        if (o != stream && d->s[o].n)
            rc = flush_locked(d, dev, o);
    if (rc == TOCL_OK && s->n >= MAX_RECORDS)
        rc = flush_locked(d, dev, stream);
    if (rc == TOCL_OK && s->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 64;
        d_rec *v = realloc(s->recs, (size_t)cap * sizeof *v);
        if (!v) {
            pthread_mutex_unlock(&d->mu);
            return TOCL_OK; /* run strictly; the caller flushes first */
        }
        s->recs = v;
        s->cap = cap;
    }
    if (rc != TOCL_OK) {
        pthread_mutex_unlock(&d->mu);
        return rc;
    }
    d_rec *r = &s->recs[s->n];
    r->ndim = ndim;
    r->math = math_calls(dev, g);
    r->flat = ndim <= 1;
    r->nout = g->n_outputs;
    r->nops = nops;
    r->numel = tocl_ops_numel(ops[0]);
    for (int k = 0; k < ndim; k++)
        r->sizes[k] = ops[0]->sizes[k];
    memcpy(r->op, tmp, (size_t)nops * sizeof tmp[0]);
    memset(r->dead, 0, sizeof r->dead);
    memset(r->needed, 0, sizeof r->needed);
    memset(r->superseded, 0, sizeof r->superseded);
    if (g->n_scalars)
        memcpy(r->sc, scalars, (size_t)g->n_scalars * sizeof *scalars);
    memcpy(&r->g, g, sizeof *g);
    /* Outputs by address, for tocl_defer_note_free. */
    for (int k = 0; k < g->n_outputs; k++) {
        if (d->nents == d->capents) {
            int cap = d->capents ? d->capents * 2 : 256;
            h_entry *v = realloc(d->ents, (size_t)cap * sizeof *v);
            if (!v)
                break; /* then this output is simply always stored */
            d->ents = v;
            d->capents = cap;
        }
        h_entry *e = &d->ents[d->nents];
        unsigned hb = hash_addr(r->op[k].data);
        e->addr = r->op[k].data;
        e->stream = stream;
        e->rec = s->n;
        e->out = k;
        e->epoch = s->epoch;
        e->next = d->heads[hb];
        d->heads[hb] = d->nents++;
    }
    s->n++;
    d->pending++;
    atomic_fetch_add(&g_pending, 1);
    pthread_mutex_unlock(&d->mu);
    atomic_fetch_add(&st.ops_recorded, 1);
    *recorded = 1;
    return TOCL_OK;
}

void tocl_defer_note_free(int dev, tocl_addr addr, size_t size) {
    (void)size;
    if (!atomic_load_explicit(&g_pending, memory_order_relaxed))
        return;
    d_dev *d = dev_state(dev, 0);
    if (!d)
        return;
    pthread_mutex_lock(&d->mu);
    for (int i = d->heads[hash_addr(addr)]; i >= 0; i = d->ents[i].next) {
        h_entry *e = &d->ents[i];
        d_stream *s = &d->s[e->stream];
        if (e->addr == addr && e->epoch == s->epoch && e->rec < s->n)
            s->recs[e->rec].dead[e->out] = 1;
    }
    pthread_mutex_unlock(&d->mu);
}

/* ---- grouping ------------------------------------------------------------------ */

/* Does r touch memory that group gr writes, or write memory gr reads? */
static int conflicts(const d_rec *recs, const d_group *gr, const d_rec *r) {
    int hit = 0;
    for (int k = 0; k < r->nops && !hit; k++)
        hit = r->op[k].lo < gr->hi && gr->lo < r->op[k].hi;
    if (!hit)
        return 0;
    for (int w = gr->first; w >= 0; w = recs[w].next_in_group) {
        const d_rec *q = &recs[w];
        for (int a = 0; a < r->nops; a++)
            for (int b = 0; b < q->nops; b++)
                if ((a < r->nout || b < q->nout) && overlap(&r->op[a], &q->op[b]))
                    return 1;
    }
    return 0;
}

/* Output b of w wrote every byte a reads: a dense output (no gaps) whose
 * range contains a's. */
static int covers(const d_rec *w, int b, const d_operand *a) {
    const d_operand *o = &w->op[b];
    return o->hi - o->lo == (uint64_t)w->numel * tocl_dtype_size(o->dtype) && o->lo <= a->lo && a->hi <= o->hi;
}

static int same_shape(int n1, const int64_t *s1, int n2, const int64_t *s2) {
    if (n1 != n2)
        return 0;
    for (int d = 0; d < n1; d++)
        if (s1[d] != s2[d])
            return 0;
    return 1;
}

static void adapt_group(d_rec *recs, d_group *gr, int ndim, const int64_t *sizes) {
    for (int w = gr->first; w >= 0; w = recs[w].next_in_group)
        adapt(&recs[w], ndim, sizes);
}

/* A value stored as `storage` by node dtype `node` can be used from the
 * register by a reader of that storage. */
static int substitutable(tocl_dtype node, tocl_dtype storage) { return node == tocl_dtype_compute(storage); }

/* Can records x and y run in one kernel? Every overlap that involves a
 * write must be the same elements in the same order, and a value passed
 * between them must be usable from the register. */
static int pair_ok(const d_rec *x, const d_rec *y, int ndim, const int64_t *sizes) {
    for (int a = 0; a < x->nops; a++)
        for (int b = 0; b < y->nops; b++) {
            if (!(a < x->nout || b < y->nout) || !overlap(&x->op[a], &y->op[b]))
                continue;
            if (!identical(&x->op[a], &y->op[b], ndim, sizes))
                return 0;
            if (a < x->nout && b >= y->nout && !substitutable(x->g.nodes[x->g.output_nodes[a]].dtype, x->op[a].dtype))
                return 0;
            if (b < y->nout && a >= x->nout && !substitutable(y->g.nodes[y->g.output_nodes[b]].dtype, y->op[b].dtype))
                return 0;
        }
    return 1;
}

static int live_outputs(const d_rec *r) {
    int n = 0;
    for (int k = 0; k < r->nout; k++)
        n += !r->dead[k];
    return n;
}

/* Distinct inputs the union of lists a and b reads from memory (inputs no
 * op of the union writes). */
static int count_inputs(const d_rec *recs, int first_a, int first_b, int ndim, const int64_t *sizes) {
    const d_operand *seen[TOCL_IR_MAX_INPUTS + 1];
    int n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int w = pass ? first_b : first_a; w >= 0; w = recs[w].next_in_group)
            for (int a = recs[w].nout; a < recs[w].nops; a++) {
                const d_operand *o = &recs[w].op[a];
                int written = 0, known = 0;
                for (int p2 = 0; p2 < 2 && !written; p2++)
                    for (int v = p2 ? first_b : first_a; v >= 0 && !written; v = recs[v].next_in_group)
                        for (int b = 0; b < recs[v].nout && !written; b++)
                            written = overlap(o, &recs[v].op[b]);
                for (int e = 0; e < n && !known && !written; e++)
                    known = identical(seen[e], o, ndim, sizes);
                if (!written && !known) {
                    if (n == TOCL_IR_MAX_INPUTS)
                        return n + 1;
                    seen[n++] = o;
                }
            }
    return n;
}

static int math_ok(int a, int b) { return !(a || b) || a + b <= CPU_MATH_PER_GROUP; }

/* Try to append r to group gr; 1 if it joined. */
static int try_join(d_rec *recs, d_group *gr, int ri) {
    d_rec *r = &recs[ri];
    if (!gr->nrec || r->numel != gr->numel || !math_ok(gr->math, r->math))
        return 0;
    int live = live_outputs(r);
    if (gr->nodes + r->g.n_nodes > TOCL_IR_MAX_NODES || gr->scalars + r->g.n_scalars > TOCL_IR_MAX_SCALARS ||
        gr->outputs + live > TOCL_IR_MAX_OUTPUTS)
        return 0;
    /* One shape for all: a flat op takes the group's, a flat group takes r's. */
    int regroup = 0;
    if (!r->flat) {
        if (gr->flat)
            regroup = 1;
        else if (!same_shape(r->ndim, r->sizes, gr->ndim, gr->sizes))
            return 0;
    }
    int ndim = regroup ? r->ndim : gr->ndim;
    const int64_t *sizes = regroup ? r->sizes : gr->sizes;
    adapt(r, ndim, sizes);
    if (regroup)
        adapt_group(recs, gr, ndim, sizes);
    int ok = 1;
    for (int w = gr->first; w >= 0 && ok; w = recs[w].next_in_group)
        ok = pair_ok(&recs[w], r, ndim, sizes);
    if (ok) {
        r->next_in_group = -1;
        ok = count_inputs(recs, gr->first, ri, ndim, sizes) <= TOCL_IR_MAX_INPUTS;
    }
    if (!ok) {
        if (regroup)
            adapt_group(recs, gr, gr->ndim, gr->sizes);
        return 0;
    }
    if (regroup) {
        gr->flat = 0;
        gr->ndim = r->ndim;
        memcpy(gr->sizes, r->sizes, sizeof gr->sizes);
    }
    gr->nodes += r->g.n_nodes; /* a bound: a substituted input's node becomes at most one rounding node */
    gr->scalars += r->g.n_scalars;
    gr->outputs += live;
    gr->math += r->math;
    recs[gr->last].next_in_group = ri;
    gr->last = ri;
    gr->nrec++;
    for (int k = 0; k < r->nops; k++) {
        gr->lo = r->op[k].lo < gr->lo ? r->op[k].lo : gr->lo;
        gr->hi = r->op[k].hi > gr->hi ? r->op[k].hi : gr->hi;
    }
    return 1;
}

static void new_group(d_rec *recs, d_group *gr, int ri) {
    d_rec *r = &recs[ri];
    memset(gr, 0, sizeof *gr);
    r->next_in_group = -1;
    gr->first = gr->last = ri;
    gr->nrec = 1;
    gr->math = r->math;
    gr->ndim = r->ndim;
    gr->flat = r->flat;
    gr->numel = r->numel;
    memcpy(gr->sizes, r->sizes, sizeof gr->sizes);
    gr->lo = UINT64_MAX;
    for (int k = 0; k < r->nops; k++) {
        gr->lo = r->op[k].lo < gr->lo ? r->op[k].lo : gr->lo;
        gr->hi = r->op[k].hi > gr->hi ? r->op[k].hi : gr->hi;
    }
    gr->nodes = r->g.n_nodes;
    gr->scalars = r->g.n_scalars;
    gr->outputs = live_outputs(r);
}

/* Move group gx's ops into the newer group gc (an op of gc consumes what
 * gx computes, e.g. an optimizer's last update reading state that earlier
 * ops updated). Legal when no group between them conflicts with gx's ops
 * (they move past those groups) and the union fits one kernel. */
static int absorb(d_rec *recs, d_group *groups, int gx, int gc) {
    d_group *x = &groups[gx], *c = &groups[gc];
    if (!x->nrec || x->numel != c->numel || !math_ok(x->math, c->math) ||
        x->nodes + c->nodes > TOCL_IR_MAX_NODES || x->scalars + c->scalars > TOCL_IR_MAX_SCALARS ||
        x->outputs + c->outputs > TOCL_IR_MAX_OUTPUTS)
        return 0;
    if (!x->flat && !c->flat && !same_shape(x->ndim, x->sizes, c->ndim, c->sizes))
        return 0;
    for (int w = x->first; w >= 0; w = recs[w].next_in_group)
        for (int gy = gx + 1; gy < gc; gy++)
            if (groups[gy].nrec && conflicts(recs, &groups[gy], &recs[w]))
                return 0;
    const d_group *shape = c->flat ? x : c;
    int ndim = shape->ndim;
    int64_t sizes[REC_DIMS];
    memcpy(sizes, shape->sizes, sizeof sizes);
    adapt_group(recs, x, ndim, sizes);
    adapt_group(recs, c, ndim, sizes);
    int ok = 1;
    for (int a = x->first; a >= 0 && ok; a = recs[a].next_in_group)
        for (int b = c->first; b >= 0 && ok; b = recs[b].next_in_group)
            ok = pair_ok(&recs[a], &recs[b], ndim, sizes);
    if (ok)
        ok = count_inputs(recs, x->first, c->first, ndim, sizes) <= TOCL_IR_MAX_INPUTS;
    if (!ok) {
        adapt_group(recs, x, x->ndim, x->sizes);
        adapt_group(recs, c, c->ndim, c->sizes);
        return 0;
    }
    /* Merge the two lists in program order (record index). */
    int head = -1, *tail = &head, a = x->first, b = c->first;
    while (a >= 0 || b >= 0) {
        int take = (b < 0 || (a >= 0 && a < b)) ? a : b;
        if (take == a)
            a = recs[a].next_in_group;
        else
            b = recs[b].next_in_group;
        recs[take].group = gc;
        *tail = take;
        tail = &recs[take].next_in_group;
        c->last = take;
    }
    *tail = -1;
    c->first = head;
    c->nrec += x->nrec;
    c->nodes += x->nodes;
    c->scalars += x->scalars;
    c->outputs += x->outputs;
    c->math += x->math;
    c->flat = c->flat && x->flat;
    c->ndim = ndim;
    memcpy(c->sizes, sizes, sizeof c->sizes);
    c->lo = x->lo < c->lo ? x->lo : c->lo;
    c->hi = x->hi > c->hi ? x->hi : c->hi;
    memset(x, 0, sizeof *x);
    x->first = x->last = -1;
    return 1;
}

/* After grouping: an output is superseded when a later op of its group
 * overwrites it, and needed when an op of another group reads it. To find
 * the writers of what an op reads, walk back to the newest writer that
 * covers it: older ones wrote memory that was overwritten in between (an
 * address the allocator handed out again). */
static void mark_outputs(d_rec *recs, int n, const d_group *groups, int ng) {
    for (int gi = 0; gi < ng; gi++)
        for (int w = groups[gi].first; w >= 0; w = recs[w].next_in_group)
            for (int b = 0; b < recs[w].nout; b++)
                for (int v = recs[w].next_in_group; v >= 0 && !recs[w].superseded[b]; v = recs[v].next_in_group)
                    for (int k = 0; k < recs[v].nout; k++)
                        if (overlap(&recs[w].op[b], &recs[v].op[k]))
                            recs[w].superseded[b] = 1;
    for (int i = 0; i < n; i++) {
        d_rec *r = &recs[i];
        for (int a = r->nout; a < r->nops; a++) {
            int covered = 0, w = i - 1;
            for (; w >= 0 && w >= i - NEEDED_SCAN && !covered; w--)
                for (int b = 0; b < recs[w].nout; b++)
                    if (overlap(&r->op[a], &recs[w].op[b])) {
                        if (recs[w].group != r->group)
                            recs[w].needed[b] = 1;
                        covered |= covers(&recs[w], b, &r->op[a]);
                    }
            for (; w >= 0 && !covered; w--) /* too far back: every overlapping writer */
                for (int b = 0; b < recs[w].nout; b++)
                    if (recs[w].group != r->group && overlap(&r->op[a], &recs[w].op[b]))
                        recs[w].needed[b] = 1;
        }
    }
}

/* Place every record; returns the number of groups (some may end empty). */
static int group_all(d_rec *recs, int n, d_group *groups) {
    int ng = 0;
    for (int i = 0; i < n; i++) {
        d_rec *r = &recs[i];
        r->next_in_group = -1;
        int gd = -1;
        for (int gi = ng - 1; gi >= 0 && gd < 0; gi--)
            if (groups[gi].nrec && conflicts(recs, &groups[gi], r))
                gd = gi;
        /* Only producer-consumer fusion: independent ops (each parameter's
         * first update in a foreach optimizer) start their own group, so
         * the ops that later connect them still find room. */
        if (gd >= 0 && try_join(recs, &groups[gd], i)) {
            r->group = gd;
            for (int gx = gd - 1; gx >= 0; gx--)
                if (groups[gx].nrec && conflicts(recs, &groups[gx], r))
                    absorb(recs, groups, gx, gd);
        } else {
            r->group = ng;
            new_group(recs, &groups[ng++], i);
        }
    }
    mark_outputs(recs, n, groups, ng);
    return ng;
}

/* ---- running a group ------------------------------------------------------------ */

static int stored(const d_rec *r, int k) { return !r->superseded[k] && (!r->dead[k] || r->needed[k]); }

static void to_tensor(tocl_tensor *t, const d_operand *o, int ndim, const int64_t *sizes) {
    t->data = o->data;
    t->dtype = o->dtype;
    t->ndim = ndim;
    for (int d = 0; d < ndim; d++) {
        t->sizes[d] = sizes[d];
        t->strides[d] = o->st[d];
    }
}

/* Enqueue one recorded op as its own kernel (strict mode's launch). */
static tocl_status run_one(int dev, int stream, d_rec *r) {
    static _Thread_local tocl_tensor ts[MAX_OPS];
    const tocl_tensor *ops[MAX_OPS];
    cl_mem bufs[MAX_OPS];
    cl_long offs[MAX_OPS];
    for (int k = 0; k < r->nops; k++) {
        to_tensor(&ts[k], &r->op[k], r->ndim, r->sizes);
        ops[k] = &ts[k];
        bufs[k] = r->op[k].buf;
        offs[k] = r->op[k].off;
    }
    int launched = 0;
    TOCL_TRY(tocl_ew_launch(dev, stream, &r->g, ops, bufs, offs, r->sc, TOCL_EW_BUILD, &launched));
    atomic_fetch_add(&st.kernels, (uint64_t)launched);
    return TOCL_OK;
}

static int append_node(tocl_ir_graph *m, tocl_ir_op op, tocl_dtype dt, int a0, int a1, int a2) {
    if (m->n_nodes >= TOCL_IR_MAX_NODES)
        return -1;
    tocl_ir_node *n = &m->nodes[m->n_nodes];
    n->op = op;
    n->dtype = dt;
    n->arg[0] = a0;
    n->arg[1] = a1;
    n->arg[2] = a2;
    return m->n_nodes++;
}

typedef struct merged {
    tocl_ir_graph g;
    int nout, nin;
    const d_operand *out[TOCL_IR_MAX_OUTPUTS], *in[TOCL_IR_MAX_INPUTS];
    int in_node[TOCL_IR_MAX_INPUTS];
    tocl_scalar sc[TOCL_IR_MAX_SCALARS];
    int elided;
} merged;

/* Build the group's merged graph; 0 if it does not fit (run separately). */
static int merge_fail(int line) {
    if (log_on())
        fprintf(stderr, "[torch_ocl fusion] merge gave up at defer.c:%d\n", line);
    return 0;
}

static int merge(d_rec *recs, const d_group *gr, merged *m) {
    tocl_ir_graph *g = &m->g;
    memset(g, 0, sizeof *g);
    m->nout = m->nin = m->elided = 0;
    /* Values written so far: operand and node, newest last. */
    static _Thread_local struct { const d_operand *op; int node; } wr[TOCL_IR_MAX_NODES];
    int nwr = 0;
    for (int w = gr->first; w >= 0; w = recs[w].next_in_group) {
        d_rec *r = &recs[w];
        int map[TOCL_IR_MAX_NODES];
        for (int j = 0; j < r->g.n_nodes; j++) {
            const tocl_ir_node *n = &r->g.nodes[j];
            int v = -1;
            if (n->op == TOCL_IR_INPUT) {
                const d_operand *a = &r->op[r->nout + n->arg[0]];
                int src = -1;
                for (int i = nwr - 1; i >= 0 && src < 0; i--)
                    if (overlap(a, wr[i].op))
                        src = wr[i].node; /* identical, as try_join checked */
                if (src >= 0 && a->dtype == TOCL_F16)
                    v = append_node(g, TOCL_IR_ROUND_F16, n->dtype, src, 0, 0);
                else if (src >= 0 && a->dtype == TOCL_BF16)
                    v = append_node(g, TOCL_IR_ROUND_BF16, n->dtype, src, 0, 0);
                else if (src >= 0)
                    v = src;
                else {
                    int e = 0;
                    while (e < m->nin && !identical(m->in[e], a, gr->ndim, gr->sizes))
                        e++;
                    if (e == m->nin) {
                        if (m->nin >= TOCL_IR_MAX_INPUTS)
                            return merge_fail(__LINE__);
                        m->in[m->nin] = a;
                        g->input_dtypes[m->nin] = a->dtype;
                        m->in_node[m->nin++] = append_node(g, TOCL_IR_INPUT, n->dtype, e, 0, 0);
                        g->n_inputs = m->nin;
                    }
                    v = m->in_node[e];
                }
            } else if (n->op == TOCL_IR_SCALAR) {
                if (g->n_scalars >= TOCL_IR_MAX_SCALARS)
                    return merge_fail(__LINE__);
                m->sc[g->n_scalars] = r->sc[n->arg[0]];
                g->scalar_dtypes[g->n_scalars] = r->g.scalar_dtypes[n->arg[0]];
                v = append_node(g, TOCL_IR_SCALAR, n->dtype, g->n_scalars++, 0, 0);
            } else {
                const tocl_ir_op_info *info = tocl_ir_op_info_get(n->op);
                int args[3] = {0, 0, 0};
                for (int k = 0; info && k < info->arity; k++)
                    args[k] = map[n->arg[k]];
                v = append_node(g, n->op, n->dtype, args[0], args[1], args[2]);
            }
            if (v < 0)
                return merge_fail(__LINE__);
            map[j] = v;
        }
        for (int k = 0; k < r->nout; k++) {
            int v = map[r->g.output_nodes[k]];
            if (nwr >= TOCL_IR_MAX_NODES)
                return merge_fail(__LINE__);
            wr[nwr].op = &r->op[k];
            wr[nwr++].node = v;
            if (!stored(r, k)) {
                m->elided++;
                continue;
            }
            if (m->nout >= TOCL_IR_MAX_OUTPUTS)
                return merge_fail(__LINE__);
            m->out[m->nout] = &r->op[k];
            g->output_nodes[m->nout] = v;
            g->output_dtypes[m->nout++] = r->op[k].dtype;
            g->n_outputs = m->nout;
        }
    }
    if (m->nout == 0)
        return 1; /* nothing observable: the caller runs nothing */
    if (tocl_ir_validate(g) != TOCL_OK) {
        if (log_on())
            fprintf(stderr, "[torch_ocl fusion] merged graph invalid: %s\n", tocl_last_error());
        return 0;
    }
    return 1;
}

static void log_group(int dev, int stream, int gi, d_rec *recs, const d_group *gr, const merged *m,
                      const char *how) {
    char ops[160];
    size_t len = 0;
    ops[0] = 0;
    for (int w = gr->first; w >= 0 && len < sizeof ops - 16; w = recs[w].next_in_group) {
        const tocl_ir_graph *g = &recs[w].g;
        for (int j = 0; j < g->n_nodes && len < sizeof ops - 16; j++) {
            tocl_ir_op op = g->nodes[j].op;
            if (op == TOCL_IR_INPUT || op == TOCL_IR_SCALAR)
                continue;
            len += (size_t)snprintf(ops + len, sizeof ops - len, "%s%s", len ? " " : "", tocl_ir_op_name(op));
        }
    }
    fprintf(stderr, "[torch_ocl fusion] dev %d stream %d group %d: %d ops [%s] -> %s; %d inputs, %d outputs "
            "stored, %d elided\n", dev, stream, gi, gr->nrec, ops, how, m ? m->nin : -1, m ? m->nout : -1,
            m ? m->elided : 0);
}

static tocl_status run_group(int dev, int stream, d_rec *recs, const d_group *gr, int gi) {
    if (!gr->nrec)
        return TOCL_OK; /* absorbed into a later group */
    atomic_fetch_add(&st.graphs, 1);
    d_rec *r0 = &recs[gr->first];
    if (gr->nrec == 1) {
        int any = 0;
        for (int k = 0; k < r0->nout; k++)
            any |= stored(r0, k);
        if (log_on())
            log_group(dev, stream, gi, recs, gr, NULL, any ? "1 kernel" : "nothing (result unused)");
        if (!any) {
            atomic_fetch_add(&st.elided, (uint64_t)r0->nout);
            return TOCL_OK;
        }
        return run_one(dev, stream, r0);
    }
    static _Thread_local merged m;
    int ok = merge(recs, gr, &m), launched = 0;
    if (ok && m.nout == 0) {
        atomic_fetch_add(&st.elided, (uint64_t)m.elided);
        if (log_on())
            log_group(dev, stream, gi, recs, gr, &m, "nothing (results unused)");
        return TOCL_OK;
    }
    if (ok) {
        static _Thread_local tocl_tensor ts[MAX_OPS];
        const tocl_tensor *ops[MAX_OPS];
        cl_mem bufs[MAX_OPS];
        cl_long offs[MAX_OPS];
        int nops = m.nout + m.nin;
        for (int k = 0; k < nops; k++) {
            const d_operand *o = k < m.nout ? m.out[k] : m.in[k - m.nout];
            to_tensor(&ts[k], o, gr->ndim, gr->sizes);
            ops[k] = &ts[k];
            bufs[k] = o->buf;
            offs[k] = o->off;
        }
        tocl_ew_build mode = atomic_load(&g_sync_build) ? TOCL_EW_BUILD : TOCL_EW_ASYNC;
        tocl_status s = tocl_ew_launch(dev, stream, &m.g, ops, bufs, offs, m.sc, mode, &launched);
        if (s != TOCL_OK)
            launched = 0; /* a merged graph the device refuses: run the ops one by one */
        atomic_fetch_add(launched ? &st.hits : &st.misses, 1);
    }
    if (launched) {
        atomic_fetch_add(&st.kernels, 1);
        atomic_fetch_add(&st.fused, 1);
        atomic_fetch_add(&st.elided, (uint64_t)m.elided);
        if (log_on())
            log_group(dev, stream, gi, recs, gr, &m, "1 fused kernel");
        return TOCL_OK;
    }
    if (log_on())
        log_group(dev, stream, gi, recs, gr, ok ? &m : NULL,
                  ok ? "separate kernels while the fused one builds" : "separate kernels (does not fit one)");
    atomic_fetch_add(&st.separately, (uint64_t)gr->nrec);
    for (int w = gr->first; w >= 0; w = recs[w].next_in_group)
        TOCL_TRY(run_one(dev, stream, &recs[w]));
    return TOCL_OK;
}

/* ---- flushing ------------------------------------------------------------------- */

static tocl_status flush_locked(d_dev *d, int dev, int stream) {
    d_stream *s = &d->s[stream];
    int n = s->n;
    if (n == 0 || tl_flushing)
        return TOCL_OK;
    tl_flushing = 1;
    atomic_fetch_add(&st.flushes, 1);
    tocl_status rc = TOCL_OK;
    if (n == 1) {
        d_group one;
        s->recs[0].next_in_group = -1;
        new_group(s->recs, &one, 0);
        rc = run_group(dev, stream, s->recs, &one, 0);
    } else {
        d_group *groups = malloc((size_t)n * sizeof *groups);
        if (!groups) {
            for (int i = 0; i < n && rc == TOCL_OK; i++)
                rc = run_one(dev, stream, &s->recs[i]);
        } else {
            int ng = group_all(s->recs, n, groups);
            if (log_on())
                fprintf(stderr, "[torch_ocl fusion] dev %d stream %d: flushing %d ops in %d groups\n", dev, stream,
                        n, ng);
            for (int gi = 0; gi < ng && rc == TOCL_OK; gi++)
                rc = run_group(dev, stream, s->recs, &groups[gi], gi);
            free(groups);
        }
    }
    /* Whatever happened, the records are consumed: a failure is reported
     * once, at the op that caused the flush, and not replayed. */
    s->n = 0;
    s->epoch++;
    d->pending -= n;
    atomic_fetch_sub(&g_pending, n);
    if (d->pending == 0) {
        d->nents = 0;
        memset(d->heads, -1, sizeof d->heads);
    }
    tl_flushing = 0;
    if (rc != TOCL_OK)
        tocl_error_context("running %d deferred elementwise ops (fused eager mode) on device %d stream %d", n, dev,
                           stream);
    return rc;
}

tocl_status tocl_defer_flush(int dev, int stream) {
    if (!atomic_load_explicit(&g_pending, memory_order_relaxed) || stream < 0 || stream >= TOCL_MAX_STREAMS)
        return TOCL_OK;
    d_dev *d = dev_state(dev, 0);
    if (!d)
        return TOCL_OK;
    pthread_mutex_lock(&d->mu);
    tocl_status rc = flush_locked(d, dev, stream);
    pthread_mutex_unlock(&d->mu);
    return rc;
}

tocl_status tocl_defer_flush_device(int dev) {
    if (!atomic_load_explicit(&g_pending, memory_order_relaxed))
        return TOCL_OK;
    d_dev *d = dev_state(dev, 0);
    if (!d)
        return TOCL_OK;
    tocl_status rc = TOCL_OK;
    pthread_mutex_lock(&d->mu);
    for (int s = 0; s < TOCL_MAX_STREAMS && rc == TOCL_OK; s++)
        rc = flush_locked(d, dev, s);
    pthread_mutex_unlock(&d->mu);
    return rc;
}

tocl_status tocl_fusion_flush_all(void) {
    for (int dev = 0; dev < DEV_MAX; dev++)
        TOCL_TRY(tocl_defer_flush_device(dev));
    return TOCL_OK;
}
