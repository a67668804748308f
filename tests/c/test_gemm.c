/* test_gemm.c - tocl_gemm against a naive host reference: every storage
 * dtype, both kernel paths (direct and packed), odd and prime sizes, K = 0,
 * transposed/strided/offset operands, broadcast batches, the epilogue (beta
 * input aliasing C, NaN ignored at beta = 0, row/column bias, activations),
 * guard elements around C, and argument errors.
 * `test_gemm bench [n ...]` prints GFLOP/s of float32 products instead. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "tocl/device.h"
#include "tocl/gemm.h"
#include "tocl/program.h"
#include "tocl/stream.h"
#include "tocl_test.h"

#define GUARD 7 /* elements before and after every buffer */

static uint16_t to_half(float f) {
    /* round to nearest even via the float's bits; inputs here are small and normal */
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax < 0x38800000u) /* below the normal half range: flush (tests avoid it) */
        return (uint16_t)sign;
    ax += 0xfffu + ((ax >> 13) & 1u);
    return (uint16_t)(sign | ((ax - 0x38000000u) >> 13));
}
static float from_half(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, x;
    if (e == 0)
        x = sign; /* zero (no subnormals in these tests) */
    else if (e == 31)
        x = sign | 0x7f800000u | (m << 13);
    else
        x = sign | ((e + 112) << 23) | (m << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}
static uint16_t to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
static float from_bf16(uint16_t b) {
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* Host values as double <-> storage bytes. */
static void put(tocl_dtype t, void *buf, int64_t i, double v) {
    switch (t) {
    case TOCL_F16: ((uint16_t *)buf)[i] = to_half((float)v); break;
    case TOCL_BF16: ((uint16_t *)buf)[i] = to_bf16((float)v); break;
    case TOCL_F64: ((double *)buf)[i] = v; break;
    default: ((float *)buf)[i] = (float)v; break;
    }
}
static double get(tocl_dtype t, const void *buf, int64_t i) {
    switch (t) {
    case TOCL_F16: return from_half(((const uint16_t *)buf)[i]);
    case TOCL_BF16: return from_bf16(((const uint16_t *)buf)[i]);
    case TOCL_F64: return ((const double *)buf)[i];
    default: return ((const float *)buf)[i];
    }
}

/* A device buffer of n elements plus guards, mirrored on the host. */
typedef struct buf {
    tocl_dtype t;
    int64_t n;
    tocl_addr base; /* device address of guard element 0 */
    void *host;     /* n + 2 * GUARD elements */
} buf;

static unsigned rng_state = 12345;
static double rnd(void) { /* multiples of 1/8 in [-2, 2): exact in every dtype */
    rng_state = rng_state * 1103515245u + 12345u;
    return (double)((int)((rng_state >> 16) % 32) - 16) / 8.0;
}

static int buf_make(buf *b, tocl_dtype t, int64_t n) {
    size_t es = tocl_dtype_size(t), total = (size_t)(n + 2 * GUARD);
    b->t = t, b->n = n;
    b->host = malloc(total * es);
    for (size_t i = 0; i < total; i++)
        put(t, b->host, (int64_t)i, i < GUARD || i >= (size_t)(n + GUARD) ? 1234.0 : rnd());
    if (tocl_mem_alloc(0, total * es, &b->base) != TOCL_OK)
        return 0;
    return tocl_copy_h2d(0, 0, b->base, b->host, total * es, 1) == TOCL_OK;
}
static tocl_addr buf_at(const buf *b, int64_t i) { return b->base + (uint64_t)(GUARD + i) * tocl_dtype_size(b->t); }
static double buf_get(const buf *b, int64_t i) { return get(b->t, b->host, GUARD + i); }
static void buf_download(buf *b, void *dst) {
    tocl_copy_d2h(0, 0, dst, b->base, (size_t)(b->n + 2 * GUARD) * tocl_dtype_size(b->t), 1);
}
static void buf_free(buf *b) {
    tocl_mem_free(b->base);
    free(b->host);
}

static double act_ref(int act, double x) {
    switch (act) {
    case TOCL_GEMM_ACT_RELU: return x > 0 ? x : 0;
    case TOCL_GEMM_ACT_GELU: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    case TOCL_GEMM_ACT_GELU_TANH: return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case TOCL_GEMM_ACT_SIGMOID: return 1 / (1 + exp(-x));
    case TOCL_GEMM_ACT_TANH: return tanh(x);
    case TOCL_GEMM_ACT_SILU: return x / (1 + exp(-x));
    default: return x;
    }
}

typedef struct layout {
    int ta, tb;          /* A stored as K x M (column-major A), B stored as N x K */
    int a_bcast;         /* A batch stride 0 */
    int64_t pad;         /* extra elements per row (strided rows) */
} layout;

/* One product checked against the reference; returns 1 if it matched. */
static int run_case(tocl_dtype t, int64_t batch, int64_t M, int64_t N, int64_t K, layout L, int with_d, double beta,
                    int bias_mode, int act, const char *path) {
    setenv("TORCH_OCL_GEMM_KERNEL", path, 1);
    int64_t lda = (L.ta ? M : K) + L.pad, ldb = (L.tb ? K : N) + L.pad, ldc = N + L.pad;
    int64_t a_rows = L.ta ? K : M, b_rows = L.tb ? N : K;
    int64_t a_bs = L.a_bcast ? 0 : a_rows * lda, b_bs = b_rows * ldb, c_bs = M * ldc;
    buf A, B, C, Bias;
    int ok = buf_make(&A, t, (L.a_bcast ? 1 : batch) * a_rows * lda + 1) &&
             buf_make(&B, t, batch * b_rows * ldb + 1) && buf_make(&C, t, batch * c_bs + 1) &&
             buf_make(&Bias, t, batch * (M > N ? M : N) + 1);
    if (!ok) {
        CHECK(ok);
        return 0;
    }
    if (with_d && beta == 0) { /* NaN in C must not leak when beta = 0 */
        for (int64_t i = 0; i < C.n; i++)
            put(t, C.host, GUARD + i, NAN);
        tocl_copy_h2d(0, 0, C.base, C.host, (size_t)(C.n + 2 * GUARD) * tocl_dtype_size(t), 1);
    }
    tocl_gemm_desc g = tocl_gemm_desc_init(t, M, N, K);
    g.batch = batch;
    /* operands start one element in: a non-zero offset inside the buffer */
    g.a = (tocl_gemm_operand){buf_at(&A, 1), a_bs, L.ta ? 1 : lda, L.ta ? lda : 1};
    g.b = (tocl_gemm_operand){buf_at(&B, 1), b_bs, L.tb ? 1 : ldb, L.tb ? ldb : 1};
    g.c = (tocl_gemm_operand){buf_at(&C, 1), c_bs, ldc, 1};
    g.alpha = 1.5;
    if (with_d) {
        g.d = g.c; /* in place: C = alpha * AB + beta * C */
        g.beta = beta;
    }
    if (bias_mode) {
        g.bias = (tocl_gemm_operand){buf_at(&Bias, 1), M > N ? M : N, 0, 1};
        g.bias_mode = (tocl_gemm_bias)bias_mode;
    }
    g.act = (tocl_gemm_act)act;
    tocl_status s = tocl_gemm(0, 0, &g);
    if (s != TOCL_OK) {
        fprintf(stderr, "tocl_gemm: %s\n", tocl_last_error());
        CHECK(s == TOCL_OK);
        buf_free(&A), buf_free(&B), buf_free(&C), buf_free(&Bias);
        return 0;
    }
    size_t es = tocl_dtype_size(t);
    void *out = malloc((size_t)(C.n + 2 * GUARD) * es);
    buf_download(&C, out);
    double tol = t == TOCL_F64 ? 1e-10 : t == TOCL_F32 ? 1e-4 : t == TOCL_F16 ? 2e-3 : 1.6e-2;
    int bad = 0;
    for (int64_t i = 0; i < C.n + 2 * GUARD && !bad; i++) {
        int64_t e = i - GUARD - 1; /* element index relative to C's origin */
        int64_t b = e >= 0 ? e / c_bs : -1, r = e >= 0 ? (e % c_bs) / ldc : -1, c = e >= 0 ? e % ldc : -1;
        int inside = e >= 0 && b < batch && r < M && c < N;
        double got = get(t, out, i);
        if (!inside) { /* guards, row padding and the skipped first element stay as they were */
            double was = get(t, C.host, i);
            if (!(got == was || (isnan(got) && isnan(was))))
                bad = 1, fprintf(stderr, "  wrote outside C at %lld: %g (was %g)\n", (long long)e, got, was);
            continue;
        }
        double sum = 0, mag = 0;
        for (int64_t k = 0; k < K; k++) {
            double av = buf_get(&A, 1 + (L.a_bcast ? 0 : b * a_bs) + (L.ta ? k * lda + r : r * lda + k));
            double bv = buf_get(&B, 1 + b * b_bs + (L.tb ? c * ldb + k : k * ldb + c));
            sum += av * bv;
            mag += fabs(av * bv);
        }
        double v = 1.5 * sum;
        mag = 1.5 * mag;
        if (with_d && beta != 0) {
            double dv = buf_get(&C, 1 + e);
            v += beta * dv;
            mag += fabs(beta * dv);
        }
        if (bias_mode) {
            double bv = buf_get(&Bias, 1 + b * (M > N ? M : N) + (bias_mode == 1 ? c : r));
            v += bv;
            mag += fabs(bv);
        }
        v = act_ref(act, v);
        if (!(fabs(got - v) <= tol * (mag + 1))) {
            bad = 1;
            fprintf(stderr, "  %s %s b%lld M%lld N%lld K%lld: C[%lld,%lld,%lld] = %g, expected %g\n", path,
                    tocl_dtype_name(t), (long long)batch, (long long)M, (long long)N, (long long)K, (long long)b,
                    (long long)r, (long long)c, got, v);
        }
    }
    CHECK(!bad);
    free(out);
    buf_free(&A), buf_free(&B), buf_free(&C), buf_free(&Bias);
    return !bad;
}

static void test_shapes(void) {
    const tocl_dtype dts[] = {TOCL_F32, TOCL_F16, TOCL_BF16, TOCL_F64};
    const int64_t shapes[][3] = {{1, 1, 1}, {7, 13, 5}, {129, 65, 257}, {33, 40, 1}, {64, 64, 64}, {5, 1, 300}};
    const char *paths[] = {"direct", "packed"};
    tocl_device_props p;
    tocl_device_props_get(0, &p);
    for (int d = 0; d < 4; d++) {
        if (dts[d] == TOCL_F64 && !p.has_fp64)
            continue;
        for (int s = 0; s < 6; s++)
            for (int q = 0; q < 2; q++) {
                layout L = {s % 2, s / 2 % 2, 0, s == 2 ? 3 : 0};
                run_case(dts[d], 1, shapes[s][0], shapes[s][1], shapes[s][2], L, 0, 0, 0, 0, paths[q]);
            }
    }
}

static void test_layouts_and_epilogue(void) {
    const char *paths[] = {"direct", "packed"};
    for (int q = 0; q < 2; q++) {
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                run_case(TOCL_F32, 3, 37, 45, 29, (layout){ta, tb, 0, 2}, 0, 0, 0, 0, paths[q]);
        run_case(TOCL_F32, 4, 19, 70, 33, (layout){0, 0, 1, 0}, 0, 0, 0, 0, paths[q]); /* broadcast A */
        run_case(TOCL_F32, 2, 21, 35, 17, (layout){0, 1, 0, 0}, 1, 0.5, 0, 0, paths[q]);  /* beta * C in place */
        run_case(TOCL_F32, 1, 21, 35, 17, (layout){0, 0, 0, 0}, 1, 0.0, 0, 0, paths[q]);  /* beta 0: NaN ignored */
        run_case(TOCL_BF16, 2, 40, 24, 50, (layout){1, 0, 0, 0}, 0, 0, 1, 0, paths[q]);   /* row bias */
        run_case(TOCL_F16, 1, 40, 24, 50, (layout){0, 0, 0, 1}, 0, 0, 2, 0, paths[q]);    /* column bias */
        for (int act = 1; act < TOCL_GEMM_ACT_COUNT; act++)
            run_case(TOCL_F32, 1, 17, 41, 23, (layout){0, 0, 0, 0}, 1, -0.5, 1, act, paths[q]);
    }
    /* K = 0: alpha * 0 + beta * C (+ bias), without touching A or B */
    run_case(TOCL_F32, 2, 9, 11, 0, (layout){0, 0, 0, 0}, 1, 2.0, 1, 0, "auto");
    run_case(TOCL_F32, 1, 9, 11, 0, (layout){0, 0, 0, 0}, 0, 0, 0, 0, "auto");
    /* whole register blocks: the vector epilogue of every storage type */
    run_case(TOCL_BF16, 2, 70, 100, 40, (layout){0, 0, 0, 0}, 1, 0.5, 1, TOCL_GEMM_ACT_GELU, "packed");
    run_case(TOCL_F16, 1, 70, 100, 40, (layout){1, 0, 0, 0}, 1, -1.0, 2, TOCL_GEMM_ACT_RELU, "packed");
    run_case(TOCL_F32, 1, 70, 100, 40, (layout){0, 1, 0, 0}, 1, 2.0, 1, TOCL_GEMM_ACT_SILU, "packed");
    tocl_device_props props;
    tocl_device_props_get(0, &props);
    if (props.has_fp64)
        run_case(TOCL_F64, 1, 70, 100, 40, (layout){0, 0, 0, 0}, 1, 0.5, 1, TOCL_GEMM_ACT_TANH, "packed");
    /* bigger than one work-group tile and one K block */
    run_case(TOCL_F32, 1, 300, 520, 700, (layout){0, 0, 0, 0}, 1, 1.0, 1, 1, "packed");
    run_case(TOCL_F32, 2, 200, 130, 600, (layout){1, 1, 0, 0}, 0, 0, 0, 0, "packed");
}

/* tocl_gemm_normed: one float32 row normalised as it is read, against a
 * host reference in double; products it does not take are refused with
 * TOCL_E_UNSUPPORTED and leave C untouched. */
static void test_normed(void) {
    const int64_t K = 37, N = 19;
    buf A, B, C, G, Bt, bias;
    if (!buf_make(&A, TOCL_F32, K) || !buf_make(&B, TOCL_F32, N * K) || !buf_make(&C, TOCL_F32, N) ||
        !buf_make(&G, TOCL_F32, K) || !buf_make(&Bt, TOCL_F32, K) || !buf_make(&bias, TOCL_F32, N)) {
        CHECK(0);
        return;
    }
    tocl_gemm_desc g = tocl_gemm_desc_init(TOCL_F32, 1, N, K);
    g.a = (tocl_gemm_operand){buf_at(&A, 0), 0, K, 1};
    g.b = (tocl_gemm_operand){buf_at(&B, 0), 0, 1, K}; /* W [N, K] read as W^T */
    g.c = (tocl_gemm_operand){buf_at(&C, 0), 0, N, 1};
    g.bias = (tocl_gemm_operand){buf_at(&bias, 0), 0, 0, 1};
    g.bias_mode = TOCL_GEMM_BIAS_ROW;
    g.act = TOCL_GEMM_ACT_RELU;
    tocl_gemm_norm n = {buf_at(&G, 0), buf_at(&Bt, 0), 1e-5};
    CHECK(tocl_gemm_norm_usable(0, &g, &n));
    CHECK_OK(tocl_gemm_normed(0, 0, &g, &n));
    float *out = malloc((size_t)(N + 2 * GUARD) * sizeof(float));
    buf_download(&C, out);
    double mean = 0, var = 0, x[64];
    for (int64_t k = 0; k < K; k++)
        mean += buf_get(&A, k) / K;
    for (int64_t k = 0; k < K; k++)
        var += (buf_get(&A, k) - mean) * (buf_get(&A, k) - mean) / K;
    for (int64_t k = 0; k < K; k++)
        x[k] = (buf_get(&A, k) - mean) / sqrt(var + 1e-5) * buf_get(&G, k) + buf_get(&Bt, k);
    int bad = 0;
    for (int64_t j = 0; j < N; j++) {
        double want = buf_get(&bias, j);
        for (int64_t k = 0; k < K; k++)
            want += x[k] * buf_get(&B, j * K + k);
        want = want > 0 ? want : 0;
        bad += fabs(out[GUARD + j] - want) > 1e-4 * (1 + fabs(want));
    }
    bad += out[GUARD - 1] != 1234.0f || out[GUARD + N] != 1234.0f; /* nothing written around C */
    CHECK(!bad);
    /* two rows, or B walked across k: refused */
    g.M = 2;
    CHECK(!tocl_gemm_norm_usable(0, &g, &n));
    CHECK_STATUS(tocl_gemm_normed(0, 0, &g, &n), TOCL_E_UNSUPPORTED);
    g.M = 1, g.b = (tocl_gemm_operand){buf_at(&B, 0), 0, N, 1};
    CHECK_STATUS(tocl_gemm_normed(0, 0, &g, &n), TOCL_E_UNSUPPORTED);
    CHECK_STATUS(tocl_gemm_normed(0, 0, &g, NULL), TOCL_E_INVALID);
    free(out);
    buf_free(&A), buf_free(&B), buf_free(&C), buf_free(&G), buf_free(&Bt), buf_free(&bias);
}

static void test_errors(void) {
    tocl_gemm_desc g = tocl_gemm_desc_init(TOCL_I32, 2, 2, 2);
    CHECK_STATUS(tocl_gemm(0, 0, &g), TOCL_E_UNSUPPORTED);
    CHECK(strstr(tocl_last_error(), "int32") != NULL);
    g = tocl_gemm_desc_init(TOCL_F32, -1, 2, 2);
    CHECK_STATUS(tocl_gemm(0, 0, &g), TOCL_E_INVALID);
    g = tocl_gemm_desc_init(TOCL_F32, 0, 5, 5); /* empty: nothing to do, no operand needed */
    CHECK_OK(tocl_gemm(0, 0, &g));
    /* operands that reach past their allocation are refused, not read */
    buf A;
    if (buf_make(&A, TOCL_F32, 16)) {
        g = tocl_gemm_desc_init(TOCL_F32, 4, 4, 4);
        g.a = (tocl_gemm_operand){buf_at(&A, 0), 0, 4, 1};
        g.b = (tocl_gemm_operand){buf_at(&A, 0), 0, 4, 1};
        g.c = (tocl_gemm_operand){buf_at(&A, 0), 0, 400, 1};
        CHECK_STATUS(tocl_gemm(0, 0, &g), TOCL_E_INVALID);
        g.c = (tocl_gemm_operand){buf_at(&A, 0), 0, 0, 1}; /* overlapping rows */
        CHECK_STATUS(tocl_gemm(0, 0, &g), TOCL_E_INVALID);
        g.c = (tocl_gemm_operand){buf_at(&A, 0), 0, 4, 1};
        g.act = (tocl_gemm_act)99;
        CHECK_STATUS(tocl_gemm(0, 0, &g), TOCL_E_INVALID);
        buf_free(&A);
    }
    tocl_gemm_config c;
    CHECK_OK(tocl_gemm_config_for(0, 0, TOCL_F32, 100, 100, 100, &c));
    CHECK(c.rm > 0 && c.vw > 0 && c.nv > 0);
    CHECK_STATUS(tocl_gemm_config_for(99, 0, TOCL_F32, 100, 100, 100, &c), TOCL_E_NO_DEVICE);
}

/* Tuning: timed once per size class, remembered in a file in the cache
 * directory, read back (not re-timed) after the in-memory table is dropped,
 * and off with TORCH_OCL_GEMM_TUNE=0. */
static void test_tuning(void) {
    char dir[4096], path[4400];
    CHECK_OK(tocl_cache_dir(dir, sizeof dir));
    setenv("TORCH_OCL_GEMM_TUNE", "1", 1);
    tocl_gemm_tune_reset();
    tocl_gemm_config c1, c2, c0;
    CHECK_OK(tocl_gemm_config_for(0, 0, TOCL_F32, 400, 400, 400, &c1)); /* smallest timed class */
    snprintf(path, sizeof path, "%s", dir);
    int found = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        found |= strncmp(e->d_name, "gemm_tune_v", 11) == 0;
    if (d)
        closedir(d);
    CHECK(found);
    tocl_gemm_tune_reset();
    tocl_program_stats st0, st1;
    tocl_program_stats_get(&st0);
    CHECK_OK(tocl_gemm_config_for(0, 0, TOCL_F32, 400, 400, 400, &c2));
    tocl_program_stats_get(&st1);
    CHECK(c1.rm == c2.rm && c1.tm == c2.tm && c1.tn == c2.tn && c1.kc == c2.kc);
    setenv("TORCH_OCL_GEMM_TUNE", "0", 1);
    tocl_gemm_tune_reset();
    CHECK_OK(tocl_gemm_config_for(0, 0, TOCL_F32, 4000, 4000, 4000, &c0)); /* would be a new class: no timing */
    CHECK(c0.rm > 0 && c0.tm > 0);
    (void)path;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU seconds used by all threads of the process: on a shared machine,
 * work per CPU-second says more than wall time. */
static double cpu_s(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec * 1e-6;
}

static int bench(int argc, char **argv) {
    int64_t sizes[16] = {256, 512, 1024, 2048};
    int ns = 4;
    if (argc > 2) {
        ns = 0;
        for (int i = 2; i < argc && ns < 16; i++)
            sizes[ns++] = atoll(argv[i]);
    }
    for (int i = 0; i < ns; i++) {
        int64_t n = sizes[i];
        tocl_addr a, b, c;
        size_t bytes = (size_t)(n * n) * 4;
        uint32_t one = 0x3f800000u;
        if (tocl_mem_alloc(0, bytes, &a) || tocl_mem_alloc(0, bytes, &b) || tocl_mem_alloc(0, bytes, &c))
            return 1;
        tocl_mem_fill(0, 0, a, &one, 4, bytes);
        tocl_mem_fill(0, 0, b, &one, 4, bytes);
        tocl_gemm_desc g = tocl_gemm_desc_init(TOCL_F32, n, n, n);
        g.a = (tocl_gemm_operand){a, 0, n, 1};
        g.b = (tocl_gemm_operand){b, 0, n, 1};
        g.c = (tocl_gemm_operand){c, 0, n, 1};
        if (tocl_gemm(0, 0, &g) != TOCL_OK) {
            fprintf(stderr, "%s\n", tocl_last_error());
            return 1;
        }
        tocl_stream_sync(0, 0);
        double best = 1e30, best_cpu = 1e30;
        for (int r = 0; r < 3; r++) {
            double t0 = now_s(), c0 = cpu_s();
            tocl_gemm(0, 0, &g);
            tocl_stream_sync(0, 0);
            double t = now_s() - t0, ct = cpu_s() - c0;
            best = t < best ? t : best;
            best_cpu = ct < best_cpu ? ct : best_cpu;
        }
        float v;
        tocl_copy_d2h(0, 0, &v, c, 4, 1);
        tocl_gemm_config cfg;
        tocl_gemm_config_for(0, 0, TOCL_F32, n, n, n, &cfg);
        printf("n=%lld  %.1f GFLOP/s wall, %.1f per CPU-second (%.2f ms, C[0]=%g, regs %dx%d tile %lldx%lld kc %lld)\n", (long long)n,
               2e-9 * n * n * n / best, 2e-9 * n * n * n / best_cpu, best * 1e3, v, cfg.rm, cfg.vw * cfg.nv, (long long)cfg.tm,
               (long long)cfg.tn, (long long)cfg.kc);
        tocl_mem_free(a), tocl_mem_free(b), tocl_mem_free(c);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (tocl_device_count() < 1) {
        printf("no OpenCL device; skipped\n");
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "bench"))
        return bench(argc, argv);
    setenv("TORCH_OCL_GEMM_TUNE", "0", 1); /* correctness never depends on tuning */
    test_shapes();
    test_layouts_and_epilogue();
    test_errors();
    test_normed();
    test_tuning();
    unsetenv("TORCH_OCL_GEMM_KERNEL");
    TOCL_TEST_END();
}
