/* render_reduce.c - OpenCL C text of the reduction kernel `tocl_red`.
 *
 * One kernel serves both passes of a reduction. Work-items are laid out
 * (x, y) = (worker within an output row, output row); a work-group holds
 * LY rows of LX workers (LX a power of two). Each worker folds its share of
 * the row into a private state, the LX states of a row are combined by a
 * tree in local memory, and worker 0 either finalises and stores the
 * outputs (direct) or writes the group's partial state to `part`. The
 * second pass (from_part) folds a row's partial states the same way.
 *
 * Kernel ABI (runtime/ops/reduce.c follows it; offsets, sizes and strides
 * in elements):
 *   per output k: __global S *o<k>, long o<k>_off
 *   per input k:  __global const S *i<k>, long i<k>_off
 *   per scalar k: C s<k>
 *   __global char *part, long part_off (bytes), __local st_t *sh,
 *   long M, long R, long count, long per, long nwork,
 *   int interleave, int from_part, int direct, P fp, P fq, P fc,
 *   long ks0..ks<kr-1>; per output, then per input: long <o|i><k>_ks0..
 *   long rs0..rs<rr-1>; per input: long i<k>_rs0..
 * A worker's share is r = w, w + nwork, ... (interleave: coalesced on GPUs)
 * or the run [w * per, (w + 1) * per) (CPUs: each work-item streams its own
 * memory). r counts reduced positions row-major over the reduced dims as
 * given, which arg-reductions keep in logical order. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/reduce_rules.h"
#include "codegen/render_internal.h"

/* Accumulator type: bool is kept as uchar (OpenCL forbids bool in local
 * memory and structs). */
static const char *acc_type(tocl_dtype a) { return a == TOCL_BOOL ? "uchar" : tocl_render_compute_type(a); }

static const char *type_min(tocl_dtype a) {
    switch (a) {
    case TOCL_BOOL: case TOCL_U8: return "0";
    case TOCL_I8: return "CHAR_MIN";
    case TOCL_I16: return "SHRT_MIN";
    case TOCL_I32: return "INT_MIN";
    case TOCL_I64: return "LONG_MIN";
    default: return "-INFINITY";
    }
}

static const char *type_max(tocl_dtype a) {
    switch (a) {
    case TOCL_BOOL: return "1";
    case TOCL_U8: return "UCHAR_MAX";
    case TOCL_I8: return "CHAR_MAX";
    case TOCL_I16: return "SHRT_MAX";
    case TOCL_I32: return "INT_MAX";
    case TOCL_I64: return "LONG_MAX";
    default: return "INFINITY";
    }
}

/* The state type and its init / add / combine functions, from the kind's
 * row of the rules table. */
static void put_state(tocl_text *t, const tocl_reduce_desc *d) {
    const tocl_reduce_rule *r = tocl_reduce_rule_of(d->kind);
    int fl = tocl_dtype_is_float(d->acc);
    tocl_text_put(t, "typedef %s A;\n", acc_type(d->acc));
    tocl_text_put(t, "typedef struct { A v; A m2; long n; long i; } st_t;\n\n");
    const char *init = r->init == TOCL_RINIT_ONE       ? "1"
                       : r->init == TOCL_RINIT_LOWEST  ? type_min(d->acc)
                       : r->init == TOCL_RINIT_HIGHEST ? type_max(d->acc)
                                                       : "0";
    tocl_text_put(t, "inline void st_init(st_t *s) { s->v = (A)%s; s->m2 = (A)0; s->n = 0; s->i = LONG_MAX; }\n", init);
    const char *helpers = fl || !r->helpers_int ? r->helpers_float : r->helpers_int;
    const char *add = fl || !r->add_int ? r->add_float : r->add_int;
    if (helpers)
        tocl_text_put(t, "%s", helpers);
    tocl_text_put(t, "inline void st_add(st_t *s, A x, long r) { %s }\n", add);
    tocl_text_put(t, "inline void st_comb(st_t *s, st_t o) { %s }\n", r->comb ? r->comb : "st_add(s, o.v, 0);");
}

/* `A x = ...;` from the prologue's output node(s): the map's expression
 * with $0 / $1 naming them. */
