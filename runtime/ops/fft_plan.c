/* fft_plan.c - how a transform length runs (fft_internal.h): its factoring
 * into radix passes, the split of a length too long for local memory into
 * two launches, Bluestein's algorithm for lengths with a large prime factor,
 * and the twiddle and chirp tables of each, computed on the host in double
 * and uploaded once per (device, dtype, length). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ops/fft_internal.h"

/* Local memory of one work-group is capped here: some CPU drivers report
 * more than their caches hold. */
#define FFT_LOCAL_CAP (512u << 10)
/* A CPU runs the passes of FFT_LANE_BYTES / sizeof(T) transforms at once
 * in SIMD lanes: 16 bytes (4 floats) measured faster than 32 on AVX2, whose
 * lanes double the local memory of a transform group, so that 4096 points
 * no longer fit one work-group (pocl: 512 KiB). */
#define FFT_LANE_BYTES 16
/* The largest power-of-two radix: 16 complex values per lane fit a GPU's
 * registers; on a CPU with 16 vector registers radix 8 measured faster. */
#define FFT_BIG_RADIX_CPU 8
#define FFT_BIG_RADIX_GPU 16
/* Work-items per group: CPU drivers loop over a group's items, and the
 * lanes already fill the SIMD unit; GPUs get up to one per butterfly. */
#define FFT_GROUP_CPU 1
#define FFT_GROUP_GPU 256

/* Radices with a butterfly in kernels/fft.cl; other primes run as direct passes. */
static int fft_has_butterfly(int r) {
    return r == 2 || r == 3 || r == 4 || r == 5 || r == 7 || r == 8 || r == 16;
}

void fft_root(int64_t e, int64_t n, double *re, double *im) {
    e %= n;
    if (e < 0)
        e += n;
    /* the angle 2 pi e / n in units of 2 pi / (8 n), folded into [0, pi / 4] */
    uint64_t d = 8 * (uint64_t)n, a = 8 * (uint64_t)e;
    int sneg = a > d / 2, cneg, swap;
    if (sneg)
        a = d - a; /* 2 pi - x: sine flips */
    cneg = a > d / 4;
    if (cneg)
        a = d / 2 - a; /* pi - x: cosine flips */
    swap = a > d / 8;
    if (swap)
        a = d / 4 - a; /* pi / 2 - x: sine and cosine trade */
    long double x = (long double)a * (2 * 3.141592653589793238462643383279502884L) / (long double)d;
    double c = (double)cosl(x), s = (double)sinl(x);
    if (swap) {
        double t = c;
        c = s;
        s = t;
    }
    *re = cneg ? -c : c;
    *im = sneg ? s : -s;
}

static fft_config fft_forced;
static int fft_forcing;

void fft_config_override(const fft_config *c) {
    fft_forcing = c != NULL;
    if (c)
        fft_forced = *c;
}

void fft_config_get(int dev, tocl_dtype dt, fft_config *c) {
    if (fft_forcing) {
        *c = fft_forced;
        return;
    }
    const tocl_device_props *p = tocl_dev_props(dev);
    int cpu = p->kind == TOCL_DEVICE_CPU;
    c->lanes = 1;
    c->group = cpu ? FFT_GROUP_CPU : FFT_GROUP_GPU;
    c->big = cpu ? FFT_BIG_RADIX_CPU : FFT_BIG_RADIX_GPU;
    c->local_bytes = p->local_mem_bytes < FFT_LOCAL_CAP ? p->local_mem_bytes : FFT_LOCAL_CAP;
    cl_uint w = 0;
    cl_device_info what = dt == TOCL_F64 ? CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE : CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT;
    if (cpu && clGetDeviceInfo(tocl_dev_id(dev), what, sizeof w, &w, NULL) == CL_SUCCESS)
        while (c->lanes * 2 <= (int)w && c->lanes * 2 * (int)tocl_dtype_size(dt) <= FFT_LANE_BYTES)
            c->lanes *= 2;
}

/* Complex values per transform that fit a work-group's local memory. */
static int64_t fft_local_len(const fft_config *c, tocl_dtype dt) {
    uint64_t bytes = c->local_bytes > 256 ? c->local_bytes - 256 : 0; /* room for the driver's own use */
    return (int64_t)(bytes / (2 * tocl_dtype_size(dt) * (uint64_t)c->lanes));
}

/* Smallest prime factor of n > 1. */
static int64_t fft_least_prime(int64_t n) {
    if (n % 2 == 0)
        return 2;
    for (int64_t p = 3; p * p <= n; p += 2)
        if (n % p == 0)
            return p;
    return n;
}

