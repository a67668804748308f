/* gemm_internal.h - what gemm.c (launches) and gemm_tune.c (tile choice)
 * share: running one product with an explicit configuration. */
#ifndef TOCL_GEMM_INTERNAL_H
#define TOCL_GEMM_INTERNAL_H

#include "internal.h"
#include "tocl/gemm.h"
#include "gemm_params.h"
#include "launch/launch.h"

/* Which kernel shape runs a product. */
typedef enum gemm_path {
    GEMM_PATH_AUTO = 0,
    GEMM_PATH_DIRECT,  /* operands read in place, one element per work-item */
    GEMM_PATH_PACKED   /* pack, then the CPU macro kernel or the GPU kernel */
} gemm_path;

/* tocl_gemm with a given path and (for the packed path) configuration. */
tocl_status tocl_gemm_run_with(int dev, int stream, const tocl_gemm_desc *g, gemm_path path,
                               const tocl_gemm_config *cfg);

/* B already in the packed layout (gemm_params.h) of a CPU device: panels
 * of width cfg->vw * cfg->nv, element (n, k) of batch item b at
 * off + b * bs + (n / W) * K * W + k * W + n % W of buf, accumulation type,
 * columns past N zero. */
typedef struct tocl_gemm_packed_b {
    cl_mem buf;
    int64_t off, bs;
} tocl_gemm_packed_b;

/* tocl_gemm on the packed path with configuration cfg (from
 * tocl_gemm_pick_config) and B given packed: g->b is not read. A CPU
 * device, storage type = accumulation type (float32 or float64), K > 0. */
tocl_status tocl_gemm_run_packed_b(int dev, int stream, const tocl_gemm_desc *g, const tocl_gemm_config *cfg,
                                   const tocl_gemm_packed_b *pb);

/* A packed operand with a panel stride: ps elements from one panel to the
 * next, 0 meaning K * W (packed for this K). */
typedef struct tocl_gemm_packed {
    cl_mem buf;
    int64_t off, bs, ps;
} tocl_gemm_packed;

/* Either or both of A and B given packed (NULL: packed here from g->a or
 * g->b). A packed A has panels of width cfg->rm, element (m, k) at
 * off + b * bs + (m / W) * ps + k * W + m % W (ps 0: K * W); rows past M
 * are computed but never stored, so they need not be zero. Same
 * conditions as tocl_gemm_run_packed_b. */
tocl_status tocl_gemm_run_packed(int dev, int stream, const tocl_gemm_desc *g, const tocl_gemm_config *cfg,
                                 const tocl_gemm_packed *pa, const tocl_gemm_packed *pb);

/* Pack an operand of `batch` x `rows` x `depth` (src: rs walks rows, cs
 * walks depth k; A: rows = M, B: rows = N, so B's src is its transpose)
 * into dst in the layout above: width cfg->rm (A, b_side 0) or
 * cfg->vw * cfg->nv (B), panel stride depth * W, dst->bs per batch item
 * (>= panels * depth * W), rows past the end zero. CPU device, float32 or
 * float64 (storage = accumulation type). Only enqueues. */
tocl_status tocl_gemm_pack_into(int dev, int stream, tocl_dtype dt, const tocl_gemm_config *cfg, int b_side,
                                const tocl_gemm_operand *src, int64_t batch, int64_t rows, int64_t depth,
                                const tocl_gemm_packed *dst);

/* Default configuration of dev for accumulation type acc (F32 or F64). */
void tocl_gemm_default_config(int dev, tocl_dtype acc, tocl_gemm_config *out);

/* Configuration for a packed product of this size: tuned (timing once per
 * size class if tuning is on) or default, then tiles shrunk so that small
 * products still give every compute unit work. */
tocl_status tocl_gemm_pick_config(int dev, int stream, tocl_dtype dtype, int64_t batch, int64_t M, int64_t N,
                                  int64_t K, tocl_gemm_config *out);

/* Kernel `name` of kernels/gemm.cl for storage dtype dt, register block c
 * and `extra` build options (NULL: none), from the shared cache. */
tocl_status tocl_gemm_kernel(int dev, tocl_dtype dt, const tocl_gemm_config *c, const char *extra,
                             const char *name, tocl_ops_kernel **out);

/* gemm_amx.c: 1 if bfloat16 products on dev run on AMX tiles (a PoCL CPU
 * device, a host with AMX, the tiles granted, the probe product right;
 * probed on the first call per device, on `stream`). */
int tocl_gemm_amx_usable(int dev, int stream);

/* g's product on the AMX tiles: A and B packed into bfloat16 tiles, then
 * the tile kernel and gemm.cl's epilogue. p: g resolved by gemm_run (K > 0,
 * offsets and strides of A, B, C, D and bias); the buffers as resolved. */
tocl_status tocl_gemm_amx_run(int dev, int stream, const tocl_gemm_desc *g, const tocl_gemm_params *p,
                              cl_mem abuf, cl_mem bbuf, cl_mem cbuf, cl_mem dbuf, cl_mem biasbuf);

#endif
