/* ir_ops.c - the op table: one row per tocl_ir_op with its name, arity,
 * signature and OpenCL C formula per dtype class. Adding a pointwise op is
 * adding an enum value in include/tocl/ir.h and one row here. */
#include <stddef.h>

#include "fusion/ir_internal.h"

/* "Not available for this dtype class": distinct from NULL, which for the
 * bool column means "same as the integer column". */
#define NA ""

/* Integer arithmetic relies on OpenCL C's usual conversions: char/short
 * operands promote to int and the assignment to the node's variable wraps
 * modulo 2^bits, which is what PyTorch's integer ops do. */
static const tocl_ir_op_info op_table[TOCL_IR_OP_COUNT] = {
    /* op                name      arity sig                 float         integer        bool */
    [TOCL_IR_INPUT]  = {"input",  0, TOCL_IR_SIG_LEAF, NULL, NULL, NULL},
    [TOCL_IR_SCALAR] = {"scalar", 0, TOCL_IR_SIG_LEAF, NULL, NULL, NULL},
    /* CAST's text depends on both dtypes; render.c builds it (cast_expr). */
    [TOCL_IR_CAST]   = {"cast",   1, TOCL_IR_SIG_CAST, NULL, NULL, NULL},
    [TOCL_IR_ADD]    = {"add",    2, TOCL_IR_SIG_SAME, "(%0 + %1)", "(%0 + %1)", NULL},
    /* PyTorch refuses bool subtraction ("use ^ or logical_xor"). */
    [TOCL_IR_SUB]    = {"sub",    2, TOCL_IR_SIG_SAME, "(%0 - %1)", "(%0 - %1)", NA},
    [TOCL_IR_MUL]    = {"mul",    2, TOCL_IR_SIG_SAME, "(%0 * %1)", "(%0 * %1)", NULL},
    /* True division only: integer operands are cast to a floating type by
     * whoever builds the graph, as torch.div does. */
    [TOCL_IR_DIV]    = {"div",    2, TOCL_IR_SIG_SAME, "(%0 / %1)", NA, NA},
    /* PyTorch refuses negation of bool. */
    [TOCL_IR_NEG]    = {"neg",    1, TOCL_IR_SIG_SAME, "(-%0)", "(-%0)", NA},
};

const tocl_ir_op_info *tocl_ir_op_info_get(tocl_ir_op op) {
    if ((int)op < 0 || op >= TOCL_IR_OP_COUNT || !op_table[op].name)
        return NULL;
    return &op_table[op];
}

const char *tocl_ir_op_name(tocl_ir_op op) {
    const tocl_ir_op_info *info = tocl_ir_op_info_get(op);
    return info ? info->name : "invalid";
}

const char *tocl_ir_op_formula(tocl_ir_op op, tocl_dtype cls) {
    const tocl_ir_op_info *info = tocl_ir_op_info_get(op);
    if (!info || (int)cls < 0 || cls >= TOCL_NUM_DTYPES)
        return NULL;
    const char *f;
    if (tocl_dtype_is_float(cls))
        f = info->f_float;
    else if (cls == TOCL_BOOL)
        f = info->f_bool ? info->f_bool : info->f_int;
    else
        f = info->f_int;
    return (f && *f) ? f : NULL;
}
