/* render.c - turns an IR graph into the OpenCL C text of kernel `tocl_ew`.
 *
 * Kernel ABI (runtime/ops/elementwise.c sets arguments in this order; every
 * offset, size and stride is in elements, not bytes):
 *
 *   __kernel void tocl_ew(
 *       long n,                                   number of elements
 *       per output k: __global S *o<k>, long o<k>_off
 *       per input k:  __global const S *i<k>, long i<k>_off
 *       per scalar k: C s<k>                      (bool passes as uchar)
 *       strided only (rank r >= 1):
 *           long size0 .. size<r-1>               outermost first
 *           per operand (outputs, then inputs):
 *               long <o|i><k>_st0 .. <o|i><k>_st<r-1>)
 *
 * S is the storage type (half for float16, read with vload_half and written
 * with vstore_half_rte; ushort for bfloat16; uchar for bool), C the compute
 * type (float for float16/bfloat16).
 *
 * Launch: rank 0 and 1 use a 1-D range of at least n work-items; rank >= 2
 * a 2-D range, dimension 0 over the innermost size (size<r-1>) and
 * dimension 1 over n / size<r-1> outer positions. Work-items past the end
 * return at once, so both ranges may be rounded up to the work-group size.
 *
 * One work-item handles one element:
 * measured on PoCL (16M float add) this ties 16 elements per work-item and
 * beats 4 per work-item, while a grid-stride loop is 35x slower because
 * PoCL cannot vectorise across work-items through it. The strided path
 * finds each operand's element from its coordinates (innermost last, outer
 * ones by div/mod of the outer index), so no operand is ever copied. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "codegen/ir_internal.h"
#include "codegen/ir_special.h"
#include "codegen/render_internal.h"

void tocl_text_put(tocl_text *t, const char *fmt, ...) {
    if (t->full)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= t->cap - t->len) {
        t->full = 1;
        t->buf[t->len] = 0;
        return;
    }
    t->len += (size_t)n;
}

/* OpenCL C type a value of dtype is computed in. */
static const char *compute_type(tocl_dtype t) {
    static const char *names[TOCL_NUM_DTYPES] = {"bool", "uchar", "char", "short", "int", "long",
                                                 "float", "float", "float", "double"};
    return names[t];
}

/* OpenCL C type of a buffer element of storage dtype. */
static const char *storage_type(tocl_dtype t) {
    static const char *names[TOCL_NUM_DTYPES] = {"uchar", "uchar", "char", "short", "int", "long",
                                                 "half", "ushort", "float", "double"};
    return names[t];
}

/* Kernel-argument type of a scalar (OpenCL forbids bool arguments). */
static const char *scalar_arg_type(tocl_dtype t) { return t == TOCL_BOOL ? "uchar" : compute_type(t); }

/* Expression converting variable v<a> of dtype `from` to dtype `to`. */
static void put_cast(tocl_text *t, int a, tocl_dtype from, tocl_dtype to) {
    if (to == TOCL_BOOL)
        tocl_text_put(t, "(v%d != 0)", a); /* NaN is true, as in C and PyTorch */
    else if (tocl_dtype_is_float(from) && (to == TOCL_U8 || to == TOCL_I8 || to == TOCL_I16))
        /* Through int, then an integer narrowing that wraps: what the CPU's
         * cast does (x86 converts to 32 bits and keeps the low byte, so
         * -1.0 -> uint8 is 255). convert_uchar of an out-of-range value is
         * the driver's choice: NVIDIA's saturates (-1.0 -> 0). */
        tocl_text_put(t, "(%s)convert_int(v%d)", compute_type(to), a);
    else if (tocl_dtype_is_float(from) && !tocl_dtype_is_float(to))
        tocl_text_put(t, "convert_%s(v%d)", compute_type(to), a); /* truncates like a C cast */
    else
        tocl_text_put(t, "(%s)v%d", compute_type(to), a);
}

