/* test_custom.c - user kernels (tocl/custom.h): signature parsing and the
 * (buffer, offset) rewrite, scalar conversion, a launch on an offset
 * address, argument and work-size errors, build logs with the source's
 * line numbers, interning and the program cache, tracing under the
 * kernel's name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "tocl/custom.h"
#include "tocl/trace.h"
#include "tocl_test.h"

static char g_nonce[32];

static void test_parse(void) {
    const char *src =
        "// a comment with __kernel void fake(int x) {}\n"
        "#define ELEM float\n"
        "inline float twice(float v) { return 2 * v; }\n"
        "__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void k1(__global ELEM *restrict y,\n"
        "        __global const T *x, __local float *tmp, const unsigned int n, float4 v, __constant int *c) {\n"
        "    y[0] = x[0];\n"
        "}\n"
        "kernel void k2(void) { }\n"
        "__kernel void proto(int a);\n";
    tocl_custom_lib *lib = NULL;
    char *text = NULL;
    CHECK_OK(tocl_custom_rewrite(src, "T=float\nSCALE(x)=(2*(x))", &text));
    if (!text)
        return;
    /* Defines first, then #line 1, then the source on its own lines. */
    const char *pre = "#define T float\n#define SCALE(x) (2*(x))\n#line 1\n";
    CHECK(!strncmp(text, pre, strlen(pre)));
    CHECK(strstr(text, "__global ELEM *restrict y__tocl_buf, ulong y__tocl_off,\n") != NULL);
    CHECK(strstr(text, "__global const T *x__tocl_buf, ulong x__tocl_off, __local float *tmp") != NULL);
    CHECK(strstr(text, "__constant int *c__tocl_buf, ulong c__tocl_off) { __global ELEM * restrict y = "
                       "(__global ELEM *)((__global char *)y__tocl_buf + y__tocl_off);") != NULL);
    /* The comment's fake kernel is not rewritten, and no line was added. */
    CHECK(strstr(text, "void fake(int x)") != NULL);
    int lines_src = 0, lines_text = 0;
    for (const char *c = src; *c; c++)
        lines_src += *c == '\n';
    for (const char *c = text; *c; c++)
        lines_text += *c == '\n';
    CHECK(lines_text == lines_src + 3);
    free(text);

    char src2[1024];
    snprintf(src2, sizeof src2, "__kernel void nonce_%s(void) {}\n%s", g_nonce, src);
    CHECK_OK(tocl_custom_compile(0, src2, "", "T=float\nSCALE(x)=(2*(x))", &lib));
    if (!lib)
        return;
    CHECK(tocl_custom_kernel_count(lib) == 3); /* nonce, k1, k2; not the prototype */
    const tocl_custom_kernel *k = tocl_custom_kernel_find(lib, "k1");
    CHECK(k && tocl_custom_param_count(k) == 6);
    if (!k || tocl_custom_param_count(k) != 6)
        return;
    const tocl_custom_param *p = tocl_custom_param_at(k, 0);
    CHECK(!strcmp(p->name, "y") && p->kind == TOCL_CUSTOM_BUFFER && p->base == TOCL_CT_FLOAT && !p->is_const);
    p = tocl_custom_param_at(k, 1);
    CHECK(!strcmp(p->name, "x") && p->kind == TOCL_CUSTOM_BUFFER && p->base == TOCL_CT_FLOAT && p->is_const);
    p = tocl_custom_param_at(k, 2);
    CHECK(p->kind == TOCL_CUSTOM_LOCAL);
    p = tocl_custom_param_at(k, 3);
    CHECK(!strcmp(p->name, "n") && p->kind == TOCL_CUSTOM_SCALAR && p->base == TOCL_CT_UINT && p->vec == 1);
    p = tocl_custom_param_at(k, 4);
    CHECK(p->kind == TOCL_CUSTOM_SCALAR && p->base == TOCL_CT_FLOAT && p->vec == 4);
    p = tocl_custom_param_at(k, 5);
    CHECK(p->kind == TOCL_CUSTOM_BUFFER && p->base == TOCL_CT_INT && p->is_const);
    tocl_custom_lib *again = NULL;
    CHECK_OK(tocl_custom_compile(0, src2, "", "T=float\nSCALE(x)=(2*(x))", &again));
    CHECK(again == lib); /* interned */

    /* Errors: no kernel, an unreadable parameter, a bad define name. */
    CHECK_STATUS(tocl_custom_compile(0, "float f(float x) { return x; }", "", NULL, &lib), TOCL_E_INVALID);
    CHECK(strstr(tocl_last_error(), "defines no kernel") != NULL);
    CHECK_STATUS(tocl_custom_compile(0, "__kernel void k(__global float x[4]) {}", "", NULL, &lib), TOCL_E_INVALID);
    CHECK(strstr(tocl_last_error(), "cannot read parameter") != NULL);
    CHECK_STATUS(tocl_custom_compile(0, "__kernel void k(int a) {}", "", "1X=2", &lib), TOCL_E_INVALID);
}

