/* test_index.c - the indexing kernels against host references: gather over
 * a strided source, scatter-add in index order (bit-exact float sums),
 * index bounds, mask compaction, remaps (flip, reflect pad, tril) and the
 * pad backward, plus argument errors. */
#include <stdlib.h>

#include "test_ew_util.h"
#include "tocl/graph.h"
#include "tocl/index.h"

static tocl_tensor view(const dev_tensor *d, int ndim, const int64_t *sizes, const int64_t *strides) {
    tocl_tensor t = d->t;
    t.ndim = ndim;
    for (int i = 0; i < ndim; i++) {
        t.sizes[i] = sizes[i];
        t.strides[i] = strides[i];
    }
    return t;
}

/* out[i][j] = src[idx[i][j]][j] (gather dim 0) over a transposed source. */
static void test_gather(void) {
    int64_t ss[2] = {4, 3}, st[2] = {1, 4}; /* src (4, 3) stored transposed */
    int64_t is[2] = {2, 3}, ist[2] = {3, 1};
    dev_tensor src, idx, out;
    CHECK(dt_make(&src, 0, TOCL_F32, 2, ss, st, 12, 0));
    CHECK(dt_make(&idx, 0, TOCL_I64, 2, is, ist, 6, 0));
    CHECK(dt_make(&out, 0, TOCL_F32, 2, is, ist, 6, 0));
    float *s = dt_elems(&src);
    int64_t *ix = dt_elems(&idx);
    for (int i = 0; i < 12; i++)
        s[i] = (float)i + 0.5f;
    int64_t vals[6] = {3, 0, -1, 1, 2, 0}; /* -1 wraps to 3 */
    memcpy(ix, vals, sizeof vals);
    dt_upload(&src, 0);
    dt_upload(&idx, 0);
    int64_t zst[2] = {0, 4};
    tocl_tensor sv = view(&src, 2, is, zst);
    tocl_index_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.nidx = 1;
    sp.idx[0] = idx.t;
    sp.bound[0] = 4;
    sp.stride[0] = 1;
    CHECK_OK(tocl_index_gather(0, 0, &out.t, &sv, &sp));
    dt_download(&out, 0);
    float *o = dt_elems(&out);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) {
            int64_t r = vals[i * 3 + j] < 0 ? vals[i * 3 + j] + 4 : vals[i * 3 + j];
            CHECK(o[i * 3 + j] == s[r * 1 + j * 4]);
        }
    int64_t mn = 0, mx = 0;
    CHECK_OK(tocl_index_minmax(0, 0, &idx.t, &mn, &mx));
    CHECK(mn == -1 && mx == 3);
    /* dtype mismatch is refused */
    tocl_tensor bad = out.t;
    bad.dtype = TOCL_I32;
    CHECK_STATUS(tocl_index_gather(0, 0, &bad, &sv, &sp), TOCL_E_INVALID);
    dt_free(&src);
    dt_free(&idx);
    dt_free(&out);
}

/* dst[idx[i]] += v[i] over 3000 elements: the same float sums as a host
 * loop in index order, and the same on a second run. */
static void test_scatter_add_order(void) {
    const int64_t n = 3000, m = 5;
    int64_t ns[1] = {n}, one[1] = {1}, ms[1] = {m};
    dev_tensor v, idx, dst;
    CHECK(dt_make(&v, 0, TOCL_F32, 1, ns, one, n, 0));
    CHECK(dt_make(&idx, 0, TOCL_I64, 1, ns, one, n, 0));
    CHECK(dt_make(&dst, 0, TOCL_F32, 1, ms, one, m, 0));
    float *hv = dt_elems(&v), ref[5] = {0};
    int64_t *hi = dt_elems(&idx);
    uint32_t state = 7;
    for (int64_t i = 0; i < n; i++) {
        state = state * 1664525u + 1013904223u;
        hi[i] = (state >> 8) % m;
        hv[i] = (float)((state >> 12) % 1000) / 7.0f;
        ref[hi[i]] += hv[i];
    }
    dt_upload(&v, 0);
    dt_upload(&idx, 0);
    for (int run = 0; run < 2; run++) {
        memset(dst.host, 0, dst.bytes);
        dt_upload(&dst, 0);
        int64_t zs[1] = {0};
        tocl_tensor dv = view(&dst, 1, ns, zs);
        tocl_index_spec sp;
        memset(&sp, 0, sizeof sp);
        sp.nidx = 1;
        sp.idx[0] = idx.t;
        sp.bound[0] = m;
        sp.stride[0] = 1;
        sp.serial_dims = 1;
        tocl_scalar zero = {0, 0, 0}, alpha = {0, 0, 1};
        CHECK_OK(tocl_index_scatter(0, 0, &dv, &v.t, zero, TOCL_INDEX_ADD, alpha, &sp));
        dt_download(&dst, 0);
        CHECK(!memcmp(dt_elems(&dst), ref, sizeof ref));
    }
    dt_free(&v);
    dt_free(&idx);
    dt_free(&dst);
}

