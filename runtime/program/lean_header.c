/* lean_header.c - on PoCL, build a program behind only the builtin declarations it names.
 *
 * PoCL compiles every program behind clang's opencl-c.h, parsed again each
 * time: 895 KB, 14,506 overloads of 1,210 builtins. Measured here
 * (2026-12-05, PoCL 3.1, clang 15): a small program's clBuildProgram took
 * 90 ms behind the header and 19 ms behind the cut-down text below, and a
 * cold first training step builds dozens of such programs.
 *
 * PoCL accepts -D options, and its wrapper (_clang_opencl.h) skips the
 * header when _OPENCL_H_ is defined. So the program is built with
 * -D_OPENCL_H_ behind the header's own text, reduced to:
 *   - every preprocessor line of it (feature guards, extension pragmas), so
 *     each kept declaration sits under the same conditions as in the header;
 *   - opencl-c-base.h (types, macros, feature macros), which it includes, whole;
 *   - every overload of each builtin whose name occurs in the source.
 * A builtin that is kept keeps all its overloads, so a call resolves to the
 * same overload as behind the full header, and the code is the same. A call
 * to a builtin that was left out cannot compile (OpenCL C has no implicit
 * declarations): build.c then builds again behind the full header and counts
 * a fallback. Names the preprocessor pastes together (vload ## 4) are covered
 * by also keeping, in a source that pastes, every builtin whose name extends
 * one of its identifiers.
 *
 * A source that includes a file by name ("file") is built behind the whole
 * header: the scan cannot see its names. Anything unexpected in the header (a layout this
 * parser does not know) turns the lean build off for the process; the full
 * header always works. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program/program_internal.h"

#define HEADER "opencl-c.h"
#define BASE_HEADER "opencl-c-base.h"
#define NAME_SLOTS 8192 /* open addressing, power of two; the header has about 1,200 names */
#define MAX_NAME 127

/* Where PoCL installs the headers it compiles with (its data directory);
 * TORCH_OCL_POCL_INCLUDE names another. */
static const char *const g_dirs[] = {"/usr/share/pocl/include", "/usr/local/share/pocl/include"};

enum { DIRECTIVE = -1, GUARD_IFNDEF = -2, GUARD_DEFINE = -3, BASE_INCLUDE = -4 };

typedef struct item {
    uint32_t off, len; /* in g.text */
    int32_t name;      /* index into g.names, or one of the enum above */
} item;

typedef struct name {
    uint32_t off, len; /* in g.text */
} name;

static struct {
    int ok;
    char *text, *base;
    size_t base_len;
    item *items;
    int nitems;
    size_t text_max; /* the lean text's length bound: every item kept */
    name *names;      /* in order of first appearance */
    int nnames;
    int *sorted;      /* name indices sorted by spelling (prefix lookups) */
    int slots[NAME_SLOTS]; /* name index + 1; 0 = empty */
} g;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static atomic_ullong g_builds, g_fallbacks;

static int is_id_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_id(char c) { return is_id_start(c) || (c >= '0' && c <= '9'); }

/* The slot of name s[0..n) (holding it, or the empty one where it goes). */
static int *slot_of(const char *s, size_t n) {
    for (uint64_t i = tocl_hash_xxh64(s, n, 0);; i++) {
        int *slot = &g.slots[i & (NAME_SLOTS - 1)];
        if (!*slot)
            return slot;
        const name *nm = &g.names[*slot - 1];
        if (nm->len == n && !memcmp(g.text + nm->off, s, n))
            return slot;
    }
}

/* Comments become spaces (newlines kept, so directives stay on their lines). */
static void blank_comments(char *s) {
    for (char *p = s; *p; p++) {
        if (*p == '"') { /* a string literal (in deprecation messages) */
            for (p++; *p && *p != '"'; p++)
                if (*p == '\\' && p[1])
                    p++;
            if (!*p)
                return;
        } else if (p[0] == '/' && p[1] == '/') {
            /* To the end of the line, and on past a line that ends in a
             * backslash (lines are spliced before comments are removed). */
            for (char last = 0; *p && (*p != '\n' || last == '\\'); p++) {
                if (*p != '\n') {
                    last = *p == ' ' || *p == '\r' ? last : *p;
                    *p = ' ';
                } else {
                    last = 0;
                }
            }
            if (!*p)
                return;
        } else if (p[0] == '/' && p[1] == '*') {
            for (; *p && !(p[0] == '*' && p[1] == '/'); p++)
                if (*p != '\n')
                    *p = ' ';
            if (!*p)
                return;
            p[0] = p[1] = ' ';
            p++;
        }
    }
}

/* The declared function's name in a declaration: the first identifier that
 * is followed by '(' and is not __attribute__ (whose parentheses are skipped). */