/* n's passes: primes without a butterfly first (direct passes, no
 * twiddles on the first), then 7, 5, 3, then the power of two in passes of
 * radix `big` (8 or 16). 0 if there are too many. */
static int fft_factor(int64_t n, int big, fft_passes *ps) {
    int nr = 0, r[64];
    int64_t m = n;
    int e2 = 0;
    while (m % 2 == 0) {
        m /= 2;
        e2++;
    }
    int small[8] = {0};
    while (m > 1) {
        int64_t p = fft_least_prime(m);
        m /= p;
        if (p <= 7)
            small[p]++;
        else if (nr < 64)
            r[nr++] = (int)p;
        else
            return 0;
    }
    for (int p = 7; p >= 3; p -= 2)
        for (int i = 0; i < small[p] && nr < 64; i++)
            r[nr++] = p;
    /* the power of two as passes of the largest radix, one smaller first
     * (for radix 16 and 2^(4k+1), 8 * 4 rather than 16 * 2) */
    int lg = big == 16 ? 4 : 3, full = e2 / lg, rest = e2 % lg;
    if (big == 16 && rest == 1 && full > 0) {
        full--;
        if (nr < 63) {
            r[nr++] = 8;
            r[nr++] = 4;
        }
    } else if (rest > 0 && nr < 64) {
        r[nr++] = 1 << rest;
    }
    for (int i = 0; i < full && nr < 64; i++)
        r[nr++] = big;
    if (nr > TOCL_FFT_MAXP)
        return 0;
    memset(ps, 0, sizeof *ps);
    ps->n = n;
    ps->npass = nr;
    for (int q = 0; q < nr; q++)
        ps->direct |= !fft_has_butterfly(r[q]);
    memcpy(ps->radix, r, (size_t)nr * sizeof r[0]);
    return 1;
}

/* n's passes if their launch fits `cap` values per transform (twice n
 * with a direct pass). */
static int fft_fits(int64_t n, int64_t cap, int big, fft_passes *ps) {
    return n <= cap && fft_factor(n, big, ps) && (!ps->direct || 2 * n <= cap);
}

/* The transform of length n: one launch if it fits `cap` values, else the
 * most balanced split n1 * n2 with both parts fitting. 0 if neither. */
static int fft_core_init(fft_core *c, int64_t n, int64_t cap, int big) {
    memset(c, 0, sizeof *c);
    c->n = n;
    c->tw4 = -1;
    if (fft_fits(n, cap, big, &c->a))
        return 1;
    int64_t d = (int64_t)sqrt((double)n);
    while (d * d > n)
        d--;
    for (; d >= 2 && n / d <= cap; d--)
        if (n % d == 0 && fft_fits(d, cap, big, &c->a) && fft_fits(n / d, cap, big, &c->b)) {
            c->split = 1;
            return 1;
        }
    return 0;
}

/* A growing table of complex doubles, and one of ints. */
typedef struct fft_table {
    double *v;
    int64_t len, cap;
    int oom;
} fft_table;

typedef struct fft_ints {
    int32_t *v;
    int64_t len, cap;
    int oom;
} fft_ints;

static void fft_push(fft_table *t, double re, double im) {
    if (t->len == t->cap) {
        int64_t cap = t->cap ? 2 * t->cap : 1024;
        double *v = realloc(t->v, (size_t)cap * 2 * sizeof *v);
        if (!v) {
            t->oom = 1;
            return;
        }
        t->v = v;
        t->cap = cap;
    }
    t->v[2 * t->len] = re;
    t->v[2 * t->len + 1] = im;
    t->len++;
}

static void fft_push_int(fft_ints *t, int32_t x) {
    if (t->len == t->cap) {
        int64_t cap = t->cap ? 2 * t->cap : 1024;
        int32_t *v = realloc(t->v, (size_t)cap * sizeof *v);
        if (!v) {
            t->oom = 1;
            return;
        }
        t->v = v;
        t->cap = cap;
    }
    t->v[t->len++] = x;
}

static void fft_push_root(fft_table *t, int64_t e, int64_t n) {
    double re, im;
    fft_root(e, n, &re, &im);
    fft_push(t, re, im);
}

/* Pass q of span ns and radix R: w_{ns R}^(t k) for k < ns, 1 <= t < R,
 * then the R roots of unity of a direct pass. The load places: input j
 * goes where decimation in time wants it, its digits (least significant
 * for the last pass's radix) reversed. */
