/* render_internal.h - what render.c lends to the other renderers in
 * codegen/ (render_reduce.c, gemm_epilogue.c): the text buffer, dtype
 * spellings, helpers and node statements. */
#ifndef TOCL_RENDER_INTERNAL_H
#define TOCL_RENDER_INTERNAL_H

#include <stddef.h>

#include "codegen/ir_internal.h"

/* A fixed-size text buffer that renderers append to. Once something does not
 * fit, `full` is set and later appends are dropped, so a renderer checks
 * once at the end instead of after every line. */
typedef struct tocl_text {
    char *buf;
    size_t cap, len;
    int full;
} tocl_text;

void tocl_text_put(tocl_text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* OpenCL C type a value of dtype is computed in ("float" for float16). */
const char *tocl_render_compute_type(tocl_dtype t);
/* OpenCL C type of a buffer element ("half", "ushort" for bfloat16). */
const char *tocl_render_storage_type(tocl_dtype t);
/* Kernel-argument type of a scalar (bool passes as uchar). */
const char *tocl_render_scalar_arg_type(tocl_dtype t);
/* Definition of `ushort tocl_f2bf(float)` (round to nearest even). */
const char *tocl_render_bf16_helper(void);
/* The helper functions g's nodes call (each op and dtype class once). */
void tocl_render_helpers(tocl_text *t, const tocl_ir_graph *g);
/* Statements `C v<i> = ...;` for every node of g, input k read from buffer
 * i<k> at element x_i<k> and scalar k from argument s<k> (the caller
 * declares those). Returns the text length, or -1 if cap is too small. */
long tocl_render_nodes(const tocl_ir_graph *g, char *buf, size_t cap);

#endif
