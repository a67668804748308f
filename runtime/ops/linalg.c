/* linalg.c - launches of the dense linear algebra kernels (kernels/linalg.cl,
 * kernels/ldl.cl, kernels/eig.cl).
 * Operands are strided batches of matrices (tocl/linalg.h); each is checked
 * against its live block by tocl_ops_resolve, so a bad stride or size is an
 * error here, never an out-of-bounds access on the device. */
#include <stdio.h>
#include <string.h>

#include "launch/launch.h"
#include "linalg_params.h"
#include "tocl/linalg.h"

/* Matrix factorizations converge in well under this many Jacobi sweeps
 * (quadratic convergence); it only bounds inputs that never settle (NaN). */
#define LA_MAX_SWEEPS 60

/* An operand's element type: float32 or float64 (TOCL_NUM_DTYPES: either),
 * real (cx 0) or complex (cx 1; -1: either). */
typedef struct la_type {
    tocl_dtype dt;
    int cx;
} la_type;

static const la_type LA_ANY = {TOCL_NUM_DTYPES, -1};
static const la_type LA_INT = {TOCL_I32, 0};
static la_type la_real_of(la_type t) { return (la_type){t.dt, 0}; }

/* Resolve operand t (ndim 3 for a matrix, 2 for a vector, one more for a
 * complex one in pairs layout: a trailing dim of size 2 and stride 1) of
 * type `want` into a buffer and its layout, in units of the element the
 * kernel reads (a float2 / double2 pair for complex). An empty operand gets
 * a NULL buffer; kernels never read it. */
static tocl_status la_operand(int dev, const tocl_tensor *t, const char *what, int ndim, la_type want,
                              la_type *got, cl_mem *buf, tocl_la_mat *L) {
    if (!t)
        return tocl_fail(TOCL_E_INVALID, "linalg: %s is missing", what);
    TOCL_TRY(tocl_ops_check_tensor(t, what));
    int cx = t->ndim == ndim + 1 && t->sizes[ndim] == 2 && t->strides[ndim] == 1;
    if (t->ndim != ndim + cx)
        return tocl_fail(TOCL_E_INVALID, "linalg: %s must have %d dims (%d for complex pairs), got %d", what, ndim,
                         ndim + 1, t->ndim);
    if (want.dt == TOCL_NUM_DTYPES ? (t->dtype != TOCL_F32 && t->dtype != TOCL_F64) : t->dtype != want.dt)
        return tocl_fail(TOCL_E_INVALID, "linalg: %s has dtype %s, expected %s", what, tocl_dtype_name(t->dtype),
                         want.dt == TOCL_NUM_DTYPES ? "float32 or float64" : tocl_dtype_name(want.dt));
    if (want.cx >= 0 && cx != want.cx)
        return tocl_fail(TOCL_E_INVALID, "linalg: %s is %s, expected %s", what, cx ? "complex" : "real",
                         want.cx ? "complex" : "real");
    if (got)
        *got = (la_type){t->dtype, cx};
    memset(L, 0, sizeof *L);
    int64_t u = cx ? 2 : 1; /* reals per element */
    for (int d = 0; d < ndim; d++)
        if (t->strides[d] % u)
            return tocl_fail(TOCL_E_INVALID, "linalg: complex %s has an odd stride %lld in dim %d", what,
                             (long long)t->strides[d], d);
    L->bs = t->strides[0] / u;
    L->rs = t->strides[1] / u;
    L->cs = ndim == 3 ? t->strides[2] / u : 0;
    *buf = NULL;
    if (tocl_ops_numel(t) == 0)
        return TOCL_OK;
    int mdev;
    cl_long off;
    TOCL_TRY(tocl_ops_resolve(dev, t, what, 0, buf, &off, &mdev));
    if (off % u)
        return tocl_fail(TOCL_E_INVALID, "linalg: complex %s starts inside an element", what);
    L->off = off / u;
    return TOCL_OK;
}

