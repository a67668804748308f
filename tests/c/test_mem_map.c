/* test_mem_map.c - a device range mapped as host memory (CPU devices): the
 * map sees queued writes, host writes through it reach the device, an offset
 * range inside a block maps its own bytes, and bad ranges are refused. */
#include <string.h>

#include "internal.h"
#include "tocl_test.h"

static void test_map_round_trip(void) {
    if (!tocl_mem_map_supported(0)) {
        tocl_map m;
        tocl_addr a;
        CHECK_OK(tocl_mem_alloc(0, 64, &a));
        CHECK_STATUS(tocl_mem_map(0, 0, a, 64, &m), TOCL_E_UNSUPPORTED);
        CHECK_OK(tocl_mem_free(a));
        return;
    }
    float host[256];
    for (int i = 0; i < 256; i++)
        host[i] = (float)i;
    tocl_addr a;
    CHECK_OK(tocl_mem_alloc(0, sizeof host, &a));
    CHECK_OK(tocl_copy_h2d(0, 0, a, host, sizeof host, 0)); /* queued, then the map waits for it */
    tocl_map m;
    CHECK_OK(tocl_mem_map(0, 0, a + 16 * sizeof(float), 32 * sizeof(float), &m));
    float *p = (float *)m.host;
    CHECK(p[0] == 16.0f && p[31] == 47.0f);
    for (int i = 0; i < 32; i++)
        p[i] = -p[i];
    CHECK_OK(tocl_mem_unmap(&m));
    CHECK(m.buf == NULL);
    CHECK_OK(tocl_mem_unmap(&m)); /* twice is fine */
    float back[256];
    CHECK_OK(tocl_copy_d2h(0, 0, back, a, sizeof back, 1));
    CHECK(back[15] == 15.0f && back[16] == -16.0f && back[47] == -47.0f && back[48] == 48.0f);
    CHECK_STATUS(tocl_mem_map(0, 0, a, 1 << 20, &m), TOCL_E_INVALID); /* past the block */
    CHECK_STATUS(tocl_mem_map(0, 0, 12345, 4, &m), TOCL_E_INVALID);   /* not an address */
    CHECK_STATUS(tocl_mem_map(0, 0, a, 4, NULL), TOCL_E_INVALID);
    CHECK_OK(tocl_mem_free(a));
}

int main(void) {
    CHECK_OK(tocl_init());
    if (tocl_device_count() < 1) {
        printf("no OpenCL device; skipped\n");
        TOCL_TEST_END();
    }
    test_map_round_trip();
    TOCL_TEST_END();
}
