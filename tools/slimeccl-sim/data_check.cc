#include "tools/slimeccl-sim/data_check.h"

#include <fmt/format.h>

#include <cstring>

#include "tools/slimeccl-sim/reference_data.h"

namespace slimeccl::sim {

size_t dataCheckBytes(const SimCall& call) {
  size_t bytes = 0;
  for (int rank = 0; rank < call.nranks; ++rank) {
    const RankBufferBytes sizes = bufferBytes(call, rank);
    bytes += sizes.send + sizes.recv;
  }
  return bytes;
}

DataCheck checkData(const SimCall& call, const std::vector<Schedule>& schedules) {
  const ReferenceData reference(call);
  std::vector<RankBuffers> buffers(static_cast<size_t>(call.nranks));
  for (int rank = 0; rank < call.nranks; ++rank) {
    RankBuffers& rankBuffers = buffers[static_cast<size_t>(rank)];
    rankBuffers.send = reference.input(rank);
    // Starts as the complement of the expected bytes, so any element the call leaves unwritten is wrong.
    rankBuffers.recv = reference.expected(rank);
    for (char& byte : rankBuffers.recv) byte = static_cast<char>(~byte);
  }
  DataCheck check;
  check.simulation = simulate(schedules, buffers, SimulationOptions{call.type, call.op});
  if (!check.simulation.ok) return check;
  const size_t elementSize = typeSize(call.type);
  for (int rank = 0; rank < call.nranks; ++rank) {
    const std::vector<char> expected = reference.expected(rank);
    const std::vector<char>& actual = buffers[static_cast<size_t>(rank)].recv;
    for (size_t offset = 0; offset < expected.size(); offset += elementSize) {
      if (std::memcmp(&actual[offset], &expected[offset], elementSize) == 0) continue;
      if (check.wrongElements++ == 0) check.firstWrong = fmt::format("rank {} element {}", rank, offset / elementSize);
    }
  }
  return check;
}

}  // namespace slimeccl::sim
