#include "soak_rank.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "byte_pattern.h"

namespace slimeccl_soak {
namespace {

using Bytes = std::vector<unsigned char>;

size_t typeBytes(slimecclDataType_t type) {
  static const size_t kBytes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
  return kBytes[type];
}

const char* typeName(slimecclDataType_t type) {
  static const char* kNames[] = {"int8",   "uint8", "int32", "uint32", "int64",
                                 "uint64", "half",  "float", "double", "bfloat16"};
  return kNames[type];
}

// A buffer of `bytes` bytes followed by guard bytes; never empty, so its address is never NULL.
Bytes guardedBuffer(size_t bytes) {
  Bytes buf(bytes + kGuardBytes, 0xab);
  fillGuard(buf.data() + bytes);
  return buf;
}

class RankRunner {
 public:
  RankRunner(const Plan& plan, int worldRank, uint64_t seed)
      : plan_(plan), me_(worldRank), comms_(plan.slots.size(), nullptr), order_(seed * 1000003 + worldRank) {}

  RankResult run(int nranks, const slimecclUniqueId& id) {
    if (!called(slimecclCommInitRank(&comms_[0], nranks, id, me_), nullptr, "slimecclCommInitRank")) return result_;
    for (op_ = 0; op_ < plan_.ops.size(); ++op_) {
      const Op& op = plan_.ops[op_];
      int rank = rankIn(op.slot);
      if (rank < 0) continue;
      ++result_.opsRun;
      bool ok = op.kind == OpKind::AllGather  ? allGather(op, rank)
                : op.kind == OpKind::P2PGroup ? group(op, rank)
                : op.kind == OpKind::Split    ? split(op, rank)
                                              : destroy(op.slot);
      if (!ok) return result_;
    }
    op_ = plan_.ops.size();
    result_.passed = destroy(0);
    return result_;
  }

 private:
  int rankIn(int slot) const {
    const Members& m = plan_.slots[slot];
    auto it = std::find(m.begin(), m.end(), me_);
    return it == m.end() ? -1 : static_cast<int>(it - m.begin());
  }

  void report(const std::string& what) const {
    std::string where = op_ < plan_.ops.size() ? describe(plan_.ops[op_]) : "final teardown";
    fprintf(stderr, "soak rank %d: op %zu (%s): %s\n", me_, op_, where.c_str(), what.c_str());
  }

  std::string describe(const Op& op) const {
    std::string comm =
        "comm slot " + std::to_string(op.slot) + " (" + std::to_string(plan_.slots[op.slot].size()) + " ranks)";
    switch (op.kind) {
      case OpKind::AllGather:
        return "AllGather of " + std::to_string(op.count) + " x " + typeName(op.type) +
               (op.inPlace ? " in place" : "") + " on " + comm;
      case OpKind::P2PGroup:
        return "group of " + std::to_string(op.messages.size()) + " Send/Recv pairs of " + typeName(op.type) + " on " +
               comm;
      case OpKind::Split: return "CommSplit of " + comm;
      case OpKind::Destroy: return "Finalize and Destroy of " + comm;
    }
    return "?";
  }

  bool called(slimecclResult_t rc, slimecclComm_t comm, const char* what) {
    if (rc == slimecclSuccess) return true;
    report(std::string(what) + " returned " + slimecclGetErrorString(rc) + ": " + slimecclGetLastError(comm));
    return false;
  }

  bool checkReceived(const unsigned char* buf, size_t bytes, int sender, uint64_t tag, const std::string& what) {
    std::string diff = comparePattern(buf, bytes, op_, sender, tag);
    if (!diff.empty()) {
      report(what + " from world rank " + std::to_string(sender) + ": " + diff);
      return false;
    }
    if (!guardIntact(buf + bytes)) {
      report(what + " from world rank " + std::to_string(sender) + ": the library wrote past the end of the buffer");
      return false;
    }
    result_.bytesChecked += bytes;
    return true;
  }

  bool allGather(const Op& op, int rank) {
    const Members& members = plan_.slots[op.slot];
    size_t block = op.count * typeBytes(op.type);
    Bytes recv = guardedBuffer(members.size() * block);
    Bytes send(std::max<size_t>(block, 1));
    unsigned char* mine = op.inPlace ? recv.data() + rank * block : send.data();
    fillPattern(mine, block, op_, me_, 0);
    if (!called(slimecclAllGather(mine, recv.data(), op.count, op.type, comms_[op.slot], nullptr), comms_[op.slot],
                "slimecclAllGather"))
      return false;
    for (size_t j = 0; j < members.size(); ++j) {
      std::string diff = comparePattern(recv.data() + j * block, block, op_, members[j], 0);
      if (!diff.empty()) {
        report("block " + std::to_string(j) + " (world rank " + std::to_string(members[j]) + "): " + diff);
        return false;
      }
    }
    if (!guardIntact(recv.data() + members.size() * block)) {
      report("the library wrote past the end of the receive buffer");
      return false;
    }
    if (!op.inPlace && !comparePattern(send.data(), block, op_, me_, 0).empty()) {
      report("the send buffer changed");
      return false;
    }
    result_.bytesChecked += members.size() * block;
    return true;
  }

