/* test_grid_sample.c - grid sampling through the C API, without a host
 * reference of the sampler itself: the input gradient is checked as the
 * adjoint of the forward (<fwd(x), g> == <x, bwd(g)>, the forward being
 * linear in x) for every mode, padding and align_corners in 2-d and 3-d,
 * the grid gradient against central differences of <fwd(x, grid), g>
 * (float64), and argument errors (each a status, never a crash). */
#include "test_ew_util.h"
#include "tocl/grid_sample.h"

static uint32_t seed = 4242;

static double urand(double lo, double hi) {
    seed = seed * 1664525u + 1013904223u;
    return lo + ((seed >> 8) / 16777216.0) * (hi - lo);
}

static int make(dev_tensor *d, tocl_dtype t, int ndim, const int64_t *sizes) {
    int64_t st[5];
    int64_t n = contig_strides(ndim, sizes, st);
    return dt_make(d, 0, t, ndim, sizes, st, n > 0 ? n : 1, 2);
}
static int64_t count(const dev_tensor *d) {
    int64_t n = 1;
    for (int i = 0; i < d->t.ndim; i++)
        n *= d->t.sizes[i];
    return n;
}
static double get(dev_tensor *d, int64_t i) { return host_get(d->t.dtype, dt_elems(d), i); }
static void set(dev_tensor *d, int64_t i, double v) { host_set(d->t.dtype, dt_elems(d), i, v); }
static void fill(dev_tensor *d, double lo, double hi) {
    for (int64_t i = 0; i < count(d); i++)
        set(d, i, urand(lo, hi));
    dt_upload(d, 0);
}
static double dot(dev_tensor *a, dev_tensor *b) {
    double s = 0;
    for (int64_t i = 0; i < count(a); i++)
        s += get(a, i) * get(b, i);
    return s;
}

/* Shapes of a case: input [1 or 2, C, (D,) H, W], grid [N, (OD,) OH, OW, nd]. */
typedef struct gs_case {
    int nd;
    int64_t x[5], grid[5], y[5];
} gs_case;

static gs_case case_of(int nd) {
    gs_case c;
    if (nd == 2) {
        int64_t x[5] = {2, 3, 4, 5}, g[5] = {2, 3, 4, 2}, y[5] = {2, 3, 3, 4};
        memcpy(c.x, x, sizeof x), memcpy(c.grid, g, sizeof g), memcpy(c.y, y, sizeof y);
    } else {
        int64_t x[5] = {1, 2, 3, 4, 3}, g[5] = {1, 2, 3, 2, 3}, y[5] = {1, 2, 2, 3, 2};
        memcpy(c.x, x, sizeof x), memcpy(c.grid, g, sizeof g), memcpy(c.y, y, sizeof y);
    }
    c.nd = nd;
    return c;
}

/* <fwd(x), g> against <x, grad_input(g)>. */
static void test_adjoint(int nd, tocl_grid_sample_desc d, tocl_dtype t, double tol) {
    gs_case c = case_of(nd);
    dev_tensor x, grid, y, g, gi, gg;
    if (!make(&x, t, nd + 2, c.x) || !make(&grid, t, nd + 2, c.grid) || !make(&y, t, nd + 2, c.y) ||
        !make(&g, t, nd + 2, c.y) || !make(&gi, t, nd + 2, c.x) || !make(&gg, t, nd + 2, c.grid)) {
        CHECK(0);
        return;
    }
    fill(&x, -2, 2);
    fill(&grid, -1.4, 1.4);
    fill(&g, -1, 1);
    CHECK_OK(tocl_grid_sample_forward(0, tocl_stream_current(0), &d, &x.t, &grid.t, &y.t));
    CHECK_OK(tocl_grid_sample_backward(0, tocl_stream_current(0), &d, &g.t, &x.t, &grid.t, &gi.t, &gg.t));
    dt_download(&y, 0);
    dt_download(&gi, 0);
    double a = dot(&y, &g), b = dot(&x, &gi);
    CHECK(fabs(a - b) <= tol * (1 + fabs(a)));
    if (!(fabs(a - b) <= tol * (1 + fabs(a))))
        fprintf(stderr, "  adjoint nd %d mode %d pad %d align %d: %.10g vs %.10g\n", nd, d.mode, d.padding,
                d.align_corners, a, b);
    dev_tensor *all[] = {&x, &grid, &y, &g, &gi, &gg};
    for (int i = 0; i < 6; i++)
        dt_free(all[i]);
}