/* nonzero of a strided int16 mask and masked_select of a float tensor. */
static void test_mask(void) {
    int64_t ms[2] = {3, 50}, mst[2] = {1, 3}; /* transposed storage */
    dev_tensor mask, out, vals, sel;
    CHECK(dt_make(&mask, 0, TOCL_I16, 2, ms, mst, 150, 0));
    int16_t *hm = dt_elems(&mask);
    int64_t count = 0;
    for (int i = 0; i < 150; i++) {
        hm[i] = (int16_t)((i * 7) % 5 == 0 ? 0 : i);
        count += hm[i] != 0;
    }
    dt_upload(&mask, 0);
    tocl_mask_scan scan;
    CHECK_OK(tocl_mask_count(0, 0, &mask.t, &scan));
    CHECK(scan.total == count);
    int64_t os[2] = {count, 2}, ost[2] = {2, 1};
    CHECK(dt_make(&out, 0, TOCL_I64, 2, os, ost, count * 2, 0));
    CHECK_OK(tocl_mask_nonzero(0, 0, &mask.t, &scan, &out.t));
    dt_download(&out, 0);
    int64_t *ho = dt_elems(&out), j = 0, bad = 0;
    for (int64_t r = 0; r < 3; r++)
        for (int64_t c = 0; c < 50; c++)
            if (hm[r + c * 3]) {
                bad += ho[2 * j] != r || ho[2 * j + 1] != c;
                j++;
            }
    CHECK(bad == 0);
    int64_t vst[2] = {50, 1}, ss[1] = {count}, one[1] = {1};
    CHECK(dt_make(&vals, 0, TOCL_F32, 2, ms, vst, 150, 0));
    CHECK(dt_make(&sel, 0, TOCL_F32, 1, ss, one, count, 0));
    float *hv = dt_elems(&vals);
    for (int i = 0; i < 150; i++)
        hv[i] = (float)i * 0.25f;
    dt_upload(&vals, 0);
    CHECK_OK(tocl_mask_select(0, 0, &mask.t, &scan, &vals.t, &sel.t));
    dt_download(&sel, 0);
    float *hs = dt_elems(&sel);
    j = 0;
    bad = 0;
    for (int64_t r = 0; r < 3; r++)
        for (int64_t c = 0; c < 50; c++)
            if (hm[r + c * 3])
                bad += hs[j++] != hv[r * 50 + c];
    CHECK(bad == 0);
    tocl_mask_scan_release(&scan);
    dt_free(&mask);
    dt_free(&out);
    dt_free(&vals);
    dt_free(&sel);
}