static void fft_passes_table(fft_table *t, fft_ints *pi, fft_passes *ps) {
    ps->tw = t->len;
    int64_t ns = 1;
    for (int q = 0; q < ps->npass; q++) {
        int r = ps->radix[q];
        for (int64_t k = 0; k < ns; k++)
            for (int j = 1; j < r; j++)
                fft_push_root(t, j * k, ns * r);
        if (!fft_has_butterfly(r))
            for (int j = 0; j < r; j++)
                fft_push_root(t, j, r);
        ns *= r;
    }
    ps->perm = pi->len;
    for (int64_t j = 0; j < ps->n; j++) {
        int64_t rest = j, place = 0, span = ps->n;
        for (int q = ps->npass - 1; q >= 0; q--) {
            span /= ps->radix[q];
            place += rest % ps->radix[q] * span;
            rest /= ps->radix[q];
        }
        fft_push_int(pi, (int32_t)place);
    }
}

/* Forward transform of the n complex doubles x[0], x[s], x[2s], ... into
 * y[0 .. n) (mixed radix, recursive on the least prime factor p: the p
 * interleaved subsequences, then each output from p of theirs). w holds
 * the roots of the top length N, n divides N. 0 when out of memory. */
static int fft_host(const double *x, int64_t s, int64_t n, double *y, const double *w, int64_t N) {
    if (n == 1) {
        y[0] = x[0], y[1] = x[1];
        return 1;
    }
    int64_t p = fft_least_prime(n), m = n / p;
    double *sub = malloc((size_t)n * 2 * sizeof *sub);
    if (!sub)
        return 0;
    int ok = 1;
    for (int64_t r = 0; r < p && ok; r++)
        ok = fft_host(x + 2 * r * s, s * p, m, sub + 2 * r * m, w, N);
    for (int64_t k = 0; k < n && ok; k++) {
        double re = 0, im = 0;
        int64_t step = (N / n) * k % N, e = 0, km = k % m;
        for (int64_t r = 0; r < p; r++) {
            const double *a = sub + 2 * (r * m + km), *t = w + 2 * e;
            re += a[0] * t[0] - a[1] * t[1];
            im += a[0] * t[1] + a[1] * t[0];
            e += step;
            if (e >= N)
                e -= N;
        }
        y[2 * k] = re, y[2 * k + 1] = im;
    }
    free(sub);
    return ok;
}

/* Bluestein's tables: the chirp w_j = exp(-pi i j^2 / n) (j^2 taken mod 2n
 * so the angle stays exact) and the transform of its conjugate, wrapped
 * to length m, over m (the convolution's inverse scale), in double. */
static void fft_bluestein_table(fft_table *t, fft_plan *p, int64_t m) {
    int64_t n = p->n, q = 0;
    p->chirp = t->len;
    for (int64_t j = 0; j < n; j++) {
        fft_push_root(t, q, 2 * n);
        q = (q + 2 * j + 1) % (2 * n); /* (j + 1)^2 = j^2 + 2j + 1 */
    }
    double *b = calloc((size_t)m * 2, sizeof *b);
    if (!b || t->oom) {
        free(b);
        t->oom = 1;
        return;
    }
    for (int64_t j = 0; j < n; j++) {
        double re = t->v[2 * (p->chirp + j)], im = -t->v[2 * (p->chirp + j) + 1];
        b[2 * j] = re, b[2 * j + 1] = im;
        if (j)
            b[2 * (m - j)] = re, b[2 * (m - j) + 1] = im;
    }
    double *w = malloc((size_t)m * 2 * sizeof *w), *bt = malloc((size_t)m * 2 * sizeof *bt);
    if (w)
        for (int64_t e = 0; e < m; e++)
            fft_root(e, m, &w[2 * e], &w[2 * e + 1]);
    int ok = w && bt && fft_host(b, 1, m, bt, w, m);
    free(w);
    free(b);
    if (!ok) {
        free(bt);
        t->oom = 1;
        return;
    }
    b = bt;
    p->kern = t->len;
    for (int64_t k = 0; k < m; k++)
        fft_push(t, b[2 * k] / (double)m, b[2 * k + 1] / (double)m);
    free(b);
}

/* 1 if every prime factor of n has a butterfly (2, 3, 5, 7). */
static int fft_smooth(int64_t n) {
    static const int ps[4] = {2, 3, 5, 7};
    for (int i = 0; i < 4; i++)
        while (n % ps[i] == 0)
            n /= ps[i];
    return n == 1;
}

/* Direct passes cost about n * p per prime p; Bluestein two transforms of
 * m >= 2n - 1 points. Direct passes are kept while they are cheaper. */
static int fft_prefer_direct(int64_t n, int64_t m, int64_t cap) {
    int64_t rest = n, sum = 0, logm = 0;
    while (rest > 1) {
        int64_t p = fft_least_prime(rest);
        if (p > cap)
            return 0;
        if (p > 7)
            sum += p;
        rest /= p;
    }
    while (((int64_t)1 << logm) < m)
        logm++;
    return sum == 0 || n * sum <= 4 * m * logm;
}

