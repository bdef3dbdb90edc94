#include "tools/slimeccl-sim/gpu_prediction.h"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace slimeccl::sim {
namespace {

// "== all_reduce, 4 GPUs (threads), ..." -> op and GPU count.
bool parseHeading(const std::string& line, std::string* op, int* gpus) {
  if (line.rfind("== ", 0) != 0) return false;
  const size_t comma = line.find(',');
  if (comma == std::string::npos) return false;
  *op = line.substr(3, comma - 3);
  return sscanf(line.c_str() + comma + 1, " %d GPUs", gpus) == 1 && *gpus > 0;
}

// "  4194304  50.35  48.11  1.05 ..." -> bytes, NCCL's time, slimeccl's time.
bool parseRow(const std::string& line, MeasuredRow* row) {
  std::istringstream in(line);
  return static_cast<bool>(in >> row->bytes >> row->ncclUs >> row->oursUs) && row->bytes > 0;
}

}  // namespace

bool readMeasuredTables(const std::string& path, std::vector<MeasuredTable>* out, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read " + path;
    return false;
  }
  std::string line;
  MeasuredTable* table = nullptr;
  while (std::getline(in, line)) {
    MeasuredTable heading;
    if (parseHeading(line, &heading.op, &heading.gpus)) {
      out->push_back(heading);
      table = &out->back();
      continue;
    }
    MeasuredRow row;
    if (table != nullptr && parseRow(line, &row)) {
      table->rows.push_back(row);
    } else if (table != nullptr && !line.empty() && line.find("bytes") == std::string::npos) {
      table = nullptr;  // the table has ended
    }
  }
  if (out->empty()) {
    *error = path + " holds no '== op, N GPUs' table";
    return false;
  }
  return true;
}

double bytesPerGpu(const std::string& op, int gpus) {
  const double n = gpus;
  if (op == "all_reduce") return 2 * (n - 1) / n;
  if (op == "all_gather" || op == "reduce_scatter" || op == "alltoall") return (n - 1) / n;
  if (op == "broadcast" || op == "reduce" || op == "sendrecv") return 1;
  return 0;
}

FittedLine fitRows(const std::vector<MeasuredRow>& rows, double minBytes, bool ours) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const MeasuredRow& row : rows) {
    if (row.bytes < minBytes) continue;
    const double y = ours ? row.oursUs : row.ncclUs;
    n += 1;
    sx += row.bytes;
    sy += y;
    sxx += row.bytes * row.bytes;
    sxy += row.bytes * y;
  }
  FittedLine line;
  const double spread = n * sxx - sx * sx;
  if (n < 2 || spread <= 0) return line;
  line.usPerByte = (n * sxy - sx * sy) / spread;
  line.alphaUs = (sy - line.usPerByte * sx) / n;
  return line;
}

int runGpuPrediction(int gpus, const std::vector<std::string>& files, double minBytes) {
  std::vector<MeasuredTable> tables;
  for (const std::string& file : files) {
    std::string error;
    if (!readMeasuredTables(file, &tables, &error)) {
      fprintf(stderr, "slimeccl-sim: %s\n", error.c_str());
      return 1;
    }
  }
  // Per op, the table of the most GPUs measured (the last of them in the files: the newest).
  std::map<std::string, const MeasuredTable*> chosen;
  for (const MeasuredTable& table : tables) {
    const MeasuredTable*& best = chosen[table.op];
    if (bytesPerGpu(table.op, table.gpus) > 0 && table.gpus > 1 && (best == nullptr || table.gpus >= best->gpus))
      best = &table;
  }
  for (const auto& [op, table] : chosen) {
    if (table == nullptr) continue;
    const double volume = bytesPerGpu(op, gpus) / bytesPerGpu(op, table->gpus);
    const FittedLine nccl = fitRows(table->rows, minBytes, false), ours = fitRows(table->rows, minBytes, true);
    fmt::print(
        "== {}, {} GPUs predicted from {} GPUs (bytes per GPU x {:.3f}; fitted from {} B: "
        "NCCL alpha {:.1f} us, {:.1f} GB/s; slimeccl alpha {:.1f} us, {:.1f} GB/s)\n",
        op, gpus, table->gpus, volume, minBytes, nccl.alphaUs,
        nccl.usPerByte > 0 ? bytesPerGpu(op, table->gpus) / nccl.usPerByte / 1e3 : 0, ours.alphaUs,
        ours.usPerByte > 0 ? bytesPerGpu(op, table->gpus) / ours.usPerByte / 1e3 : 0);
    fmt::print("{:>12} {:>10} {:>10} {:>8}\n", "bytes", "nccl_us", "ours_us", "x");
    for (const MeasuredRow& row : table->rows) {
      if (row.bytes < minBytes) continue;
      const double ncclUs = nccl.alphaUs + nccl.usPerByte * volume * row.bytes;
      const double oursUs = ours.alphaUs + ours.usPerByte * volume * row.bytes;
      fmt::print("{:>12.0f} {:>10.2f} {:>10.2f} {:>8.2f}\n", row.bytes, ncclUs, oursUs, ncclUs / oursUs);
    }
  }
  return 0;
}

}  // namespace slimeccl::sim
