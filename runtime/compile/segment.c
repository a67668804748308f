/* segment.c - compiled pointwise segments (tocl/segment.h): one IR graph
 * built from a run of ATen nodes at compile time, broadcast and launched at
 * every call through the same kernel cache as eager. */
#include <stdlib.h>
#include <string.h>

#include "codegen/ir_internal.h"
#include "launch/launch.h"
#include "tocl/segment.h"

struct tocl_segment {
    tocl_ir_graph graph;
    tocl_scalar scalars[TOCL_IR_MAX_SCALARS];
};

/* The IR node a node argument reads, or -1 for a reference out of range. */
static int ref_value(const tocl_seg_spec *sp, const int *val, int node, tocl_seg_ref r) {
    switch (r.kind) {
    case TOCL_SEG_REF_NODE:
        return r.index >= 0 && r.index < node ? val[r.index] : -1;
    case TOCL_SEG_REF_INPUT:
        return r.index >= 0 && r.index < sp->n_inputs ? r.index : -1; /* input k is IR node k */
    case TOCL_SEG_REF_SCALAR:
        return r.index >= 0 && r.index < sp->n_scalars ? sp->n_inputs + r.index : -1;
    }
    return -1;
}

static tocl_status too_big(const tocl_seg_spec *sp) {
    return tocl_fail(TOCL_E_UNSUPPORTED, "a segment of %d ATen nodes (%d inputs, %d scalars, %d outputs) does not fit "
                     "one elementwise graph (at most %d IR nodes, %d inputs, %d scalars, %d outputs)", sp->n_nodes,
                     sp->n_inputs, sp->n_scalars, sp->n_outputs, TOCL_IR_MAX_NODES, TOCL_IR_MAX_INPUTS,
                     TOCL_IR_MAX_SCALARS, TOCL_IR_MAX_OUTPUTS);
}

/* Node i's value as eager would read it back from memory: float16 and
 * bfloat16 results rounded to their storage format, others converted to
 * their result dtype (a comparison computed in float is already bool). */
static int stored_value(tocl_ir_graph *g, int r, tocl_dtype result) {
    if (r < 0)
        return r;
    if ((result == TOCL_F16 || result == TOCL_BF16) && g->nodes[r].dtype == TOCL_F32)
        return tocl_ir_unary(g, result == TOCL_F16 ? TOCL_IR_ROUND_F16 : TOCL_IR_ROUND_BF16, TOCL_F32, r);
    return tocl_ir_cast(g, r, result);
}

static tocl_status build(const tocl_seg_spec *sp, tocl_ir_graph *g) {
    int val[TOCL_IR_MAX_NODES];
    unsigned char used[TOCL_IR_MAX_NODES] = {0};
    if (sp->n_nodes > TOCL_IR_MAX_NODES || sp->n_inputs > TOCL_IR_MAX_INPUTS || sp->n_scalars > TOCL_IR_MAX_SCALARS ||
        sp->n_outputs > TOCL_IR_MAX_OUTPUTS)
        return too_big(sp);
    if (sp->n_outputs < 1 || sp->n_inputs < 1)
        return tocl_fail(TOCL_E_INVALID, "a segment needs at least one tensor input and one output (got %d and %d)",
                         sp->n_inputs, sp->n_outputs);
    /* Leaves first, in spec order, so IR input k is the segment's input k. */
    for (int k = 0; k < sp->n_inputs; k++)
        tocl_ir_input(g, sp->input_dtypes[k]);
    for (int k = 0; k < sp->n_scalars; k++)
        tocl_ir_scalar(g, sp->scalar_dtypes[k]);
    for (int i = 0; i < sp->n_nodes; i++)
        for (int k = 0; k < 3; k++)
            if (sp->nodes[i].arg[k].kind == TOCL_SEG_REF_NODE && sp->nodes[i].arg[k].index >= 0 &&
                sp->nodes[i].arg[k].index < i)
                used[sp->nodes[i].arg[k].index] = 1;
    for (int i = 0; i < sp->n_nodes && !g->overflow; i++) {
        const tocl_seg_node *n = &sp->nodes[i];
        const tocl_ir_op_info *info = tocl_ir_op_info_get(n->op);
        if (!info || info->arity < 1 || n->op == TOCL_IR_INPUT || n->op == TOCL_IR_SCALAR)
            return tocl_fail(TOCL_E_INVALID, "segment node %d: op %d is not an IR operation", i, (int)n->op);
        int a[3] = {0, 0, 0};
        for (int k = 0; k < info->arity; k++)
            if ((a[k] = ref_value(sp, val, i, n->arg[k])) < 0)
                return tocl_fail(TOCL_E_INVALID, "segment node %d (%s): argument %d refers to nothing", i, info->name,
                                 k);
        tocl_dtype c = tocl_dtype_compute(n->common);
        int r = info->arity == 1   ? tocl_ir_unary(g, n->op, c, a[0])
                : info->arity == 2 ? tocl_ir_binary(g, n->op, c, a[0], a[1])
                                   : tocl_ir_ternary(g, n->op, c, a[0], a[1], a[2]);
        if (r < 0 && g->n_nodes < TOCL_IR_MAX_NODES)
            return tocl_fail(TOCL_E_UNSUPPORTED, "segment node %d: %s has no formula for %s", i, info->name,
                             tocl_dtype_name(n->common));
        val[i] = used[i] ? stored_value(g, r, n->result) : r;
    }
    for (int k = 0; k < sp->n_outputs && !g->overflow; k++) {
        int j = sp->outputs[k];
        if (j < 0 || j >= sp->n_nodes)
            return tocl_fail(TOCL_E_INVALID, "segment output %d refers to node %d of %d", k, j, sp->n_nodes);
        tocl_ir_output(g, val[j], sp->nodes[j].result);
    }
    if (g->overflow)
        return too_big(sp);
    return tocl_ir_validate(g);
}

