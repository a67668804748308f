/* scan.c - what the kernel parser reads besides signatures: the source with
 * comments, literals and preprocessor lines blanked, its object-like
 * #defines, element types resolved through defines, and the #define
 * preamble of a call's defines. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "custom/parse_internal.h"

/* Blank comments and literals (newlines kept) and preprocessor lines. */
void tocl_custom_blank(tocl_custom_parser *p) {
    char *s = p->scan;
    size_t n = p->len;
    int line_start = 1;
    for (size_t i = 0; i < n;) {
        if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') {
            while (i < n && s[i] != '\n')
                s[i++] = ' ';
        } else if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
            s[i] = s[i + 1] = ' ';
            i += 2;
            while (i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/')) {
                if (s[i] != '\n')
                    s[i] = ' ';
                i++;
            }
            if (i < n)
                s[i++] = ' ';
            if (i < n)
                s[i++] = ' ';
        } else if (s[i] == '"' || s[i] == '\'') {
            char q = s[i];
            s[i++] = ' ';
            while (i < n && s[i] != q && s[i] != '\n') {
                if (s[i] == '\\' && i + 1 < n)
                    s[i++] = ' ';
                s[i++] = ' ';
            }
            if (i < n && s[i] == q)
                s[i++] = ' ';
        } else if (line_start && s[i] == '#') {
            while (i < n && s[i] != '\n') {
                if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\n') {
                    s[i] = ' ';
                    i += 2; /* keep the newline */
                    continue;
                }
                s[i++] = ' ';
            }
        } else {
            if (s[i] == '\n')
                line_start = 1;
            else if (!isspace((unsigned char)s[i]))
                line_start = 0;
            i++;
        }
    }
}

static void add_define(tocl_custom_parser *p, const char *name, size_t nlen, const char *value, size_t vlen) {
    while (vlen && isspace((unsigned char)value[vlen - 1]))
        vlen--;
    while (vlen && isspace((unsigned char)*value)) {
        value++;
        vlen--;
    }
    if (p->ndefs >= TOCL_CUSTOM_MAX_DEFINES || nlen >= TOCL_CUSTOM_NAME_MAX || vlen >= TOCL_CUSTOM_NAME_MAX)
        return; /* only short object-like macros can name a type */
    tocl_custom_define *d = &p->defs[p->ndefs++];
    memcpy(d->name, name, nlen);
    d->name[nlen] = '\0';
    memcpy(d->value, value, vlen);
    d->value[vlen] = '\0';
}

/* Object-like `#define NAME value` lines of the source, for reading types
 * (comments in them were already blanked in scan, so read the value from
 * the source only up to a comment). */
void tocl_custom_collect_defines(tocl_custom_parser *p) {
    const char *s = p->src;
    for (size_t i = 0; i < p->len;) {
        size_t j = i;
        while (j < p->len && (s[j] == ' ' || s[j] == '\t'))
            j++;
        size_t eol = j;
        while (eol < p->len && s[eol] != '\n')
            eol++;
        if (j < p->len && s[j] == '#') {
            j++;
            while (j < eol && isspace((unsigned char)s[j]))
                j++;
            if (eol - j > 6 && !strncmp(s + j, "define", 6) && isspace((unsigned char)s[j + 6])) {
                j += 6;
                while (j < eol && isspace((unsigned char)s[j]))
                    j++;
                size_t n0 = j;
                while (j < eol && tocl_custom_is_ident(s[j]))
                    j++;
                if (j > n0 && j < eol && s[j] != '(') {
                    size_t v = j, ve = v;
                    while (ve < eol && !(s[ve] == '/' && ve + 1 < eol && (s[ve + 1] == '/' || s[ve + 1] == '*')) &&
                           s[ve] != '\\')
                        ve++;
                    add_define(p, s + n0, j - n0, s + v, ve - v);
                }
            }
        }
        i = eol + 1;
    }
}


static const struct {
    const char *name;
    tocl_custom_type type;
} BASE_TYPES[] = {
    {"char", TOCL_CT_CHAR},   {"uchar", TOCL_CT_UCHAR}, {"short", TOCL_CT_SHORT},   {"ushort", TOCL_CT_USHORT},
    {"int", TOCL_CT_INT},     {"uint", TOCL_CT_UINT},   {"long", TOCL_CT_LONG},     {"ulong", TOCL_CT_ULONG},
    {"half", TOCL_CT_HALF},   {"float", TOCL_CT_FLOAT}, {"double", TOCL_CT_DOUBLE}, {"bool", TOCL_CT_BOOL},
    {"void", TOCL_CT_VOID},
};

