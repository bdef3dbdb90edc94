// The host half of NCCL's device API (nccl_device/core.h and its barrier and all-to-all headers),
// which programs built against NCCL 2.28 link (PyTorch's libtorch_cuda does): slimeccl gives user
// kernels no device-side communicator, so the calls that would build one refuse with a sentence;
// the team calls answer, with a load/store team of this rank alone.
#include "compat/nccl/api.h"
#include "compat/nccl/compat.h"

namespace {

// NCCL's team: the world ranks first + i * stride for i below nRanks, `rank` being this one's index.
struct Team {
  int nRanks, rank, stride;
};

struct Placement {
  int rank = 0, nranks = 0;
};

Placement placementOf(ncclComm_t comm) {
  Placement p;
  if (slimeccl_nccl::usable(comm, "the device API's team calls") != ncclSuccess) return p;
  slimecclCommUserRank(comm->native, &p.rank);
  slimecclCommCount(comm->native, &p.nranks);
  return p;
}

// The refusal names the rank where the comm can say it.
ncclResult_t noDeviceApi(ncclComm_t comm, const char* call) {
  const std::string who = comm != nullptr && comm->native != nullptr ? slimeccl_nccl::rankedCall(comm, call) : call;
  return slimeccl_nccl::refuse(ncclInvalidUsage,
                               who +
                                   ": slimeccl has no device API (no device-side communicator for user kernels); "
                                   "use the host calls");
}

}  // namespace

// Every rank of the comm, in order. An unusable comm gives the empty team.
NCCL_API Team ncclTeamWorld(ncclComm_t comm) {
  const Placement p = placementOf(comm);
  return Team{p.nranks, p.rank, 1};
}

// The ranks whose memory this one's kernels may load and store: itself alone.
NCCL_API Team ncclTeamLsa(ncclComm_t comm) {
  const Placement p = placementOf(comm);
  return Team{p.nranks > 0 ? 1 : 0, 0, 1};
}

// The ranks at this one's place in every load/store team: with teams of one, the world.
NCCL_API Team ncclTeamRail(ncclComm_t comm) { return ncclTeamWorld(comm); }

NCCL_API int ncclTeamRankToWorld(ncclComm_t comm, Team team, int rank) {
  return placementOf(comm).rank + (rank - team.rank) * team.stride;
}

// Its index in this rank's load/store team: 0 for this rank, -1 for any other.
NCCL_API int ncclTeamRankToLsa(ncclComm_t comm, Team team, int rank) {
  return ncclTeamRankToWorld(comm, team, rank) == placementOf(comm).rank ? 0 : -1;
}

NCCL_API ncclResult_t ncclDevCommCreate(ncclComm_t comm, const void*, void*) {
  return noDeviceApi(comm, "ncclDevCommCreate");
}
NCCL_API ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const void*) {
  return noDeviceApi(comm, "ncclDevCommDestroy");
}
NCCL_API ncclResult_t ncclLsaBarrierCreateRequirement(Team, int, void*, void*) {
  return noDeviceApi(nullptr, "ncclLsaBarrierCreateRequirement");
}
NCCL_API ncclResult_t ncclGinBarrierCreateRequirement(ncclComm_t comm, Team, int, void*, void*) {
  return noDeviceApi(comm, "ncclGinBarrierCreateRequirement");
}
NCCL_API ncclResult_t ncclLLA2ACreateRequirement(int, int, void*, void*) {
  return noDeviceApi(nullptr, "ncclLLA2ACreateRequirement");
}
// Slots for an all-to-all of the device API, which no requirement here can use: none.
NCCL_API int ncclLLA2ACalcSlots(int, int) { return 0; }
