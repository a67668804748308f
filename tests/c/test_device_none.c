/* test_device_none.c - no OpenCL platform at all (the ICD loader pointed at an
 * empty vendor directory) is zero devices, with install advice on use. */
#include <stdlib.h>
#include <string.h>

#include "tocl/device.h"
#include "tocl/stream.h"
#include "tocl_test.h"

int main(void) {
    setenv("OCL_ICD_VENDORS", "/nonexistent-tocl-test-dir", 1);
    CHECK_OK(tocl_init());
    CHECK(tocl_device_count() == 0);
    CHECK_STATUS(tocl_device_check(0), TOCL_E_NO_DEVICE);
    CHECK(strstr(tocl_last_error(), "no OpenCL device found") != NULL);
    CHECK(strstr(tocl_last_error(), "apt-get install pocl-opencl-icd") != NULL);
    CHECK_STATUS(tocl_stream_sync(0, 0), TOCL_E_NO_DEVICE);
    TOCL_TEST_END();
}
