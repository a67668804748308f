/* defer.c - fused eager: elementwise launches are recorded per (device,
 * stream) and, at the next flush, merged into as few kernels as possible.
 *
 * Recording happens after tocl_ew_run has checked and resolved the operands,
 * so errors still surface at the op. A flush is triggered by anything that
 * takes the stream's queue (queue/stream.c), by synchronisation, by the
 * allocator before it releases device buffers, and by a size limit; the
 * queue and the allocator reach it only through the scheduler hooks it
 * installs (internal.h), never by name.
 *
 * Grouping is defer_group.c's. A group runs as one merged IR graph: a value
 * written and read back inside it is used from the register (rounded as its
 * storage would round it), and an output is stored only when its tensor is
 * still alive, a later group reads it, and no later op of the group
 * overwrites it. A merged graph not yet built runs as its separate kernels
 * while the background builder (program/builder.c) builds it. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fusion/defer_internal.h"
#include "launch/launch.h"
#include "queue/trace.h"

#define MAX_RECORDS_PER_GROUP TOCL_IR_MAX_NODES /* a group has at most one record per node */

static d_dev *g_dev[DEV_MAX];
static pthread_mutex_t g_init_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int g_mode = -1;       /* -1: not read from the environment yet */
static atomic_long g_pending;        /* records over all devices: the hooks' fast check */
static atomic_int g_sync_build;
static _Thread_local int tl_flushing;
/* TORCH_OCL_STRICT_BUILDS: a merged kernel of this thread's flush failed to
 * build. Its ops ran one kernel each, as without the switch, and the flush
 * reports the failure once it has run everything (so no recorded op is
 * lost and the process goes on). */
static _Thread_local int tl_build_failed;
static _Thread_local char tl_build_msg[8192];

static struct {
    atomic_uint_least64_t ops_recorded, flushes, graphs, fused, kernels, separately, elided, hits, misses, reductions, inlined;
} st;

/* ---- mode ------------------------------------------------------------------- */

static int mode_now(void) {
    int m = atomic_load_explicit(&g_mode, memory_order_relaxed);
    if (m >= 0)
        return m;
    /* Fused is the default: it passes the whole test suite as strict does
     * and was faster on every fused-vs-strict benchmark. An unknown value
     * is reported once and ignored. */
    const char *v = tocl_env("TORCH_OCL_EAGER");
    int want = v && !strcmp(v, "strict") ? TOCL_EAGER_STRICT : TOCL_EAGER_FUSED;
    if (v && *v && strcmp(v, "strict") && strcmp(v, "fused"))
        tocl_warn("TORCH_OCL_EAGER=%s is neither strict nor fused; using fused", v);
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
int tocl_defer_sync_build(void) { return atomic_load(&g_sync_build); }
void tocl_defer_count_reduction(void) { atomic_fetch_add(&st.reductions, 1); }
void tocl_fusion_wait_builds(void) { tocl_builder_wait(); }
int tocl_fusion_abandon_builds(double seconds) { return tocl_builder_abandon(seconds); }

static int log_on(void) { return tocl_log_on(TOCL_LOG_FUSION); }

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
    out->reductions_fused = atomic_load(&st.reductions);
    out->broadcasts_inlined = atomic_load(&st.inlined);
    out->cache_hits = atomic_load(&st.hits);
    out->cache_misses = atomic_load(&st.misses);
    tocl_builder_stats(&out->builds, &out->build_seconds);
    for (int dev = 0; dev < DEV_MAX; dev++) {
        d_dev *d = __atomic_load_n(&g_dev[dev], __ATOMIC_ACQUIRE);
        if (!d)
            continue;
        pthread_mutex_lock(&d->mu);
        out->ops_pending += (uint64_t)d->pending;
        out->free_table_entries += (uint64_t)d->nents;
        pthread_mutex_unlock(&d->mu);
    }
}

void tocl_fusion_stats_reset(void) {
    atomic_store(&st.ops_recorded, 0);
    atomic_store(&st.flushes, 0);
    atomic_store(&st.graphs, 0);
    atomic_store(&st.fused, 0);
    atomic_store(&st.kernels, 0);
    atomic_store(&st.separately, 0);
    atomic_store(&st.elided, 0);
    atomic_store(&st.reductions, 0);
    atomic_store(&st.inlined, 0);
    atomic_store(&st.hits, 0);
    atomic_store(&st.misses, 0);
}

