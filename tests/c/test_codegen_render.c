/* test_codegen_render.c - IR builders, validation, hashing and golden OpenCL C text
 * of the renderer; needs no OpenCL device. TOCL_UPDATE_GOLDEN=1 rewrites the
 * golden files in tests/c/golden/ instead of comparing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tocl_test.h"
#include "tocl/ir.h"
#include "tocl/reduce.h"
#include "codegen/ir_internal.h"

static char text[1 << 16];

/* tests/c/golden/, found next to this file (CMake compiles it by absolute path). */
static void golden_path(char *out, size_t cap, const char *name) {
    const char *file = __FILE__;
    const char *slash = strrchr(file, '/');
    int dir_len = slash ? (int)(slash - file) : 1;
    snprintf(out, cap, "%.*s/golden/%s.cl", dir_len, slash ? file : ".", name);
}

static void check_golden(const char *name, const tocl_ir_graph *g, int rank) {
    CHECK_OK(tocl_ir_render(g, rank, text, sizeof text));
    char path[4096];
    golden_path(path, sizeof path, name);
    if (getenv("TOCL_UPDATE_GOLDEN") && !strcmp(getenv("TOCL_UPDATE_GOLDEN"), "1")) {
        FILE *f = fopen(path, "wb");
        CHECK(f != NULL);
        if (f) {
            fputs(text, f);
            fclose(f);
            printf("updated %s\n", path);
        }
        return;
    }
    static char want[1 << 16];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(want, 1, sizeof want - 1, f) : 0;
    if (f)
        fclose(f);
    want[n] = 0;
    int same = f && !strcmp(want, text);
    if (!same)
        fprintf(stderr, "golden mismatch for %s (%s); rendered:\n%s\n(rerun with TOCL_UPDATE_GOLDEN=1 if the "
                "change is intended)\n", name, path, text);
    CHECK(same);
}

static void build_binary(tocl_ir_graph *g, tocl_ir_op op, tocl_dtype in, tocl_dtype compute) {
    tocl_ir_init(g);
    int a = tocl_ir_input(g, in);
    int b = tocl_ir_input(g, in);
    int c = tocl_ir_binary(g, op, compute, a, b);
    tocl_ir_output(g, c, in);
}

static void test_goldens(void) {
    tocl_ir_graph g;
    build_binary(&g, TOCL_IR_ADD, TOCL_F32, TOCL_F32);
    check_golden("add_f32_contiguous", &g, 0);

    build_binary(&g, TOCL_IR_MUL, TOCL_I32, TOCL_I32);
    check_golden("mul_i32_strided_rank2", &g, 2);

    tocl_ir_init(&g);
    tocl_ir_output(&g, tocl_ir_cast(&g, tocl_ir_input(&g, TOCL_F16), TOCL_F32), TOCL_F32);
    check_golden("cast_f16_f32", &g, 0);

    /* torch.add(a, b, alpha=s) in bfloat16: a + s * b computed in float. */
    tocl_ir_init(&g);
    int a = tocl_ir_input(&g, TOCL_BF16), b = tocl_ir_input(&g, TOCL_BF16);
    int s = tocl_ir_scalar(&g, TOCL_F32);
    int sb = tocl_ir_binary(&g, TOCL_IR_MUL, TOCL_F32, s, b);
    tocl_ir_output(&g, tocl_ir_binary(&g, TOCL_IR_ADD, TOCL_F32, a, sb), TOCL_BF16);
    check_golden("add_alpha_bf16", &g, 0);

    build_binary(&g, TOCL_IR_DIV, TOCL_F64, TOCL_F64);
    check_golden("div_f64", &g, 0);

    /* Mixed dtypes: the builders insert casts; float -> int truncates; bool out. */
    tocl_ir_init(&g);
    a = tocl_ir_input(&g, TOCL_I8);
    b = tocl_ir_input(&g, TOCL_F32);
    int sc = tocl_ir_scalar(&g, TOCL_BOOL);
    int sum = tocl_ir_binary(&g, TOCL_IR_ADD, TOCL_I16, a, b);
    tocl_ir_output(&g, tocl_ir_binary(&g, TOCL_IR_MUL, TOCL_BOOL, sum, sc), TOCL_BOOL);
    check_golden("mixed_casts_bool_rank1", &g, 1);

    /* Rank 3: the outer dims are peeled by div/mod. */
    tocl_ir_init(&g);
    tocl_ir_output(&g, tocl_ir_unary(&g, TOCL_IR_NEG, TOCL_F32, tocl_ir_input(&g, TOCL_F16)), TOCL_F16);
    check_golden("neg_f16_strided_rank3", &g, 3);
}

