/* test_nn_rows.c - the nn row kernels through the C API against double
 * host references: softmax/log-softmax (last and middle dim, short and long
 * rows, float16), layer/group/batch norm forward and backward (running
 * statistics, eval mode), pointwise losses and nll, and argument errors. */
#include "test_ew_util.h"
#include "tocl/nn.h"

static uint32_t seed = 12345;

static double urand(void) { /* in [-2, 2) */
    seed = seed * 1664525u + 1013904223u;
    return ((seed >> 8) / 16777216.0) * 4 - 2;
}

/* Dense device tensor of n elements (1-D view unless shaped later). */
static int dense(dev_tensor *d, tocl_dtype t, int ndim, const int64_t *sizes) {
    int64_t st[8];
    int64_t n = contig_strides(ndim, sizes, st);
    return dt_make(d, 0, t, ndim, sizes, st, n, 5);
}

static int64_t numel_of(const dev_tensor *d) {
    int64_t n = 1;
    for (int i = 0; i < d->t.ndim; i++)
        n *= d->t.sizes[i];
    return n;
}
static void *elems(dev_tensor *d) { return (char *)d->host + (d->t.data - d->base); }
static void fill_rand(dev_tensor *d, double scale) {
    for (int64_t i = 0; i < numel_of(d); i++)
        host_set(d->t.dtype, elems(d), i, urand() * scale);
    dt_upload(d, 0);
}
static double at(dev_tensor *d, int64_t i) { return host_get(d->t.dtype, elems(d), i); }
static void release(dev_tensor *d) {
    tocl_mem_free(d->base);
    free(d->host);
}

static double tol_of(tocl_dtype t) { return t == TOCL_F16 ? 2e-3 : t == TOCL_F32 ? 2e-5 : 1e-12; }

/* softmax over dim of [a, n, b] against the host. */
static void test_softmax(tocl_dtype t, int64_t a, int64_t n, int64_t b, int log_) {
    int64_t sz[3] = {a, n, b};
    dev_tensor x, y, g, z;
    if (!dense(&x, t, 3, sz) || !dense(&y, t, 3, sz) || !dense(&g, t, 3, sz) || !dense(&z, t, 3, sz)) {
        CHECK(0);
        return;
    }
    fill_rand(&x, 4);
    fill_rand(&g, 1);
    CHECK_OK(tocl_nn_softmax(0, 0, &y.t, &x.t, 1, log_));
    CHECK_OK(tocl_nn_softmax_backward(0, 0, &z.t, &g.t, &y.t, 1, log_));
    dt_download(&y, 0);
    dt_download(&z, 0);
    double worst = 0, worst_g = 0;
    for (int64_t i = 0; i < a; i++)
        for (int64_t k = 0; k < b; k++) {
            double m = -INFINITY, s = 0, sg = 0;
            for (int64_t j = 0; j < n; j++)
                m = fmax(m, at(&x, (i * n + j) * b + k));
            for (int64_t j = 0; j < n; j++)
                s += exp(at(&x, (i * n + j) * b + k) - m);
            for (int64_t j = 0; j < n; j++) {
                int64_t e = (i * n + j) * b + k;
                double v = at(&x, e) - m, want = log_ ? v - log(s) : exp(v) / s;
                worst = fmax(worst, fabs(at(&y, e) - want) / (1 + fabs(want)));
                sg += log_ ? at(&g, e) : at(&g, e) * at(&y, e);
            }
            for (int64_t j = 0; j < n; j++) {
                int64_t e = (i * n + j) * b + k;
                double yv = at(&y, e), gv = at(&g, e);
                double want = log_ ? gv - exp(yv) * sg : yv * (gv - sg);
                worst_g = fmax(worst_g, fabs(at(&z, e) - want) / (1 + fabs(want)));
            }
        }
    CHECK(worst < tol_of(t) * 4);
    CHECK(worst_g < tol_of(t) * 8 * (1 + n / 100.0));
    if (!(worst < tol_of(t) * 4 && worst_g < tol_of(t) * 8 * (1 + n / 100.0)))
        fprintf(stderr, "softmax %s [%lld %lld %lld] log %d: err %g grad err %g\n", tocl_dtype_name(t),
                (long long)a, (long long)n, (long long)b, log_, worst, worst_g);
    release(&x), release(&y), release(&g), release(&z);
}