/* "float4" -> FLOAT, 4; "uint" -> UINT, 1; anything else -> OTHER. */
tocl_custom_type tocl_custom_base_of(const char *word, int *vec) {
    *vec = 1;
    for (size_t t = 0; t < sizeof BASE_TYPES / sizeof BASE_TYPES[0]; t++) {
        size_t n = strlen(BASE_TYPES[t].name);
        if (strncmp(word, BASE_TYPES[t].name, n))
            continue;
        const char *rest = word + n;
        if (!*rest)
            return BASE_TYPES[t].type;
        if (BASE_TYPES[t].type == TOCL_CT_VOID || BASE_TYPES[t].type == TOCL_CT_BOOL)
            continue;
        if (!strcmp(rest, "2") || !strcmp(rest, "3") || !strcmp(rest, "4") || !strcmp(rest, "8") ||
            !strcmp(rest, "16")) {
            *vec = atoi(rest);
            return BASE_TYPES[t].type;
        }
    }
    return TOCL_CT_OTHER;
}

/* The C spelling "unsigned int" etc. as OpenCL's one word. */
static void canonical(char *words, size_t cap) {
    static const char *const MAP[][2] = {
        {"unsigned char", "uchar"},  {"signed char", "char"},    {"unsigned short", "ushort"},
        {"unsigned int", "uint"},    {"unsigned long", "ulong"}, {"unsigned", "uint"},
        {"signed int", "int"},       {"signed short", "short"},  {"signed long", "long"},
        {"signed", "int"},           {"short int", "short"},     {"long int", "long"},
        {"unsigned short int", "ushort"}, {"unsigned long int", "ulong"},
    };
    for (size_t i = 0; i < sizeof MAP / sizeof MAP[0]; i++)
        if (!strcmp(words, MAP[i][0])) {
            snprintf(words, cap, "%s", MAP[i][1]);
            return;
        }
}

static const char *lookup_define(const tocl_custom_parser *p, const char *user_defines, const char *name, char *buf,
                                 size_t cap) {
    /* The user's defines come first in the built text, so they win. */
    size_t n = strlen(name);
    for (const char *d = user_defines; d && *d;) {
        const char *eol = strchr(d, '\n');
        size_t len = eol ? (size_t)(eol - d) : strlen(d);
        const char *eq = memchr(d, '=', len);
        if (eq && (size_t)(eq - d) == n && !strncmp(d, name, n)) {
            size_t v = len - n - 1;
            if (v >= cap)
                return NULL;
            memcpy(buf, eq + 1, v);
            buf[v] = '\0';
            return buf;
        }
        d = eol ? eol + 1 : d + len;
    }
    for (int i = 0; i < p->ndefs; i++)
        if (!strcmp(p->defs[i].name, name))
            return p->defs[i].value;
    return NULL;
}

/* Resolve type words through object-like macros (a few levels). */
void tocl_custom_resolve_type(const tocl_custom_parser *p, const char *user_defines, char *words, size_t cap) {
    char buf[TOCL_CUSTOM_NAME_MAX];
    for (int depth = 0; depth < 8; depth++) {
        canonical(words, cap);
        if (strchr(words, ' '))
            return;
        const char *v = lookup_define(p, user_defines, words, buf, sizeof buf);
        if (!v || !*v)
            return;
        /* Collapse runs of blanks so "unsigned  int" reads as one spelling. */
        char out[TOCL_CUSTOM_NAME_MAX];
        size_t o = 0;
        for (const char *c = v; *c && o + 1 < sizeof out; c++)
            if (!isspace((unsigned char)*c) || (o && out[o - 1] != ' ' && c[1]))
                out[o++] = isspace((unsigned char)*c) ? ' ' : *c;
        out[o] = '\0';
        snprintf(words, cap, "%s", out);
    }
}

/* "#define NAME VALUE" lines for the user's defines, then "#line 1". */
tocl_status tocl_custom_preamble(const char *defines, char **out, size_t *len) {
    size_t cap = 16 + (defines ? 3 * strlen(defines) + 16 : 0);
    char *buf = malloc(cap);
    if (!buf)
        return tocl_fail(TOCL_E_OOM, "out of host memory for kernel defines");
    size_t used = 0;
    buf[0] = '\0';
    for (const char *d = defines; d && *d;) {
        const char *eol = strchr(d, '\n');
        size_t n = eol ? (size_t)(eol - d) : strlen(d);
        const char *eq = memchr(d, '=', n);
        size_t nlen = eq ? (size_t)(eq - d) : n;
        size_t id = 0;
        while (id < nlen && tocl_custom_is_ident((unsigned char)d[id]))
            id++;
        int ok = nlen > 0 && tocl_custom_is_ident_start((unsigned char)d[0]) &&
                 (id == nlen || (d[id] == '(' && d[nlen - 1] == ')'));
        if (!ok) {
            free(buf);
            return tocl_fail(TOCL_E_INVALID,
                             "compile_kernel: define \"%.*s\" is not a macro name (an identifier, or NAME(args) "
                             "for a function-like macro)",
                             (int)nlen, d);
        }
        used += (size_t)snprintf(buf + used, cap - used, "#define %.*s %.*s\n", (int)nlen, d,
                                 eq ? (int)(n - nlen - 1) : 0, eq ? eq + 1 : "");
        d = eol ? eol + 1 : d + n;
    }
    if (used)
        used += (size_t)snprintf(buf + used, cap - used, "#line 1\n");
    *out = buf;
    *len = used;
    return TOCL_OK;
}
