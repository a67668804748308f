/* index.h - indexing and data-movement ops: gather/scatter through index
 * tensors (index_select, gather, scatter*, index_add/copy/fill, advanced
 * indexing, take/put, embedding), index bounds, stream compaction (nonzero,
 * masked_select, masked_scatter) and coordinate remaps (flip, roll, pads,
 * tril/triu) with the pad backward.
 *
 * Every call only enqueues work, except the few documented to read a small
 * result back to the host (index bounds, compaction counts): PyTorch needs
 * those values on the host to raise an error or size an output. */
#ifndef TOCL_INDEX_H
#define TOCL_INDEX_H

#include <stdint.h>

#include "tocl/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TOCL_INDEX_MAX_INDICES 4 /* index tensors per op */
#define TOCL_INDEX_MAX_DIMS 10   /* iteration rank after collapsing dims */

/* How a scatter combines a value with the destination element. */
typedef enum tocl_index_reduce {
    TOCL_INDEX_ASSIGN = 0,
    TOCL_INDEX_ADD,      /* dst += alpha * v (bool: logical or) */
    TOCL_INDEX_MUL,      /* dst *= v (bool: logical and) */
    TOCL_INDEX_MAX,      /* NaN propagates */
    TOCL_INDEX_MIN
} tocl_index_reduce;

/* The index tensors of one op. Each idx[k] (int64, or int32 when all are)
 * has the op's iteration shape, stride 0 where it broadcasts. Its values
 * address a dim of size bound[k] with element stride stride[k] in the
 * indexed tensor; negative values wrap once (the caller has rejected the
 * ones PyTorch rejects). Iteration dims whose bit is set in serial_dims are
 * walked in row-major order by one work-item: set them where several
 * elements may hit one destination and a fixed order is wanted
 * (accumulation, or deterministic last-write-wins). has_skip: index value
 * `skip` is ignored (embedding's padding_idx). */
typedef struct tocl_index_spec {
    int nidx;
    tocl_tensor idx[TOCL_INDEX_MAX_INDICES];
    int64_t bound[TOCL_INDEX_MAX_INDICES];
    int64_t stride[TOCL_INDEX_MAX_INDICES];
    uint32_t serial_dims;
    int has_skip;
    int64_t skip;
} tocl_index_spec;

/* dst[p] = src[src_base(p) + sum_k idx_k(p) * stride_k] over dst's shape;
 * src has dst's shape with stride 0 in the indexed dims (its data address
 * is element 0 of the indexed tensor). Same dtype. */
tocl_status tocl_index_gather(int dev, int stream, const tocl_tensor *dst, const tocl_tensor *src,
                              const tocl_index_spec *ix);

/* dst[dst_base(p) + sum_k idx_k(p) * stride_k] op= v(p) over the iteration
 * shape of ix (that of src, or of idx[0] when src is NULL and `value`
 * scatters a scalar). dst has the iteration shape with stride 0 in the
 * indexed dims. alpha scales v for TOCL_INDEX_ADD. */
tocl_status tocl_index_scatter(int dev, int stream, const tocl_tensor *dst, const tocl_tensor *src,
                               tocl_scalar value, tocl_index_reduce op, tocl_scalar alpha,
                               const tocl_index_spec *ix);

/* Smallest and largest value of an int32/int64 tensor (numel > 0). Reads
 * two numbers per work-group back: one small host wait, which every
 * indexing op takes once so an out-of-range index raises an error naming it
 * before anything is written. */
tocl_status tocl_index_minmax(int dev, int stream, const tocl_tensor *idx, int64_t *min, int64_t *max);
/* The same check without a host wait, for indices the caller already
 * knows to lie in [lo, hi] (a fact that a write bypassing PyTorch's version
 * counter can break): the bounds are read back later and a value outside
 * [lo, hi] fails the next synchronization, as CUDA reports a device-side
 * assert. Not while a graph is being captured. On a stream other than dev's
 * current one it checks at once (returning TOCL_E_INVALID for a bad index). */
tocl_status tocl_index_check_later(int dev, int stream, const tocl_tensor *idx, int64_t lo, int64_t hi);

/* dst /= count where count > 0 (floor division for integer dtypes); count
 * is int64 with dst's shape. Used by scatter_reduce(mean). */
