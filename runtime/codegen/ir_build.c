/* ir_build.c - building, validating, hashing and comparing IR graphs. */
#include <string.h>

#include "codegen/ir_internal.h"

static int dtype_ok(tocl_dtype t) { return (int)t >= 0 && t < TOCL_NUM_DTYPES; }
/* Node dtypes are compute dtypes: F16/BF16 only exist in memory. */
static int compute_ok(tocl_dtype t) { return dtype_ok(t) && t != TOCL_F16 && t != TOCL_BF16; }

void tocl_ir_init(tocl_ir_graph *g) {
    if (g)
        memset(g, 0, sizeof *g);
}

void tocl_ir_copy(tocl_ir_graph *dst, const tocl_ir_graph *src) {
    dst->n_nodes = src->n_nodes;
    memcpy(dst->nodes, src->nodes, (size_t)src->n_nodes * sizeof src->nodes[0]);
    dst->n_inputs = src->n_inputs;
    memcpy(dst->input_dtypes, src->input_dtypes, (size_t)src->n_inputs * sizeof src->input_dtypes[0]);
    dst->n_scalars = src->n_scalars;
    memcpy(dst->scalar_dtypes, src->scalar_dtypes, (size_t)src->n_scalars * sizeof src->scalar_dtypes[0]);
    dst->n_outputs = src->n_outputs;
    memcpy(dst->output_nodes, src->output_nodes, (size_t)src->n_outputs * sizeof src->output_nodes[0]);
    memcpy(dst->output_dtypes, src->output_dtypes, (size_t)src->n_outputs * sizeof src->output_dtypes[0]);
    dst->overflow = src->overflow;
}

static int fail(tocl_ir_graph *g) {
    g->overflow = 1;
    return -1;
}

static int node_ok(const tocl_ir_graph *g, int a) { return a >= 0 && a < g->n_nodes; }

int tocl_ir_add_node(tocl_ir_graph *g, tocl_ir_op op, tocl_dtype dtype, int a0, int a1, int a2) {
    if (g->n_nodes >= TOCL_IR_MAX_NODES)
        return fail(g);
    tocl_ir_node *n = &g->nodes[g->n_nodes];
    n->op = op;
    n->dtype = dtype;
    n->arg[0] = a0;
    n->arg[1] = a1;
    n->arg[2] = a2;
    return g->n_nodes++;
}

int tocl_ir_add_mapped(tocl_ir_graph *g, const tocl_ir_node *n, const int *map) {
    const tocl_ir_op_info *info = tocl_ir_op_info_get(n->op);
    int args[3] = {0, 0, 0};
    for (int k = 0; info && k < info->arity; k++)
        args[k] = map[n->arg[k]];
    return tocl_ir_add_node(g, n->op, n->dtype, args[0], args[1], args[2]);
}

int tocl_ir_input(tocl_ir_graph *g, tocl_dtype storage) {
    if (!g || !dtype_ok(storage) || g->n_inputs >= TOCL_IR_MAX_INPUTS)
        return g ? fail(g) : -1;
    int node = tocl_ir_add_node(g, TOCL_IR_INPUT, tocl_dtype_compute(storage), g->n_inputs, 0, 0);
    if (node >= 0)
        g->input_dtypes[g->n_inputs++] = storage;
    return node;
}

int tocl_ir_scalar(tocl_ir_graph *g, tocl_dtype compute) {
    if (!g || !dtype_ok(compute) || g->n_scalars >= TOCL_IR_MAX_SCALARS)
        return g ? fail(g) : -1;
    compute = tocl_dtype_compute(compute); /* a float16 scalar is passed as float */
    int node = tocl_ir_add_node(g, TOCL_IR_SCALAR, compute, g->n_scalars, 0, 0);
    if (node >= 0)
        g->scalar_dtypes[g->n_scalars++] = compute;
    return node;
}

/* A cast to F16/BF16 means "to its compute type": rounding to the narrow
 * format happens where a value is stored, never in between. A cast to the
 * node's own dtype is the node itself, so equal graphs stay equal. */
int tocl_ir_cast(tocl_ir_graph *g, int a, tocl_dtype to) {
    if (!g || !node_ok(g, a) || !dtype_ok(to))
        return g ? fail(g) : -1;
    to = tocl_dtype_compute(to);
    if (g->nodes[a].dtype == to)
        return a;
    return tocl_ir_add_node(g, TOCL_IR_CAST, to, a, 0, 0);
}

