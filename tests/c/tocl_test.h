/* tocl_test.h - a tiny assertion harness for the runtime's ctest programs.
 * Each CHECK counts; main ends with TOCL_TEST_END(), which prints
 * "N passed, N failed" and returns non-zero on any failure. */
#ifndef TOCL_TEST_H
#define TOCL_TEST_H

#include <stdio.h>
#include <string.h>

#include "tocl/status.h"

static int tocl_test_passed, tocl_test_failed;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (cond) {                                                            \
            tocl_test_passed++;                                                \
        } else {                                                               \
            tocl_test_failed++;                                                \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                      \
    } while (0)

/* Check a runtime call succeeded; print its message if not. */
#define CHECK_OK(expr)                                                         \
    do {                                                                       \
        tocl_status s_ = (expr);                                               \
        if (s_ == TOCL_OK) {                                                   \
            tocl_test_passed++;                                                \
        } else {                                                               \
            tocl_test_failed++;                                                \
            fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #expr, \
                    tocl_status_name(s_), tocl_last_error());                  \
        }                                                                      \
    } while (0)

/* Check a runtime call failed with a given status. */
#define CHECK_STATUS(expr, want) CHECK((expr) == (want))

#define TOCL_TEST_END()                                                        \
    do {                                                                       \
        printf("%d passed, %d failed\n", tocl_test_passed, tocl_test_failed);  \
        return tocl_test_failed ? 1 : 0;                                       \
    } while (0)

#endif
