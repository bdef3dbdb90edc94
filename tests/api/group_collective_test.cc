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
  run_ranks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = comm_size(comm);
    const int right = (rank + 1) % nranks;
    const int left = (rank + nranks - 1) % nranks;
    constexpr size_t kMessageBytes = (size_t{1} << 20) + 5;
    AllGatherBuffers out_of_place(rank, nranks, 4099, slimecclFloat32, false, 1);
    AllGatherBuffers in_place(rank, nranks, 13, slimecclFloat64, true, 2);
    GuardedBuffer outgoing = outgoing_message(rank, right, 0, kMessageBytes);
    GuardedBuffer incoming(kMessageBytes);

    // The receive comes first and the send last, so a group that ran calls in order would stall.
    RANK_CHECK_SUCCESS(slimecclGroupStart(), nullptr);
    RANK_CHECK_SUCCESS(slimecclRecv(incoming.data(), kMessageBytes, slimecclUint8, left, comm, nullptr), comm);
    RANK_CHECK_SUCCESS(slimecclAllGather(out_of_place.sendbuff(), out_of_place.recvbuff(), out_of_place.count(),
                                         out_of_place.datatype(), comm, nullptr),
                       comm);
    RANK_CHECK_SUCCESS(slimecclAllGather(in_place.sendbuff(), in_place.recvbuff(), in_place.count(),
                                         in_place.datatype(), comm, nullptr),
                       comm);
    RANK_CHECK_SUCCESS(slimecclSend(outgoing.data(), kMessageBytes, slimecclUint8, right, comm, nullptr), comm);
    RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);

    with_context(out_of_place.describe(), [&] { out_of_place.verify(); });
    with_context(in_place.describe(), [&] { in_place.verify(); });
    verify_message(incoming, left, rank, 0);
  });
}

INSTANTIATE_TEST_SUITE_P(Launches, GroupWithCollectives,
                         ::testing::ValuesIn(launch_cases({Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads},
                                                          {2, 5})),
                         launch_case_name);

}  // namespace
}  // namespace slimeccl_test