/* Kernel `name` of program `prog` (a kernels/ file) built for ty. */
static tocl_status la_kernel_in(int dev, const char *prog, la_type ty, const char *name, tocl_ops_kernel **k) {
    if (ty.dt == TOCL_F64 && !tocl_dev_props(dev)->has_fp64)
        return tocl_fail(TOCL_E_UNSUPPORTED, "linalg: float64 is not supported on device %d (%s): it lacks cl_khr_fp64",
                         dev, tocl_dev_props(dev)->name);
    static const char *opts[2][2] = {{"", "-DLA_COMPLEX"}, {"-DLA_F64", "-DLA_F64 -DLA_COMPLEX"}};
    return tocl_ops_kernel_get(dev, prog, name, opts[ty.dt == TOCL_F64][ty.cx != 0], k);
}

static tocl_status la_kernel(int dev, la_type ty, const char *name, tocl_ops_kernel **k) {
    return la_kernel_in(dev, "linalg", ty, name, k);
}

/* One work-group of TOCL_LA_GROUP items per matrix. */
static tocl_status la_launch_groups(int dev, int stream, tocl_ops_kernel *k, int64_t batch, const tocl_ops_arg *a,
                                    int nargs) {
    if (tocl_ops_kernel_max_group(dev, k) < TOCL_LA_GROUP)
        return tocl_fail(TOCL_E_UNSUPPORTED, "linalg: device %d runs at most %zu work-items per group, need %d", dev,
                         tocl_ops_kernel_max_group(dev, k), TOCL_LA_GROUP);
    size_t global = (size_t)batch * TOCL_LA_GROUP, local = TOCL_LA_GROUP;
    return tocl_ops_launch(dev, stream, k, 1, &global, &local, a, nargs);
}

/* One work-item per (column, matrix). */
static tocl_status la_launch_columns(int dev, int stream, tocl_ops_kernel *k, int64_t cols, int64_t batch,
                                     const tocl_ops_arg *a, int nargs) {
    size_t local[2] = {cols < 16 ? 1 : 16, 1};
    size_t global[2] = {((size_t)cols + local[0] - 1) / local[0] * local[0], (size_t)batch};
    return tocl_ops_launch(dev, stream, k, 2, global, local, a, nargs);
}

/* p for the matrix operand a (ndim 3, or 4 in complex pairs layout). */
static void la_init(tocl_la_params *p, const tocl_tensor *a) {
    memset(p, 0, sizeof *p);
    p->batch = a->sizes[0];
    p->m = a->sizes[1];
    p->n = a->sizes[2];
    p->max_sweeps = LA_MAX_SWEEPS;
}

static tocl_status la_vector(int dev, const tocl_tensor *t, const char *what, la_type ty, int64_t batch,
                             int64_t len, cl_mem *buf, tocl_la_mat *L) {
    TOCL_TRY(la_operand(dev, t, what, 2, ty, NULL, buf, L));
    if (t->sizes[0] != batch || t->sizes[1] < len)
        return tocl_fail(TOCL_E_INVALID, "linalg: %s is [%lld, %lld], expected [%lld, >= %lld]", what,
                         (long long)t->sizes[0], (long long)t->sizes[1], (long long)batch, (long long)len);
    return TOCL_OK;
}

tocl_status tocl_la_potrf(int dev, int stream, const tocl_tensor *a, const tocl_tensor *info) {
    TOCL_TRY(tocl_device_check(dev));
    tocl_la_params p;
    cl_mem ab, ib;
    tocl_la_mat la;
    la_type ty;
    TOCL_TRY(la_operand(dev, a, "A", 3, LA_ANY, &ty, &ab, &la));
    la_init(&p, a);
    p.a = la;
    if (p.m != p.n)
        return tocl_fail(TOCL_E_INVALID, "cholesky: A must be square, got %lld x %lld", (long long)p.m,
                         (long long)p.n);
    TOCL_TRY(la_vector(dev, info, "info", LA_INT, p.batch, 1, &ib, &p.x));
    if (p.batch == 0 || p.n == 0)
        return TOCL_OK;
    tocl_ops_kernel *k;
    TOCL_TRY(la_kernel(dev, ty, "la_potrf", &k));
    tocl_ops_arg args[] = {{sizeof ab, &ab}, {sizeof ib, &ib}, {sizeof p, &p}};
    return la_launch_groups(dev, stream, k, p.batch, args, 3);
}

