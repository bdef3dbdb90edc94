// A schedule: for one rank, the steps of one collective (send a range to a peer, receive a range
// from a peer, possibly reducing it into local data, copy or reduce locally) with their
// dependencies. Schedules are pure functions of the op, the rank count and the rank; the executor
// runs them, and the simulator runs all ranks' schedules in memory with no network.
//
// How the executor runs a schedule (and the simulator mirrors):
//  - Send, Recv and RecvReduce steps are cut into chunks. Chunk c of a step is posted once its
//    dependency is met: chunk c of the dependency step when both steps have the same number of
//    chunks (forwarding as data lands), else the whole dependency step.
//  - Traffic between two ranks in one direction matches in step order.
//  - RecvReduce receives into executor-owned staging, then computes dst = src (op) incoming;
//    src may equal dst. Its chunk counts as complete once reduced.
//  - Copy, Reduce (dst = dst (op) src) and Scale (dst /= nranks, for avg) are local; they run in
//    list order among themselves, each once its dependency step is complete.
//  - Nothing else orders steps: a step that overwrites data another step still reads must name
//    a dependency (directly or through a chain) on that step.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace slimeccl {

enum class BufferId : unsigned char { Send, Recv, Scratch };

struct BufferRange {
  BufferId buffer;
  size_t offset;
  size_t bytes;
};

enum class StepKind : unsigned char { Send, Recv, RecvReduce, Copy, Reduce, Scale };

struct Step {
  StepKind kind;
  int peer = -1;       // Send, Recv, RecvReduce
  BufferRange src{};   // Send: data sent; Copy: from; RecvReduce/Reduce: the local operand
  BufferRange dst{};   // Recv/RecvReduce: where data (or the reduction) lands; Copy/Reduce/Scale: output
  int dependsOn = -1;  // index of an earlier step of this schedule
};

struct Schedule {
  std::vector<Step> steps;
  size_t scratchBytes = 0;  // size of BufferId::Scratch the executor provides
};

std::string describeSchedule(const Schedule& schedule);

}  // namespace slimeccl
