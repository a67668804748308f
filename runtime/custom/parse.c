/* parse.c - read the __kernel signatures of a user's OpenCL C source and
 * rewrite its pointer parameters to (buffer, byte offset) pairs.
 *
 * Not a C parser: it blanks comments, skips preprocessor lines and function
 * bodies, and reads each `__kernel ... void name(params) {` at file scope.
 * That covers kernels as people write them; a signature built by macros is
 * refused with a message rather than guessed. Every edit stays on the line
 * it touches, so the compiler's line numbers are the user's. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "custom/parse_internal.h"

#define MAX_KERNELS 256
#define MAX_TOKENS 64
#define MAX_EDITS (MAX_KERNELS * (TOCL_CUSTOM_MAX_PARAMS + 1))

typedef struct edit {
    size_t at, drop; /* replace src[at, at+drop) */
    char *text;      /* malloc'ed */
} edit;

/* ---- tokens of one parameter ---- */

typedef struct token {
    size_t at, len; /* in src */
    int star;       /* a '*' */
} token;

static int tok_is(const tocl_custom_parser *p, const token *t, const char *word) {
    return !t->star && strlen(word) == t->len && !strncmp(p->src + t->at, word, t->len);
}

static int tok_in(const tocl_custom_parser *p, const token *t, const char *const *words) {
    for (; *words; words++)
        if (tok_is(p, t, *words))
            return 1;
    return 0;
}

static const char *const SPACE_GLOBAL[] = {"__global", "global", NULL};
static const char *const SPACE_CONSTANT[] = {"__constant", "constant", NULL};
static const char *const SPACE_LOCAL[] = {"__local", "local", NULL};
static const char *const SPACE_PRIVATE[] = {"__private", "private", NULL};
static const char *const IGNORED[] = {"volatile", "restrict", "__restrict", "__restrict__", NULL};
static const char *const IMAGES[] = {"__read_only", "read_only", "__write_only", "write_only", "__read_write",
                                     "read_write", "sampler_t", "image1d_t", "image2d_t", "image3d_t",
                                     "image1d_array_t", "image2d_array_t", "image1d_buffer_t", "pipe", "__pipe",
                                     "queue_t", "clk_event_t", "event_t", NULL};

/* Skip `__attribute__((...))` starting at *i (the identifier); 1 if skipped. */
static int skip_attribute(const tocl_custom_parser *p, size_t *i, size_t end) {
    const char *s = p->scan;
    size_t j = *i;
    if (!(end - j >= 11 && !strncmp(s + j, "__attribute", 11)))
        return 0;
    while (j < end && tocl_custom_is_ident(s[j]))
        j++;
    while (j < end && isspace((unsigned char)s[j]))
        j++;
    if (j >= end || s[j] != '(')
        return 0;
    int depth = 0;
    for (; j < end; j++) {
        if (s[j] == '(')
            depth++;
        else if (s[j] == ')' && --depth == 0) {
            *i = j + 1;
            return 1;
        }
    }
    return 0;
}

static int tokenize(const tocl_custom_parser *p, size_t a, size_t b, token *toks, int *ntok) {
    const char *s = p->scan;
    int n = 0;
    for (size_t i = a; i < b;) {
        if (isspace((unsigned char)s[i])) {
            i++;
        } else if (tocl_custom_is_ident_start((unsigned char)s[i])) {
            if (skip_attribute(p, &i, b))
                continue;
            size_t j = i;
            while (j < b && tocl_custom_is_ident((unsigned char)s[j]))
                j++;
            if (n == MAX_TOKENS)
                return 0;
            toks[n++] = (token){i, j - i, 0};
            i = j;
        } else if (s[i] == '*') {
            if (n == MAX_TOKENS)
                return 0;
            toks[n++] = (token){i, 1, 1};
            i++;
        } else {
            return 0; /* an array bound, a macro call, ... */
        }
    }
    *ntok = n;
    return 1;
}

/* ---- one parameter ---- */

typedef struct param_edit {
    size_t name_at, name_len;
    char prologue[512];
} param_edit;

static void append_tok(const tocl_custom_parser *p, char *buf, size_t cap, const token *t) {
    size_t n = strlen(buf);
    snprintf(buf + n, cap - n, "%s%.*s", n && !t->star ? " " : "", (int)t->len, p->src + t->at);
}

