// Counts the bytes each step writes into an AllGather's receive buffer, block by block, and tells
// the op's listener when a block has received every write its schedule makes to it. Counting
// writes instead of naming steps makes it work for every algorithm: those that receive blocks in
// place, those that stage through scratch and copy at the end (Bruck, hierarchical), and those
// that rewrite the own block with a copy received from a leader.
#pragma once

#include <cstddef>
#include <vector>

#include "algorithms/schedule.h"
#include "src/exec/block_listener.h"

namespace slimeccl {

class BlockWatch {
 public:
  BlockWatch(const Schedule& schedule, int nblocks, size_t blockBytes, BlockListener* listener);
  // Reports the blocks no step writes (an own block in place, empty blocks).
  void start();
  // A receive chunk or a local copy has written `range`.
  void wrote(const BufferRange& range);

 private:
  // Calls fn(block, bytes) for each block `range` touches in the receive buffer.
  template <typename Fn>
  void forEachBlock(const BufferRange& range, Fn fn) const;

  size_t blockBytes_;
  BlockListener* listener_;
  std::vector<size_t> expected_;  // bytes the schedule writes into each block
  std::vector<size_t> written_;
};

}  // namespace slimeccl
