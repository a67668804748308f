/* fft_bench.c - wall time of the FFT runtime (tocl/fft.h) on shapes that
 * matter: a batch of long complex transforms, an STFT-like batch of short
 * real ones, a Bluestein length, a strided dim, a split length. Each case
 * is one call plus a sync, best of several turns after a warm-up (the
 * first call builds the kernel and the plan): wall time, and the CPU time
 * of the process (the driver's threads included), which other processes'
 * load barely moves. Compare with
 * bench/fft_bench_torch.py, which times torch.fft on the CPU.
 *
 *   cc -O2 -D_GNU_SOURCE -Iinclude -Iruntime bench/fft_bench.c \
 *      build/<name>/libtocl_runtime.a build/<name>/libtocl_codegen.a -lOpenCL -lpthread -lm -o /tmp/fft_bench
 *   /tmp/fft_bench [turns]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "tocl/fft.h"

enum { C2C, R2C, C2R };

static double now_ms(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A contiguous tensor of sizes[nd] (plus a pair dim when pair). */
static tocl_tensor make(tocl_dtype dt, int nd, const int64_t *sizes, int pair) {
    tocl_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    t.ndim = nd + pair;
    int64_t run = pair ? 2 : 1;
    if (pair)
        t.sizes[nd] = 2, t.strides[nd] = 1;
    for (int i = nd - 1; i >= 0; i--) {
        t.sizes[i] = sizes[i];
        t.strides[i] = run;
        run *= sizes[i];
    }
    size_t bytes = (size_t)run * tocl_dtype_size(dt);
    if (tocl_mem_alloc(0, bytes, &t.data) != TOCL_OK) {
        fprintf(stderr, "alloc: %s\n", tocl_last_error());
        exit(1);
    }
    void *h = calloc(1, bytes);
    for (size_t i = 0; i < bytes / 4; i++)
        ((float *)h)[i] = (float)(rand() % 1000) / 500 - 1;
    if (dt == TOCL_F64)
        for (size_t i = 0; i < bytes / 8; i++)
            ((double *)h)[i] = (double)(rand() % 1000) / 500 - 1;
    tocl_copy_h2d(0, 0, t.data, h, bytes, 1);
    free(h);
    return t;
}

static void bench(const char *name, int kind, tocl_dtype dt, int nd, const int64_t *shape, int dim, int64_t nout,
                  int turns) {
    int64_t osz[8];
    memcpy(osz, shape, (size_t)nd * sizeof *shape);
    if (nout)
        osz[dim] = nout;
    tocl_tensor in = make(dt, nd, shape, kind != R2C), out = make(dt, nd, osz, kind != C2R);
    double best = 1e30, best_cpu = 1e30;
    for (int t = 0; t <= turns; t++) {
        double t0 = now_ms(CLOCK_MONOTONIC), c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
        tocl_status s = kind == C2C   ? tocl_fft_c2c(0, 0, &out, &in, dim, 0, 1)
                        : kind == R2C ? tocl_fft_r2c(0, 0, &out, &in, dim, 1)
                                      : tocl_fft_c2r(0, 0, &out, &in, dim, 1);
        if (s == TOCL_OK)
            s = tocl_stream_sync(0, 0);
        if (s != TOCL_OK) {
            fprintf(stderr, "%s: %s\n", name, tocl_last_error());
            exit(1);
        }
        double ms = now_ms(CLOCK_MONOTONIC) - t0, cpu = now_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
        if (t > 0 && ms < best)
            best = ms;
        if (t > 0 && cpu < best_cpu)
            best_cpu = cpu;
    }
    printf("%-34s %8.3f ms wall %8.3f ms cpu\n", name, best, best_cpu);
    tocl_mem_free(in.data);
    tocl_mem_free(out.data);
}

int main(int argc, char **argv) {
    int turns = argc > 1 ? atoi(argv[1]) : 20;
    if (tocl_device_count() < 1) {
        printf("no OpenCL device\n");
        return 0;
    }
    printf("device: %s\n", tocl_dev_props(0)->name);
    int64_t a[2] = {64, 4096}, b[2] = {100, 400}, c[2] = {100, 201}, d[2] = {64, 4099}, e[2] = {4096, 64};
    int64_t f[2] = {4, 65536}, g[2] = {4096, 64};
    bench("c2c 64x4096 f32", C2C, TOCL_F32, 2, a, 1, 0, turns);
    if (tocl_dev_props(0)->has_fp64)
        bench("c2c 64x4096 f64", C2C, TOCL_F64, 2, a, 1, 0, turns);
    bench("r2c 100x400 f32 onesided", R2C, TOCL_F32, 2, b, 1, 201, turns);
    bench("c2r 100x201 -> 400 f32", C2R, TOCL_F32, 2, c, 1, 400, turns);
    bench("c2c 64x4099 f32 (Bluestein)", C2C, TOCL_F32, 2, d, 1, 0, turns);
    bench("c2c 4096x64 f32 along dim 0", C2C, TOCL_F32, 2, e, 0, 0, turns);
    bench("c2c 4x65536 f32 (split)", C2C, TOCL_F32, 2, f, 1, 0, turns);
    bench("c2c 4096x64 f32 (n = 64)", C2C, TOCL_F32, 2, g, 1, 0, turns);
    return 0;
}
