// slimeccl-sim --predict-gpus: the alpha-beta model fitted to measured GPU figures, to predict
// another GPU count. The figures are perf/compare_nccl_tests.sh's tables (NCCL's time and
// slimeccl's per size, one table per op and GPU count). For each op and library the model
//   t(N, S) = alpha + f(op, N) * S / B
// is fitted to the table of the most GPUs measured, the last such in the files (least squares
// over the sizes from minBytes). f is the bytes each GPU sends per byte of the op's size on an
// NVSwitch machine, where every GPU keeps its own link bandwidth B whatever N: 2(N-1)/N for
// AllReduce, (N-1)/N for AllGather, ReduceScatter and AlltoAll, 1 for Broadcast, Reduce and
// Send/Recv. alpha is kept as fitted: at these sizes it is the op's fixed cost (launches,
// handshakes, the pipeline's fill), not a per-step latency. Both libraries move the same bytes per
// link for these ops, so the prediction keeps the measured ratio where bandwidth rules; it cannot
// know what changes at another N (other algorithms, contention, the switch), which is why its
// figures are labelled predicted.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace slimeccl::sim {

struct MeasuredRow {
  double bytes, ncclUs, oursUs;
};

struct MeasuredTable {
  std::string op;  // nccl-tests' name: all_reduce, all_gather, ...
  int gpus = 0;
  std::vector<MeasuredRow> rows;
};

// The tables of a compare_nccl_tests.sh output (or a log quoting it). False with *error set when
// the file cannot be read or holds no table.
bool readMeasuredTables(const std::string& path, std::vector<MeasuredTable>* out, std::string* error);

// Bytes each GPU sends per byte of the op's size on N GPUs; 0 for an op it does not know.
double bytesPerGpu(const std::string& op, int gpus);

struct FittedLine {
  double alphaUs = 0, usPerByte = 0;
};
// Least squares over the rows of at least minBytes; ours selects slimeccl's column.
FittedLine fitRows(const std::vector<MeasuredRow>& rows, double minBytes, bool ours);

// Prints, for every op in the files, the tables predicted for `gpus` GPUs. Returns the exit status.
int runGpuPrediction(int gpus, const std::vector<std::string>& files, double minBytes);

}  // namespace slimeccl::sim
