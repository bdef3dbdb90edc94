#include "algorithms/relay_plan.h"

#include <algorithm>
#include <cstdint>

#include "algorithms/gpu_reduction.h"

namespace slimeccl {
namespace {

// The streams of a plan. Copies and puts leave on kRelayOut, takes (and the reductions of what they
// took) arrive on kRelayIn; a reduction's results leave on kRelayOutAgain and arrive on kRelayInAgain; copies
// within the GPU run on kRelayLocal beside them.
constexpr int kRelayOut = 0, kRelayIn = 1, kRelayOutAgain = 2, kRelayInAgain = 3;
constexpr int kRelayLocal = 2;  // the ops with a local copy have no second pair

// The event that orders a Take after the Put that reads the same bytes, or a result's Put after
// its Reduce; each Await follows its Signal at once in the plan, so one event serves every chunk.
constexpr int kRelayChunkEvent = 0;

std::vector<int> relayPeersOf(int nranks, int me) {
  std::vector<int> peers;
  for (int k = 1; k < nranks; ++k) peers.push_back((me + k) % nranks);
  return peers;
}

// Chunk c of `bytes` cut into pieces of at most `piece`: its offset and length (0 past the end).
struct RelayPiece {
  size_t offset, bytes;
};
RelayPiece relayPiece(size_t bytes, size_t piece, size_t c) {
  const size_t offset = std::min(bytes, c * piece);
  return {offset, std::min(bytes - offset, piece)};
}
size_t relayPieces(size_t bytes, size_t piece) { return (bytes + piece - 1) / piece; }

RelaySpan relaySpan(uint32_t buffer, size_t offset) { return RelaySpan{buffer, offset}; }

// Builds one rank's plan: counts the chunks of each lane, so each goes in its slot and each slot is
// free again before its reuse and at the end.
class RelayPlanBuilder {
 public:
  RelayPlanBuilder(const RelayRequest& request, int streams)
      : me_(request.rank), n_(request.nranks), slotBytes_(request.slotBytes), before_(request.lanes) {
    for (std::vector<uint64_t>* counts : {&before_.toPeerPuts, &before_.toPeerTakes, &before_.sharedTakes})
      counts->resize(n_, 0);
    now_ = before_;
    plan_.streams = streams;
  }

  // The next chunk of this rank's lane: `readers` is the to-peer lane's reader, or every reader of
  // the shared lane.
  void put(int stream, RelayLane lane, const std::vector<int>& readers, RelaySpan from, size_t bytes) {
    const bool shared = lane == RelayLane::Shared;
    uint64_t& chunk = shared ? now_.sharedPuts : now_.toPeerPuts[readers.front()];
    const int slot = static_cast<int>(chunk % kRelaySlots);
    // The op before left every slot free: only this op's own chunks reuse them.
    if (chunk - (shared ? before_.sharedPuts : before_.toPeerPuts[readers.front()]) >= kRelaySlots)
      awaitFree(stream, lane, readers, slot);
    RelayStep& step = laneStep(RelayStepKind::Put, stream, lane, slot, readers);
    step.at = from;
    step.bytes = bytes;
    ++chunk;
  }

  // The next chunk of `writer`'s lane that this rank reads; returns its slot.
  int take(int stream, RelayLane lane, int writer, RelaySpan to, size_t bytes) {
    uint64_t& chunk = lane == RelayLane::Shared ? now_.sharedTakes[writer] : now_.toPeerTakes[writer];
    RelayStep& step = laneStep(RelayStepKind::Take, stream, lane, static_cast<int>(chunk % kRelaySlots), {writer});
    step.at = to;
    step.bytes = bytes;
    ++chunk;
    return step.slot;
  }

  // Where the next chunk of `writer`'s to-peer lane lands for a reduction.
  RelaySpan landingFor(int writer) const {
    const size_t index = static_cast<size_t>(writer < me_ ? writer : writer - 1);
    const size_t slot = now_.toPeerTakes[writer] % kRelaySlots;
    return relaySpan(kRelayLanding, (index * kRelaySlots + slot) * slotBytes_);
  }

