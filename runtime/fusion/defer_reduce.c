/* defer_reduce.c - fused eager: a reduction computes its pointwise prologue.
 *
 * When a reduction reads a tensor that recorded (not yet run) elementwise
 * ops compute, the group of those ops is inlined into the reduction's
 * prologue: `(a - b).pow(2).mean()` or `(x * y).sum()` read a, b or x, y
 * and never the intermediate. The group itself stays recorded, and at the
 * next flush it stores only what is still alive: a temporary freed after
 * the reduction (the usual case) is never written.
 *
 * Legal when the group can run after everything else recorded (no later
 * group conflicts with it), the reduction neither writes the group's
 * operands nor reads another of its outputs, the group does not overwrite
 * what it reads, and the group's iteration space maps onto the reduction's
 * input (the same elements, possibly split into more dimensions).
 *
 * tocl_defer_reduce_begin plans and holds the device's lock; the reduction
 * then checks that the fused kernel is built and calls
 * tocl_defer_reduce_end(commit), which runs every other recorded group.
 * After end(1) the lock stays held until the reduction is queued
 * (tocl_defer_reduce_release): the group's inputs are often dead
 * temporaries, and another thread on the same stream could otherwise be
 * handed their memory and queue a write to it (its flush runs first, then
 * its kernel) between the flush and the reduction that still reads them. */
#include <stdlib.h>
#include <string.h>

#include "fusion/defer_internal.h"
#include "launch/launch.h"

#define MAX_DROPS 8

static _Thread_local struct {
    d_dev *d;
    int dev, stream, ng, keep;
    d_group *groups;
    int ndrop, drop_rec[MAX_DROPS], drop_out[MAX_DROPS]; /* outputs the group drops */
} plan;

/* The fused prologue: the nodes of the group's merged graph that the
 * target depends on, then the reduction's own prologue reading the target
 * node where it read input k. *in_of[e] is the merged input behind the
 * fused graph's input e (the group's inputs come first). */
static int build(const merged *m, int target_node, tocl_dtype target_storage, const tocl_ir_graph *pro, int k,
                 const tocl_scalar *sc, tocl_defer_prologue *p, int *in_of) {
    tocl_ir_graph *g = &p->g;
    memset(g, 0, sizeof *g);
    unsigned char need[TOCL_IR_MAX_NODES] = {0};
    need[target_node] = 1;
    for (int j = target_node; j >= 0; j--) { /* arguments precede their node */
        if (!need[j])
            continue;
        const tocl_ir_node *n = &m->g.nodes[j];
        const tocl_ir_op_info *info = tocl_ir_op_info_get(n->op);
        if (n->op != TOCL_IR_INPUT && n->op != TOCL_IR_SCALAR)
            for (int a = 0; info && a < info->arity; a++)
                need[n->arg[a]] = 1;
    }
    int nmap[TOCL_IR_MAX_NODES];
    for (int j = 0; j <= target_node; j++) {
        nmap[j] = -1;
        if (!need[j])
            continue;
        const tocl_ir_node *n = &m->g.nodes[j];
        int v;
        if (n->op == TOCL_IR_INPUT) {
            in_of[g->n_inputs] = n->arg[0];
            g->input_dtypes[g->n_inputs] = m->g.input_dtypes[n->arg[0]];
            v = tocl_ir_add_node(g, TOCL_IR_INPUT, n->dtype, g->n_inputs++, 0, 0);
        } else if (n->op == TOCL_IR_SCALAR) {
            g->scalar_dtypes[g->n_scalars] = m->g.scalar_dtypes[n->arg[0]];
            p->sc[g->n_scalars] = m->sc[n->arg[0]];
            v = tocl_ir_add_node(g, TOCL_IR_SCALAR, n->dtype, g->n_scalars++, 0, 0);
        } else {
            v = tocl_ir_add_mapped(g, n, nmap);
        }
        if (v < 0)
            return 0;
        nmap[j] = v;
    }
    target_node = nmap[target_node];
    int group_inputs = g->n_inputs;
    tocl_dtype tdt = g->nodes[target_node].dtype;
    int tv = target_node;
    if (target_storage == TOCL_F16) /* the value as its storage would have rounded it */
        tv = tocl_ir_add_node(g, TOCL_IR_ROUND_F16, tdt, target_node, 0, 0);
    else if (target_storage == TOCL_BF16)
        tv = tocl_ir_add_node(g, TOCL_IR_ROUND_BF16, tdt, target_node, 0, 0);
    if (tv < 0 || pro->n_inputs - 1 + g->n_inputs > TOCL_IR_MAX_INPUTS ||
        pro->n_scalars + g->n_scalars > TOCL_IR_MAX_SCALARS)
        return 0;
    int in_map[TOCL_IR_MAX_INPUTS];
    for (int a = 0; a < pro->n_inputs; a++) {
        in_map[a] = -1;
        if (a == k)
            continue;
        in_map[a] = g->n_inputs;
        g->input_dtypes[g->n_inputs++] = pro->input_dtypes[a];
    }
    p->n_in = group_inputs;
    int map[TOCL_IR_MAX_NODES];
    for (int j = 0; j < pro->n_nodes; j++) {
        const tocl_ir_node *n = &pro->nodes[j];
        int v;
        if (n->op == TOCL_IR_INPUT && n->arg[0] == k) {
            v = tv;
        } else if (n->op == TOCL_IR_INPUT) {
            v = tocl_ir_add_node(g, TOCL_IR_INPUT, n->dtype, in_map[n->arg[0]], 0, 0);
        } else if (n->op == TOCL_IR_SCALAR) {
            int e = g->n_scalars + n->arg[0];
            v = tocl_ir_add_node(g, TOCL_IR_SCALAR, n->dtype, e, 0, 0);
        } else {
            v = tocl_ir_add_mapped(g, n, map);
        }
        if (v < 0)
            return 0;
        map[j] = v;
    }
    for (int e = 0; e < pro->n_scalars; e++) {
        g->scalar_dtypes[g->n_scalars + e] = pro->scalar_dtypes[e];
        p->sc[g->n_scalars + e] = sc[e];
    }
    g->n_scalars += pro->n_scalars;
    g->n_outputs = pro->n_outputs;
    for (int o = 0; o < pro->n_outputs; o++) {
        g->output_nodes[o] = map[pro->output_nodes[o]];
        g->output_dtypes[o] = pro->output_dtypes[o];
    }
    return tocl_ir_validate(g) == TOCL_OK;
}

