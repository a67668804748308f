/* test_lean_header.c - PoCL builds behind only the builtin declarations a source names:
 * what is kept, that the code computes what the full header's would, and the fallback. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "program/program_internal.h"
#include "tocl_test.h"

static char g_nonce[64];

static tocl_program_stats stats(void) {
    tocl_program_stats s;
    tocl_program_stats_get(&s);
    return s;
}

/* What is kept: every overload of a named builtin, names pasted from an
 * identifier of a pasting source, the base header, no unnamed builtin. */
static void test_text(void) {
    char *t = tocl_lean_header(0, "__kernel void k(__global float *x) { x[0] = exp(x[0]); }", "");
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK(strstr(t, " exp(float);") && strstr(t, " exp(double);") && strstr(t, " exp(half);"));
    CHECK(strstr(t, " exp(float16);") != NULL);
    CHECK(strstr(t, "lgamma_r") == NULL && strstr(t, " vload4(") == NULL);
    CHECK(strstr(t, "_OPENCL_BASE_H_") != NULL); /* the base header, inlined */
    CHECK(strlen(t) < 200000);                    /* against 895 KB + 30 KB */
    free(t);
    t = tocl_lean_header(0, "#define CAT_(a, b) a##b\n#define CAT(a, b) CAT_(a, b)\n"
                            "__kernel void k(__global float *x) { CAT(vstore, 4)(CAT(vload, 4)(0, x), 1, x); }",
                         "");
    CHECK(t && strstr(t, " vload4(") && strstr(t, " vstore4(") && strstr(t, " vload_half4("));
    free(t);
    t = tocl_lean_header(0, "__kernel void k(__global float *x) { x[0] = vload4_(0, x).x; }", ""); /* no pasting */
    CHECK(t && !strstr(t, " vload4("));
    free(t);
    t = tocl_lean_header(0, "__kernel void k(__global float *x) { x[0] = OP(x[0]); }", "-DOP=expm1");
    CHECK(t && strstr(t, " expm1(float);")); /* a builtin named only by the options */
    free(t);
}

/* Builtins of several families, a pasted name, atomics and barriers: built
 * lean (no fallback) and computing what the host does. */
static void test_lean_build_computes(void) {
    char src[2048];
    snprintf(src, sizeof src,
             "#define CAT_(a, b) a##b\n#define CAT(a, b) CAT_(a, b)\n"
             "__kernel void lean_%s(__global float *y, __global const float *x, __global int *n) {\n"
             "    size_t i = get_global_id(0);\n"
             "    float4 v = CAT(vload, 4)(0, x);\n"
             "    float a = x[i];\n"
             "    y[i] = exp(a) + tanh(v.y) + erf(a) + convert_float(convert_int_rtz(a)) + fmax(a, 0.5f)\n"
             "         + sqrt(fabs(a)) + pow(fabs(a) + 1.0f, 2.0f) + select(1.0f, 2.0f, isnan(a)) + (float)min(3, (int)i);\n"
             "    atomic_add(n, 1);\n"
             "    barrier(CLK_GLOBAL_MEM_FENCE);\n"
             "}\n",
             g_nonce);
    tocl_program_stats before = stats();
    char name[96];
    snprintf(name, sizeof name, "lean_%s", g_nonce);
    cl_kernel k;
    CHECK_OK(tocl_kernel_create(0, src, "", name, &k));
    tocl_program_stats after = stats();
    CHECK(after.lean_builds == before.lean_builds + 1);
    CHECK(after.lean_fallbacks == before.lean_fallbacks);
    cl_int err;
    cl_context ctx = tocl_dev_context(0);
    cl_command_queue q = clCreateCommandQueue(ctx, tocl_dev_id(0), 0, &err);
    float x[16], y[16];
    int n = 0;
    for (int i = 0; i < 16; i++)
        x[i] = 0.37f * (float)i - 2.5f;
    cl_mem bx = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof x, x, &err);
    cl_mem by = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof y, NULL, &err);
    cl_mem bn = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof n, &n, &err);
    clSetKernelArg(k, 0, sizeof by, &by);
    clSetKernelArg(k, 1, sizeof bx, &bx);
    clSetKernelArg(k, 2, sizeof bn, &bn);
    size_t gws = 16;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, &gws, 0, NULL, NULL) == CL_SUCCESS);
    clEnqueueReadBuffer(q, by, CL_TRUE, 0, sizeof y, y, 0, NULL, NULL);
    clEnqueueReadBuffer(q, bn, CL_TRUE, 0, sizeof n, &n, 0, NULL, NULL);
    int close = 1;
    for (int i = 0; i < 16; i++) {
        double a = x[i];
        double want = exp(a) + tanh(x[1]) + erf(a) + (double)(int)a + fmax(a, 0.5) + sqrt(fabs(a)) +
                      pow(fabs(a) + 1.0, 2.0) + 1.0 + (i < 3 ? i : 3);
        close &= fabs(y[i] - want) <= 1e-4 * (1 + fabs(want));
    }
    CHECK(close);
    CHECK(n == 16);
    clReleaseMemObject(bx);
    clReleaseMemObject(by);
    clReleaseMemObject(bn);
    clReleaseCommandQueue(q);
    clReleaseKernel(k);
}