/* Reflect-pad a row of 5 by (2, 3) and flip it; pad backward sums back. */
static void test_remaps(void) {
    int64_t ns[2] = {2, 5}, nst[2] = {5, 1}, ps[2] = {2, 10}, pst[2] = {10, 1};
    dev_tensor src, dst, back;
    CHECK(dt_make(&src, 0, TOCL_F32, 2, ns, nst, 10, 0));
    CHECK(dt_make(&dst, 0, TOCL_F32, 2, ps, pst, 20, 0));
    CHECK(dt_make(&back, 0, TOCL_F32, 2, ns, nst, 10, 0));
    float *hs = dt_elems(&src);
    for (int i = 0; i < 10; i++)
        hs[i] = (float)i;
    dt_upload(&src, 0);
    tocl_remap_mode modes[2] = {TOCL_REMAP_FLIP, TOCL_REMAP_REFLECT};
    int64_t shift[2] = {0, 2};
    tocl_scalar zero = {0, 0, 0};
    CHECK_OK(tocl_shape_remap(0, 0, &dst.t, &src.t, modes, shift, zero));
    dt_download(&dst, 0);
    float *hd = dt_elems(&dst);
    static const int refl[10] = {2, 1, 0, 1, 2, 3, 4, 3, 2, 1};
    int bad = 0;
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 10; c++)
            bad += hd[r * 10 + c] != hs[(1 - r) * 5 + refl[c]];
    CHECK(bad == 0);
    /* backward of the reflect pad over all-ones: how often each input is read */
    for (int i = 0; i < 20; i++)
        hd[i] = 1.0f;
    dt_upload(&dst, 0);
    int64_t before[1] = {2};
    CHECK_OK(tocl_shape_pad_backward(0, 0, &back.t, &dst.t, TOCL_REMAP_REFLECT, 1, before));
    dt_download(&back, 0);
    float *hb = dt_elems(&back);
    static const float reads[5] = {1, 3, 3, 2, 1};
    bad = 0;
    for (int i = 0; i < 10; i++)
        bad += hb[i] != reads[i % 5];
    CHECK(bad == 0);
    /* tril of the 2 x 5 source, in place */
    CHECK_OK(tocl_shape_tri(0, 0, &src.t, &src.t, 0, 1));
    dt_download(&src, 0);
    bad = 0;
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 5; c++)
            bad += hs[r * 5 + c] != (c - r <= 1 ? (float)(r * 5 + c) : 0.0f);
    CHECK(bad == 0);
    CHECK_STATUS(tocl_shape_pad_backward(0, 0, &back.t, &dst.t, TOCL_REMAP_FLIP, 1, before), TOCL_E_INVALID);
    dt_free(&src);
    dt_free(&dst);
    dt_free(&back);
}

/* cat of three int32 sources along dim 1 (one transposed, one with an
 * offset) into an offset destination, against a host reference; then the
 * argument checks. */
