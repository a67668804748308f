/* segment.h - compiled pointwise segments: a run of pointwise ATen nodes of
 * a torch.compile graph, described once at compile time and launched as ONE
 * elementwise kernel per call.
 *
 * The description is per ATen node, not per IR node: each node names its IR
 * op, the dtype eager computes it in (the TensorIterator's common dtype) and
 * the dtype eager stores its result as. tocl_seg_create turns that into one
 * IR graph with the casts and storage roundings that make every value equal
 * to what strict eager would have written to memory, so results match eager
 * bit for bit while intermediates stay in registers. The graph never holds a
 * size: inputs are broadcast at each call (stride 0), so one segment and one
 * kernel serve every shape of a dynamic graph. */
#ifndef TOCL_SEGMENT_H
#define TOCL_SEGMENT_H

#include "tocl/dtype.h"
#include "tocl/ir.h"
#include "tocl/ops.h"
#include "tocl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a node argument comes from. */
typedef enum tocl_seg_ref_kind {
    TOCL_SEG_REF_NODE = 0, /* an earlier node of the segment */
    TOCL_SEG_REF_INPUT,    /* a tensor input of the segment */
    TOCL_SEG_REF_SCALAR    /* a scalar held by the segment (a number in the ATen graph) */
} tocl_seg_ref_kind;

typedef struct tocl_seg_ref {
    tocl_seg_ref_kind kind;
    int index;
} tocl_seg_ref;

typedef struct tocl_seg_node {
    tocl_ir_op op;
    tocl_dtype common; /* what eager computes in (float16 means: float, rounded as float16 would be) */
    tocl_dtype result; /* what eager stores the result as */
    tocl_seg_ref arg[3];
} tocl_seg_node;

typedef struct tocl_seg_spec {
    int n_inputs;
    const tocl_dtype *input_dtypes; /* storage dtypes of the tensor inputs */
    int n_scalars;
    const tocl_scalar *scalars;       /* values known at compile time (others are given per call)... */
    const tocl_dtype *scalar_dtypes;  /* ...passed as kernel arguments of these dtypes */
    int n_nodes;
    const tocl_seg_node *nodes;
    int n_outputs;
    const int *outputs; /* node indices; each is stored in its node's result dtype */
} tocl_seg_spec;

typedef struct tocl_segment tocl_segment;

/* Build the segment's IR graph. TOCL_E_UNSUPPORTED (with a message) when it
 * does not fit one graph (TOCL_IR_MAX_* limits) or an op has no formula for
 * a dtype: the caller runs those nodes some other way. */
tocl_status tocl_seg_create(const tocl_seg_spec *spec, tocl_segment **out);
void tocl_seg_destroy(tocl_segment *s);

const tocl_ir_graph *tocl_seg_graph(const tocl_segment *s);

/* The iteration shape: the inputs' shapes broadcast (right-aligned, as
 * PyTorch does). Every output has this shape. sizes has TOCL_TENSOR_MAX_DIMS
 * room. */
tocl_status tocl_seg_shape(const tocl_segment *s, const tocl_tensor *inputs, int *ndim, int64_t *sizes);

/* Enqueue the segment's kernel on (dev, stream): inputs in their own shapes
 * (broadcast here), outputs allocated by the caller at the iteration shape.
 * scalars, if not NULL, replaces the segment's scalar values for this call
 * (symbolic sizes of a dynamic graph are known only then). Work recorded by
 * fused eager on the stream runs first; the segment itself is launched at
 * once, never recorded. */
tocl_status tocl_seg_run(const tocl_segment *s, int dev, int stream, const tocl_tensor *inputs,
                         const tocl_scalar *scalars, const tocl_tensor *outputs);
/* The segment's own scalar values (n = its graph's n_scalars). */
const tocl_scalar *tocl_seg_scalars(const tocl_segment *s);

#ifdef __cplusplus
}
#endif
#endif