tocl_status tocl_seg_create(const tocl_seg_spec *sp, tocl_segment **out) {
    if (!sp || !out)
        return tocl_fail(TOCL_E_INVALID, "tocl_seg_create: NULL argument");
    *out = NULL;
    tocl_segment *s = calloc(1, sizeof *s);
    if (!s)
        return tocl_fail(TOCL_E_OOM, "out of host memory creating a segment");
    tocl_ir_init(&s->graph);
    tocl_status st = build(sp, &s->graph);
    if (st != TOCL_OK) {
        free(s);
        return st;
    }
    if (sp->n_scalars)
        memcpy(s->scalars, sp->scalars, (size_t)sp->n_scalars * sizeof *sp->scalars);
    *out = s;
    return TOCL_OK;
}

void tocl_seg_destroy(tocl_segment *s) { free(s); }

const tocl_ir_graph *tocl_seg_graph(const tocl_segment *s) { return s ? &s->graph : NULL; }

tocl_status tocl_seg_shape(const tocl_segment *s, const tocl_tensor *inputs, int *ndim, int64_t *sizes) {
    int nd = 0;
    for (int k = 0; k < s->graph.n_inputs; k++) {
        TOCL_TRY(tocl_ops_check_tensor(&inputs[k], "input"));
        nd = inputs[k].ndim > nd ? inputs[k].ndim : nd;
    }
    for (int d = 0; d < nd; d++)
        sizes[d] = 1;
    for (int k = 0; k < s->graph.n_inputs; k++) {
        const tocl_tensor *t = &inputs[k];
        for (int d = 0; d < t->ndim; d++) {
            int64_t *o = &sizes[nd - t->ndim + d], v = t->sizes[d];
            if (*o == 1)
                *o = v;
            else if (v != 1 && v != *o)
                return tocl_fail(TOCL_E_INVALID, "segment input %d has size %lld in dim %d, which does not broadcast "
                                 "with size %lld", k, (long long)v, d, (long long)*o);
        }
    }
    *ndim = nd;
    return TOCL_OK;
}

const tocl_scalar *tocl_seg_scalars(const tocl_segment *s) { return s->scalars; }

tocl_status tocl_seg_run(const tocl_segment *s, int dev, int stream, const tocl_tensor *inputs,
                         const tocl_scalar *scalars, const tocl_tensor *outputs) {
    static _Thread_local tocl_tensor ex[TOCL_IR_MAX_INPUTS]; /* ~6 KB, kept off the stack */
    const tocl_tensor *o = &outputs[0];
    for (int k = 0; k < s->graph.n_inputs; k++) {
        const tocl_tensor *t = &inputs[k];
        if (t->ndim > o->ndim)
            return tocl_fail(TOCL_E_INVALID, "segment input %d has %d dims, more than the output's %d", k, t->ndim,
                             o->ndim);
        ex[k] = *t;
        ex[k].ndim = o->ndim;
        for (int d = 0; d < o->ndim; d++) {
            int sd = d - (o->ndim - t->ndim); /* the input's own dim, right-aligned */
            int64_t size = sd >= 0 ? t->sizes[sd] : 1;
            if (size != o->sizes[d] && size != 1)
                return tocl_fail(TOCL_E_INVALID, "segment input %d has size %lld where the output has %lld", k,
                                 (long long)size, (long long)o->sizes[d]);
            ex[k].sizes[d] = o->sizes[d];
            ex[k].strides[d] = size == o->sizes[d] && sd >= 0 ? t->strides[sd] : 0;
        }
    }
    return tocl_ew_run_now(dev, stream, &s->graph, outputs, ex, scalars ? scalars : s->scalars);
}
