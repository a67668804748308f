/* nn_params.h - parameters of the row kernels of kernels/softmax.cl,
 * norm.cl and loss.cl, shared with runtime/ops/{softmax,norm,loss}.c, and
 * (kernel side only) the storage load/store macros those kernels use.
 *
 * Row geometry: row r starts at base(r) = (r / inner) * so + (r % inner) * si
 * and its element j (0 <= j < n) lies at base(r) + (j / b) * sa + (j % b).
 * Softmax over the last dim: inner 1, so n, b n. Softmax over another dim
 * of [outer, n, inner]: so n * inner, si 1, b 1, sa inner. Batch norm over
 * [N, C, HW]: rows C, inner C, si HW, b HW, sa C * HW. 8-byte fields first
 * so host and device lay the structs out identically. */
#ifndef TOCL_NN_PARAMS_H
#define TOCL_NN_PARAMS_H

#ifdef __OPENCL_VERSION__
typedef long tocl_nn_i64;
typedef int tocl_nn_i32;
typedef float tocl_nn_f32;
#if defined(NN_ACC_F64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double tocl_nn_f64;
#define NN_REAL(d, f) (d)
#else
typedef ulong tocl_nn_f64; /* a double's bits, never read: the device may lack cl_khr_fp64 */
#define NN_REAL(d, f) (f)
#endif
#else
#include <stdint.h>
typedef int64_t tocl_nn_i64;
typedef int32_t tocl_nn_i32;
typedef float tocl_nn_f32;
typedef double tocl_nn_f64;
#endif

#define TOCL_NN_LOCAL_MAX 256 /* work-group size of the one-group-per-row kernels */

typedef struct tocl_nn_rows {
    tocl_nn_i64 rows, n;
    tocl_nn_i64 inner, so, si; /* row start, see above */
    tocl_nn_i64 b, sa;         /* element position, see above */
    tocl_nn_i64 x_off, y_off, g_off, z_off; /* element offsets of the row operands */
} tocl_nn_rows;

/* Normalisation: weight/bias index of element j of row r is
 * (r % wmod) * wrs + j / wdiv (layer norm: wmod 1, wdiv 1; batch norm:
 * wmod rows, wrs 1, wdiv n; group norm: wmod G, wrs C / G, wdiv HW). */
typedef struct tocl_nn_norm {
    tocl_nn_i64 wmod, wrs, wdiv;
    tocl_nn_i64 w_off, b_off;      /* weight and bias (bias shares weight's dtype) */
    tocl_nn_i64 mean_off, rstd_off; /* saved statistics, one per row */
    tocl_nn_i64 rm_off, rv_off;     /* running mean and variance, one per row */
    tocl_nn_i64 dw_off, db_off;     /* weight and bias gradients */
    tocl_nn_f64 eps, momentum;     /* read in double arithmetic */
    tocl_nn_f32 epsf, momentumf;   /* the same in float arithmetic */
    tocl_nn_i32 flags;              /* TOCL_NN_* below */
    tocl_nn_i32 pad;
} tocl_nn_norm;

#define TOCL_NN_HAS_W 1
#define TOCL_NN_HAS_B 2
#define TOCL_NN_GIVEN_STATS 4  /* forward: use running stats (eval); backward: eval formula */
#define TOCL_NN_WRITE_STATS 8  /* forward: store mean and rstd */
#define TOCL_NN_UPDATE_RUNNING 16
#define TOCL_NN_WRITE_Y 32     /* forward: y; backward: dx */
#define TOCL_NN_STORE_DW 64    /* backward: dw[r] := per-row sum (batch norm) */
#define TOCL_NN_STORE_DB 128   /* backward: db[r] := per-row sum (batch norm) */
#define TOCL_NN_RUNS 256       /* CPU, one row per work-item: walk a row as runs of b (batch norm) */

/* Affine gradients of layer and group norm, one work-item per column c:
 * element (a, c, k) for a < A, k < B lies at a * sa + c * sc + k; its
 * statistics at a * ss + c / cdiv. */
