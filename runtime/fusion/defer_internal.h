/* defer_internal.h - what fused eager's recorder and flusher (defer.c) share
 * with its grouper (defer_group.c): the recorded op, the group, and the
 * operand relations both use. */
#ifndef TOCL_DEFER_INTERNAL_H
#define TOCL_DEFER_INTERNAL_H

#include <pthread.h>
#include <string.h>

#include "fusion/defer.h"
#include "codegen/ir_internal.h"
#include "launch/launch.h"

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
    /* Never stored: a dead output whose memory a fused reduction (which ran
     * before this op) already reused for its result (defer_reduce.c). */
    unsigned char dropped[TOCL_IR_MAX_OUTPUTS];
    uint64_t seq;                              /* recording order on the stream */
    uint64_t corr;                             /* profiler correlation id of the recording op (0: none) */
    uint64_t drop_seq[TOCL_IR_MAX_OUTPUTS];    /* ops recorded from this seq on read the reuser's data */
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

/* The bytes tensor t touches, as an operand's range (nothing for an empty
 * tensor); the other fields zero. */
static inline void range_of(const tocl_tensor *t, d_operand *o) {
    uint64_t last = 0;
    int empty = 0;
    for (int d = 0; d < t->ndim; d++) {
        empty |= t->sizes[d] == 0;
        if (t->sizes[d] > 0)
            last += (uint64_t)(t->sizes[d] - 1) * (uint64_t)t->strides[d];
    }
    memset(o, 0, sizeof *o);
    o->data = t->data;
    o->lo = t->data;
    o->hi = empty ? t->data : t->data + (last + 1) * tocl_dtype_size(t->dtype);
    o->dtype = t->dtype;
}

/* Does record r write any byte of o? */
static inline int writes_to(const d_rec *r, const d_operand *o) {
    for (int k = 0; k < r->nout; k++)
        if (overlap(&r->op[k], o))
            return 1;
    return 0;
}

/* The same elements in the same iteration order (both described over one shape). */
static inline int identical(const d_operand *a, const d_operand *b, int ndim, const int64_t *sizes) {
    if (a->data != b->data || a->dtype != b->dtype)
        return 0;
    for (int d = 0; d < ndim; d++)
        if (sizes[d] > 1 && a->st[d] != b->st[d])
            return 0;
    return 1;
}

#define DEV_MAX 64
#define MAX_RECORDS 4096    /* a stream with this many recorded ops flushes */
#define HASH_BUCKETS 4096

typedef struct d_stream {
    d_rec *recs;
    int n, cap;
    uint64_t seq;   /* the next record's d_rec.seq */
} d_stream;

typedef struct h_entry {
    tocl_addr addr;
    int stream, rec, out, next;
} h_entry;

/* A device's recorded ops, per stream, and the free table that finds a
 * recorded output by its address. */
typedef struct d_dev {
    pthread_mutex_t mu;
    d_stream s[TOCL_MAX_STREAMS];
    int pending; /* records over all streams */
    int heads[HASH_BUCKETS];
    h_entry *ents;
    int nents, capents;
} d_dev;

/* A group's ops as one IR graph over the distinct operands it reads from
 * and stores to memory. */
typedef struct merged {
    tocl_ir_graph g;
    int nout, nin;
    const d_operand *out[TOCL_IR_MAX_OUTPUTS], *in[TOCL_IR_MAX_INPUTS];
    int in_node[TOCL_IR_MAX_INPUTS];
    tocl_scalar sc[TOCL_IR_MAX_SCALARS];
    int elided;
} merged;

/* defer_group.c: libm calls in g counted against the CPU per-kernel limit
 * (0 on devices without one); a group of the single record ri; grouping
 * of n records in program order (returns the number of groups, some may
 * end empty) with each output's needed/superseded marks set. */
int tocl_defer_math_calls(int dev, const tocl_ir_graph *g);
void tocl_defer_group_one(d_rec *recs, d_group *gr, int ri);
typedef struct d_spans d_spans;
int tocl_defer_group_all(d_rec *recs, int n, d_group *groups, const d_spans *written);
/* A view (ndim, sizes, strides) of the elements an op wrote over its own
 * space (gnd dims gsz, strides tst of the written operand), as pieces of
 * that space: view dim i steps q[i] positions along dim gd[i]; with
 * `broadcast`, a stride-0 dim repeats (gd -1). The pieces of each dim must
 * nest exactly (1, s0, s0 * s1, ... up to its size). 0 when the view is not
 * laid out that way. Reduction prologues and broadcast inlining use it to
 * move an op's other operands into the reader's space. */
int tocl_defer_map_dims(int gnd, const int64_t *gsz, const int64_t *tst, int ndim, const int64_t *sizes,
                        const int64_t *strides, int broadcast, int *gd, int64_t *q);
/* Does a group after gi conflict with one of gi's ops (so gi cannot run
 * after it)? */
int tocl_defer_conflicts_later(d_rec *recs, const d_group *groups, int ng, int gi);

/* defer_inline.c: consumers take in the graphs of dead broadcast producers
 * they read (before grouping); returns how many were inlined. */
int tocl_defer_inline_broadcasts(int dev, d_rec *recs, int n, const d_spans *written);

/* defer_spans.c: the bytes n records write, as sorted disjoint spans, so
 * that a read of memory no record writes (a weight, a loop's input) skips
 * the walk back for its writer. Built once per flush (inlining changes only
 * inputs). If memory runs out, every read counts as maybe written. */
struct d_spans {
    struct { uint64_t lo, hi; } *s;
    int n; /* -1: unknown */
};
void tocl_defer_spans_build(const d_rec *recs, int n, d_spans *out);
void tocl_defer_spans_free(d_spans *sp);
int tocl_defer_maybe_written(const d_spans *sp, const d_operand *a);

/* defer.c: the device's state (created on demand); the group's merged graph
 * (0 when it does not fit one kernel), with *target_node set to the node
 * that computes the output operand `target` (may be NULL); running a group;
 * entering record ri's outputs in the free table; running every group but
 * `keep` and leaving its records recorded. The caller holds d->mu. */
d_dev *tocl_defer_dev_state(int dev, int create);
int tocl_defer_merge(d_rec *recs, const d_group *gr, merged *m, const d_operand *target, int *target_node);
tocl_status tocl_defer_run_group(int dev, int stream, d_rec *recs, const d_group *gr, int gi);
void tocl_defer_index_outputs(d_dev *d, int stream, int ri);
/* Ready n recorded ops to run: consumers take in dead broadcast producers
 * (defer_inline.c), then the ops are grouped; returns the group count. */
int tocl_defer_plan(int dev, d_rec *recs, int n, d_group *groups);
tocl_status tocl_defer_flush_keeping(d_dev *d, int dev, int stream, d_rec *recs, d_group *groups, int ng, int keep);

#endif
