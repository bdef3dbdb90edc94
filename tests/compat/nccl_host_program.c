/* A program written for NCCL (nccl.h, libnccl.so.2) on host memory, as slimeccl's libnccl serves
 * it: every call with checked data, on the ranks slimeccl-run starts (SLIMECCL_RANK,
 * SLIMECCL_NRANKS). Prints "rank R: N ranks, every check passed" or the failed check. */
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"

enum { kCount = 1000 };

static float value(int r, int i) { return (float)(r * 10000 + i); }

/* The host half of NCCL's device API, as nccl_device/core.h declares it (not part of nccl.h). */
typedef struct {
  int nRanks, rank, stride;
} Team;
Team ncclTeamWorld(ncclComm_t comm);
Team ncclTeamLsa(ncclComm_t comm);
int ncclTeamRankToWorld(ncclComm_t comm, Team team, int rank);
ncclResult_t ncclDevCommCreate(ncclComm_t comm, const void* requirements, void* devComm);

int main(void) {
  const int rank = atoi(getenv("SLIMECCL_RANK")), n = atoi(getenv("SLIMECCL_NRANKS"));
  int version = 0, got = -1, i, r;
  ncclUniqueId id;
  ncclComm_t comm = NULL, half = NULL, shrunk = NULL;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  float *mine = malloc(sizeof(float) * kCount), *all = malloc(sizeof(float) * kCount * n);
  float *sum = malloc(sizeof(float) * kCount * n), *part = malloc(sizeof(float) * kCount);
  float* two = malloc(sizeof(float) * kCount * n);
  uint8_t fp8[4], fp8all[64];
  void* window = NULL;

  snprintf(check_prefix, sizeof(check_prefix), "rank %d: ", rank);
  CALL(ncclGetVersion(&version));
  CHECK(version == NCCL_VERSION(2, 28, 9), "ncclGetVersion gave %d", version);
  /* Under slimeccl-run every rank gets the same id. */
  CALL(ncclGetUniqueId(&id));
  config.netName = "Socket";
  config.commName = "host program";
  CALL(ncclCommInitRankConfig(&comm, n, id, rank, &config));
  if (comm == NULL) return 1;
  CALL(ncclCommCount(comm, &got));
  CHECK(got == n, "ncclCommCount gave %d", got);
  CALL(ncclCommUserRank(comm, &got));
  CHECK(got == rank, "ncclCommUserRank gave %d", got);

  for (i = 0; i < kCount; ++i) mine[i] = value(rank, i);
  CALL(ncclAllGather(mine, all, kCount, ncclFloat, comm, NULL));
  for (r = 0; r < n; ++r)
    for (i = 0; i < kCount; ++i) CHECK(all[r * kCount + i] == value(r, i), "AllGather block %d element %d", r, i);

  for (i = 0; i < kCount * n; ++i) two[i] = (float)(rank + i);
  CALL(ncclAllReduce(two, sum, kCount * n, ncclFloat, ncclSum, comm, NULL));
  for (i = 0; i < kCount * n; ++i) CHECK(sum[i] == (float)(n * (n - 1) / 2 + n * i), "AllReduce element %d", i);

  CALL(ncclReduceScatter(two, part, kCount, ncclFloat, ncclMax, comm, NULL));
  for (i = 0; i < kCount; ++i) CHECK(part[i] == (float)(n - 1 + rank * kCount + i), "ReduceScatter element %d", i);

  memset(sum, 0, sizeof(float) * kCount);
  CALL(ncclReduce(mine, sum, kCount, ncclFloat, ncclSum, n - 1, comm, NULL));
  if (rank == n - 1)
    for (i = 0; i < kCount; ++i) {
      float want = 0;
      for (r = 0; r < n; ++r) want += value(r, i);
      CHECK(sum[i] == want, "Reduce element %d", i);
    }

  for (i = 0; i < kCount; ++i) part[i] = rank == 1 % n ? value(7, i) : -1.0f;
  CALL(ncclBcast(part, kCount, ncclFloat, 1 % n, comm, NULL));
  for (i = 0; i < kCount; ++i) CHECK(part[i] == value(7, i), "Bcast element %d", i);
  CALL(ncclBroadcast(mine, part, kCount, ncclFloat, 0, comm, NULL));
  for (i = 0; i < kCount; ++i) CHECK(part[i] == value(0, i), "Broadcast element %d", i);

  for (i = 0; i < kCount * n; ++i) two[i] = value(rank, i);
  CALL(ncclAlltoAll(two, all, kCount, ncclFloat, comm, NULL));
  for (r = 0; r < n; ++r)
    for (i = 0; i < kCount; ++i)
      CHECK(all[r * kCount + i] == value(r, rank * kCount + i), "AlltoAll from %d element %d", r, i);

  memset(all, 0, sizeof(float) * kCount * n);
  CALL(ncclGather(mine, all, kCount, ncclFloat, n - 1, comm, NULL));
  if (rank == n - 1)
    for (r = 0; r < n; ++r)
      for (i = 0; i < kCount; ++i) CHECK(all[r * kCount + i] == value(r, i), "Gather block %d element %d", r, i);
  CALL(ncclScatter(two, part, kCount, ncclFloat, 0, comm, NULL));
  for (i = 0; i < kCount; ++i) CHECK(part[i] == value(0, rank * kCount + i), "Scatter element %d", i);

  /* A ring of Send/Recv in one group. */
  CALL(ncclGroupStart());
  CALL(ncclSend(mine, kCount, ncclFloat, (rank + 1) % n, comm, NULL));
  CALL(ncclRecv(part, kCount, ncclFloat, (rank + n - 1) % n, comm, NULL));
  CALL(ncclGroupEnd());
  for (i = 0; i < kCount; ++i) CHECK(part[i] == value((rank + n - 1) % n, i), "Recv element %d", i);

  /* fp8 moves as bytes; it has no reduction. */
  memset(fp8, rank + 1, sizeof(fp8));
  CALL(ncclAllGather(fp8, fp8all, sizeof(fp8), ncclFloat8e4m3, comm, NULL));
  for (i = 0; i < (int)sizeof(fp8) * n; ++i) CHECK(fp8all[i] == i / (int)sizeof(fp8) + 1, "fp8 AllGather byte %d", i);
  CHECK(ncclAllReduce(fp8, fp8all, sizeof(fp8), ncclFloat8e5m2, ncclSum, comm, NULL) == ncclInvalidArgument,
        "an fp8 AllReduce should be refused");
  CHECK(strstr(ncclGetLastError(comm), "fp8") != NULL, "the refusal names fp8: %s", ncclGetLastError(comm));
  {
    /* Each rank scales its own input by its own scalar. */
    ncclRedOp_t premul;
    float scale = (float)(rank + 1);
    ncclConfig_t raw;
    ncclComm_t never = NULL;
    memset(&raw, 0, sizeof(raw));
    CHECK(ncclRedOpCreatePreMulSum(NULL, &scale, ncclFloat, ncclScalarHostImmediate, comm) == ncclInvalidArgument,
          "a NULL operator pointer should be refused");
    CALL(ncclRedOpCreatePreMulSum(&premul, &scale, ncclFloat, ncclScalarHostImmediate, comm));
    CHECK(premul >= ncclNumOps, "a PreMulSum operator is numbered from ncclNumOps: %d", (int)premul);
    CALL(ncclAllReduce(mine, part, kCount, ncclFloat, premul, comm, NULL));
    for (i = 0; i < kCount; ++i) {
      float want = 0;
      for (r = 0; r < n; ++r) want += (float)(r + 1) * value(r, i);
      CHECK(part[i] == want, "PreMulSum AllReduce element %d: %f, want %f", i, part[i], want);
    }
    CHECK(ncclAllReduce(mine, part, kCount, ncclInt32, premul, comm, NULL) == ncclInvalidArgument,
          "a PreMulSum operator made for floats should be refused with ints");
    CALL(ncclRedOpDestroy(premul, comm));
    CHECK(ncclRedOpDestroy(premul, comm) == ncclInvalidArgument, "a destroyed operator should be refused");
    CHECK(ncclCommInitRankConfig(&never, n, id, rank, &raw) == ncclInvalidArgument,
          "a config not from NCCL_CONFIG_INITIALIZER should be refused");
  }
  {
    char devComm[256];
    Team world = ncclTeamWorld(comm), lsa = ncclTeamLsa(comm);
    CHECK(world.nRanks == n && world.rank == rank && world.stride == 1, "ncclTeamWorld gave %d %d %d", world.nRanks,
          world.rank, world.stride);
    CHECK(lsa.nRanks == 1 && lsa.rank == 0, "ncclTeamLsa gave %d ranks", lsa.nRanks);
    CHECK(ncclTeamRankToWorld(comm, world, n - 1) == n - 1, "ncclTeamRankToWorld of the last rank");
    CHECK(ncclDevCommCreate(comm, NULL, devComm) == ncclInvalidUsage, "ncclDevCommCreate should be refused");
    CHECK(strstr(ncclGetLastError(comm), "no device API") != NULL, "the refusal says why: %s", ncclGetLastError(comm));
    CHECK(strstr(ncclGetLastError(comm), "rank ") != NULL, "the refusal names the rank: %s", ncclGetLastError(comm));
  }

  CALL(ncclCommWindowRegister(comm, mine, sizeof(float) * kCount, (ncclWindow_t*)&window, NCCL_WIN_DEFAULT));
  CALL(ncclCommWindowDeregister(comm, (ncclWindow_t)window));

  /* Two halves by parity, then the comm without its last rank. */
  CALL(ncclCommSplit(comm, rank % 2, rank, &half, NULL));
  if (half != NULL) {
    int size = 0;
    CALL(ncclCommCount(half, &size));
    CHECK(size == (n + 1 - rank % 2) / 2, "split comm of %d ranks", size);
    CALL(ncclAllReduce(mine, part, kCount, ncclFloat, ncclMin, half, NULL));
    for (i = 0; i < kCount; ++i) CHECK(part[i] == value(rank % 2, i), "split AllReduce element %d", i);
    CALL(ncclCommDestroy(half));
  }
  if (n > 1 && rank != n - 1) {
    int last = n - 1, size = 0;
    /* Inside a group the new comm's id could not travel: refused. */
    CALL(ncclGroupStart());
    CHECK(ncclCommShrink(comm, &last, 1, &shrunk, NULL, NCCL_SHRINK_DEFAULT) == ncclInvalidUsage,
          "ncclCommShrink inside a group should be refused");
    CALL(ncclGroupEnd());
    CALL(ncclCommShrink(comm, &last, 1, &shrunk, NULL, NCCL_SHRINK_DEFAULT));
    if (shrunk != NULL) {
      CALL(ncclCommCount(shrunk, &size));
      CHECK(size == n - 1, "shrunk comm of %d ranks", size);
      CALL(ncclAllGather(mine, all, kCount, ncclFloat, shrunk, NULL));
      for (r = 0; r < n - 1; ++r)
        for (i = 0; i < kCount; ++i) CHECK(all[r * kCount + i] == value(r, i), "shrunk AllGather block %d", r);
      CALL(ncclCommDestroy(shrunk));
    }
  }
  /* Every rank meets once more on the whole comm before it goes. */
  CALL(ncclAllReduce(mine, part, kCount, ncclFloat, ncclMax, comm, NULL));
  {
    ncclResult_t async = ncclInternalError;
    CALL(ncclCommGetAsyncError(comm, &async));
    CHECK(async == ncclSuccess, "async error %d", (int)async);
  }
  CALL(ncclCommDestroy(comm));
  if (failures == 0) printf("rank %d: %d ranks, every check passed\n", rank, n);
  free(mine);
  free(all);
  free(sum);
  free(part);
  free(two);
  return failures == 0 ? 0 : 1;
}