/* Unsigned counterpart of an integer compute type (for wrapping arithmetic). */
static const char *unsigned_type(tocl_dtype t) {
    static const char *names[TOCL_NUM_DTYPES] = {"uchar", "uchar", "uchar", "ushort", "uint", "ulong",
                                                 "uint",  "uint",  "uint",  "ulong"};
    return names[t];
}

/* Copy a formula template, replacing %0 %1 %2 by argument variables and
 * %T %U %F by the type, unsigned type and literal suffix of class `cls`
 * (see ir_internal.h). Any other '%' (the modulo operator) is copied. */
static void put_formula(tocl_text *t, const char *f, const int *args, int arity, tocl_dtype cls) {
    for (; *f; f++) {
        if (f[0] == '%' && f[1] >= '0' && f[1] < '0' + arity) {
            tocl_text_put(t, "v%d", args[f[1] - '0']);
            f++;
        } else if (f[0] == '%' && (f[1] == 'T' || f[1] == 'U' || f[1] == 'F')) {
            if (f[1] == 'T')
                tocl_text_put(t, "%s", compute_type(cls));
            else if (f[1] == 'U')
                tocl_text_put(t, "%s", unsigned_type(cls));
            else
                tocl_text_put(t, "%s", cls == TOCL_F32 ? "f" : "");
            f++;
        } else {
            tocl_text_put(t, "%c", *f);
        }
    }
}

/* The dtype class an op node is computed in: its arguments' for predicates. */
static tocl_dtype node_class(const tocl_ir_graph *g, const tocl_ir_node *n, const tocl_ir_op_info *info) {
    return info->sig == TOCL_IR_SIG_CMP ? g->nodes[n->arg[0]].dtype : n->dtype;
}

/* The special functions (ir_special.h) the float formulas of g's nodes
 * call in class cls, with their callees. */
static uint64_t special_needs(const tocl_ir_graph *g, tocl_dtype cls) {
    uint64_t needs = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const tocl_ir_node *n = &g->nodes[i];
        const tocl_ir_op_info *info = tocl_ir_op_info_get(n->op);
        if (info->sf && info->sig != TOCL_IR_SIG_LEAF && info->sig != TOCL_IR_SIG_CAST && node_class(g, n, info) == cls)
            needs |= info->sf;
    }
    return tocl_sf_closure(needs);
}

/* Helper functions used by the graph: the special functions (float, then
 * double; callees first), then each (op, class) helper once, in node order,
 * so the text is a function of the graph alone. */
void tocl_render_helpers(tocl_text *t, const tocl_ir_graph *g) {
    static const tocl_dtype float_classes[] = {TOCL_F32, TOCL_F64};
    for (int c = 0; c < 2; c++) {
        uint64_t needs = special_needs(g, float_classes[c]);
        for (int k = 0; k < TOCL_SF_COUNT; k++)
            if (needs & (UINT64_C(1) << k)) {
                const char *text = tocl_sf_table[k].text;
                if (float_classes[c] == TOCL_F64 && tocl_sf_table[k].text_f64)
                    text = tocl_sf_table[k].text_f64;
                put_formula(t, text, NULL, 0, float_classes[c]);
                tocl_text_put(t, "\n");
            }
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const tocl_ir_node *n = &g->nodes[i];
        const tocl_ir_op_info *info = tocl_ir_op_info_get(n->op);
        if (info->sig == TOCL_IR_SIG_LEAF || info->sig == TOCL_IR_SIG_CAST)
            continue;
        tocl_dtype cls = node_class(g, n, info);
        const char *h = tocl_ir_op_helper(n->op, cls);
        if (!h)
            continue;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) {
            const tocl_ir_node *m = &g->nodes[j];
            const tocl_ir_op_info *mi = tocl_ir_op_info_get(m->op);
            seen = m->op == n->op && mi->sig != TOCL_IR_SIG_LEAF && mi->sig != TOCL_IR_SIG_CAST &&
                   node_class(g, m, mi) == cls;
        }
        if (seen)
            continue;
        put_formula(t, h, n->arg, 0, cls);
        tocl_text_put(t, "\n");
    }
}

