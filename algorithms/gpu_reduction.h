// GPU reductions on one host (docs/algorithms.md, "GPU reductions"): each rank's kernel reads
// spans of the ranks' buffers directly (peers' through their mappings), reduces them and writes the
// result into spans of one or more ranks' buffers, in one or more steps; copy engines may then copy
// the result on into the peers' outputs. A plan says which spans, per rank; the kernel and the
// copies only carry it out, and algorithms/gpu_reduction_simulator.h checks it.
//   one-shot    AllReduce: each rank reads every rank's whole input and writes its own output (out
//               of place only: in place a peer would still read the input this rank overwrites);
//               Reduce: the root alone reads every input.
//   two-shot    AllReduce: rank r reduces chunk r of every input into chunk r of its own output (a
//               reduce-scatter), then copy engines copy that chunk into chunk r of every peer's
//               output (the all-gather, no SMs).
//   two-shot-sm AllReduce: as two-shot, but the kernel stores the reduced chunk into every rank's
//               output itself (both halves in one pass, no copy-engine starts); Reduce: into the
//               root's output only, and on 3 or more ranks the vector is cut among the N - 1 ranks
//               other than the root, whose links then carry only the results in. No span is read or
//               written by two ranks, so both run in place.
//   ring        N - 1 steps, each after the left neighbour's step before it. AllReduce: in step k
//               rank r reduces chunk r - k - 1 of its input into what its left neighbour left
//               there the step before (its input, in step 1), writing the partial result into that
//               chunk of its own output; after the last, rank r holds chunk r reduced, which copy
//               engines copy into every peer's output. Each rank reads one peer at a time.
//               ReduceScatter and Reduce: in step k rank r reduces block (chunk) r - k, whose
//               partial result is kept where the result goes (that block's owner's output; the
//               root's output), so the last step leaves the result there. Reduce out of place only:
//               in place the partial results would overwrite the root's input before it is read.
//   direct      ReduceScatter: rank r reduces block r of every input into its own output.
#pragma once

#include <cstddef>
#include <vector>

#include "src/base/util/op_kinds.h"

namespace slimeccl {

enum class GpuReductionAlgo : unsigned char { OneShot, TwoShot, TwoShotSm, Ring, Direct };
constexpr GpuReductionAlgo kGpuReductionAlgos[] = {GpuReductionAlgo::OneShot, GpuReductionAlgo::TwoShot,
                                                   GpuReductionAlgo::TwoShotSm, GpuReductionAlgo::Ring,
                                                   GpuReductionAlgo::Direct};

// "oneshot", "twoshot", "twoshot_sm", "ring", "direct"
const char* gpuReductionAlgoName(GpuReductionAlgo algo);
bool parseGpuReductionAlgo(const char* name, GpuReductionAlgo* out);

// A span of one rank's buffer, in elements from the buffer's start. A source span of a receive
// buffer holds a partial result (a ring's), not an input.
struct RankSpan {
  int rank;
  bool recv;  // the receive buffer, else the send buffer
  size_t offset;
};

// One step of a rank's kernel: reduce `count` elements from each source in order into each
// destination.
struct GpuReductionStep {
  std::vector<RankSpan> sources, destinations;
  size_t count = 0;
};

// A copy engine's copy of `count` elements, after the rank's steps.
struct GatherCopy {
  RankSpan from, to;
  size_t count = 0;
};

// What one rank does: its steps in order (avg: the last step divides by the rank count), each
// step after the first once rank `waitsFor` has finished the step before it (-1: no wait); after
// each step but the last it lets rank `signals` go on (-1: none); then its gather copies.
struct GpuReductionPlan {
  std::vector<GpuReductionStep> steps;
  int waitsFor = -1, signals = -1;
  std::vector<GatherCopy> gathers;
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
// Two-shot's and ring's chunk: the vector split in nranks chunks of whole 16-byte words (the last
// shorter, or empty).
size_t twoShotChunkElements(size_t count, size_t typeBytes, int nranks);

}  // namespace slimeccl