static void test_cat(void) {
    int64_t ds[2] = {3, 7}, dst_st[2] = {7, 1};
    int64_t a_s[2] = {3, 2}, a_st[2] = {1, 3};  /* transposed */
    int64_t b_s[2] = {3, 4}, b_st[2] = {4, 1};
    int64_t c_s[2] = {3, 1}, c_st[2] = {1, 1};
    dev_tensor dst, a, b, c;
    CHECK(dt_make(&dst, 0, TOCL_I32, 2, ds, dst_st, 21, 5));
    CHECK(dt_make(&a, 0, TOCL_I32, 2, a_s, a_st, 6, 0));
    CHECK(dt_make(&b, 0, TOCL_I32, 2, b_s, b_st, 12, 2));
    CHECK(dt_make(&c, 0, TOCL_I32, 2, c_s, c_st, 3, 0));
    dev_tensor *srcs[3] = {&a, &b, &c};
    for (int k = 0; k < 3; k++) {
        int32_t *h = srcs[k]->host;
        for (size_t i = 0; i < srcs[k]->bytes / 4; i++)
            h[i] = (int32_t)(100 * k + (int)i);
        dt_upload(srcs[k], 0);
    }
    dt_upload(&dst, 0);
    const tocl_tensor *ts[3] = {&a.t, &b.t, &c.t};
    CHECK_OK(tocl_shape_cat(0, 0, &dst.t, 3, ts, 1));
    dt_download(&dst, 0);
    int32_t *o = (int32_t *)dst.host + 5;
    int64_t widths[3] = {2, 4, 1}, col0 = 0;
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < widths[k]; j++) {
                int64_t lin = i * widths[k] + j;
                int32_t want = ((int32_t *)srcs[k]->host)[(srcs[k] == &b ? 2 : 0) + dt_index(&srcs[k]->t, lin)];
                CHECK(o[i * 7 + col0 + j] == want);
            }
        col0 += widths[k];
    }
    CHECK(((int32_t *)dst.host)[0] == 0); /* before the destination's offset: untouched */
    /* Bad arguments are refused with the reason. */
    const tocl_tensor *five[5] = {&a.t, &b.t, &c.t, &a.t, &b.t};
    CHECK_STATUS(tocl_shape_cat(0, 0, &dst.t, 5, five, 1), TOCL_E_INVALID);
    CHECK_STATUS(tocl_shape_cat(0, 0, &dst.t, 2, ts, 1), TOCL_E_INVALID); /* covers 6 of 7 columns */
    CHECK(strstr(tocl_last_error(), "cover"));
    CHECK_STATUS(tocl_shape_cat(0, 0, &dst.t, 3, ts, 0), TOCL_E_INVALID); /* sizes differ off the axis */
    CHECK_STATUS(tocl_shape_cat(0, 0, &dst.t, 3, ts, 2), TOCL_E_INVALID);
    tocl_tensor f = b.t;
    f.dtype = TOCL_F32;
    const tocl_tensor *mixed[3] = {&a.t, &f, &c.t};
    CHECK_STATUS(tocl_shape_cat(0, 0, &dst.t, 3, mixed, 1), TOCL_E_INVALID);
    CHECK_STATUS(tocl_shape_cat(0, 0, &dst.t, 3, NULL, 1), TOCL_E_INVALID);
    /* A pair in one launch: dst = cat(b, a, c) (other starts than above)
     * and dst2 = cat(e), e transposed, dst2 at its own offset. */
    int64_t e7[2] = {3, 7}, e_st[2] = {1, 3};
    dev_tensor dst2, e;
    CHECK(dt_make(&dst2, 0, TOCL_I32, 2, ds, dst_st, 21, 5));
    CHECK(dt_make(&e, 0, TOCL_I32, 2, e7, e_st, 21, 0));
    for (size_t i = 0; i < e.bytes / 4; i++)
        ((int32_t *)e.host)[i] = (int32_t)(1000 + (int)i);
    dt_upload(&e, 0);
    dt_upload(&dst2, 0);
    const tocl_tensor *pair2[4] = {&b.t, &a.t, &c.t, &e.t};
    CHECK_STATUS(tocl_shape_cat_pair(0, 0, &dst.t, &dst2.t, 2, 4, pair2, 1), TOCL_E_INVALID); /* b, a: 6 of 7 */
    CHECK(strstr(tocl_last_error(), "cover"));
    CHECK_OK(tocl_shape_cat_pair(0, 0, &dst.t, &dst2.t, 3, 4, pair2, 1));
    dt_download(&dst, 0);
    dt_download(&dst2, 0);
    int32_t *o2 = (int32_t *)dst2.host + 5;
    int bad = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 7; j++) {
            int32_t want1 = j < 4 ? ((int32_t *)b.host)[2 + dt_index(&b.t, i * 4 + j)]
                                  : j < 6 ? ((int32_t *)a.host)[dt_index(&a.t, i * 2 + j - 4)]
                                          : ((int32_t *)c.host)[dt_index(&c.t, i)];
            int32_t want2 = ((int32_t *)e.host)[dt_index(&e.t, i * 7 + j)];
            bad += o[i * 7 + j] != want1 || o2[i * 7 + j] != want2;
        }
    CHECK(!bad);
    CHECK(((int32_t *)dst2.host)[0] == 0);
    CHECK_STATUS(tocl_shape_cat_pair(0, 0, &dst.t, &dst2.t, 0, 4, pair2, 1), TOCL_E_INVALID);
    CHECK_STATUS(tocl_shape_cat_pair(0, 0, &dst.t, &dst2.t, 4, 4, pair2, 1), TOCL_E_INVALID);
    CHECK_STATUS(tocl_shape_cat_pair(0, 0, &dst.t, NULL, 3, 4, pair2, 1), TOCL_E_INVALID);
    tocl_tensor other = dst2.t;
    other.strides[0] = 8; /* another layout than dst's */
    CHECK_STATUS(tocl_shape_cat_pair(0, 0, &dst.t, &other, 3, 4, pair2, 1), TOCL_E_INVALID);
    CHECK(strstr(tocl_last_error(), "differ"));
    dt_free(&e);
    dt_free(&dst2);
    for (int k = 0; k < 3; k++)
        dt_free(srcs[k]);
    dt_free(&dst);
}

/* A 3-element int64 index on device 0; idx3_set writes and uploads values. */
static void idx3_set(dev_tensor *idx, const int64_t v[3]) {
    memcpy(dt_elems(idx), v, 3 * sizeof *v);
    dt_upload(idx, 0);
}

