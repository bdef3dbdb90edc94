// One rank's benchmark: for every datatype, op and root, warm up, then for every size check and time
// the op out of place and in place. Rank 0 prints the rows.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/collective_test.h"
#include "common/device_buffer.h"
#include "common/host_buffer.h"
#include "common/options.h"
#include "common/rank_comm.h"
#include "common/report.h"

namespace slimeccl_perf {

// One communicator of an algorithm comparison (-A ring,hd,default): the algorithm it runs.
struct AlgorithmComm {
  std::string name;
  RankComm* comm;
};

class BenchRunner {
 public:
  BenchRunner(RankComm& rankComm, const CollectiveTest& test, const Options& options);

  void runAll();
  // For every size, times the op out of place on each communicator in turn, options.rounds times
  // (each round starting one further along), and prints each one's median time.
  void runComparison(std::span<const AlgorithmComm> comms);

  // Checks, over all ranks and rows, that found wrong elements (nccl-tests' "Out of bounds values").
  int64_t outOfBoundsValues() const { return outOfBoundsValues_; }
  double averageBusBw() const { return measurements_ > 0 ? busBwSum_ / measurements_ : 0.0; }

 private:
  template <typename SweepFn>
  void forEachSpec(SweepFn sweep);
  void runSweep(const OpSpec& spec, std::string_view opName);
  void runComparisonSweep(const OpSpec& spec, std::string_view opName, std::span<const AlgorithmComm> comms);
  void warmUp(RankComm& comm, const OpSpec& spec, size_t bytes);
  Measurement measure(RankComm& comm, const OpSpec& spec, const ElementCounts& counts, bool inPlace);
  // Poisons the result region, then fills this rank's input and the expected result.
  void prepareCheck(const OpSpec& spec, const ElementCounts& counts, bool inPlace);
  int64_t checkResult(const OpSpec& spec, const ElementCounts& counts, const OpBuffers& buffers);
  OpBuffers placeBuffers(const OpSpec& spec, const ElementCounts& counts, bool inPlace) const;
  char* sendBase() const { return options_.deviceBuffers ? sendDevice_.data() : send_.data(); }
  char* recvBase() const { return options_.deviceBuffers ? recvDevice_.data() : recv_.data(); }
  ElementCounts countsFor(const OpSpec& spec, size_t bytes) const;
  bool prints() const { return rankComm_.rank() == 0; }
  void print(const std::string& text) const;

  RankComm& rankComm_;
  const CollectiveTest& test_;
  const Options& options_;
  // With device buffers (-D 1) ops use sendDevice_ and recvDevice_, and send_ and recv_ hold
  // what is written to them and read back from them for checks.
  HostBuffer send_;
  HostBuffer recv_;
  HostBuffer expected_;
  DeviceBuffer sendDevice_;
  DeviceBuffer recvDevice_;
  int64_t outOfBoundsValues_ = 0;
  double busBwSum_ = 0.0;
  int measurements_ = 0;
};

}  // namespace slimeccl_perf
