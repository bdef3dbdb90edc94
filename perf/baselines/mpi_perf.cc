// AllGather (BASELINE_OP_SENDRECV: Send/Recv) measured with MPI, printed as our perf tools print.
// Started by mpirun; see perf/compare.sh for the settings that select shared memory.
#include <mpi.h>
#include <unistd.h>

#include <memory>

#include "baseline_driver.h"

namespace {

class MpiLibrary final : public slimeccl_perf::BaselineLibrary {
 public:
  MpiLibrary() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  int rank() const override { return rank_; }
  int nranks() const override { return size_; }
  std::string host() const override {
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    MPI_Get_processor_name(name, &len);
    return std::string(name, static_cast<size_t>(len));
  }
  void allGather(const float* send, float* recv, size_t count) override {
    const bool inPlace = send == recv + static_cast<size_t>(rank_) * count;
    MPI_Allgather(inPlace ? MPI_IN_PLACE : send, static_cast<int>(count), MPI_FLOAT, recv, static_cast<int>(count),
                  MPI_FLOAT, MPI_COMM_WORLD);
  }
  void sendRecv(const float* send, float* recv, size_t count) override {
    int to = (rank_ + 1) % size_, from = (rank_ - 1 + size_) % size_;
    if (send == recv)
      MPI_Sendrecv_replace(recv, static_cast<int>(count), MPI_FLOAT, to, 0, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else
      MPI_Sendrecv(send, static_cast<int>(count), MPI_FLOAT, to, 0, recv, static_cast<int>(count), MPI_FLOAT, from, 0,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  double sum(double value) override {
    double total = 0;
    MPI_Allreduce(&value, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return total;
  }

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#ifdef BASELINE_OP_SENDRECV
  const auto op = slimeccl_perf::BaselineOp::SendRecv;
#else
  const auto op = slimeccl_perf::BaselineOp::AllGather;
#endif
  const int rc = slimeccl_perf::runBaseline([] { return std::make_unique<MpiLibrary>(); }, rank, op, argc, argv);
  MPI_Finalize();
  return rc;
}
