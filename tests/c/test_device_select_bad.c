/* test_device_select_bad.c - a TORCH_OCL_DEVICES entry matching nothing fails
 * init with a message listing the devices, on every later call too. */
#include <stdlib.h>
#include <string.h>

#include "tocl/device.h"
#include "tocl/mem.h"
#include "tocl_test.h"

int main(void) {
    setenv("TORCH_OCL_DEVICES", "0,no-such-gpu", 1);
    CHECK_STATUS(tocl_init(), TOCL_E_NO_DEVICE);
    CHECK(strstr(tocl_last_error(), "no-such-gpu") != NULL);
    CHECK(strstr(tocl_last_error(), "pthread") != NULL); /* lists what exists */
    CHECK(tocl_device_count() == 0);
    CHECK_STATUS(tocl_device_check(0), TOCL_E_NO_DEVICE);
    CHECK(strstr(tocl_last_error(), "no-such-gpu") != NULL);
    tocl_addr a = 1;
    CHECK_STATUS(tocl_mem_alloc(0, 16, &a), TOCL_E_NO_DEVICE);
    TOCL_TEST_END();
}