static void test_builders(void) {
    tocl_ir_graph g;
    tocl_ir_init(&g);
    int a = tocl_ir_input(&g, TOCL_F16);
    CHECK(a == 0 && g.nodes[0].dtype == TOCL_F32 && g.input_dtypes[0] == TOCL_F16);
    int s = tocl_ir_scalar(&g, TOCL_I64);
    CHECK(s == 1 && g.n_scalars == 1 && g.scalar_dtypes[0] == TOCL_I64);
    /* Cast to the node's own dtype is the node itself. */
    CHECK(tocl_ir_cast(&g, a, TOCL_F32) == a);
    CHECK(tocl_ir_cast(&g, a, TOCL_F16) == a);
    int c = tocl_ir_binary(&g, TOCL_IR_ADD, TOCL_F32, a, s); /* inserts cast of s */
    CHECK(c == 3 && g.nodes[2].op == TOCL_IR_CAST && g.nodes[2].arg[0] == s);
    CHECK(tocl_ir_output(&g, c, TOCL_I32) == 0); /* inserts cast to int */
    CHECK(g.nodes[g.output_nodes[0]].dtype == TOCL_I32);
    CHECK_OK(tocl_ir_validate(&g));
    CHECK(!strcmp(tocl_ir_op_name(TOCL_IR_ADD), "add"));
    CHECK(!strcmp(tocl_ir_op_name(TOCL_IR_OP_COUNT), "invalid"));
    for (int op = 0; op < TOCL_IR_OP_COUNT; op++)
        CHECK(tocl_ir_op_info_get((tocl_ir_op)op) != NULL);

    /* Ops undefined for a dtype are refused by the builder. */
    tocl_ir_init(&g);
    a = tocl_ir_input(&g, TOCL_I32);
    CHECK(tocl_ir_binary(&g, TOCL_IR_DIV, TOCL_I32, a, a) == -1 && g.overflow);
    CHECK(g.n_nodes == 1); /* no stray casts */
    CHECK_STATUS(tocl_ir_validate(&g), TOCL_E_INVALID);
    tocl_ir_init(&g);
    a = tocl_ir_input(&g, TOCL_BOOL);
    CHECK(tocl_ir_binary(&g, TOCL_IR_SUB, TOCL_BOOL, a, a) == -1);
    tocl_ir_init(&g);
    CHECK(tocl_ir_binary(&g, TOCL_IR_ADD, TOCL_F32, 0, 1) == -1);      /* no such nodes */
    tocl_ir_init(&g);
    a = tocl_ir_input(&g, TOCL_F32);
    CHECK(tocl_ir_unary(&g, TOCL_IR_ADD, TOCL_F32, a) == -1);          /* wrong arity */
    CHECK(tocl_ir_input(&g, (tocl_dtype)99) == -1);
    /* Table full. */
    tocl_ir_init(&g);
    for (int i = 0; i < TOCL_IR_MAX_INPUTS; i++)
        tocl_ir_input(&g, TOCL_F32);
    CHECK(!g.overflow && tocl_ir_input(&g, TOCL_F32) == -1 && g.overflow);
    tocl_ir_init(&g);
    a = tocl_ir_input(&g, TOCL_F32);
    for (int i = 1; i < TOCL_IR_MAX_NODES; i++)
        a = tocl_ir_unary(&g, TOCL_IR_NEG, TOCL_F32, a);
    CHECK(!g.overflow && tocl_ir_unary(&g, TOCL_IR_NEG, TOCL_F32, a) == -1);
}