/* Run in a child process (the header is read once per process) behind a
 * copy of PoCL's headers without exp's declarations: the lean build of a
 * call to exp fails, and the program is built again behind the real header. */
static int fallback_child(void) {
    char src[512];
    snprintf(src, sizeof src, "__kernel void fb_%s(__global float *y) { y[0] = exp(y[0]); }\n", g_nonce);
    char name[96];
    snprintf(name, sizeof name, "fb_%s", g_nonce);
    CHECK_OK(tocl_program_prepare(0, src, "", name));
    tocl_program_stats s = stats();
    CHECK(s.lean_builds == 0 && s.lean_fallbacks == 1 && s.builds == 1);
    if (!(s.lean_builds == 0 && s.lean_fallbacks == 1 && s.builds == 1))
        fprintf(stderr, "lean builds %llu, fallbacks %llu, builds %llu\n", (unsigned long long)s.lean_builds,
                (unsigned long long)s.lean_fallbacks, (unsigned long long)s.builds);
    TOCL_TEST_END();
}

static int copy_header(const char *from_dir, const char *to_dir, const char *file, const char *drop) {
    char path[4096], line[4096];
    snprintf(path, sizeof path, "%s/%s", from_dir, file);
    FILE *in = fopen(path, "r");
    snprintf(path, sizeof path, "%s/%s", to_dir, file);
    FILE *out = in ? fopen(path, "w") : NULL;
    if (!out) {
        if (in)
            fclose(in);
        return -1;
    }
    while (fgets(line, sizeof line, in))
        if (!drop || !strstr(line, drop))
            fputs(line, out);
    fclose(in);
    fclose(out);
    return 0;
}

static void test_fallback(const char *self) {
    char dir[] = "/tmp/tocl_lean_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    const char *real = getenv("TORCH_OCL_POCL_INCLUDE") ? getenv("TORCH_OCL_POCL_INCLUDE") : "/usr/share/pocl/include";
    CHECK(copy_header(real, dir, "opencl-c-base.h", NULL) == 0);
    CHECK(copy_header(real, dir, "opencl-c.h", " exp(") == 0);
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "TORCH_OCL_POCL_INCLUDE=%s TORCH_OCL_CACHE_DISABLE=1 %s fallback", dir, self);
    CHECK(system(cmd) == 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

/* A real compile error is reported from the full header's build: the
 * message names the source's own line. */
static void test_error_line(void) {
    char src[512];
    snprintf(src, sizeof src, "/* %s */\n__kernel void bad(__global float *y) { y[0] = exp(; }\n", g_nonce);
    CHECK_STATUS(tocl_program_prepare(0, src, "", "bad"), TOCL_E_BUILD);
    CHECK(strstr(tocl_last_error(), ":2:") != NULL);
}

/* Included files may name builtins the scan does not see: whole header. */
static void test_includes_use_the_whole_header(void) {
    CHECK(tocl_lean_header(0, "#include \"mine.h\"\n__kernel void k(__global float *x) { x[0] = f(x[0]); }", "")
          == NULL);
    CHECK(tocl_lean_header(0, "#  include \"mine.h\"\n__kernel void k(__global float *x) { x[0] = f(x[0]); }", "")
          == NULL);
    /* a host-side <stdint.h> of a shared parameter header does not count */
    char *t = tocl_lean_header(0, "#ifndef __OPENCL_VERSION__\n#include <stdint.h>\n#endif\n"
                                  "__kernel void k(__global float *x) { x[0] = exp(x[0]); }", "");
    CHECK(t != NULL);
    free(t);
}

static void test_switch_off(void) {
    setenv("TORCH_OCL_LEAN_HEADER", "0", 1);
    char *t = tocl_lean_header(0, "__kernel void k(__global float *x) { x[0] = exp(x[0]); }", "");
    CHECK(t == NULL);
    free(t);
    unsetenv("TORCH_OCL_LEAN_HEADER");
}

int main(int argc, char **argv) {
    snprintf(g_nonce, sizeof g_nonce, "%d_%ld", (int)getpid(), (long)time(NULL));
    if (argc > 1 && !strcmp(argv[1], "fallback"))
        return fallback_child();
    if (tocl_device_count() < 1) {
        printf("no OpenCL device: skipping\n");
        TOCL_TEST_END();
    }
    const tocl_device_props *p = tocl_dev_props(0);
    if (!strstr(p->platform_name, "Portable Computing Language")) {
        CHECK(tocl_lean_header(0, "__kernel void k(void) {}", "") == NULL); /* PoCL only */
        printf("device 0 is not PoCL (%s): the lean header does not apply\n", p->platform_name);
        TOCL_TEST_END();
    }
    if (access("/usr/share/pocl/include/opencl-c.h", R_OK) != 0 && !getenv("TORCH_OCL_POCL_INCLUDE")) {
        printf("PoCL's opencl-c.h is not where this test looks: skipping\n");
        TOCL_TEST_END();
    }
    test_text();
    test_lean_build_computes();
    test_fallback(argv[0]);
    test_error_line();
    test_includes_use_the_whole_header();
    test_switch_off();
    TOCL_TEST_END();
}
