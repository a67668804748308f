/* test_graph.c - graph capture and replay (tocl/graph.h): recorded copies,
 * fills and writes replay onto new data, memory of the capture stays the
 * graph's, and what cannot be replayed is refused with its reason. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tocl/graph.h"
#include "tocl_test.h"

#define N 4096

static void test_replay_copies_fills_writes(void) {
    unsigned char src[N], got[3 * N], konst[256];
    for (int i = 0; i < N; i++)
        src[i] = (unsigned char)(i * 7 + 1);
    for (int i = 0; i < 256; i++)
        konst[i] = (unsigned char)(255 - i);
    tocl_addr a, b;
    CHECK_OK(tocl_mem_alloc(0, N, &a));
    CHECK_OK(tocl_mem_alloc(0, 3 * N, &b));
    CHECK_OK(tocl_copy_h2d(0, 0, a, src, N, 1));

    tocl_graph *g = NULL;
    const char *why = "unset";
    CHECK_OK(tocl_graph_begin(0, &g));
    tocl_graph *g2 = NULL;
    CHECK_STATUS(tocl_graph_begin(0, &g2), TOCL_E_INVALID); /* one capture per thread */
    unsigned char pat = 0x5A;
    CHECK_OK(tocl_mem_fill(0, 0, b, &pat, 1, 3 * N));
    CHECK_OK(tocl_copy_d2d(0, 0, b + N, a, N));
    tocl_addr tmp;
    CHECK_OK(tocl_mem_alloc(0, 256, &tmp));
    CHECK_OK(tocl_copy_h2d(0, 0, tmp, konst, 256, 1));
    CHECK_OK(tocl_copy_d2d(0, 0, b + 2 * N, tmp, 256));
    CHECK_OK(tocl_mem_free(tmp)); /* freed during the capture: still the graph's */
    CHECK_OK(tocl_graph_end(g, &why));
    CHECK(why == NULL);
    CHECK(tocl_graph_commands(g) == 4);

    /* The graph's block is not handed out again while the graph lives. */
    tocl_addr other;
    CHECK_OK(tocl_mem_alloc(0, 256, &other));
    CHECK(other != tmp);
    unsigned char junk[256];
    memset(junk, 0xEE, sizeof junk);
    CHECK_OK(tocl_copy_h2d(0, 0, other, junk, 256, 1));

    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++)
            src[i] = (unsigned char)(i * 13 + round);
        CHECK_OK(tocl_copy_h2d(0, 0, a, src, N, 1));
        memset(got, 0, sizeof got);
        CHECK_OK(tocl_copy_h2d(0, 0, b, got, 3 * N, 1)); /* the replay must rewrite all of it */
        CHECK_OK(tocl_graph_replay(g));
        CHECK_OK(tocl_copy_d2h(0, 0, got, b, 3 * N, 1));
        for (int i = 0; i < N; i++)
            CHECK(got[i] == 0x5A);
        CHECK(memcmp(got + N, src, N) == 0);
        CHECK(memcmp(got + 2 * N, konst, 256) == 0);
        for (int i = 2 * N + 256; i < 3 * N; i++)
            CHECK(got[i] == 0x5A);
    }
    unsigned char back[256];
    CHECK_OK(tocl_copy_d2h(0, 0, back, other, 256, 1));
    CHECK(memcmp(back, junk, 256) == 0); /* untouched by the replays */
    tocl_graph_destroy(g);
    CHECK_OK(tocl_mem_free(other));
    CHECK_OK(tocl_mem_free(a));
    CHECK_OK(tocl_mem_free(b));
}

static void test_refusals(void) {
    tocl_addr a;
    unsigned char buf[64] = {0};
    CHECK_OK(tocl_mem_alloc(0, 64, &a));
    const char *why = NULL;

    tocl_graph *g = NULL;
    CHECK_OK(tocl_graph_begin(0, &g));
    CHECK_OK(tocl_copy_h2d(0, 0, a, buf, 64, 1));
    CHECK_OK(tocl_copy_d2h(0, 0, buf, a, 64, 1)); /* the host reads: runs, but not replayable */
    CHECK_OK(tocl_graph_end(g, &why));
    CHECK(why && strstr(why, "device-to-host"));
    CHECK_STATUS(tocl_graph_replay(g), TOCL_E_INVALID);
    CHECK(strstr(tocl_last_error(), "cannot be replayed"));
    tocl_graph_destroy(g);

    CHECK_OK(tocl_graph_begin(0, &g));
    CHECK_OK(tocl_copy_h2d(0, 2, a, buf, 64, 1)); /* another stream */
    CHECK_OK(tocl_graph_end(g, &why));
    CHECK(why && strstr(why, "another stream"));
    tocl_graph_destroy(g);

    CHECK_OK(tocl_graph_begin(0, &g));
    CHECK_OK(tocl_stream_sync(0, 0));
    CHECK_OK(tocl_graph_end(g, &why));
    CHECK(why && strstr(why, "synchronize"));
    tocl_graph_destroy(g);

    /* Ending twice, replaying NULL, destroying mid-capture. */
    CHECK_STATUS(tocl_graph_end(NULL, &why), TOCL_E_INVALID);
    CHECK_STATUS(tocl_graph_replay(NULL), TOCL_E_INVALID);
    CHECK_OK(tocl_graph_begin(0, &g));
    CHECK_STATUS(tocl_graph_replay(g), TOCL_E_INVALID);
    tocl_graph_destroy(g); /* ends the capture */
    CHECK_OK(tocl_graph_begin(0, &g));
    CHECK_OK(tocl_graph_end(g, &why));
    CHECK(why == NULL && tocl_graph_commands(g) == 0);
    CHECK_OK(tocl_graph_replay(g)); /* nothing to do */
    tocl_graph_destroy(g);
    tocl_graph_destroy(NULL);
    CHECK_OK(tocl_mem_free(a));
}

int main(void) {
    CHECK_OK(tocl_init());
    if (tocl_device_count() < 1) {
        printf("no OpenCL device; skipped\n");
        TOCL_TEST_END();
    }
    test_replay_copies_fills_writes();
    test_refusals();
    CHECK_OK(tocl_device_sync(0));
    TOCL_TEST_END();
}
