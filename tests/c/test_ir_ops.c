/* test_ir_ops.c - every row of the op table renders for every dtype class it
 * defines, with no placeholder left in the text, and the OpenCL C compiler
 * accepts it: one kernel per dtype applies every op that dtype supports,
 * so a typo in any formula or helper fails here in a few builds instead of
 * at a user's first call. Values are checked against PyTorch by the
 * Python tests. */
#include <stdio.h>
#include <string.h>

#include "codegen/ir_internal.h"
#include "codegen/ir_special.h"
#include "tocl/device.h"
#include "tocl/program.h"
#include "tocl_test.h"

static char text[1 << 18];

static const tocl_dtype classes[] = {TOCL_BOOL, TOCL_U8, TOCL_I8, TOCL_I16, TOCL_I32, TOCL_I64, TOCL_F32, TOCL_F64};
#define N_CLASSES 8

/* The class an op row is looked up in for a node computing in `dt`. */
static int op_defined(tocl_ir_op op, tocl_dtype dt) {
    const tocl_ir_op_info *info = tocl_ir_op_info_get(op);
    if (!info || info->sig == TOCL_IR_SIG_LEAF || info->sig == TOCL_IR_SIG_CAST)
        return 0;
    return tocl_ir_op_formula(op, dt) != NULL;
}

/* Apply op to the graph's first inputs (and a bool condition for where). */
static int apply_op(tocl_ir_graph *g, tocl_ir_op op, tocl_dtype dt, const int *in, int cond) {
    const tocl_ir_op_info *info = tocl_ir_op_info_get(op);
    if (info->sig == TOCL_IR_SIG_WHERE)
        return tocl_ir_ternary(g, op, dt, cond, in[1], in[2]);
    switch (info->arity) {
    case 1: return tocl_ir_unary(g, op, dt, in[0]);
    case 2: return tocl_ir_binary(g, op, dt, in[0], in[1]);
    default: return tocl_ir_ternary(g, op, dt, in[0], in[1], in[2]);
    }
}

/* Start a graph over three inputs of dt and one bool input. */
static void start(tocl_ir_graph *g, tocl_dtype dt, int *in, int *cond) {
    tocl_ir_init(g);
    for (int k = 0; k < 3; k++)
        in[k] = tocl_ir_input(g, dt);
    *cond = tocl_ir_input(g, TOCL_BOOL);
}

static int no_placeholder_left(const char *s) {
    for (const char *p = s; (p = strchr(p, '%')) != NULL; p++)
        if (p[1] == 'T' || p[1] == 'U' || p[1] == 'F' || (p[1] >= '0' && p[1] <= '9'))
            return 0;
    return 1;
}

/* Render (and build, on a device) the graph; every op node is an output
 * until the output table is full, so the compiler cannot drop them all. */
static void finish(tocl_ir_graph *g, tocl_dtype dt, int dev, int *programs) {
    CHECK(!g->overflow);
    for (int rank = 0; rank <= 2; rank += 2) {
        tocl_status s = tocl_ir_render(g, rank, text, sizeof text);
        CHECK_OK(s);
        if (s != TOCL_OK)
            return;
        CHECK(no_placeholder_left(text));
        if (dev < 0)
            continue;
        if (dt == TOCL_F64) {
            tocl_device_props p;
            CHECK_OK(tocl_device_props_get(dev, &p));
            if (!p.has_fp64)
                continue;
        }
        s = tocl_program_prepare(dev, text, "", "tocl_ew");
        if (s != TOCL_OK)
            fprintf(stderr, "kernel for %s (rank %d) failed to build:\n%s\n%s\n", tocl_dtype_name(dt), rank,
                    tocl_last_error(), text);
        CHECK_OK(s);
        (*programs)++;
    }
}

