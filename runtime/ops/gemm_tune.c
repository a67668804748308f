/* gemm_tune.c - tile configuration of the packed GEMM: per-device defaults,
 * and a bounded one-time timing of a few candidates per (device,
 * accumulation type, size class), remembered in a small text file next to
 * the program cache. Tuning only ever picks among correct configurations;
 * TORCH_OCL_GEMM_TUNE=0 turns it off. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ops/gemm_internal.h"
#include "launch/launch.h"

#define TUNE_MAX_DEVICES 64
#define TUNE_CLASSES 3           /* size classes by multiply-adds per matrix */
#define TUNE_MIN_VOLUME (1 << 24) /* below 256^3: defaults, never timed */
#define TUNE_FILE_VERSION 1

/* Candidates, first is the default. CPU with 32 vector registers of 16
 * floats (AVX-512): one register block of 8 rows x 32 columns (16
 * accumulator vectors of 512 bits, within the 32 AVX-512 registers), and
 * work-group tiles / K blocks that trade cache reuse for parallelism; all
 * runtime arguments, so trying them builds nothing. */
static const tocl_gemm_config cpu_f32[] = {
    {8, 16, 2, 64, 128, 256}, {8, 16, 2, 128, 256, 256}, {8, 16, 2, 256, 256, 256},
    {8, 16, 2, 128, 512, 256}, {8, 16, 2, 256, 512, 128}, {8, 16, 2, 512, 256, 128}, {8, 16, 2, 64, 256, 512},
};
static const tocl_gemm_config cpu_f64[] = {
    {8, 8, 2, 64, 64, 256}, {8, 8, 2, 128, 128, 256}, {8, 8, 2, 32, 64, 512},
};
/* CPU with narrower vectors (AVX2: 8 floats / 4 doubles, SSE and NEON: 4 /
 * 2) has 16 vector registers (NEON 32), where the block above needs 32 (or
 * 64) accumulators and spills two of every three to the stack. There: 6
 * rows x 2 native vectors, 12 accumulators + 2 vectors of B + 1 broadcast of
 * A = 15 registers (the BLIS Haswell shape, 6 x 16 floats on AVX2). Tiles
 * are multiples of 6 rows; the vector width is filled in from the device. */
#define NARROW_RM 6
#define NARROW_NV 2
static const int64_t narrow_f32_tiles[][3] = {
    {96, 256, 256}, {48, 256, 256}, {192, 256, 256}, {96, 512, 256}, {192, 512, 128}, {96, 128, 512}, {288, 256, 256},
};
static const int64_t narrow_f64_tiles[][3] = {
    {48, 128, 256}, {96, 128, 256}, {96, 256, 128},
};
/* GPU: one register block per work-item, 16 x 16 work-items per group. */
static const tocl_gemm_config gpu_f32[] = {
    {8, 4, 2, 0, 0, 0}, {4, 4, 1, 0, 0, 0}, {8, 4, 1, 0, 0, 0},
};
static const tocl_gemm_config gpu_f64[] = {
    {4, 4, 1, 0, 0, 0}, {4, 2, 1, 0, 0, 0},
};
#define MAX_CANDIDATES 8

/* Native vector width of dev for acc (0 where the driver does not say),
 * asked once per device. */
static int native_width(int dev, tocl_dtype acc) {
    static int known[TUNE_MAX_DEVICES][2]; /* width + 1; 0: not asked yet */
    int ai = acc == TOCL_F64;
    if (dev < 0 || dev >= TUNE_MAX_DEVICES)
        return 0;
    int w = __atomic_load_n(&known[dev][ai], __ATOMIC_RELAXED);
    if (w == 0) {
        cl_uint v = 0;
        cl_device_info what = ai ? CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE : CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT;
        if (clGetDeviceInfo(tocl_dev_id(dev), what, sizeof v, &v, NULL) != CL_SUCCESS)
            v = 0;
        w = (int)v + 1;
        __atomic_store_n(&known[dev][ai], w, __ATOMIC_RELAXED);
    }
    return w - 1;
}

