#include "algorithms/tuner.h"

#include <fmt/format.h>

#include <climits>

#include "src/error.h"
#include "src/util/strings.h"

namespace slimeccl {
namespace {

constexpr size_t KiB = 1024, MiB = 1024 * 1024;
constexpr size_t kNoLimit = SIZE_MAX;
constexpr size_t kChunk = kDefaultChunkBytes;

const Coll kCollectives[] = {Coll::AllGather, Coll::ReduceScatter, Coll::AllReduce,
                             Coll::Broadcast, Coll::Reduce, Coll::AlltoAll};

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
  // First match wins. See docs/tuning.md for the measurements behind each boundary.
  static const std::vector<TunerRow> table = {
      // Tiny calls of one host over shared slots (src/exec/mailbox_run.h): each rank publishes
      // its data once and reads the peers' in place, one step, no net messages. They led every
      // other algorithm at 2, 4 and 8 ranks up to 16 KiB per rank (AllReduce at 8 KiB on 4 ranks:
      // 16 us against recursive doubling's 21 in two runs). From 3 ranks a slot holds 64 KiB, and
      // direct AllGather through it led or tied the rows before it up to there (2026-11-25, two
      // launches taking turns with the build whose slots ended at 16 KiB: 4 ranks, 128 KiB: 19-20
      // against halving-doubling's 24-27 us, tied at 256 KiB; 3 ranks, 144-168 KiB: 21-25 against
      // the ring's 26-31 us, 192 KiB: 26.3-26.6 against direct over the nets' 25.8); on 5 to 8
      // ranks the direct row below takes the slots wherever they fit (8 ranks, 256 KiB: 55-57
      // against 189-214 us). Not measured beyond 8 ranks.
      // Upper bounds are exclusive, the slots' last byte inclusive. On 2 ranks halving-doubling
      // led them from 28 KiB (28 to 36 KiB: 3.6-4.4 against 3.8-4.7 us, 1.11-1.14x at 32 KiB, two
      // launches after calls alone began to skip the group path).
      {Coll::AllGather, 0, 28 * KiB, 2, 2, TopoClass::SharedSlots, Algo::Direct, kChunk},
      {Coll::AllGather, 0, 192 * KiB + 1, 3, 3, TopoClass::SharedSlots, Algo::Direct, kChunk},
      {Coll::AllGather, 0, 256 * KiB + 1, 4, 4, TopoClass::SharedSlots, Algo::Direct, kChunk},
      {Coll::AllGather, 0, 80 * KiB, 5, 8, TopoClass::SharedSlots, Algo::Direct, kChunk},
      {Coll::AllReduce, 0, 16 * KiB, 2, 8, TopoClass::SharedSlots, Algo::OneShot, kChunk},
      {Coll::AlltoAll, 0, 16 * KiB, 2, 8, TopoClass::SharedSlots, Algo::Pairwise, kChunk},
      // Small: log2 N messages. With more ranks than cores on one host the ring's neighbour
      // traffic wins from 8 KiB (5 to 8 ranks on 2 cores, perf/compare_algorithms.py). On 2 ranks
      // of one host direct's single exchange led hd's from 32 KiB in three campaigns (2.2-2.4
      // against 2.7-2.8 us), and tied it from 40 KiB (4.8-5.0 against 4.8-4.9 us) once the slots
      // carried it to 32 KiB and halving-doubling led there (2026-11-25). Across hosts (4
      // namespace hosts x 2 ranks) the ring led hd by 3 to 26% up to 8 KiB in two campaigns of
      // two launches.
      {Coll::AllGather, 40 * KiB, kNoLimit, 2, 2, TopoClass::SingleHost, Algo::Direct, 1 * MiB},
      {Coll::AllGather, 0, 64 * KiB, 2, 4, TopoClass::Any, Algo::HalvingDoubling, kChunk},
      {Coll::AllGather, 0, 8 * KiB, 5, INT_MAX, TopoClass::SingleHost, Algo::HalvingDoubling, kChunk},
      {Coll::AllGather, 0, 32 * KiB, 9, INT_MAX, TopoClass::MultiHost, Algo::HalvingDoubling, kChunk},
      // One host: every rank pulls each peer's block once (shm single copy), no forwarding, once
      // blocks reach the single-copy size (64 KiB per rank up to 8 ranks); beyond 8 ranks, only
      // when blocks are well above it (not measured here). On 4 ranks halving-doubling's two
      // steps of growing blocks beat the three pulls of direct from 256 KiB to 2 MiB in five of
      // six runs, and from the end of the slots to 256 KiB in three launches of 2026-11-24 (72 to
      // 224 KiB: 17-44 us against the ring's 24-64 and direct's 23-58, one launch of three giving
      // the ring 8% at 96 KiB); on 3 ranks direct led the ring from 192 KiB (33-36 against
      // 38-42 us) and tied it below; on 5 to 8 ranks direct leads from the end of the slots
      // (128 KiB: 71 us against ring's 155 us on 8 ranks).
      {Coll::AllGather, 64 * KiB, 4 * MiB, 4, 4, TopoClass::SingleHost, Algo::HalvingDoubling, kChunk},
      {Coll::AllGather, 192 * KiB, kNoLimit, 3, 4, TopoClass::SingleHost, Algo::Direct, 1 * MiB},
      {Coll::AllGather, 80 * KiB, kNoLimit, 5, 8, TopoClass::SingleHost, Algo::Direct, 1 * MiB},
      {Coll::AllGather, 4 * MiB, kNoLimit, 9, INT_MAX, TopoClass::SingleHost, Algo::Direct, 1 * MiB},
      // Several hosts (4 network-namespace hosts x 2 ranks over sockets): the ring's neighbour
      // traffic led or tied the others up to 128 KiB in three campaigns (which of them led moved
      // by 20% from one campaign to the next) and stayed steadiest at 512 KiB (1.1-1.7 ms, where
      // halving-doubling took 1.2 or 2.6-3.7 ms depending on what the connections had carried
      // before); all peers at once lead from 2 MiB (measured to 8 ranks; N - 1 connections per
      // rank beyond that). Beyond
      // 8 ranks, where the hierarchy's fewer cross-host messages count for more, it keeps the
      // middle sizes (not measured).
      {Coll::AllGather, 32 * KiB, 512 * KiB, 9, INT_MAX, TopoClass::MultiHost, Algo::Hierarchical, kChunk},
      {Coll::AllGather, 2 * MiB, kNoLimit, 2, 8, TopoClass::MultiHost, Algo::Direct, kChunk},
      {Coll::AllGather, 0, kNoLimit, 1, INT_MAX, TopoClass::Any, Algo::Ring, kChunk},
      // The other collectives: measured on 4 and 8 ranks on one host and on 4 network-namespace
      // hosts x 2 ranks (perf/compare_algorithms.py; tables in docs/performance.md).
      // ReduceScatter: recursive halving on 2 and 4 ranks (on 4, 64 KiB to 4 MiB in two launches
      // of 2026-11-24 evening: 1.13 to 1.23x ahead of the ring at 64 and 128 KiB, where the
      // morning's campaigns had the ring ahead); on 3 ranks, where it folds a rank in, the ring
      // from 32 KiB (32 KiB to 3 MiB: 1.15 to 1.56x ahead, two launches); on 5 to 8 ranks
      // sharing 2 cores up to 1 MiB (1.2 to 1.4x ahead at 128 and 512 KiB), the ring from there
      // (3 to 9% ahead at 2 and 8 MiB); across hosts the ring's neighbour traffic led, except at
      // 2 MiB on up to 8 ranks, where recursive halving led in the campaign and two launches of
      // 2026-11-25 (4441-4461 against 5254-5296 us; the campaign of 2026-11-24 had the ring ahead).
      {Coll::ReduceScatter, 0, 2 * KiB, 5, INT_MAX, TopoClass::SingleHost, Algo::HalvingDoubling, kChunk},
      {Coll::ReduceScatter, 0, 1 * MiB, 5, 8, TopoClass::SingleHost, Algo::HalvingDoubling, kChunk},
      {Coll::ReduceScatter, 32 * KiB, kNoLimit, 3, 3, TopoClass::SingleHost, Algo::Ring, kChunk},
      {Coll::ReduceScatter, 0, kNoLimit, 2, 4, TopoClass::SingleHost, Algo::HalvingDoubling, kChunk},
      {Coll::ReduceScatter, 2 * MiB, 4 * MiB, 2, 8, TopoClass::MultiHost, Algo::HalvingDoubling, kChunk},
      {Coll::ReduceScatter, 0, kNoLimit, 1, INT_MAX, TopoClass::Any, Algo::Ring, kChunk},
      // AllReduce: recursive doubling sends the whole vector log2 N times, so it leads for small
      // vectors (1 KiB on 8 ranks, 64 KiB across hosts, where each message costs most). On 2 ranks
      // (one exchange, no second pass) it leads below 1 MiB (512 KiB: 55-59 against the ring's
      // 75-84 us), ties the ring at 1 MiB and trails it from 2 MiB (2 to 16 MiB: 1.07 to 1.29x
      // the ring's time in three launches of 2026-11-25; the campaigns of 2026-11-24 had it ahead
      // to 16 MiB); on 4 ranks below 16 KiB (where the slots do not carry one-shot), then
      // halving-doubling (2026-11-25, three launches: tied at 16 KiB, 1.1 to 1.3x ahead of
      // recursive doubling from 24 to 56 KiB; three launches of 2026-11-24 evening: 64 KiB to
      // 1 MiB 1.2 to 1.6x ahead of both); on 3 ranks, where halving-doubling folds a rank in, below
      // 512 KiB, then the ring (1 and 2 MiB: 537-560 and 1005-1265 us against recursive
      // doubling's 750-798 and 1413-1459, two launches); on 5 to 8 ranks from the end of the
      // slots to 32 KiB, then halving-doubling (8 ranks, 2026-11-25, after calls alone and the
      // executor's leaner passes: at 32 KiB 77-97 against recursive doubling's 91-129 us in four
      // launches, at 48 KiB 1.5x ahead, tied at 16 KiB; the campaigns of 2026-11-24 had recursive
      // doubling ahead at 32 KiB).
      // Halving-doubling from 4 MiB beyond 8 ranks on one host (not measured) and from 256 KiB
      // across hosts.
      {Coll::AllReduce, 0, 1 * MiB, 2, 2, TopoClass::SingleHost, Algo::RecursiveDoubling, kChunk},
      {Coll::AllReduce, 0, 512 * KiB, 3, 3, TopoClass::SingleHost, Algo::RecursiveDoubling, kChunk},
      {Coll::AllReduce, 0, 16 * KiB, 4, 4, TopoClass::SingleHost, Algo::RecursiveDoubling, kChunk},
      {Coll::AllReduce, 16 * KiB, kNoLimit, 4, 4, TopoClass::SingleHost, Algo::HalvingDoubling, kChunk},
      {Coll::AllReduce, 0, 1 * KiB, 5, INT_MAX, TopoClass::SingleHost, Algo::RecursiveDoubling, kChunk},
      {Coll::AllReduce, 0, 4 * KiB, 5, INT_MAX, TopoClass::SingleHost, Algo::HalvingDoubling, kChunk},
      {Coll::AllReduce, 16 * KiB, 32 * KiB, 5, 8, TopoClass::SingleHost, Algo::RecursiveDoubling, kChunk},
      {Coll::AllReduce, 32 * KiB, kNoLimit, 5, 8, TopoClass::SingleHost, Algo::HalvingDoubling, kChunk},
      {Coll::AllReduce, 0, 4 * MiB, 2, INT_MAX, TopoClass::SingleHost, Algo::Ring, kChunk},
      {Coll::AllReduce, 4 * MiB, kNoLimit, 9, INT_MAX, TopoClass::SingleHost, Algo::HalvingDoubling, kChunk},
      // Below one element per rank the ring's empty parts send nothing (8 B on 8 ranks across
      // hosts: 438-489 against recursive doubling's 599-614 us). Across hosts on up to 8 ranks
      // the ring also led from 1 to 4 MiB (2026-11-25: at 1 MiB 2995-3364 against
      // halving-doubling's 4354-4670 us in five launches, whether or not the comms had run
      // smaller calls first; at 2 MiB ahead in those five and the campaign, by 1.02 to 1.5x), where
      // halving-doubling led at 512 KiB after smaller calls and from 4 MiB.
      {Coll::AllReduce, 0, 32, 5, 8, TopoClass::MultiHost, Algo::Ring, kChunk},
      {Coll::AllReduce, 1 * MiB, 4 * MiB, 2, 8, TopoClass::MultiHost, Algo::Ring, kChunk},
      {Coll::AllReduce, 0, 64 * KiB, 2, INT_MAX, TopoClass::MultiHost, Algo::RecursiveDoubling, kChunk},
      {Coll::AllReduce, 64 * KiB, 256 * KiB, 2, INT_MAX, TopoClass::MultiHost, Algo::Ring, kChunk},
      {Coll::AllReduce, 256 * KiB, kNoLimit, 2, INT_MAX, TopoClass::MultiHost, Algo::HalvingDoubling, kChunk},
      {Coll::AllReduce, 0, kNoLimit, 1, INT_MAX, TopoClass::Any, Algo::Ring, kChunk},
      // Broadcast on one host: the binomial tree led at every size on 2, 4 and 8 ranks (the chain
      // tied it at 32 KiB) except above the slots to 256 KiB on 4 ranks, where scatter + AllGather
      // led or tied (47.5 and 53.7 against 62 and 55 us at 128 KiB in two campaigns; 32-33 against
      // 33-34 us on 2026-11-25). Through the slots (to 64 KiB) the tree led it on 4 ranks (15.6-16
      // against 20.7-21.3 us), and on 3 ranks the tree led at 128 KiB (16.5-16.9 against 21.9-24.6
      // us, three launches of 2026-11-25); on 2 and 8 ranks the tree led there by 1.3 to 1.4x.
      // Across hosts (4 namespace hosts x 2 ranks) the chain led up to 128 KiB and the tree at
      // 512 KiB and 1 MiB (874-889 against the chain's 1509-1675 us), and the chain again from
      // 2 MiB (2 MiB: 3622-3814 against 4304-4441 us; 4 and 8 MiB 1.1 to 1.27x ahead; three
      // launches and the campaign of 2026-11-25, where the campaign of 2026-11-24 had the tree
      // 1.12x ahead at 2 MiB and the chain 1.06x at 8 MiB).
      {Coll::Broadcast, 64 * KiB + 1, 256 * KiB, 4, 4, TopoClass::SingleHost, Algo::ScatterAllGather, kChunk},
      {Coll::Broadcast, 0, kNoLimit, 1, INT_MAX, TopoClass::SingleHost, Algo::Tree, kChunk},
      {Coll::Broadcast, 256 * KiB, 2 * MiB, 1, INT_MAX, TopoClass::MultiHost, Algo::Tree, kChunk},
      {Coll::Broadcast, 0, kNoLimit, 1, INT_MAX, TopoClass::Any, Algo::Chain, kChunk},
      // Reduce: on one host the tree leads for small vectors; ReduceScatter + gather from 256 KiB
      // on 4 ranks (two launches of 2026-11-24 evening: 1.1 to 1.45x ahead from 256 KiB to 2 MiB,
      // where the morning's campaigns had the tree ahead at 512 KiB and 2 MiB; on 3 ranks the
      // tree led or tied to 3 MiB, 1.3x ahead at 192 KiB), from 512 KiB on 2 ranks (2026-11-25,
      // five launches: 1.17 to 1.31x ahead at 1 and 2 MiB, ahead at 512 KiB in four of five by 5
      // to 12%, the tree 1.2 to 1.5x ahead at 256 KiB), from 4 MiB on 3 (8 MiB: 1.1 to 1.5x ahead
      // in three campaigns; within 5% of the tree from 256 KiB to 2 MiB on 2026-11-25) and from
      // 1 MiB on 5 to 8 (within 8% of the tree at 2 MiB, ahead at 8 MiB). The tree row stops at
      // 32 MiB (not measured beyond). Across hosts ReduceScatter + gather leads from 512 KiB
      // (2026-11-25: 1235-1262 against the tree's 1678-1714 us at 512 KiB, 1.03-1.24x ahead at
      // 1 MiB, three launches, and 1.33x ahead at 512 KiB in the campaign; the tree led at
      // 256 KiB).
      {Coll::Reduce, 256 * KiB, kNoLimit, 4, 4, TopoClass::SingleHost, Algo::ReduceScatterGather, kChunk},
      {Coll::Reduce, 512 * KiB, kNoLimit, 2, 2, TopoClass::SingleHost, Algo::ReduceScatterGather, kChunk},
      {Coll::Reduce, 4 * MiB, kNoLimit, 3, 3, TopoClass::SingleHost, Algo::ReduceScatterGather, kChunk},
      {Coll::Reduce, 1 * MiB, kNoLimit, 5, 8, TopoClass::SingleHost, Algo::ReduceScatterGather, kChunk},
      {Coll::Reduce, 0, 32 * MiB, 1, INT_MAX, TopoClass::SingleHost, Algo::Tree, kChunk},
      {Coll::Reduce, 0, 512 * KiB, 1, INT_MAX, TopoClass::Any, Algo::Tree, kChunk},
      {Coll::Reduce, 0, kNoLimit, 1, INT_MAX, TopoClass::Any, Algo::ReduceScatterGather, kChunk},
      // AlltoAll: Bruck's log2 N steps lead on one host while blocks are tiny (to 512 B per op,
      // where the slots do not carry it) and across hosts, where each message costs most, below
      // 256 KiB (pairwise led from 256 KiB: 905-917 against 1055-1097 us at 256 KiB, 1.3x at
      // 512 KiB, three launches of 2026-11-25; 512 KiB had gone to Bruck at 1.16 and 1.49x
      // pairwise's time in the campaigns of 2026-11-24 and 2026-11-25). Just past the slots' first
      // 16 KiB pairwise exchange still led or tied on 4 and 8 ranks when both took turns in one
      // launch (16 to 64 KiB, streams and blocking calls alike), and from 3 ranks the slots now
      // carry it to 64 KiB per rank (8 ranks, 64 KiB: 32-43 against 88-99 us over the nets,
      // 2026-11-25).
      {Coll::AlltoAll, 0, 1 * KiB, 2, INT_MAX, TopoClass::SingleHost, Algo::Bruck, kChunk},
      {Coll::AlltoAll, 0, 256 * KiB, 2, INT_MAX, TopoClass::MultiHost, Algo::Bruck, kChunk},
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