/* Expression for the element index of operand `name` (e.g. "i0"). */
static void index_expr(char *out, size_t cap, const char *name, int rank) {
    if (rank == 0)
        snprintf(out, cap, "%s_off + gid", name);
    else
        snprintf(out, cap, "x_%s", name);
}

static void put_signature(tocl_text *t, const tocl_ir_graph *g, int rank) {
    tocl_text_put(t, "__kernel void tocl_ew(long n");
    for (int k = 0; k < g->n_outputs; k++)
        tocl_text_put(t, ",\n        __global %s *o%d, long o%d_off", storage_type(g->output_dtypes[k]), k, k);
    for (int k = 0; k < g->n_inputs; k++)
        tocl_text_put(t, ",\n        __global const %s *i%d, long i%d_off", storage_type(g->input_dtypes[k]), k, k);
    for (int k = 0; k < g->n_scalars; k++)
        tocl_text_put(t, ",\n        %s s%d", scalar_arg_type(g->scalar_dtypes[k]), k);
    if (rank > 0) {
        tocl_text_put(t, ",\n        ");
        for (int d = 0; d < rank; d++)
            tocl_text_put(t, "%slong size%d", d ? ", " : "", d);
        for (int k = 0; k < g->n_outputs + g->n_inputs; k++) {
            int is_out = k < g->n_outputs;
            int idx = is_out ? k : k - g->n_outputs;
            tocl_text_put(t, ",\n        ");
            for (int d = 0; d < rank; d++)
                tocl_text_put(t, "%slong %c%d_st%d", d ? ", " : "", is_out ? 'o' : 'i', idx, d);
        }
    }
    tocl_text_put(t, ")\n{\n");
}

/* Strided path. Rank 1: one linear index. Rank >= 2 launches a 2-D range:
 * dimension 0 walks the innermost dimension (no division at all), dimension
 * 1 the linear index over the outer ones, peeled innermost first with div/mod
 * (the outermost needs no modulo). 64-bit division dominated the 1-D form:
 * a broadcast add ran 3x slower than the contiguous one.
 *
 * The div/mod comes before the bounds check on purpose: it depends only on
 * dimension 1, so PoCL hoists it out of its loop over dimension 0 and
 * vectorises that loop; after a conditional return LLVM may not speculate a
 * division (it could trap), so it stayed per work-item and scalar. Measured
 * on PoCL, the head-split copy [8,128,12,64] -> [8,12,128,64]: 1.8-6.8 ms
 * with the check first, 0.17 ms with it after. Sizes are never 0 here
 * (empty launches return before), so the early division cannot trap. */