static void test_validate(void) {
    tocl_ir_graph g, bad;
    build_binary(&g, TOCL_IR_ADD, TOCL_F32, TOCL_F32);
    CHECK_OK(tocl_ir_validate(&g));
    CHECK_STATUS(tocl_ir_validate(NULL), TOCL_E_INVALID);
    tocl_ir_init(&bad);
    CHECK_STATUS(tocl_ir_validate(&bad), TOCL_E_INVALID); /* empty */
    bad = g;
    bad.n_outputs = 0;
    CHECK_STATUS(tocl_ir_validate(&bad), TOCL_E_INVALID);
    bad = g;
    bad.nodes[2].arg[1] = 2; /* refers to itself */
    CHECK_STATUS(tocl_ir_validate(&bad), TOCL_E_INVALID);
    CHECK(strstr(tocl_last_error(), "precede") != NULL);
    bad = g;
    bad.nodes[1].dtype = TOCL_I32; /* input 1 is float32 */
    CHECK_STATUS(tocl_ir_validate(&bad), TOCL_E_INVALID);
    bad = g;
    bad.nodes[2].dtype = TOCL_F16; /* not a compute dtype */
    CHECK_STATUS(tocl_ir_validate(&bad), TOCL_E_INVALID);
    bad = g;
    bad.nodes[0].arg[0] = 5; /* input index out of range */
    CHECK_STATUS(tocl_ir_validate(&bad), TOCL_E_INVALID);
    bad = g;
    bad.nodes[2].op = TOCL_IR_OP_COUNT;
    CHECK_STATUS(tocl_ir_validate(&bad), TOCL_E_INVALID);
    bad = g;
    bad.output_dtypes[0] = TOCL_I64; /* node is float32 */
    CHECK_STATUS(tocl_ir_validate(&bad), TOCL_E_INVALID);
    CHECK(strstr(tocl_last_error(), "insert a cast") != NULL);
    bad = g;
    bad.output_nodes[0] = 7;
    CHECK_STATUS(tocl_ir_validate(&bad), TOCL_E_INVALID);
    /* Integer division written by hand is refused too. */
    build_binary(&bad, TOCL_IR_ADD, TOCL_I32, TOCL_I32);
    bad.nodes[2].op = TOCL_IR_DIV;
    CHECK_STATUS(tocl_ir_validate(&bad), TOCL_E_INVALID);
    /* The renderer validates as well. */
    CHECK_STATUS(tocl_ir_render(&bad, 0, text, sizeof text), TOCL_E_INVALID);
    CHECK_STATUS(tocl_ir_render(&g, TOCL_MAX_DIMS + 1, text, sizeof text), TOCL_E_INVALID);
    CHECK_STATUS(tocl_ir_render(&g, 0, text, 40), TOCL_E_INVALID); /* too small */
    CHECK_OK(tocl_ir_render(&g, TOCL_MAX_DIMS, text, sizeof text));
}