/* Apply op with up to three arguments, casting arguments to the dtypes the
 * op's signature wants so callers can mix input dtypes freely. */
static int apply(tocl_ir_graph *g, tocl_ir_op op, tocl_dtype dtype, int arity, const int *args) {
    if (!g)
        return -1;
    const tocl_ir_op_info *info = tocl_ir_op_info_get(op);
    if (!info || info->arity != arity || !dtype_ok(dtype))
        return fail(g);
    for (int k = 0; k < arity; k++)
        if (!node_ok(g, args[k]))
            return fail(g);
    dtype = tocl_dtype_compute(dtype);
    /* Check before adding casts, so a refused op leaves no stray nodes. */
    if (info->sig != TOCL_IR_SIG_LEAF && info->sig != TOCL_IR_SIG_CAST && !tocl_ir_op_formula(op, dtype))
        return fail(g); /* e.g. div on integers, sub on bool */
    int a[3] = {0, 0, 0};
    tocl_dtype result = dtype;
    switch (info->sig) {
    case TOCL_IR_SIG_LEAF:
        return fail(g); /* leaves are made by tocl_ir_input / tocl_ir_scalar */
    case TOCL_IR_SIG_CAST:
        return tocl_ir_cast(g, args[0], dtype);
    case TOCL_IR_SIG_SAME:
    case TOCL_IR_SIG_CMP:
        for (int k = 0; k < arity; k++)
            a[k] = tocl_ir_cast(g, args[k], dtype);
        if (info->sig == TOCL_IR_SIG_CMP)
            result = TOCL_BOOL;
        break;
    case TOCL_IR_SIG_WHERE:
        a[0] = tocl_ir_cast(g, args[0], TOCL_BOOL);
        for (int k = 1; k < arity; k++)
            a[k] = tocl_ir_cast(g, args[k], dtype);
        break;
    }
    for (int k = 0; k < arity; k++)
        if (a[k] < 0)
            return -1;
    return tocl_ir_add_node(g, op, result, a[0], a[1], a[2]);
}

int tocl_ir_unary(tocl_ir_graph *g, tocl_ir_op op, tocl_dtype dtype, int a) {
    int args[1] = {a};
    return apply(g, op, dtype, 1, args);
}

int tocl_ir_binary(tocl_ir_graph *g, tocl_ir_op op, tocl_dtype dtype, int a, int b) {
    int args[2] = {a, b};
    return apply(g, op, dtype, 2, args);
}

int tocl_ir_ternary(tocl_ir_graph *g, tocl_ir_op op, tocl_dtype dtype, int a, int b, int c) {
    int args[3] = {a, b, c};
    return apply(g, op, dtype, 3, args);
}

int tocl_ir_output(tocl_ir_graph *g, int node, tocl_dtype storage) {
    if (!g || !node_ok(g, node) || !dtype_ok(storage) || g->n_outputs >= TOCL_IR_MAX_OUTPUTS)
        return g ? fail(g) : -1;
    node = tocl_ir_cast(g, node, storage);
    if (node < 0)
        return -1;
    g->output_nodes[g->n_outputs] = node;
    g->output_dtypes[g->n_outputs] = storage;
    return g->n_outputs++;
}

/* Validation reports the first problem with the node index, so a fusion bug
 * can be traced to the builder call that made it. */
