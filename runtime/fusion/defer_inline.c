/* defer_inline.c - fused eager: broadcast producers are computed by their
 * consumers.
 *
 * Grouping (defer_group.c) joins ops over the same elements. A producer over
 * fewer elements whose result a larger op reads through a broadcast (RMS
 * norm's `rsqrt(var + eps)` over [N, 1] read by `x * r` over [N, D]) cannot
 * join; instead, at flush time, the consumer takes the producer's graph in
 * place of that input and reads the producer's inputs (broadcast the same
 * way). The producer, its result now unread, is then elided like any dead
 * intermediate. Chains fold one link per pass.
 *
 * Legal when the producer's output is dead (freed before the flush), it
 * wrote exactly the bytes the consumer reads, and neither the producer,
 * anything recorded between the two, nor the consumer writes the
 * producer's inputs. */
#include <string.h>

#include "fusion/defer_internal.h"
#include "launch/launch.h"

#define PASSES 4     /* chain links folded per flush */
#define WRITER_SCAN 256 /* records walked back for the writer of an input: a
                         * broadcast producer is recorded shortly before its
                         * consumer, and a flush may hold thousands */

/* Replace consumer r's input operand a (r->op[a]) by producer w's output b. */
static int inline_one(int dev, d_rec *recs, int wi, int b, d_rec *r, int a) {
    const d_rec *w = &recs[wi];
    if (w->ndim > REC_DIMS || r->nops - 1 + (w->nops - w->nout) > MAX_OPS)
        return 0;
    if (tocl_dev_props(dev)->kind == TOCL_DEVICE_CPU && w->math + r->math > 1)
        return 0; /* the CPU limit on libm calls per kernel (defer_group.c) */
    tocl_dtype tdt = w->g.nodes[w->g.output_nodes[b]].dtype;
    if (tdt != tocl_dtype_compute(w->op[b].dtype))
        return 0;
    int gd[REC_DIMS];
    int64_t q[REC_DIMS];
    if (!tocl_defer_map_dims(w->ndim, w->sizes, w->op[b].st, r->ndim, r->sizes, r->op[a].st, 1, gd, q))
        return 0;
    /* The new graph: r's nodes, with its input a computed by w's nodes. */
    static _Thread_local tocl_ir_graph g;
    memset(&g, 0, sizeof g);
    int in_r = a - r->nout, nin = 0, w_in0 = -1;
    int rin[TOCL_IR_MAX_INPUTS];
    for (int e = 0; e < r->g.n_inputs; e++) {
        rin[e] = e == in_r ? -1 : nin;
        if (e != in_r)
            g.input_dtypes[nin++] = r->g.input_dtypes[e];
    }
    w_in0 = nin;
    if (nin + w->g.n_inputs > TOCL_IR_MAX_INPUTS || r->g.n_scalars + w->g.n_scalars > TOCL_IR_MAX_SCALARS ||
        r->g.n_nodes + w->g.n_nodes + 1 > TOCL_IR_MAX_NODES)
        return 0;
    for (int e = 0; e < w->g.n_inputs; e++)
        g.input_dtypes[nin++] = w->g.input_dtypes[e];
    g.n_inputs = nin;
    int wmap[TOCL_IR_MAX_NODES];
    for (int j = 0; j < w->g.n_nodes; j++) {
        const tocl_ir_node *n = &w->g.nodes[j];
        int v;
        if (n->op == TOCL_IR_INPUT) {
            v = tocl_ir_add_node(&g, TOCL_IR_INPUT, n->dtype, w_in0 + n->arg[0], 0, 0);
        } else if (n->op == TOCL_IR_SCALAR) {
            v = tocl_ir_add_node(&g, TOCL_IR_SCALAR, n->dtype, r->g.n_scalars + n->arg[0], 0, 0);
        } else {
            v = tocl_ir_add_mapped(&g, n, wmap);
        }
        if (v < 0)
            return 0;
        wmap[j] = v;
    }
    int tv = wmap[w->g.output_nodes[b]];
    if (w->op[b].dtype == TOCL_F16) /* as its storage would have rounded it */
        tv = tocl_ir_add_node(&g, TOCL_IR_ROUND_F16, tdt, tv, 0, 0);
    else if (w->op[b].dtype == TOCL_BF16)
        tv = tocl_ir_add_node(&g, TOCL_IR_ROUND_BF16, tdt, tv, 0, 0);
    int rmap[TOCL_IR_MAX_NODES];
    for (int j = 0; j < r->g.n_nodes && tv >= 0; j++) {
        const tocl_ir_node *n = &r->g.nodes[j];
        int v;
        if (n->op == TOCL_IR_INPUT && n->arg[0] == in_r) {
            v = n->dtype == tdt ? tv : -1;
        } else if (n->op == TOCL_IR_INPUT) {
            v = tocl_ir_add_node(&g, TOCL_IR_INPUT, n->dtype, rin[n->arg[0]], 0, 0);
        } else if (n->op == TOCL_IR_SCALAR) {
            v = tocl_ir_add_node(&g, TOCL_IR_SCALAR, n->dtype, n->arg[0], 0, 0);
        } else {
            v = tocl_ir_add_mapped(&g, n, rmap);
        }
        if (v < 0)
            return 0;
        rmap[j] = v;
    }
    if (tv < 0)
        return 0;
    g.n_scalars = r->g.n_scalars + w->g.n_scalars;
    memcpy(g.scalar_dtypes, r->g.scalar_dtypes, (size_t)r->g.n_scalars * sizeof g.scalar_dtypes[0]);
    memcpy(g.scalar_dtypes + r->g.n_scalars, w->g.scalar_dtypes, (size_t)w->g.n_scalars * sizeof g.scalar_dtypes[0]);
    g.n_outputs = r->g.n_outputs;
    for (int o = 0; o < r->g.n_outputs; o++) {
        g.output_nodes[o] = rmap[r->g.output_nodes[o]];
        g.output_dtypes[o] = r->g.output_dtypes[o];
    }
    if (tocl_ir_validate(&g) != TOCL_OK)
        return 0;
    /* Operands: r's outputs and other inputs, then w's inputs over r's shape. */
    d_operand ops[MAX_OPS];
    int n = 0;
    for (int k = 0; k < r->nops; k++)
        if (k != a)
            ops[n++] = r->op[k];
    for (int k = w->nout; k < w->nops; k++) {
        d_operand o = w->op[k];
        for (int i = 0; i < r->ndim; i++)
            o.st[i] = gd[i] < 0 ? 0 : w->op[k].st[gd[i]] * q[i];
        o.flat_st = r->ndim == 1 ? o.st[0] : 0;
        ops[n++] = o;
    }
    memcpy(r->op, ops, (size_t)n * sizeof ops[0]);
    r->nops = n;
    memcpy(r->sc + r->g.n_scalars, w->sc, (size_t)w->g.n_scalars * sizeof w->sc[0]);
    r->g = g;
    r->math += w->math;
    return 1;
}