static void test_scalars(void) {
    tocl_custom_param p = {.name = "a", .type = "double", .decl = "double", .kind = TOCL_CUSTOM_SCALAR,
                           .base = TOCL_CT_DOUBLE, .vec = 1};
    unsigned char out[128];
    size_t size = 0;
    tocl_custom_fault fault = TOCL_CUSTOM_FAULT_NONE;
    tocl_scalar half = {.is_float = 1, .f = 0.5};
    CHECK_STATUS(tocl_custom_scalar_bytes(&p, &half, 1, 0, 0, out, &size, &fault), TOCL_E_INVALID);
    CHECK(fault == TOCL_CUSTOM_FAULT_TYPE && strstr(tocl_last_error(), "cl_khr_fp64") != NULL);
    CHECK_OK(tocl_custom_scalar_bytes(&p, &half, 1, 1, 0, out, &size, &fault));
    double d;
    memcpy(&d, out, 8);
    CHECK(size == 8 && d == 0.5);

    /* A Python float for a float parameter is a 4-byte float. */
    p.base = TOCL_CT_FLOAT;
    snprintf(p.type, sizeof p.type, "float");
    tocl_scalar third = {.is_float = 1, .f = 1.0 / 3.0};
    CHECK_OK(tocl_custom_scalar_bytes(&p, &third, 1, 1, 0, out, &size, &fault));
    float f;
    memcpy(&f, out, 4);
    CHECK(size == 4 && f == (float)(1.0 / 3.0));
    tocl_scalar seven = {.is_float = 0, .i = 7};
    CHECK_OK(tocl_custom_scalar_bytes(&p, &seven, 1, 1, 0, out, &size, &fault));
    memcpy(&f, out, 4);
    CHECK(f == 7.0f);

    /* Integers: no floats, ranges per declared type. */
    p.base = TOCL_CT_UCHAR;
    tocl_scalar big = {.is_float = 0, .i = 256}, neg = {.is_float = 0, .i = -1}, ok = {.is_float = 0, .i = 255};
    CHECK_STATUS(tocl_custom_scalar_bytes(&p, &big, 1, 1, 0, out, &size, &fault), TOCL_E_INVALID);
    CHECK(fault == TOCL_CUSTOM_FAULT_VALUE);
    CHECK_STATUS(tocl_custom_scalar_bytes(&p, &neg, 1, 1, 0, out, &size, &fault), TOCL_E_INVALID);
    CHECK_OK(tocl_custom_scalar_bytes(&p, &ok, 1, 1, 0, out, &size, &fault));
    CHECK(size == 1 && out[0] == 255);
    p.base = TOCL_CT_INT;
    CHECK_STATUS(tocl_custom_scalar_bytes(&p, &half, 1, 1, 0, out, &size, &fault), TOCL_E_INVALID);
    CHECK(fault == TOCL_CUSTOM_FAULT_TYPE);
    /* Vectors: one value broadcast, or one per lane; float3 takes 16 bytes. */
    p.base = TOCL_CT_FLOAT;
    p.vec = 3;
    tocl_scalar lanes[3] = {{1, 1.0, 0}, {1, 2.0, 0}, {0, 0, 3}};
    CHECK_OK(tocl_custom_scalar_bytes(&p, lanes, 3, 1, 0, out, &size, &fault));
    float v[4];
    memcpy(v, out, 16);
    CHECK(size == 16 && v[0] == 1.0f && v[1] == 2.0f && v[2] == 3.0f);
    CHECK_STATUS(tocl_custom_scalar_bytes(&p, lanes, 2, 1, 0, out, &size, &fault), TOCL_E_INVALID);
}

