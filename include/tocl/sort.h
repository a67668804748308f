/* sort.h - the sort/search op family: segmented stable sort of the rows of
 * a batch, and the ops built on it (top-k, k-th value, median, mode,
 * searchsorted, isin, unique, histc, bincount).
 *
 * Row convention: every tensor argument named "rows" has ndim >= 1 and its
 * LAST dimension is the row (the sort/search dimension); the leading
 * dimensions are a batch and must have the same sizes in all such tensors
 * of one call (use stride 0 to broadcast). Any strides are accepted; a
 * caller sorts along dim d by passing a view with d swapped to the end.
 *
 * Every call only enqueues work on (dev, stream), except those marked
 * "host wait", whose result size depends on the data. */
#ifndef TOCL_SORT_H
#define TOCL_SORT_H

#include <stdint.h>

#include "tocl/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What tocl_sort_rows writes per row. */
typedef enum tocl_sort_take {
    TOCL_SORT_TAKE_RANGE = 0,     /* sorted positions 0 .. kout-1 (sort: kout = n; topk: kout = k) */
    TOCL_SORT_TAKE_KTH = 1,       /* sorted position k (0-based) of the ascending order */
    TOCL_SORT_TAKE_MEDIAN = 2,    /* lower median; a NaN (the first one) when the row has any */
    TOCL_SORT_TAKE_NANMEDIAN = 3, /* lower median of the non-NaN values (NaN if there are none) */
    TOCL_SORT_TAKE_MODE = 4       /* most frequent value (smallest on ties) and its last index */
} tocl_sort_take;

/* Stable sort of each row of src (ascending, or descending when
 * `descending`; NaN sorts as the largest value, -0.0 equal to +0.0), then
 * write the chosen positions: values (src's dtype, bit-exact copies) and
 * indices (int64, position in the row) are rows with src's batch sizes and
 * last size kout (RANGE, kout <= n) or 1 (the other modes, which sort
 * ascending whatever `descending` says). Rows must be non-empty unless
 * kout is 0. */
tocl_status tocl_sort_rows(int dev, int stream, const tocl_tensor *src, const tocl_tensor *values,
                           const tocl_tensor *indices, int descending, tocl_sort_take take, int64_t k);

/* searchsorted: out[.., j] = first position p in the row of `sorted` with
 * sorted[p] >= values[.., j] (> when right), through `sorter` (int64 rows,
 * or NULL). sorted, values (same dtype), sorter and out (int32 or int64)
 * are rows with equal batch sizes. */
tocl_status tocl_searchsorted(int dev, int stream, const tocl_tensor *sorted, const tocl_tensor *values,
                              const tocl_tensor *sorter, const tocl_tensor *out, int right);

/* isin: out (bool rows shaped like elements) = whether each element equals
 * one of sorted_test (1-D, ascending as tocl_sort_rows leaves it, same
 * dtype), negated when invert. NaN is never found. */
tocl_status tocl_isin_sorted(int dev, int stream, const tocl_tensor *elements, const tocl_tensor *sorted_test,
                             const tocl_tensor *out, int invert);

/* Host wait: the minimum and maximum of a 1-D tensor ignoring NaNs, and
 * whether it has a NaN. Integers come back as int64 scalars, floats as
 * doubles. n must be > 0. */
tocl_status tocl_minmax(int dev, int stream, const tocl_tensor *src, tocl_scalar *min, tocl_scalar *max,
                        int *has_nan);

/* histc: out (1-D, src's floating dtype, bins = its size) counts the
 * elements of 1-D src inside [lo, hi] (lo < hi, finite, already rounded to
 * src's dtype), the last bin closed; NaNs and outliers are ignored. */
tocl_status tocl_histc(int dev, int stream, const tocl_tensor *src, const tocl_tensor *out, double lo, double hi);

/* bincount over `sorted` (1-D int64 contiguous, ascending, non-negative)
 * and its permutation `perm` (tocl_sort_rows indices): out[b] = count of b
 * (out int64, weights NULL) or the sum of weights[perm[j]] over those j in
 * input order (weights and out float32 or float64). */
tocl_status tocl_bincount_sorted(int dev, int stream, const tocl_tensor *sorted, const tocl_tensor *perm,
                                 const tocl_tensor *weights, const tocl_tensor *out);

/* unique, step 1 (host wait): gid (1-D int64 contiguous, n) := group index
 * of each element of `sorted` (1-D contiguous, n > 0), a group starting
 * wherever an element differs from its predecessor (NaN from everything);
 * *count := number of groups. */
tocl_status tocl_unique_groups(int dev, int stream, const tocl_tensor *sorted, const tocl_tensor *gid,
                               int64_t *count);

/* unique, step 2: values (1-D contiguous, count) := first element of each
 * group; inverse (int64, n elements contiguous, or NULL) := group of the
 * element at perm[i] (at i when perm is NULL); counts (1-D int64
 * contiguous, count, or NULL) := group sizes. */
tocl_status tocl_unique_fill(int dev, int stream, const tocl_tensor *sorted, const tocl_tensor *perm,
                             const tocl_tensor *gid, int64_t count, const tocl_tensor *values,
                             const tocl_tensor *inverse, const tocl_tensor *counts);

#ifdef __cplusplus
}
#endif
#endif
