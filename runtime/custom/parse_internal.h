/* parse_internal.h - what the kernel parser (parse.c) and the source
 * scanner (scan.c) share. */
#ifndef TOCL_CUSTOM_PARSE_INTERNAL_H
#define TOCL_CUSTOM_PARSE_INTERNAL_H

#include <ctype.h>
#include <stddef.h>

#include "custom/custom_internal.h"

#define TOCL_CUSTOM_MAX_DEFINES 256

typedef struct tocl_custom_define {
    char name[TOCL_CUSTOM_NAME_MAX];
    char value[TOCL_CUSTOM_NAME_MAX];
} tocl_custom_define;

typedef struct tocl_custom_parser {
    const char *src; /* the user's source */
    char *scan;      /* the same length: comments, strings and # lines blanked */
    size_t len;
    tocl_custom_define defs[TOCL_CUSTOM_MAX_DEFINES];
    int ndefs;
} tocl_custom_parser;

static inline int tocl_custom_is_ident_start(int c) { return isalpha(c) || c == '_'; }
static inline int tocl_custom_is_ident(int c) { return isalnum(c) || c == '_'; }

/* Fill p->scan from p->src: comments and literals blanked (newlines kept),
 * preprocessor lines blanked. */
void tocl_custom_blank(tocl_custom_parser *p);
/* Collect the source's short object-like `#define NAME value` lines. */
void tocl_custom_collect_defines(tocl_custom_parser *p);
/* "float4" -> FLOAT, 4; "uint" -> UINT, 1; anything else -> OTHER. */
tocl_custom_type tocl_custom_base_of(const char *word, int *vec);
/* Type words ("unsigned int", "T") to one OpenCL spelling, through the
 * call's defines (first) and the source's. */
void tocl_custom_resolve_type(const tocl_custom_parser *p, const char *user_defines, char *words, size_t cap);
/* "#define NAME VALUE" lines for the call's defines, then "#line 1" (empty
 * without defines); *out is malloc'ed. */
tocl_status tocl_custom_preamble(const char *defines, char **out, size_t *len);

#endif