  void copy(int stream, RelaySpan to, RelaySpan from, size_t bytes) {
    if (bytes == 0) return;
    RelayStep& step = add(RelayStepKind::Copy, stream);
    step.at = to;
    step.from = from;
    step.bytes = bytes;
  }

  void reduce(int stream, RelaySpan to, size_t count, std::vector<RelaySource> sources) {
    RelayStep& step = add(RelayStepKind::Reduce, stream);
    step.at = to;
    step.count = count;
    step.sources = std::move(sources);
  }

  // `later` waits for what `earlier` has queued so far.
  void order(int earlier, int later) {
    add(RelayStepKind::Signal, earlier).event = kRelayChunkEvent;
    add(RelayStepKind::Await, later).event = kRelayChunkEvent;
  }

  // At the end, on the stream that put them: every slot in use of this rank's lanes of the kind is
  // freed.
  void drain(int stream, RelayLane lane) {
    if (lane == RelayLane::Shared) {
      drainLane(stream, lane, relayPeersOf(n_, me_), before_.sharedPuts, now_.sharedPuts);
      return;
    }
    for (int reader = 0; reader < n_; ++reader)
      if (reader != me_) drainLane(stream, lane, {reader}, before_.toPeerPuts[reader], now_.toPeerPuts[reader]);
  }

  // Where no lane carries more than one chunk, every step goes on one stream: the puts (which wait
  // for nothing: every slot is free), then the takes and the rest in the order of their streams,
  // then the waits for the slots to be freed. No copy in could have overlapped a copy out then,
  // and the op spares the forks and joins of the other streams.
  RelayPlan done() {
    plan_.lanes = now_;
    uint64_t most = now_.sharedPuts - before_.sharedPuts;
    for (int p = 0; p < n_; ++p)
      most = std::max({most, now_.toPeerPuts[p] - before_.toPeerPuts[p], now_.toPeerTakes[p] - before_.toPeerTakes[p],
                       now_.sharedTakes[p] - before_.sharedTakes[p]});
    if (most > 1) return std::move(plan_);
    RelayPlan one;
    one.streams = 1;
    one.lanes = now_;
    for (bool frees : {false, true})
      for (int stream = 0; stream < plan_.streams; ++stream)
        for (RelayStep step : plan_.steps) {
          const bool ordering = step.kind == RelayStepKind::Signal || step.kind == RelayStepKind::Await;
          if (ordering || step.stream != stream || (step.kind == RelayStepKind::AwaitFree) != frees) continue;
          step.stream = 0;
          one.steps.push_back(step);
        }
    return one;
  }

 private:
  RelayStep& add(RelayStepKind kind, int stream) {
    RelayStep& step = plan_.steps.emplace_back();
    step.kind = kind;
    step.stream = stream;
    return step;
  }
  RelayStep& laneStep(RelayStepKind kind, int stream, RelayLane lane, int slot, const std::vector<int>& peers) {
    RelayStep& step = add(kind, stream);
    step.lane = lane;
    step.slot = slot;
    step.peers = peers;
    return step;
  }
  void awaitFree(int stream, RelayLane lane, const std::vector<int>& readers, int slot) {
    laneStep(RelayStepKind::AwaitFree, stream, lane, slot, readers);
  }
  // The waits for the slots of this op's last chunks on a lane: [first, end) of its count.
  void drainLane(int stream, RelayLane lane, const std::vector<int>& readers, uint64_t first, uint64_t end) {
    for (uint64_t c = end - first > kRelaySlots ? end - kRelaySlots : first; c < end; ++c)
      awaitFree(stream, lane, readers, static_cast<int>(c % kRelaySlots));
  }