/* Try input k: 1 with *p filled when the group computing it can be fused. */
static int try_input(int dev, d_rec *recs, int n, d_group *groups, int *ng, int n_out, const tocl_tensor *outs,
                     int n_in, const tocl_tensor *ins, const tocl_ir_graph *pro, const tocl_scalar *sc, int k,
                     tocl_defer_prologue *p, int *keep_out) {
    d_operand want;
    range_of(&ins[k], &want);
    if (want.hi == want.lo)
        return 0;
    int w = n - 1, b = -1;
    for (; w >= 0 && b < 0; w--)
        for (int o = 0; o < recs[w].nout && b < 0; o++)
            if (overlap(&recs[w].op[o], &want))
                b = o;
    w++;
    if (b < 0 || recs[w].op[b].data != want.data || recs[w].op[b].dtype != want.dtype)
        return 0;
    if (*ng < 0)
        *ng = tocl_defer_plan(dev, recs, n, groups);
    int keep = recs[w].group;
    const d_group *gr = &groups[keep];
    if (tocl_defer_conflicts_later(recs, groups, *ng, keep))
        return 0;
    if (tocl_dev_props(dev)->kind == TOCL_DEVICE_CPU && gr->math + tocl_defer_math_calls(dev, pro) > 1)
        return 0; /* the CPU limit on libm calls per kernel (defer_group.c) */
    /* The reduction must not write the group's operands nor read its other
     * outputs. It may write over a dead output (the allocator handed its
     * memory to the reduction's result): the group then drops that output. */
    d_operand ro[2], ri[TOCL_IR_MAX_INPUTS];
    for (int o = 0; o < n_out; o++)
        range_of(&outs[o], &ro[o]);
    for (int a = 0; a < n_in; a++)
        range_of(&ins[a], &ri[a]);
    int ndrop = 0;
    for (int x = gr->first; x >= 0; x = recs[x].next_in_group) {
        for (int o = 0; o < n_out; o++)
            for (int a = 0; a < recs[x].nout; a++) { /* inputs: checked against the merged graph's below */
                if (!overlap(&recs[x].op[a], &ro[o]))
                    continue;
                if (!recs[x].dead[a] || ndrop == MAX_DROPS)
                    return 0;
                plan.drop_rec[ndrop] = x;
                plan.drop_out[ndrop++] = a;
            }
        for (int a = 0; a < n_in; a++)
            if (a != k && writes_to(&recs[x], &ri[a]))
                return 0;
    }
    static _Thread_local merged m;
    int tnode = -1;
    if (!tocl_defer_merge(recs, gr, &m, &recs[w].op[b], &tnode) || tnode < 0)
        return 0;
    if (m.g.nodes[tnode].dtype != tocl_dtype_compute(want.dtype))
        return 0;
    /* What the group reads from memory must still hold when it runs: no op
     * of the group writes it (an in-place op inside the group), nor does the
     * reduction (values passed inside the group never reach memory). */
    for (int e = 0; e < m.nin; e++) {
        for (int x = gr->first; x >= 0; x = recs[x].next_in_group)
            if (writes_to(&recs[x], m.in[e]))
                return 0;
        for (int o = 0; o < n_out; o++)
            if (overlap(&ro[o], m.in[e]))
                return 0;
    }
    int gdim[TOCL_TENSOR_MAX_DIMS];
    int64_t q[TOCL_TENSOR_MAX_DIMS];
    if (!tocl_defer_map_dims(gr->ndim, gr->sizes, recs[w].op[b].st, ins[k].ndim, ins[k].sizes, ins[k].strides, 0,
                             gdim, q))
        return 0;
    int in_of[TOCL_IR_MAX_INPUTS];
    if (!build(&m, tnode, want.dtype, pro, k, sc, p, in_of))
        return 0;
    /* Operands: the group's inputs laid out over the reduction's shape, then
     * the reduction's other inputs. */
    int ni = 0;
    for (int e = 0; e < p->n_in; e++) {
        const d_operand *o = m.in[in_of[e]];
        p->bufs[ni] = o->buf;
        p->offs[ni] = o->off;
        tocl_tensor *t = &p->ins[ni++];
        t->data = o->data;
        t->dtype = o->dtype;
        t->ndim = ins[k].ndim;
        for (int i = 0; i < t->ndim; i++) {
            t->sizes[i] = ins[k].sizes[i];
            t->strides[i] = gdim[i] < 0 ? 0 : o->st[gdim[i]] * q[i];
        }
    }
    p->n_pre = ni;
    p->input = k;
    for (int a = 0; a < n_in; a++)
        if (a != k)
            p->ins[ni++] = ins[a];
    p->n_in = ni;
    *keep_out = keep;
    plan.ndrop = ndrop;
    return 1;
}