/* The candidate configurations of dev for acc, into out[MAX_CANDIDATES]. */
static int candidates(int dev, tocl_dtype acc, tocl_gemm_config *out) {
    int cpu = tocl_dev_props(dev)->kind == TOCL_DEVICE_CPU, f64 = acc == TOCL_F64;
    const tocl_gemm_config *list;
    int n;
    if (cpu) {
        /* Narrow: a native width of 8 or 4 floats (4 or 2 doubles). 16
         * floats (AVX-512), or a width the driver does not report, keeps
         * the wide block. PoCL's CPU driver reports the host's vector
         * bytes / element size: 64 with avx512f, 32 with AVX, 16 with SSE
         * or NEON (cpu_setup_vector_widths, PoCL 3.1). */
        int w = native_width(dev, acc);
        if (w >= 2 && w <= (f64 ? 4 : 8) && (w & (w - 1)) == 0) {
            const int64_t(*tiles)[3] = f64 ? narrow_f64_tiles : narrow_f32_tiles;
            n = f64 ? (int)(sizeof narrow_f64_tiles / sizeof *narrow_f64_tiles)
                    : (int)(sizeof narrow_f32_tiles / sizeof *narrow_f32_tiles);
            for (int i = 0; i < n; i++)
                out[i] = (tocl_gemm_config){NARROW_RM, w, NARROW_NV, tiles[i][0], tiles[i][1], tiles[i][2]};
            return n;
        }
        list = f64 ? cpu_f64 : cpu_f32;
        n = f64 ? (int)(sizeof cpu_f64 / sizeof *cpu_f64) : (int)(sizeof cpu_f32 / sizeof *cpu_f32);
    } else {
        list = f64 ? gpu_f64 : gpu_f32;
        n = f64 ? (int)(sizeof gpu_f64 / sizeof *gpu_f64) : (int)(sizeof gpu_f32 / sizeof *gpu_f32);
    }
    memcpy(out, list, (size_t)n * sizeof *list);
    return n;
}

void tocl_gemm_default_config(int dev, tocl_dtype acc, tocl_gemm_config *out) {
    tocl_gemm_config list[MAX_CANDIDATES];
    candidates(dev, acc, list);
    *out = list[0];
}

/* ------------------------------------------------------------------ the table */

typedef struct tune_slot {
    int known; /* 0: not yet, 1: tuned (cfg valid) */
    tocl_gemm_config cfg;
} tune_slot;

static tune_slot table[TUNE_MAX_DEVICES][2][TUNE_CLASSES];
static int loaded[TUNE_MAX_DEVICES];
static pthread_mutex_t tune_lock = PTHREAD_MUTEX_INITIALIZER;

static int size_class(int64_t M, int64_t N, int64_t K) {
    double v = (double)M * (double)N * (double)K;
    if (v < (double)TUNE_MIN_VOLUME)
        return -1;
    return v < 512.0 * 512 * 512 * 2 ? 0 : v < 1280.0 * 1280 * 1280 ? 1 : 2;
}

static const int64_t class_size[TUNE_CLASSES] = {384, 768, 1536};