/* grad_grid against central differences of <fwd(x, grid), g> (float64). */
static void test_grid_grad(int nd, tocl_grid_sample_desc d) {
    gs_case c = case_of(nd);
    dev_tensor x, grid, y, g, gg;
    if (!make(&x, TOCL_F64, nd + 2, c.x) || !make(&grid, TOCL_F64, nd + 2, c.grid) ||
        !make(&y, TOCL_F64, nd + 2, c.y) || !make(&g, TOCL_F64, nd + 2, c.y) ||
        !make(&gg, TOCL_F64, nd + 2, c.grid)) {
        CHECK(0);
        return;
    }
    fill(&x, -2, 2);
    fill(&grid, -1.4, 1.4);
    fill(&g, -1, 1);
    CHECK_OK(tocl_grid_sample_backward(0, tocl_stream_current(0), &d, &g.t, &x.t, &grid.t, NULL, &gg.t));
    dt_download(&gg, 0);
    const double h = 1e-6;
    double worst = 0, scale = 0;
    for (int64_t i = 0; i < count(&grid); i++) {
        double v = get(&grid, i), l[2];
        for (int s = 0; s < 2; s++) {
            set(&grid, i, v + (s ? h : -h));
            dt_upload(&grid, 0);
            CHECK_OK(tocl_grid_sample_forward(0, tocl_stream_current(0), &d, &x.t, &grid.t, &y.t));
            dt_download(&y, 0);
            l[s] = dot(&y, &g);
        }
        set(&grid, i, v);
        double fd = (l[1] - l[0]) / (2 * h), e = fabs(fd - get(&gg, i));
        worst = e > worst ? e : worst;
        scale = fabs(fd) > scale ? fabs(fd) : scale;
    }
    dt_upload(&grid, 0);
    CHECK(worst <= 1e-5 * (1 + scale));
    if (!(worst <= 1e-5 * (1 + scale)))
        fprintf(stderr, "  grid grad nd %d mode %d pad %d align %d: off by %g (scale %g)\n", nd, d.mode, d.padding,
                d.align_corners, worst, scale);
    dev_tensor *all[] = {&x, &grid, &y, &g, &gg};
    for (int i = 0; i < 5; i++)
        dt_free(all[i]);
}

