#include "common/bench_runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <optional>
#include <vector>

#include "common/bandwidth.h"
#include "common/cross_rank.h"
#include "common/datatypes.h"
#include "common/sweep.h"

namespace slimeccl_perf {
namespace {

struct BufferBytes {
  size_t send = 0;
  size_t recv = 0;
};

// The largest buffers any datatype needs at maxBytes; smaller sizes reuse them.
BufferBytes largestBuffers(const CollectiveTest& test, const Options& options, int nranks) {
  BufferBytes largest;
  for (const slimecclDataType_t type : options.dataTypes) {
    const size_t typeSize = dataTypeSize(type);
    const ElementCounts counts = test.counts(options.maxBytes / typeSize, nranks);
    largest.send = std::max(largest.send, counts.send * typeSize);
    largest.recv = std::max(largest.recv, std::max(counts.recv, inPlaceExtent(counts, nranks - 1)) * typeSize);
  }
  return largest;
}

}  // namespace

BenchRunner::BenchRunner(RankComm& rankComm, const CollectiveTest& test, const Options& options)
    : rankComm_(rankComm), test_(test), options_(options) {
  const BufferBytes bytes = largestBuffers(test, options, rankComm.nranks());
  send_ = HostBuffer(bytes.send, options.sharedBuffers);
  recv_ = HostBuffer(bytes.recv, options.sharedBuffers);
  if (options.check != 0) expected_ = HostBuffer(bytes.recv);
  if (options.deviceBuffers) {
    sendDevice_ = DeviceBuffer(bytes.send);
    recvDevice_ = DeviceBuffer(bytes.recv);
  }
}

template <typename SweepFn>
void BenchRunner::forEachSpec(SweepFn sweep) {
  const std::vector<slimecclRedOp_t> ops = test_.usesRedOp() ? options_.redOps : std::vector{slimecclSum};
  for (const slimecclDataType_t type : options_.dataTypes) {
    for (const slimecclRedOp_t op : ops) {
      for (const int root : rootSweep(options_.root, rankComm_.nranks(), test_.usesRoot())) {
        sweep(OpSpec{type, op, root}, test_.usesRedOp() ? redOpName(op) : "none");
      }
    }
  }
}

void BenchRunner::runAll() {
  forEachSpec([this](const OpSpec& spec, std::string_view opName) { runSweep(spec, opName); });
}

void BenchRunner::runComparison(std::span<const AlgorithmComm> comms) {
  forEachSpec([&](const OpSpec& spec, std::string_view opName) { runComparisonSweep(spec, opName, comms); });
}

void BenchRunner::runSweep(const OpSpec& spec, std::string_view opName) {
  rankComm_.barrier();
  warmUp(rankComm_, spec, options_.maxBytes);
  warmUp(rankComm_, spec, options_.minBytes);
  for (const size_t bytes : sizeSweep(options_.minBytes, options_.maxBytes, options_.stepFactor, options_.stepBytes)) {
    const ElementCounts counts = countsFor(spec, bytes);
    print(formatRowStart(rowBytes(counts, dataTypeSize(spec.type)), counts.param, dataTypeName(spec.type), opName,
                         spec.root));
    print(formatMeasurement(measure(rankComm_, spec, counts, false)));
    print(formatMeasurement(measure(rankComm_, spec, counts, true)));
    print("\n");
  }
}

void BenchRunner::runComparisonSweep(const OpSpec& spec, std::string_view opName,
                                     std::span<const AlgorithmComm> comms) {
  rankComm_.barrier();
  for (const size_t bytes : sizeSweep(options_.minBytes, options_.maxBytes, options_.stepFactor, options_.stepBytes)) {
    const ElementCounts counts = countsFor(spec, bytes);
    // Every communicator warms up at every size: the first few hundred calls of a launch over
    // connections (or shared slots) not used before run several times slower, and the
    // communicator that first reaches a new path would otherwise pay for all.
    for (const AlgorithmComm& entry : comms) warmUp(*entry.comm, spec, bytes);
    std::vector<std::vector<double>> seconds(comms.size());
    std::optional<int64_t> wrongElements;
    // Taking turns, each round starting one further along, spreads drift and placement over all.
    for (int round = 0; round < options_.rounds; ++round) {
      for (size_t turn = 0; turn < comms.size(); ++turn) {
        const size_t index = (turn + static_cast<size_t>(round)) % comms.size();
        const Measurement measurement = measure(*comms[index].comm, spec, counts, false);
        seconds[index].push_back(measurement.seconds);
        if (measurement.wrongElements) wrongElements = wrongElements.value_or(0) + *measurement.wrongElements;
      }
    }
    std::vector<double> medians;
    for (std::vector<double>& samples : seconds) medians.push_back(medianOf(samples));
    print(formatRowStart(rowBytes(counts, dataTypeSize(spec.type)), counts.param, dataTypeName(spec.type), opName,
                         spec.root) +
          formatComparisonTimes(medians, wrongElements));
  }
}

void BenchRunner::warmUp(RankComm& comm, const OpSpec& spec, size_t bytes) {
  const ElementCounts counts = countsFor(spec, bytes);
  const OpBuffers buffers = placeBuffers(spec, counts, false);
  for (int iter = 0; iter < options_.warmupIters; ++iter) test_.run(comm, buffers, counts, spec);
  comm.synchronize();
}

Measurement BenchRunner::measure(RankComm& comm, const OpSpec& spec, const ElementCounts& counts, bool inPlace) {
  const OpBuffers buffers = placeBuffers(spec, counts, inPlace);
  Measurement measurement;
  // One untimed run first, as nccl-tests does; when checking, it is the checked run.
  if (options_.check != 0) prepareCheck(spec, counts, inPlace);
  test_.run(comm, buffers, counts, spec);
  comm.synchronize();
  if (options_.check != 0) measurement.wrongElements = checkResult(spec, counts, buffers);

  comm.barrier();
  const auto start = std::chrono::steady_clock::now();
  for (int iter = 0; iter < options_.iters; ++iter) test_.run(comm, buffers, counts, spec);
  comm.synchronize();
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;

  measurement.seconds = combineTimeAcrossRanks(comm, elapsed.count() / options_.iters, options_.average);
  measurement.algBw = algBandwidthGBs(rowBytes(counts, dataTypeSize(spec.type)), measurement.seconds);
  measurement.busBw = measurement.algBw * test_.busBwFactor(rankComm_.nranks());
  busBwSum_ += measurement.busBw;
  ++measurements_;
  return measurement;
}

void BenchRunner::prepareCheck(const OpSpec& spec, const ElementCounts& counts, bool inPlace) {
  const int rank = rankComm_.rank();
  const size_t typeSize = dataTypeSize(spec.type);
  const size_t poisoned = inPlace ? inPlaceExtent(counts, rank) : counts.recv;
  fillPoison(recv_.data(), spec.type, poisoned);
  char* input = inPlace ? recv_.data() + counts.sendInPlaceOffset * static_cast<size_t>(rank) * typeSize : send_.data();
  test_.fillInput(input, counts, spec, rank, rankComm_.nranks());
  test_.fillExpected(expected_.data(), counts, spec, rank, rankComm_.nranks());
  if (options_.deviceBuffers) {
    recvDevice_.upload(recv_.data(), 0, poisoned * typeSize);
    if (!inPlace) sendDevice_.upload(send_.data(), 0, counts.send * typeSize);
  }
}

int64_t BenchRunner::checkResult(const OpSpec& spec, const ElementCounts& counts, const OpBuffers& buffers) {
  const size_t checked = test_.checkedElements(counts, spec, rankComm_.rank());
  const char* result = static_cast<const char*>(buffers.recv);
  if (options_.deviceBuffers) {
    const size_t offset = static_cast<size_t>(result - recvDevice_.data());
    recvDevice_.download(recv_.data() + offset, offset, checked * dataTypeSize(spec.type));
    result = recv_.data() + offset;
  }
  const auto mine = static_cast<int64_t>(countMismatches(result, expected_.data(), spec.type, checked));
  const std::vector<int64_t> perRank = gatherFromAllRanks(rankComm_, mine);
  outOfBoundsValues_ += std::count_if(perRank.begin(), perRank.end(), [](int64_t wrong) { return wrong != 0; });
  return std::accumulate(perRank.begin(), perRank.end(), int64_t{0});
}

OpBuffers BenchRunner::placeBuffers(const OpSpec& spec, const ElementCounts& counts, bool inPlace) const {
  if (!inPlace) return {sendBase(), recvBase()};
  const size_t rankBytes = static_cast<size_t>(rankComm_.rank()) * dataTypeSize(spec.type);
  return {recvBase() + counts.sendInPlaceOffset * rankBytes, recvBase() + counts.recvInPlaceOffset * rankBytes};
}

ElementCounts BenchRunner::countsFor(const OpSpec& spec, size_t bytes) const {
  return test_.counts(bytes / dataTypeSize(spec.type), rankComm_.nranks());
}

void BenchRunner::print(const std::string& text) const {
  if (!prints()) return;
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

}  // namespace slimeccl_perf