static tocl_status parse_param(const tocl_custom_parser *p, const char *user_defines, const char *kname, size_t a, size_t b,
                               tocl_custom_param *out, param_edit *ed) {
    token toks[MAX_TOKENS];
    int n = 0;
    if (!tokenize(p, a, b, toks, &n) || n < 2 || toks[n - 1].star)
        return tocl_fail(TOCL_E_INVALID,
                         "compile_kernel: cannot read parameter \"%.*s\" of kernel %s: write each parameter as "
                         "'[address space] [const] type [*] name' (no arrays or macros for whole parameters)",
                         (int)(b - a), p->src + a, kname);
    memset(out, 0, sizeof *out);
    const token *name = &toks[n - 1];
    if (name->len >= TOCL_CUSTOM_NAME_MAX)
        return tocl_fail(TOCL_E_INVALID, "compile_kernel: parameter name of kernel %s is too long", kname);
    memcpy(out->name, p->src + name->at, name->len);
    int space = 0; /* 0 private, 'g', 'c', 'l' */
    int stars = 0, image = 0, is_const = 0, is_volatile = 0, restrict_ = 0;
    char words[TOCL_CUSTOM_NAME_MAX] = "";
    for (int i = 0; i < n - 1; i++) {
        const token *t = &toks[i];
        append_tok(p, out->decl, sizeof out->decl, t);
        if (t->star)
            stars++;
        else if (tok_in(p, t, SPACE_GLOBAL))
            space = 'g';
        else if (tok_in(p, t, SPACE_CONSTANT))
            space = 'c';
        else if (tok_in(p, t, SPACE_LOCAL))
            space = 'l';
        else if (tok_in(p, t, SPACE_PRIVATE))
            space = 0;
        else if (tok_is(p, t, "const"))
            is_const |= stars == 0;
        else if (tok_in(p, t, IGNORED)) {
            if (tok_is(p, t, "volatile") && stars == 0)
                is_volatile = 1;
            else if (stars)
                restrict_ = 1;
        } else if (tok_in(p, t, IMAGES))
            image = 1;
        else if (!stars)
            append_tok(p, words, sizeof words, t);
    }
    char written[TOCL_CUSTOM_NAME_MAX];
    snprintf(written, sizeof written, "%s", words);
    tocl_custom_resolve_type(p, user_defines, words, sizeof words);
    snprintf(out->type, sizeof out->type, "%s", words);
    out->base = words[0] ? tocl_custom_base_of(words, &out->vec) : TOCL_CT_OTHER;
    out->is_const = is_const || space == 'c';
    if (image || stars > 1 || !written[0])
        out->kind = TOCL_CUSTOM_UNSUPPORTED;
    else if (stars == 1)
        out->kind = space == 'g' || space == 'c' ? TOCL_CUSTOM_BUFFER
                    : space == 'l'              ? TOCL_CUSTOM_LOCAL
                                                : TOCL_CUSTOM_UNSUPPORTED;
    else
        out->kind = out->base <= TOCL_CT_DOUBLE ? TOCL_CUSTOM_SCALAR : TOCL_CUSTOM_UNSUPPORTED;
    ed->name_len = 0;
    if (out->kind != TOCL_CUSTOM_BUFFER)
        return TOCL_OK;
    const char *sp = space == 'g' ? "__global" : "__constant";
    const char *cq = out->is_const && space != 'c' ? " const" : "";
    ed->name_at = name->at;
    ed->name_len = name->len;
    int w = snprintf(ed->prologue, sizeof ed->prologue,
                     " %s%s%s %s *%s %s = (%s%s%s %s *)((%s%s char *)%s__tocl_buf + %s__tocl_off);", sp, cq,
                     is_volatile ? " volatile" : "", written, restrict_ ? " restrict" : "", out->name, sp, cq,
                     is_volatile ? " volatile" : "", written, sp, cq, out->name, out->name);
    if (w < 0 || (size_t)w >= sizeof ed->prologue)
        return tocl_fail(TOCL_E_INVALID, "compile_kernel: parameter %s of kernel %s is too long to rewrite",
                         out->name, kname);
    return TOCL_OK;
}

/* ---- kernels ---- */

static size_t skip_space(const char *s, size_t i, size_t n) {
    while (i < n && isspace((unsigned char)s[i]))
        i++;
    return i;
}

/* The matching ')' of the '(' at i, or n. */
static size_t match_paren(const char *s, size_t i, size_t n) {
    int depth = 0;
    for (; i < n; i++) {
        if (s[i] == '(')
            depth++;
        else if (s[i] == ')' && --depth == 0)
            return i;
    }
    return n;
}

static int cmp_edit(const void *a, const void *b) {
    const edit *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at;
}

static tocl_status add_edit(edit *edits, int *nedits, size_t at, size_t drop, const char *text) {
    if (*nedits >= MAX_EDITS)
        return tocl_fail(TOCL_E_INVALID, "compile_kernel: too many kernel parameters in one source");
    char *copy = strdup(text);
    if (!copy)
        return tocl_fail(TOCL_E_OOM, "out of host memory rewriting a kernel source");
    edits[(*nedits)++] = (edit){at, drop, copy};
    return TOCL_OK;
}