d_dev *tocl_defer_dev_state(int dev, int create) {
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

static unsigned hash_addr(tocl_addr a) { return (unsigned)((a >> 8) ^ (a >> 20)) % HASH_BUCKETS; }

/* ---- recording --------------------------------------------------------------- */

/* Enter record ri's outputs in the free table (by address), for
 * tocl_defer_note_free. An output left out is simply always stored. */
void tocl_defer_index_outputs(d_dev *d, int stream, int ri) {
    d_stream *s = &d->s[stream];
    d_rec *r = &s->recs[ri];
    for (int k = 0; k < r->nout; k++) {
        if (d->nents == d->capents) {
            int cap = d->capents ? d->capents * 2 : 256;
            h_entry *v = realloc(d->ents, (size_t)cap * sizeof *v);
            if (!v)
                return;
            d->ents = v;
            d->capents = cap;
        }
        h_entry *e = &d->ents[d->nents];
        unsigned hb = hash_addr(r->op[k].data);
        e->addr = r->op[k].data;
        e->stream = stream;
        e->rec = ri;
        e->out = k;
        e->next = d->heads[hb];
        d->heads[hb] = d->nents++;
    }
}


static tocl_status flush_locked(d_dev *d, int dev, int stream);

/* The queue and the allocator flush and report frees through these
 * (internal.h); installed before the first op is held back. */
static const tocl_sched_hooks g_hooks = {tocl_defer_flush, tocl_defer_flush_device, tocl_defer_note_free};
static atomic_int g_hooks_installed;

tocl_status tocl_defer_record(int dev, int stream, const tocl_ir_graph *g, const tocl_tensor *const *ops,
                              const cl_mem *bufs, const cl_long *offs, const tocl_scalar *scalars, int *recorded) {
    *recorded = 0;
    if (!atomic_load_explicit(&g_hooks_installed, memory_order_acquire)) {
        tocl_sched_install(&g_hooks);
        atomic_store_explicit(&g_hooks_installed, 1, memory_order_release);
    }
    int ndim = ops[0]->ndim, nops = g->n_outputs + g->n_inputs;
    if (ndim > REC_DIMS || stream < 0 || stream >= TOCL_MAX_STREAMS)
        return TOCL_OK;
    d_operand tmp[MAX_OPS];
    for (int k = 0; k < nops; k++) {
        const tocl_tensor *t = ops[k];
        d_operand *o = &tmp[k];
        range_of(t, o);
        for (int d = 0; d < ndim; d++)
            o->st[d] = t->strides[d];
        o->buf = bufs[k];
        o->off = offs[k];
        o->flat_st = ndim == 1 ? t->strides[0] : 0;
    }
    /* An op whose outputs overlap its own operands other than element for
     * element is left to strict mode, which runs it exactly as asked. */
    for (int a = 0; a < g->n_outputs; a++)
        for (int b = 0; b < nops; b++)
            if (b != a && overlap(&tmp[a], &tmp[b]) && !identical(&tmp[a], &tmp[b], ndim, ops[0]->sizes))
                return TOCL_OK;
    d_dev *d = tocl_defer_dev_state(dev, 1);
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
    r->math = tocl_defer_math_calls(dev, g);
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
    memset(r->dropped, 0, sizeof r->dropped);
    r->seq = s->seq++;
    /* The kernel runs at flush time, on behalf of this op (tocl/trace.h). */
    r->corr = tocl_trace_active() ? tocl_trace_corr_current() : 0;
    if (g->n_scalars)
        memcpy(r->sc, scalars, (size_t)g->n_scalars * sizeof *scalars);
    tocl_ir_copy(&r->g, g); /* the used part only: the whole struct is 3 KB, copied per op */
    tocl_defer_index_outputs(d, stream, s->n);
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
    d_dev *d = tocl_defer_dev_state(dev, 0);
    if (!d)
        return;
    pthread_mutex_lock(&d->mu);
    for (int i = d->heads[hash_addr(addr)]; i >= 0; i = d->ents[i].next) {
        h_entry *e = &d->ents[i];
        d_stream *s = &d->s[e->stream];
        if (e->addr == addr && e->rec < s->n)
            s->recs[e->rec].dead[e->out] = 1;
    }
    pthread_mutex_unlock(&d->mu);
}

/* ---- running a group ------------------------------------------------------------ */

static int stored(const d_rec *r, int k) {
    return !r->dropped[k] && !r->superseded[k] && (!r->dead[k] || r->needed[k]);
}

/* Does the group drop an output (see d_rec.dropped)? Then it must run as
 * one merged kernel: run separately, an op of it would store the dropped
 * value or read it back from memory. */
static int drops(const d_rec *recs, const d_group *gr) {
    for (int w = gr->first; w >= 0; w = recs[w].next_in_group)
        for (int k = 0; k < recs[w].nout; k++)
            if (recs[w].dropped[k])
                return 1;
    return 0;
}

static void to_tensor(tocl_tensor *t, const d_operand *o, int ndim, const int64_t *sizes) {
    t->data = o->data;
    t->dtype = o->dtype;
    t->ndim = ndim;
    for (int d = 0; d < ndim; d++) {
        t->sizes[d] = sizes[d];
        t->strides[d] = o->st[d];
    }
}

/* Run as separate kernels, which of the group's ops have results that are
 * seen? An op is when it stores an output, or a later op of the group that
 * is seen reads one (walked backwards). The others compute a temporary that
 * died (or whose value a reduction computed for itself). */
static void mark_observed(d_rec *recs, const d_group *gr, unsigned char *seen) {
    int order[MAX_RECORDS_PER_GROUP], n = 0;
    for (int w = gr->first; w >= 0 && n < MAX_RECORDS_PER_GROUP; w = recs[w].next_in_group)
        order[n++] = w;
    for (int i = n - 1; i >= 0; i--) {
        const d_rec *r = &recs[order[i]];
        int obs = n == MAX_RECORDS_PER_GROUP; /* a group too long to track: run everything */
        for (int k = 0; k < r->nout && !obs; k++) {
            obs = stored(r, k);
            for (int j = i + 1; j < n && !obs; j++) {
                const d_rec *v = &recs[order[j]];
                if (!seen[j])
                    continue;
                for (int a = v->nout; a < v->nops && !obs; a++)
                    obs = overlap(&r->op[k], &v->op[a]);
            }
        }
        seen[i] = (unsigned char)obs;
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
    /* Unconditional (two thread-local stores each): no branch on the
     * tracing flag beyond the enqueue's own. */
    tocl_trace_launch_begin(r->corr, 1);
    tocl_status s = tocl_ew_launch(dev, stream, &r->g, ops, bufs, offs, r->sc, TOCL_EW_BUILD, &launched);
    tocl_trace_launch_end();
    TOCL_TRY(s);
    atomic_fetch_add(&st.kernels, (uint64_t)launched);
    return TOCL_OK;
}

/* Build the group's merged graph; 0 if it does not fit (run separately). */
static int merge_fail(int line) {
    if (log_on())
        tocl_log(TOCL_LOG_FUSION, "merge gave up at defer.c:%d", line);
    return 0;
}

int tocl_defer_merge(d_rec *recs, const d_group *gr, merged *m, const d_operand *target, int *target_node) {
    tocl_ir_graph *g = &m->g;
    memset(g, 0, sizeof *g);
    m->nout = m->nin = m->elided = 0;
    /* Values written so far: operand and node, newest last. */
    /* drop: the value a dropped output had, seen only by ops recorded before
     * the reduction that reused its memory (seq below drop). */
    static _Thread_local struct { const d_operand *op; int node; uint64_t drop; } wr[TOCL_IR_MAX_NODES];
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
                    if (overlap(a, wr[i].op) && r->seq < wr[i].drop)
                        src = wr[i].node; /* identical, as try_join checked */
                if (src >= 0 && a->dtype == TOCL_F16)
                    v = tocl_ir_add_node(g, TOCL_IR_ROUND_F16, n->dtype, src, 0, 0);
                else if (src >= 0 && a->dtype == TOCL_BF16)
                    v = tocl_ir_add_node(g, TOCL_IR_ROUND_BF16, n->dtype, src, 0, 0);
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
                        m->in_node[m->nin++] = tocl_ir_add_node(g, TOCL_IR_INPUT, n->dtype, e, 0, 0);
                        g->n_inputs = m->nin;
                    }
                    v = m->in_node[e];
                }
            } else if (n->op == TOCL_IR_SCALAR) {
                if (g->n_scalars >= TOCL_IR_MAX_SCALARS)
                    return merge_fail(__LINE__);
                m->sc[g->n_scalars] = r->sc[n->arg[0]];
                g->scalar_dtypes[g->n_scalars] = r->g.scalar_dtypes[n->arg[0]];
                v = tocl_ir_add_node(g, TOCL_IR_SCALAR, n->dtype, g->n_scalars++, 0, 0);
            } else {
                v = tocl_ir_add_mapped(g, n, map);
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
            wr[nwr].drop = r->dropped[k] ? r->drop_seq[k] : UINT64_MAX;
            wr[nwr++].node = v;
            if (target_node && &r->op[k] == target)
                *target_node = v;
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
            tocl_log(TOCL_LOG_FUSION, "merged graph invalid: %s", tocl_last_error());
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
    tocl_log(TOCL_LOG_FUSION, "dev %d stream %d group %d: %d ops [%s] -> %s; %d inputs, %d outputs "
            "stored, %d elided", dev, stream, gi, gr->nrec, ops, how, m ? m->nin : -1, m ? m->nout : -1,
            m ? m->elided : 0);
}