int tocl_defer_inline_broadcasts(int dev, d_rec *recs, int n, const d_spans *written) {
    int done = 0;
    for (int pass = 0; pass < PASSES; pass++) {
        int changed = 0;
        for (int ri = 1; ri < n; ri++) {
            d_rec *r = &recs[ri];
            for (int a = r->nout; a < r->nops; a++) {
                if (!tocl_defer_maybe_written(written, &r->op[a]))
                    continue;
                /* The newest writer of what r reads. */
                int wi = ri - 1, b = -1;
                for (; wi >= 0 && wi >= ri - WRITER_SCAN && b < 0; wi--)
                    for (int k = 0; k < recs[wi].nout && b < 0; k++)
                        if (overlap(&recs[wi].op[k], &r->op[a]))
                            b = k;
                wi++;
                if (b < 0)
                    continue;
                const d_rec *w = &recs[wi];
                const d_operand *wo = &w->op[b];
                if (w->numel >= r->numel || !w->dead[b] || w->dropped[b] || wo->lo != r->op[a].lo ||
                    wo->hi != r->op[a].hi || wo->dtype != r->op[a].dtype || w->ndim < 0)
                    continue;
                /* w's inputs hold until r: w does not write them, nor does
                 * anything recorded in between. */
                int ok = 1;
                for (int k = w->nout; k < w->nops && ok; k++)
                    for (int x = wi; x <= ri && ok; x++) /* r itself: its outputs would race its reads */
                        ok = !writes_to(&recs[x], &w->op[k]);
                if (ok && inline_one(dev, recs, wi, b, r, a)) {
                    changed = 1;
                    done++;
                    break; /* r's operands moved: look at it again next pass */
                }
            }
        }
        if (!changed)
            break;
    }
    return done;
}
