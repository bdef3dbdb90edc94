// Collectives and point-to-point calls together in one group.
#include <gtest/gtest.h>

#include "allgather_buffers.h"
#include "harness.h"
#include "launch_case.h"
#include "p2p_messages.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

class GroupWithCollectives : public ::testing::TestWithParam<LaunchCase> {};

TEST_P(GroupWithCollectives, AllGathersAndSendRecvInOneGroup) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = commSize(comm);
    const int right = (rank + 1) % nranks;
    const int left = (rank + nranks - 1) % nranks;
    constexpr size_t kMessageBytes = (size_t{1} << 20) + 5;
    AllGatherBuffers outOfPlace(rank, nranks, 4099, slimecclFloat32, false, 1);
    AllGatherBuffers inPlace(rank, nranks, 13, slimecclFloat64, true, 2);
    GuardedBuffer outgoing = outgoingMessage(rank, right, 0, kMessageBytes);
    GuardedBuffer incoming(kMessageBytes);

    // The receive comes first and the send last, so a group that ran calls in order would stall.
    RANK_CHECK_SUCCESS(slimecclGroupStart(), nullptr);
    RANK_CHECK_SUCCESS(slimecclRecv(incoming.data(), kMessageBytes, slimecclUint8, left, comm, nullptr), comm);
    RANK_CHECK_SUCCESS(slimecclAllGather(outOfPlace.sendbuff(), outOfPlace.recvbuff(), outOfPlace.count(),
                                         outOfPlace.datatype(), comm, nullptr),
                       comm);
    RANK_CHECK_SUCCESS(
        slimecclAllGather(inPlace.sendbuff(), inPlace.recvbuff(), inPlace.count(), inPlace.datatype(), comm, nullptr),
        comm);
    RANK_CHECK_SUCCESS(slimecclSend(outgoing.data(), kMessageBytes, slimecclUint8, right, comm, nullptr), comm);
    RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);

    withContext(outOfPlace.describe(), [&] { outOfPlace.verify(); });
    withContext(inPlace.describe(), [&] { inPlace.verify(); });
    verifyMessage(incoming, left, rank, 0);
  });
}

INSTANTIATE_TEST_SUITE_P(Launches, GroupWithCollectives,
                         ::testing::ValuesIn(launchCases({Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads},
                                                         {2, 5})),
                         launchCaseName);

}  // namespace
}  // namespace slimeccl_test
