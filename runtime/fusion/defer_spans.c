/* defer_spans.c - fused eager: which bytes a flush's records write, as a
 * sorted list of disjoint spans. Broadcast inlining and output marking each
 * walk back from a read to its newest writer; a read of memory nothing in
 * the flush writes (weights, a loop's inputs: most reads) walked back over
 * every older record, quadratic in the records of a flush (a loop of 4096
 * `add(x, y, out=z)` spent 55% of its host time in those walks). A binary
 * search here answers "maybe written?" instead. */
#include <stdlib.h>

#include "fusion/defer_internal.h"

static int by_lo(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b; /* lo is the first member */
    return x < y ? -1 : x > y;
}

void tocl_defer_spans_build(const d_rec *recs, int n, d_spans *out) {
    int cap = 0;
    for (int i = 0; i < n; i++)
        cap += recs[i].nout;
    out->n = -1;
    out->s = malloc((size_t)(cap ? cap : 1) * sizeof *out->s);
    if (!out->s)
        return;
    int m = 0;
    for (int i = 0; i < n; i++)
        for (int b = 0; b < recs[i].nout; b++)
            if (recs[i].op[b].lo < recs[i].op[b].hi) {
                out->s[m].lo = recs[i].op[b].lo;
                out->s[m++].hi = recs[i].op[b].hi;
            }
    qsort(out->s, (size_t)m, sizeof *out->s, by_lo);
    int k = 0; /* merge overlapping or touching spans */
    for (int j = 0; j < m; j++) {
        if (k && out->s[j].lo <= out->s[k - 1].hi) {
            if (out->s[j].hi > out->s[k - 1].hi)
                out->s[k - 1].hi = out->s[j].hi;
        } else {
            out->s[k++] = out->s[j];
        }
    }
    out->n = k;
}

void tocl_defer_spans_free(d_spans *sp) {
    free(sp->s);
    sp->s = NULL;
    sp->n = -1;
}

int tocl_defer_maybe_written(const d_spans *sp, const d_operand *a) {
    if (!sp || sp->n < 0)
        return 1;
    int l = 0, h = sp->n; /* the first span that ends after a starts */
    while (l < h) {
        int mid = l + (h - l) / 2;
        if (sp->s[mid].hi <= a->lo)
            l = mid + 1;
        else
            h = mid;
    }
    return l < sp->n && sp->s[l].lo < a->hi;
}
