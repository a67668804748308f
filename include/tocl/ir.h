/* ir.h - the elementwise expression IR and its OpenCL C renderer.
 *
 * Every pointwise op is a small graph of nodes: leaves load a tensor operand
 * or take a scalar kernel argument; inner nodes apply an op from the op table
 * (runtime/fusion/ir_ops.c) to earlier nodes. Strict eager renders one op per
 * graph; fused eager and torch.compile append many ops to one graph before
 * rendering it. The renderer only produces text; it never calls OpenCL, so
 * it is tested without a device. Kernels are specialised on graph structure,
 * dtypes and iteration rank, never on sizes: sizes, strides and offsets are
 * kernel arguments. */
#ifndef TOCL_IR_H
#define TOCL_IR_H

#include <stddef.h>
#include <stdint.h>

#include "tocl/dtype.h"
#include "tocl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TOCL_IR_MAX_NODES 128
#define TOCL_IR_MAX_INPUTS 16
#define TOCL_IR_MAX_SCALARS 16
#define TOCL_IR_MAX_OUTPUTS 8
#define TOCL_MAX_DIMS 16 /* iteration rank after collapsing dimensions */

/* The op table. Keep TOCL_IR_OP_COUNT last; every op has one row in
 * runtime/fusion/ir_ops.c giving its name, arity and OpenCL C formula. */
typedef enum tocl_ir_op {
    /* leaves */
    TOCL_IR_INPUT = 0, /* arg0: input operand index; loads and converts to compute type */
    TOCL_IR_SCALAR,    /* arg0: scalar argument index */
    /* conversions */
    TOCL_IR_CAST,      /* arg0 converted to node dtype (float->int truncates) */
    /* arithmetic */
    TOCL_IR_ADD,
    TOCL_IR_SUB,
    TOCL_IR_MUL,
    TOCL_IR_DIV,       /* true division; operands are floating */
    TOCL_IR_NEG,
    TOCL_IR_OP_COUNT
} tocl_ir_op;

typedef struct tocl_ir_node {
    tocl_ir_op op;
    tocl_dtype dtype; /* compute dtype of the result (never F16/BF16) */
    int arg[3];       /* node indices, or operand/scalar index for leaves */
} tocl_ir_node;

typedef struct tocl_ir_graph {
    int n_nodes;
    tocl_ir_node nodes[TOCL_IR_MAX_NODES];
    int n_inputs;
    tocl_dtype input_dtypes[TOCL_IR_MAX_INPUTS];   /* storage dtypes */
    int n_scalars;
    tocl_dtype scalar_dtypes[TOCL_IR_MAX_SCALARS]; /* compute dtypes */
    int n_outputs;
    int output_nodes[TOCL_IR_MAX_OUTPUTS];
    tocl_dtype output_dtypes[TOCL_IR_MAX_OUTPUTS]; /* storage dtypes */
    int overflow; /* set when a builder call ran out of room */
} tocl_ir_graph;

/* Builders return the new node's index, or -1 (and set g->overflow) when a
 * table is full or an argument is invalid. */
void tocl_ir_init(tocl_ir_graph *g);
int tocl_ir_input(tocl_ir_graph *g, tocl_dtype storage);
int tocl_ir_scalar(tocl_ir_graph *g, tocl_dtype compute);
int tocl_ir_cast(tocl_ir_graph *g, int a, tocl_dtype to);
/* Apply op; result dtype is `dtype` (the common compute dtype). */
int tocl_ir_unary(tocl_ir_graph *g, tocl_ir_op op, tocl_dtype dtype, int a);
int tocl_ir_binary(tocl_ir_graph *g, tocl_ir_op op, tocl_dtype dtype, int a, int b);
int tocl_ir_ternary(tocl_ir_graph *g, tocl_ir_op op, tocl_dtype dtype, int a, int b, int c);
/* Mark a node as output number n_outputs, stored as `storage`. */
int tocl_ir_output(tocl_ir_graph *g, int node, tocl_dtype storage);

/* Validate arity, argument ranges (arguments precede their node) and dtypes. */
tocl_status tocl_ir_validate(const tocl_ir_graph *g);
/* Structural hash: equal for graphs that render to the same text. */
uint64_t tocl_ir_hash(const tocl_ir_graph *g, int rank);
/* Name of an op ("add"), for messages and golden tests. */
const char *tocl_ir_op_name(tocl_ir_op op);

/* Render the kernel `tocl_ew` into buf. rank 0 renders the contiguous fast
 * path (one linear index for every operand); rank 1..TOCL_MAX_DIMS renders
 * the strided path. The kernel argument order is documented in
 * runtime/fusion/render.c and followed by runtime/ops/elementwise.c.
 * Returns TOCL_E_INVALID if buf is too small or the graph invalid. */
tocl_status tocl_ir_render(const tocl_ir_graph *g, int rank, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