/* Every op defined for dt, as many per graph as fit. */
static void test_class(tocl_dtype dt, int dev, int *programs, int *covered) {
    tocl_ir_graph g;
    int in[3], cond;
    start(&g, dt, in, &cond);
    int ops_in_graph = 0, special_in_graph = 0;
    for (int op = 0; op < TOCL_IR_OP_COUNT; op++) {
        if (!op_defined((tocl_ir_op)op, dt))
            continue;
        /* A few special functions per kernel: PoCL 3.1's compiler overflowed
         * its stack (deep recursion) on one kernel calling all of them, which
         * no real kernel does (fused eager puts one in a CPU kernel). */
        int special = op >= TOCL_IR_I0 && op <= TOCL_IR_FREXP_EXPONENT;
        if (g.n_nodes + 4 > TOCL_IR_MAX_NODES || (special && special_in_graph == 4)) {
            finish(&g, dt, dev, programs);
            start(&g, dt, in, &cond);
            ops_in_graph = 0;
            special_in_graph = 0;
        }
        special_in_graph += special;
        int node = apply_op(&g, (tocl_ir_op)op, dt, in, cond);
        if (node < 0)
            fprintf(stderr, "op %s refused for %s\n", tocl_ir_op_name((tocl_ir_op)op), tocl_dtype_name(dt));
        CHECK(node >= 0);
        if (node >= 0 && g.n_outputs < TOCL_IR_MAX_OUTPUTS)
            tocl_ir_output(&g, node, g.nodes[node].dtype);
        ops_in_graph++;
        covered[op] = 1;
    }
    if (ops_in_graph)
        finish(&g, dt, dev, programs);
}

/* Helpers are emitted once per (op, class), and only when used. */
static void test_helpers_once(void) {
    tocl_ir_graph g;
    tocl_ir_init(&g);
    int a = tocl_ir_input(&g, TOCL_F32), b = tocl_ir_input(&g, TOCL_I32);
    int x = tocl_ir_binary(&g, TOCL_IR_FLOOR_DIV, TOCL_F32, a, a);
    int y = tocl_ir_binary(&g, TOCL_IR_FLOOR_DIV, TOCL_F32, x, a);
    int z = tocl_ir_binary(&g, TOCL_IR_FLOOR_DIV, TOCL_I32, b, b);
    tocl_ir_output(&g, y, TOCL_F32);
    tocl_ir_output(&g, z, TOCL_I32);
    CHECK_OK(tocl_ir_render(&g, 0, text, sizeof text));
    const char *p = strstr(text, "inline float tocl_fdiv_float(");
    CHECK(p != NULL && strstr(p + 1, "inline float tocl_fdiv_float(") == NULL);
    CHECK(strstr(text, "inline int tocl_fdiv_int(") != NULL);
    CHECK(strstr(text, "0.5f") != NULL); /* float literal suffix */

    tocl_ir_init(&g);
    a = tocl_ir_input(&g, TOCL_F32);
    tocl_ir_output(&g, tocl_ir_binary(&g, TOCL_IR_ADD, TOCL_F32, a, a), TOCL_F32);
    CHECK_OK(tocl_ir_render(&g, 0, text, sizeof text));
    CHECK(strstr(text, "inline") == NULL);

    /* double gets double constants (no f suffix) */
    tocl_ir_init(&g);
    a = tocl_ir_input(&g, TOCL_F64);
    tocl_ir_output(&g, tocl_ir_unary(&g, TOCL_IR_GELU, TOCL_F64, a), TOCL_F64);
    CHECK_OK(tocl_ir_render(&g, 0, text, sizeof text));
    CHECK(strstr(text, "0.70710678118654752440)") != NULL);
}

/* Special functions (ir_special.h) are emitted once per class each, with
 * their callees first, and only those the graph calls. */