static void test_launch(void) {
    char src[1024];
    snprintf(src, sizeof src,
             "__kernel void axpy_%s(__global float *y, __global const float *x, float a, int n) {\n"
             "    int i = get_global_id(0);\n"
             "    if (i < n) y[i] += a * x[i];\n"
             "}\n",
             g_nonce);
    tocl_program_stats_reset();
    tocl_custom_lib *lib = NULL;
    CHECK_OK(tocl_custom_compile(0, src, "-cl-fast-relaxed-math", NULL, &lib));
    if (!lib)
        return;
    tocl_program_stats st;
    tocl_program_stats_get(&st);
    CHECK(st.builds == 1);
    const tocl_custom_kernel *k = tocl_custom_kernel_at(lib, 0);
    tocl_custom_limits lim;
    CHECK_OK(tocl_custom_kernel_limits(k, 0, &lim));
    CHECK(lim.max_work_group_size >= 1 && lim.device_local_mem_bytes > 0);

    enum { N = 1000, OFF = 3 };
    float *host = malloc((N + OFF) * sizeof(float)), *out = malloc((N + OFF) * sizeof(float));
    for (int i = 0; i < N + OFF; i++)
        host[i] = (float)i;
    tocl_addr y, x;
    CHECK_OK(tocl_mem_alloc(0, (N + OFF) * sizeof(float), &y));
    CHECK_OK(tocl_mem_alloc(0, (N + OFF) * sizeof(float), &x));
    CHECK_OK(tocl_copy_h2d(0, 0, y, host, (N + OFF) * sizeof(float), 1));
    CHECK_OK(tocl_copy_h2d(0, 0, x, host, (N + OFF) * sizeof(float), 1));
    /* y[OFF:] += 2 * x[OFF:], both at a nonzero byte offset of their segment. */
    tocl_scalar a = {.is_float = 1, .f = 2.0}, n = {.is_float = 0, .i = N};
    tocl_custom_arg args[4] = {
        {.kind = TOCL_CUSTOM_BUFFER, .addr = y + OFF * 4, .dtype = TOCL_F32, .nbytes = N * 4},
        {.kind = TOCL_CUSTOM_BUFFER, .addr = x + OFF * 4, .dtype = TOCL_F32, .nbytes = N * 4},
        {.kind = TOCL_CUSTOM_SCALAR, .count = 1, .values = &a},
        {.kind = TOCL_CUSTOM_SCALAR, .count = 1, .values = &n},
    };
    size_t global = 1024, group = 64;
    CHECK_OK(tocl_trace_begin());
    tocl_custom_fault fault;
    CHECK_OK(tocl_custom_launch(k, 0, 0, 1, &global, &group, args, 4, &fault));
    CHECK_OK(tocl_trace_end());
    CHECK_OK(tocl_copy_d2h(0, 0, out, y, (N + OFF) * sizeof(float), 1));
    int good = 1;
    for (int i = 0; i < N + OFF; i++)
        good &= out[i] == (i < OFF ? (float)i : 3.0f * (float)i);
    CHECK(good);
    tocl_trace_record *rec = NULL;
    size_t nrec = 0;
    CHECK_OK(tocl_trace_collect(&rec, &nrec));
    int named = 0;
    for (size_t i = 0; i < nrec; i++)
        named += rec[i].kind == TOCL_TRACE_KERNEL && !strcmp(rec[i].name, tocl_custom_kernel_name(k));
    CHECK(named == 1);
    tocl_trace_free(rec);

    /* Errors: argument count, kinds, dtypes, work sizes, addresses. */
    CHECK_STATUS(tocl_custom_launch(k, 0, 0, 1, &global, NULL, args, 3, &fault), TOCL_E_INVALID);
    CHECK(fault == TOCL_CUSTOM_FAULT_TYPE && strstr(tocl_last_error(), "takes 4 arguments (y, x, a, n)"));
    tocl_custom_arg bad[4];
    memcpy(bad, args, sizeof bad);
    bad[1].dtype = TOCL_I64;
    CHECK_STATUS(tocl_custom_launch(k, 0, 0, 1, &global, NULL, bad, 4, &fault), TOCL_E_INVALID);
    CHECK(fault == TOCL_CUSTOM_FAULT_TYPE && strstr(tocl_last_error(), "float32") && strstr(tocl_last_error(), "int64"));
    memcpy(bad, args, sizeof bad);
    bad[2] = args[0];
    CHECK_STATUS(tocl_custom_launch(k, 0, 0, 1, &global, NULL, bad, 4, &fault), TOCL_E_INVALID);
    CHECK(fault == TOCL_CUSTOM_FAULT_TYPE && strstr(tocl_last_error(), "(a, declared float) takes a number"));
    size_t odd = 1000;
    CHECK_STATUS(tocl_custom_launch(k, 0, 0, 1, &odd, &group, args, 4, &fault), TOCL_E_INVALID);
    CHECK(fault == TOCL_CUSTOM_FAULT_VALUE && strstr(tocl_last_error(), "does not divide"));
    memcpy(bad, args, sizeof bad);
    bad[0].addr = y + 2; /* not float-aligned */
    CHECK_STATUS(tocl_custom_launch(k, 0, 0, 1, &global, NULL, bad, 4, &fault), TOCL_E_INVALID);
    CHECK(fault == TOCL_CUSTOM_FAULT_VALUE);
    if (tocl_device_count() > 1) {
        tocl_addr other;
        CHECK_OK(tocl_mem_alloc(1, N * 4, &other));
        memcpy(bad, args, sizeof bad);
        bad[0].addr = other;
        CHECK_STATUS(tocl_custom_launch(k, 0, 0, 1, &global, NULL, bad, 4, &fault), TOCL_E_INVALID);
        CHECK(strstr(tocl_last_error(), "is on ocl:1, but the kernel runs on ocl:0") != NULL);
        CHECK_OK(tocl_mem_free(other));
    }

    /* A second compile of the same text in a fresh library table would hit
     * the memory cache; dropping it, the disk cache: no build either way
     * (written now: CPU devices save when builds go quiet). */
    tocl_program_cache_flush();
    tocl_program_cache_drop_memory();
    tocl_program_stats_reset();
    CHECK_OK(tocl_custom_prepare(lib, 0));
    tocl_program_stats_get(&st);
    CHECK(st.builds == 0);
    CHECK_OK(tocl_device_sync(0));
    CHECK_OK(tocl_mem_free(x));
    CHECK_OK(tocl_mem_free(y));
    free(host);
    free(out);
}