/* layer (groups 0), group or batch norm of [n, c, hw], forward and backward. */
static void test_norm(tocl_norm_kind kind, tocl_dtype t, int64_t n, int64_t c, int64_t hw, int64_t groups,
                      int training) {
    tocl_norm_desc d = {kind, n, c, hw, groups, 1e-5, 0.1};
    int64_t sz[3] = {n, c, hw}, csz[1] = {c};
    int64_t rows = kind == TOCL_NORM_LAYER ? n : kind == TOCL_NORM_GROUP ? n * groups : c;
    int64_t len = n * c * hw / (rows ? rows : 1);
    int64_t rsz[1] = {rows};
    dev_tensor x, y, w, b, mean, rstd, rm, rv, g, z, dw, db;
    int ok = dense(&x, t, 3, sz) && dense(&y, t, 3, sz) && dense(&g, t, 3, sz) && dense(&z, t, 3, sz) &&
             dense(&w, t, 1, csz) && dense(&b, t, 1, csz) && dense(&dw, t, 1, csz) && dense(&db, t, 1, csz) &&
             dense(&mean, t, 1, rsz) && dense(&rstd, t, 1, rsz) && dense(&rm, t, 1, rsz) && dense(&rv, t, 1, rsz);
    CHECK(ok);
    if (!ok)
        return;
    fill_rand(&x, 3);
    fill_rand(&g, 1);
    fill_rand(&w, 1);
    fill_rand(&b, 1);
    fill_rand(&rm, 0.5);
    for (int64_t i = 0; i < rows; i++)
        host_set(t, elems(&rv), i, 1 + fabs(urand()));
    dt_upload(&rv, 0);
    double *rm0 = calloc((size_t)rows + 1, sizeof(double)), *rv0 = calloc((size_t)rows + 1, sizeof(double));
    for (int64_t i = 0; i < rows; i++)
        rm0[i] = at(&rm, i), rv0[i] = at(&rv, i);
    if (training)
        CHECK_OK(tocl_nn_norm_forward(0, 0, &d, 1, &x.t, &y.t, &w.t, &b.t, &mean.t, &rstd.t,
                                      kind == TOCL_NORM_BATCH ? &rm.t : NULL, kind == TOCL_NORM_BATCH ? &rv.t : NULL));
    else
        CHECK_OK(tocl_nn_norm_forward(0, 0, &d, 0, &x.t, &y.t, &w.t, &b.t, NULL, NULL, &rm.t, &rv.t));
    CHECK_OK(tocl_nn_norm_backward(0, 0, &d, training, &x.t, &g.t, &z.t, &w.t, training ? &mean.t : NULL,
                                   training ? &rstd.t : NULL, training ? NULL : &rm.t, training ? NULL : &rv.t, &dw.t,
                                   &db.t));
    dt_download(&y, 0), dt_download(&z, 0), dt_download(&mean, 0), dt_download(&rstd, 0);
    dt_download(&rm, 0), dt_download(&rv, 0), dt_download(&dw, 0), dt_download(&db, 0);
    /* host reference: element list of each statistics row */
    double err = 0, *dws = calloc((size_t)c + 1, sizeof(double)), *dbs = calloc((size_t)c + 1, sizeof(double));
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(len ? len : 1));
    for (int64_t r = 0; r < rows; r++) {
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++)
            for (int64_t ch = 0; ch < c; ch++)
                for (int64_t h = 0; h < hw; h++) {
                    int64_t rr = kind == TOCL_NORM_LAYER ? i : kind == TOCL_NORM_GROUP ? i * groups + ch / (c / groups)
                                                                                    : ch;
                    if (rr == r)
                        idx[k++] = (i * c + ch) * hw + h;
                }
        double m = 0, v = 0;
        for (k = 0; k < len; k++)
            m += at(&x, idx[k]);
        m /= len;
        for (k = 0; k < len; k++)
            v += (at(&x, idx[k]) - m) * (at(&x, idx[k]) - m);
        double var = v / len, rs = training ? 1 / sqrt(var + 1e-5) : 1 / sqrt(rv0[r] + 1e-5);
        double mu = training ? m : rm0[r];
        if (training) {
            err = fmax(err, fabs(at(&mean, r) - m) / (1 + fabs(m)));
            err = fmax(err, fabs(at(&rstd, r) - rs) / (1 + fabs(rs)));
            if (kind == TOCL_NORM_BATCH) {
                err = fmax(err, fabs(at(&rm, r) - (0.9 * rm0[r] + 0.1 * m)));
                err = fmax(err, fabs(at(&rv, r) - (0.9 * rv0[r] + 0.1 * v / (len - 1))));
            }
        }
        double s_dyw = 0, s_dywxh = 0;
        for (k = 0; k < len; k++) {
            int64_t e = idx[k], ch = (e / hw) % c;
            double xh = (at(&x, e) - mu) * rs, dy = at(&g, e), wv = at(&w, ch);
            err = fmax(err, fabs(at(&y, e) - (xh * wv + at(&b, ch))) / 4);
            s_dyw += dy * wv;
            s_dywxh += dy * wv * xh;
            dws[ch] += dy * xh;
            dbs[ch] += dy;
        }
        for (k = 0; k < len; k++) {
            int64_t e = idx[k], ch = (e / hw) % c;
            double xh = (at(&x, e) - mu) * rs, dy = at(&g, e), wv = at(&w, ch);
            double want = training ? rs * (dy * wv - s_dyw / len - xh * s_dywxh / len) : dy * wv * rs;
            err = fmax(err, fabs(at(&z, e) - want) / (1 + fabs(want)));
        }
    }
    for (int64_t ch = 0; ch < c; ch++) {
        err = fmax(err, fabs(at(&dw, ch) - dws[ch]) / (1 + fabs(dws[ch])) / (1 + len / 64.0));
        err = fmax(err, fabs(at(&db, ch) - dbs[ch]) / (1 + fabs(dbs[ch])) / (1 + len / 64.0));
    }
    CHECK(err < tol_of(t) * 50);
    if (!(err < tol_of(t) * 50))
        fprintf(stderr, "norm kind %d %s [%lld %lld %lld] g %lld train %d: err %g\n", kind, tocl_dtype_name(t),
                (long long)n, (long long)c, (long long)hw, (long long)groups, training, err);
    free(idx), free(dws), free(dbs), free(rm0), free(rv0);
    dev_tensor *all[] = {&x, &y, &w, &b, &mean, &rstd, &rm, &rv, &g, &z, &dw, &db};
    for (int i = 0; i < 12; i++)
        release(all[i]);
}

