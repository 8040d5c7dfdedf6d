#ifndef MB_TESTS_CHECK_H
#define MB_TESTS_CHECK_H
/* Minimal C test harness: CHECK(cond, name) counts and prints; main returns
 * check_summary(), which prints "N passed, M failed". */
#include <stdio.h>

static int check_passed, check_failed;

#define CHECK(cond, ...)                                      \
    do {                                                      \
        if (cond) {                                           \
            check_passed++;                                   \
            printf("ok    ");                                 \
        } else {                                              \
            check_failed++;                                   \
            printf("FAIL  %s:%d ", __FILE__, __LINE__);       \
        }                                                     \
        printf(__VA_ARGS__);                                  \
        printf("\n");                                         \
    } while (0)

static int check_summary(void)
{
    printf("%d passed, %d failed\n", check_passed, check_failed);
    return check_failed ? 1 : 0;
}
#endif
