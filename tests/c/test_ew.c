/* test_ew.c - tocl_ew_run on a device: arithmetic for every dtype against a
 * host reference, mixed dtypes, broadcasting, strided and offset views, 0-dim
 * and empty tensors, ranks 1..6, dimension collapsing and the kernel cache. */
#include "test_ew_util.h"

/* Reference of op applied in compute dtype c to values a, b. */
static double ref_binop(tocl_ir_op op, tocl_dtype c, double a, double b) {
    if (c == TOCL_F32) {
        float x = (float)a, y = (float)b;
        return op == TOCL_IR_ADD ? x + y : op == TOCL_IR_SUB ? x - y : op == TOCL_IR_MUL ? x * y : x / y;
    }
    if (c == TOCL_F64)
        return op == TOCL_IR_ADD ? a + b : op == TOCL_IR_SUB ? a - b : op == TOCL_IR_MUL ? a * b : a / b;
    if (c == TOCL_BOOL)
        return op == TOCL_IR_ADD ? (a != 0 || b != 0) : (a != 0 && b != 0);
    int64_t x = (int64_t)a, y = (int64_t)b;
    return (double)wrap_int(c, op == TOCL_IR_ADD ? x + y : op == TOCL_IR_SUB ? x - y : x * y);
}

/* out = op(a, b) over a shape, every operand with its own strides/offset.
 * Computes in `compute`, checks every element against the reference. */
typedef struct {
    int ndim;
    int64_t sizes[TOCL_TENSOR_MAX_DIMS];
    int64_t st[3][TOCL_TENSOR_MAX_DIMS]; /* out, a, b */
    int64_t pad[3];                      /* elements before element 0 */
} layout;

static int64_t span(const layout *L, int k) { /* elements reachable + 1 */
    int64_t last = 0;
    for (int d = 0; d < L->ndim; d++)
        last += (L->sizes[d] - 1) * L->st[k][d];
    return last + 1;
}

static int run_binary(tocl_ir_op op, tocl_dtype ta, tocl_dtype tb, tocl_dtype compute, tocl_dtype tout,
                      const layout *L, uint32_t seed) {
    tocl_ir_graph g;
    tocl_ir_init(&g);
    int a = tocl_ir_input(&g, ta), b = tocl_ir_input(&g, tb);
    tocl_ir_output(&g, tocl_ir_binary(&g, op, compute, a, b), tout);
    dev_tensor d[3];
    tocl_dtype types[3] = {tout, ta, tb};
    int64_t numel = 1;
    for (int i = 0; i < L->ndim; i++)
        numel *= L->sizes[i];
    for (int k = 0; k < 3; k++) {
        int64_t n = numel ? span(L, k) : 0;
        if (!dt_make(&d[k], 0, types[k], L->ndim, L->sizes, L->st[k], n, L->pad[k]))
            return 0;
        for (int64_t i = 0; i < n; i++) /* every reachable element, output too */
            host_set(types[k], dt_elems(&d[k]), i, gen_value(types[k], &seed, k == 2 && op == TOCL_IR_DIV));
        dt_upload(&d[k], 0);
    }
    tocl_tensor ins[2] = {d[1].t, d[2].t};
    tocl_status s = tocl_ew_run(0, 0, &g, &d[0].t, ins, NULL);
    CHECK_OK(s);
    dt_download(&d[0], 0);
    int bad = 0;
    for (int64_t i = 0; i < numel && s == TOCL_OK; i++) {
        double x = host_get(ta, dt_elems(&d[1]), dt_index(&d[1].t, i));
        double y = host_get(tb, dt_elems(&d[2]), dt_index(&d[2].t, i));
        double want = ref_convert(tout, ref_binop(op, compute, ref_convert(compute, x), ref_convert(compute, y)));
        double got = host_get(tout, dt_elems(&d[0]), dt_index(&d[0].t, i));
        if (!same_value(want, got) && bad++ < 3)
            fprintf(stderr, "  %s(%s, %s) in %s -> %s, element %lld: %.17g op %.17g: got %.17g want %.17g\n",
                    tocl_ir_op_name(op), tocl_dtype_name(ta), tocl_dtype_name(tb), tocl_dtype_name(compute),
                    tocl_dtype_name(tout), (long long)i, x, y, got, want);
    }
    CHECK(bad == 0);
    for (int k = 0; k < 3; k++)
        dt_free(&d[k]);
    return bad == 0;
}

static layout contiguous(int ndim, const int64_t *sizes) {
    layout L;
    memset(&L, 0, sizeof L);
    L.ndim = ndim;
    for (int i = 0; i < ndim; i++)
        L.sizes[i] = sizes[i];
    for (int k = 0; k < 3; k++)
        contig_strides(ndim, sizes, L.st[k]);
    return L;
}

