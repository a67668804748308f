/* test_la_util.h - operands of the linear algebra C tests (test_linalg.c,
 * test_ldl.c): batches of matrices and vectors over device memory, and an
 * upload of host data. */
#ifndef TEST_LA_UTIL_H
#define TEST_LA_UTIL_H

#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "tocl_test.h"

/* [batch, r, c] with row stride rs and column stride cs. */
static tocl_tensor mat(tocl_addr a, tocl_dtype dt, int64_t batch, int64_t r, int64_t c, int64_t rs, int64_t cs) {
    tocl_tensor t;
    memset(&t, 0, sizeof t);
    t.data = a;
    t.dtype = dt;
    t.ndim = 3;
    t.sizes[0] = batch, t.sizes[1] = r, t.sizes[2] = c;
    t.strides[0] = r * c, t.strides[1] = rs, t.strides[2] = cs;
    return t;
}

/* [batch, n], dense. */
static tocl_tensor vec(tocl_addr a, tocl_dtype dt, int64_t batch, int64_t n) {
    tocl_tensor t;
    memset(&t, 0, sizeof t);
    t.data = a;
    t.dtype = dt;
    t.ndim = 2;
    t.sizes[0] = batch, t.sizes[1] = n;
    t.strides[0] = n, t.strides[1] = 1;
    return t;
}

/* bytes of host data copied to a new device block. */
static tocl_addr upload(const void *p, size_t bytes) {
    tocl_addr a = 0;
    CHECK_OK(tocl_mem_alloc(0, bytes, &a));
    CHECK_OK(tocl_copy_h2d(0, 0, a, p, bytes, 1));
    return a;
}

#endif
