/* test_stream.c - streams: current stream per thread, pool, ordering, query,
 * and events: record/block/query/sync/elapsed time across streams and devices. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tocl_test.h"

#define BIG ((size_t)64 << 20) /* a fill this size takes milliseconds on PoCL */

static void *other_thread(void *arg) {
    int *seen = arg;
    *seen = tocl_stream_current(0); /* a new thread starts on the default stream */
    return NULL;
}

static int all_equal(const unsigned char *p, size_t n, unsigned char v) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

int main(void) {
    CHECK_OK(tocl_init());
    int n = tocl_device_count();
    CHECK(n >= 1);

    /* Current stream: per thread, default 0. */
    CHECK(tocl_stream_current(0) == 0);
    CHECK_OK(tocl_stream_set_current(0, 3));
    CHECK(tocl_stream_current(0) == 3);
    int seen = -1;
    pthread_t t;
    pthread_create(&t, NULL, other_thread, &seen);
    pthread_join(t, NULL);
    CHECK(seen == 0);
    CHECK_OK(tocl_stream_set_current(0, 0));
    CHECK_STATUS(tocl_stream_set_current(0, TOCL_MAX_STREAMS), TOCL_E_INVALID);
    CHECK_STATUS(tocl_stream_set_current(0, -1), TOCL_E_INVALID);
    CHECK_STATUS(tocl_stream_set_current(n, 0), TOCL_E_NO_DEVICE);

    /* Pool: round robin over 1..MAX-1, never the default stream. */
    int first, s;
    CHECK_OK(tocl_stream_from_pool(0, &first));
    int ok = 1;
    for (int i = 1; i < 2 * TOCL_MAX_STREAMS; i++) {
        CHECK_OK(tocl_stream_from_pool(0, &s));
        ok &= s >= 1 && s < TOCL_MAX_STREAMS && s == 1 + (first - 1 + i) % (TOCL_MAX_STREAMS - 1);
    }
    CHECK(ok);

    cl_command_queue q1, q1b, q2;
    CHECK_OK(tocl_queue_get(0, 1, &q1));
    CHECK_OK(tocl_queue_get(0, 1, &q1b));
    CHECK_OK(tocl_queue_get(0, 2, &q2));
    CHECK(q1 == q1b && q1 != q2);
    cl_command_queue_properties props = 0;
    CHECK(clGetCommandQueueInfo(q1, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL) == CL_SUCCESS);
    CHECK((props & CL_QUEUE_PROFILING_ENABLE) != 0);
    CHECK((props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) == 0);

    /* Never-used streams are trivially done. */
    int done = 0;
    CHECK_OK(tocl_stream_query(0, 7, &done));
    CHECK(done == 1);
    CHECK_OK(tocl_stream_sync(0, 9));

    /* In-order: fill then copy on one stream sees the fill. */
    unsigned char *host = malloc(BIG);
    tocl_addr a, b;
    CHECK_OK(tocl_mem_alloc(0, BIG, &a));
    CHECK_OK(tocl_mem_alloc(0, BIG, &b));
    unsigned char v = 7;
    CHECK_OK(tocl_mem_fill(0, 1, a, &v, 1, BIG));
    CHECK_OK(tocl_copy_d2d(0, 1, b, a, BIG));
    CHECK_OK(tocl_stream_flush(0, 1));
    CHECK_OK(tocl_stream_sync(0, 1));
    CHECK_OK(tocl_stream_query(0, 1, &done));
    CHECK(done == 1);
    CHECK_OK(tocl_copy_d2h(0, 1, host, b, BIG, 1));
    CHECK(all_equal(host, BIG, 7));

    /* Events across streams: stream 2 waits for stream 1's fill. */
    tocl_event *e0, *e1, *never;
    CHECK_OK(tocl_event_create(&e0));
    CHECK_OK(tocl_event_create(&e1));
    CHECK_OK(tocl_event_create(&never));
    CHECK(tocl_event_device(e0) == -1);
    CHECK_OK(tocl_event_query(never, &done));
    CHECK(done == 1); /* never recorded: complete */
    CHECK_OK(tocl_event_sync(never));
    CHECK_OK(tocl_event_block(never, 0, 2));
    double ms = -1;
    CHECK_STATUS(tocl_event_elapsed_ms(never, e1, &ms), TOCL_E_INVALID);

    CHECK_OK(tocl_event_record(e0, 0, 1));
    v = 9;
    for (int i = 0; i < 4; i++)
        CHECK_OK(tocl_mem_fill(0, 1, a, &v, 1, BIG));
    CHECK_OK(tocl_event_record(e1, 0, 1));
    CHECK(tocl_event_device(e1) == 0);
    CHECK_OK(tocl_event_block(e1, 0, 2));
    CHECK_OK(tocl_copy_d2d(0, 2, b, a, BIG));
    CHECK_OK(tocl_copy_d2h(0, 2, host, b, BIG, 1)); /* blocking: waits for stream 2 only */
    CHECK(all_equal(host, BIG, 9));
    CHECK_OK(tocl_event_query(e1, &done));
    CHECK(done == 1);
    CHECK_OK(tocl_event_sync(e0));
    CHECK_OK(tocl_event_elapsed_ms(e0, e1, &ms));
    CHECK(ms > 0.0 && ms < 60000.0); /* four 64 MiB fills take some time */
    printf("four 64 MiB fills: %.3f ms\n", ms);

    /* Query without waiting, then sync. Re-recording replaces the marker. */
    for (int i = 0; i < 4; i++)
        CHECK_OK(tocl_mem_fill(0, 3, a, &v, 1, BIG));
    CHECK_OK(tocl_event_record(e0, 0, 3));
    CHECK_OK(tocl_event_query(e0, &done));
    CHECK(done == 0 || done == 1);
    CHECK_OK(tocl_event_sync(e0));
    CHECK_OK(tocl_event_query(e0, &done));
    CHECK(done == 1);

    /* An incomplete end event is refused, not waited for. */
    for (int i = 0; i < 8; i++)
        CHECK_OK(tocl_mem_fill(0, 4, a, &v, 1, BIG));
    CHECK_OK(tocl_event_record(e1, 0, 4));
    CHECK_OK(tocl_event_query(e1, &done));
    if (!done)
        CHECK_STATUS(tocl_event_elapsed_ms(e0, e1, &ms), TOCL_E_INVALID);
    CHECK_OK(tocl_device_sync(0));
    CHECK_OK(tocl_event_query(e1, &done));
    CHECK(done == 1);

    /* An event on device 1 blocks a stream of device 0 (same context). */
    if (n >= 2) {
        tocl_addr c;
        CHECK_OK(tocl_mem_alloc(1, BIG, &c));
        v = 5;
        CHECK_OK(tocl_mem_fill(1, 0, c, &v, 1, BIG));
        CHECK_OK(tocl_event_record(e1, 1, 0));
        CHECK(tocl_event_device(e1) == 1);
        CHECK_OK(tocl_event_block(e1, 0, 5));
        CHECK_OK(tocl_copy_d2d(0, 5, a, c, BIG));
        CHECK_OK(tocl_copy_d2h(0, 5, host, a, BIG, 1));
        CHECK(all_equal(host, BIG, 5));
        CHECK_OK(tocl_event_record(e0, 1, 1));
        CHECK_OK(tocl_event_sync(e0));
        CHECK_OK(tocl_event_sync(e1));
        CHECK_OK(tocl_event_elapsed_ms(e1, e0, &ms)); /* same platform: one clock */
        CHECK_OK(tocl_device_sync(1));
        CHECK_OK(tocl_mem_free(c));
    }

    tocl_event_destroy(e0);
    tocl_event_destroy(e1);
    tocl_event_destroy(never);
    tocl_event_destroy(NULL);
    CHECK_OK(tocl_device_sync(0));
    CHECK_OK(tocl_mem_free(a));
    CHECK_OK(tocl_mem_free(b));
    free(host);
    TOCL_TEST_END();
}
