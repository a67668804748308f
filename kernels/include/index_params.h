/* index_params.h - parameters of the indexing and data-movement kernels
 * (kernels/index.cl, kernels/shape.cl), shared with runtime/ops/index.c and
 * runtime/ops/shape.c, plus the per-dtype load/store prelude the kernels use.
 * 8-byte fields come first so host and device lay the structs out alike.
 * Sizes stay below the 1024 bytes of kernel arguments OpenCL guarantees. */
#ifndef TOCL_INDEX_PARAMS_H
#define TOCL_INDEX_PARAMS_H

#ifdef __OPENCL_VERSION__
typedef long tocl_ip_i64;
typedef int tocl_ip_i32;
#else
#include <stdint.h>
typedef int64_t tocl_ip_i64;
typedef int32_t tocl_ip_i32;
#endif

#define TOCL_IDX_MAX_DIMS 10 /* after collapsing; enough for every shape seen in practice */
#define TOCL_IDX_MAX_K 4     /* index tensors of one advanced-indexing op */

/* An indexed move over an iteration space: dims [0, n_par_dims) are spread
 * over work-items, dims [n_par_dims, rank) are walked in row-major order by
 * each work-item (so accumulation into one element happens in a fixed order).
 * Gather: dst[p] = src[src_base(p) + sum_k idx_k(p) * istride_k].
 * Scatter: dst[dst_base(p) + sum_k idx_k(p) * istride_k] op= src[p]. */
typedef struct tocl_idx_params {
    tocl_ip_i64 sizes[TOCL_IDX_MAX_DIMS];
    tocl_ip_i64 dst_strides[TOCL_IDX_MAX_DIMS];
    tocl_ip_i64 src_strides[TOCL_IDX_MAX_DIMS];
    tocl_ip_i64 idx_strides[TOCL_IDX_MAX_K][TOCL_IDX_MAX_DIMS];
    tocl_ip_i64 bound[TOCL_IDX_MAX_K];   /* size of the indexed dim; negatives wrap once */
    tocl_ip_i64 istride[TOCL_IDX_MAX_K]; /* its stride in the indexed tensor */
    tocl_ip_i64 idx_off[TOCL_IDX_MAX_K];
    tocl_ip_i64 dst_off, src_off;
    tocl_ip_i64 n_par, n_ser; /* products of the parallel and serial sizes */
    tocl_ip_i64 skip;         /* index value that is ignored when has_skip (padding_idx) */
    tocl_ip_i32 rank, n_par_dims, has_skip, pad;
} tocl_idx_params;

/* Per-dim coordinate remap: dst coordinate c reads src coordinate f(c). */
enum {
    TOCL_RM_ID = 0,   /* s = c */
    TOCL_RM_FLIP,     /* s = n - 1 - c */
    TOCL_RM_ROLL,     /* s = (c - shift) mod n, shift in [0, n) */
    TOCL_RM_CONST,    /* s = c - shift; outside [0, n): the pad value */
    TOCL_RM_REFLECT,  /* s = c - shift, mirrored at the edges (edge not repeated) */
    TOCL_RM_REPLICATE,/* s = clamp(c - shift, 0, n - 1) */
    TOCL_RM_CIRCULAR  /* s = (c - shift) mod n */
};

typedef struct tocl_remap_params {
    tocl_ip_i64 sizes[TOCL_IDX_MAX_DIMS];     /* dst */
    tocl_ip_i64 src_sizes[TOCL_IDX_MAX_DIMS];
    tocl_ip_i64 dst_strides[TOCL_IDX_MAX_DIMS];
    tocl_ip_i64 src_strides[TOCL_IDX_MAX_DIMS];
    tocl_ip_i64 shift[TOCL_IDX_MAX_DIMS];
    tocl_ip_i64 dst_off, src_off, n;
    tocl_ip_i64 diag;                          /* tril/triu diagonal */
    tocl_ip_i32 mode[TOCL_IDX_MAX_DIMS];
    tocl_ip_i32 rank, tri;                     /* tri: 0 none, 1 tril, 2 triu (last two dims) */
} tocl_remap_params;

/* cat (shape.cl: tocl_shape_cat): up to TOCL_CAT_MAX sources of dst's dtype
 * in one launch, into dst, or sources from `split` on into a second
 * destination of dst's layout (tocl_shape_cat_pair). Source k covers
 * [start[k], start[k] + len[k]) of its destination's dim CAT_AXIS (the rank
 * and axis are build options); its rows (of the last dim) are NDRange rows
 * rowbase[k]..; the other dims are dst's. */
