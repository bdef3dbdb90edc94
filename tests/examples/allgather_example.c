#include <slimeccl.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  int rank = atoi(getenv("SLIMECCL_RANK")), nranks = atoi(getenv("SLIMECCL_NRANKS"));
  slimecclUniqueId id;
  slimecclComm_t comm;
  /* Under slimeccl-run every rank gets the same id (from SLIMECCL_COMM_ID); rank 0 hosts the root. */
  if (slimecclGetUniqueId(&id) != slimecclSuccess || slimecclCommInitRank(&comm, nranks, id, rank) != slimecclSuccess) {
    fprintf(stderr, "init failed: %s\n", slimecclGetLastError(NULL));
    return 1;
  }
  float mine[4] = {rank, rank, rank, rank};
  float* all = malloc(sizeof(float) * 4 * nranks);
  int wrong = 0;
  slimecclResult_t rc = slimecclAllGather(mine, all, 4, slimecclFloat, comm, NULL);
  if (rc != slimecclSuccess) {
    fprintf(stderr, "%s\n", slimecclGetLastError(comm));
  } else {
    for (int i = 0; i < 4 * nranks; ++i) wrong += all[i] != (float)(i / 4);
    printf("rank %d: %d blocks gathered, %d wrong values\n", rank, nranks, wrong);
  }
  free(all);
  slimecclCommDestroy(comm);
  return rc == slimecclSuccess && wrong == 0 ? 0 : 1;
}