tocl_status tocl_la_getrf(int dev, int stream, const tocl_tensor *a, const tocl_tensor *piv,
                          const tocl_tensor *info, int pivot) {
    TOCL_TRY(tocl_device_check(dev));
    tocl_la_params p;
    cl_mem ab, pb, ib;
    tocl_la_mat la;
    la_type ty;
    TOCL_TRY(la_operand(dev, a, "A", 3, LA_ANY, &ty, &ab, &la));
    la_init(&p, a);
    p.a = la;
    int64_t kmin = p.m < p.n ? p.m : p.n;
    TOCL_TRY(la_vector(dev, piv, "pivots", LA_INT, p.batch, kmin, &pb, &p.x));
    TOCL_TRY(la_vector(dev, info, "info", LA_INT, p.batch, 1, &ib, &p.y));
    p.flag0 = pivot != 0;
    if (p.batch == 0 || kmin == 0)
        return TOCL_OK;
    tocl_ops_kernel *k;
    TOCL_TRY(la_kernel(dev, ty, "la_getrf", &k));
    tocl_ops_arg args[] = {{sizeof ab, &ab}, {sizeof pb, &pb}, {sizeof ib, &ib}, {sizeof p, &p}};
    return la_launch_groups(dev, stream, k, p.batch, args, 4);
}

/* A batch of square matrices a (named `name`) and right-hand sides b
 * [batch, n, k] of its element type: the operands resolved into p (a, b,
 * n, k), or `what`'s error when the shapes do not fit. */
static tocl_status la_square_and_rhs(int dev, const tocl_tensor *a, const tocl_tensor *b, const char *what,
                                     const char *name, tocl_la_params *p, la_type *ty, cl_mem *ab, cl_mem *bb) {
    tocl_la_mat la, lb;
    TOCL_TRY(la_operand(dev, a, name, 3, LA_ANY, ty, ab, &la));
    TOCL_TRY(la_operand(dev, b, "B", 3, *ty, NULL, bb, &lb));
    la_init(p, b);
    p->a = la;
    p->b = lb;
    p->n = a->sizes[1];
    if (a->sizes[1] != a->sizes[2] || a->sizes[1] != b->sizes[1] || a->sizes[0] != b->sizes[0])
        return tocl_fail(TOCL_E_INVALID, "%s: %s [%lld, %lld, %lld] does not fit B [%lld, %lld, %lld]", what, name,
                         (long long)a->sizes[0], (long long)a->sizes[1], (long long)a->sizes[2],
                         (long long)b->sizes[0], (long long)b->sizes[1], (long long)b->sizes[2]);
    p->k = b->sizes[2];
    return TOCL_OK;
}

tocl_status tocl_la_trsm(int dev, int stream, const tocl_tensor *a, const tocl_tensor *b, int upper, int unit,
                         int conj) {
    TOCL_TRY(tocl_device_check(dev));
    tocl_la_params p;
    cl_mem ab, bb;
    la_type ty;
    TOCL_TRY(la_square_and_rhs(dev, a, b, "triangular solve", "A", &p, &ty, &ab, &bb));
    p.flag0 = upper != 0;
    p.flag1 = unit != 0;
    p.flag2 = conj != 0 && ty.cx;
    if (p.batch == 0 || p.n == 0 || p.k == 0)
        return TOCL_OK;
    tocl_ops_kernel *k;
    TOCL_TRY(la_kernel(dev, ty, "la_trsm", &k));
    tocl_ops_arg args[] = {{sizeof ab, &ab}, {sizeof bb, &bb}, {sizeof p, &p}};
    return la_launch_columns(dev, stream, k, p.k, p.batch, args, 3);
}

