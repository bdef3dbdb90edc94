// Runs every rank's relay plan (algorithms/relay_plan.h) on host memory as the GPUs would: each
// stream's steps in order, a step once what it waits for has happened, the streams of all ranks
// taking turns in an order drawn from a seed (or one stream as far as it goes before the next). The
// check fails where the ranks wait for each other (no stream can go on while steps are left), where
// a slot is reused before it was freed (a Put finds a reader's flag still set, a Take its writer's
// free flag), where a span leaves its buffer, and where a flag is still set at the end; the data
// checks of the tests catch a Take that overwrites bytes before a Put has read them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/relay_plan.h"
#include "include/slimeccl.h"

namespace slimeccl {

// Where a buffer lies in its rank's memory; in place, two buffers overlap.
struct RelayRegion {
  size_t offset = 0, bytes = 0;
};

struct RelayRankMemory {
  std::vector<char> memory;
  std::vector<RelayRegion> buffers;  // by a span's buffer number; kRelayLanding is sized by the simulator
};

enum class RelayTurns : uint8_t {
  Random,       // a stream drawn from the seed takes each turn
  StreamFirst,  // the first stream that can go goes as far as it can
  StreamLast,   // the same, from the last stream of the last rank
  OneQueue,     // each rank's streams share one hardware queue: its steps in the order queued
};

struct RelayCheck {
  bool ok = true;
  std::string error;
};

// plans[r] is rank r's plan; ranks[r] its memory. Avg reduces as a sum divided by the rank count.
RelayCheck simulateRelay(const std::vector<RelayPlan>& plans, std::vector<RelayRankMemory>& ranks, size_t slotBytes,
                         slimecclDataType_t type, slimecclRedOp_t op, RelayTurns turns, uint64_t seed);

}  // namespace slimeccl