typedef struct tocl_nn_cols {
    tocl_nn_i64 cols, A, B, sa, sc, ss, cdiv;
    tocl_nn_i64 x_off, g_off, mean_off, rstd_off, dw_off, db_off;
} tocl_nn_cols;

/* Pointwise losses (kind) and their reductions. */
#define TOCL_NN_LOSS_MSE 0
#define TOCL_NN_LOSS_L1 1
#define TOCL_NN_LOSS_SMOOTH_L1 2 /* p = beta */
#define TOCL_NN_LOSS_HUBER 3     /* p = delta */
#define TOCL_NN_LOSS_BCE 4       /* weight optional */
#define TOCL_NN_RED_NONE 0
#define TOCL_NN_RED_MEAN 1
#define TOCL_NN_RED_SUM 2

typedef struct tocl_nn_loss {
    tocl_nn_i64 n;  /* elements (dense) */
    tocl_nn_i64 x_off, t_off, w_off, y_off, g_off, z_off, flag_off;
    tocl_nn_f64 p;  /* beta or delta (double arithmetic) */
    tocl_nn_f32 pf; /* the same in float arithmetic */
    tocl_nn_i32 pad;
    tocl_nn_i32 kind, reduction;
    tocl_nn_i32 has_w, g_scalar; /* backward: grad_output is one value */
} tocl_nn_loss;

/* Negative log likelihood: input [N, C, S] dense, target [N, S] int64. */
typedef struct tocl_nn_nll {
    tocl_nn_i64 N, C, S;
    tocl_nn_i64 ignore_index;
    tocl_nn_i64 x_off, t_off, w_off, y_off, tw_off, g_off, z_off, flag_off;
    tocl_nn_i32 reduction, has_w;
} tocl_nn_nll;

#ifdef __OPENCL_VERSION__
/* Storage access by role: the host passes e.g. -DX_T=half -DLDX=NN_LD_F16
 * -DSTX=NN_ST_F16. Values are computed in acc_t: float, or double when any
 * operand is float64. */
