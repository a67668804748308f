/* gemm.cl - matrix multiply: C = act(alpha * op(A) @ op(B) + beta * D + bias),
 * batched, any strides, float32/float16/bfloat16 storage with float32
 * accumulation, float64 where the device has it.
 *
 * Build options (structure only, never sizes):
 *   -DTOCL_ST_F32 | _F16 | _BF16 | _F64   storage type of A, B, C, D, bias
 *   -DGEMM_RM=r -DGEMM_VW=w -DGEMM_NV=v   register block: r rows x (v vectors of w) columns
 *   -DGEMM_AMX                            the AMX kernels only (bfloat16)
 *
 * Three kernel shapes share one epilogue:
 *   tocl_gemm_pack     copies an operand, with any strides and dtype, into
 *                      k-major panels of the accumulation type (see
 *                      gemm_params.h); once per call, O(size of the operand).
 *   tocl_gemm_cpu      one work-item per work-group: a GotoBLAS-style macro
 *                      kernel walking a tm x tn tile of C in K blocks of kc,
 *                      micro-panel of B in L1, block of A in L2, partial sums
 *                      of the tile in local memory (which is ordinary cached
 *                      memory on a CPU).
 *   tocl_gemm_gpu      one register block per work-item over the whole K;
 *                      neighbouring work-items read neighbouring addresses of
 *                      row-layout panels.
 *   tocl_gemm_direct   one element per work-item straight from the strided
 *                      operands: tiny products and matrix-vector shapes where
 *                      packing would cost more than it saves.
 *   tocl_gemm_dot      few rows, both operands contiguous along k (x @ W^T,
 *                      a linear layer at decoding time): a 4 x 4 block of
 *                      dot products per step, 8 lanes of k wide, read in
 *                      place (16-bit storage widened as loaded).
 *   tocl_gemm_rows     few rows, B's rows contiguous along n (x @ W with W
 *                      stored [K, N]): 8 rows x 16 columns per step, B read
 *                      in place one vector per k.
 *   tocl_gemm_amx      bfloat16 on Intel AMX tiles (-DGEMM_AMX, built only
 *                      where runtime/ops/gemm_amx.c found them working),
 *                      with tocl_gemm_amx_pack; see that section. */
#include "gemm_params.h"