/* Read the kernel whose `__kernel` keyword ends at i; fill k, add edits,
 * and return the position after its body's '{' (or after ';' for a
 * prototype, *is_def = 0). */
static tocl_status parse_kernel(const tocl_custom_parser *p, const char *user_defines, size_t i, tocl_custom_kernel *k,
                                edit *edits, int *nedits, size_t *next, int *is_def) {
    const char *s = p->scan;
    size_t n = p->len;
    int seen_void = 0;
    size_t name_at = 0, name_len = 0;
    for (;;) {
        i = skip_space(s, i, n);
        if (i >= n || !tocl_custom_is_ident_start((unsigned char)s[i]))
            break;
        if (skip_attribute(p, &i, n))
            continue;
        size_t j = i;
        while (j < n && tocl_custom_is_ident((unsigned char)s[j]))
            j++;
        if (j - i == 4 && !strncmp(s + i, "void", 4) && !seen_void) {
            seen_void = 1;
        } else if (seen_void) {
            name_at = i;
            name_len = j - i;
            i = j;
            break;
        }
        i = j;
    }
    i = skip_space(s, i, n);
    if (!name_len || i >= n || s[i] != '(') {
        int line = 1;
        for (size_t c = 0; c < i && c < n; c++)
            line += p->src[c] == '\n';
        return tocl_fail(TOCL_E_INVALID,
                         "compile_kernel: cannot read the __kernel declared on line %d: expected "
                         "'__kernel void name(parameters) { ... }'",
                         line);
    }
    if (name_len >= TOCL_CUSTOM_NAME_MAX)
        return tocl_fail(TOCL_E_INVALID, "compile_kernel: kernel name %.*s... is over %d characters", 16,
                         p->src + name_at, TOCL_CUSTOM_NAME_MAX - 1);
    memset(k, 0, sizeof *k);
    memcpy(k->name, p->src + name_at, name_len);
    size_t open = i, close = match_paren(s, i, n);
    if (close >= n)
        return tocl_fail(TOCL_E_INVALID, "compile_kernel: unbalanced parentheses in kernel %s's parameters",
                         k->name);
    size_t after = skip_space(s, close + 1, n);
    while (after < n && skip_attribute(p, &after, n))
        after = skip_space(s, after, n);
    if (after < n && s[after] == ';') {
        *is_def = 0;
        *next = after + 1;
        return TOCL_OK;
    }
    if (after >= n || s[after] != '{')
        return tocl_fail(TOCL_E_INVALID, "compile_kernel: kernel %s: expected '{' after its parameters", k->name);
    *is_def = 1;
    *next = after + 1;

    /* Parameters: split at commas outside parentheses. "(void)" and "()" are none. */
    char prologue[TOCL_CUSTOM_MAX_PARAMS * 256] = "";
    size_t a = open + 1;
    size_t first = skip_space(s, a, close);
    int empty = first == close || (close - first >= 4 && !strncmp(s + first, "void", 4) &&
                                   skip_space(s, first + 4, close) == close);
    int depth = 0;
    for (size_t c = a; !empty && c <= close; c++) {
        if (c < close && s[c] == '(')
            depth++;
        else if (c < close && s[c] == ')')
            depth--;
        if (c < close && (s[c] != ',' || depth))
            continue;
        if (k->nparams == TOCL_CUSTOM_MAX_PARAMS)
            return tocl_fail(TOCL_E_INVALID, "compile_kernel: kernel %s has more than %d parameters", k->name,
                             TOCL_CUSTOM_MAX_PARAMS);
        param_edit ed;
        tocl_status st = parse_param(p, user_defines, k->name, a, c, &k->params[k->nparams], &ed);
        if (st != TOCL_OK)
            return st;
        for (int q = 0; q < k->nparams; q++)
            if (!strcmp(k->params[q].name, k->params[k->nparams].name))
                return tocl_fail(TOCL_E_INVALID, "compile_kernel: kernel %s has two parameters named %s", k->name,
                                 k->params[q].name);
        k->nparams++;
        if (ed.name_len) {
            char repl[3 * TOCL_CUSTOM_NAME_MAX + 32];
            snprintf(repl, sizeof repl, "%s__tocl_buf, ulong %s__tocl_off", k->params[k->nparams - 1].name,
                     k->params[k->nparams - 1].name);
            TOCL_TRY(add_edit(edits, nedits, ed.name_at, ed.name_len, repl));
            size_t used = strlen(prologue);
            snprintf(prologue + used, sizeof prologue - used, "%s", ed.prologue);
        }
        a = c + 1;
    }
    if (prologue[0])
        TOCL_TRY(add_edit(edits, nedits, after + 1, 0, prologue));
    return TOCL_OK;
}

