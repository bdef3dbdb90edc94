// The measuring loop shared by the baseline tools (the same AllGather and Send/Recv measured with
// other libraries, for perf/compare.sh): nccl-tests flags, sizes and table, float data, rank 0
// prints. A library adapter supplies the ops and the cross-rank helpers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace slimeccl_perf {

enum class BaselineOp { AllGather, SendRecv };

class BaselineLibrary {
 public:
  virtual ~BaselineLibrary() = default;
  virtual int rank() const = 0;
  virtual int nranks() const = 0;
  virtual std::string host() const = 0;
  // AllGather of count floats per rank; in place when send == recv + rank * count.
  virtual void allGather(const float* send, float* recv, size_t count) = 0;
  // Sends count floats to rank+1 and receives count from rank-1; in place when send == recv.
  virtual void sendRecv(const float* send, float* recv, size_t count) = 0;
  virtual void barrier() = 0;
  virtual double sum(double value) = 0;
};

// Makes the library's communicator (connecting to the other ranks).
using BaselineLibraryMaker = std::function<std::unique_ptr<BaselineLibrary>()>;

// Parses the nccl-tests flags (only float data; -t is refused); answers -h and --version, and
// refuses a bad command line with exit status 2, before any connection is made; then makes the
// library, runs the sweep and prints the table on rank 0. rank: this process's rank as the
// launcher tells it (only rank 0 prints). Returns the process exit code.
int runBaseline(const BaselineLibraryMaker& makeLibrary, int rank, BaselineOp op, int argc, char** argv);

}  // namespace slimeccl_perf
