// What the PreMulSum tests on the GPU share: each rank's float inputs, its scalar in each round, the
// two operators (a scalar given at once and one read from device memory), and the check of a result
// against every rank's input times its scalar, summed in rank order (as the library sums).
#pragma once

#include <slimeccl.h>

#include <cstring>
#include <vector>

#include "gpu_ranks.h"
#include "rank_check.h"

namespace slimeccl_test {

inline float preMulInput(int rank, size_t i) { return static_cast<float>((i * 7 + rank * 3) % 11) - 5.0f; }
inline float preMulScalar(int rank, int round) {
  return static_cast<float>((rank + 1) * (round + 1)) * (rank % 2 ? -1.0f : 1.0f);
}

// Rank `rank`'s first `elements` inputs, into `send`.
inline void writePreMulInputs(int rank, DeviceBytes& send, size_t elements) {
  std::vector<float> input(elements);
  for (size_t i = 0; i < elements; ++i) input[i] = preMulInput(rank, i);
  send.write(std::vector<char>(reinterpret_cast<const char*>(input.data()),
                               reinterpret_cast<const char*>(input.data()) + elements * 4));
}

// The operators of rank `rank`: round 0's scalar at once (`hostScalar` holds it) and the one read
// from `deviceScalar` when each op runs.
inline void makePreMulSumOps(int rank, slimecclComm_t comm, float* hostScalar, void* deviceScalar,
                             slimecclRedOp_t* immediate, slimecclRedOp_t* onDevice) {
  *hostScalar = preMulScalar(rank, 0);
  RANK_CHECK_SUCCESS(
      slimecclRedOpCreatePreMulSum(immediate, hostScalar, slimecclFloat32, slimecclScalarHostImmediate, comm), comm);
  RANK_CHECK_SUCCESS(slimecclRedOpCreatePreMulSum(onDevice, deviceScalar, slimecclFloat32, slimecclScalarDevice, comm),
                     comm);
}

// `count` results in `recv`, of elements first.., are the sum of every rank's inputs times its
// scalar of `round`.
inline void expectPreMulSum(const DeviceBytes& recv, const char* what, size_t count, size_t first, int round) {
  const std::vector<char> got = recv.read(0, count * 4);
  for (size_t i = 0; i < count; ++i) {
    float want = 0.0f;
    for (int r = 0; r < kRanks; ++r) want += preMulScalar(r, round) * preMulInput(r, first + i);
    float value;
    memcpy(&value, got.data() + i * 4, 4);
    RANK_CHECK(value == want, what, " round ", round, " element ", i, ": ", value, ", want ", want);
  }
}

}  // namespace slimeccl_test
