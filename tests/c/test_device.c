/* test_device.c - device discovery, ordering, properties and index errors. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tocl_test.h"

int main(void) {
    CHECK_OK(tocl_init());
    CHECK_OK(tocl_init()); /* idempotent */
    int n = tocl_device_count();
    /* CMake runs every test with POCL_DEVICES="pthread pthread". */
    CHECK(n >= 1);
    if (getenv("POCL_DEVICES") && !strcmp(getenv("POCL_DEVICES"), "pthread pthread"))
        CHECK(n == 2);

    int last_kind = -1;
    for (int d = 0; d < n; d++) {
        tocl_device_props p;
        CHECK_OK(tocl_device_check(d));
        CHECK_OK(tocl_device_props_get(d, &p));
        CHECK(p.name[0] != '\0');
        CHECK(p.platform_name[0] != '\0');
        CHECK(p.opencl_version[0] != '\0');
        CHECK(p.global_mem_bytes > 0);
        CHECK(p.max_alloc_bytes > 0 && p.max_alloc_bytes <= p.global_mem_bytes);
        CHECK(p.compute_units > 0);
        CHECK(p.max_work_group_size > 0);
        CHECK(p.mem_base_align_bytes >= 4);
        CHECK(p.has_fp64 == 0 || p.has_fp64 == 1);
        CHECK(p.has_fp16 == (strstr(p.extensions, "cl_khr_fp16") != NULL));
        if (strstr(p.extensions, "cl_khr_fp64"))
            CHECK(p.has_fp64 == 1);
        CHECK((int)p.kind >= last_kind); /* GPUs, accelerators, CPUs, others */
        last_kind = (int)p.kind;
        /* The internal view agrees with the public one. */
        CHECK(!strcmp(tocl_dev_props(d)->name, p.name));
        CHECK(tocl_dev_context(d) != NULL);
        CHECK(tocl_dev_id(d) != NULL);
        CHECK(tocl_dev_platform(d) != NULL);
        cl_platform_id plat = NULL;
        CHECK(clGetDeviceInfo(tocl_dev_id(d), CL_DEVICE_PLATFORM, sizeof plat, &plat, NULL) == CL_SUCCESS);
        CHECK(plat == tocl_dev_platform(d));
    }
    /* Devices of one platform share one context. */
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            if (tocl_dev_platform(a) == tocl_dev_platform(b))
                CHECK(tocl_dev_context(a) == tocl_dev_context(b));

    /* Bad indices name the index and the valid range. */
    CHECK_STATUS(tocl_device_check(-1), TOCL_E_NO_DEVICE);
    CHECK(strstr(tocl_last_error(), "-1") != NULL);
    CHECK_STATUS(tocl_device_check(n), TOCL_E_NO_DEVICE);
    char want[64];
    snprintf(want, sizeof want, "0..%d", n - 1);
    CHECK(strstr(tocl_last_error(), want) != NULL);
    char idx[32];
    snprintf(idx, sizeof idx, "index %d", n);
    CHECK(strstr(tocl_last_error(), idx) != NULL);
    tocl_device_props p;
    CHECK_STATUS(tocl_device_props_get(n + 5, &p), TOCL_E_NO_DEVICE);
    CHECK_STATUS(tocl_device_props_get(0, NULL), TOCL_E_INVALID);
    TOCL_TEST_END();
}