tocl_status tocl_index_div_count(int dev, int stream, const tocl_tensor *dst, const tocl_tensor *count);

/* Stream compaction over the row-major order of a mask of any dtype
 * (nonzero = true). tocl_mask_count counts and reads the per-chunk counts
 * back (host wait: the output size depends on the data); the scan owns a
 * device buffer until tocl_mask_scan_release. */
typedef struct tocl_mask_scan {
    tocl_addr offsets; /* int64 per chunk: exclusive prefix of the counts */
    int64_t chunk, nchunks, total;
} tocl_mask_scan;

tocl_status tocl_mask_count(int dev, int stream, const tocl_tensor *mask, tocl_mask_scan *out);
void tocl_mask_scan_release(tocl_mask_scan *scan);
/* out: contiguous int64 (total, mask->ndim) coordinates. */
tocl_status tocl_mask_nonzero(int dev, int stream, const tocl_tensor *mask, const tocl_mask_scan *scan,
                              const tocl_tensor *out);
/* out (1-D, total elements) := src where mask (src has mask's shape). */
tocl_status tocl_mask_select(int dev, int stream, const tocl_tensor *mask, const tocl_mask_scan *scan,
                             const tocl_tensor *src, const tocl_tensor *out);
/* dst where mask := source[0 .. total) in order (source 1-D contiguous). */
tocl_status tocl_mask_scatter(int dev, int stream, const tocl_tensor *mask, const tocl_mask_scan *scan,
                              const tocl_tensor *dst, const tocl_tensor *source);

/* Coordinate remaps, one mode per dim (TOCL_REMAP_*); dst and src have the
 * same ndim and dtype. shift: roll amount in [0, n) or pad before. */
typedef enum tocl_remap_mode {
    TOCL_REMAP_ID = 0,
    TOCL_REMAP_FLIP,
    TOCL_REMAP_ROLL,
    TOCL_REMAP_CONST,
    TOCL_REMAP_REFLECT,
    TOCL_REMAP_REPLICATE,
    TOCL_REMAP_CIRCULAR
} tocl_remap_mode;

tocl_status tocl_shape_remap(int dev, int stream, const tocl_tensor *dst, const tocl_tensor *src,
                             const tocl_remap_mode *modes, const int64_t *shift, tocl_scalar pad_value);
/* dst = tril (upper = 0) or triu (upper = 1) of src over the last two dims. */
tocl_status tocl_shape_tri(int dev, int stream, const tocl_tensor *dst, const tocl_tensor *src, int upper,
                           int64_t diagonal);
/* dst = cat(src[0..nsrc), dim axis) in one launch: 1..TOCL_CAT_MAX_SOURCES
 * sources of dst's dtype (of at most 8 bytes) and ndim, equal to dst in
 * every dim but axis, whose sizes there sum to dst's; any strides and
 * offsets. */
#define TOCL_CAT_MAX_SOURCES 4
tocl_status tocl_shape_cat(int dev, int stream, const tocl_tensor *dst, int nsrc, const tocl_tensor *const *src,
                           int axis);
/* Two cats in one launch (a decoding step's keys and values): dst0 =
 * cat(src[0..nsrc0)), dst1 = cat(src[nsrc0..nsrc)), along the same axis,
 * nsrc <= TOCL_CAT_MAX_SOURCES, each destination at least one source, the
 * two destinations of one dtype, sizes and strides. */
tocl_status tocl_shape_cat_pair(int dev, int stream, const tocl_tensor *dst0, const tocl_tensor *dst1, int nsrc0,
                                int nsrc, const tocl_tensor *const *src, int axis);
/* Backward of reflection/replication padding: grad_in[s] = sum of
 * grad_out[c] over every c that reads s, in row-major order of c (so the
 * result is deterministic). Padded dims are the last npad (1..3); before[i]
 * is the pad before dim ndim - npad + i. Floating dtypes. */
tocl_status tocl_shape_pad_backward(int dev, int stream, const tocl_tensor *grad_in, const tocl_tensor *grad_out,
                                    tocl_remap_mode mode, int npad, const int64_t *before);

#ifdef __cplusplus
}
#endif
#endif
