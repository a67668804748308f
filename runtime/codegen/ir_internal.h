/* ir_internal.h - the op table's row type and IR helpers shared by fusion/ and ops/. */
#ifndef TOCL_IR_INTERNAL_H
#define TOCL_IR_INTERNAL_H

#include <stdint.h>

#include "tocl/ir.h"

/* How an op's arguments and result dtypes relate; validation and the
 * builders' automatic casts follow it. */
typedef enum tocl_ir_sig {
    TOCL_IR_SIG_LEAF = 0, /* INPUT / SCALAR: arg0 is an operand index */
    TOCL_IR_SIG_CAST,     /* one argument of any dtype */
    TOCL_IR_SIG_SAME,     /* every argument has the node's dtype */
    TOCL_IR_SIG_CMP,      /* arguments share one dtype; the result is BOOL */
    TOCL_IR_SIG_WHERE     /* arg0 is BOOL; arg1 and arg2 have the node's dtype */
} tocl_ir_sig;

/* Formula templates are OpenCL C with %0 %1 %2 standing for the arguments'
 * expressions (variable names), %T for the OpenCL C type of the class being
 * computed in (float, double, int, ...), %U for its unsigned counterpart
 * (integers only) and %F for the literal suffix of that type ("f" for
 * float, "" for double), so one float formula serves float and double with
 * constants at full precision: 0.5%F. A helper template (h_float / h_int)
 * holds functions the formula calls, named with %T so that each dtype gets
 * its own copy; the renderer emits it once per (op, dtype) before the
 * kernel. The column is chosen by the dtype class of
 * the node (of its arguments for TOCL_IR_SIG_CMP): floating (float and
 * double share one column because OpenCL C math builtins are overloaded),
 * integer, bool. NULL means the op is not defined for that class; a NULL
 * bool column falls back to the integer one, because OpenCL's bool converts
 * any integer result to 0/1 on assignment (so add is "or", mul is "and"). */
typedef struct tocl_ir_op_info {
    const char *name;
    int arity;
    tocl_ir_sig sig;
    const char *f_float;
    const char *f_int;
    const char *f_bool;
    const char *h_float; /* helper functions for the float column, or NULL */
    const char *h_int;   /* helper functions for the integer (and bool) column, or NULL */
    uint64_t sf;         /* special functions the float formula calls (ir_special.h), or 0 */
} tocl_ir_op_info;

/* The helper template op needs in dtype `cls` (NULL if none). */
const char *tocl_ir_op_helper(tocl_ir_op op, tocl_dtype cls);

/* Row of op, or NULL if op is out of range. */
const tocl_ir_op_info *tocl_ir_op_info_get(tocl_ir_op op);
/* The formula for op applied in dtype `cls` (NULL if undefined). */
const char *tocl_ir_op_formula(tocl_ir_op op, tocl_dtype cls);

/* Append a node as given, without the builders' checks or casts (the
 * caller validates the graph); -1 and g->overflow set when it is full.
 * Fused eager copies recorded nodes into merged graphs with it. */
int tocl_ir_add_node(tocl_ir_graph *g, tocl_ir_op op, tocl_dtype dtype, int a0, int a1, int a2);
/* Append a copy of node n of another graph (not INPUT or SCALAR) whose
 * arguments are map[n->arg[k]]: how fused eager moves nodes between graphs. */
int tocl_ir_add_mapped(tocl_ir_graph *g, const tocl_ir_node *n, const int *map);

/* An elementwise kernel's layout: its rank (0 = contiguous) and, for
 * operands 0..11 (outputs first), whether the innermost stride is 1 (unit)
 * or 0 (zero): the kernel then indexes that operand without the stride, so
 * a CPU compiler sees contiguous or invariant loads and vectorises them
 * (strides are still passed; the kernel ignores them). */
#define TOCL_EW_LAYOUT_OPS 12
#define TOCL_EW_LAYOUT(rank, unit, zero) ((rank) | ((unit) << 4) | ((zero) << 16))
#define TOCL_EW_LAYOUT_RANK(l) ((l) & 15)
#define TOCL_EW_LAYOUT_UNIT(l, k) ((k) < TOCL_EW_LAYOUT_OPS && (((l) >> (4 + (k))) & 1))
#define TOCL_EW_LAYOUT_ZERO(l, k) ((k) < TOCL_EW_LAYOUT_OPS && (((l) >> (16 + (k))) & 1))
tocl_status tocl_ir_render_layout(const tocl_ir_graph *g, int layout, char *buf, size_t cap);

/* Exact structural equality (only the fields that rendering reads). */
int tocl_ir_equal(const tocl_ir_graph *a, const tocl_ir_graph *b);
/* 1 if any node, operand or scalar of g uses float64. */
int tocl_ir_uses_f64(const tocl_ir_graph *g);

#endif