static uint64_t first_corr(const d_rec *recs, const d_group *gr) {
    for (int w = gr->first; w >= 0; w = recs[w].next_in_group)
        if (recs[w].corr)
            return recs[w].corr;
    return 0;
}

tocl_status tocl_defer_run_group(int dev, int stream, d_rec *recs, const d_group *gr, int gi) {
    if (!gr->nrec)
        return TOCL_OK; /* absorbed into a later group */
    atomic_fetch_add(&st.graphs, 1);
    d_rec *r0 = &recs[gr->first];
    int must_merge = drops(recs, gr);
    if (gr->nrec == 1 && !must_merge) {
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
    int ok = tocl_defer_merge(recs, gr, &m, NULL, NULL), launched = 0;
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
        tocl_ew_build mode = atomic_load(&g_sync_build) || must_merge ? TOCL_EW_BUILD : TOCL_EW_ASYNC;
        /* A merged kernel is attributed to the first of its ops that a
         * profiler saw (one flow, device time counted once); the trace
         * record says how many ops it merged. */
        tocl_trace_launch_begin(first_corr(recs, gr), gr->nrec);
        tocl_status s = tocl_ew_launch(dev, stream, &m.g, ops, bufs, offs, m.sc, mode, &launched);
        tocl_trace_launch_end();
        if (s != TOCL_OK && must_merge)
            return s;
        if (s == TOCL_E_BUILD && tocl_strict_builds() && !tl_build_failed) {
            tl_build_failed = 1; /* a merged graph that does not compile is a bug: said after the flush */
            snprintf(tl_build_msg, sizeof tl_build_msg, "%s", tocl_last_error());
        }
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
    if (must_merge)
        return tocl_fail(TOCL_E_INTERNAL, "fused eager: a group of %d ops whose result a reduction reused must run "
                         "as one kernel, and its merged graph does not fit one", gr->nrec);
    if (log_on())
        log_group(dev, stream, gi, recs, gr, ok ? &m : NULL,
                  ok ? "separate kernels while the fused one builds" : "separate kernels (does not fit one)");
    atomic_fetch_add(&st.separately, (uint64_t)gr->nrec);
    static _Thread_local unsigned char seen[MAX_RECORDS_PER_GROUP];
    mark_observed(recs, gr, seen);
    int i = 0;
    for (int w = gr->first; w >= 0; w = recs[w].next_in_group, i++) {
        if (i < MAX_RECORDS_PER_GROUP && !seen[i]) {
            atomic_fetch_add(&st.elided, (uint64_t)recs[w].nout);
            continue;
        }
        TOCL_TRY(run_one(dev, stream, &recs[w]));
    }
    return TOCL_OK;
}

/* ---- flushing ------------------------------------------------------------------- */

int tocl_defer_plan(int dev, d_rec *recs, int n, d_group *groups) {
    d_spans written;
    tocl_defer_spans_build(recs, n, &written);
    atomic_fetch_add(&st.inlined, (uint64_t)tocl_defer_inline_broadcasts(dev, recs, n, &written));
    int ng = tocl_defer_group_all(recs, n, groups, &written);
    tocl_defer_spans_free(&written);
    return ng;
}

/* The stream's n records ran, but for `kept` moved to its front, which stay
 * recorded. Whatever happened, the others are consumed: a failure is
 * reported once, at the op that caused the flush, and not replayed. */
static tocl_status finish_flush(d_dev *d, int dev, int stream, int n, int kept, tocl_status rc) {
    d_stream *s = &d->s[stream];
    s->n = kept;
    d->pending -= n - kept;
    atomic_fetch_sub(&g_pending, n - kept);
    /* The free table is rebuilt from the records still held (this stream's
     * kept ones and any other stream's), so it never holds more entries
     * than there are recorded outputs. Marking its old entries stale
     * instead and clearing it only once nothing was pending let it grow
     * for as long as a flush always kept a record: the caching allocator
     * hands the same few addresses out again, so their hash chains grew
     * with every step and each free walked them (a trivial backward's
     * host time went 265 -> 691 us over 20,000 steps). */
    for (int i = 0; i < d->nents; i++) /* every used bucket's head is one of the entries */
        d->heads[hash_addr(d->ents[i].addr)] = -1;
    d->nents = 0;
    for (int o = 0; o < TOCL_MAX_STREAMS; o++)
        for (int i = 0; i < d->s[o].n; i++)
            tocl_defer_index_outputs(d, o, i);
    tl_flushing = 0;
    if (rc == TOCL_OK && tl_build_failed)
        rc = tocl_fail(TOCL_E_BUILD, "%s", tl_build_msg);
    tl_build_failed = 0;
    if (rc != TOCL_OK)
        tocl_error_context("running %d deferred elementwise ops (fused eager mode) on device %d stream %d", n - kept,
                           dev, stream);
    return rc;
}

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
        tocl_defer_group_one(s->recs, &one, 0);
        rc = tocl_defer_run_group(dev, stream, s->recs, &one, 0);
    } else {
        d_group *groups = malloc((size_t)n * sizeof *groups);
        if (!groups) {
            for (int i = 0; i < n && rc == TOCL_OK; i++)
                rc = run_one(dev, stream, &s->recs[i]);
        } else {
            int ng = tocl_defer_plan(dev, s->recs, n, groups);
            if (log_on())
                tocl_log(TOCL_LOG_FUSION, "dev %d stream %d: flushing %d ops in %d groups", dev, stream,
                        n, ng);
            for (int gi = 0; gi < ng && rc == TOCL_OK; gi++)
                rc = tocl_defer_run_group(dev, stream, s->recs, &groups[gi], gi);
            free(groups);
        }
    }
    return finish_flush(d, dev, stream, n, 0, rc);
}