tocl_status tocl_la_laswp(int dev, int stream, const tocl_tensor *piv, const tocl_tensor *b, int reverse) {
    TOCL_TRY(tocl_device_check(dev));
    tocl_la_params p;
    cl_mem pb, bb;
    tocl_la_mat lp, lb;
    la_type ty;
    TOCL_TRY(la_operand(dev, b, "B", 3, LA_ANY, &ty, &bb, &lb));
    la_init(&p, b);
    p.b = lb;
    p.k = b->sizes[2];
    TOCL_TRY(la_vector(dev, piv, "pivots", LA_INT, p.batch, 0, &pb, &lp));
    p.x = lp;
    p.n = piv->sizes[1];
    if (p.n > p.m)
        return tocl_fail(TOCL_E_INVALID, "row interchanges: %lld pivots for %lld rows", (long long)p.n,
                         (long long)p.m);
    p.flag0 = reverse != 0;
    if (p.batch == 0 || p.n == 0 || p.k == 0)
        return TOCL_OK;
    tocl_ops_kernel *k;
    TOCL_TRY(la_kernel(dev, ty, "la_laswp", &k));
    tocl_ops_arg args[] = {{sizeof pb, &pb}, {sizeof bb, &bb}, {sizeof p, &p}};
    return la_launch_columns(dev, stream, k, p.k, p.batch, args, 3);
}

tocl_status tocl_la_geqrf(int dev, int stream, const tocl_tensor *a, const tocl_tensor *tau) {
    TOCL_TRY(tocl_device_check(dev));
    tocl_la_params p;
    cl_mem ab, tb;
    tocl_la_mat la;
    la_type ty;
    TOCL_TRY(la_operand(dev, a, "A", 3, LA_ANY, &ty, &ab, &la));
    la_init(&p, a);
    p.a = la;
    int64_t kmin = p.m < p.n ? p.m : p.n;
    TOCL_TRY(la_vector(dev, tau, "tau", ty, p.batch, kmin, &tb, &p.x));
    if (p.batch == 0 || kmin == 0)
        return TOCL_OK;
    tocl_ops_kernel *k;
    TOCL_TRY(la_kernel(dev, ty, "la_geqrf", &k));
    tocl_ops_arg args[] = {{sizeof ab, &ab}, {sizeof tb, &tb}, {sizeof p, &p}};
    return la_launch_groups(dev, stream, k, p.batch, args, 3);
}

tocl_status tocl_la_house_apply(int dev, int stream, const tocl_tensor *v, const tocl_tensor *tau,
                                const tocl_tensor *c, int forward, int conj_tau, int conj_v) {
    TOCL_TRY(tocl_device_check(dev));
    tocl_la_params p;
    cl_mem vb, tb, cb;
    tocl_la_mat lv, lc;
    la_type ty;
    TOCL_TRY(la_operand(dev, v, "reflectors", 3, LA_ANY, &ty, &vb, &lv));
    TOCL_TRY(la_operand(dev, c, "C", 3, ty, NULL, &cb, &lc));
    la_init(&p, c);
    p.a = lv;
    p.b = lc;
    p.k = v->sizes[2];
    if (v->sizes[0] != c->sizes[0] || v->sizes[1] != c->sizes[1] || p.k > p.m)
        return tocl_fail(TOCL_E_INVALID, "householder product: reflectors [%lld, %lld, %lld] do not fit C [%lld, "
                         "%lld, %lld]", (long long)v->sizes[0], (long long)v->sizes[1], (long long)v->sizes[2],
                         (long long)c->sizes[0], (long long)c->sizes[1], (long long)c->sizes[2]);
    TOCL_TRY(la_vector(dev, tau, "tau", ty, p.batch, p.k, &tb, &p.x));
    p.flag0 = forward != 0;
    p.flag1 = conj_tau != 0 && ty.cx;
    p.flag2 = conj_v != 0 && ty.cx;
    if (p.batch == 0 || p.n == 0 || p.k == 0)
        return TOCL_OK;
    tocl_ops_kernel *k;
    TOCL_TRY(la_kernel(dev, ty, "la_house_apply", &k));
    tocl_ops_arg args[] = {{sizeof vb, &vb}, {sizeof tb, &tb}, {sizeof cb, &cb}, {sizeof p, &p}};
    return la_launch_columns(dev, stream, k, p.n, p.batch, args, 4);
}