static void test_losses(void) {
    const int64_t n = 1001;
    int64_t sz[1] = {n}, one[1] = {1}, two[1] = {2};
    dev_tensor x, t, y, r, g, z, flag;
    CHECK(dense(&x, TOCL_F32, 1, sz) && dense(&t, TOCL_F32, 1, sz) && dense(&y, TOCL_F32, 1, sz) &&
          dense(&r, TOCL_F32, 1, one) && dense(&g, TOCL_F32, 1, one) && dense(&z, TOCL_F32, 1, sz) &&
          dense(&flag, TOCL_I64, 1, two));
    for (int64_t i = 0; i < n; i++) {
        host_set(TOCL_F32, elems(&x), i, (urand() + 2) / 4.5 + 0.01); /* (0, 1) for BCE */
        host_set(TOCL_F32, elems(&t), i, (urand() + 2) / 4);
    }
    dt_upload(&x, 0), dt_upload(&t, 0), dt_upload(&flag, 0);
    host_set(TOCL_F32, elems(&g), 0, 1.5);
    dt_upload(&g, 0);
    for (int kind = TOCL_LOSS_MSE; kind <= TOCL_LOSS_BCE; kind++) {
        double prm = 0.1, sum = 0, err = 0;
        CHECK_OK(tocl_nn_loss_forward(0, 0, kind, TOCL_REDUCE_NONE, prm, &x.t, &t.t, NULL, &y.t, &flag.t));
        CHECK_OK(tocl_nn_loss_forward(0, 0, kind, TOCL_REDUCE_MEAN, prm, &x.t, &t.t, NULL, &r.t, &flag.t));
        CHECK_OK(tocl_nn_loss_backward(0, 0, kind, TOCL_REDUCE_MEAN, prm, &x.t, &t.t, NULL, &g.t, &z.t));
        dt_download(&y, 0), dt_download(&r, 0), dt_download(&z, 0), dt_download(&flag, 0);
        for (int64_t i = 0; i < n; i++) {
            double xv = at(&x, i), tv = at(&t, i), dd = xv - tv, a = fabs(dd), l, gr;
            switch (kind) {
            case TOCL_LOSS_MSE: l = dd * dd, gr = 2 * dd; break;
            case TOCL_LOSS_L1: l = a, gr = dd > 0 ? 1 : dd < 0 ? -1 : 0; break;
            case TOCL_LOSS_SMOOTH_L1: l = a < prm ? 0.5 * dd * dd / prm : a - 0.5 * prm, gr = a < prm ? dd / prm : dd > 0 ? 1 : -1; break;
            case TOCL_LOSS_HUBER: l = a < prm ? 0.5 * dd * dd : prm * (a - 0.5 * prm), gr = a < prm ? dd : dd > 0 ? prm : -prm; break;
            default: l = -(tv * log(xv) + (1 - tv) * log(1 - xv)), gr = dd / ((1 - xv) * xv); break;
            }
            sum += l;
            err = fmax(err, fabs(at(&y, i) - l) / (1 + fabs(l)));
            err = fmax(err, fabs(at(&z, i) - 1.5 * gr / n) / (1 + fabs(gr)));
        }
        err = fmax(err, fabs(at(&r, 0) - sum / n) / (1 + sum / n));
        CHECK(err < 1e-4);
        CHECK(((const int64_t *)elems(&flag))[0] == 0);
    }
    /* BCE flags an input outside [0, 1] */
    host_set(TOCL_F32, elems(&x), 7, 1.5);
    dt_upload(&x, 0);
    CHECK_OK(tocl_nn_loss_forward(0, 0, TOCL_LOSS_BCE, TOCL_REDUCE_SUM, 0, &x.t, &t.t, NULL, &r.t, &flag.t));
    dt_download(&flag, 0);
    CHECK(((const int64_t *)elems(&flag))[0] == 1);
    CHECK_STATUS(tocl_nn_loss_forward(0, 0, 9, TOCL_REDUCE_SUM, 0, &x.t, &t.t, NULL, &r.t, &flag.t), TOCL_E_INVALID);
    CHECK_STATUS(tocl_nn_loss_forward(0, 0, TOCL_LOSS_MSE, TOCL_REDUCE_NONE, 0, &x.t, &t.t, NULL, &r.t, NULL),
                 TOCL_E_INVALID); /* output too small */
    dev_tensor *all[] = {&x, &t, &y, &r, &g, &z, &flag};
    for (int i = 0; i < 7; i++)
        release(all[i]);
}