  struct Call {
    bool send;
    int peer;      // rank in the op's communicator
    size_t index;  // the message in op.messages
  };

  // This rank's Sends and Recvs in a random order of its own, except that calls to one peer in one
  // direction keep the plan's order: that is how the two ends pair their messages.
  std::vector<Call> callOrder(const Op& op, int rank) {
    std::vector<Call> calls;
    for (size_t m = 0; m < op.messages.size(); ++m) {
      if (op.messages[m].src == rank) calls.push_back(Call{true, op.messages[m].dst, m});
      if (op.messages[m].dst == rank) calls.push_back(Call{false, op.messages[m].src, m});
    }
    std::shuffle(calls.begin(), calls.end(), order_);
    std::map<std::pair<bool, int>, std::vector<size_t>> slots;
    for (size_t c = 0; c < calls.size(); ++c) slots[{calls[c].send, calls[c].peer}].push_back(c);
    for (auto& [key, positions] : slots) {
      std::vector<size_t> indices;
      for (size_t c : positions) indices.push_back(calls[c].index);
      std::sort(indices.begin(), indices.end());
      for (size_t k = 0; k < positions.size(); ++k) calls[positions[k]].index = indices[k];
    }
    return calls;
  }

  bool group(const Op& op, int rank) {
    const Members& members = plan_.slots[op.slot];
    slimecclComm_t comm = comms_[op.slot];
    size_t elem = typeBytes(op.type);
    std::vector<Call> calls = callOrder(op, rank);
    std::vector<Bytes> buffers(calls.size());
    for (size_t c = 0; c < calls.size(); ++c) {
      size_t bytes = op.messages[calls[c].index].count * elem;
      buffers[c] = guardedBuffer(bytes);
      if (calls[c].send) fillPattern(buffers[c].data(), bytes, op_, me_, calls[c].index);
    }
    if (!called(slimecclGroupStart(), comm, "slimecclGroupStart")) return false;
    for (size_t c = 0; c < calls.size(); ++c) {
      size_t count = op.messages[calls[c].index].count;
      slimecclResult_t rc = calls[c].send
                                ? slimecclSend(buffers[c].data(), count, op.type, calls[c].peer, comm, nullptr)
                                : slimecclRecv(buffers[c].data(), count, op.type, calls[c].peer, comm, nullptr);
      if (!called(rc, comm, calls[c].send ? "slimecclSend" : "slimecclRecv")) {
        slimecclGroupEnd();
        return false;
      }
    }
    if (!called(slimecclGroupEnd(), comm, "slimecclGroupEnd")) return false;
    for (size_t c = 0; c < calls.size(); ++c) {
      if (calls[c].send) continue;
      size_t bytes = op.messages[calls[c].index].count * elem;
      if (!checkReceived(buffers[c].data(), bytes, members[calls[c].peer], calls[c].index,
                         "message " + std::to_string(calls[c].index)))
        return false;
    }
    return true;
  }

  bool split(const Op& op, int rank) {
    int color = op.colors[rank];
    slimecclComm_t newcomm = nullptr;
    if (!called(slimecclCommSplit(comms_[op.slot], color, op.keys[rank], &newcomm, nullptr), comms_[op.slot],
                "slimecclCommSplit"))
      return false;
    if (color == SLIMECCL_SPLIT_NOCOLOR) {
      if (newcomm == nullptr) return true;
      report("NOCOLOR gave a communicator");
      return false;
    }
    std::set<int> colors(op.colors.begin(), op.colors.end());
    colors.erase(SLIMECCL_SPLIT_NOCOLOR);
    int slot = op.firstNewSlot + static_cast<int>(std::distance(colors.begin(), colors.find(color)));
    comms_[slot] = newcomm;
    int count = -1, userRank = -1;
    if (!called(slimecclCommCount(newcomm, &count), newcomm, "slimecclCommCount") ||
        !called(slimecclCommUserRank(newcomm, &userRank), newcomm, "slimecclCommUserRank"))
      return false;
    if (count != static_cast<int>(plan_.slots[slot].size()) || userRank != rankIn(slot)) {
      report("the new communicator has rank " + std::to_string(userRank) + " of " + std::to_string(count) +
             ", expected rank " + std::to_string(rankIn(slot)) + " of " + std::to_string(plan_.slots[slot].size()));
      return false;
    }
    return true;
  }

  bool destroy(int slot) {
    slimecclComm_t comm = comms_[slot];
    comms_[slot] = nullptr;
    return called(slimecclCommFinalize(comm), comm, "slimecclCommFinalize") &&
           called(slimecclCommDestroy(comm), nullptr, "slimecclCommDestroy");
  }

  const Plan& plan_;
  int me_;
  std::vector<slimecclComm_t> comms_;  // by slot; NULL where this rank is not a member
  std::mt19937_64 order_;
  size_t op_ = 0;
  RankResult result_;
};

}  // namespace

RankResult runRank(const Plan& plan, int worldRank, int nranks, const slimecclUniqueId& id, uint64_t seed) {
  return RankRunner(plan, worldRank, seed).run(nranks, id);
}

}  // namespace slimeccl_soak