/* FNV-1a of what identifies the device's code generation. */
static uint64_t device_hash(int dev) {
    const tocl_device_props *p = tocl_dev_props(dev);
    uint64_t h = 1469598103934665603ull;
    const char *parts[] = {p->name, p->driver_version, p->platform_version, p->vendor};
    for (int i = 0; i < 4; i++)
        for (const char *c = parts[i]; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ull;
    return h;
}

static int tune_path(int dev, char *buf, size_t cap) {
    char dir[4096];
    if (tocl_cache_dir(dir, sizeof dir) != TOCL_OK)
        return -1;
    int n = snprintf(buf, cap, "%s/gemm_tune_v%d_%016llx.txt", dir, TUNE_FILE_VERSION,
                     (unsigned long long)device_hash(dev));
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

static int valid_cfg(int dev, int acc_i, const tocl_gemm_config *c) {
    tocl_gemm_config list[MAX_CANDIDATES];
    int n = candidates(dev, acc_i ? TOCL_F64 : TOCL_F32, list);
    for (int i = 0; i < n; i++)
        if (list[i].rm == c->rm && list[i].vw == c->vw && list[i].nv == c->nv && list[i].tm == c->tm &&
            list[i].tn == c->tn && list[i].kc == c->kc)
            return 1;
    return 0;
}

/* Read remembered choices; a line that is not one of our candidates is
 * ignored, so a damaged or foreign file can only cost speed. */
static void tune_load(int dev) {
    char path[4400];
    loaded[dev] = 1;
    if (tune_path(dev, path, sizeof path) != 0)
        return;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    int acc_i, cls, rm, vw, nv;
    long long tm, tn, kc;
    while (fscanf(f, "%d %d %d %d %d %lld %lld %lld", &acc_i, &cls, &rm, &vw, &nv, &tm, &tn, &kc) == 8) {
        tocl_gemm_config c = {rm, vw, nv, tm, tn, kc};
        if (acc_i >= 0 && acc_i < 2 && cls >= 0 && cls < TUNE_CLASSES && valid_cfg(dev, acc_i, &c)) {
            table[dev][acc_i][cls].known = 1;
            table[dev][acc_i][cls].cfg = c;
        }
    }
    fclose(f);
}

/* Rewrite the file from the table: temp file + rename, so readers never see
 * half a file. Failure to write only means timing again next process. */
static void tune_save(int dev) {
    char path[4400], tmp[4500];
    if (tune_path(dev, path, sizeof path) != 0)
        return;
    snprintf(tmp, sizeof tmp, "%s.part%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    for (int a = 0; a < 2; a++)
        for (int c = 0; c < TUNE_CLASSES; c++)
            if (table[dev][a][c].known) {
                const tocl_gemm_config *g = &table[dev][a][c].cfg;
                fprintf(f, "%d %d %d %d %d %lld %lld %lld\n", a, c, g->rm, g->vw, g->nv, (long long)g->tm,
                        (long long)g->tn, (long long)g->kc);
            }
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        unlink(tmp);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Time every candidate once on an n x n x n product of zeros (after one
 * warm-up run that also builds it) and keep the fastest. */
static tocl_status tune_class(int dev, int stream, tocl_dtype acc, int cls, tocl_gemm_config *best) {
    tocl_gemm_config list[MAX_CANDIDATES];
    int count = candidates(dev, acc, list);
    *best = list[0];
    if (count < 2)
        return TOCL_OK;
    int64_t n = class_size[cls];
    size_t es = tocl_dtype_size(acc), bytes = (size_t)(n * n) * es;
    tocl_addr buf[3] = {0, 0, 0};
    tocl_status s = TOCL_OK;
    for (int i = 0; i < 3 && s == TOCL_OK; i++) {
        s = tocl_mem_alloc(dev, bytes, &buf[i]);
        if (s == TOCL_OK && stream != tocl_stream_current(dev))
            s = tocl_mem_record_stream(buf[i], stream);
        if (s == TOCL_OK) {
            uint32_t zero = 0;
            s = tocl_mem_fill(dev, stream, buf[i], &zero, 4, bytes);
        }
    }
    tocl_gemm_desc g = tocl_gemm_desc_init(acc, n, n, n);
    g.a = (tocl_gemm_operand){buf[0], 0, n, 1};
    g.b = (tocl_gemm_operand){buf[1], 0, n, 1};
    g.c = (tocl_gemm_operand){buf[2], 0, n, 1};
    double best_t = 1e30;
    for (int i = 0; i < count && s == TOCL_OK; i++) {
        s = tocl_gemm_run_with(dev, stream, &g, GEMM_PATH_PACKED, &list[i]);
        if (s == TOCL_OK)
            s = tocl_stream_sync(dev, stream);
        double t0 = now_s();
        if (s == TOCL_OK)
            s = tocl_gemm_run_with(dev, stream, &g, GEMM_PATH_PACKED, &list[i]);
        if (s == TOCL_OK)
            s = tocl_stream_sync(dev, stream);
        double t = now_s() - t0;
        if (s == TOCL_OK)
            tocl_log(TOCL_LOG_TUNE, "gemm tune n=%lld %dx%d tile %lldx%lld kc %lld: %.1f GFLOP/s", (long long)n,
                    list[i].rm, list[i].vw * list[i].nv, (long long)list[i].tm, (long long)list[i].tn,
                    (long long)list[i].kc, 2e-9 * n * n * n / t);
        if (s == TOCL_OK && t < best_t)
            best_t = t, *best = list[i];
    }
    for (int i = 0; i < 3; i++)
        tocl_mem_free(buf[i]);
    if (s == TOCL_OK)
        tocl_log(TOCL_LOG_TUNE, "gemm tuned device %d %s class %d (n=%lld): %dx%d regs, tile %lldx%lld, kc %lld, "
                "%.1f GFLOP/s", dev, tocl_dtype_name(acc), cls, (long long)n, best->rm, best->vw * best->nv,
                (long long)best->tm, (long long)best->tn, (long long)best->kc, 2e-9 * n * n * n / best_t);
    return s;
}

static int tuning_enabled(void) {
    return !tocl_env_off("TORCH_OCL_GEMM_TUNE");
}

tocl_status tocl_gemm_pick_config(int dev, int stream, tocl_dtype dtype, int64_t batch, int64_t M, int64_t N,
                                  int64_t K, tocl_gemm_config *out) {
    tocl_dtype acc = dtype == TOCL_F64 ? TOCL_F64 : TOCL_F32;
    tocl_gemm_default_config(dev, acc, out);
    int cls = size_class(M, N, K);
    if (cls >= 0 && tuning_enabled() && dev >= 0 && dev < TUNE_MAX_DEVICES) {
        int ai = acc == TOCL_F64;
        pthread_mutex_lock(&tune_lock);
        if (!loaded[dev])
            tune_load(dev);
        tune_slot *slot = &table[dev][ai][cls];
        tocl_status s = TOCL_OK;
        if (!slot->known) {
            tocl_gemm_config best;
            s = tune_class(dev, stream, acc, cls, &best);
            if (s == TOCL_OK) {
                slot->known = 1;
                slot->cfg = best;
                tune_save(dev);
            }
        }
        if (slot->known)
            *out = slot->cfg;
        pthread_mutex_unlock(&tune_lock);
        TOCL_TRY(s);
    }
    /* Shrink the work-group tile until every compute unit gets about two
     * tiles (CPU macro kernel only; the GPU kernel has no tile). */
    if (out->tm > 0 && out->tn > 0) {
        int64_t rn = (int64_t)out->vw * out->nv;
        uint64_t lmem = tocl_dev_props(dev)->local_mem_bytes;
        size_t es = tocl_dtype_size(acc);
        while ((uint64_t)(out->tm * out->tn) * es > lmem && out->tm > out->rm)
            out->tm = (out->tm / 2 + out->rm - 1) / out->rm * out->rm;
        int64_t want = 2 * (int64_t)tocl_dev_props(dev)->compute_units;
        for (;;) {
            int64_t tiles = batch * ((M + out->tm - 1) / out->tm) * ((N + out->tn - 1) / out->tn);
            if (tiles >= want)
                break;
            if (out->tn > rn && out->tn >= out->tm)
                out->tn = (out->tn / 2 + rn - 1) / rn * rn;
            else if (out->tm > out->rm)
                out->tm = (out->tm / 2 + out->rm - 1) / out->rm * out->rm;
            else
                break;
        }
    }
    return TOCL_OK;
}

tocl_status tocl_gemm_config_for(int dev, int stream, tocl_dtype dtype, int64_t M, int64_t N, int64_t K,
                                 tocl_gemm_config *out) {
    TOCL_TRY(tocl_device_check(dev));
    return tocl_gemm_pick_config(dev, stream, dtype, 1, M, N, K, out);
}

void tocl_gemm_tune_reset(void) {
    pthread_mutex_lock(&tune_lock);
    memset(table, 0, sizeof table);
    memset(loaded, 0, sizeof loaded);
    pthread_mutex_unlock(&tune_lock);
}