tocl_status tocl_custom_parse(const char *source, const char *defines, tocl_custom_kernel **kernels,
                              int *nkernels, char **text) {
    tocl_custom_parser *p = calloc(1, sizeof *p);
    edit *edits = calloc(MAX_EDITS, sizeof *edits);
    tocl_custom_kernel *ks = calloc(MAX_KERNELS, sizeof *ks);
    char *pre = NULL, *outtext = NULL;
    int nedits = 0, nk = 0;
    tocl_status st = TOCL_OK;
    if (!p || !edits || !ks) {
        st = tocl_fail(TOCL_E_OOM, "out of host memory parsing a kernel source");
        goto done;
    }
    p->src = source;
    p->len = strlen(source);
    p->scan = strdup(source);
    if (!p->scan) {
        st = tocl_fail(TOCL_E_OOM, "out of host memory parsing a kernel source");
        goto done;
    }
    tocl_custom_blank(p);
    tocl_custom_collect_defines(p);

    int depth = 0;
    for (size_t i = 0; i < p->len;) {
        char c = p->scan[i];
        if (c == '{') {
            depth++;
            i++;
        } else if (c == '}') {
            depth--;
            i++;
        } else if (tocl_custom_is_ident_start((unsigned char)c)) {
            size_t j = i;
            while (j < p->len && tocl_custom_is_ident((unsigned char)p->scan[j]))
                j++;
            int kw = (j - i == 8 && !strncmp(p->scan + i, "__kernel", 8)) ||
                     (j - i == 6 && !strncmp(p->scan + i, "kernel", 6));
            if (kw && depth == 0) {
                if (nk == MAX_KERNELS) {
                    st = tocl_fail(TOCL_E_INVALID, "compile_kernel: more than %d kernels in one source", MAX_KERNELS);
                    goto done;
                }
                size_t next;
                int is_def;
                st = parse_kernel(p, defines, j, &ks[nk], edits, &nedits, &next, &is_def);
                if (st != TOCL_OK)
                    goto done;
                if (is_def) {
                    for (int q = 0; q < nk; q++)
                        if (!strcmp(ks[q].name, ks[nk].name)) {
                            st = tocl_fail(TOCL_E_INVALID, "compile_kernel: two kernels are named %s", ks[nk].name);
                            goto done;
                        }
                    nk++;
                    depth++; /* the body's '{' */
                }
                i = next;
            } else {
                i = j;
            }
        } else {
            i++;
        }
    }
    if (nk == 0) {
        st = tocl_fail(TOCL_E_INVALID,
                       "compile_kernel: the source defines no kernel (expected '__kernel void name(...) { ... }')");
        goto done;
    }

    size_t prelen = 0;
    st = tocl_custom_preamble(defines, &pre, &prelen);
    if (st != TOCL_OK)
        goto done;
    qsort(edits, (size_t)nedits, sizeof *edits, cmp_edit);
    size_t total = prelen + p->len + 1;
    for (int e = 0; e < nedits; e++)
        total += strlen(edits[e].text);
    outtext = malloc(total);
    if (!outtext) {
        st = tocl_fail(TOCL_E_OOM, "out of host memory rewriting a kernel source");
        goto done;
    }
    memcpy(outtext, pre, prelen);
    size_t o = prelen, from = 0;
    for (int e = 0; e < nedits; e++) {
        memcpy(outtext + o, source + from, edits[e].at - from);
        o += edits[e].at - from;
        size_t tl = strlen(edits[e].text);
        memcpy(outtext + o, edits[e].text, tl);
        o += tl;
        from = edits[e].at + edits[e].drop;
    }
    memcpy(outtext + o, source + from, p->len - from);
    o += p->len - from;
    outtext[o] = '\0';

done:
    for (int e = 0; e < nedits; e++)
        free(edits[e].text);
    free(edits);
    free(pre);
    if (p)
        free(p->scan);
    free(p);
    if (st != TOCL_OK) {
        free(ks);
        free(outtext);
        return st;
    }
    tocl_custom_kernel *shrunk = realloc(ks, (size_t)nk * sizeof *ks);
    *kernels = shrunk ? shrunk : ks;
    *nkernels = nk;
    *text = outtext;
    return TOCL_OK;
}

tocl_status tocl_custom_rewrite(const char *source, const char *defines, char **text) {
    if (!source || !text)
        return tocl_fail(TOCL_E_INVALID, "tocl_custom_rewrite: source and text must not be NULL");
    tocl_custom_kernel *ks;
    int n;
    TOCL_TRY(tocl_custom_parse(source, defines, &ks, &n, text));
    free(ks);
    return TOCL_OK;
}
