/* defer_group.c - fused eager's grouping: which recorded elementwise ops
 * run together in one kernel, decided at flush time (when it is known
 * which intermediates died).
 *
 * Ops are visited in program order. An op joins the newest group it
 * conflicts with (reads or writes memory that group writes, or writes what
 * it reads) when every such overlap is the very same elements in the same
 * order, so each work-item only ever consumes values it produced itself;
 * it then absorbs older groups it also conflicts with when no group in
 * between conflicts with them (the ops of one foreach optimizer step on one
 * parameter end up together). Otherwise it starts a group. Groups run in
 * creation order; ops only move past groups they do not conflict with, so
 * program order is kept where it matters. */
#include <stdint.h>
#include <string.h>

#include "fusion/defer_internal.h"
#include "launch/launch.h"

#define NEEDED_SCAN 1024    /* records walked back to find the writer of a value */


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


/* On CPU devices (PoCL) a kernel with more than one libm call (exp, tanh,
 * sigmoid, sin, log, erf, ...) ran slower than the same ops as separate
 * kernels (tanh x4 fused: 0.51x; tanh then sigmoid chains 0.8x), while one
 * call among cheap arithmetic ran faster fused (mul, add, tanh: 1.18x; a
 * chain of 8 mul/add: 3.7x). So there a group holds at most one libm call;
 * GPUs fuse without this limit. Returns the number of libm calls in g, or
 * 0 when the device has no limit. */
int tocl_defer_math_calls(int dev, const tocl_ir_graph *g) {
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
            /* the special functions (ir.h: TOCL_IR_I0 to TOCL_IR_FREXP_EXPONENT) call libm or loop */
            n += op >= TOCL_IR_I0 && op <= TOCL_IR_FREXP_EXPONENT;
            break;
        }
    }
    return n;
}

#define CPU_MATH_PER_GROUP 1

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

void tocl_defer_group_one(d_rec *recs, d_group *gr, int ri) {
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
/* The cheap half of absorb's test: could the union of x and c be one
 * kernel at all (same size, room for its nodes, scalars and outputs)?
 * Asked before the conflict walk, which costs a pass over x's records: a
 * long chain of ops writing one tensor (a loop of `add(x, y, out=z)`)
 * conflicts with every older group, and walking them all for each new op
 * made grouping quadratic (40% of the host time per op). */
static int absorb_fits(const d_group *x, const d_group *c) {
    if (!x->nrec || x->numel != c->numel || !math_ok(x->math, c->math) ||
        x->nodes + c->nodes > TOCL_IR_MAX_NODES || x->scalars + c->scalars > TOCL_IR_MAX_SCALARS ||
        x->outputs + c->outputs > TOCL_IR_MAX_OUTPUTS)
        return 0;
    return x->flat || c->flat || same_shape(x->ndim, x->sizes, c->ndim, c->sizes);
}

static int absorb(d_rec *recs, d_group *groups, int gx, int gc) {
    d_group *x = &groups[gx], *c = &groups[gc];
    if (!absorb_fits(x, c))
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
static void mark_outputs(d_rec *recs, int n, const d_group *groups, int ng, const d_spans *written) {
    for (int gi = 0; gi < ng; gi++)
        for (int w = groups[gi].first; w >= 0; w = recs[w].next_in_group)
            for (int b = 0; b < recs[w].nout; b++)
                for (int v = recs[w].next_in_group; v >= 0 && !recs[w].superseded[b]; v = recs[v].next_in_group)
                    for (int k = 0; k < recs[v].nout; k++)
                        if (overlap(&recs[w].op[b], &recs[v].op[k]))
                            recs[w].superseded[b] = 1;
    /* Reads of memory no record writes (weights, a loop's inputs) need no
     * walk: without this check each such read walked back over every older
     * record, quadratic in the records of a flush (a loop of 4096
     * `add(x, y, out=z)` spent 40% of its host time here). */
    for (int i = 0; i < n; i++) {
        d_rec *r = &recs[i];
        for (int a = r->nout; a < r->nops; a++) {
            if (!tocl_defer_maybe_written(written, &r->op[a]))
                continue;
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
int tocl_defer_group_all(d_rec *recs, int n, d_group *groups, const d_spans *written) {
    int ng = 0;
    for (int i = 0; i < n; i++) { /* marks of an earlier grouping of these records no longer hold */
        memset(recs[i].needed, 0, sizeof recs[i].needed);
        memset(recs[i].superseded, 0, sizeof recs[i].superseded);
    }
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
                if (absorb_fits(&groups[gx], &groups[gd]) && conflicts(recs, &groups[gx], r))
                    absorb(recs, groups, gx, gd);
        } else {
            r->group = ng;
            tocl_defer_group_one(recs, &groups[ng++], i);
        }
    }
    mark_outputs(recs, n, groups, ng, written);
    return ng;
}


int tocl_defer_map_dims(int gnd, const int64_t *gsz, const int64_t *tst, int ndim, const int64_t *sizes,
                        const int64_t *strides, int broadcast, int *gd, int64_t *q) {
    for (int i = 0; i < ndim; i++) {
        gd[i] = -1;
        q[i] = 0;
        if (sizes[i] <= 1 || (broadcast && strides[i] == 0))
            continue;
        int64_t st = strides[i];
        for (int d = 0; d < gnd && gd[i] < 0; d++)
            if (gsz[d] > 1 && tst[d] > 0 && st >= tst[d] && st < tst[d] * gsz[d] && st % tst[d] == 0) {
                gd[i] = d;
                q[i] = st / tst[d];
            }
        if (gd[i] < 0)
            return 0;
    }
    for (int d = 0; d < gnd; d++) {
        if (gsz[d] <= 1)
            continue;
        int64_t want = 1;
        for (;;) { /* the piece that steps `want` positions, then the next */
            int found = -1;
            for (int i = 0; i < ndim && found < 0; i++)
                if (gd[i] == d && q[i] == want)
                    found = i;
            if (found < 0)
                break;
            want *= sizes[found];
        }
        if (want != gsz[d])
            return 0;
    }
    return 1;
}

int tocl_defer_conflicts_later(d_rec *recs, const d_group *groups, int ng, int gi) {
    for (int gy = gi + 1; gy < ng; gy++)
        for (int w = groups[gi].first; w >= 0 && groups[gy].nrec; w = recs[w].next_in_group)
            if (conflicts(recs, &groups[gy], &recs[w]))
                return 1;
    return 0;
}
