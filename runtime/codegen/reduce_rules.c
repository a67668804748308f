/* reduce_rules.c - the rows of the reduction tables (reduce_rules.h). */
#include <stddef.h>

#include "codegen/reduce_rules.h"

/* a beats b: NaN first, then the larger (smaller), ties to the lower index;
 * order-independent, so any tree shape gives the CPU's answer. */
#define BEATS_FLOAT(cmp)                                                      \
    "inline int beats(A a, long ia, A b, long ib) {\n"                        \
    "    if (isnan(b)) return isnan(a) && ia < ib;\n"                         \
    "    return isnan(a) || a " cmp " b || (a == b && ia < ib);\n}\n"
#define BEATS_INT(cmp) "inline int beats(A a, long ia, A b, long ib) { return a " cmp " b || (a == b && ia < ib); }\n"
#define ARG_ADD "if (beats(x, r, s->v, s->i)) { s->v = x; s->i = r; }"
#define ARG_COMB "if (beats(o.v, o.i, s->v, s->i)) { s->v = o.v; s->i = o.i; }"
/* NaN propagates: once the state is NaN nothing compares above it. */
#define MAXMIN_FLOAT(cmp) "if (isnan(x) || x " cmp " s->v) s->v = x;"
#define MAXMIN_INT(cmp) "if (x " cmp " s->v) s->v = x;"

/* Online log-sum-exp: v is the running maximum, m2 the sum of exp(x - v). */
#define LSE_JOIN                                                              \
    "inline void lse_join(st_t *s, A m, A c) {\n"                             \
    "    if (isnan(m)) { s->v = m; s->m2 = c; return; }\n"                    \
    "    if (isnan(s->v) || m == -INFINITY) return;\n"                        \
    "    if (m > s->v) { s->m2 = s->m2 * exp(s->v - m) + c; s->v = m; }\n"     \
    "    else if (m == s->v) s->m2 += c;\n"                                   \
    "    else s->m2 += c * exp(m - s->v);\n}\n"

#define WELFORD_ADD "s->n += 1; A d = x - s->v; s->v += d / (A)s->n; s->m2 += d * (x - s->v);"
#define WELFORD_COMB                                                          \
    "if (o.n == 0) return; if (s->n == 0) { *s = o; return; }\n"              \
    "    long n = s->n + o.n; A d = o.v - s->v, nb = (A)o.n / (A)n;\n"         \
    "    s->v += d * nb; s->m2 += o.m2 + d * d * (A)s->n * nb; s->n = n;"

static const tocl_reduce_rule rules[TOCL_REDUCE_KIND_COUNT] = {
    [TOCL_REDUCE_SUM] = {"sum", TOCL_RINIT_ZERO, NULL, NULL, "s->v += x;", NULL, NULL, NULL, TOCL_RSTORE_VALUE, 0, 0},
    [TOCL_REDUCE_PROD] = {"prod", TOCL_RINIT_ONE, NULL, NULL, "s->v *= x;", NULL, NULL, NULL, TOCL_RSTORE_VALUE, 0,
                          0},
    [TOCL_REDUCE_MAX] = {"max", TOCL_RINIT_LOWEST, NULL, NULL, MAXMIN_FLOAT(">"), MAXMIN_INT(">"), NULL, NULL,
                         TOCL_RSTORE_VALUE, 0, 0},
    [TOCL_REDUCE_MIN] = {"min", TOCL_RINIT_HIGHEST, NULL, NULL, MAXMIN_FLOAT("<"), MAXMIN_INT("<"), NULL, NULL,
                         TOCL_RSTORE_VALUE, 0, 0},
    [TOCL_REDUCE_ARGMAX] = {"argmax", TOCL_RINIT_LOWEST, BEATS_FLOAT(">"), BEATS_INT(">"), ARG_ADD, NULL, ARG_COMB,
                            NULL, TOCL_RSTORE_ARG, 0, 1},
    [TOCL_REDUCE_ARGMIN] = {"argmin", TOCL_RINIT_HIGHEST, BEATS_FLOAT("<"), BEATS_INT("<"), ARG_ADD, NULL, ARG_COMB,
                            NULL, TOCL_RSTORE_ARG, 0, 1},
    [TOCL_REDUCE_ANY] = {"any", TOCL_RINIT_ZERO, NULL, NULL, "s->v = s->v | (A)(x != 0);", NULL, NULL, NULL,
                         TOCL_RSTORE_VALUE, 0, 0},
    [TOCL_REDUCE_ALL] = {"all", TOCL_RINIT_ONE, NULL, NULL, "s->v = s->v & (A)(x != 0);", NULL, NULL, NULL,
                         TOCL_RSTORE_VALUE, 0, 0},
    [TOCL_REDUCE_WELFORD] = {"welford", TOCL_RINIT_ZERO, NULL, NULL, WELFORD_ADD, NULL, WELFORD_COMB, NULL,
                             TOCL_RSTORE_WELFORD, 1, 0},
    [TOCL_REDUCE_LOGSUMEXP] = {"logsumexp", TOCL_RINIT_LOWEST, LSE_JOIN, NULL, "lse_join(s, x, (A)1);", NULL,
                               "lse_join(s, o.v, o.m2);", "if (y != -INFINITY) y += log(a.m2);", TOCL_RSTORE_VALUE,
                               1, 0},
    [TOCL_REDUCE_XOR] = {"xor", TOCL_RINIT_ZERO, NULL, NULL, "s->v ^= x;", NULL, NULL, NULL, TOCL_RSTORE_VALUE, 0, 0,
                         1},
};

