/* The checks of the programs written for NCCL: CHECK counts a failed condition and prints it after
 * check_prefix (a rank, say); CALL checks that an NCCL call succeeded, with the library's sentence. */
#ifndef SLIMECCL_TESTS_COMPAT_CHECKS_H
#define SLIMECCL_TESTS_COMPAT_CHECKS_H

#include <nccl.h>
#include <stdio.h>

static int failures = 0;
static char check_prefix[32] = "";

#define CHECK(cond, ...)                                 \
  do {                                                   \
    if (!(cond)) {                                       \
      fprintf(stderr, "%scheck failed: ", check_prefix); \
      fprintf(stderr, __VA_ARGS__);                      \
      fprintf(stderr, "\n");                             \
      ++failures;                                        \
    }                                                    \
  } while (0)
#define CALL(call)                                                                                    \
  do {                                                                                                \
    ncclResult_t rc_ = (call);                                                                        \
    CHECK(rc_ == ncclSuccess, "%s: %s (%s)", #call, ncclGetErrorString(rc_), ncclGetLastError(NULL)); \
  } while (0)

#endif