static void test_every_dtype(void) {
    int64_t sz[2] = {37, 53};
    layout L = contiguous(2, sz);
    tocl_ir_op ops[4] = {TOCL_IR_ADD, TOCL_IR_SUB, TOCL_IR_MUL, TOCL_IR_DIV};
    for (int i = 0; i < N_DTYPES; i++) {
        tocl_dtype t = all_dtypes[i];
        for (int o = 0; o < 4; o++) {
            if (t == TOCL_BOOL && ops[o] == TOCL_IR_SUB) { /* refused, as in PyTorch */
                tocl_ir_graph g;
                tocl_ir_init(&g);
                int a = tocl_ir_input(&g, t);
                CHECK(tocl_ir_binary(&g, TOCL_IR_SUB, TOCL_BOOL, a, a) < 0);
                continue;
            }
            /* Division is true division: integers divide in float32. */
            int is_div = ops[o] == TOCL_IR_DIV && !tocl_dtype_is_float(t);
            tocl_dtype c = is_div ? TOCL_F32 : tocl_dtype_compute(t), out = is_div ? TOCL_F32 : t;
            run_binary(ops[o], t, t, c, out, &L, 1234u + (uint32_t)(i * 7 + o));
        }
    }
}

static void test_mixed(void) {
    int64_t sz[1] = {1000};
    layout L = contiguous(1, sz);
    run_binary(TOCL_IR_ADD, TOCL_I32, TOCL_F32, TOCL_F32, TOCL_F32, &L, 1);
    run_binary(TOCL_IR_ADD, TOCL_U8, TOCL_I8, TOCL_I16, TOCL_I16, &L, 2);
    run_binary(TOCL_IR_MUL, TOCL_BF16, TOCL_F16, TOCL_F32, TOCL_F32, &L, 3);
    run_binary(TOCL_IR_MUL, TOCL_I64, TOCL_F64, TOCL_F64, TOCL_F64, &L, 4);
    run_binary(TOCL_IR_ADD, TOCL_BOOL, TOCL_I32, TOCL_I32, TOCL_I32, &L, 5);
    run_binary(TOCL_IR_SUB, TOCL_F32, TOCL_F32, TOCL_F32, TOCL_BF16, &L, 6); /* rounds on store */
    run_binary(TOCL_IR_ADD, TOCL_F32, TOCL_I16, TOCL_F32, TOCL_I32, &L, 7);  /* truncates */
}

static void test_layouts(void) {
    tocl_ew_stats s0, s1;
    int64_t sz[2] = {45, 67};
    layout L = contiguous(2, sz);
    /* Broadcast: b is a row (stride 0 over rows), then a scalar tensor. */
    L.st[2][0] = 0;
    run_binary(TOCL_IR_ADD, TOCL_F32, TOCL_F32, TOCL_F32, TOCL_F32, &L, 10);
    L.st[2][1] = 0;
    run_binary(TOCL_IR_MUL, TOCL_I32, TOCL_I32, TOCL_I32, TOCL_I32, &L, 11);
    /* Transposed input, then transposed output. */
    L = contiguous(2, sz);
    L.st[1][0] = 1, L.st[1][1] = 45;
    run_binary(TOCL_IR_ADD, TOCL_F32, TOCL_F32, TOCL_F32, TOCL_F32, &L, 12);
    L = contiguous(2, sz);
    L.st[0][0] = 1, L.st[0][1] = 45;
    run_binary(TOCL_IR_SUB, TOCL_F16, TOCL_F16, TOCL_F32, TOCL_F16, &L, 13);
    /* All three transposed alike: reordered to the contiguous kernel that
     * the first every-dtype test already built, so no new kernel. */
    tocl_ew_stats_get(&s0);
    for (int k = 0; k < 3; k++)
        L.st[k][0] = 1, L.st[k][1] = 45;
    run_binary(TOCL_IR_ADD, TOCL_F32, TOCL_F32, TOCL_F32, TOCL_F32, &L, 14);
    /* Offset views: element 0 inside the block. */
    L = contiguous(2, sz);
    L.pad[0] = 3, L.pad[1] = 5, L.pad[2] = 1;
    run_binary(TOCL_IR_ADD, TOCL_F32, TOCL_F32, TOCL_F32, TOCL_F32, &L, 15);
    tocl_ew_stats_get(&s1);
    CHECK(s1.kernels_created == s0.kernels_created);
    CHECK(s1.launches == s0.launches + 2);
    /* A column slice: every other element of the inner dim. */
    L = contiguous(2, sz);
    L.st[1][0] = 134, L.st[1][1] = 2;
    run_binary(TOCL_IR_MUL, TOCL_F64, TOCL_F64, TOCL_F64, TOCL_F64, &L, 16);
}