int tocl_defer_reduce_begin(int dev, int stream, int n_out, const tocl_tensor *outs, int n_in,
                            const tocl_tensor *ins, const tocl_ir_graph *pro, const tocl_scalar *sc,
                            tocl_defer_prologue *p) {
    if (stream < 0 || stream >= TOCL_MAX_STREAMS)
        return 0;
    d_dev *d = tocl_defer_dev_state(dev, 0);
    if (!d)
        return 0;
    pthread_mutex_lock(&d->mu);
    d_stream *s = &d->s[stream];
    int n = s->n;
    /* Only this stream has records (others would have to run first). */
    d_group *groups = n > 0 && d->pending == n ? malloc((size_t)n * sizeof *groups) : NULL;
    int ng = -1;
    int keep = -1;
    for (int k = 0; groups && k < n_in; k++)
        if (try_input(dev, s->recs, n, groups, &ng, n_out, outs, n_in, ins, pro, sc, k, p, &keep)) {
            plan.d = d;
            plan.dev = dev;
            plan.stream = stream;
            plan.groups = groups;
            plan.ng = ng;
            plan.keep = keep;
            return 1; /* d->mu stays held until tocl_defer_reduce_end */
        }
    free(groups);
    pthread_mutex_unlock(&d->mu);
    return 0;
}

tocl_status tocl_defer_reduce_end(int commit) {
    d_dev *d = plan.d;
    if (!d)
        return TOCL_OK;
    tocl_status rc = TOCL_OK;
    d_stream *s = &d->s[plan.stream];
    for (int i = 0; commit && i < plan.ndrop; i++) {
        d_rec *r = &s->recs[plan.drop_rec[i]];
        r->dropped[plan.drop_out[i]] = 1;
        r->drop_seq[plan.drop_out[i]] = s->seq;
    }
    if (commit)
        rc = tocl_defer_flush_keeping(d, plan.dev, plan.stream, s->recs, plan.groups, plan.ng, plan.keep);
    free(plan.groups);
    plan.groups = NULL;
    if (!commit)
        tocl_defer_reduce_release();
    return rc;
}

void tocl_defer_reduce_release(void) {
    d_dev *d = plan.d;
    if (!d)
        return;
    plan.d = NULL;
    pthread_mutex_unlock(&d->mu);
}