static void test_nll(void) {
    const int64_t N = 37, C = 11, S = 3;
    int64_t xs[1] = {N * C * S}, ts[1] = {N * S}, cs[1] = {C}, one[1] = {1}, two[1] = {2};
    dev_tensor x, t, w, y, tw, flag, g, z;
    CHECK(dense(&x, TOCL_F32, 1, xs) && dense(&t, TOCL_I64, 1, ts) && dense(&w, TOCL_F32, 1, cs) &&
          dense(&y, TOCL_F32, 1, one) && dense(&tw, TOCL_F32, 1, one) && dense(&flag, TOCL_I64, 1, two) &&
          dense(&g, TOCL_F32, 1, one) && dense(&z, TOCL_F32, 1, xs));
    fill_rand(&x, 2);
    fill_rand(&w, 1);
    int64_t *tg = elems(&t);
    for (int64_t i = 0; i < N * S; i++)
        tg[i] = i % 5 == 0 ? -100 : (int64_t)(seed = seed * 1664525u + 1013904223u) % C;
    for (int64_t i = 0; i < N * S; i++)
        if (tg[i] < -100 || tg[i] >= C)
            tg[i] = (tg[i] % C + C) % C;
    dt_upload(&t, 0), dt_upload(&flag, 0), dt_upload(&z, 0);
    host_set(TOCL_F32, elems(&g), 0, 2.0);
    dt_upload(&g, 0);
    CHECK_OK(tocl_nn_nll_forward(0, 0, TOCL_REDUCE_MEAN, -100, N, C, S, &x.t, &t.t, &w.t, &y.t, &tw.t, &flag.t));
    CHECK_OK(tocl_nn_nll_backward(0, 0, TOCL_REDUCE_MEAN, -100, N, C, S, &t.t, &w.t, &g.t, &tw.t, &z.t));
    dt_download(&y, 0), dt_download(&tw, 0), dt_download(&flag, 0), dt_download(&z, 0);
    double sl = 0, sw = 0, err = 0;
    for (int64_t i = 0; i < N * S; i++) {
        if (tg[i] == -100)
            continue;
        int64_t n = i / S, s = i % S;
        sl -= at(&w, tg[i]) * at(&x, (n * C + tg[i]) * S + s);
        sw += at(&w, tg[i]);
    }
    err = fmax(fabs(at(&y, 0) - sl / sw), fabs(at(&tw, 0) - sw));
    for (int64_t i = 0; i < N * S; i++) {
        if (tg[i] == -100)
            continue;
        int64_t e = (i / S * C + tg[i]) * S + i % S;
        err = fmax(err, fabs(at(&z, e) + 2.0 * at(&w, tg[i]) / sw));
    }
    CHECK(err < 1e-4);
    CHECK(((const int64_t *)elems(&flag))[0] == 0);
    tg[4] = C; /* out of bounds */
    dt_upload(&t, 0);
    CHECK_OK(tocl_nn_nll_forward(0, 0, TOCL_REDUCE_SUM, -100, N, C, S, &x.t, &t.t, NULL, &y.t, &tw.t, &flag.t));
    dt_download(&flag, 0);
    CHECK(((const int64_t *)elems(&flag))[0] == 1 && ((const int64_t *)elems(&flag))[1] == C);
    CHECK_STATUS(tocl_nn_nll_forward(0, 0, TOCL_REDUCE_SUM, -100, N, C, S, &x.t, &x.t, NULL, &y.t, &tw.t, &flag.t),
                 TOCL_E_INVALID); /* float target */
    dev_tensor *all[] = {&x, &t, &w, &y, &tw, &flag, &g, &z};
    for (int i = 0; i < 8; i++)
        release(all[i]);
}