  int me_, n_;
  size_t slotBytes_;
  RelayPlan plan_;
  RelayLaneCounts before_, now_;
};

// Every rank's block goes out once on its shared lane and is taken by every peer.
RelayPlan relayAllGather(const RelayRequest& r) {
  RelayPlanBuilder plan(r, 3);
  const size_t block = r.count * r.typeBytes;
  const size_t chunk = relayChunkBytes(block, r.slotBytes);
  const int me = r.rank;
  const RelaySpan mine = r.inPlace ? relaySpan(kRelayRecv, me * block) : relaySpan(kRelaySend, 0);
  if (!r.inPlace) plan.copy(kRelayLocal, relaySpan(kRelayRecv, me * block), mine, block);
  const std::vector<int> peers = relayPeersOf(r.nranks, me);
  if (peers.empty()) return plan.done();
  for (size_t c = 0; c < relayPieces(block, chunk); ++c) {
    const RelayPiece piece = relayPiece(block, chunk, c);
    plan.put(kRelayOut, RelayLane::Shared, peers, relaySpan(mine.buffer, mine.offset + piece.offset), piece.bytes);
    for (int p : peers)
      plan.take(kRelayIn, RelayLane::Shared, p, relaySpan(kRelayRecv, p * block + piece.offset), piece.bytes);
  }
  plan.drain(kRelayOut, RelayLane::Shared);
  return plan.done();
}

// The root's buffer goes out once on its shared lane.
RelayPlan relayBroadcast(const RelayRequest& r) {
  RelayPlanBuilder plan(r, 3);
  const size_t bytes = r.count * r.typeBytes;
  const size_t chunk = relayChunkBytes(bytes, r.slotBytes);
  const bool root = r.rank == r.root;
  if (root && !r.inPlace) plan.copy(kRelayLocal, relaySpan(kRelayRecv, 0), relaySpan(kRelaySend, 0), bytes);
  const std::vector<int> peers = relayPeersOf(r.nranks, r.rank);
  if (peers.empty()) return plan.done();
  for (size_t c = 0; c < relayPieces(bytes, chunk); ++c) {
    const RelayPiece piece = relayPiece(bytes, chunk, c);
    if (root)
      plan.put(kRelayOut, RelayLane::Shared, peers, relaySpan(kRelaySend, piece.offset), piece.bytes);
    else
      plan.take(kRelayIn, RelayLane::Shared, r.root, relaySpan(kRelayRecv, piece.offset), piece.bytes);
  }
  plan.drain(kRelayOut, RelayLane::Shared);
  return plan.done();
}

// Block p goes to rank p on its to-peer lane. In place, the block taken from p lands where this
// rank's block for p was: the chunk's Takes wait until its Puts have read them.
RelayPlan relayAlltoAll(const RelayRequest& r) {
  RelayPlanBuilder plan(r, 3);
  const size_t block = r.count * r.typeBytes;
  const int me = r.rank;
  if (!r.inPlace) plan.copy(kRelayLocal, relaySpan(kRelayRecv, me * block), relaySpan(kRelaySend, me * block), block);
  const uint32_t source = r.inPlace ? kRelayRecv : kRelaySend;
  const size_t chunk = relayChunkBytes(block, r.slotBytes);
  for (size_t c = 0; c < relayPieces(block, chunk); ++c) {
    const RelayPiece piece = relayPiece(block, chunk, c);
    for (int p : relayPeersOf(r.nranks, me))
      plan.put(kRelayOut, RelayLane::ToPeer, {p}, relaySpan(source, p * block + piece.offset), piece.bytes);
    if (r.inPlace) plan.order(kRelayOut, kRelayIn);
    for (int p : relayPeersOf(r.nranks, me))
      plan.take(kRelayIn, RelayLane::ToPeer, p, relaySpan(kRelayRecv, p * block + piece.offset), piece.bytes);
  }
  plan.drain(kRelayOut, RelayLane::ToPeer);
  return plan.done();
}

// A group's messages: those to each peer follow each other on its to-peer lane. Steps are queued by
// the chunk's number on its lane counted across ops (alike at both ends), a lane's Puts running
// kRelaySlots - 1 numbers ahead of its Takes: a Take waits for the Put of its number, a Put for the
// Take kRelaySlots numbers before, so each wait is for a step earlier in that order on another rank.
// On one hardware queue the two ends may also split a lane's messages into calls differently, as
// long as a later call of the peer holds back no more than kRelaySlots - 1 of this rank's chunks. A
// Send to this rank itself is copied within the GPU into the Recv from itself of the same rank in order.
RelayPlan relayMessages(const RelayRequest& r) {
  RelayPlanBuilder plan(r, 3);
  struct Chunk {
    uint64_t order;  // Put n: 2 (n + 1); Take n: 2 (n + kRelaySlots) + 1
    bool send;
    int peer;
    uint32_t buffer;
    RelayPiece piece;
  };
  std::vector<Chunk> chunks;
  std::vector<uint64_t> sent = r.lanes.toPeerPuts, taken = r.lanes.toPeerTakes;
  sent.resize(r.nranks, 0);
  taken.resize(r.nranks, 0);
  std::vector<uint32_t> selfSends, selfRecvs;
  for (size_t i = 0; i < r.messages.size(); ++i) {
    const RelayMessage& m = r.messages[i];
    const uint32_t buffer = kRelayFirstMessage + static_cast<uint32_t>(i);
    if (m.peer == r.rank) {
      (m.send ? selfSends : selfRecvs).push_back(buffer);
      continue;
    }
    uint64_t& number = m.send ? sent[m.peer] : taken[m.peer];
    // Cut by the message's size alone, which its sender and receiver both know.
    const size_t chunk = relayChunkBytes(m.bytes, r.slotBytes);
    for (size_t c = 0; c < relayPieces(m.bytes, chunk); ++c, ++number) {
      const uint64_t order = m.send ? 2 * (number + 1) : 2 * (number + kRelaySlots) + 1;
      chunks.push_back({order, m.send, m.peer, buffer, relayPiece(m.bytes, chunk, c)});
    }
  }
  for (size_t k = 0; k < std::min(selfSends.size(), selfRecvs.size()); ++k)
    plan.copy(kRelayLocal, relaySpan(selfRecvs[k], 0), relaySpan(selfSends[k], 0),
              r.messages[selfRecvs[k] - kRelayFirstMessage].bytes);
  std::stable_sort(chunks.begin(), chunks.end(), [](const Chunk& a, const Chunk& b) { return a.order < b.order; });
  for (const Chunk& c : chunks) {
    if (c.send)
      plan.put(kRelayOut, RelayLane::ToPeer, {c.peer}, relaySpan(c.buffer, c.piece.offset), c.piece.bytes);
    else
      plan.take(kRelayIn, RelayLane::ToPeer, c.peer, relaySpan(c.buffer, c.piece.offset), c.piece.bytes);
  }
  plan.drain(kRelayOut, RelayLane::ToPeer);
  return plan.done();
}

// A reduction: part p of the vector is reduced by rank p, which takes every peer's contribution to
// it into its landing area and reduces them with its own; AllReduce then puts each result on the
// rank's shared lane for every peer. Reduce has one part, the root's.
struct RelayParts {
  std::vector<size_t> first, count;  // elements, by rank
  std::vector<size_t> inputFirst;    // where rank p's part lies in each input
};

RelayParts relayPartsOf(const RelayRequest& r) {
  RelayParts parts;
  parts.first.assign(r.nranks, 0);
  parts.count.assign(r.nranks, 0);
  parts.inputFirst.assign(r.nranks, 0);
  for (int p = 0; p < r.nranks; ++p) {
    if (r.coll == Coll::ReduceScatter) {
      parts.count[p] = r.count;
      parts.inputFirst[p] = p * r.count;
    } else if (r.coll == Coll::Reduce) {
      parts.count[p] = p == r.root ? r.count : 0;
    } else {
      const size_t size = twoShotChunkElements(r.count, r.typeBytes, r.nranks);
      parts.first[p] = std::min(r.count, size * p);
      parts.count[p] = std::min(r.count, parts.first[p] + size) - parts.first[p];
      parts.inputFirst[p] = parts.first[p];
    }
  }
  return parts;
}

RelayPlan relayReduction(const RelayRequest& r) {
  RelayPlanBuilder plan(r, r.coll == Coll::AllReduce ? 4 : 2);
  const int me = r.rank;
  const size_t elem = r.typeBytes;
  const RelayParts parts = relayPartsOf(r);
  const size_t largest = *std::max_element(parts.count.begin(), parts.count.end());
  const size_t chunk = std::max<size_t>(relayChunkBytes(largest * elem, r.slotBytes) / elem, 1);
  size_t chunks = 0;
  for (int p = 0; p < r.nranks; ++p) chunks = std::max(chunks, relayPieces(parts.count[p], chunk));
  const std::vector<int> peers = relayPeersOf(r.nranks, me);
  for (size_t c = 0; c < chunks; ++c) {
    for (int p : peers) {
      const RelayPiece piece = relayPiece(parts.count[p], chunk, c);
      if (piece.bytes != 0)
        plan.put(kRelayOut, RelayLane::ToPeer, {p}, relaySpan(kRelaySend, (parts.inputFirst[p] + piece.offset) * elem),
                 piece.bytes * elem);
    }
    const RelayPiece mine = relayPiece(parts.count[me], chunk, c);
    if (mine.bytes != 0) {
      std::vector<RelaySource> sources(r.nranks);
      sources[me] = {relaySpan(kRelaySend, (parts.inputFirst[me] + mine.offset) * elem), me};
      for (int p : peers) {
        sources[p] = {plan.landingFor(p), p};
        plan.take(kRelayIn, RelayLane::ToPeer, p, sources[p].span, mine.bytes * elem);
      }
      const RelaySpan result = relaySpan(kRelayRecv, (parts.first[me] + mine.offset) * elem);
      plan.reduce(kRelayIn, result, mine.bytes, std::move(sources));
      if (r.coll == Coll::AllReduce && !peers.empty()) {
        plan.order(kRelayIn, kRelayOutAgain);
        plan.put(kRelayOutAgain, RelayLane::Shared, peers, result, mine.bytes * elem);
      }
    }
    if (r.coll != Coll::AllReduce) continue;
    for (int p : peers) {
      const RelayPiece piece = relayPiece(parts.count[p], chunk, c);
      if (piece.bytes != 0)
        plan.take(kRelayInAgain, RelayLane::Shared, p, relaySpan(kRelayRecv, (parts.first[p] + piece.offset) * elem),
                  piece.bytes * elem);
    }
  }
  plan.drain(kRelayOut, RelayLane::ToPeer);
  if (r.coll == Coll::AllReduce) plan.drain(kRelayOutAgain, RelayLane::Shared);
  return plan.done();
}

}  // namespace

RelayPlan planRelay(const RelayRequest& request) {
  switch (request.coll) {
    case Coll::AllGather: return relayAllGather(request);
    case Coll::Broadcast: return relayBroadcast(request);
    case Coll::AlltoAll: return relayAlltoAll(request);
    case Coll::Send:
    case Coll::Recv: return relayMessages(request);
    case Coll::AllReduce:
    case Coll::ReduceScatter:
    case Coll::Reduce: return relayReduction(request);
  }
  return {};
}

size_t relayChunkBytes(size_t laneBytes, size_t slotBytes) {
  constexpr size_t kPage = 4096, kFewest = 256 * 1024;
  const size_t quarter = ((laneBytes + kRelaySlots - 1) / kRelaySlots + kPage - 1) / kPage * kPage;
  return std::min(slotBytes, std::max(quarter, kFewest));
}

size_t relaySlotBytesFor(int nranks) {
  constexpr size_t kMiB = size_t{1} << 20;
  constexpr size_t kBudget = 128 * kMiB, kLargest = 4 * kMiB, kSmallest = kMiB;
  size_t slot = kLargest;
  while (slot > kSmallest && relayBytes(nranks, slot) * static_cast<size_t>(nranks) > kBudget) slot /= 2;
  return slot;
}

size_t relayBytes(int nranks, size_t slotBytes) { return static_cast<size_t>(nranks) * kRelaySlots * slotBytes; }

size_t relaySlotOffset(RelayLane lane, int writer, int reader, int slot, size_t slotBytes) {
  const size_t laneIndex = static_cast<size_t>(lane == RelayLane::Shared ? writer : reader);
  return (laneIndex * kRelaySlots + static_cast<size_t>(slot)) * slotBytes;
}

size_t relayLandingBytes(int nranks, size_t slotBytes) {
  return static_cast<size_t>(std::max(nranks - 1, 0)) * kRelaySlots * slotBytes;
}

}  // namespace slimeccl