tocl_status tocl_la_eigh(int dev, int stream, const tocl_tensor *w, const tocl_tensor *vec,
                         const tocl_tensor *vals, const tocl_tensor *rot, const tocl_tensor *info) {
    TOCL_TRY(tocl_device_check(dev));
    tocl_la_params p;
    cl_mem wb, vb, eb, ib;
    tocl_la_mat lw, lv;
    la_type ty;
    TOCL_TRY(la_operand(dev, w, "A", 3, LA_ANY, &ty, &wb, &lw));
    la_init(&p, w);
    p.a = lw;
    if (p.m != p.n)
        return tocl_fail(TOCL_E_INVALID, "eigh: A must be square, got %lld x %lld", (long long)p.m, (long long)p.n);
    vb = wb;
    if (vec) {
        TOCL_TRY(la_operand(dev, vec, "eigenvectors", 3, ty, NULL, &vb, &lv));
        if (vec->sizes[0] != p.batch || vec->sizes[1] != p.n || vec->sizes[2] != p.n)
            return tocl_fail(TOCL_E_INVALID, "eigh: eigenvectors must be [%lld, %lld, %lld]", (long long)p.batch,
                             (long long)p.n, (long long)p.n);
        p.b = lv;
        p.flag0 = 1;
    }
    TOCL_TRY(la_vector(dev, vals, "eigenvalues", la_real_of(ty), p.batch, p.n, &eb, &p.x));
    TOCL_TRY(la_vector(dev, info, "info", LA_INT, p.batch, 1, &ib, &p.y));
    cl_mem rb;
    tocl_la_mat lr;
    TOCL_TRY(la_vector(dev, rot, "rotations", ty, p.batch, p.n + (p.n & 1), &rb, &lr));
    if (lr.rs != 1 || (p.batch > 1 && lr.bs != p.n + (p.n & 1)))
        return tocl_fail(TOCL_E_INVALID, "eigh: the rotation scratch must be contiguous");
    if (p.batch == 0 || p.n == 0)
        return TOCL_OK;
    tocl_ops_kernel *k;
    TOCL_TRY(la_kernel(dev, ty, "la_eigh_jacobi", &k));
    p.c = lr;
    tocl_ops_arg args[] = {{sizeof wb, &wb}, {sizeof vb, &vb}, {sizeof eb, &eb},
                           {sizeof rb, &rb}, {sizeof ib, &ib}, {sizeof p, &p}};
    return la_launch_groups(dev, stream, k, p.batch, args, 6);
}

tocl_status tocl_la_svd_jacobi(int dev, int stream, const tocl_tensor *w, const tocl_tensor *vec,
                               const tocl_tensor *info) {
    TOCL_TRY(tocl_device_check(dev));
    tocl_la_params p;
    cl_mem wb, vb, ib;
    tocl_la_mat lw, lv;
    la_type ty;
    TOCL_TRY(la_operand(dev, w, "A", 3, LA_ANY, &ty, &wb, &lw));
    la_init(&p, w);
    p.a = lw;
    if (p.m < p.n)
        return tocl_fail(TOCL_E_INVALID, "svd: A must have at least as many rows as columns, got %lld x %lld",
                         (long long)p.m, (long long)p.n);
    vb = wb;
    if (vec) {
        TOCL_TRY(la_operand(dev, vec, "V", 3, ty, NULL, &vb, &lv));
        if (vec->sizes[0] != p.batch || vec->sizes[1] != p.n || vec->sizes[2] != p.n)
            return tocl_fail(TOCL_E_INVALID, "svd: V must be [%lld, %lld, %lld]", (long long)p.batch,
                             (long long)p.n, (long long)p.n);
        p.b = lv;
        p.flag0 = 1;
    }
    TOCL_TRY(la_vector(dev, info, "info", LA_INT, p.batch, 1, &ib, &p.x));
    if (p.batch == 0 || p.n == 0)
        return TOCL_OK;
    tocl_ops_kernel *k;
    TOCL_TRY(la_kernel(dev, ty, "la_svd_jacobi", &k));
    tocl_ops_arg args[] = {{sizeof wb, &wb}, {sizeof vb, &vb}, {sizeof ib, &ib}, {sizeof p, &p}};
    return la_launch_groups(dev, stream, k, p.batch, args, 4);
}

