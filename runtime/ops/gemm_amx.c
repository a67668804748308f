/* gemm_amx.c - bfloat16 products on Intel's AMX tiles, for a PoCL CPU
 * device on a host that has them (kernels/gemm.cl, the GEMM_AMX section).
 *
 * The float32 route widens bfloat16 to float32 panels and runs at the
 * float32 FMA rate; PyTorch's CPU kernels (oneDNN) multiply bfloat16 on the
 * tiles several times faster. The kernels reach the tiles through clang's
 * x86 builtins, so whether they build, and compute right, depends on PoCL's
 * clang and the host: the first product on a device is preceded by a probe
 * (a product with edges in M, N and K, checked exactly on the host). Any
 * failure leaves the float32 route in place for the process. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ops/gemm_internal.h"
#include "gemm_params.h"
#include "launch/launch.h"

#define AMX_MAX_DEVICES 64
#define AMX_BLOCK 32 /* a kernel block: 2 x 2 tiles of 16 x 16 */
#define AMX_KC 8 /* k tiles per block of the tile kernel */

/* The kernels' build: a 32 x 32 register block as 32 rows of two float16. */
static const tocl_gemm_config amx_cfg = {32, 16, 2, 0, 0, 0};

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* Tile of C per work-item: up to 256 x 64, shrunk until every compute unit
 * gets two work-items. 2048^3 on two cores, ms of the tile kernel (noisy
 * host): 32x32 12.9, 64x128 10.6, 128x256 9.3, 256x32 8.0, 256x64 8.0,
 * 512x64 9.8, 1024x32 13.7; K blocks of 4, 8, 16 or all tiles within 10%. */
static void amx_tiles(int dev, int64_t batch, int64_t M, int64_t N, int64_t *tm, int64_t *tn) {
    int64_t want = 2 * (int64_t)tocl_dev_props(dev)->compute_units;
    *tm = M < 256 ? round_up(M, AMX_BLOCK) : 256;
    *tn = N < 64 ? round_up(N, AMX_BLOCK) : 64;
    while (batch * ((M + *tm - 1) / *tm) * ((N + *tn - 1) / *tn) < want && (*tm > AMX_BLOCK || *tn > AMX_BLOCK)) {
        if (*tm >= 2 * *tn)
            *tm = round_up(*tm / 2, AMX_BLOCK);
        else
            *tn = round_up(*tn / 2, AMX_BLOCK);
    }
}