static void put_offsets(tocl_text *t, const tocl_ir_graph *g, int layout) {
    int rank = TOCL_EW_LAYOUT_RANK(layout);
    int nops = g->n_outputs + g->n_inputs, in = rank - 1;
    if (rank == 1) {
        tocl_text_put(t, "    long gid = get_global_id(0);\n    if (gid >= n)\n        return;\n");
    } else {
        const char *row = rank > 2 ? "row" : "r"; /* r is peeled below */
        tocl_text_put(t, "    long c%d = get_global_id(0), r = get_global_id(1)%s;\n", in, rank > 2 ? ", row = r" : "");
        for (int d = rank - 2; d > 0; d--)
            tocl_text_put(t, "    long c%d = r %% size%d;\n    r /= size%d;\n", d, d, d);
        tocl_text_put(t, "    if (c%d >= size%d || %s * size%d + c%d >= n)\n        return;\n", in, in, row, in, in);
    }
    for (int k = 0; k < nops; k++) {
        int is_out = k < g->n_outputs;
        int idx = is_out ? k : k - g->n_outputs;
        char ch = is_out ? 'o' : 'i';
        const char *c = rank == 1 ? "gid" : NULL;
        char cbuf[16];
        if (!c) {
            snprintf(cbuf, sizeof cbuf, "c%d", in);
            c = cbuf;
        }
        if (TOCL_EW_LAYOUT_UNIT(layout, k))
            tocl_text_put(t, "    long x_%c%d = %c%d_off + %s;\n", ch, idx, ch, idx, c);
        else if (TOCL_EW_LAYOUT_ZERO(layout, k))
            tocl_text_put(t, "    long x_%c%d = %c%d_off;\n", ch, idx, ch, idx);
        else
            tocl_text_put(t, "    long x_%c%d = %c%d_off + %s * %c%d_st%d;\n", ch, idx, ch, idx, c, ch, idx, in);
    }
    for (int d = rank - 2; d >= 0; d--) {
        for (int k = 0; k < nops; k++) {
            int is_out = k < g->n_outputs;
            int idx = is_out ? k : k - g->n_outputs;
            char ch = is_out ? 'o' : 'i';
            if (d == 0)
                tocl_text_put(t, "    x_%c%d += r * %c%d_st0;\n", ch, idx, ch, idx);
            else
                tocl_text_put(t, "    x_%c%d += c%d * %c%d_st%d;\n", ch, idx, d, ch, idx, d);
        }
    }
}

static void put_node(tocl_text *t, const tocl_ir_graph *g, int i, int rank) {
    const tocl_ir_node *n = &g->nodes[i];
    const tocl_ir_op_info *info = tocl_ir_op_info_get(n->op);
    tocl_text_put(t, "    %s v%d = ", compute_type(n->dtype), i);
    if (n->op == TOCL_IR_INPUT) {
        char name[16], ix[64];
        snprintf(name, sizeof name, "i%d", n->arg[0]);
        index_expr(ix, sizeof ix, name, rank);
        tocl_dtype st = g->input_dtypes[n->arg[0]];
        if (st == TOCL_F16)
            tocl_text_put(t, "vload_half(%s, %s)", ix, name);
        else if (st == TOCL_BF16)
            tocl_text_put(t, "as_float((uint)%s[%s] << 16)", name, ix);
        else if (st == TOCL_BOOL)
            tocl_text_put(t, "(%s[%s] != 0)", name, ix);
        else
            tocl_text_put(t, "%s[%s]", name, ix);
    } else if (n->op == TOCL_IR_SCALAR) {
        if (n->dtype == TOCL_BOOL)
            tocl_text_put(t, "(s%d != 0)", n->arg[0]);
        else
            tocl_text_put(t, "s%d", n->arg[0]);
    } else if (info->sig == TOCL_IR_SIG_CAST) {
        put_cast(t, n->arg[0], g->nodes[n->arg[0]].dtype, n->dtype);
    } else {
        tocl_dtype cls = node_class(g, n, info);
        put_formula(t, tocl_ir_op_formula(n->op, cls), n->arg, info->arity, cls);
    }
    tocl_text_put(t, ";\n");
}

static void put_store(tocl_text *t, const tocl_ir_graph *g, int k, int rank) {
    char name[16], ix[64];
    snprintf(name, sizeof name, "o%d", k);
    index_expr(ix, sizeof ix, name, rank);
    int v = g->output_nodes[k];
    switch (g->output_dtypes[k]) {
    case TOCL_F16: tocl_text_put(t, "    vstore_half_rte(v%d, %s, %s);\n", v, ix, name); break;
    case TOCL_BF16: tocl_text_put(t, "    %s[%s] = tocl_f2bf(v%d);\n", name, ix, v); break;
    case TOCL_BOOL: tocl_text_put(t, "    %s[%s] = (uchar)v%d;\n", name, ix, v); break; /* node is bool: 0 or 1 */
    default: tocl_text_put(t, "    %s[%s] = v%d;\n", name, ix, v); break;
    }
}

/* float -> bfloat16 bits, round to nearest even; NaN becomes the quiet NaN
 * 0x7fc0 exactly as PyTorch's c10::BFloat16 does. */