static tocl_status fft_plan_make(int dev, tocl_dtype dt, const fft_config *cfg, int64_t n, fft_plan *p) {
    int64_t cap = fft_local_len(cfg, dt), m = 1;
    int big = cfg->big;
    for (m = 2 * n - 1; !fft_smooth(m); m++) /* the shortest convolution with butterflies only */
        ;
    p->dev = dev;
    p->dt = dt;
    p->cfg = *cfg;
    p->n = n;
    p->chirp = p->kern = -1;
    if (!fft_prefer_direct(n, m, cap) || !fft_core_init(&p->core, n, cap, big)) {
        p->blue = 1;
        if (!fft_core_init(&p->core, m, cap, big))
            return tocl_fail(TOCL_E_UNSUPPORTED,
                             "fft: length %lld is too long for device %d (%s): at most %lld points fit its "
                             "local memory, so lengths up to about %lld can run",
                             (long long)n, dev, tocl_dev_props(dev)->name, (long long)cap, (long long)(cap * cap / 2));
    }
    if (n % 2 == 0) {
        int64_t h = n / 2, mh;
        for (mh = 2 * h - 1; !fft_smooth(mh); mh++)
            ;
        p->half = fft_prefer_direct(h, mh, cap) && fft_core_init(&p->hcore, h, cap, big) && !p->hcore.split;
    }
    fft_table t = {0};
    fft_ints pi = {0};
    if (p->half) {
        fft_passes_table(&t, &pi, &p->hcore.a);
        p->htw = t.len;
        for (int64_t k = 0; k <= n / 2; k++)
            fft_push_root(&t, k, n);
    }
    fft_passes_table(&t, &pi, &p->core.a);
    if (p->core.split) {
        fft_passes_table(&t, &pi, &p->core.b);
        p->core.tw4 = t.len;
        for (int64_t e = 0; e < p->core.n; e++)
            fft_push_root(&t, e, p->core.n);
    }
    if (p->blue)
        fft_bluestein_table(&t, p, m);
    if (t.len == 0)
        fft_push(&t, 1, 0); /* n = 1: no twiddles, but a buffer to bind */
    if (t.oom || pi.oom) {
        free(t.v);
        free(pi.v);
        return tocl_fail(TOCL_E_OOM, "fft: out of host memory for the tables of length %lld", (long long)n);
    }
    size_t bytes = (size_t)t.len * 2 * tocl_dtype_size(dt);
    float *f = NULL;
    if (dt == TOCL_F32) {
        f = malloc(bytes);
        if (!f) {
            free(t.v);
            free(pi.v);
            return tocl_fail(TOCL_E_OOM, "fft: out of host memory for the tables of length %lld", (long long)n);
        }
        for (int64_t i = 0; i < 2 * t.len; i++)
            f[i] = (float)t.v[i];
    }
    cl_int err;
    p->tab = clCreateBuffer(tocl_dev_context(dev), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes,
                            f ? (void *)f : (void *)t.v, &err);
    free(f);
    free(t.v);
    if (err == CL_SUCCESS) {
        p->perm = clCreateBuffer(tocl_dev_context(dev), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                 (size_t)pi.len * sizeof *pi.v, pi.v, &err);
        if (err != CL_SUCCESS)
            clReleaseMemObject(p->tab);
    }
    free(pi.v);
    TOCL_CL_TRY(err, "clCreateBuffer (fft tables)");
    return TOCL_OK;
}

static pthread_mutex_t fft_plans_lock = PTHREAD_MUTEX_INITIALIZER;
static fft_plan *fft_plans;

tocl_status fft_plan_get(int dev, tocl_dtype dt, const fft_config *cfg, int64_t n, const fft_plan **out) {
    pthread_mutex_lock(&fft_plans_lock);
    for (fft_plan *p = fft_plans; p; p = p->next)
        if (p->dev == dev && p->dt == dt && p->n == n && p->cfg.lanes == cfg->lanes && p->cfg.big == cfg->big &&
            p->cfg.local_bytes == cfg->local_bytes) {
            pthread_mutex_unlock(&fft_plans_lock);
            *out = p;
            return TOCL_OK;
        }
    fft_plan *p = calloc(1, sizeof *p);
    tocl_status s = p ? fft_plan_make(dev, dt, cfg, n, p) : tocl_fail(TOCL_E_OOM, "fft: out of host memory for a plan");
    if (s == TOCL_OK) {
        p->next = fft_plans;
        fft_plans = p;
        *out = p;
    } else {
        free(p);
    }
    pthread_mutex_unlock(&fft_plans_lock);
    return s;
}
