/* test_kernel_source.c - TORCH_OCL_KERNEL_DIR gives exactly the embedded
 * text for every kernel family (its #include lines resolved the same way),
 * and a missing family or header is a clear error. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tocl_test.h"
#include "core/kernel_source.h"

int main(void) {
    DIR *d = opendir(TOCL_TEST_KERNEL_DIR);
    CHECK(d != NULL);
    int families = 0;
    struct dirent *ent;
    while ((ent = readdir(d))) {
        size_t n = strlen(ent->d_name);
        if (n < 4 || strcmp(ent->d_name + n - 3, ".cl"))
            continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(n - 3), ent->d_name);
        const char *embedded = NULL, *disk = NULL;
        unsetenv("TORCH_OCL_KERNEL_DIR");
        CHECK_OK(tocl_kernel_source(name, &embedded));
        setenv("TORCH_OCL_KERNEL_DIR", TOCL_TEST_KERNEL_DIR, 1);
        CHECK_OK(tocl_kernel_source(name, &disk));
        if (strcmp(embedded, disk)) {
            fprintf(stderr, "kernel family %s: the text read from disk differs from the embedded text\n", name);
            return 1;
        }
        CHECK(strstr(disk, "#include \"") == NULL);
        families++;
    }
    closedir(d);
    CHECK(families >= 10);
    const char *src;
    CHECK(tocl_kernel_source("no_such_family", &src) == TOCL_E_IO);
    CHECK(strstr(tocl_last_error(), "no_such_family.cl") != NULL);
    unsetenv("TORCH_OCL_KERNEL_DIR");
    CHECK(tocl_kernel_source("no_such_family", &src) == TOCL_E_INTERNAL);
    printf("test_kernel_source: %d families identical from disk and embedded\n", families);
    return 0;
}