tocl_status tocl_la_sytrf(int dev, int stream, const tocl_tensor *a, const tocl_tensor *piv,
                          const tocl_tensor *info, int hermitian) {
    TOCL_TRY(tocl_device_check(dev));
    tocl_la_params p;
    cl_mem ab, pb, ib;
    tocl_la_mat la;
    la_type ty;
    TOCL_TRY(la_operand(dev, a, "A", 3, LA_ANY, &ty, &ab, &la));
    la_init(&p, a);
    p.a = la;
    if (p.m != p.n)
        return tocl_fail(TOCL_E_INVALID, "ldl_factor: A must be square, got %lld x %lld", (long long)p.m,
                         (long long)p.n);
    TOCL_TRY(la_vector(dev, piv, "pivots", LA_INT, p.batch, p.n, &pb, &p.x));
    TOCL_TRY(la_vector(dev, info, "info", LA_INT, p.batch, 1, &ib, &p.y));
    p.flag0 = hermitian != 0 && ty.cx;
    if (p.batch == 0 || p.n == 0)
        return TOCL_OK;
    tocl_ops_kernel *k;
    TOCL_TRY(la_kernel_in(dev, "ldl", ty, "la_sytrf", &k));
    tocl_ops_arg args[] = {{sizeof ab, &ab}, {sizeof pb, &pb}, {sizeof ib, &ib}, {sizeof p, &p}};
    return la_launch_groups(dev, stream, k, p.batch, args, 4);
}

tocl_status tocl_la_sytrs(int dev, int stream, const tocl_tensor *ld, const tocl_tensor *piv,
                          const tocl_tensor *b, int hermitian) {
    TOCL_TRY(tocl_device_check(dev));
    tocl_la_params p;
    cl_mem ab, pb, bb;
    la_type ty;
    TOCL_TRY(la_square_and_rhs(dev, ld, b, "ldl_solve", "LD", &p, &ty, &ab, &bb));
    TOCL_TRY(la_vector(dev, piv, "pivots", LA_INT, p.batch, p.n, &pb, &p.x));
    p.flag0 = hermitian != 0 && ty.cx;
    if (p.batch == 0 || p.n == 0 || p.k == 0)
        return TOCL_OK;
    tocl_ops_kernel *k;
    TOCL_TRY(la_kernel_in(dev, "ldl", ty, "la_sytrs", &k));
    tocl_ops_arg args[] = {{sizeof ab, &ab}, {sizeof pb, &pb}, {sizeof bb, &bb}, {sizeof p, &p}};
    return la_launch_columns(dev, stream, k, p.k, p.batch, args, 4);
}

/* The contiguous column-major layout eig.cl indexes directly: element
 * (i, j) of matrix b at b * rows * cols + i + j * rows. */
static int la_colmajor(const tocl_la_mat *L, int64_t rows, int64_t cols) {
    return L->rs == 1 && (L->cs == rows || cols <= 1) && (L->bs == rows * cols);
}