static void test_build_error(void) {
    char src[512];
    snprintf(src, sizeof src, "__kernel void bad_%s(__global float *y) {\n    y[0] = 1.0f;\n    y[1] = nope;\n}\n",
             g_nonce);
    tocl_custom_lib *lib = NULL;
    CHECK_STATUS(tocl_custom_compile(0, src, "", "T=float", &lib), TOCL_E_BUILD);
    const char *msg = tocl_last_error();
    CHECK(strstr(msg, "nope") != NULL);
    CHECK(strstr(msg, ":3:") != NULL); /* the user's line 3, despite the define preamble */
    /* The runtime stays usable: a good kernel builds after it. */
    snprintf(src, sizeof src, "__kernel void good_%s(__global float *y) { y[0] = 1.0f; }\n", g_nonce);
    CHECK_OK(tocl_custom_compile(0, src, "", NULL, &lib));
}

/* The state of the snapshot block that contains addr, or -1. */
static int block_state(tocl_addr addr) {
    tocl_mem_snapshot snap;
    if (tocl_mem_snapshot_take(&snap) != TOCL_OK)
        return -1;
    int state = -1;
    for (int i = 0; i < snap.nblocks; i++)
        if (snap.blocks[i].addr <= addr && addr < snap.blocks[i].addr + snap.blocks[i].size)
            state = (int)snap.blocks[i].state;
    tocl_mem_snapshot_release(&snap);
    return state;
}