static const struct {
    const char *expr;
    int needs_float;
} maps[TOCL_REDUCE_MAP_COUNT] = {
    [TOCL_REDUCE_MAP_NONE] = {"(A)$0", 0},
    [TOCL_REDUCE_MAP_ABS] = {"fabs((A)$0)", 1},
    [TOCL_REDUCE_MAP_SQUARE] = {"(A)$0 * (A)$0", 1},
    [TOCL_REDUCE_MAP_ABS_POW] = {"pow(fabs((A)$0), fp)", 1},
    [TOCL_REDUCE_MAP_NAN_ZERO] = {"isnan($0) ? (A)0 : (A)$0", 1},
    [TOCL_REDUCE_MAP_EQ] = {"(A)($0 == $1)", 0}, /* prologue outputs 0 and 1 compared; NaN != NaN */
};

static const struct {
    const char *stmt;
    int needs_float;
} finals[TOCL_REDUCE_FINAL_COUNT] = {
    [TOCL_REDUCE_FINAL_NONE] = {NULL, 0},
    [TOCL_REDUCE_FINAL_MEAN] = {"y = y / (A)count;", 1},
    [TOCL_REDUCE_FINAL_SQRT] = {"y = sqrt(y);", 1},
    [TOCL_REDUCE_FINAL_ROOT] = {"y = pow(y, fq);", 1},
    [TOCL_REDUCE_FINAL_STD] = {"y = sqrt(y);", 1}, /* WELFORD: applied to the variance */
};

const tocl_reduce_rule *tocl_reduce_rule_of(tocl_reduce_kind kind) {
    return (int)kind >= 0 && kind < TOCL_REDUCE_KIND_COUNT ? &rules[kind] : NULL;
}

const char *tocl_reduce_map_expr(tocl_reduce_map map, int *needs_float) {
    int ok = (int)map >= 0 && map < TOCL_REDUCE_MAP_COUNT;
    if (needs_float)
        *needs_float = ok && maps[map].needs_float;
    return ok ? maps[map].expr : NULL;
}

const char *tocl_reduce_final_stmt(tocl_reduce_final final, int *needs_float) {
    int ok = (int)final >= 0 && final < TOCL_REDUCE_FINAL_COUNT;
    if (needs_float)
        *needs_float = ok && finals[final].needs_float;
    return ok ? finals[final].stmt : NULL;
}

int tocl_reduce_max_outputs(tocl_reduce_kind kind) {
    const tocl_reduce_rule *r = tocl_reduce_rule_of(kind);
    return r && r->store != TOCL_RSTORE_VALUE ? 2 : 1;
}