static int decl_name(const char *s, size_t n, size_t *at, size_t *len) {
    for (size_t i = 0; i < n;) {
        if (!is_id_start(s[i])) {
            i++;
            continue;
        }
        size_t b = i;
        while (i < n && is_id(s[i]))
            i++;
        size_t e = i;
        while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n'))
            i++;
        if (i >= n || s[i] != '(')
            continue;
        if (e - b == 13 && !memcmp(s + b, "__attribute__", 13)) {
            int depth = 0;
            do {
                depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
                i++;
            } while (i < n && depth > 0);
            continue;
        }
        *at = b;
        *len = e - b;
        return e - b <= MAX_NAME;
    }
    return 0;
}

static int push_item(int *cap, uint32_t off, uint32_t len, int32_t nm) {
    if (g.nitems == *cap) {
        *cap = *cap ? 2 * *cap : 16384;
        item *grown = realloc(g.items, (size_t)*cap * sizeof *grown);
        if (!grown)
            return -1;
        g.items = grown;
    }
    g.items[g.nitems++] = (item){off, len, nm};
    return 0;
}

static int directive_kind(const char *s, size_t n) {
    char buf[64];
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < sizeof buf; i++)
        if (s[i] != ' ' && s[i] != '\t')
            buf[k++] = s[i];
    buf[k] = '\0';
    if (!strcmp(buf, "#ifndef_OPENCL_H_"))
        return GUARD_IFNDEF;
    if (!strcmp(buf, "#define_OPENCL_H_"))
        return GUARD_DEFINE;
    if (!strcmp(buf, "#include\"" BASE_HEADER "\""))
        return BASE_INCLUDE;
    return DIRECTIVE;
}

/* Split the header into directives and declarations. 0 when it has the
 * expected layout: one include guard on _OPENCL_H_, one include of the base
 * header, and nothing but declarations between directives. */
static int parse(void) {
    int cap = 0, guards = 0, bases = 0;
    char *t = g.text;
    size_t i = 0, stmt = (size_t)-1;
    while (t[i]) {
        size_t ls = i; /* a line starts here */
        while (t[i] == ' ' || t[i] == '\t')
            i++;
        if (t[i] == '#') {
            if (stmt != (size_t)-1)
                return -1; /* a directive inside a declaration */
            size_t b = i;
            for (;;) {
                while (t[i] && t[i] != '\n')
                    i++;
                size_t e = i;
                while (e > b && (t[e - 1] == ' ' || t[e - 1] == '\r'))
                    e--;
                if (!t[i] || e == b || t[e - 1] != '\\')
                    break;
                i++; /* a continued line */
            }
            int kind = directive_kind(t + b, i - b);
            guards += kind == GUARD_IFNDEF || kind == GUARD_DEFINE;
            bases += kind == BASE_INCLUDE;
            if (push_item(&cap, (uint32_t)b, (uint32_t)(i - b), kind))
                return -1;
            if (t[i])
                i++;
            continue;
        }
        i = ls;
        for (; t[i] && t[i] != '\n'; i++) {
            if (t[i] == ' ' || t[i] == '\t' || t[i] == '\r')
                continue;
            if (stmt == (size_t)-1)
                stmt = i;
            if (t[i] == '"')
                for (i++; t[i] && t[i] != '"' && t[i] != '\n'; i++)
                    ;
            if (t[i] != ';')
                continue;
            size_t at, len;
            if (!decl_name(t + stmt, i + 1 - stmt, &at, &len))
                return -1;
            int *slot = slot_of(t + stmt + at, len);
            if (!*slot) {
                if (g.nnames >= NAME_SLOTS / 2)
                    return -1;
                g.names[g.nnames] = (name){(uint32_t)(stmt + at), (uint32_t)len};
                *slot = ++g.nnames;
            }
            if (push_item(&cap, (uint32_t)stmt, (uint32_t)(i + 1 - stmt), *slot - 1))
                return -1;
            stmt = (size_t)-1;
        }
        if (t[i])
            i++;
    }
    return stmt == (size_t)-1 && guards == 2 && bases == 1 ? 0 : -1;
}

