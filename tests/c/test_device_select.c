/* test_device_select.c - TORCH_OCL_DEVICES="1,0" reorders devices by index. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tocl_test.h"

int main(void) {
    /* init is once per process, so this test owns its process. */
    setenv("TORCH_OCL_DEVICES", "1, 0", 1);
    CHECK_OK(tocl_init());
    cl_platform_id plat;
    cl_device_id ids[8];
    cl_uint nd = 0;
    CHECK(clGetPlatformIDs(1, &plat, NULL) == CL_SUCCESS);
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 8, ids, &nd) == CL_SUCCESS);
    if (nd < 2) {
        printf("needs two OpenCL devices (POCL_DEVICES=\"pthread pthread\"); skipped\n");
        TOCL_TEST_END();
    }
    CHECK(tocl_device_count() == 2);
    /* PoCL has one platform of CPUs, so the default order is the platform's. */
    CHECK(tocl_dev_id(0) == ids[1]);
    CHECK(tocl_dev_id(1) == ids[0]);
    CHECK(tocl_dev_context(0) == tocl_dev_context(1));
    TOCL_TEST_END();
}
