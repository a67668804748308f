/* test_device_select_name.c - TORCH_OCL_DEVICES by a case-insensitive name part,
 * plus a duplicate index that must not add a device twice. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tocl_test.h"

int main(void) {
    setenv("TORCH_OCL_DEVICES", "PThReAd,0", 1);
    CHECK_OK(tocl_init());
    cl_platform_id plat;
    cl_uint nd = 0;
    CHECK(clGetPlatformIDs(1, &plat, NULL) == CL_SUCCESS);
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 0, NULL, &nd) == CL_SUCCESS);
    CHECK(tocl_device_count() == (int)nd); /* every PoCL pthread device, once */
    for (int d = 0; d < tocl_device_count(); d++)
        CHECK(strstr(tocl_dev_props(d)->name, "pthread") != NULL);
    TOCL_TEST_END();
}