static void test_hash(void) {
    tocl_ir_graph a, b;
    build_binary(&a, TOCL_IR_ADD, TOCL_F32, TOCL_F32);
    build_binary(&b, TOCL_IR_ADD, TOCL_F32, TOCL_F32);
    b.nodes[0].arg[2] = 12345; /* unused slot: must not matter */
    CHECK(tocl_ir_hash(&a, 0) == tocl_ir_hash(&b, 0));
    CHECK(tocl_ir_equal(&a, &b));
    CHECK(tocl_ir_hash(&a, 0) != tocl_ir_hash(&a, 1)); /* rank is part of the key */
    CHECK(tocl_ir_hash(&a, 1) != tocl_ir_hash(&a, 2));
    build_binary(&b, TOCL_IR_SUB, TOCL_F32, TOCL_F32);
    CHECK(tocl_ir_hash(&a, 0) != tocl_ir_hash(&b, 0) && !tocl_ir_equal(&a, &b));
    build_binary(&b, TOCL_IR_ADD, TOCL_F64, TOCL_F64);
    CHECK(tocl_ir_hash(&a, 0) != tocl_ir_hash(&b, 0) && !tocl_ir_equal(&a, &b));
    build_binary(&b, TOCL_IR_ADD, TOCL_F32, TOCL_F32);
    b.nodes[2].arg[1] = 0; /* a + a */
    CHECK(tocl_ir_hash(&a, 0) != tocl_ir_hash(&b, 0) && !tocl_ir_equal(&a, &b));
    build_binary(&b, TOCL_IR_ADD, TOCL_F32, TOCL_F32);
    b.output_dtypes[0] = TOCL_F16; /* same nodes, different storage */
    CHECK(tocl_ir_hash(&a, 0) != tocl_ir_hash(&b, 0) && !tocl_ir_equal(&a, &b));
}

/* Layout specialisation: an operand whose innermost stride is 1 (or 0) is
 * indexed without it; the others keep their stride. */
static void test_layout(void) {
    tocl_ir_graph g;
    build_binary(&g, TOCL_IR_ADD, TOCL_F32, TOCL_F32);
    /* operands: o0 unit, i0 unit, i1 zero (a broadcast row) */
    CHECK_OK(tocl_ir_render_layout(&g, TOCL_EW_LAYOUT(2, 0x3, 0x4), text, sizeof text));
    CHECK(strstr(text, "long x_o0 = o0_off + c1;") != NULL);
    CHECK(strstr(text, "long x_i0 = i0_off + c1;") != NULL);
    CHECK(strstr(text, "long x_i1 = i1_off;") != NULL);
    CHECK(strstr(text, "x_i1 += r * i1_st0;") != NULL);
    CHECK_OK(tocl_ir_render_layout(&g, TOCL_EW_LAYOUT(2, 0x1, 0), text, sizeof text));
    CHECK(strstr(text, "long x_i0 = i0_off + c1 * i0_st1;") != NULL);
    CHECK_OK(tocl_ir_render_layout(&g, TOCL_EW_LAYOUT(1, 0x2, 0), text, sizeof text));
    CHECK(strstr(text, "long x_i0 = i0_off + gid;") != NULL);
    CHECK(strstr(text, "long x_o0 = o0_off + gid * o0_st0;") != NULL);
}

/* Text that no OpenCL C compiler accepts, whatever the device: an empty
 * condition or operand list ("if ()", "( &&", "&& )", ", )") or unbalanced
 * brackets. NULL if none; else where it starts. */
static const char *malformed(const char *s) {
    int depth[3] = {0, 0, 0};
    for (const char *p = s; *p; p++) {
        const char *q = p + 1;
        while (*q == ' ' || *q == '\n')
            q++;
        if (*p == '(' && *q == ')' && ((p - s >= 3 && !strncmp(p - 3, "if ", 3)) ||
                                       (p - s >= 6 && !strncmp(p - 6, "while ", 6))))
            return p;
        if (*p == '(' && (!strncmp(q, "&&", 2) || !strncmp(q, "||", 2) || *q == ','))
            return p;
        if (!strncmp(p, "&&", 2) || !strncmp(p, "||", 2)) {
            const char *r = p + 2;
            while (*r == ' ' || *r == '\n')
                r++;
            if (*r == ')')
                return p;
        }
        if (*p == ',' && *q == ')')
            return p;
        int k = *p == '(' || *p == ')' ? 0 : *p == '[' || *p == ']' ? 1 : *p == '{' || *p == '}' ? 2 : -1;
        if (k >= 0 && (depth[k] += (*p == '(' || *p == '[' || *p == '{') ? 1 : -1) < 0)
            return p;
    }
    return depth[0] || depth[1] || depth[2] ? s : NULL;
}

