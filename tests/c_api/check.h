/* The C tests' assertion: CHECK(cond) counts the check and, when cond is false, prints the place
 * and counts a failure; a test's main returns g_failures != 0. Included by one C file each. */
#ifndef TSR_TESTS_C_API_CHECK_H_
#define TSR_TESTS_C_API_CHECK_H_

#include <stdio.h>

static int g_checks, g_failures;

#define CHECK(cond)                                                              \
  do {                                                                           \
    ++g_checks;                                                                  \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
      ++g_failures;                                                              \
    }                                                                            \
  } while (0)

#endif
