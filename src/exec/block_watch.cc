#include "src/exec/block_watch.h"

#include <algorithm>

namespace slimeccl {

template <typename Fn>
void BlockWatch::forEachBlock(const BufferRange& range, Fn fn) const {
  if (range.buffer != BufferId::Recv || range.bytes == 0 || blockBytes_ == 0) return;
  const size_t end = range.offset + range.bytes;
  for (size_t block = range.offset / blockBytes_; block < expected_.size() && block * blockBytes_ < end; ++block) {
    const size_t from = std::max(range.offset, block * blockBytes_);
    const size_t to = std::min(end, (block + 1) * blockBytes_);
    fn(block, to - from);
  }
}

BlockWatch::BlockWatch(const Schedule& schedule, int nblocks, size_t blockBytes, BlockListener* listener)
    : blockBytes_(blockBytes), listener_(listener), expected_(nblocks, 0), written_(nblocks, 0) {
  // AllGather schedules write their output with receives and copies only.
  for (const Step& step : schedule.steps)
    if (step.kind == StepKind::Recv || step.kind == StepKind::Copy)
      forEachBlock(step.dst, [&](size_t block, size_t bytes) { expected_[block] += bytes; });
}

void BlockWatch::start() {
  for (size_t block = 0; block < expected_.size(); ++block)
    if (expected_[block] == 0) listener_->blockLanded(static_cast<int>(block));
}

void BlockWatch::wrote(const BufferRange& range) {
  forEachBlock(range, [&](size_t block, size_t bytes) {
    written_[block] += bytes;
    if (written_[block] == expected_[block]) listener_->blockLanded(static_cast<int>(block));
  });
}

}  // namespace slimeccl