tocl_status tocl_la_geev(int dev, int stream, const tocl_tensor *a, const tocl_tensor *z, const tocl_tensor *w,
                         const tocl_tensor *v, const tocl_tensor *ws, const tocl_tensor *rs,
                         const tocl_tensor *info) {
    TOCL_TRY(tocl_device_check(dev));
    tocl_la_params p;
    cl_mem ab, zb = NULL, wb, vb = NULL, wsb, rsb, ib;
    tocl_la_mat la, lws, lrs;
    la_type ty;
    TOCL_TRY(la_operand(dev, a, "A", 3, LA_ANY, &ty, &ab, &la));
    la_init(&p, a);
    p.a = la;
    if (p.m != p.n)
        return tocl_fail(TOCL_E_INVALID, "linalg.eig: A must be square, got %lld x %lld", (long long)p.m,
                         (long long)p.n);
    const la_type cx = {ty.dt, 1};
    TOCL_TRY(la_vector(dev, w, "eigenvalues", cx, p.batch, p.n, &wb, &p.x));
    TOCL_TRY(la_vector(dev, info, "info", LA_INT, p.batch, 1, &ib, &p.y));
    TOCL_TRY(la_vector(dev, ws, "work", ty, p.batch, 4 * p.n, &wsb, &lws));
    TOCL_TRY(la_vector(dev, rs, "real work", la_real_of(ty), p.batch, 2 * p.n, &rsb, &lrs));
    p.flag0 = z != NULL && v != NULL;
    if (p.flag0) {
        la_type zt;
        TOCL_TRY(la_operand(dev, z, "Schur vectors", 3, ty, &zt, &zb, &p.b));
        TOCL_TRY(la_operand(dev, v, "eigenvectors", 3, cx, NULL, &vb, &p.c));
        if (z->sizes[0] != p.batch || z->sizes[1] != p.n || z->sizes[2] != p.n || v->sizes[0] != p.batch ||
            v->sizes[1] != p.n || v->sizes[2] != p.n)
            return tocl_fail(TOCL_E_INVALID, "linalg.eig: the vector operands must be [%lld, %lld, %lld]",
                             (long long)p.batch, (long long)p.n, (long long)p.n);
    }
    /* the kernel indexes these directly (one work-item walks a whole matrix) */
    if (!la_colmajor(&p.a, p.n, p.n) || (p.flag0 && (!la_colmajor(&p.b, p.n, p.n) || p.c.rs != 1)) ||
        p.x.rs != 1 || lws.bs != 4 * p.n || lws.rs != 1 || lrs.bs != 2 * p.n || lrs.rs != 1)
        return tocl_fail(TOCL_E_INVALID, "linalg.eig: A and the Schur vectors must be contiguous column-major, the "
                                         "work operands contiguous and eigenvectors column-major");
    p.k = lws.off; /* the scratch offsets ride in the fields a square problem leaves free */
    p.m = lrs.off;
    if (p.batch == 0 || p.n == 0)
        return TOCL_OK;
    /* float32 as sgeev: correctly rounded division and sqrt, like the CPU's */
    static const char *opts[2][2] = {{"-cl-fp32-correctly-rounded-divide-sqrt",
                                      "-cl-fp32-correctly-rounded-divide-sqrt -DLA_COMPLEX"},
                                     {"-DLA_F64", "-DLA_F64 -DLA_COMPLEX"}};
    if (ty.dt == TOCL_F64 && !tocl_dev_props(dev)->has_fp64)
        return tocl_fail(TOCL_E_UNSUPPORTED, "linalg: float64 is not supported on device %d (%s): it lacks cl_khr_fp64",
                         dev, tocl_dev_props(dev)->name);
    tocl_ops_kernel *k;
    TOCL_TRY(tocl_ops_kernel_get(dev, "eig", "eig_geev", opts[ty.dt == TOCL_F64][ty.cx != 0], &k));
    tocl_ops_arg args[] = {{sizeof ab, &ab}, {sizeof zb, &zb}, {sizeof wsb, &wsb}, {sizeof rsb, &rsb},
                           {sizeof wb, &wb}, {sizeof vb, &vb}, {sizeof ib, &ib}, {sizeof p, &p}};
    size_t global = (size_t)p.batch, local = 1; /* one work-item per matrix: geev is sequential */
    return tocl_ops_launch(dev, stream, k, 1, &global, &local, args, 8);
}