tocl_status tocl_gemm_amx_run(int dev, int stream, const tocl_gemm_desc *g, const tocl_gemm_params *pin,
                              cl_mem abuf, cl_mem bbuf, cl_mem cbuf, cl_mem dbuf, cl_mem biasbuf) {
    tocl_gemm_params p = *pin;
    int64_t mp = round_up(p.M, AMX_BLOCK), np = round_up(p.N, AMX_BLOCK), kp = round_up(p.K, AMX_BLOCK);
    int64_t a_batches = g->a.bs == 0 ? 1 : p.batch, b_batches = g->b.bs == 0 ? 1 : p.batch;
    /* A with rows along k and whole blocks (M and K multiples of 32): the
     * tile loads read it in place, rows a_rs apart, and it is not packed */
    int a_direct = p.a_ks == 1 && p.M % AMX_BLOCK == 0 && p.K % AMX_BLOCK == 0 && !tocl_env_off("TORCH_OCL_AMX_ADIRECT");
    int64_t a_elems = a_direct ? 0 : a_batches * mp * kp, b_elems = b_batches * np * kp;
    tocl_ops_kernel *pack, *main_k;
    TOCL_TRY(tocl_gemm_kernel(dev, TOCL_BF16, &amx_cfg, "-DGEMM_AMX", "tocl_gemm_amx_pack", &pack));
    TOCL_TRY(tocl_gemm_kernel(dev, TOCL_BF16, &amx_cfg, "-DGEMM_AMX", "tocl_gemm_amx", &main_k));
    tocl_addr ws;
    TOCL_TRY(tocl_mem_alloc(dev, (size_t)(a_elems + b_elems) * 2, &ws));
    tocl_status s = stream != tocl_stream_current(dev) ? tocl_mem_record_stream(ws, stream) : TOCL_OK;
    cl_mem wbuf = NULL;
    cl_long woff = 0;
    if (s == TOCL_OK) {
        int mdev;
        size_t boff;
        s = tocl_mem_resolve(ws, &mdev, &wbuf, &boff);
        woff = (cl_long)(boff / 2);
    }
    for (int vnni = a_direct; vnni < 2 && s == TOCL_OK; vnni++) {
        tocl_gemm_pack_params pp;
        memset(&pp, 0, sizeof pp);
        if (!vnni)
            pp.off = p.a_off, pp.bs = p.a_bs, pp.rs = p.a_rs, pp.ks = p.a_ks, pp.rows = p.M, pp.width = mp,
            pp.dst_off = woff, pp.dst_bs = a_batches > 1 ? mp * kp : 0;
        else
            pp.off = p.b_off, pp.bs = p.b_bs, pp.rs = p.b_rs, pp.ks = p.b_ks, pp.rows = p.N, pp.width = np,
            pp.dst_off = woff + a_elems, pp.dst_bs = b_batches > 1 ? np * kp : 0;
        pp.depth = p.K;
        /* Runs along k of each row tile, or (panel_fast) across row tiles at each k tile. */
        pp.panel_fast = pp.ks != 1 && pp.rs == 1;
        int64_t rts = pp.width / 16, kts = kp / AMX_BLOCK, along = pp.panel_fast ? rts : kts;
        size_t runs = (size_t)((along + TOCL_GEMM_AMX_PACK_RUN - 1) / TOCL_GEMM_AMX_PACK_RUN);
        size_t global[3] = {runs, (size_t)(pp.panel_fast ? kts : rts), (size_t)(vnni ? b_batches : a_batches)};
        size_t local[3] = {1, 1, 1};
        cl_mem src = vnni ? bbuf : abuf;
        tocl_ops_arg args[] = {{sizeof(cl_mem), &src}, {sizeof(cl_mem), &wbuf}, {sizeof pp, &pp},
                               {sizeof vnni, &vnni}};
        s = tocl_ops_launch(dev, stream, pack, 3, global, local, args, 4);
    }
    if (s == TOCL_OK) {
        if (a_direct) /* A's own buffer, offset and strides, as resolved */
            p.a_w = 0;
        else
            p.a_off = woff, p.a_bs = a_batches > 1 ? mp * kp : 0, p.a_w = 32;
        p.b_off = woff + a_elems, p.b_bs = b_batches > 1 ? np * kp : 0;
        amx_tiles(dev, p.batch, p.M, p.N, &p.tm, &p.tn);
        p.kc = AMX_KC;
        float alpha = (float)g->alpha, beta = (float)g->beta;
        cl_mem dArg = dbuf ? dbuf : cbuf, biasArg = biasbuf ? biasbuf : cbuf;
        size_t global[3] = {(size_t)((p.N + p.tn - 1) / p.tn), (size_t)((p.M + p.tm - 1) / p.tm), (size_t)p.batch};
        size_t local[3] = {1, 1, 1};
        cl_mem aArg = a_direct ? abuf : wbuf;
        tocl_ops_arg args[] = {{sizeof(cl_mem), &aArg}, {sizeof(cl_mem), &wbuf},   {sizeof(cl_mem), &cbuf},
                               {sizeof(cl_mem), &dArg}, {sizeof(cl_mem), &biasArg}, {sizeof p, &p},
                               {sizeof alpha, &alpha},  {sizeof beta, &beta}, {(size_t)(32 * p.tn) * 4, NULL}};
        s = tocl_ops_launch(dev, stream, main_k, 3, global, local, args, 9);
    }
    tocl_status fs = tocl_mem_free(ws); /* reused only after the queued work is done */
    return s != TOCL_OK ? s : fs;
}

/* bfloat16 bits of x, rounded to nearest even (the runtime's scalar conversion). */
static uint16_t bf16_bits(float x) {
    uint16_t bits;
    tocl_ops_scalar_bits((tocl_scalar){1, x, 0}, TOCL_BF16, &bits);
    return bits;
}

/* An M x N x K product of small integers computed on the device through
 * tocl_gemm and compared with the host's sums rounded to bfloat16, bit for
 * bit. Called with the state PROBING, so tocl_gemm takes this route. */