static const char bf16_helper[] =
    "inline ushort tocl_f2bf(float f)\n{\n"
    "    uint u = as_uint(f);\n"
    "    if ((u & 0x7fffffffu) > 0x7f800000u)\n"
    "        return (ushort)0x7fc0;\n"
    "    return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);\n}\n\n";

tocl_status tocl_ir_render(const tocl_ir_graph *g, int rank, char *buf, size_t cap) {
    if (rank < 0 || rank > TOCL_MAX_DIMS) {
        if (buf && cap)
            buf[0] = 0;
        return tocl_fail(TOCL_E_INVALID, "tocl_ir_render: rank %d outside [0, %d]", rank, TOCL_MAX_DIMS);
    }
    return tocl_ir_render_layout(g, TOCL_EW_LAYOUT(rank, 0, 0), buf, cap);
}

tocl_status tocl_ir_render_layout(const tocl_ir_graph *g, int layout, char *buf, size_t cap) {
    int rank = TOCL_EW_LAYOUT_RANK(layout);
    if (!buf || cap == 0)
        return tocl_fail(TOCL_E_INVALID, "tocl_ir_render: no output buffer");
    buf[0] = 0;
    if (rank < 0 || rank > TOCL_MAX_DIMS)
        return tocl_fail(TOCL_E_INVALID, "tocl_ir_render: rank %d outside [0, %d]", rank, TOCL_MAX_DIMS);
    TOCL_TRY(tocl_ir_validate(g));
    tocl_text t = {buf, cap, 0, 0};
    tocl_text_put(&t, "/* tocl_ew: %d nodes, %d inputs, %d scalars, %d outputs, %s", g->n_nodes, g->n_inputs,
        g->n_scalars, g->n_outputs, rank ? "strided" : "contiguous");
    if (layout != rank)
        tocl_text_put(&t, ", layout %#x", (unsigned)layout);
    tocl_text_put(&t, " */\n");
    if (tocl_ir_uses_f64(g))
        tocl_text_put(&t, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
    tocl_text_put(&t, "\n");
    for (int k = 0; k < g->n_outputs; k++)
        if (g->output_dtypes[k] == TOCL_BF16) {
            tocl_text_put(&t, "%s", bf16_helper);
            break;
        }
    tocl_render_helpers(&t, g);
    put_signature(&t, g, rank);
    if (rank > 0)
        put_offsets(&t, g, layout);
    else
        tocl_text_put(&t, "    long gid = get_global_id(0);\n    if (gid >= n)\n        return;\n");
    for (int i = 0; i < g->n_nodes; i++)
        put_node(&t, g, i, rank);
    for (int k = 0; k < g->n_outputs; k++)
        put_store(&t, g, k, rank);
    tocl_text_put(&t, "}\n");
    if (t.full)
        return tocl_fail(TOCL_E_INVALID, "tocl_ir_render: buffer of %zu bytes is too small for the kernel text", cap);
    return TOCL_OK;
}

/* Entry points for the other renderers (render_reduce.c); declared in
 * codegen/render_internal.h. They reuse this file's type names, node
 * statements and helpers so every kernel spells a dtype the same way. */
const char *tocl_render_compute_type(tocl_dtype t) { return compute_type(t); }
const char *tocl_render_storage_type(tocl_dtype t) { return storage_type(t); }
const char *tocl_render_scalar_arg_type(tocl_dtype t) { return scalar_arg_type(t); }
const char *tocl_render_bf16_helper(void) { return bf16_helper; }

long tocl_render_nodes(const tocl_ir_graph *g, char *buf, size_t cap) {
    if (!buf || cap == 0)
        return -1;
    buf[0] = 0;
    tocl_text t = {buf, cap, 0, 0};
    for (int i = 0; i < g->n_nodes; i++)
        put_node(&t, g, i, 1);
    return t.full ? -1 : (long)t.len;
}