static void test_special_functions(void) {
    tocl_ir_graph g;
    tocl_ir_init(&g);
    int a = tocl_ir_input(&g, TOCL_F32), d = tocl_ir_input(&g, TOCL_F64);
    int y = tocl_ir_unary(&g, TOCL_IR_BESSEL_Y0, TOCL_F32, a);
    y = tocl_ir_unary(&g, TOCL_IR_BESSEL_Y0, TOCL_F32, y);
    int z = tocl_ir_unary(&g, TOCL_IR_BESSEL_Y0, TOCL_F64, d);
    tocl_ir_output(&g, y, TOCL_F32);
    tocl_ir_output(&g, z, TOCL_F64);
    CHECK_OK(tocl_ir_render(&g, 0, text, sizeof text));
    CHECK(no_placeholder_left(text));
    const char *j0 = strstr(text, "inline float tocl_sf_bessel_j0_float(");
    const char *y0 = strstr(text, "inline float tocl_sf_bessel_y0_float(");
    CHECK(j0 && y0 && j0 < y0);                                      /* callee first */
    CHECK(strstr(y0 + 1, "inline float tocl_sf_bessel_y0_float(") == NULL); /* once */
    CHECK(strstr(text, "inline double tocl_sf_bessel_y0_double(") != NULL);
    CHECK(strstr(text, "tocl_sf_bessel_j1") == NULL); /* nothing it does not call */

    /* closure: igamma pulls the incomplete-gamma helpers and the Lanczos sum */
    uint64_t c = tocl_sf_closure(TOCL_SF_BIT(IGAMMA));
    CHECK((c & TOCL_SF_BIT(LANCZOS)) && (c & TOCL_SF_BIT(RATEVL)) && (c & TOCL_SF_BIT(IGAMMAC)));
    CHECK(!(c & TOCL_SF_BIT(ZETA)));
    for (int k = 0; k < TOCL_SF_COUNT; k++) {
        CHECK(tocl_sf_table[k].name && tocl_sf_table[k].text);
        CHECK((tocl_sf_table[k].needs >> k) == 0); /* callees precede their callers */
    }
}

/* Ops refuse the dtype classes PyTorch refuses, so a graph can never ask
 * for e.g. a bitwise op on floats. */
static void test_refusals(void) {
    tocl_ir_graph g;
    tocl_ir_init(&g);
    int f = tocl_ir_input(&g, TOCL_F32);
    CHECK(tocl_ir_binary(&g, TOCL_IR_BITWISE_AND, TOCL_F32, f, f) < 0);
    tocl_ir_init(&g);
    int b = tocl_ir_input(&g, TOCL_BOOL);
    CHECK(tocl_ir_binary(&g, TOCL_IR_POW, TOCL_BOOL, b, b) < 0);
    tocl_ir_init(&g);
    int i = tocl_ir_input(&g, TOCL_I32);
    CHECK(tocl_ir_unary(&g, TOCL_IR_SQRT, TOCL_I32, i) < 0);
    CHECK(strcmp(tocl_ir_op_name(TOCL_IR_ERFINV), "erfinv") == 0);
}

int main(void) {
    int dev = tocl_device_count() > 0 ? 0 : -1;
    if (dev < 0)
        printf("no OpenCL device: rendering only\n");
    int programs = 0, covered[TOCL_IR_OP_COUNT] = {0};
    for (int c = 0; c < N_CLASSES; c++)
        test_class(classes[c], dev, &programs, covered);
    for (int op = 0; op < TOCL_IR_OP_COUNT; op++) {
        const tocl_ir_op_info *info = tocl_ir_op_info_get((tocl_ir_op)op);
        CHECK(info != NULL);
        int needs = info && info->sig != TOCL_IR_SIG_LEAF && info->sig != TOCL_IR_SIG_CAST;
        if (needs && !covered[op])
            fprintf(stderr, "op %s has no dtype class\n", tocl_ir_op_name((tocl_ir_op)op));
        CHECK(!needs || covered[op]);
    }
    test_helpers_once();
    test_special_functions();
    test_refusals();
    printf("op table: %d ops, %d programs built\n", (int)TOCL_IR_OP_COUNT, programs);
    TOCL_TEST_END();
}