tocl_status tocl_ir_validate(const tocl_ir_graph *g) {
    if (!g)
        return tocl_fail(TOCL_E_INVALID, "IR graph is NULL");
    if (g->overflow)
        return tocl_fail(TOCL_E_INVALID, "IR graph: a builder call failed (table full, bad argument "
                                         "or op undefined for its dtype); the graph is incomplete");
    if (g->n_nodes < 1 || g->n_nodes > TOCL_IR_MAX_NODES || g->n_inputs < 0 ||
        g->n_inputs > TOCL_IR_MAX_INPUTS || g->n_scalars < 0 || g->n_scalars > TOCL_IR_MAX_SCALARS ||
        g->n_outputs < 1 || g->n_outputs > TOCL_IR_MAX_OUTPUTS)
        return tocl_fail(TOCL_E_INVALID, "IR graph: counts out of range (nodes %d, inputs %d, scalars %d, "
                         "outputs %d; need >= 1 node and >= 1 output)",
                         g->n_nodes, g->n_inputs, g->n_scalars, g->n_outputs);
    for (int k = 0; k < g->n_inputs; k++)
        if (!dtype_ok(g->input_dtypes[k]))
            return tocl_fail(TOCL_E_INVALID, "IR graph: input %d has invalid dtype %d", k, (int)g->input_dtypes[k]);
    for (int k = 0; k < g->n_scalars; k++)
        if (!compute_ok(g->scalar_dtypes[k]))
            return tocl_fail(TOCL_E_INVALID, "IR graph: scalar %d has dtype %s, not a compute dtype", k,
                             tocl_dtype_name(g->scalar_dtypes[k]));
    for (int i = 0; i < g->n_nodes; i++) {
        const tocl_ir_node *n = &g->nodes[i];
        const tocl_ir_op_info *info = tocl_ir_op_info_get(n->op);
        if (!info)
            return tocl_fail(TOCL_E_INVALID, "IR node %d: invalid op %d", i, (int)n->op);
        if (!compute_ok(n->dtype))
            return tocl_fail(TOCL_E_INVALID, "IR node %d (%s): dtype %s is not a compute dtype", i, info->name,
                             tocl_dtype_name(n->dtype));
        if (n->op == TOCL_IR_INPUT || n->op == TOCL_IR_SCALAR) {
            int is_in = n->op == TOCL_IR_INPUT;
            int count = is_in ? g->n_inputs : g->n_scalars;
            if (n->arg[0] < 0 || n->arg[0] >= count)
                return tocl_fail(TOCL_E_INVALID, "IR node %d (%s): operand index %d out of range [0, %d)", i,
                                 info->name, n->arg[0], count);
            tocl_dtype want = is_in ? tocl_dtype_compute(g->input_dtypes[n->arg[0]]) : g->scalar_dtypes[n->arg[0]];
            if (n->dtype != want)
                return tocl_fail(TOCL_E_INVALID, "IR node %d (%s %d): dtype %s, expected %s", i, info->name,
                                 n->arg[0], tocl_dtype_name(n->dtype), tocl_dtype_name(want));
            continue;
        }
        for (int k = 0; k < info->arity; k++)
            if (n->arg[k] < 0 || n->arg[k] >= i)
                return tocl_fail(TOCL_E_INVALID, "IR node %d (%s): argument %d refers to node %d; arguments "
                                 "must precede their node", i, info->name, k, n->arg[k]);
        tocl_dtype cls = n->dtype;
        for (int k = 0; k < info->arity; k++) {
            tocl_dtype have = g->nodes[n->arg[k]].dtype, want = n->dtype;
            if (info->sig == TOCL_IR_SIG_CAST)
                continue;
            if (info->sig == TOCL_IR_SIG_CMP)
                want = g->nodes[n->arg[0]].dtype;
            if (info->sig == TOCL_IR_SIG_WHERE && k == 0)
                want = TOCL_BOOL;
            if (have != want)
                return tocl_fail(TOCL_E_INVALID, "IR node %d (%s): argument %d has dtype %s, expected %s "
                                 "(insert a cast)", i, info->name, k, tocl_dtype_name(have), tocl_dtype_name(want));
        }
        if (info->sig == TOCL_IR_SIG_CMP) {
            cls = g->nodes[n->arg[0]].dtype;
            if (n->dtype != TOCL_BOOL)
                return tocl_fail(TOCL_E_INVALID, "IR node %d (%s): comparisons produce bool", i, info->name);
        }
        if (info->sig != TOCL_IR_SIG_CAST && !tocl_ir_op_formula(n->op, cls))
            return tocl_fail(TOCL_E_INVALID, "IR node %d: op %s is not defined for %s", i, info->name,
                             tocl_dtype_name(cls));
    }
    for (int k = 0; k < g->n_outputs; k++) {
        int node = g->output_nodes[k];
        if (node < 0 || node >= g->n_nodes)
            return tocl_fail(TOCL_E_INVALID, "IR output %d: node %d out of range", k, node);
        if (!dtype_ok(g->output_dtypes[k]))
            return tocl_fail(TOCL_E_INVALID, "IR output %d: invalid dtype %d", k, (int)g->output_dtypes[k]);
        if (g->nodes[node].dtype != tocl_dtype_compute(g->output_dtypes[k]))
            return tocl_fail(TOCL_E_INVALID, "IR output %d: node %d has dtype %s but the output stores %s "
                             "(insert a cast)", k, node, tocl_dtype_name(g->nodes[node].dtype),
                             tocl_dtype_name(g->output_dtypes[k]));
    }
    return TOCL_OK;
}

