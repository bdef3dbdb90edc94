// A schedule: for one rank, the steps of one collective (send a block to a peer, receive a block
// from a peer, copy locally) with their dependencies. Schedules are pure functions of the op, the
// rank count and the rank; the executor runs them, the tests check them with no network.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace slimeccl {

enum class BufferId : unsigned char { Send, Recv };

struct BufferRange {
  BufferId buffer;
  size_t offset;
  size_t bytes;
};

enum class StepKind : unsigned char { Send, Recv, Copy };

struct Step {
  StepKind kind;
  int peer;           // Send/Recv; -1 for Copy
  BufferRange src;    // Send, Copy
  BufferRange dst;    // Recv, Copy
  int dependsOn = -1; // a Recv step whose data this step forwards; chunk c waits for its chunk c
};

struct Schedule {
  std::vector<Step> steps;
};

std::string describeSchedule(const Schedule& schedule);

}  // namespace slimeccl