/* A launch on a stream other than the block's marks the block as
 * record_stream does: freed while that stream is held back, it waits
 * instead of returning to the cache. A launch on the block's own stream
 * does not. */
static void test_record_stream(void) {
    char src[256];
    snprintf(src, sizeof src, "__kernel void inc_%s(__global int *y) { y[get_global_id(0)] += 1; }\n", g_nonce);
    tocl_custom_lib *lib = NULL;
    CHECK_OK(tocl_custom_compile(0, src, "", NULL, &lib));
    if (!lib)
        return;
    const tocl_custom_kernel *k = tocl_custom_kernel_at(lib, 0);
    tocl_addr a, b;
    CHECK_OK(tocl_mem_alloc(0, 64 * sizeof(int), &a)); /* both on stream 0 */
    CHECK_OK(tocl_mem_alloc(0, 64 * sizeof(int), &b));
    cl_command_queue q1;
    CHECK_OK(tocl_queue_get(0, 1, &q1));
    cl_int err;
    cl_event hold = clCreateUserEvent(tocl_dev_context(0), &err);
    CHECK(err == CL_SUCCESS);
    CHECK(clEnqueueMarkerWithWaitList(q1, 1, &hold, NULL) == CL_SUCCESS); /* stream 1 waits for `hold` */
    size_t global = 64;
    tocl_custom_arg on_a = {.kind = TOCL_CUSTOM_BUFFER, .addr = a, .dtype = TOCL_I32, .nbytes = 256};
    tocl_custom_arg on_b = {.kind = TOCL_CUSTOM_BUFFER, .addr = b, .dtype = TOCL_I32, .nbytes = 256};
    CHECK_OK(tocl_custom_launch(k, 0, 1, 1, &global, NULL, &on_a, 1, NULL));
    CHECK_OK(tocl_custom_launch(k, 0, 0, 1, &global, NULL, &on_b, 1, NULL));
    CHECK_OK(tocl_stream_sync(0, 0));
    CHECK_OK(tocl_mem_free(a));
    CHECK_OK(tocl_mem_free(b));
    CHECK(block_state(a) == TOCL_MEM_BLOCK_AWAITING_FREE);
    CHECK(block_state(b) == TOCL_MEM_BLOCK_INACTIVE);
    clSetUserEventStatus(hold, CL_COMPLETE);
    clReleaseEvent(hold);
    CHECK_OK(tocl_device_sync(0));
}

int main(void) {
    snprintf(g_nonce, sizeof g_nonce, "%ld_%ld", (long)time(NULL), (long)clock());
    if (tocl_device_count() == 0) {
        printf("no OpenCL device: skipped\n");
        return 0;
    }
    test_parse();
    test_scalars();
    test_launch();
    test_build_error();
    test_record_stream();
    TOCL_TEST_END();
}