/* The fields that rendering reads, in a fixed order; hash and equality both
 * walk this sequence so they can never disagree. Unused argument slots are
 * skipped, so garbage in them does not split the cache. */
typedef void (*visit_fn)(void *ctx, int64_t v);

static void walk(const tocl_ir_graph *g, visit_fn f, void *ctx) {
    f(ctx, g->n_nodes);
    for (int i = 0; i < g->n_nodes && i < TOCL_IR_MAX_NODES; i++) {
        const tocl_ir_node *n = &g->nodes[i];
        const tocl_ir_op_info *info = tocl_ir_op_info_get(n->op);
        int nargs = info ? (info->sig == TOCL_IR_SIG_LEAF ? 1 : info->arity) : 3;
        f(ctx, n->op);
        f(ctx, n->dtype);
        for (int k = 0; k < nargs; k++)
            f(ctx, n->arg[k]);
    }
    f(ctx, g->n_inputs);
    for (int k = 0; k < g->n_inputs && k < TOCL_IR_MAX_INPUTS; k++)
        f(ctx, g->input_dtypes[k]);
    f(ctx, g->n_scalars);
    for (int k = 0; k < g->n_scalars && k < TOCL_IR_MAX_SCALARS; k++)
        f(ctx, g->scalar_dtypes[k]);
    f(ctx, g->n_outputs);
    for (int k = 0; k < g->n_outputs && k < TOCL_IR_MAX_OUTPUTS; k++) {
        f(ctx, g->output_nodes[k]);
        f(ctx, g->output_dtypes[k]);
    }
}

static void hash_visit(void *ctx, int64_t v) {
    uint64_t *h = ctx;
    for (int b = 0; b < 8; b++) { /* FNV-1a over the value's bytes */
        *h ^= (uint64_t)((v >> (8 * b)) & 0xff);
        *h *= 0x100000001b3ull;
    }
}

uint64_t tocl_ir_hash(const tocl_ir_graph *g, int rank) {
    uint64_t h = 0xcbf29ce484222325ull;
    if (!g)
        return h;
    hash_visit(&h, rank);
    walk(g, hash_visit, &h);
    return h;
}

/* Equality: record one walk, then replay the other against it. */
typedef struct {
    int64_t v[4 * TOCL_IR_MAX_NODES + 2 * (TOCL_IR_MAX_INPUTS + TOCL_IR_MAX_SCALARS + TOCL_IR_MAX_OUTPUTS) + 64];
    int n, pos, differ;
} eq_ctx;

static void record(void *ctx, int64_t v) {
    eq_ctx *c = ctx;
    if (c->n < (int)(sizeof c->v / sizeof c->v[0]))
        c->v[c->n++] = v;
}

static void replay(void *ctx, int64_t v) {
    eq_ctx *c = ctx;
    if (c->pos >= c->n || c->v[c->pos] != v)
        c->differ = 1;
    c->pos++;
}

int tocl_ir_equal(const tocl_ir_graph *a, const tocl_ir_graph *b) {
    static _Thread_local eq_ctx c; /* about 6 KB: kept off the stack */
    c.n = c.pos = c.differ = 0;
    walk(a, record, &c);
    walk(b, replay, &c);
    return !c.differ && c.pos == c.n;
}

int tocl_ir_uses_f64(const tocl_ir_graph *g) {
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].dtype == TOCL_F64)
            return 1;
    for (int k = 0; k < g->n_inputs; k++)
        if (g->input_dtypes[k] == TOCL_F64)
            return 1;
    for (int k = 0; k < g->n_outputs; k++)
        if (g->output_dtypes[k] == TOCL_F64)
            return 1;
    for (int k = 0; k < g->n_scalars; k++)
        if (g->scalar_dtypes[k] == TOCL_F64)
            return 1;
    return 0;
}