static void test_zero_dim_and_empty(void) {
    layout L = contiguous(0, NULL);
    run_binary(TOCL_IR_ADD, TOCL_F32, TOCL_F32, TOCL_F32, TOCL_F32, &L, 20);
    run_binary(TOCL_IR_MUL, TOCL_I64, TOCL_I64, TOCL_I64, TOCL_I64, &L, 21);
    tocl_ew_stats s0, s1;
    tocl_ew_stats_get(&s0);
    int64_t sz[2] = {0, 5};
    L = contiguous(2, sz);
    run_binary(TOCL_IR_ADD, TOCL_F32, TOCL_F32, TOCL_F32, TOCL_F32, &L, 22);
    tocl_ew_stats_get(&s1);
    CHECK(s1.launches == s0.launches); /* numel 0 launches nothing */
}

/* Ranks 1..6 that cannot collapse: a's rows are padded by one element per
 * dimension. Then a second shape of the same rank reuses the kernel. */
static void test_ranks(void) {
    const int64_t base[6] = {3, 4, 2, 5, 3, 2};
    for (int r = 1; r <= 6; r++) {
        for (int variant = 0; variant < 2; variant++) {
            int64_t sz[6];
            for (int i = 0; i < r; i++)
                sz[i] = base[i] + variant * (i % 2 + 1);
            layout L = contiguous(r, sz);
            int64_t s = 1;
            for (int i = r - 1; i >= 0; i--) {
                L.st[1][i] = s;
                s *= sz[i] + 1;
            }
            tocl_ew_stats s0, s1;
            tocl_ew_stats_get(&s0);
            run_binary(TOCL_IR_ADD, TOCL_F32, TOCL_I32, TOCL_F32, TOCL_F32, &L, 30u + (uint32_t)r);
            tocl_ew_stats_get(&s1);
            if (variant == 1)
                CHECK(s1.kernels_created == s0.kernels_created); /* same rank: no new kernel */
        }
    }
}

static void test_errors(void) {
    tocl_ir_graph g;
    tocl_ir_init(&g);
    tocl_ir_output(&g, tocl_ir_unary(&g, TOCL_IR_NEG, TOCL_F32, tocl_ir_input(&g, TOCL_F32)), TOCL_F32);
    int64_t sz[1] = {16}, st[1] = {1};
    dev_tensor a, o;
    CHECK(dt_make(&a, 0, TOCL_F32, 1, sz, st, 16, 0) && dt_make(&o, 0, TOCL_F32, 1, sz, st, 16, 0));
    tocl_tensor bad = a.t;
    bad.dtype = TOCL_I32;
    CHECK_STATUS(tocl_ew_run(0, 0, &g, &o.t, &bad, NULL), TOCL_E_INVALID); /* dtype mismatch */
    bad = a.t;
    bad.sizes[0] = 8;
    CHECK_STATUS(tocl_ew_run(0, 0, &g, &o.t, &bad, NULL), TOCL_E_INVALID); /* shape mismatch */
    bad = a.t;
    bad.data += 2; /* not a multiple of 4 bytes */
    CHECK_STATUS(tocl_ew_run(0, 0, &g, &o.t, &bad, NULL), TOCL_E_INVALID);
    bad = a.t;
    bad.strides[0] = 1000; /* reaches past the block */
    CHECK_STATUS(tocl_ew_run(0, 0, &g, &o.t, &bad, NULL), TOCL_E_INVALID);
    tocl_tensor bo = o.t;
    bo.strides[0] = 0; /* broadcast output */
    CHECK_STATUS(tocl_ew_run(0, 0, &g, &bo, &a.t, NULL), TOCL_E_INVALID);
    CHECK_STATUS(tocl_ew_run(99, 0, &g, &o.t, &a.t, NULL), TOCL_E_NO_DEVICE);
    dt_free(&a);
    dt_free(&o);
    /* 17 dims that cannot merge: more than TOCL_MAX_DIMS. */
    dev_tensor x, y;
    int64_t s17[17], st17[17], sto[17], n = 1;
    for (int i = 16; i >= 0; i--) { /* stride 2 * inner + 1: never mergeable */
        s17[i] = 2;
        st17[i] = i == 16 ? 1 : 2 * st17[i + 1] + 1;
        n += st17[i];
    }
    contig_strides(17, s17, sto);
    CHECK(dt_make(&x, 0, TOCL_F32, 17, s17, st17, n, 0) && dt_make(&y, 0, TOCL_F32, 17, s17, sto, 1 << 17, 0));
    CHECK_STATUS(tocl_ew_run(0, 0, &g, &y.t, &x.t, NULL), TOCL_E_UNSUPPORTED);
    dt_free(&x);
    dt_free(&y);
}

int main(void) {
    if (tocl_device_count() == 0) {
        printf("no OpenCL device: skipped\n");
        TOCL_TEST_END();
    }
    test_every_dtype();
    test_mixed();
    test_layouts();
    test_zero_dim_and_empty();
    test_ranks();
    test_errors();
    CHECK_OK(tocl_device_sync(0));
    tocl_ew_stats s;
    tocl_ew_stats_get(&s);
    printf("elementwise: %llu launches, %llu kernels\n", (unsigned long long)s.launches,
           (unsigned long long)s.kernels_created);
    TOCL_TEST_END();
}