static void test_errors(void) {
    gs_case c = case_of(2);
    dev_tensor x, grid, y, xi, gbad, gi_t;
    int64_t bad_grid[4] = {2, 3, 4, 3}, gi_st[4] = {60, 20, 1, 4}, x3[5] = {1, 1, 2, 2, 2};
    if (!make(&x, TOCL_F32, 4, c.x) || !make(&grid, TOCL_F32, 4, c.grid) || !make(&y, TOCL_F32, 4, c.y) ||
        !make(&xi, TOCL_I32, 4, c.x) || !make(&gbad, TOCL_F32, 4, bad_grid) ||
        !dt_make(&gi_t, 0, TOCL_F32, 4, c.x, gi_st, 120, 0)) {
        CHECK(0);
        return;
    }
    int st = tocl_stream_current(0);
    tocl_grid_sample_desc d = {TOCL_GRID_SAMPLE_BILINEAR, TOCL_GRID_SAMPLE_ZEROS, 0};
    CHECK_STATUS(tocl_grid_sample_forward(0, st, &d, &x.t, &gbad.t, &y.t), TOCL_E_INVALID);
    CHECK_STATUS(tocl_grid_sample_forward(0, st, &d, &x.t, &grid.t, &x.t), TOCL_E_INVALID); /* output shape */
    CHECK_STATUS(tocl_grid_sample_forward(0, st, &d, &xi.t, &grid.t, &y.t), TOCL_E_INVALID); /* dtypes differ */
    CHECK_STATUS(tocl_grid_sample_forward(0, st, &d, &x.t, &grid.t, NULL), TOCL_E_INVALID);
    tocl_grid_sample_desc bad = {(tocl_grid_sample_mode)3, TOCL_GRID_SAMPLE_ZEROS, 0};
    CHECK_STATUS(tocl_grid_sample_forward(0, st, &bad, &x.t, &grid.t, &y.t), TOCL_E_INVALID);
    bad.mode = TOCL_GRID_SAMPLE_NEAREST;
    bad.padding = (tocl_grid_sample_padding)7;
    CHECK_STATUS(tocl_grid_sample_forward(0, st, &bad, &x.t, &grid.t, &y.t), TOCL_E_INVALID);
    /* bicubic is 2-d only */
    dev_tensor x5, g5, y5;
    int64_t g5s[5] = {1, 1, 1, 1, 3}, y5s[5] = {1, 1, 1, 1, 1};
    if (make(&x5, TOCL_F32, 5, x3) && make(&g5, TOCL_F32, 5, g5s) && make(&y5, TOCL_F32, 5, y5s)) {
        tocl_grid_sample_desc cub = {TOCL_GRID_SAMPLE_BICUBIC, TOCL_GRID_SAMPLE_ZEROS, 0};
        CHECK_STATUS(tocl_grid_sample_forward(0, st, &cub, &x5.t, &g5.t, &y5.t), TOCL_E_INVALID);
        dt_free(&x5), dt_free(&g5), dt_free(&y5);
    }
    /* a strided grad_input cannot be the atomics' accumulator */
    CHECK_STATUS(tocl_grid_sample_backward(0, st, &d, &y.t, &x.t, &grid.t, &gi_t.t, NULL), TOCL_E_INVALID);
    /* integer operands: the kernels are floating only */
    dev_tensor gri, yi;
    if (make(&gri, TOCL_I32, 4, c.grid) && make(&yi, TOCL_I32, 4, c.y)) {
        CHECK_STATUS(tocl_grid_sample_forward(0, st, &d, &xi.t, &gri.t, &yi.t), TOCL_E_UNSUPPORTED);
        dt_free(&gri), dt_free(&yi);
    }
    dev_tensor *all[] = {&x, &grid, &y, &xi, &gbad, &gi_t};
    for (int i = 0; i < 6; i++)
        dt_free(all[i]);
}

int main(void) {
    if (tocl_device_count() < 1) {
        printf("no OpenCL device; skipping\n");
        return 0;
    }
    tocl_device_props pr;
    int fp64 = tocl_device_props_get(0, &pr) == TOCL_OK && pr.has_fp64 &&
               strstr(pr.extensions, "cl_khr_int64_base_atomics") != NULL;
    for (int nd = 2; nd <= 3; nd++)
        for (int mode = 0; mode <= (nd == 2 ? 2 : 1); mode++)
            for (int pad = 0; pad <= 2; pad++)
                for (int align = 0; align <= 1; align++) {
                    tocl_grid_sample_desc d = {(tocl_grid_sample_mode)mode, (tocl_grid_sample_padding)pad, align};
                    test_adjoint(nd, d, TOCL_F32, 1e-4);
                    if (fp64 && mode != TOCL_GRID_SAMPLE_NEAREST && align == pad % 2) {
                        test_adjoint(nd, d, TOCL_F64, 1e-11);
                        test_grid_grad(nd, d);
                    }
                }
    test_adjoint(2, (tocl_grid_sample_desc){TOCL_GRID_SAMPLE_BICUBIC, TOCL_GRID_SAMPLE_REFLECTION, 1}, TOCL_F16,
                 2e-2);
    test_adjoint(3, (tocl_grid_sample_desc){TOCL_GRID_SAMPLE_BILINEAR, TOCL_GRID_SAMPLE_BORDER, 0}, TOCL_BF16,
                 5e-2);
    test_errors();
    TOCL_TEST_END();
}
