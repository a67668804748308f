/* defer_internal.h - what fused eager's recorder and flusher (defer.c) share
 * with its grouper (defer_group.c): the recorded op, the group, and the
 * operand relations both use. */
#ifndef TOCL_DEFER_INTERNAL_H
#define TOCL_DEFER_INTERNAL_H

#include "fusion/defer.h"
#include "fusion/ir_internal.h"
#include "ops/ew_internal.h"

#define REC_DIMS 8          /* iteration rank a deferred op may have (TensorIterator coalesces dims) */
#define MAX_OPS TOCL_EW_MAX_OPERANDS

typedef struct d_operand {
    tocl_addr data;
    uint64_t lo, hi;   /* bytes touched: [lo, hi) */
    cl_mem buf;
    cl_long off;
    tocl_dtype dtype;
    int64_t flat_st;   /* the stride of a flat (rank <= 1) op's operand */
    int64_t st[REC_DIMS];
} d_operand;

typedef struct d_rec {
    int ndim, flat, nout, nops;
    int math; /* libm calls counted against the CPU limit: see math_calls() */
    int64_t numel;
    int64_t sizes[REC_DIMS];
    d_operand op[MAX_OPS];
    unsigned char dead[TOCL_IR_MAX_OUTPUTS];       /* storage freed since recording */
    unsigned char needed[TOCL_IR_MAX_OUTPUTS];     /* read from memory by a later group */
    unsigned char superseded[TOCL_IR_MAX_OUTPUTS]; /* overwritten by a later op of its group */
    int group, next_in_group;
    tocl_scalar sc[TOCL_IR_MAX_SCALARS];
    tocl_ir_graph g;
} d_rec;

typedef struct d_group {
    int first, last, nrec, math;
    int ndim, flat;
    int64_t numel;
    int64_t sizes[REC_DIMS];
    uint64_t lo, hi;
    int nodes, scalars, outputs; /* bounds on the merged graph's tables */
} d_group;

/* Overlapping byte ranges. */
static inline int overlap(const d_operand *a, const d_operand *b) { return a->lo < b->hi && b->lo < a->hi; }

/* The same elements in the same iteration order (both described over one shape). */
static inline int identical(const d_operand *a, const d_operand *b, int ndim, const int64_t *sizes) {
    if (a->data != b->data || a->dtype != b->dtype)
        return 0;
    for (int d = 0; d < ndim; d++)
        if (sizes[d] > 1 && a->st[d] != b->st[d])
            return 0;
    return 1;
}

/* defer_group.c: libm calls in g counted against the CPU per-kernel limit
 * (0 on devices without one); a group of the single record ri; grouping
 * of n records in program order (returns the number of groups, some may
 * end empty) with each output's needed/superseded marks set. */
int tocl_defer_math_calls(int dev, const tocl_ir_graph *g);
void tocl_defer_group_one(d_rec *recs, d_group *gr, int ri);
int tocl_defer_group_all(d_rec *recs, int n, d_group *groups);

#endif
