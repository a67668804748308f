/* reduce_rules.h - reductions as rows of tables (reduce_rules.c): a combine
 * rule per tocl_reduce_kind, a map per tocl_reduce_map, a finaliser per
 * tocl_reduce_final. The renderer (render_reduce.c) and the launcher's
 * checks (launch/reduce.c) read these rows; a new combine rule is one enum
 * value in include/tocl/reduce.h and one row here. */
#ifndef TOCL_REDUCE_RULES_H
#define TOCL_REDUCE_RULES_H

#include "tocl/reduce.h"

typedef enum tocl_reduce_init {
    TOCL_RINIT_ZERO = 0,
    TOCL_RINIT_ONE,
    TOCL_RINIT_LOWEST,  /* the accumulator type's minimum (-inf for floats) */
    TOCL_RINIT_HIGHEST  /* its maximum (+inf) */
} tocl_reduce_init;

typedef enum tocl_reduce_store {
    TOCL_RSTORE_VALUE = 0, /* one output: the state's value, through the finaliser */
    TOCL_RSTORE_ARG,       /* [value,] index: 2 outputs, or 1 (the index) */
    TOCL_RSTORE_WELFORD    /* variance (std with FINAL_STD) [, mean] */
} tocl_reduce_store;

/* The kernel's state is `st_t { A v; A m2; long n; long i; }`; the rows
 * give OpenCL C for its functions. */
typedef struct tocl_reduce_rule {
    const char *name;
    tocl_reduce_init init;
    /* Functions the bodies below call, emitted before them (float / other
     * accumulators; NULL: none, or the float text for both). */
    const char *helpers_float, *helpers_int;
    /* Body of `void st_add(st_t *s, A x, long r)` (float / other). */
    const char *add_float, *add_int;
    /* Body of `void st_comb(st_t *s, st_t o)`; NULL: st_add(s, o.v, 0). */
    const char *comb;
    /* A statement on `A y` (the value) before the finaliser; NULL: none. */
    const char *finish;
    tocl_reduce_store store;
    int needs_float; /* only floating accumulators */
    int keep_order;  /* reduced positions numbered in logical order (arg-reductions) */
    int needs_int;   /* only integer accumulators (bitwise combines) */
} tocl_reduce_rule;

/* NULL for an out-of-range kind. */
const tocl_reduce_rule *tocl_reduce_rule_of(tocl_reduce_kind kind);
/* The map's expression of the prologue's outputs `$0` (and `$1`), of type
 * A; *needs_float (may be NULL) says whether it needs a floating accumulator. */
const char *tocl_reduce_map_expr(tocl_reduce_map map, int *needs_float);
/* The finaliser's statement on `A y` (NULL: none); its flag needs_float. */
const char *tocl_reduce_final_stmt(tocl_reduce_final final, int *needs_float);
/* Most outputs the kind produces (2 for ARG and WELFORD stores). */
int tocl_reduce_max_outputs(tocl_reduce_kind kind);

#endif
