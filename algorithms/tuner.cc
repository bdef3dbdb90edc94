#include "algorithms/tuner.h"

#include <fmt/format.h>

#include <climits>

#include "algorithms/byte_sizes.h"
#include "src/base/error.h"
#include "src/base/util/strings.h"

namespace slimeccl {
namespace {

constexpr size_t kNoLimit = SIZE_MAX;
constexpr size_t kChunk = kDefaultChunkBytes;

const Coll kCollectives[] = {Coll::AllGather, Coll::ReduceScatter, Coll::AllReduce,
                             Coll::Broadcast, Coll::Reduce,        Coll::AlltoAll};

}  // namespace

const char* collKey(Coll coll) {
  switch (coll) {
    case Coll::AllGather: return "allgather";
    case Coll::ReduceScatter: return "reducescatter";
    case Coll::AllReduce: return "allreduce";
    case Coll::Broadcast: return "broadcast";
    case Coll::Reduce: return "reduce";
    case Coll::AlltoAll: return "alltoall";
    default: return "p2p";
  }
}

const std::vector<TunerRow>& defaultTunerTable() {
  // First match wins, one reason per group of rows; the measurements behind each boundary are in
  // docs/tuning.md ("The notes behind the rows").
  static const std::vector<TunerRow> table = {
      // Tiny calls of one host: one publish and one read per rank (shared slots) beat any exchange.
      {Coll::AllGather, 0, 28 * kKiB, 2, 2, TopoClass::SharedSlots, Algo::Direct, kChunk},
      {Coll::AllGather, 0, 192 * kKiB + 1, 3, 3, TopoClass::SharedSlots, Algo::Direct, kChunk},
      {Coll::AllGather, 0, 256 * kKiB + 1, 4, 4, TopoClass::SharedSlots, Algo::Direct, kChunk},
      {Coll::AllGather, 0, 80 * kKiB, 5, 8, TopoClass::SharedSlots, Algo::Direct, kChunk},
      {Coll::AllReduce, 0, 16 * kKiB, 2, 8, TopoClass::SharedSlots, Algo::OneShot, kChunk},
      {Coll::AlltoAll, 0, 16 * kKiB, 2, 8, TopoClass::SharedSlots, Algo::Pairwise, kChunk},
      // Small AllGathers: few messages (log2 N) win; on 2 ranks direct's single exchange from 40 KiB.
      {Coll::AllGather, 40 * kKiB, kNoLimit, 2, 2, TopoClass::SingleHost, Algo::Direct, 1 * kMiB},
      {Coll::AllGather, 0, 64 * kKiB, 2, 4, TopoClass::Any, Algo::HalvingDoubling, kChunk},
      {Coll::AllGather, 0, 8 * kKiB, 5, INT_MAX, TopoClass::SingleHost, Algo::HalvingDoubling, kChunk},
      {Coll::AllGather, 0, 32 * kKiB, 9, INT_MAX, TopoClass::MultiHost, Algo::HalvingDoubling, kChunk},
      // One host: each rank pulls each peer's block once; on 4 ranks hd's two steps lead to 4 MiB.
      {Coll::AllGather, 64 * kKiB, 4 * kMiB, 4, 4, TopoClass::SingleHost, Algo::HalvingDoubling, kChunk},
      {Coll::AllGather, 192 * kKiB, kNoLimit, 3, 4, TopoClass::SingleHost, Algo::Direct, 1 * kMiB},
      {Coll::AllGather, 80 * kKiB, kNoLimit, 5, 8, TopoClass::SingleHost, Algo::Direct, 1 * kMiB},
      {Coll::AllGather, 4 * kMiB, kNoLimit, 9, INT_MAX, TopoClass::SingleHost, Algo::Direct, 1 * kMiB},
      // Several hosts: the hierarchy beyond 8 ranks, all peers at once from 2 MiB, else the ring.
      {Coll::AllGather, 32 * kKiB, 512 * kKiB, 9, INT_MAX, TopoClass::MultiHost, Algo::Hierarchical, kChunk},
      {Coll::AllGather, 2 * kMiB, kNoLimit, 2, 8, TopoClass::MultiHost, Algo::Direct, kChunk},
      {Coll::AllGather, 0, kNoLimit, 1, INT_MAX, TopoClass::Any, Algo::Ring, kChunk},
      // ReduceScatter: recursive halving where it folds no rank in, the ring elsewhere.
      {Coll::ReduceScatter, 0, 2 * kKiB, 5, INT_MAX, TopoClass::SingleHost, Algo::HalvingDoubling, kChunk},
      {Coll::ReduceScatter, 0, 1 * kMiB, 5, 8, TopoClass::SingleHost, Algo::HalvingDoubling, kChunk},
      {Coll::ReduceScatter, 32 * kKiB, kNoLimit, 3, 3, TopoClass::SingleHost, Algo::Ring, kChunk},
      {Coll::ReduceScatter, 0, kNoLimit, 2, 4, TopoClass::SingleHost, Algo::HalvingDoubling, kChunk},
      {Coll::ReduceScatter, 2 * kMiB, 4 * kMiB, 2, 8, TopoClass::MultiHost, Algo::HalvingDoubling, kChunk},
      {Coll::ReduceScatter, 0, kNoLimit, 1, INT_MAX, TopoClass::Any, Algo::Ring, kChunk},
      // AllReduce, one host: recursive doubling for small vectors, then halving-doubling or the ring.
      {Coll::AllReduce, 0, 1 * kMiB, 2, 2, TopoClass::SingleHost, Algo::RecursiveDoubling, kChunk},
      {Coll::AllReduce, 0, 512 * kKiB, 3, 3, TopoClass::SingleHost, Algo::RecursiveDoubling, kChunk},
      {Coll::AllReduce, 0, 16 * kKiB, 4, 4, TopoClass::SingleHost, Algo::RecursiveDoubling, kChunk},
      {Coll::AllReduce, 16 * kKiB, kNoLimit, 4, 4, TopoClass::SingleHost, Algo::HalvingDoubling, kChunk},
      {Coll::AllReduce, 0, 1 * kKiB, 5, INT_MAX, TopoClass::SingleHost, Algo::RecursiveDoubling, kChunk},
      {Coll::AllReduce, 0, 4 * kKiB, 5, INT_MAX, TopoClass::SingleHost, Algo::HalvingDoubling, kChunk},
      {Coll::AllReduce, 16 * kKiB, 32 * kKiB, 5, 8, TopoClass::SingleHost, Algo::RecursiveDoubling, kChunk},
      {Coll::AllReduce, 32 * kKiB, kNoLimit, 5, 8, TopoClass::SingleHost, Algo::HalvingDoubling, kChunk},
      {Coll::AllReduce, 0, 4 * kMiB, 2, INT_MAX, TopoClass::SingleHost, Algo::Ring, kChunk},
      {Coll::AllReduce, 4 * kMiB, kNoLimit, 9, INT_MAX, TopoClass::SingleHost, Algo::HalvingDoubling, kChunk},
      // AllReduce across hosts: rd to 64 KiB, hd beyond; the ring below 1 element a rank and at 1-4 MiB.
      {Coll::AllReduce, 0, 32, 5, 8, TopoClass::MultiHost, Algo::Ring, kChunk},
      {Coll::AllReduce, 1 * kMiB, 4 * kMiB, 2, 8, TopoClass::MultiHost, Algo::Ring, kChunk},
      {Coll::AllReduce, 0, 64 * kKiB, 2, INT_MAX, TopoClass::MultiHost, Algo::RecursiveDoubling, kChunk},
      {Coll::AllReduce, 64 * kKiB, 256 * kKiB, 2, INT_MAX, TopoClass::MultiHost, Algo::Ring, kChunk},
      {Coll::AllReduce, 256 * kKiB, kNoLimit, 2, INT_MAX, TopoClass::MultiHost, Algo::HalvingDoubling, kChunk},
      {Coll::AllReduce, 0, kNoLimit, 1, INT_MAX, TopoClass::Any, Algo::Ring, kChunk},
      // Broadcast: the tree on one host; across hosts the chain's pipeline, the tree at 256 KiB-2 MiB.
      {Coll::Broadcast, 64 * kKiB + 1, 256 * kKiB, 4, 4, TopoClass::SingleHost, Algo::ScatterAllGather, kChunk},
      {Coll::Broadcast, 0, kNoLimit, 1, INT_MAX, TopoClass::SingleHost, Algo::Tree, kChunk},
      {Coll::Broadcast, 256 * kKiB, 2 * kMiB, 1, INT_MAX, TopoClass::MultiHost, Algo::Tree, kChunk},
      {Coll::Broadcast, 0, kNoLimit, 1, INT_MAX, TopoClass::Any, Algo::Chain, kChunk},
      // Reduce: the tree for small vectors, ReduceScatter + gather once they are worth splitting.
      {Coll::Reduce, 256 * kKiB, kNoLimit, 4, 4, TopoClass::SingleHost, Algo::ReduceScatterGather, kChunk},
      {Coll::Reduce, 512 * kKiB, kNoLimit, 2, 2, TopoClass::SingleHost, Algo::ReduceScatterGather, kChunk},
      {Coll::Reduce, 4 * kMiB, kNoLimit, 3, 3, TopoClass::SingleHost, Algo::ReduceScatterGather, kChunk},
      {Coll::Reduce, 1 * kMiB, kNoLimit, 5, 8, TopoClass::SingleHost, Algo::ReduceScatterGather, kChunk},
      {Coll::Reduce, 0, 32 * kMiB, 1, INT_MAX, TopoClass::SingleHost, Algo::Tree, kChunk},
      {Coll::Reduce, 0, 512 * kKiB, 1, INT_MAX, TopoClass::Any, Algo::Tree, kChunk},
      {Coll::Reduce, 0, kNoLimit, 1, INT_MAX, TopoClass::Any, Algo::ReduceScatterGather, kChunk},
      // AlltoAll: Bruck's log2 N steps while blocks are tiny or messages dear, pairwise beyond.
      {Coll::AlltoAll, 0, 1 * kKiB, 2, INT_MAX, TopoClass::SingleHost, Algo::Bruck, kChunk},
      {Coll::AlltoAll, 0, 256 * kKiB, 2, INT_MAX, TopoClass::MultiHost, Algo::Bruck, kChunk},
      {Coll::AlltoAll, 0, kNoLimit, 1, INT_MAX, TopoClass::Any, Algo::Pairwise, kChunk},
  };
  return table;
}

size_t opBytes(Coll coll, size_t count, size_t typeBytes, int nranks) {
  switch (coll) {
    case Coll::AllGather:
    case Coll::ReduceScatter:
    case Coll::AlltoAll: return count * typeBytes * static_cast<size_t>(nranks);
    default: return count * typeBytes;
  }
}

slimecclResult_t AlgoOverrides::parse(const std::string& text, AlgoOverrides* out) {
  out->entries.clear();
  for (const std::string& item : splitList(text, ',')) {
    size_t colon = item.find(':');
    std::string coll = colon == std::string::npos ? "" : item.substr(0, colon);
    std::string algo = colon == std::string::npos ? "" : item.substr(colon + 1);
    const Coll* found = nullptr;
    for (const Coll& c : kCollectives)
      if (coll == collKey(c)) found = &c;
    if (found == nullptr)
      return fail(slimecclInvalidArgument,
                  "SLIMECCL_ALGO='{}': '{}' is not collective:algorithm (collectives: allgather, reducescatter, "
                  "allreduce, broadcast, reduce, alltoall)",
                  text, item);
    Algo parsed;
    bool known = parseAlgo(algo, &parsed);
    bool fits = false;
    for (Algo a : algorithmsFor(*found)) fits |= known && a == parsed;
    if (!fits) {
      std::string names;
      for (Algo a : algorithmsFor(*found)) names += (names.empty() ? "" : ", ") + std::string(algoName(a));
      return fail(slimecclInvalidArgument, "SLIMECCL_ALGO='{}': {} has no algorithm '{}' (it has: {})", text, coll,
                  algo, names);
    }
    out->entries.emplace_back(*found, parsed);
  }
  return slimecclSuccess;
}

const char* topoClassName(TopoClass topo) {
  switch (topo) {
    case TopoClass::SingleHost: return "one host";
    case TopoClass::MultiHost: return "several hosts";
    case TopoClass::SharedSlots: return "shared slots";
    default: return "any";
  }
}

TunerChoice chooseAlgorithm(Coll coll, size_t bytes, int nranks, TunerTopology topo, const AlgoOverrides& overrides) {
  for (const auto& [c, algo] : overrides.entries)
    if (c == coll) return TunerChoice{algo, kChunk, true};
  for (const TunerRow& row : defaultTunerTable()) {
    if (row.coll != coll || bytes < row.minBytes || bytes >= row.maxBytes) continue;
    if (nranks < row.minRanks || nranks > row.maxRanks) continue;
    if (row.topo == TopoClass::SingleHost && !topo.singleHost) continue;
    if (row.topo == TopoClass::MultiHost && topo.singleHost) continue;
    if (row.topo == TopoClass::SharedSlots && !topo.sharedSlots) continue;
    return TunerChoice{row.algo, row.chunkBytes, false};
  }
  return TunerChoice{algorithmsFor(coll).front(), kChunk, false};
}

std::string describeTunerTable(const AlgoOverrides& overrides) {
  std::string out;
  for (const auto& [c, algo] : overrides.entries)
    out += fmt::format("{:<14} forced by SLIMECCL_ALGO: {}\n", collKey(c), algoName(algo));
  auto size = [](size_t b) { return b == kNoLimit ? std::string("inf") : humanBytes(b); };
  for (const TunerRow& row : defaultTunerTable()) {
    const char* topo = topoClassName(row.topo);
    out += fmt::format("{:<14} [{:>9}, {:>9})  ranks {:>2}..{:<3} {:<13} -> {:<10} chunk {}\n", collKey(row.coll),
                       size(row.minBytes), size(row.maxBytes), row.minRanks,
                       row.maxRanks == INT_MAX ? std::string("inf") : std::to_string(row.maxRanks), topo,
                       algoName(row.algo), humanBytes(row.chunkBytes));
  }
  return out;
}

}  // namespace slimeccl