#if defined(TOCL_ST_F64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double acc_t;
#define ACC_NAME double
typedef double st_t;
#define LOAD_ST(p, i) ((p)[i])
#define STORE_ST(p, i, v) ((p)[i] = (v))
#elif defined(TOCL_ST_F16)
typedef float acc_t;
#define ACC_NAME float
typedef half st_t;
#define LOAD_ST(p, i) vload_half((i), (p))
#define STORE_ST(p, i, v) vstore_half_rte((v), (i), (p))
#elif defined(TOCL_ST_BF16)
typedef float acc_t;
#define ACC_NAME float
typedef ushort st_t;
#define LOAD_ST(p, i) as_float((uint)(p)[i] << 16)
#define STORE_ST(p, i, v) ((p)[i] = tocl_f2bf(v))
/* float -> bfloat16 bits, round to nearest even, NaN -> 0x7fc0 (as c10::BFloat16). */
inline ushort tocl_f2bf(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (ushort)0x7fc0;
    return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
#else
typedef float acc_t;
#define ACC_NAME float
typedef float st_t;
#define LOAD_ST(p, i) ((p)[i])
#define STORE_ST(p, i, v) ((p)[i] = (v))
#endif

#ifndef GEMM_RM
#define GEMM_RM 4
#endif
#ifndef GEMM_VW
#define GEMM_VW 4
#endif
#ifndef GEMM_NV
#define GEMM_NV 1
#endif
#define GEMM_RN (GEMM_VW * GEMM_NV)

#define GEMM_CAT_(a, b) a##b
#define GEMM_CAT(a, b) GEMM_CAT_(a, b)
typedef GEMM_CAT(ACC_NAME, GEMM_VW) accv_t;
#define VLOAD GEMM_CAT(vload, GEMM_VW)
#define VSTORE GEMM_CAT(vstore, GEMM_VW)

/* GEMM_VW consecutive storage elements <-> one accumulation vector. */
#if defined(TOCL_ST_F16)
#define VLOAD_ST(p) GEMM_CAT(vload_half, GEMM_VW)(0, (p))
#define VSTORE_ST(p, v) GEMM_CAT(GEMM_CAT(vstore_half, GEMM_VW), _rte)((v), 0, (p))
#elif defined(TOCL_ST_BF16)
typedef GEMM_CAT(uint, GEMM_VW) uintv_t;
#define VLOAD_ST(p) GEMM_CAT(as_float, GEMM_VW)(GEMM_CAT(convert_uint, GEMM_VW)(VLOAD(0, (p))) << 16)
inline void gemm_vstore_bf16(__global ushort *p, accv_t v)
{
    uintv_t u = GEMM_CAT(as_uint, GEMM_VW)(v);
    uintv_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    r = select(r, (uintv_t)0x7fc0u, isnan(v));
    VSTORE(GEMM_CAT(convert_ushort, GEMM_VW)(r), 0, p);
}
#define VSTORE_ST(p, v) gemm_vstore_bf16((p), (v))
#else
#define VLOAD_ST(p) VLOAD(0, (p))
#define VSTORE_ST(p, v) VSTORE((v), 0, (p))
#endif

/* ------------------------------------------------------------------ epilogue */

/* gemm_act(acc_t x, int act) and gemm_act_v(accv_t x, int act): the
 * activations, rendered from the IR op table by
 * runtime/codegen/gemm_epilogue.c and put in place of the next line when the
 * program is built. */
/* TOCL_GENERATED */

/* Store one finished sum of C[b, m, n] through the epilogue. */
inline void gemm_store(__global st_t *C, __global const st_t *D, __global const st_t *bias,
                       const tocl_gemm_params *p, long b, long m, long n, acc_t sum, acc_t alpha, acc_t beta)
{
    acc_t v = alpha * sum;
    if (p->has_d)
        v += beta * LOAD_ST(D, p->d_off + b * p->d_bs + m * p->d_rs + n * p->d_cs);
    if (p->bias_mode == TOCL_GEMM_BIAS_ROW)
        v += LOAD_ST(bias, p->bias_off + b * p->bias_bs + n * p->bias_s);
    else if (p->bias_mode == TOCL_GEMM_BIAS_COL)
        v += LOAD_ST(bias, p->bias_off + b * p->bias_bs + m * p->bias_s);
    if (p->act)
        v = gemm_act(v, p->act);
    STORE_ST(C, p->c_off + b * p->c_bs + m * p->c_rs + n * p->c_cs, v);
}

#ifndef GEMM_AMX /* the AMX program (below) holds only its own kernels */
/* ------------------------------------------------------------------ packing */

/* One work-item per (k, panel, batch): W rows of column k of the operand
 * (rows past the end are zero). Grid (k, panel, batch), or (panel, k,
 * batch) with panel_fast. */
__kernel void tocl_gemm_pack(__global const st_t *src, __global acc_t *dst, tocl_gemm_pack_params p)
{
    long k = get_global_id(0), panel = get_global_id(1), b = get_global_id(2);
    if (p.panel_fast) {
        long t = k;
        k = panel, panel = t;
        if (panel * p.width >= p.rows)
            return;
    }
    if (k >= p.depth)
        return;
    long r0 = panel * p.width;
    __global const st_t *s = src + p.off + b * p.bs + k * p.ks;
    __global acc_t *d = dst + p.dst_off + b * p.dst_bs + panel * p.depth * p.width + k * p.width;
    long n = min(p.width, p.rows - r0);
    for (long r = 0; r < n; r++)
        d[r] = LOAD_ST(s, (r0 + r) * p.rs);
    for (long r = max(n, 0L); r < p.width; r++)
        d[r] = (acc_t)0;
}
#endif /* GEMM_AMX */

/* ------------------------------------------------------------------ register block */

/* acc[RM][NV] += A panel (stride aw per k) x B panel (stride bw per k), kl steps. */
#define GEMM_MICRO(acc, ap, aw, bp, bw, kl)                                   \
    for (long k_ = 0; k_ < (kl); k_++) {                                      \
        accv_t bv_[GEMM_NV];                                                  \
        _Pragma("unroll") for (int v_ = 0; v_ < GEMM_NV; v_++)                \
            bv_[v_] = VLOAD(v_, (bp) + k_ * (bw));                            \
        _Pragma("unroll") for (int r_ = 0; r_ < GEMM_RM; r_++) {              \
            accv_t a_ = (accv_t)((ap)[k_ * (aw) + r_]);                       \
            _Pragma("unroll") for (int v_ = 0; v_ < GEMM_NV; v_++)            \
                acc[r_][v_] = fma(a_, bv_[v_], acc[r_][v_]);                  \
        }                                                                     \
    }

/* Finish a register block at (m0, n0): epilogue and edge masks. */
inline void gemm_store_block(accv_t acc[GEMM_RM][GEMM_NV], __global st_t *C, __global const st_t *D,
                             __global const st_t *bias, const tocl_gemm_params *p, long b, long m0, long n0,
                             acc_t alpha, acc_t beta)
{
    /* Whole block inside C with unit column strides: vector epilogue. */
    if (m0 + GEMM_RM <= p->M && n0 + GEMM_RN <= p->N && p->c_cs == 1 && (!p->has_d || p->d_cs == 1) &&
        (p->bias_mode != TOCL_GEMM_BIAS_ROW || p->bias_s == 1)) {
        __global st_t *c = C + p->c_off + b * p->c_bs + m0 * p->c_rs + n0;
        __global const st_t *d = D + p->d_off + b * p->d_bs + m0 * p->d_rs + n0;
        __global const st_t *bi = bias + p->bias_off + b * p->bias_bs;
        for (int r = 0; r < GEMM_RM; r++) {
            _Pragma("unroll") for (int v = 0; v < GEMM_NV; v++) {
                accv_t x = alpha * acc[r][v];
                if (p->has_d)
                    x += beta * VLOAD_ST(d + r * p->d_rs + v * GEMM_VW);
                if (p->bias_mode == TOCL_GEMM_BIAS_ROW)
                    x += VLOAD_ST(bi + n0 + v * GEMM_VW);
                else if (p->bias_mode == TOCL_GEMM_BIAS_COL)
                    x += (accv_t)LOAD_ST(bi, (m0 + r) * p->bias_s);
                if (p->act)
                    x = gemm_act_v(x, p->act);
                VSTORE_ST(c + r * p->c_rs + v * GEMM_VW, x);
            }
        }
        return;
    }
    acc_t row[GEMM_RN];
    for (int r = 0; r < GEMM_RM; r++) {
        if (m0 + r >= p->M)
            break;
        _Pragma("unroll") for (int v = 0; v < GEMM_NV; v++)
            VSTORE(acc[r][v], v, row);
        int nn = (int)min((long)GEMM_RN, p->N - n0);
        for (int c = 0; c < nn; c++)
            gemm_store(C, D, bias, p, b, m0 + r, n0 + c, row[c], alpha, beta);
    }
}


/* ------------------------------------------------------------------ CPU macro kernel */

/* acc[RM][NV] += A rows read in place x B panel (stride bw per k), kl
 * steps: arow[r] points at row r's first element of the block, a_ks apart
 * per k (rows past M point at row M - 1; their sums are not stored). */
#define GEMM_MICRO_AD(acc, arow, a_ks, bp, bw, kl)                            \
    for (long k_ = 0; k_ < (kl); k_++) {                                      \
        accv_t bv_[GEMM_NV];                                                  \
        _Pragma("unroll") for (int v_ = 0; v_ < GEMM_NV; v_++)                \
            bv_[v_] = VLOAD(v_, (bp) + k_ * (bw));                            \
        long ko_ = k_ * (a_ks);                                               \
        _Pragma("unroll") for (int r_ = 0; r_ < GEMM_RM; r_++) {              \
            accv_t a_ = (accv_t)(arow[r_][ko_]);                              \
            _Pragma("unroll") for (int v_ = 0; v_ < GEMM_NV; v_++)            \
                acc[r_][v_] = fma(a_, bv_[v_], acc[r_][v_]);                  \
        }                                                                     \
    }

#ifndef GEMM_AMX
/* Work-group (one work-item) = tile [tm x tn] of C; global (tiles_n, tiles_m, batch).
 * part: tm * tn partial sums, kept between K blocks. A is packed, or with
 * a_direct (float storage, a row or a column of A contiguous) read in place
 * through its strides: a register block's RM rows are RM runs along k, or
 * one run of RM per k, either way cached lines, and no packing pass. */
inline __attribute__((always_inline)) void gemm_cpu_tile(
    __global const acc_t *Ap, __global const acc_t *Bp, __global st_t *C, __global const st_t *D,
    __global const st_t *bias, const tocl_gemm_params *pp, acc_t alpha, acc_t beta, __local acc_t *part,
    const int a_direct)
{
    tocl_gemm_params p = *pp;
    long b = get_global_id(2);
    long mt0 = get_global_id(1) * p.tm, nt0 = get_global_id(0) * p.tn;
    long mt1 = min(mt0 + p.tm, p.M), nt1 = min(nt0 + p.tn, p.N);
    if (mt0 >= p.M || nt0 >= p.N)
        return;
    __global const acc_t *A = Ap + p.a_off + b * p.a_bs;
    __global const acc_t *B = Bp + p.b_off + b * p.b_bs;
    long K = p.K, kc = p.kc > 0 ? p.kc : K;
    long a_ps = p.a_ps > 0 ? p.a_ps : K * p.a_w, b_ps = p.b_ps > 0 ? p.b_ps : K * p.b_w;
    for (long k0 = 0;; k0 += kc) {
        long kl = min(kc, K - k0);
        int first = k0 == 0, last = k0 + kc >= K;
        for (long n0 = nt0; n0 < nt1; n0 += GEMM_RN) {
            __global const acc_t *bp = B + (n0 / p.b_w) * b_ps + (n0 % p.b_w) + k0 * p.b_w;
            for (long m0 = mt0; m0 < mt1; m0 += GEMM_RM) {
                __local acc_t *pp = part + ((m0 - mt0) * p.tn + (n0 - nt0));
                accv_t acc[GEMM_RM][GEMM_NV];
                _Pragma("unroll") for (int r = 0; r < GEMM_RM; r++)
                    _Pragma("unroll") for (int v = 0; v < GEMM_NV; v++)
                        acc[r][v] = first ? (accv_t)0 : VLOAD(v, pp + r * p.tn);
                if (a_direct) {
                    __global const acc_t *arow[GEMM_RM];
                    _Pragma("unroll") for (int r = 0; r < GEMM_RM; r++)
                        arow[r] = A + min(m0 + r, p.M - 1) * p.a_rs + k0 * p.a_ks;
                    GEMM_MICRO_AD(acc, arow, p.a_ks, bp, p.b_w, kl);
                } else {
                    __global const acc_t *ap = A + (m0 / p.a_w) * a_ps + (m0 % p.a_w) + k0 * p.a_w;
                    GEMM_MICRO(acc, ap, p.a_w, bp, p.b_w, kl);
                }
                if (last) {
                    gemm_store_block(acc, C, D, bias, &p, b, m0, n0, alpha, beta);
                } else {
                    _Pragma("unroll") for (int r = 0; r < GEMM_RM; r++)
                        _Pragma("unroll") for (int v = 0; v < GEMM_NV; v++)
                            VSTORE(acc[r][v], v, pp + r * p.tn);
                }
            }
        }
        if (last)
            break;
    }
}

__kernel void tocl_gemm_cpu(__global const acc_t *Ap, __global const acc_t *Bp, __global st_t *C,
                            __global const st_t *D, __global const st_t *bias, tocl_gemm_params p, acc_t alpha,
                            acc_t beta, __local acc_t *part)
{
    gemm_cpu_tile(Ap, Bp, C, D, bias, &p, alpha, beta, part, 0);
}

#if !defined(TOCL_ST_F16) && !defined(TOCL_ST_BF16) /* A read in place must be of the accumulation type */
__kernel void tocl_gemm_cpu_ad(__global const acc_t *A, __global const acc_t *Bp, __global st_t *C,
                               __global const st_t *D, __global const st_t *bias, tocl_gemm_params p, acc_t alpha,
                               acc_t beta, __local acc_t *part)
{
    gemm_cpu_tile(A, Bp, C, D, bias, &p, alpha, beta, part, 1);
}
#endif

/* ------------------------------------------------------------------ GPU kernel */

/* One register block per work-item; global (blocks_n, blocks_m, batch). */
__kernel void tocl_gemm_gpu(__global const acc_t *Ap, __global const acc_t *Bp, __global st_t *C,
                            __global const st_t *D, __global const st_t *bias, tocl_gemm_params p, acc_t alpha,
                            acc_t beta)
{
    long b = get_global_id(2);
    long m0 = get_global_id(1) * GEMM_RM, n0 = get_global_id(0) * GEMM_RN;
    if (m0 >= p.M || n0 >= p.N)
        return;
    __global const acc_t *ap = Ap + p.a_off + b * p.a_bs + (m0 / p.a_w) * p.K * p.a_w + (m0 % p.a_w);
    __global const acc_t *bp = Bp + p.b_off + b * p.b_bs + (n0 / p.b_w) * p.K * p.b_w + (n0 % p.b_w);
    accv_t acc[GEMM_RM][GEMM_NV];
    _Pragma("unroll") for (int r = 0; r < GEMM_RM; r++)
        _Pragma("unroll") for (int v = 0; v < GEMM_NV; v++)
            acc[r][v] = (accv_t)0;
    GEMM_MICRO(acc, ap, p.a_w, bp, p.b_w, p.K);
    gemm_store_block(acc, C, D, bias, &p, b, m0, n0, alpha, beta);
}

/* ------------------------------------------------------------------ direct kernel */

/* One element of C per work-item, operands read in place; flat global over
 * (batch, M, N), N fastest. */
__kernel void tocl_gemm_direct(__global const st_t *A, __global const st_t *B, __global st_t *C,
                               __global const st_t *D, __global const st_t *bias, tocl_gemm_params p, acc_t alpha,
                               acc_t beta)
{
    long gid = get_global_id(0);
    long mn = p.M * p.N;
    long b = gid / mn, r = gid - b * mn;
    long m = r / p.N, n = r - m * p.N;
    if (b >= p.batch)
        return;
    __global const st_t *a = A + p.a_off + b * p.a_bs + m * p.a_rs;
    __global const st_t *bb = B + p.b_off + b * p.b_bs + n * p.b_rs;
    acc_t s = 0;
    for (long k = 0; k < p.K; k++)
        s = fma(LOAD_ST(a, k * p.a_ks), LOAD_ST(bb, k * p.b_ks), s);
    gemm_store(C, D, bias, &p, b, m, n, s, alpha, beta);
}

/* ------------------------------------------------------------------ dot */

#if !defined(TOCL_ST_F64)
/* A work-item owns 4 columns of C (4 rows of W when B = W^T) and walks every
 * row of A four at a time; its 4 x K slice of B stays in L1 across them. Each
 * of the 16 sums is a float8 of partial sums over k, folded at the end, then
 * the scalar k tail. Written out by macro, not as arrays: PoCL kept arrays of
 * float8 in memory and ran 8x slower. Rows and columns past the end are
 * clamped to the last one for the loads and not stored. For M <= 64 this
 * beat packing (the weight's pack alone cost more than the product):
 * [32, 256] x [256, 768]: 143 vs 246 us; M = 1: 22 vs 367 us. 16-bit
 * storage is widened as it is loaded (bfloat16 decoding: M = 1 and 4 x
 * [1024, 3072] ran 4.6x and 18x faster than the direct kernel). */
#if defined(TOCL_ST_BF16)
#define DOT_LOAD8(p) as_float8(convert_uint8(vload8(0, (p))) << 16)
#elif defined(TOCL_ST_F16)
#define DOT_LOAD8(p) vload_half8(0, (p))
#else
#define DOT_LOAD8(p) vload8(0, (p))
#endif
#define DOT_R4(X) X(0) X(1) X(2) X(3)
#define DOT_B(j) __global const st_t *b##j = B + p.b_off + b * p.b_bs + min(n0 + j, p.N - 1) * p.b_rs;
#define DOT_A(i) __global const st_t *a##i = A + p.a_off + b * p.a_bs + min(m0 + i, p.M - 1) * p.a_rs;
#define DOT_ZERO_ROW(i) float8 c##i##0 = 0, c##i##1 = 0, c##i##2 = 0, c##i##3 = 0;
#define DOT_LOAD_A(i) float8 x##i = DOT_LOAD8(a##i + k);
#define DOT_LOAD_B(j) float8 w##j = DOT_LOAD8(b##j + k);
#define DOT_FMA_ROW(i)                  \
    c##i##0 = fma(x##i, w0, c##i##0);   \
    c##i##1 = fma(x##i, w1, c##i##1);   \
    c##i##2 = fma(x##i, w2, c##i##2);   \
    c##i##3 = fma(x##i, w3, c##i##3);
#define DOT_FOLD(i, j) s[i * 4 + j] = dot_hsum(c##i##j);
#define DOT_FOLD_ROW(i) DOT_FOLD(i, 0) DOT_FOLD(i, 1) DOT_FOLD(i, 2) DOT_FOLD(i, 3)

inline float dot_hsum(float8 v)
{
    float4 h = v.lo + v.hi;
    float2 q = h.lo + h.hi;
    return q.x + q.y;
}

__kernel void tocl_gemm_dot(__global const st_t *A, __global const st_t *B, __global st_t *C,
                            __global const st_t *D, __global const st_t *bias, tocl_gemm_params p, float alpha,
                            float beta)
{
    long nt = (p.N + 3) / 4, gid = get_global_id(0);
    long b = gid / nt, n0 = (gid - b * nt) * 4;
    if (b >= p.batch)
        return;
    long K8 = p.K & ~7L;
    DOT_R4(DOT_B)
    for (long m0 = 0; m0 < p.M; m0 += 4) {
        DOT_R4(DOT_A)
        DOT_R4(DOT_ZERO_ROW)
        for (long k = 0; k < K8; k += 8) {
            DOT_R4(DOT_LOAD_A)
            DOT_R4(DOT_LOAD_B)
            DOT_R4(DOT_FMA_ROW)
        }
        /* One copy of the tail and the epilogue for the 16 sums: written
         * out 16 times it made the whole kernel 1.7x slower on PoCL. */
        float s[16];
        DOT_R4(DOT_FOLD_ROW)
        for (int t = 0; t < 16; t++) {
            long m = m0 + t / 4, n = n0 + t % 4;
            if (m >= p.M || n >= p.N)
                continue;
            __global const st_t *a = A + p.a_off + b * p.a_bs + m * p.a_rs;
            __global const st_t *bb = B + p.b_off + b * p.b_bs + n * p.b_rs;
            float v = s[t];
            for (long k = K8; k < p.K; k++)
                v = fma(LOAD_ST(a, k), LOAD_ST(bb, k), v);
            gemm_store(C, D, bias, &p, b, m, n, v, alpha, beta);
        }
    }
}

/* One row (M = 1: a decoding step's x @ W^T): a work-item owns 8 outputs
 * and walks k 16 at a time, x loaded once per step for all 8. The 4 x 4
 * kernel above clamps its rows to M, so one row did four times the FMAs;
 * 16 GEMVs of a 4-layer, 256-wide GPT step took 0.60 ms of device time. */
#if defined(TOCL_ST_BF16)
#define DOT_LOAD16(p) as_float16(convert_uint16(vload16(0, (p))) << 16)
#elif defined(TOCL_ST_F16)
#define DOT_LOAD16(p) vload_half16(0, (p))
#else
#define DOT_LOAD16(p) vload16(0, (p))
#endif
#define DOT1_R8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define DOT1_B(j) __global const st_t *b##j = B + p.b_off + b * p.b_bs + min(n0 + j, p.N - 1) * p.b_rs;
#define DOT1_ZERO(j) float16 c##j = 0;
#define DOT1_FMA(j) c##j = fma(x, DOT_LOAD16(b##j + k), c##j);
#define DOT1_FOLD(j) s[j] = dot_hsum(c##j.lo + c##j.hi);

__kernel void tocl_gemm_dot1(__global const st_t *A, __global const st_t *B, __global st_t *C,
                             __global const st_t *D, __global const st_t *bias, tocl_gemm_params p, float alpha,
                             float beta)
{
    long nt = (p.N + 7) / 8, gid = get_global_id(0);
    long b = gid / nt, n0 = (gid - b * nt) * 8;
    if (b >= p.batch)
        return;
    long K16 = p.K & ~15L;
    __global const st_t *a = A + p.a_off + b * p.a_bs;
    DOT1_R8(DOT1_B)
    DOT1_R8(DOT1_ZERO)
    for (long k = 0; k < K16; k += 16) {
        float16 x = DOT_LOAD16(a + k);
        DOT1_R8(DOT1_FMA)
    }
    float s[8];
    DOT1_R8(DOT1_FOLD)
    for (int t = 0; t < 8; t++) { /* one copy of the tail and the epilogue */
        long n = n0 + t;
        if (n >= p.N)
            continue;
        __global const st_t *bb = B + p.b_off + b * p.b_bs + n * p.b_rs;
        float v = s[t];
        for (long k = K16; k < p.K; k++)
            v = fma(LOAD_ST(a, k), LOAD_ST(bb, k), v);
        gemm_store(C, D, bias, &p, b, 0, n, v, alpha, beta);
    }
}

/* The one-row kernel with a LayerNorm in front (tocl_gemm_normed; a
 * decoding step's norm1 -> in_proj, norm2 -> linear1, norm -> head). The
 * first work-item of each group takes the row's mean and variance, two
 * passes as the layer-norm kernel takes them, and writes the normalised
 * row to local memory; after the barrier every work-item multiplies it as
 * the dot1 kernel does. That saves the norm's launch (about 10 us each in a
 * replayed decoding step on PoCL, against 1.4 us of device time). Each
 * work-item taking the moments itself cost 2 us per [256 -> 1024] product
 * (128 work-items); once per group of 16 is an eighth of that. One matrix
 * (batch 1): a group then never spans two batches. */
__kernel void tocl_gemm_dot1_norm(__global const st_t *A, __global const st_t *B, __global st_t *C,
                                  __global const st_t *D, __global const st_t *bias, tocl_gemm_params p,
                                  float alpha, float beta, __global const st_t *G, __global const st_t *Bt,
                                  tocl_gemm_norm_params q, __local float *xn)
{
    long n0 = get_global_id(0) * 8, K16 = p.K & ~15L, k;
    __global const st_t *a = A + p.a_off;
    if (get_local_id(0) == 0) {
        float16 v16 = 0;
        float s1 = 0;
        for (k = 0; k < K16; k += 16)
            v16 += DOT_LOAD16(a + k);
        for (; k < p.K; k++)
            s1 += LOAD_ST(a, k);
        float mean = (dot_hsum(v16.lo + v16.hi) + s1) / p.K;
        v16 = 0, s1 = 0;
        for (k = 0; k < K16; k += 16) {
            float16 d = DOT_LOAD16(a + k) - mean;
            v16 = fma(d, d, v16);
        }
        for (; k < p.K; k++) {
            float d = LOAD_ST(a, k) - mean;
            s1 = fma(d, d, s1);
        }
        float rstd = 1.0f / sqrt((dot_hsum(v16.lo + v16.hi) + s1) / p.K + q.eps);
        for (k = 0; k < p.K; k++) {
            float x = (LOAD_ST(a, k) - mean) * rstd;
            if (q.has_g)
                x *= LOAD_ST(G, q.g_off + k);
            if (q.has_bt)
                x += LOAD_ST(Bt, q.bt_off + k);
            xn[k] = x;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (n0 >= p.N)
        return;
    const long b = 0;
    DOT1_R8(DOT1_B)
    DOT1_R8(DOT1_ZERO)
    for (k = 0; k < K16; k += 16) {
        float16 x = vload16(0, xn + k);
        DOT1_R8(DOT1_FMA)
    }
    float s[8];
    DOT1_R8(DOT1_FOLD)
    for (int t = 0; t < 8; t++) {
        long n = n0 + t;
        if (n >= p.N)
            continue;
        __global const st_t *bb = B + p.b_off + n * p.b_rs;
        float v = s[t];
        for (k = K16; k < p.K; k++)
            v = fma(xn[k], LOAD_ST(bb, k), v);
        gemm_store(C, D, bias, &p, 0, 0, n, v, alpha, beta);
    }
}

/* ------------------------------------------------------------------ rows */

/* Few rows, B's rows contiguous along n (x @ W with W stored [K, N], as
 * GPT-2's Conv1D, or dY @ W in a linear layer's input gradient): a work-item
 * owns 16 consecutive columns of C and walks the rows of A eight at a time,
 * reading its K x 16 slab of B as one vector per k (the slab stays in L2
 * across row blocks) and A as broadcast scalars. The direct kernel read B
 * down its columns and the packed path copies all of B first. Columns past
 * the last full vector take the scalar loop at the end. */
#if defined(TOCL_ST_BF16)
#define ROWS_LOAD16(p) as_float16(convert_uint16(vload16(0, (p))) << 16)
#elif defined(TOCL_ST_F16)
#define ROWS_LOAD16(p) vload_half16(0, (p))
#else
#define ROWS_LOAD16(p) vload16(0, (p))
#endif
#define ROWS_R8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define ROWS_A(i) __global const st_t *a##i = A + p.a_off + b * p.a_bs + min(m0 + i, p.M - 1) * p.a_rs;
#define ROWS_ZERO(i) float16 c##i = 0;
#define ROWS_FMA(i) c##i = fma((float16)LOAD_ST(a##i, k * p.a_ks), w, c##i);
#define ROWS_OUT(i) vstore16(c##i, i, s);

__kernel void tocl_gemm_rows(__global const st_t *A, __global const st_t *B, __global st_t *C,
                             __global const st_t *D, __global const st_t *bias, tocl_gemm_params p, float alpha,
                             float beta)
{
    long nt = (p.N + 15) / 16, gid = get_global_id(0);
    long b = gid / nt, n0 = (gid - b * nt) * 16;
    if (b >= p.batch)
        return;
    __global const st_t *bb = B + p.b_off + b * p.b_bs + n0;
    if (n0 + 16 > p.N) { /* the last, partial vector of columns */
        for (long m = 0; m < p.M; m++) {
            __global const st_t *a = A + p.a_off + b * p.a_bs + m * p.a_rs;
            for (long n = n0; n < p.N; n++) {
                float v = 0;
                for (long k = 0; k < p.K; k++)
                    v = fma(LOAD_ST(a, k * p.a_ks), LOAD_ST(bb, k * p.b_ks + (n - n0)), v);
                gemm_store(C, D, bias, &p, b, m, n, v, alpha, beta);
            }
        }
        return;
    }
    /* Up to 2 rows past the last full block of 8 go one at a time (below);
     * more take one more block of 8 with clamped rows. */
    long m8 = (p.M & 7L) >= 3 ? p.M : p.M & ~7L;
    for (long m0 = 0; m0 < m8; m0 += 8) {
        ROWS_R8(ROWS_A)
        ROWS_R8(ROWS_ZERO)
        for (long k = 0; k < p.K; k++) {
            float16 w = ROWS_LOAD16(bb + k * p.b_ks);
            ROWS_R8(ROWS_FMA)
        }
        /* One copy of the epilogue for the 128 sums (see tocl_gemm_dot). */
        float s[128];
        ROWS_R8(ROWS_OUT)
        for (int t = 0; t < 128; t++) {
            long m = m0 + t / 16;
            if (m < p.M)
                gemm_store(C, D, bias, &p, b, m, n0 + t % 16, s[t], alpha, beta);
        }
    }
    /* A decoding step's single row in an 8-row block did 8 times its FMAs:
     * per [1, 256] x [256, 256] 12.5 against 7.5 us of device time. Each
     * row is a pass over the slab of B, so more than 2 lost ([7, 768] x
     * [768, 3072] one at a time: 6x slower). */
    for (long m = m8; m < p.M; m++) {
        __global const st_t *a = A + p.a_off + b * p.a_bs + m * p.a_rs;
        float16 c = 0;
        for (long k = 0; k < p.K; k++)
            c = fma((float16)LOAD_ST(a, k * p.a_ks), ROWS_LOAD16(bb + k * p.b_ks), c);
        float s[16];
        vstore16(c, 0, s);
        for (int t = 0; t < 16; t++)
            gemm_store(C, D, bias, &p, b, m, n0 + t, s[t], alpha, beta);
    }
}
#endif
#endif /* GEMM_AMX */

/* ------------------------------------------------------------------ AMX (Intel tile unit) */

#if defined(GEMM_AMX) && defined(TOCL_ST_BF16)
/* bfloat16 products on a CPU with AMX (runtime/ops/gemm_amx.c). Build with
 * -DGEMM_RM=32 -DGEMM_VW=16 -DGEMM_NV=2: a 32 x 32 block of C is four
 * 16 x 16 float tiles, and gemm_store_block finishes it.
 *
 * Operands are packed into 1 KiB tiles, each contiguous (rows 64 bytes
 * apart, so a tile load never walks one L1 set):
 *   A  [batch][M/16][K/32] tiles of 16 rows x 32 k
 *   B  [batch][N/16][K/32] tiles of 16 k-pairs x 16 columns x 2 (VNNI)
 * M and N padded to 32 and K to 32, with zeros. */
#include "amx_tiles.h"

/* Copy one 16 x 32 tile: 16 rows of the operand (p.rows: M or N) over 32
 * k, from s (row r0, k k0) to d, in A's layout or (vnni) B's. Whole tiles
 * of an operand with unit stride along k or along its rows copy by vectors;
 * tiles at an edge (zeros past the end) and other strides by elements. */
inline void amx_pack_tile(__global const ushort *s, __global ushort *d, const tocl_gemm_pack_params *pp, long r0,
                          long k0, int vnni)
{
    tocl_gemm_pack_params p = *pp;
    int whole = r0 + 16 <= p.rows && k0 + 32 <= p.depth;
    if (whole && p.ks == 1 && !vnni) { /* A row-major: rows copy whole */
        __global uint *d2 = (__global uint *)d; /* stored as uints: ushort16 stores were 2x slower */
        for (int r = 0; r < 16; r++) {
            vstore8(as_uint8(vload16(0, s + r * p.rs)), 2 * r, d2);
            vstore8(as_uint8(vload16(1, s + r * p.rs)), 2 * r + 1, d2);
        }
    } else if (whole && p.ks == 1) { /* B = W^T (a linear layer): a k-pair is one uint */
        __global uint *d2 = (__global uint *)d;
        for (int r = 0; r < 16; r++) {
            uint8 lo = as_uint8(vload16(0, s + r * p.rs)), hi = as_uint8(vload16(1, s + r * p.rs));
            d2[0 * 16 + r] = lo.s0, d2[1 * 16 + r] = lo.s1, d2[2 * 16 + r] = lo.s2, d2[3 * 16 + r] = lo.s3;
            d2[4 * 16 + r] = lo.s4, d2[5 * 16 + r] = lo.s5, d2[6 * 16 + r] = lo.s6, d2[7 * 16 + r] = lo.s7;
            d2[8 * 16 + r] = hi.s0, d2[9 * 16 + r] = hi.s1, d2[10 * 16 + r] = hi.s2, d2[11 * 16 + r] = hi.s3;
            d2[12 * 16 + r] = hi.s4, d2[13 * 16 + r] = hi.s5, d2[14 * 16 + r] = hi.s6, d2[15 * 16 + r] = hi.s7;
        }
    } else if (whole && p.rs == 1 && !vnni) { /* A transposed (dY^T of a weight gradient): 16 rows per k */
        __global uint *d2 = (__global uint *)d; /* rows of 16 k-pairs, each pair one uint */
        uint t[16];
        for (int kk = 0; kk < 16; kk++) {
            uint16 e = convert_uint16(vload16(0, s + 2 * kk * p.ks));
            uint16 o = convert_uint16(vload16(0, s + (2 * kk + 1) * p.ks));
            vstore16(e | o << 16, 0, t);
            for (int r = 0; r < 16; r++)
                d2[r * 16 + kk] = t[r];
        }
    } else if (whole && p.rs == 1 && vnni) { /* B row-major: interleave two rows of k */
        /* a k-pair is one uint: widen, shift, or (PoCL's shuffle2 went
         * element by element; component lists were 4x slower than this) */
        __global uint *d2 = (__global uint *)d;
        for (int kk = 0; kk < 16; kk++) {
            uint16 e = convert_uint16(vload16(0, s + 2 * kk * p.ks));
            uint16 o = convert_uint16(vload16(0, s + (2 * kk + 1) * p.ks));
            vstore16(e | o << 16, kk, d2);
        }
    } else {
        long rn = min(16L, p.rows - r0), kn = min(32L, p.depth - k0);
        for (int r = 0; r < 16; r++)
            for (int k = 0; k < 32; k++)
                d[vnni ? (k / 2) * 32 + r * 2 + (k & 1) : r * 32 + k] = r < rn && k < kn ? s[r * p.rs + k * p.ks] : 0;
    }
}

/* Work-item (run, tile, batch): TOCL_GEMM_AMX_PACK_RUN tiles along k of one row tile
 * (p.width: rows padded to 32), streaming along the rows of an operand
 * stored by rows. With panel_fast (an operand whose rows are contiguous: B
 * row-major) the run goes across row tiles at one k tile instead, along
 * the operand's contiguous rows of k. */
__kernel void tocl_gemm_amx_pack(__global const ushort *src, __global ushort *dst, tocl_gemm_pack_params p,
                                 int vnni)
{
    long run = get_global_id(0), t = get_global_id(1), b = get_global_id(2);
    long kts = (p.depth + 31) / 32, rts = p.width / 16;
    long n = p.panel_fast ? rts : kts;
    for (long i = run * TOCL_GEMM_AMX_PACK_RUN; i < min(n, (run + 1) * TOCL_GEMM_AMX_PACK_RUN); i++) {
        long rt = p.panel_fast ? i : t, kt = p.panel_fast ? t : i;
        amx_pack_tile(src + p.off + b * p.bs + rt * 16 * p.rs + kt * 32 * p.ks,
                      dst + p.dst_off + b * p.dst_bs + (rt * kts + kt) * AMX_TILE, &p, rt * 16, kt * 32, vnni);
    }
}

/* A 32 x 32 block of C on tiles 0-3 over k tiles [kt0, kt1): tiles 4-5
 * two row tiles of A, 6-7 two column tiles of B; four products per four
 * loads. A's tiles: rows ars elements apart, k tiles astep apart, the
 * second row tile at a1 (packed: 32, AMX_TILE, a + kts tiles; read in
 * place: the row stride, 32, a + 16 rows). B: packed tiles. The sums start
 * from zero (first) or from `part` (32 x 32 floats, rows `ps` bytes apart)
 * and end in `part`. */
__attribute__((target("amx-tile,amx-bf16"))) static void amx_block(__global const ushort *a,
                                                                   __global const ushort *a1, long ars,
                                                                   long astep, __global const ushort *b,
                                                                   long kts, long kt0, long kt1, void *part,
                                                                   long ps, int first)
{
    amx_sums_load(part, ps, first);
    __global const ushort *b1 = b + kts * AMX_TILE;
    for (long kt = kt0; kt < kt1; kt++) {
        long o = kt * AMX_TILE, ao = kt * astep;
        /* The next k tile's four into L1 while this one multiplies: 1.1x. */
        for (int l = 0; l < 16; l++) {
            __builtin_prefetch(a + ao + astep + l * ars, 0, 3);
            __builtin_prefetch(b + o + AMX_TILE + l * 32, 0, 3);
            __builtin_prefetch(a1 + ao + astep + l * ars, 0, 3);
            __builtin_prefetch(b1 + o + AMX_TILE + l * 32, 0, 3);
        }
        __builtin_ia32_tileloadd64(4, AMX_PTR(a + ao), ars * 2);
        __builtin_ia32_tileloadd64(6, AMX_PTR(b + o), 64);
        __builtin_ia32_tdpbf16ps(0, 4, 6);
        __builtin_ia32_tileloadd64(7, AMX_PTR(b1 + o), 64);
        __builtin_ia32_tdpbf16ps(1, 4, 7);
        __builtin_ia32_tileloadd64(5, AMX_PTR(a1 + ao), ars * 2);
        __builtin_ia32_tdpbf16ps(2, 5, 6);
        __builtin_ia32_tdpbf16ps(3, 5, 7);
    }
    amx_sums_store(part, ps);
}

/* Work-group (one work-item) = tile [tm x tn] of C (multiples of 32);
 * global (tiles_n, tiles_m, batch). Ap and Bp: the packed operands, with
 * p.a_bs / p.b_bs per batch item (0: shared). For each 32 rows, K goes in
 * blocks of p.kc k tiles, and within a block across the tile's columns:
 * the 32 x kc block of A stays in L1 while B's blocks stream from L2; the
 * partial sums of 32 x tn wait in `part`. */
__kernel void tocl_gemm_amx(__global const ushort *Ap, __global const ushort *Bp, __global st_t *C,
                            __global const st_t *D, __global const st_t *bias, tocl_gemm_params p, acc_t alpha,
                            acc_t beta, __local float *part)
{
    long b = get_global_id(2);
    long mt0 = get_global_id(1) * p.tm, nt0 = get_global_id(0) * p.tn;
    long mt1 = min(mt0 + p.tm, p.M), nt1 = min(nt0 + p.tn, p.N);
    if (mt0 >= p.M || nt0 >= p.N)
        return;
    long kts = (p.K + 31) / 32, kc = p.kc > 0 ? p.kc : kts;
    __global const ushort *A = Ap + p.a_off + b * p.a_bs, *B = Bp + p.b_off + b * p.b_bs;
    amx_begin();
    /* A packed (a_w 32) or read in place (a_w 0: rows a_rs apart, K and M
     * multiples of 32) */
    long ars = p.a_w ? 32 : p.a_rs, astep = p.a_w ? AMX_TILE : 32, a1 = p.a_w ? kts * AMX_TILE : 16 * p.a_rs;
    for (long m0 = mt0; m0 < mt1; m0 += 32) {
        __global const ushort *a0 = A + (p.a_w ? (m0 / 16) * kts * AMX_TILE : m0 * p.a_rs);
        for (long kt0 = 0; kt0 < kts; kt0 += kc) {
            long kt1 = min(kts, kt0 + kc);
            for (long n0 = nt0; n0 < nt1; n0 += 32) {
                __local float *pp = part + (n0 - nt0);
                if (kt1 < kts) {
                    amx_block(a0, a0 + a1, ars, astep, B + (n0 / 16) * kts * AMX_TILE, kts, kt0, kt1, AMX_PTR(pp),
                              p.tn * 4, kt0 == 0);
                } else {
                    accv_t acc[GEMM_RM][GEMM_NV];
                    if (kt0 > 0)
                        for (int r = 0; r < 32; r++)
                            acc[r][0] = vload16(0, pp + r * p.tn), acc[r][1] = vload16(1, pp + r * p.tn);
                    amx_block(a0, a0 + a1, ars, astep, B + (n0 / 16) * kts * AMX_TILE, kts, kt0, kt1,
                              (void *)&acc[0][0], 128, kt0 == 0);
                    gemm_store_block(acc, C, D, bias, &p, b, m0, n0, alpha, beta);
                }
            }
        }
    }
    amx_end();
}
#endif