static tocl_status amx_probe_product(int dev, int stream, int M, int N, int K, int *ok) {
    size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
    uint16_t *a = malloc(2 * (na + nb + 2 * nc));
    if (!a)
        return tocl_fail(TOCL_E_OOM, "gemm: no host memory for the AMX probe");
    uint16_t *b = a + na, *c = b + nb, *want = c + nc;
    for (int m = 0; m < M; m++)
        for (int k = 0; k < K; k++)
            a[m * K + k] = bf16_bits((float)((m * 7 + k * 3) % 9 - 4));
    for (int k = 0; k < K; k++)
        for (int n = 0; n < N; n++)
            b[k * N + n] = bf16_bits((float)((k * 5 + n) % 7 - 3));
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            int sum = 0;
            for (int k = 0; k < K; k++)
                sum += ((m * 7 + k * 3) % 9 - 4) * ((k * 5 + n) % 7 - 3);
            want[m * N + n] = bf16_bits((float)sum);
        }
    tocl_addr buf[3] = {0, 0, 0};
    size_t bytes[3] = {2 * na, 2 * nb, 2 * nc};
    tocl_status s = TOCL_OK;
    for (int i = 0; i < 3 && s == TOCL_OK; i++)
        s = tocl_mem_alloc(dev, bytes[i], &buf[i]);
    if (s == TOCL_OK)
        s = tocl_copy_h2d(dev, stream, buf[0], a, bytes[0], 0);
    if (s == TOCL_OK)
        s = tocl_copy_h2d(dev, stream, buf[1], b, bytes[1], 0);
    if (s == TOCL_OK) {
        tocl_gemm_desc g = tocl_gemm_desc_init(TOCL_BF16, M, N, K);
        g.a.data = buf[0], g.a.rs = K, g.a.cs = 1;
        g.b.data = buf[1], g.b.rs = N, g.b.cs = 1;
        g.c.data = buf[2], g.c.rs = N, g.c.cs = 1;
        s = tocl_gemm(dev, stream, &g);
    }
    if (s == TOCL_OK)
        s = tocl_copy_d2h(dev, stream, c, buf[2], bytes[2], 1);
    *ok = s == TOCL_OK && !memcmp(c, want, bytes[2]);
    for (int i = 0; i < 3; i++)
        if (buf[i])
            tocl_mem_free(buf[i]);
    free(a);
    return s;
}

/* Two products: 40 x 48 x 70 (A packed; every edge of the padding, three k
 * tiles) and 32 x 48 x 64 (A read in place). */
static tocl_status amx_probe(int dev, int stream, int *ok) {
    tocl_status s = amx_probe_product(dev, stream, 40, 48, 70, ok);
    if (s == TOCL_OK && *ok)
        s = amx_probe_product(dev, stream, 32, 48, 64, ok);
    return s;
}

enum { AMX_UNKNOWN = 0, AMX_PROBING, AMX_READY, AMX_OFF };
static int g_state[AMX_MAX_DEVICES];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t g_prober;

int tocl_gemm_amx_usable(int dev, int stream) {
    if (dev < 0 || dev >= AMX_MAX_DEVICES || tocl_dev_props(dev)->kind != TOCL_DEVICE_CPU)
        return 0;
    int st = __atomic_load_n(&g_state[dev], __ATOMIC_ACQUIRE);
    if (st == AMX_READY || st == AMX_OFF)
        return st == AMX_READY;
    pthread_mutex_lock(&g_lock);
    if (g_state[dev] == AMX_PROBING) { /* the probe's own product, or another thread's while it runs */
        int mine = pthread_equal(g_prober, pthread_self());
        pthread_mutex_unlock(&g_lock);
        return mine;
    }
    if (g_state[dev] == AMX_UNKNOWN) {
        if (!tocl_dev_is_pocl(dev) || !tocl_host_amx()) {
            g_state[dev] = AMX_OFF;
        } else {
            g_state[dev] = AMX_PROBING;
            g_prober = pthread_self();
            pthread_mutex_unlock(&g_lock);
            int ok = 0;
            tocl_status s = amx_probe(dev, stream, &ok);
            pthread_mutex_lock(&g_lock);
            g_state[dev] = ok ? AMX_READY : AMX_OFF;
            tocl_log(TOCL_LOG_TUNE, "gemm: bfloat16 products on device %d %s", dev,
                     ok ? "use the AMX tiles"
                        : s != TOCL_OK ? "stay on float32 FMAs: the AMX probe failed to run"
                                       : "stay on float32 FMAs: the AMX probe computed wrong sums");
        }
    }
    int ready = g_state[dev] == AMX_READY;
    pthread_mutex_unlock(&g_lock);
    return ready;
}
