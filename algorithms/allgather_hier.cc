// Hierarchical AllGather (docs/algorithms.md): the ranks of each host send their blocks to the
// host's leader (its lowest rank); the leaders run a ring AllGather of host-sized superblocks;
// each leader then sends the whole result to the other ranks of its host. A host's ranks need not
// be contiguous: leaders keep the blocks packed host after host in scratch, so a superblock is
// one contiguous range, and unpack them into rank order as they arrive.
#include <map>

#include "algorithms/allgather_ring.h"
#include "algorithms/catalog.h"

namespace slimeccl {
namespace {

struct HostLayout {
  std::vector<std::vector<int>> members;  // per host, in order of leaders; ranks ascending, the leader first
  std::vector<int> hostIndex;             // per rank: its host's index in members
  std::vector<int> firstPosition;         // per host: where its superblock starts in the packed layout
  std::vector<int> packedPosition;        // per rank: where its block sits in the packed layout
};

HostLayout layoutOf(const std::vector<int>& hostOf) {
  HostLayout layout;
  const int nranks = static_cast<int>(hostOf.size());
  // Ranks are visited in ascending order, so hosts are numbered in the order of their leaders.
  std::map<int, int> indexOfHost;
  for (int rank = 0; rank < nranks; ++rank) {
    auto [entry, isNew] = indexOfHost.emplace(hostOf[rank], static_cast<int>(layout.members.size()));
    if (isNew) layout.members.emplace_back();
    layout.hostIndex.push_back(entry->second);
    layout.members[entry->second].push_back(rank);
  }
  layout.packedPosition.assign(nranks, 0);
  int position = 0;
  for (const std::vector<int>& host : layout.members) {
    layout.firstPosition.push_back(position);
    for (int rank : host) layout.packedPosition[rank] = position++;
  }
  return layout;
}

class LeaderSchedule {
 public:
  LeaderSchedule(const HostLayout& layout, int rank, size_t blockBytes, bool inPlace)
      : layout_(layout), rank_(rank), host_(layout.hostIndex[rank]), blockBytes_(blockBytes), inPlace_(inPlace) {
    schedule_.scratchBytes = layout.hostIndex.size() * blockBytes;
  }

  Schedule build() {
    const int gathered = gatherHost();
    unpack(host_, gathered);
    ringBetweenLeaders(gathered);
    spreadInHost(static_cast<int>(schedule_.steps.size()) - 1);
    return schedule_;
  }

 private:
  BufferRange packed(int first, int n) const {
    return BufferRange{BufferId::Scratch, static_cast<size_t>(first) * blockBytes_,
                       static_cast<size_t>(n) * blockBytes_};
  }
  BufferRange blocks(int first, int n) const {
    return BufferRange{BufferId::Recv, static_cast<size_t>(first) * blockBytes_, static_cast<size_t>(n) * blockBytes_};
  }
  BufferRange superblock(int host) const {
    return packed(layout_.firstPosition[host], static_cast<int>(layout_.members[host].size()));
  }
  int add(const Step& step) {
    schedule_.steps.push_back(step);
    return static_cast<int>(schedule_.steps.size()) - 1;
  }

  // Packs the host's blocks into its superblock. Each receive waits for the previous one (the
  // first for the own copy), so the returned step completes only when the superblock is whole.
  int gatherHost() {
    const BufferRange own = inPlace_ ? blocks(rank_, 1) : BufferRange{BufferId::Send, 0, blockBytes_};
    int gathered = add(Step{StepKind::Copy, -1, own, packed(layout_.packedPosition[rank_], 1)});
    for (int member : layout_.members[host_])
      if (member != rank_)
        gathered = add(Step{StepKind::Recv, member, {}, packed(layout_.packedPosition[member], 1), gathered});
    return gathered;
  }

  // Step s sends superblock (host - s) to the next leader and receives superblock (host - s - 1)
  // from the previous one, which the next step forwards chunk by chunk.
  void ringBetweenLeaders(int gathered) {
    const int hosts = static_cast<int>(layout_.members.size());
    const int next = layout_.members[(host_ + 1) % hosts][0];
    const int prev = layout_.members[(host_ - 1 + hosts) % hosts][0];
    int previousRecv = -1;
    for (int step = 0; step < hosts - 1; ++step) {
      const int sendHost = (host_ - step + hosts) % hosts, recvHost = (host_ - step - 1 + hosts) % hosts;
      add(Step{StepKind::Send, next, superblock(sendHost), {}, step == 0 ? gathered : previousRecv});
      // The first receive waits for the gather too: forwarded superblocks then never become ready
      // to go to the next leader before the host's own superblock does.
      previousRecv = add(Step{StepKind::Recv, prev, {}, superblock(recvHost), step == 0 ? gathered : -1});
      unpack(recvHost, previousRecv);
    }
  }

  // Copies a superblock into rank order, one copy per run of consecutive ranks. Local steps run
  // in list order, so the last copy of all completes only after every superblock has arrived.
  void unpack(int host, int arrived) {
    const std::vector<int>& ranks = layout_.members[host];
    for (size_t first = 0; first < ranks.size();) {
      size_t end = first + 1;
      while (end < ranks.size() && ranks[end] == ranks[end - 1] + 1) ++end;
      const int n = static_cast<int>(end - first);
      add(Step{StepKind::Copy, -1, packed(layout_.firstPosition[host] + static_cast<int>(first), n),
               blocks(ranks[first], n), first == 0 ? arrived : -1});
      first = end;
    }
  }

  void spreadInHost(int unpacked) {
    const int nranks = static_cast<int>(layout_.hostIndex.size());
    for (int member : layout_.members[host_])
      if (member != rank_) add(Step{StepKind::Send, member, blocks(0, nranks), {}, unpacked});
  }

  const HostLayout& layout_;
  const int rank_, host_;
  const size_t blockBytes_;
  const bool inPlace_;
  Schedule schedule_;
};

Schedule memberSchedule(int nranks, int rank, int leader, size_t blockBytes, bool inPlace) {
  Schedule s;
  const BufferRange own = inPlace ? BufferRange{BufferId::Recv, static_cast<size_t>(rank) * blockBytes, blockBytes}
                                  : BufferRange{BufferId::Send, 0, blockBytes};
  const BufferRange result{BufferId::Recv, 0, static_cast<size_t>(nranks) * blockBytes};
  s.steps.push_back(Step{StepKind::Send, leader, own, {}});
  // In place the result overwrites the own block, which the send may still be reading.
  s.steps.push_back(Step{StepKind::Recv, leader, {}, result, inPlace ? 0 : -1});
  return s;
}

}  // namespace

Schedule allgatherHierarchical(const ScheduleRequest& r) {
  const size_t blockBytes = r.count * r.typeBytes;
  if (blockBytes == 0) return Schedule{};
  const TopologySummary* topology = r.topology;
  if (topology == nullptr || topology->singleHost() || static_cast<int>(topology->hostOf.size()) != r.nranks)
    return allgatherRing(r.nranks, r.rank, blockBytes, r.inPlace);
  const HostLayout layout = layoutOf(topology->hostOf);
  const int leader = layout.members[layout.hostIndex[r.rank]][0];
  if (r.rank != leader) return memberSchedule(r.nranks, r.rank, leader, blockBytes, r.inPlace);
  return LeaderSchedule(layout, r.rank, blockBytes, r.inPlace).build();
}

}  // namespace slimeccl