static void test_errors(void) {
    int64_t sz[2] = {3, 4};
    dev_tensor x, y, xi;
    CHECK(dense(&x, TOCL_F32, 2, sz) && dense(&y, TOCL_F32, 2, sz) && dense(&xi, TOCL_I32, 2, sz));
    CHECK_STATUS(tocl_nn_softmax(0, 0, &y.t, &x.t, 2, 0), TOCL_E_INVALID);
    CHECK_STATUS(tocl_nn_softmax(0, 0, &y.t, &xi.t, 1, 0), TOCL_E_UNSUPPORTED);
    tocl_tensor nc = x.t; /* transposed: not dense */
    nc.sizes[0] = 4, nc.sizes[1] = 3, nc.strides[0] = 1, nc.strides[1] = 4;
    CHECK_STATUS(tocl_nn_softmax(0, 0, &y.t, &nc, 1, 0), TOCL_E_INVALID);
    tocl_norm_desc d = {TOCL_NORM_GROUP, 3, 4, 1, 3, 1e-5, 0.1};
    CHECK_STATUS(tocl_nn_norm_forward(0, 0, &d, 1, &x.t, &y.t, NULL, NULL, NULL, NULL, NULL, NULL), TOCL_E_INVALID);
    CHECK_STATUS(tocl_nn_softmax(99, 0, &y.t, &x.t, 1, 0), TOCL_E_NO_DEVICE);
    /* empty batch: nothing launched, success */
    tocl_tensor e = x.t;
    e.sizes[0] = 0;
    CHECK_OK(tocl_nn_softmax(0, 0, &e, &e, 1, 1));
    release(&x), release(&y), release(&xi);
}

int main(void) {
    if (tocl_device_count() < 1) {
        printf("no OpenCL device; skipping\n");
        return 0;
    }
    int fp64 = 0;
    tocl_device_props pr;
    if (tocl_device_props_get(0, &pr) == TOCL_OK)
        fp64 = pr.has_fp64;
    for (int log_ = 0; log_ < 2; log_++) {
        test_softmax(TOCL_F32, 7, 1000, 1, log_); /* one group per row */
        test_softmax(TOCL_F32, 50, 5, 1, log_);   /* one item per row */
        test_softmax(TOCL_F32, 3, 17, 129, log_); /* strided rows */
        test_softmax(TOCL_F32, 1, 300, 2, log_);  /* strided, few rows: groups */
        test_softmax(TOCL_F16, 4, 1, 1, log_);
        test_softmax(TOCL_F16, 4, 333, 1, log_);
        if (fp64)
            test_softmax(TOCL_F64, 5, 77, 3, log_);
    }
    for (int train = 1; train >= 0; train--)
        test_norm(TOCL_NORM_BATCH, TOCL_F32, 6, 5, 7, 0, train);
    test_norm(TOCL_NORM_BATCH, TOCL_F32, 100, 3, 1, 0, 1);
    test_norm(TOCL_NORM_LAYER, TOCL_F32, 9, 300, 1, 0, 1);
    test_norm(TOCL_NORM_LAYER, TOCL_F32, 40, 7, 1, 0, 1);
    test_norm(TOCL_NORM_GROUP, TOCL_F32, 3, 6, 5, 3, 1);
    test_norm(TOCL_NORM_GROUP, TOCL_F16, 2, 4, 20, 2, 1);
    if (fp64)
        test_norm(TOCL_NORM_LAYER, TOCL_F64, 5, 50, 1, 0, 1);
    test_losses();
    test_nll();
    test_errors();
    TOCL_TEST_END();
}