/* Run every group of the stream's records (grouped by the caller into
 * groups[0..ng)) except group `keep`, whose records stay recorded, first
 * in the stream, to be regrouped at the next flush. The caller checked that
 * no group after `keep` conflicts with it, so it may run last. */
tocl_status tocl_defer_flush_keeping(d_dev *d, int dev, int stream, d_rec *recs, d_group *groups, int ng, int keep) {
    d_stream *s = &d->s[stream];
    int n = s->n;
    tl_flushing = 1;
    atomic_fetch_add(&st.flushes, 1);
    tocl_status rc = TOCL_OK;
    if (log_on())
        tocl_log(TOCL_LOG_FUSION, "dev %d stream %d: flushing %d ops in %d groups but group %d (%d ops), "
                "which a reduction computes", dev, stream, n, ng, keep, groups[keep].nrec);
    for (int gi = 0; gi < ng && rc == TOCL_OK; gi++)
        if (gi != keep)
            rc = tocl_defer_run_group(dev, stream, recs, &groups[gi], gi);
    int kept = 0;
    for (int w = groups[keep].first; w >= 0; w = recs[w].next_in_group) {
        if (w != kept)
            memcpy(&recs[kept], &recs[w], sizeof recs[0]);
        kept++;
    }
    return finish_flush(d, dev, stream, n, kept, rc);
}

tocl_status tocl_defer_flush(int dev, int stream) {
    if (!atomic_load_explicit(&g_pending, memory_order_relaxed) || stream < 0 || stream >= TOCL_MAX_STREAMS)
        return TOCL_OK;
    d_dev *d = tocl_defer_dev_state(dev, 0);
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
    d_dev *d = tocl_defer_dev_state(dev, 0);
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
