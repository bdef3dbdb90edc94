/* One thread makes every rank of a comm inside ncclGroupStart/ncclGroupEnd, as nccl-tests -g N
 * does, then drives them all in groups (host memory, NULL stream). Prints "N ranks from one
 * thread: every check passed" or the failed check.
 *   nccl_grouped_init N */
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"

enum { kMaxRanks = 8, kCount = 513 };

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 2;
  ncclUniqueId id;
  ncclComm_t comms[kMaxRanks];
  static float send[kMaxRanks][kCount], gathered[kMaxRanks][kCount * kMaxRanks], summed[kMaxRanks][kCount];
  int r, i, k;
  if (n < 1 || n > kMaxRanks) return 2;
  CALL(ncclGetUniqueId(&id));
  CALL(ncclGroupStart());
  for (r = 0; r < n; ++r) CALL(ncclCommInitRank(&comms[r], n, id, r));
  /* Inside the group the comms are still to be made. */
  {
    int count = 0;
    CHECK(ncclCommCount(comms[0], &count) == ncclInvalidUsage, "a comm is usable before its group ended");
  }
  CALL(ncclGroupEnd());
  for (r = 0; r < n; ++r) {
    int rank = -1;
    CALL(ncclCommUserRank(comms[r], &rank));
    CHECK(rank == r, "comm %d is rank %d", r, rank);
    for (i = 0; i < kCount; ++i) send[r][i] = (float)(r * 1000 + i);
  }
  for (k = 0; k < 3; ++k) {
    CALL(ncclGroupStart());
    for (r = 0; r < n; ++r) {
      CALL(ncclAllGather(send[r], gathered[r], kCount, ncclFloat, comms[r], NULL));
      CALL(ncclAllReduce(send[r], summed[r], kCount, ncclFloat, ncclSum, comms[r], NULL));
    }
    CALL(ncclGroupEnd());
    for (r = 0; r < n; ++r)
      for (i = 0; i < kCount * n; ++i)
        CHECK(gathered[r][i] == (float)((i / kCount) * 1000 + i % kCount), "round %d rank %d element %d", k, r, i);
    for (r = 0; r < n; ++r)
      for (i = 0; i < kCount; ++i)
        CHECK(summed[r][i] == (float)(1000 * n * (n - 1) / 2 + n * i), "round %d rank %d sum %d", k, r, i);
  }
  for (r = 0; r < n; ++r) CALL(ncclCommDestroy(comms[r]));
  /* An init that fails at the group's end: the group says so, and so does the comm. */
  {
    ncclComm_t bad = NULL;
    ncclResult_t async = ncclSuccess;
    int count = 0;
    CALL(ncclGroupStart());
    CALL(ncclCommInitRank(&bad, 0, id, 0));
    CHECK(ncclGroupEnd() == ncclInvalidArgument, "a group whose init failed should end with ncclInvalidArgument");
    CHECK(strstr(ncclGetLastError(NULL), "nranks") != NULL, "the failed init names nranks: %s", ncclGetLastError(NULL));
    CALL(ncclCommGetAsyncError(bad, &async));
    CHECK(async == ncclInvalidArgument, "the failed comm's async error is %d", (int)async);
    CHECK(ncclCommCount(bad, &count) == ncclInvalidArgument, "a failed comm takes no calls");
    CALL(ncclCommDestroy(bad));
  }
  if (failures == 0) printf("%d ranks from one thread: every check passed\n", n);
  return failures == 0 ? 0 : 1;
}