static void put_map(tocl_text *t, const tocl_reduce_desc *d, const tocl_ir_graph *g) {
    const char *e = tocl_reduce_map_expr(d->map, NULL);
    if (!e)
        e = "(A)$0";
    tocl_text_put(t, "        A x = ");
    for (; *e; e++) {
        if (e[0] == '$' && (e[1] == '0' || e[1] == '1')) {
            tocl_text_put(t, "v%d", g->output_nodes[e[1] - '0']);
            e++;
        } else {
            tocl_text_put(t, "%c", *e);
        }
    }
    tocl_text_put(t, ";\n");
}

/* Store value expression `val` (of type A or long) into output k at yo<k>. */
static void put_store(tocl_text *t, tocl_dtype st, int k, const char *val) {
    switch (st) {
    case TOCL_F16: tocl_text_put(t, "        vstore_half_rte(%s, yo%d, o%d);\n", val, k, k); break;
    case TOCL_BF16: tocl_text_put(t, "        o%d[yo%d] = tocl_f2bf((float)(%s));\n", k, k, val); break;
    case TOCL_BOOL: tocl_text_put(t, "        o%d[yo%d] = (uchar)((%s) != 0);\n", k, k, val); break;
    default: tocl_text_put(t, "        o%d[yo%d] = (%s)(%s);\n", k, k, tocl_render_storage_type(st), val); break;
    }
}

static void put_final(tocl_text *t, const tocl_reduce_desc *d, int n_out, const tocl_dtype *out_dtypes) {
    const tocl_reduce_rule *r = tocl_reduce_rule_of(d->kind);
    const char *fin = tocl_reduce_final_stmt(d->final, NULL);
    switch (r->store) {
    case TOCL_RSTORE_ARG:
        if (n_out == 2) {
            put_store(t, out_dtypes[0], 0, "a.v");
            put_store(t, out_dtypes[1], 1, "a.i");
        } else {
            put_store(t, out_dtypes[0], 0, "a.i");
        }
        return;
    case TOCL_RSTORE_WELFORD:
        tocl_text_put(t, "        A dv = (A)a.n > fc ? (A)a.n - fc : (A)0;\n        A y = a.m2 / dv;\n");
        if (d->final == TOCL_REDUCE_FINAL_STD) /* the only finaliser of a variance */
            tocl_text_put(t, "        %s\n", fin);
        put_store(t, out_dtypes[0], 0, "y");
        if (n_out == 2)
            put_store(t, out_dtypes[1], 1, "a.n ? a.v : (A)NAN");
        return;
    case TOCL_RSTORE_VALUE:
        break;
    }
    tocl_text_put(t, "        A y = a.v;\n");
    if (r->finish)
        tocl_text_put(t, "        %s\n", r->finish);
    if (fin && d->final != TOCL_REDUCE_FINAL_STD)
        tocl_text_put(t, "        %s\n", fin);
    put_store(t, out_dtypes[0], 0, "y");
}

/* The vectorised sum of a contiguous run: only when the prologue is a plain
 * load of a float32/float64 input summed in its own dtype, or of a
 * float16/bfloat16 one summed in float32 (PoCL leaves the lanes' scalar
 * conversions scalar: [64,64,56,56].sum((0,2,3)) in float16 took 2.5x the
 * float32 time for half the bytes). */
static int fast_sum(const tocl_reduce_desc *d, const tocl_ir_graph *g) {
    tocl_dtype in = g->input_dtypes[0];
    return d->kind == TOCL_REDUCE_SUM && d->map == TOCL_REDUCE_MAP_NONE && g->n_inputs == 1 && g->n_nodes == 1 &&
           g->n_scalars == 0 &&
           ((in == d->acc && (d->acc == TOCL_F32 || d->acc == TOCL_F64)) ||
            ((in == TOCL_F16 || in == TOCL_BF16) && d->acc == TOCL_F32));
}

/* Eight adjacent elements of the fast sum's input `src` at k, in A. */
static const char *fast_load8(tocl_dtype in) {
    return in == TOCL_F16    ? "vload_half8(0, src + k)"
           : in == TOCL_BF16 ? "as_float8(convert_uint8(vload8(0, src + k)) << 16)"
                             : "vload8(0, src + k)";
}

/* One element of the fast sum's input at k, in A. */
static const char *fast_load1(tocl_dtype in) {
    return in == TOCL_F16 ? "vload_half(k, src)" : in == TOCL_BF16 ? "as_float((uint)src[k] << 16)" : "src[k]";
}

