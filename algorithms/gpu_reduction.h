// GPU reductions on one host (docs/algorithms.md, "GPU reductions"): each rank's kernel reads
// spans of the ranks' buffers directly (peers' through their mappings), reduces them in rank order
// and writes the result into spans of one or more ranks' buffers. A plan says which spans, per
// rank; the kernel only carries it out, and algorithms/gpu_reduction_simulator.h checks it.
//   one-shot  AllReduce: each rank reads every rank's whole input and writes its own output (out of
//             place only: in place a peer would still read the input this rank overwrites);
//             Reduce: the root alone reads every input.
//   two-shot  AllReduce: rank r reduces chunk r of every input and writes it into chunk r of every
//             rank's output (a reduce-scatter and an all-gather in one pass); Reduce: into the
//             root's output only. No span is read or written by two ranks, so it runs in place.
//   direct    ReduceScatter: rank r reduces block r of every input into its own output.
#pragma once

#include <cstddef>
#include <vector>

#include "src/base/util/op_kinds.h"

namespace slimeccl {

enum class GpuReductionAlgo : unsigned char { OneShot, TwoShot, Direct };

const char* gpuReductionAlgoName(GpuReductionAlgo algo);  // "oneshot", "twoshot", "direct"
bool parseGpuReductionAlgo(const char* name, GpuReductionAlgo* out);

// A span of one rank's buffer, in elements from the buffer's start.
struct RankSpan {
  int rank;
  bool recv;  // the receive buffer, else the send buffer
  size_t offset;
};

// What one rank's kernel does: reduce `count` elements from each source in order into each
// destination (avg: then divide by the rank count). count 0: nothing.
struct GpuReductionPlan {
  std::vector<RankSpan> sources, destinations;
  size_t count = 0;
};

struct GpuReductionRequest {
  Coll coll;  // AllReduce, ReduceScatter or Reduce
  GpuReductionAlgo algo;
  int nranks, rank, root;
  size_t count;  // the call's count argument (ReduceScatter: elements each rank receives)
  size_t typeBytes;
  bool inPlace;  // in place, inputs are read from the send buffer, which the recv buffer aliases
};

// Whether `algo` serves the request's collective (and its in-place form).
bool gpuReductionAlgoFits(Coll coll, GpuReductionAlgo algo, bool inPlace);
// The request's plan; the algorithm must fit.
GpuReductionPlan planGpuReduction(const GpuReductionRequest& request);
// The tuner's choice, alike on every rank: one-shot while the bytes each rank reads from its peers
// stay small (the op's time is then the handshakes', and one-shot writes nothing across NVLink),
// two-shot beyond; ReduceScatter has direct alone.
GpuReductionAlgo tuneGpuReduction(Coll coll, size_t bytes, int nranks, bool inPlace);
// Two-shot's chunk: the vector split in nranks chunks of whole 16-byte words (the last shorter).
size_t twoShotChunkElements(size_t count, size_t typeBytes, int nranks);

}  // namespace slimeccl