static void idx3_make(dev_tensor *idx, const int64_t v[3]) {
    int64_t sz[1] = {3}, st[1] = {1};
    CHECK(dt_make(idx, 0, TOCL_I64, 1, sz, st, 3, 0));
    idx3_set(idx, v);
}

/* A captured bounds check: replays read it back without waiting, and a bad
 * index fails the next synchronization, once; 300 replays without one keep
 * at most the pending cap (deferred.c) and still report. */
static void test_replayed_bounds_check(void) {
    dev_tensor idx;
    int64_t good[3] = {0, 9, 4}, bad[3] = {0, 10, 4};
    idx3_make(&idx, good);
    tocl_graph *g = NULL;
    const char *why = "unset";
    int64_t mn = 0, mx = 0;
    CHECK_OK(tocl_graph_begin(0, &g));
    CHECK_OK(tocl_index_minmax(0, 0, &idx.t, &mn, &mx));
    tocl_graph_check_bounds(0, 9);
    CHECK_OK(tocl_graph_end(g, &why));
    CHECK(why == NULL && mn == 0 && mx == 9);
    CHECK_OK(tocl_graph_replay(g));
    CHECK_OK(tocl_device_sync(0));
    idx3_set(&idx, bad);
    CHECK_OK(tocl_stream_sync(0, 0)); /* the upload alone reports nothing */
    for (int i = 0; i < 300; i++) {
        tocl_status s = tocl_graph_replay(g); /* may report an arrived check */
        CHECK(s == TOCL_OK || (s == TOCL_E_INVALID && strstr(tocl_last_error(), "index 10 is out of bounds")));
        if (s != TOCL_OK)
            break;
    }
    idx3_set(&idx, good);
    tocl_status s = tocl_device_sync(0); /* what is left of those replays */
    CHECK(s == TOCL_OK || (s == TOCL_E_INVALID && strstr(tocl_last_error(), "[0, 9]")));
    CHECK_OK(tocl_device_sync(0)); /* reported once */
    idx3_set(&idx, bad);
    CHECK_OK(tocl_graph_replay(g));
    CHECK_STATUS(tocl_stream_sync(0, 0), TOCL_E_INVALID);
    CHECK(strstr(tocl_last_error(), "index 10 is out of bounds [0, 9]"));
    CHECK_OK(tocl_device_sync(0));
    tocl_graph_destroy(g);
    dt_free(&idx);
}

/* tocl_index_check_later: no host wait; a bad index fails the next
 * synchronization, once. On a stream other than the current one it checks
 * at once (its scratch block belongs to the current stream). */
static void test_check_later(void) {
    dev_tensor idx;
    int64_t good[3] = {0, 9, 4}, bad[3] = {0, 12, 4};
    idx3_make(&idx, good);
    CHECK_OK(tocl_index_check_later(0, 0, &idx.t, 0, 9));
    CHECK_OK(tocl_device_sync(0));
    idx3_set(&idx, bad);
    CHECK_OK(tocl_index_check_later(0, 0, &idx.t, 0, 9)); /* queued, not judged */
    CHECK_STATUS(tocl_device_sync(0), TOCL_E_INVALID);
    CHECK(strstr(tocl_last_error(), "index 12 is out of bounds [0, 9]"));
    CHECK_OK(tocl_device_sync(0)); /* reported once */
    int other = 0;
    CHECK_OK(tocl_stream_from_pool(0, &other));
    CHECK(other != tocl_stream_current(0));
    CHECK_OK(tocl_device_sync(0));
    CHECK_STATUS(tocl_index_check_later(0, other, &idx.t, 0, 9), TOCL_E_INVALID); /* at once */
    CHECK(strstr(tocl_last_error(), "index 12 is out of bounds [0, 9]"));
    CHECK_OK(tocl_index_check_later(0, other, &idx.t, 0, 12));
    CHECK_OK(tocl_device_sync(0));
    dt_free(&idx);
}

int main(void) {
    if (tocl_device_count() < 1) {
        printf("no OpenCL device; skipping\n");
        return 0;
    }
    test_gather();
    test_scatter_add_order();
    test_mask();
    test_remaps();
    test_replayed_bounds_check();
    test_check_later();
    test_cat();
    TOCL_TEST_END();
}