#if defined(NN_ACC_F64)
typedef double acc_t;
#else
typedef float acc_t;
#endif
#define NN_LD_F32(p, i) ((acc_t)(p)[i])
#define NN_LD_F64(p, i) ((acc_t)(p)[i])
#define NN_LD_F16(p, i) ((acc_t)vload_half((i), (p)))
#define NN_LD_BF16(p, i) ((acc_t)as_float((uint)(p)[i] << 16))
#define NN_ST_F32(p, i, v) ((p)[i] = (float)(v))
#define NN_ST_F64(p, i, v) ((p)[i] = (v))
#define NN_ST_F16(p, i, v) vstore_half_rte((float)(v), (i), (p))
#define NN_ST_BF16(p, i, v) ((p)[i] = nn_f2bf((float)(v)))
inline ushort nn_f2bf(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (ushort)0x7fc0;
    return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* NN_VEC (CPU devices, one row per work-item): rows that are contiguous
 * are read and written NN_VW elements at a time, as accv_t vectors, by
 * role: LDVX is LDX's macro with a V appended (NN_LD_F16 -> NN_LD_F16V),
 * so the host's options stay as they are. */
#if defined(NN_VEC)
#define NN_VW 8
#if defined(NN_ACC_F64)
typedef double8 accv_t;
#define NN_CVTV(v) convert_double8(v)
#else
typedef float8 accv_t;
#define NN_CVTV(v) convert_float8(v)
#endif
#define NN_LD_F32V(p, i) NN_CVTV(vload8(0, (p) + (i)))
#define NN_LD_F64V(p, i) NN_CVTV(vload8(0, (p) + (i)))
/* half lanes one by one: PoCL's vload_half8 / vstore_half8 use aligned
 * vector moves and fault on a row that starts at an odd half */
#define NN_LD_F16V(p, i) NN_CVTV(nn_ld_half8((p) + (i)))
#define NN_LD_BF16V(p, i) NN_CVTV(as_float8(convert_uint8(vload8(0, (p) + (i))) << 16))
#define NN_ST_F32V(p, i, v) vstore8(convert_float8(v), 0, (p) + (i))
#define NN_ST_F64V(p, i, v) vstore8((v), 0, (p) + (i))
#define NN_ST_F16V(p, i, v) nn_st_half8((p) + (i), convert_float8(v))
#define NN_ST_BF16V(p, i, v) vstore8(nn_f2bf8(convert_float8(v)), 0, (p) + (i))
#define NN_CAT2(a, b) a##b
#define NN_CAT(a, b) NN_CAT2(a, b)
#define LDVX NN_CAT(LDX, V)
#define LDVY NN_CAT(LDY, V)
#define LDVG NN_CAT(LDG, V)
#define LDVW NN_CAT(LDW, V)
#define STVY NN_CAT(STY, V)
#define STVZ NN_CAT(STZ, V)
inline float8 nn_ld_half8(__global const half *p)
{
    return (float8)(vload_half(0, p), vload_half(1, p), vload_half(2, p), vload_half(3, p), vload_half(4, p),
                    vload_half(5, p), vload_half(6, p), vload_half(7, p));
}
inline void nn_st_half8(__global half *p, float8 v)
{
    vstore_half_rte(v.s0, 0, p), vstore_half_rte(v.s1, 1, p), vstore_half_rte(v.s2, 2, p);
    vstore_half_rte(v.s3, 3, p), vstore_half_rte(v.s4, 4, p), vstore_half_rte(v.s5, 5, p);
    vstore_half_rte(v.s6, 6, p), vstore_half_rte(v.s7, 7, p);
}
inline ushort8 nn_f2bf8(float8 f)
{
    uint8 u = as_uint8(f);
    ushort8 r = convert_ushort8((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    return select(r, (ushort8)0x7fc0, convert_short8((u & 0x7fffffffu) > 0x7f800000u));
}
inline acc_t nn_hsum(accv_t v)
{
    return ((v.s0 + v.s1) + (v.s2 + v.s3)) + ((v.s4 + v.s5) + (v.s6 + v.s7));
}
/* Largest lane; the lanes hold no NaN. */
inline acc_t nn_hmax(accv_t v)
{
    return fmax(fmax(fmax(v.s0, v.s1), fmax(v.s2, v.s3)), fmax(fmax(v.s4, v.s5), fmax(v.s6, v.s7)));
}
/* The row is contiguous: element j at j (tocl_nn_rows.b covers it). */
#define NN_VEC_ROW(p) ((p).b >= (p).n)
#endif

/* Element j of row r (see tocl_nn_rows). */
inline long nn_base(const tocl_nn_rows *p, long r)
{
    return (r / p->inner) * p->so + (r % p->inner) * p->si;
}
inline long nn_elem(const tocl_nn_rows *p, long j)
{
    if (p->b >= p->n)
        return j;
    long a = j / p->b;
    return a * p->sa + (j - a * p->b);
}

/* One work-group per row (lane = local id) or, with -DNN_ITEM, one work-item
 * per row (lane 0 of 1). nn_sum folds one value per lane into every lane. */
/* NN_ROW_GUARD: leave work-items past the last row; only in item mode,
 * because PoCL miscompiles a return ahead of a barrier (groups are rows). */
#if defined(NN_ITEM)
#define NN_ROW_GUARD(r, rows) if ((r) >= (rows)) return
#define NN_ROW() ((long)get_global_id(0))
#define NN_LANE 0
#define NN_LANES 1
#define NN_SCRATCH(name)
#define nn_sum(v, s) (v)
#else
#define NN_ROW_GUARD(r, rows)
#define NN_ROW() ((long)get_group_id(0))
#define NN_LANE ((long)get_local_id(0))
#define NN_LANES ((long)get_local_size(0))
#define NN_SCRATCH(name) __local acc_t name[TOCL_NN_LOCAL_MAX]
inline acc_t nn_sum(acc_t v, __local acc_t *s)
{
    int l = get_local_id(0), m = get_local_size(0);
    s[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = TOCL_NN_LOCAL_MAX / 2; h > 0; h >>= 1) {
        if (l < h && l + h < m)
            s[l] += s[l + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    acc_t r = s[0];
    barrier(CLK_LOCAL_MEM_FENCE); /* s may be reused at once */
    return r;
}
#endif
#endif /* __OPENCL_VERSION__ */

#endif