/* Reductions over prologues of 0, 1 and 2 inputs, every kind, kept rank
 * 0-2 and reduced rank 1-2. Fused eager makes a zero-input prologue from a
 * recorded fill (torch.ones(3, device="ocl").sum()): its lane-sum test once
 * rendered as "if () {", which the driver refused on every process. */
static char red_text[1 << 18];
static void test_reduce_prologue_inputs(void) {
    static const tocl_dtype od[2] = {TOCL_F32, TOCL_I64};
    int rendered = 0, cols = 0;
    for (int nin = 0; nin <= 2; nin++) {
        tocl_ir_graph g;
        tocl_ir_init(&g);
        int v = tocl_ir_scalar(&g, TOCL_F32); /* the fill value */
        for (int k = 0; k < nin; k++)
            v = tocl_ir_binary(&g, TOCL_IR_ADD, TOCL_F32, v, tocl_ir_input(&g, TOCL_F32));
        tocl_ir_output(&g, v, TOCL_F32);
        for (int kind = 0; kind < TOCL_REDUCE_KIND_COUNT; kind++)
            for (int kr = 0; kr <= 2; kr++)
                for (int rr = 1; rr <= 2; rr++) {
                    int arg = kind == TOCL_REDUCE_ARGMAX || kind == TOCL_REDUCE_ARGMIN;
                    tocl_reduce_desc d = {(tocl_reduce_kind)kind,
                                          kind == TOCL_REDUCE_ANY || kind == TOCL_REDUCE_ALL ? TOCL_BOOL : TOCL_F32,
                                          TOCL_REDUCE_MAP_NONE, TOCL_REDUCE_FINAL_NONE, 0, 0, &g, 0};
                    CHECK_OK(tocl_reduce_render(&d, &g, arg ? 2 : 1, od, kr, rr, red_text, sizeof red_text));
                    const char *bad = malformed(red_text);
                    if (bad)
                        fprintf(stderr, "malformed reduction text (kind %d, %d inputs, kr %d, rr %d) at: %.60s\n",
                                kind, nin, kr, rr, bad);
                    CHECK(bad == NULL);
                    rendered++;
                    /* the column kernel, where the kind has one */
                    int ok = tocl_reduce_col_ok(&d, &g, kr);
                    CHECK(ok == (nin >= 1 && kr >= 1 && kind != TOCL_REDUCE_ANY && kind != TOCL_REDUCE_ALL));
                    for (int W = 8; ok && W <= 16; W += 8) {
                        CHECK_OK(tocl_reduce_render_col(&d, &g, arg ? 2 : 1, od, kr, rr, W, red_text, sizeof red_text));
                        bad = malformed(red_text);
                        if (bad)
                            fprintf(stderr, "malformed column text (kind %d, %d inputs, kr %d, rr %d) at: %.60s\n",
                                    kind, nin, kr, rr, bad);
                        CHECK(bad == NULL);
                        CHECK(strstr(red_text, "__kernel void tocl_redc(") != NULL);
                        cols++;
                    }
                    if (!ok)
                        CHECK_STATUS(tocl_reduce_render_col(&d, &g, 1, od, kr, rr, 16, red_text, sizeof red_text),
                                     TOCL_E_INVALID);
                }
    }
    CHECK(rendered == 3 * TOCL_REDUCE_KIND_COUNT * 6);
    CHECK(cols == 2 * (TOCL_REDUCE_KIND_COUNT - 2) * 2 * 2 * 2); /* inputs 1-2, kinds but any/all, kr 1-2, rr 1-2, 8 and 16 lanes */
    /* The checker itself catches what it is for. */
    CHECK(malformed("    if () {\n    }") != NULL);
    CHECK(malformed("if (a && ) x;") != NULL);
    CHECK(malformed("f(a, );") != NULL);
    CHECK(malformed("{ (a) ") != NULL);
    CHECK(malformed("if (1) { f(a, b); }") == NULL);
}

int main(void) {
    test_reduce_prologue_inputs();
    test_builders();
    test_layout();
    test_validate();
    test_hash();
    test_goldens();
    TOCL_TEST_END();
}
