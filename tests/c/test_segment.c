/* test_segment.c - building compiled pointwise segments without a device:
 * storage rounding of float16 intermediates, refusals (too big, no formula)
 * as TOCL_E_UNSUPPORTED, bad references as TOCL_E_INVALID, broadcasting of
 * the iteration shape. Values are checked against eager by the Python
 * tests (test_compile_segments.py). */
#include <string.h>

#include "tocl/segment.h"
#include "tocl_test.h"

#define IN(k) {TOCL_SEG_REF_INPUT, (k)}
#define SC(k) {TOCL_SEG_REF_SCALAR, (k)}
#define ND(k) {TOCL_SEG_REF_NODE, (k)}

static int count_op(const tocl_ir_graph *g, tocl_ir_op op) {
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++)
        n += g->nodes[i].op == op;
    return n;
}

static tocl_tensor shaped(int ndim, const int64_t *sizes) {
    tocl_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = TOCL_F32;
    t.ndim = ndim;
    t.data = 4096; /* only checked to be non-null here */
    for (int d = 0; d < ndim; d++)
        t.sizes[d] = sizes[d];
    return t;
}

int main(void) {
    tocl_dtype in_f16[1] = {TOCL_F16};
    tocl_scalar two = {1, 2.0, 2};
    tocl_dtype sc_f32[1] = {TOCL_F32};
    int out1[1] = {1};

    /* x * 2 + x in float16: the product is rounded to float16 before the
     * add reads it (eager stores it as float16), the sum only by its store. */
    tocl_seg_node chain[2] = {{TOCL_IR_MUL, TOCL_F16, TOCL_F16, {IN(0), SC(0)}},
                              {TOCL_IR_ADD, TOCL_F16, TOCL_F16, {ND(0), IN(0)}}};
    tocl_seg_spec sp = {1, in_f16, 1, &two, sc_f32, 2, chain, 1, out1};
    tocl_segment *s = NULL;
    CHECK_OK(tocl_seg_create(&sp, &s));
    const tocl_ir_graph *g = tocl_seg_graph(s);
    CHECK(g->n_inputs == 1 && g->n_scalars == 1 && g->n_outputs == 1);
    CHECK(g->input_dtypes[0] == TOCL_F16 && g->output_dtypes[0] == TOCL_F16);
    CHECK(count_op(g, TOCL_IR_ROUND_F16) == 1);

    /* Broadcast shape of [4, 1] and [8]: [4, 8]; [3] and [8] do not broadcast. */
    int64_t a[2] = {4, 1}, b[1] = {8}, c[1] = {3}, sizes[TOCL_TENSOR_MAX_DIMS];
    tocl_tensor ins[1] = {shaped(2, a)};
    int nd = -1;
    CHECK_OK(tocl_seg_shape(s, ins, &nd, sizes));
    CHECK(nd == 2 && sizes[0] == 4 && sizes[1] == 1);
    tocl_seg_destroy(s);

    tocl_dtype in2[2] = {TOCL_F32, TOCL_F32};
    tocl_seg_node add2[1] = {{TOCL_IR_ADD, TOCL_F32, TOCL_F32, {IN(0), IN(1)}}};
    int out0[1] = {0};
    tocl_seg_spec sp2 = {2, in2, 0, NULL, NULL, 1, add2, 1, out0};
    CHECK_OK(tocl_seg_create(&sp2, &s));
    tocl_tensor pair[2] = {shaped(2, a), shaped(1, b)};
    CHECK_OK(tocl_seg_shape(s, pair, &nd, sizes));
    CHECK(nd == 2 && sizes[0] == 4 && sizes[1] == 8);
    pair[1] = shaped(1, c);
    pair[0] = shaped(1, b);
    CHECK_STATUS(tocl_seg_shape(s, pair, &nd, sizes), TOCL_E_INVALID);
    tocl_seg_destroy(s);

    /* Refusals: division of integers has no formula; 129 nodes do not fit. */
    tocl_dtype in_i32[1] = {TOCL_I32};
    tocl_seg_node idiv[1] = {{TOCL_IR_DIV, TOCL_I32, TOCL_I32, {IN(0), IN(0)}}};
    tocl_seg_spec sp3 = {1, in_i32, 0, NULL, NULL, 1, idiv, 1, out0};
    CHECK_STATUS(tocl_seg_create(&sp3, &s), TOCL_E_UNSUPPORTED);
    static tocl_seg_node many[TOCL_IR_MAX_NODES];
    many[0] = (tocl_seg_node){TOCL_IR_NEG, TOCL_F32, TOCL_F32, {IN(0)}};
    for (int i = 1; i < TOCL_IR_MAX_NODES; i++)
        many[i] = (tocl_seg_node){TOCL_IR_NEG, TOCL_F32, TOCL_F32, {ND(i - 1)}};
    int last[1] = {TOCL_IR_MAX_NODES - 1};
    tocl_seg_spec sp4 = {1, in2, 0, NULL, NULL, TOCL_IR_MAX_NODES, many, 1, last};
    CHECK_STATUS(tocl_seg_create(&sp4, &s), TOCL_E_UNSUPPORTED);

    /* A reference to a later node, or past the inputs, is the caller's bug. */
    tocl_seg_node fwd[1] = {{TOCL_IR_NEG, TOCL_F32, TOCL_F32, {ND(0)}}};
    tocl_seg_spec sp5 = {1, in2, 0, NULL, NULL, 1, fwd, 1, out0};
    CHECK_STATUS(tocl_seg_create(&sp5, &s), TOCL_E_INVALID);
    tocl_seg_node past[1] = {{TOCL_IR_NEG, TOCL_F32, TOCL_F32, {IN(3)}}};
    sp5.nodes = past;
    CHECK_STATUS(tocl_seg_create(&sp5, &s), TOCL_E_INVALID);
    TOCL_TEST_END();
}