/* The vectorised sums fold a run in blocks of this many elements, each
 * block's eight lanes summed into the row's total: rounding error grows
 * with BLOCK / 8 + run / BLOCK additions rather than run / 8. */
#define BLOCK "1024"

/* A floating sum with any prologue and map (the unrolled lanes). */
static int lane_sum(const tocl_reduce_desc *d) {
    return d->kind == TOCL_REDUCE_SUM && (d->acc == TOCL_F32 || d->acc == TOCL_F64);
}

static int graph_uses_f64(const tocl_reduce_desc *d, const tocl_ir_graph *g, int n_out, const tocl_dtype *od) {
    if (d->acc == TOCL_F64 || tocl_ir_uses_f64(g))
        return 1;
    for (int k = 0; k < n_out; k++)
        if (od[k] == TOCL_F64)
            return 1;
    return 0;
}

static void put_col_body(tocl_text *t, const tocl_reduce_desc *d, const tocl_ir_graph *g, int n_out,
                         const tocl_dtype *out_dtypes, int kr, int rr, int W, const char *nodes);

static tocl_status render(const tocl_reduce_desc *d, const tocl_ir_graph *g, int n_out, const tocl_dtype *out_dtypes,
                          int kr, int rr, int W, char *buf, size_t cap) {
    if (!d || !g || !buf || cap == 0 || !out_dtypes)
        return tocl_fail(TOCL_E_INVALID, "tocl_reduce_render: NULL argument");
    buf[0] = 0;
    if (kr < 0 || kr > TOCL_MAX_DIMS || rr < 1 || rr > TOCL_MAX_DIMS)
        return tocl_fail(TOCL_E_INVALID, "tocl_reduce_render: kept rank %d / reduced rank %d out of range", kr, rr);
    if (W && !tocl_reduce_col_ok(d, g, kr))
        return tocl_fail(TOCL_E_INVALID, "tocl_reduce_render_col: kind %d, kept rank %d has no column kernel",
                         (int)d->kind, kr);
    if (W && W != 8 && W != 16)
        return tocl_fail(TOCL_E_INVALID, "tocl_reduce_render_col: %d lanes; expected 8 or 16", W);
    if ((int)d->kind < 0 || d->kind >= TOCL_REDUCE_KIND_COUNT || (int)d->map < 0 ||
        d->map >= TOCL_REDUCE_MAP_COUNT || (int)d->final < 0 || d->final >= TOCL_REDUCE_FINAL_COUNT)
        return tocl_fail(TOCL_E_INVALID, "tocl_reduce_render: invalid kind %d, map %d or final %d", (int)d->kind,
                         (int)d->map, (int)d->final);
    TOCL_TRY(tocl_ir_validate(g));
    if (d->map == TOCL_REDUCE_MAP_EQ && g->n_outputs < 2)
        return tocl_fail(TOCL_E_INVALID, "tocl_reduce_render: MAP_EQ needs a prologue with two outputs");
    size_t ncap = 64 * 1024;
    char *nodes = malloc(ncap);
    if (!nodes)
        return tocl_fail(TOCL_E_OOM, "out of host memory rendering a reduction kernel");
    if (tocl_render_nodes(g, nodes, ncap) < 0) {
        free(nodes);
        return tocl_fail(TOCL_E_INVALID, "tocl_reduce_render: prologue of %d nodes is too large", g->n_nodes);
    }
    tocl_text t = {buf, cap, 0, 0};
    int f64 = graph_uses_f64(d, g, n_out, out_dtypes);
    tocl_text_put(&t, "/* %s: kind %d map %d final %d, %d prologue nodes, kept rank %d, reduced rank %d */\n",
        W ? "tocl_redc" : "tocl_red", (int)d->kind, (int)d->map, (int)d->final, g->n_nodes, kr, rr);
    if (f64)
        tocl_text_put(&t, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
    for (int k = 0; k < n_out; k++)
        if (out_dtypes[k] == TOCL_BF16) {
            tocl_text_put(&t, "%s", tocl_render_bf16_helper());
            break;
        }
    tocl_render_helpers(&t, g); /* a prologue fused eager extended may call some */
    put_state(&t, d);
    const char *pt = d->acc == TOCL_F64 ? "double" : "float";
    int nin = g->n_inputs;

    /* signature */
    tocl_text_put(&t, "\n__kernel void %s(", W ? "tocl_redc" : "tocl_red");
    for (int k = 0; k < n_out; k++)
        tocl_text_put(&t, "%s__global %s *o%d, long o%d_off", k ? ",\n        " : "", tocl_render_storage_type(out_dtypes[k]), k, k);
    for (int k = 0; k < nin; k++)
        tocl_text_put(&t, ",\n        __global const %s *i%d, long i%d_off", tocl_render_storage_type(g->input_dtypes[k]), k, k);
    for (int k = 0; k < g->n_scalars; k++)
        tocl_text_put(&t, ",\n        %s s%d", tocl_render_scalar_arg_type(g->scalar_dtypes[k]), k);
    tocl_text_put(&t, ",\n        __global char *part, long part_off, __local st_t *sh,"
            "\n        long M, long R, long count, long per, long nwork, int interleave, int from_part, int direct,"
            "\n        %s fp, %s fq, %s fc", pt, pt, pt);
    if (kr > 0) {
        tocl_text_put(&t, ",\n        ");
        for (int e = 0; e < kr; e++)
            tocl_text_put(&t, "%slong ks%d", e ? ", " : "", e);
        for (int k = 0; k < n_out + nin; k++) {
            tocl_text_put(&t, ",\n        ");
            for (int e = 0; e < kr; e++)
                tocl_text_put(&t, "%slong %c%d_ks%d", e ? ", " : "", k < n_out ? 'o' : 'i', k < n_out ? k : k - n_out, e);
        }
    }
    tocl_text_put(&t, ",\n        ");
    for (int e = 0; e < rr; e++)
        tocl_text_put(&t, "%slong rs%d", e ? ", " : "", e);
    for (int k = 0; k < nin; k++) {
        tocl_text_put(&t, ",\n        ");
        for (int e = 0; e < rr; e++)
            tocl_text_put(&t, "%slong i%d_rs%d", e ? ", " : "", k, e);
    }
    tocl_text_put(&t, ")\n{\n");
    if (W) {
        put_col_body(&t, d, g, n_out, out_dtypes, kr, rr, W, nodes);
        goto done;
    }

    /* body */
    tocl_text_put(&t, "    const long lx = get_local_id(0), LX = get_local_size(0), ly = get_local_id(1);\n"
            "    const long w = get_global_id(0), m = get_global_id(1);\n"
            "    __global st_t *pp = (__global st_t *)(part + part_off);\n"
            "    st_t s;\n    st_init(&s);\n"
            "    if (m < M && from_part) {\n"
            "        for (long r = w; r < R; r += nwork)\n            st_comb(&s, pp[m * R + r]);\n"
            "    } else if (m < M) {\n");
    for (int k = 0; k < nin; k++)
        tocl_text_put(&t, "        long b_i%d = i%d_off;\n", k, k);
    if (kr > 0) {
        tocl_text_put(&t, "        long q = m;\n");
        for (int e = kr - 1; e >= 0; e--) {
            if (e > 0)
                tocl_text_put(&t, "        { long c = q %% ks%d; q /= ks%d;\n", e, e);
            else
                tocl_text_put(&t, "        { long c = q;\n");
            for (int k = 0; k < nin; k++)
                tocl_text_put(&t, "          b_i%d += c * i%d_ks%d;\n", k, k, e);
            tocl_text_put(&t, "        }\n");
        }
    }
    /* interleaved */
    tocl_text_put(&t, "        if (interleave) {\n            for (long r = w; r < R; r += nwork) {\n");
    for (int k = 0; k < nin; k++)
        tocl_text_put(&t, "                long x_i%d = b_i%d;\n", k, k);
    tocl_text_put(&t, "                long q2 = r;\n");
    for (int e = rr - 1; e >= 0; e--) {
        if (e > 0)
            tocl_text_put(&t, "                { long c = q2 %% rs%d; q2 /= rs%d;\n", e, e);
        else
            tocl_text_put(&t, "                { long c = q2;\n");
        for (int k = 0; k < nin; k++)
            tocl_text_put(&t, "                  x_i%d += c * i%d_rs%d;\n", k, k, e);
        tocl_text_put(&t, "                }\n");
    }
    tocl_text_put(&t, "                {\n%s", nodes);
    put_map(&t, d, g);
    tocl_text_put(&t, "                st_add(&s, x, r);\n                }\n            }\n");
    /* chunked runs */
    int L = rr - 1;
    tocl_text_put(&t, "        } else {\n            long r = w * per, r1 = min(R, r + per);\n"
            "            while (r < r1) {\n");
    if (rr == 1)
        tocl_text_put(&t, "                long inner = r;\n                long run = r1 - r;\n");
    else
        tocl_text_put(&t, "                long inner = r %% rs%d, q2 = r / rs%d;\n"
                "                long run = min(rs%d - inner, r1 - r);\n", L, L, L);
    for (int k = 0; k < nin; k++)
        tocl_text_put(&t, "                long xb_i%d = b_i%d;\n", k, k);
    for (int e = L - 1; e >= 0; e--) {
        if (e > 0)
            tocl_text_put(&t, "                { long c = q2 %% rs%d; q2 /= rs%d;\n", e, e);
        else
            tocl_text_put(&t, "                { long c = q2;\n");
        for (int k = 0; k < nin; k++)
            tocl_text_put(&t, "                  xb_i%d += c * i%d_rs%d;\n", k, k, e);
        tocl_text_put(&t, "                }\n");
    }
    if (fast_sum(d, g)) {
        const char *ty = tocl_render_compute_type(d->acc);
        tocl_dtype in = g->input_dtypes[0];
        tocl_text_put(&t, "                if (i0_rs%d == 1) {\n"
                "                    __global const %s *src = i0 + xb_i0 + inner;\n"
                "                    A y = 0;\n                    long k = 0;\n"
                "                    while (k + 8 <= run) {\n"
                "                        long kb = min(run - 7, k + (long)" BLOCK ");\n"
                "                        %s8 a8 = (%s8)0;\n"
                "                        for (; k < kb; k += 8)\n                            a8 += %s;\n"
                "                        y += ((a8.s0 + a8.s1) + (a8.s2 + a8.s3)) + ((a8.s4 + a8.s5) + (a8.s6 + a8.s7));\n"
                "                    }\n"
                "                    for (; k < run; k++)\n                        y += %s;\n"
                "                    s.v += y;\n                    r += run;\n                    continue;\n"
                "                }\n", L, tocl_render_storage_type(in), ty, ty, fast_load8(in), fast_load1(in));
    }
    else if (lane_sum(d)) {
        /* Any prologue: eight lanes in straight-line code, each with its own
         * accumulator, when every input is contiguous along the run. The
         * lanes break the add chain and let the compiler vectorise them
         * (a fused relu-backward bias gradient ran 4x slower without). */
        /* A prologue over no inputs (a recorded fill: torch.ones(n).sum())
         * has nothing to test: the lanes always apply. */
        tocl_text_put(&t, "                if (%s", nin ? "" : "1");
        for (int k = 0; k < nin; k++)
            tocl_text_put(&t, "%si%d_rs%d == 1", k ? " && " : "", k, L);
        tocl_text_put(&t, ") {\n                    A y = 0;\n                    long k = 0;\n"
                "                    while (k + 8 <= run) {\n"
                "                    long kb = min(run - 7, k + (long)" BLOCK ");\n"
                "                    A a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;\n"
                "                    for (; k < kb; k += 8) {\n");
        for (int lane = 0; lane < 8; lane++) {
            tocl_text_put(&t, "                    {\n");
            for (int k = 0; k < nin; k++)
                tocl_text_put(&t, "                    long x_i%d = xb_i%d + inner + k + %d;\n", k, k, lane);
            tocl_text_put(&t, "%s", nodes);
            put_map(&t, d, g);
            tocl_text_put(&t, "                    a%d += x;\n                    }\n", lane);
        }
        tocl_text_put(&t, "                    }\n"
                "                    y += ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));\n"
                "                    }\n"
                "                    for (; k < run; k++) {\n");
        for (int k = 0; k < nin; k++)
            tocl_text_put(&t, "                    long x_i%d = xb_i%d + inner + k;\n", k, k);
        tocl_text_put(&t, "%s", nodes);
        put_map(&t, d, g);
        tocl_text_put(&t, "                    y += x;\n                    }\n"
                "                    s.v += y;\n                    r += run;\n                    continue;\n"
                "                }\n");
    }
    tocl_text_put(&t, "                for (long k = 0; k < run; k++) {\n");
    for (int k = 0; k < nin; k++)
        tocl_text_put(&t, "                    long x_i%d = xb_i%d + (inner + k) * i%d_rs%d;\n", k, k, k, L);
    tocl_text_put(&t, "%s", nodes);
    put_map(&t, d, g);
    tocl_text_put(&t, "                    st_add(&s, x, r + k);\n                }\n                r += run;\n"
            "            }\n        }\n    }\n");
    /* tree over the row's LX workers; LX is a power of two */
    tocl_text_put(&t, "    sh[ly * LX + lx] = s;\n"
            "    for (long k = LX / 2; k > 0; k >>= 1) {\n"
            "        barrier(CLK_LOCAL_MEM_FENCE);\n"
            "        if (lx < k) {\n            st_t a = sh[ly * LX + lx];\n"
            "            st_comb(&a, sh[ly * LX + lx + k]);\n            sh[ly * LX + lx] = a;\n        }\n    }\n"
            "    if (lx != 0 || m >= M)\n        return;\n"
            "    st_t a = LX == 1 ? s : sh[ly * LX];\n"
            "    if (!direct) {\n        pp[m * (nwork / LX) + get_group_id(0)] = a;\n        return;\n    }\n"
            "    {\n");
    for (int k = 0; k < n_out; k++)
        tocl_text_put(&t, "        long yo%d = o%d_off;\n", k, k);
    if (kr > 0) {
        tocl_text_put(&t, "        long q = m;\n");
        for (int e = kr - 1; e >= 0; e--) {
            if (e > 0)
                tocl_text_put(&t, "        { long c = q %% ks%d; q /= ks%d;\n", e, e);
            else
                tocl_text_put(&t, "        { long c = q;\n");
            for (int k = 0; k < n_out; k++)
                tocl_text_put(&t, "          yo%d += c * o%d_ks%d;\n", k, k, e);
            tocl_text_put(&t, "        }\n");
        }
    }
    put_final(&t, d, n_out, out_dtypes);
    tocl_text_put(&t, "    }\n}\n");
done:
    free(nodes);
    if (t.full)
        return tocl_fail(TOCL_E_INVALID, "tocl_reduce_render: buffer of %zu bytes is too small", cap);
    return TOCL_OK;
}

tocl_status tocl_reduce_render(const tocl_reduce_desc *d, const tocl_ir_graph *g, int n_out,
                               const tocl_dtype *out_dtypes, int kr, int rr, char *buf, size_t cap) {
    return render(d, g, n_out, out_dtypes, kr, rr, 0, buf, cap);
}

/* ------------------------------------------------------------ columns */

int tocl_reduce_col_ok(const tocl_reduce_desc *d, const tocl_ir_graph *g, int kr) {
    const tocl_reduce_rule *r = tocl_reduce_rule_of(d->kind);
    /* Any kind, over at least one input and one kept dim, with 4- and
     * 8-byte accumulators (a lane block of values is then 64 bytes, one
     * cache line): not any/all (bool). */
    return r && kr >= 1 && g->n_inputs >= 1 &&
           (d->acc == TOCL_F32 || d->acc == TOCL_F64 || d->acc == TOCL_I32 || d->acc == TOCL_I64);
}

int tocl_reduce_col_lanes(tocl_dtype acc) { return acc == TOCL_F64 || acc == TOCL_I64 ? 8 : 16; }

/* The vector load of W adjacent inputs at element `at` when the prologue
 * is a plain load of one float input of the accumulator's compute type (a
 * sum's default prologue), else NULL: PoCL does not turn the lanes'
 * scalar half / bfloat16 conversions into vector ones (float16 sums ran at
 * half the float32 speed for half the bytes). */
static const char *vec_load(const tocl_reduce_desc *d, const tocl_ir_graph *g, int W) {
    if (d->kind != TOCL_REDUCE_SUM || d->map != TOCL_REDUCE_MAP_NONE || g->n_inputs != 1 || g->n_scalars ||
        g->n_nodes != 1 || g->nodes[g->output_nodes[0]].op != TOCL_IR_INPUT || g->nodes[0].dtype != d->acc)
        return NULL;
    switch (g->input_dtypes[0]) {
    case TOCL_F32: return W == 16 ? "vload16(0, i0 + %s)" : NULL;
    case TOCL_F16: return W == 16 ? "vload_half16(0, i0 + %s)" : NULL;
    case TOCL_BF16: return W == 16 ? "as_float16(convert_uint16(vload16(0, i0 + %s)) << 16)" : NULL;
    case TOCL_F64: return W == 8 ? "vload8(0, i0 + %s)" : NULL;
    default: return NULL;
    }
}

/* Lane l of the running block: the prologue at input offsets x_i<k> =
 * xb_i<k> + (inner + k) * rs + l, folded into lane l's accumulator. */
static void put_lane(tocl_text *t, const tocl_reduce_desc *d, const tocl_ir_graph *g, int L, const char *lane,
                     const char *acc, const char *nodes) {
    tocl_text_put(t, "                {\n");
    for (int k = 0; k < g->n_inputs; k++)
        tocl_text_put(t, "                long x_i%d = xb_i%d + (inner + k) * i%d_rs%d + %s;\n", k, k, k, L, lane);
    tocl_text_put(t, "%s", nodes);
    put_map(t, d, g);
    if (d->kind == TOCL_REDUCE_SUM)
        tocl_text_put(t, "                %s += x;\n", acc);
    else
        tocl_text_put(t, "                st_add(&%s, x, r + k);\n", acc);
    tocl_text_put(t, "                }\n");
}

/* The column kernel `tocl_redc` (same arguments as tocl_red): for
 * reductions whose innermost kept dim is contiguous (stride 1) in every
 * input, e.g. x.sum(0). tocl_red gives each output row a work-item that
 * walks its column alone: one element per cache line and nothing to
 * vectorise (PoCL vectorises across work-items only loop-free kernels).
 * Here a work-item owns W adjacent outputs (64 bytes of accumulators) and
 * folds each reduced position's W adjacent inputs in straight-line lanes
 * the compiler turns into vector loads and adds. Work-items are (column
 * block, split of the reduced range): with nwork > 1 splits, split g writes
 * its W states to part[g * M + m] and a second launch (from_part, R = the
 * number of splits) combines them in split order. Each column is folded in
 * reduced order, sums in blocks of 256 positions added to the total, so the
 * result does not depend on the launch shape beyond the split count. A
 * block narrower than W (the kept dim's tail) runs one lane at a time. */
static void put_col_body(tocl_text *t, const tocl_reduce_desc *d, const tocl_ir_graph *g, int n_out,
                         const tocl_dtype *out_dtypes, int kr, int rr, int W, const char *nodes) {
    int nin = g->n_inputs, L = rr - 1, sum = d->kind == TOCL_REDUCE_SUM;
    int K = kr - 1;
    tocl_text_put(t, "    const long K0 = ks%d, nb = (K0 + %d) / %d;\n"
            "    const long bi = get_global_id(0), g = get_global_id(1);\n"
            "    if (bi >= (M / K0) * nb)\n        return;\n"
            "    const long c0 = (bi %% nb) * %d, m0 = (bi / nb) * K0 + c0, n = min((long)%d, K0 - c0);\n"
            "    __global st_t *pp = (__global st_t *)(part + part_off);\n", K, W - 1, W, W, W);
    for (int k = 0; k < nin; k++)
        tocl_text_put(t, "    long b_i%d = i%d_off;\n", k, k);
    for (int k = 0; k < n_out; k++)
        tocl_text_put(t, "    long bo%d = o%d_off;\n", k, k);
    tocl_text_put(t, "    {\n        long q = m0;\n");
    for (int e = kr - 1; e >= 0; e--) {
        if (e > 0)
            tocl_text_put(t, "        { long c = q %% ks%d; q /= ks%d;\n", e, e);
        else
            tocl_text_put(t, "        { long c = q;\n");
        for (int k = 0; k < nin; k++)
            tocl_text_put(t, "          b_i%d += c * i%d_ks%d;\n", k, k, e);
        for (int k = 0; k < n_out; k++)
            tocl_text_put(t, "          bo%d += c * o%d_ks%d;\n", k, k, e);
        tocl_text_put(t, "        }\n");
    }
    tocl_text_put(t, "    }\n    const long r0 = from_part ? 0 : g * per, r1 = from_part ? 0 : min(R, r0 + per);\n");
    /* the walk over [r0, r1): runs along the innermost reduced dim */
    for (int full = 1; full >= 0; full--) {
        int nl = full ? W : 1;
        if (full)
            tocl_text_put(t, "    if (n == %d) {\n        const long l0 = 0;\n", W);
        else
            tocl_text_put(t, "    for (long l0 = 0; l0 < (n == %d ? 0 : n); l0++) {\n", W);
        for (int l = 0; l < nl; l++)
            tocl_text_put(t, "        st_t t%d;\n        st_init(&t%d);\n", l, l);
        tocl_text_put(t, "        if (from_part) {\n            for (long p = 0; p < R; p++) {\n");
        for (int l = 0; l < nl; l++)
            tocl_text_put(t, "                st_comb(&t%d, pp[p * M + m0 + l0 + %d]);\n", l, l);
        tocl_text_put(t, "            }\n        }\n        long r = r0;\n        while (r < r1) {\n");
        if (rr == 1)
            tocl_text_put(t, "            long inner = r;\n            long run = r1 - r;\n");
        else
            tocl_text_put(t, "            long inner = r %% rs%d, q2 = r / rs%d;\n"
                    "            long run = min(rs%d - inner, r1 - r);\n", L, L, L);
        for (int k = 0; k < nin; k++)
            tocl_text_put(t, "            long xb_i%d = b_i%d + l0;\n", k, k);
        for (int e = L - 1; e >= 0; e--) {
            if (e > 0)
                tocl_text_put(t, "            { long c = q2 %% rs%d; q2 /= rs%d;\n", e, e);
            else
                tocl_text_put(t, "            { long c = q2;\n");
            for (int k = 0; k < nin; k++)
                tocl_text_put(t, "              xb_i%d += c * i%d_rs%d;\n", k, k, e);
            tocl_text_put(t, "            }\n");
        }
        const char *vl = full ? vec_load(d, g, W) : NULL;
        if (vl) {
            /* explicit vectors; the same additions as the lanes */
            static const char hex[] = "0123456789abcdef";
            char at[48];
            snprintf(at, sizeof at, "xb_i0 + (inner + k) * i0_rs%d", L);
            tocl_text_put(t, "            for (long k = 0; k < run;) {\n"
                    "                long kb = min(run, k + 256);\n"
                    "                %s%d uv = 0;\n                for (; k < kb; k++)\n                    uv += ",
                    tocl_render_compute_type(d->acc), W);
            tocl_text_put(t, vl, at);
            tocl_text_put(t, ";\n");
            for (int l = 0; l < nl; l++)
                tocl_text_put(t, "                t%d.v += uv.s%c;\n", l, hex[l]);
            tocl_text_put(t, "            }\n");
        } else {
        if (sum) {
            tocl_text_put(t, "            for (long k = 0; k < run;) {\n"
                    "                long kb = min(run, k + 256);\n");
            for (int l = 0; l < nl; l++)
                tocl_text_put(t, "                A u%d = 0;\n", l);
            tocl_text_put(t, "                for (; k < kb; k++) {\n");
        } else {
            tocl_text_put(t, "            {\n                for (long k = 0; k < run; k++) {\n");
        }
        for (int l = 0; l < nl; l++) {
            char lane[16], acc[16];
            snprintf(lane, sizeof lane, "%d", l);
            snprintf(acc, sizeof acc, sum ? "u%d" : "t%d", l);
            put_lane(t, d, g, L, lane, acc, nodes);
        }
        tocl_text_put(t, "                }\n");
        if (sum)
            for (int l = 0; l < nl; l++)
                tocl_text_put(t, "                t%d.v += u%d;\n", l, l);
        tocl_text_put(t, "            }\n");
        }
        tocl_text_put(t, "            r += run;\n        }\n");
        /* partials, or the outputs */
        tocl_text_put(t, "        if (!direct) {\n");
        for (int l = 0; l < nl; l++)
            tocl_text_put(t, "            pp[g * M + m0 + l0 + %d] = t%d;\n", l, l);
        tocl_text_put(t, "        } else {\n");
        for (int l = 0; l < nl; l++) {
            tocl_text_put(t, "        {\n        st_t a = t%d;\n", l);
            for (int k = 0; k < n_out; k++)
                tocl_text_put(t, "        long yo%d = bo%d + (l0 + %d) * o%d_ks%d;\n", k, k, l, k, K);
            put_final(t, d, n_out, out_dtypes);
            tocl_text_put(t, "        }\n");
        }
        tocl_text_put(t, "        }\n    }\n");
    }
    tocl_text_put(t, "}\n");
}

tocl_status tocl_reduce_render_col(const tocl_reduce_desc *d, const tocl_ir_graph *g, int n_out,
                                   const tocl_dtype *out_dtypes, int kr, int rr, int lanes, char *buf, size_t cap) {
    return render(d, g, n_out, out_dtypes, kr, rr, lanes, buf, cap);
}