#define TOCL_CAT_MAX 4
typedef struct tocl_cat_params {
    tocl_ip_i64 sizes[TOCL_IDX_MAX_DIMS];      /* dst */
    tocl_ip_i64 dst_strides[TOCL_IDX_MAX_DIMS];
    tocl_ip_i64 src_strides[TOCL_CAT_MAX][TOCL_IDX_MAX_DIMS];
    tocl_ip_i64 src_off[TOCL_CAT_MAX];
    tocl_ip_i64 start[TOCL_CAT_MAX];           /* where each source starts along the axis of its destination */
    tocl_ip_i64 len[TOCL_CAT_MAX];             /* and its size there */
    tocl_ip_i64 rowbase[TOCL_CAT_MAX];         /* first NDRange row of each source's band */
    tocl_ip_i64 dst_off;
    tocl_ip_i64 dst1_off;                      /* sources from `split` on go to the second destination */
    tocl_ip_i64 split;                         /* (tocl_shape_cat_pair: a KV cache's keys and values) */
} tocl_cat_params;

/* cat as contiguous runs (shape.cl: tocl_shape_cat_runs): source k is, for
 * each outer index o < outer, len[k] elements from src_off[k] + o *
 * src_stride[k] to dst_off (dst1_off from `split` on) + start[k] + o *
 * dst_stride; its outer indices are the NDRange rows rowbase[k].. . A
 * struct of its own: on PoCL the same kernel taking tocl_cat_params (632
 * bytes) measured 11.7 us for a KV cache's cat pair, with this (200) 7.7
 * (docs/design.md, "Round two"). */
typedef struct tocl_cat_runs_params {
    tocl_ip_i64 len[TOCL_CAT_MAX], start[TOCL_CAT_MAX], src_off[TOCL_CAT_MAX], src_stride[TOCL_CAT_MAX];
    tocl_ip_i64 rowbase[TOCL_CAT_MAX];
    tocl_ip_i64 outer, dst_stride, dst_off, dst1_off, split;
} tocl_cat_runs_params;

#ifdef __OPENCL_VERSION__
/* Storage type T and compute type ACC of one dtype, chosen with -DDT_<name>;
 * LD/ST convert between them (float16/bfloat16 computed in float). */
#if defined(DT_F64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#if defined(DT_BOOL)
typedef uchar T; typedef int ACC;
#define LD(p, i) ((ACC)((p)[i] != 0))
#define ST(p, i, v) ((p)[i] = (uchar)((v) != 0))
#elif defined(DT_U8)
typedef uchar T; typedef int ACC;
#elif defined(DT_I8)
typedef char T; typedef int ACC;
#elif defined(DT_I16)
typedef short T; typedef int ACC;
#elif defined(DT_I32)
typedef int T; typedef int ACC;
#elif defined(DT_I64)
typedef long T; typedef long ACC;
#elif defined(DT_F16)
typedef half T; typedef float ACC;
#define LD(p, i) vload_half((i), (p))
#define ST(p, i, v) vstore_half_rte((v), (i), (p))
#define IS_FLOAT 1
#elif defined(DT_BF16)
typedef ushort T; typedef float ACC;
#define LD(p, i) as_float((uint)(p)[i] << 16)
inline ushort tocl_to_bf16(float v) {
    uint u = as_uint(v);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (ushort)0x7fc0;
    return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
#define ST(p, i, v) ((p)[i] = tocl_to_bf16(v))
#define IS_FLOAT 1
#elif defined(DT_F32)
typedef float T; typedef float ACC;
#define IS_FLOAT 1
#elif defined(DT_F64)
typedef double T; typedef double ACC;
#define IS_FLOAT 1
#elif defined(DT_B1)
typedef uchar T; /* move-only kernels: element size 1, 2, 4, 8 */
#elif defined(DT_B2)
typedef ushort T;
#elif defined(DT_B4)
typedef uint T;
#elif defined(DT_B8)
typedef ulong T;
#endif
#ifndef LD
#define LD(p, i) ((ACC)(p)[i])
#define ST(p, i, v) ((p)[i] = (T)(v))
#endif
#ifndef IS_FLOAT
#define IS_FLOAT 0
#endif
#endif /* __OPENCL_VERSION__ */

#endif