static int by_spelling(const void *a, const void *b) {
    const name *x = &g.names[*(const int *)a], *y = &g.names[*(const int *)b];
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(g.text + x->off, g.text + y->off, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static void load(void) {
    const char *env = tocl_env("TORCH_OCL_POCL_INCLUDE");
    const char *dirs[3];
    int ndirs = 0;
    if (env)
        dirs[ndirs++] = env;
    for (size_t k = 0; k < sizeof g_dirs / sizeof g_dirs[0]; k++)
        dirs[ndirs++] = g_dirs[k];
    for (int k = 0; k < ndirs && !g.text; k++) {
        char path[4096];
        size_t len;
        snprintf(path, sizeof path, "%s/" BASE_HEADER, dirs[k]);
        g.base = tocl_read_file(path, &g.base_len);
        snprintf(path, sizeof path, "%s/" HEADER, dirs[k]);
        g.text = g.base ? tocl_read_file(path, &len) : NULL;
        if (!g.text) {
            free(g.base);
            g.base = NULL;
        }
    }
    if (!g.text)
        return;
    blank_comments(g.text);
    g.names = malloc(NAME_SLOTS / 2 * sizeof *g.names);
    if (!g.names || parse() != 0 || !(g.sorted = malloc((size_t)g.nnames * sizeof *g.sorted))) {
        tocl_log(TOCL_LOG_BUILDS, "PoCL's %s has a layout this parser does not know: programs are built behind "
                 "the whole header", HEADER);
        return;
    }
    for (int k = 0; k < g.nnames; k++)
        g.sorted[k] = k;
    qsort(g.sorted, (size_t)g.nnames, sizeof *g.sorted, by_spelling);
    g.ok = 1;
    int decls = 0;
    g.text_max = g.base_len + 64; /* + "#if 1" and "#line 1" */
    for (int k = 0; k < g.nitems; k++) {
        decls += g.items[k].name >= 0;
        g.text_max += g.items[k].len + 1;
    }
    tocl_log(TOCL_LOG_BUILDS, "lean builds: %d declarations of %d builtins read from PoCL's %s", decls, g.nnames,
             HEADER);
}

/* Mark every builtin named `id`, and with `extend` every builtin whose name
 * starts with it (the sorted names that do form one run). */
static void mark(const char *id, size_t n, int extend, unsigned char *used) {
    int *slot = slot_of(id, n);
    if (*slot)
        used[*slot - 1] = 1;
    if (!extend)
        return;
    int lo = 0, hi = g.nnames;
    while (lo < hi) { /* the first name not below id */
        int mid = (lo + hi) / 2;
        const name *nm = &g.names[g.sorted[mid]];
        size_t k = nm->len < n ? nm->len : n;
        int c = memcmp(g.text + nm->off, id, k);
        if (c < 0 || (c == 0 && nm->len < n))
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < g.nnames; lo++) {
        const name *nm = &g.names[g.sorted[lo]];
        if (nm->len < n || memcmp(g.text + nm->off, id, n))
            break;
        used[g.sorted[lo]] = 1;
    }
}

/* Mark the builtins that the identifiers of `text` name. */
static void mark_text(const char *text, int extend, unsigned char *used) {
    for (const char *p = text; *p;) {
        if (!is_id_start(*p) || (p > text && is_id(p[-1]))) {
            p++;
            continue;
        }
        const char *b = p;
        while (is_id(*p))
            p++;
        if ((size_t)(p - b) <= MAX_NAME)
            mark(b, (size_t)(p - b), extend, used);
    }
}

/* Whether a line of src is an #include "file" directive. */
static int includes_by_name(const char *src) {
    for (const char *p = strstr(src, "include"); p; p = strstr(p + 7, "include")) {
        const char *h = p;
        while (h > src && (h[-1] == ' ' || h[-1] == '\t'))
            h--;
        if (h == src || h[-1] != '#')
            continue;
        const char *q = p + 7;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q == '"')
            return 1;
    }
    return 0;
}

char *tocl_lean_header(int dev, const char *source, const char *options) {
    if (!tocl_dev_is_pocl(dev) || tocl_env_off("TORCH_OCL_LEAN_HEADER"))
        return NULL;
    /* A file included by name can name builtins this scan never sees (our
     * own sources have theirs resolved when embedded; a custom kernel may
     * not): the whole header, rather than a failed build and a second.
     * (<stdint.h> in our shared parameter headers is on their host side.) */
    if (includes_by_name(source)) {
        tocl_log(TOCL_LOG_BUILDS, "a program that includes files is built behind the whole opencl-c.h");
        return NULL;
    }
    pthread_once(&g_once, load);
    if (!g.ok)
        return NULL;
    unsigned char *used = calloc((size_t)g.nnames, 1);
    if (!used)
        return NULL;
    /* Options count too: -DOP=exp names a builtin the source never spells. */
    int extend = strstr(source, "##") || (options && strstr(options, "##"));
    mark_text(source, extend, used);
    if (options)
        mark_text(options, extend, used);
    char *out = malloc(g.text_max), *w = out;
    if (!out) {
        free(used);
        return NULL;
    }
    for (int k = 0; k < g.nitems; k++) {
        const item *it = &g.items[k];
        if (it->name == GUARD_IFNDEF) {
            w += sprintf(w, "#if 1\n"); /* keeps the guard's #endif matched */
            continue;
        }
        if (it->name == GUARD_DEFINE || (it->name >= 0 && !used[it->name]))
            continue;
        if (it->name == BASE_INCLUDE) {
            memcpy(w, g.base, g.base_len);
            w += g.base_len;
        } else {
            memcpy(w, g.text + it->off, it->len);
            w += it->len;
        }
        *w++ = '\n';
    }
    w += sprintf(w, "#line 1\n"); /* the source's own line numbers in any message */
    free(used);
    return out;
}

void tocl_lean_header_count(int fell_back) { atomic_fetch_add(fell_back ? &g_fallbacks : &g_builds, 1); }

void tocl_lean_header_stats(uint64_t *builds, uint64_t *fallbacks, int reset) {
    *builds = reset ? atomic_exchange(&g_builds, 0) : atomic_load(&g_builds);
    *fallbacks = reset ? atomic_exchange(&g_fallbacks, 0) : atomic_load(&g_fallbacks);
}
