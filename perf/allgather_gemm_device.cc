#include "allgather_gemm_device.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/call_check.h"
#include "common/cross_rank.h"
#include "common/lt_gemm.h"
#include "common/device_buffer.h"
#include "common/nccl_library.h"
#include "common/rank_comm.h"

namespace slimeccl_perf {
namespace {

void cudaCheck(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(rc));
}

size_t elementSize(slimecclDataType_t type) { return type == slimecclDouble ? 8 : type == slimecclFloat ? 4 : 2; }

const char* typeText(slimecclDataType_t type) {
  return type == slimecclDouble     ? "double"
         : type == slimecclFloat    ? "float"
         : type == slimecclBfloat16 ? "bfloat16"
                                    : "half";
}

// Values in [-1, 1) of `type` from a cheap generator (the buffers reach hundreds of MiB).
void fillRandom(DeviceBuffer& buffer, size_t elements, slimecclDataType_t type, uint64_t seed) {
  std::vector<char> host(elements * elementSize(type));
  uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i < elements; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    const float v = static_cast<float>(static_cast<int64_t>(state >> 40) - (1 << 23)) / static_cast<float>(1 << 23);
    char* at = host.data() + i * elementSize(type);
    if (type == slimecclDouble) {
      const double d = v;
      memcpy(at, &d, 8);
    } else if (type == slimecclFloat) {
      memcpy(at, &v, 4);
    } else if (type == slimecclBfloat16) {
      uint32_t bits;
      memcpy(&bits, &v, 4);
      const uint16_t high = static_cast<uint16_t>(bits >> 16);  // v cut to bfloat16's 8 bits of mantissa
      memcpy(at, &high, 2);
    } else {
      // |v| < 1 as a half: sign, exponent and ten bits of mantissa from the float's.
      uint32_t bits;
      memcpy(&bits, &v, 4);
      const int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
      const uint16_t half =
          exponent <= 0 ? static_cast<uint16_t>((bits >> 16) & 0x8000)
                        : static_cast<uint16_t>(((bits >> 16) & 0x8000) | (exponent << 10) | ((bits >> 13) & 0x3ff));
      memcpy(at, &half, 2);
    }
  }
  buffer.upload(host.data(), 0, host.size());
}

// One shape on one rank: its matrices, cuBLASLt, and NCCL's comm for the baseline.
class DeviceShapeBench {
 public:
  DeviceShapeBench(RankComm& rankComm, const GemmOptions& options, const GemmShape& shape, const NcclLibrary* nccl,
                   void* ncclComm)
      : rankComm_(rankComm), options_(options), shape_(shape), nccl_(nccl), ncclComm_(ncclComm),
        stream_(static_cast<cudaStream_t>(rankComm.cudaStream())), elem_(elementSize(options.type)),
        aLocal_(shape.mLocal * shape.k * elem_), aGathered_(aLocalBytes() * rankComm.nranks()),
        b_(shape.k * shape.n * elem_), c_(rows() * shape.n * elem_), cReference_(rows() * shape.n * elem_),
        gemm_(options.type, false) {
    fillRandom(aLocal_, shape.mLocal * shape.k, options.type, 1000 + static_cast<uint64_t>(rankComm.rank()));
    fillRandom(b_, shape.k * shape.n, options.type, 7);
    cudaCheck(cudaEventCreate(&start_), "cudaEventCreate");
    cudaCheck(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~DeviceShapeBench() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }

  void allGather() {
    SLIMECCL_PERF_CALL(rankComm_, slimecclAllGather, aLocal_.data(), aGathered_.data(), shape_.mLocal * shape_.k,
                       options_.type, rankComm_.comm(), rankComm_.stream());
  }
  // The GEMM users run after an AllGather: one call over all M rows.
  void gemm() { multiply(rows(), aGathered_.data(), c_.data()); }
  // The GEMMs the fused call makes, one rank's row block after another, with nothing beside them.
  void gemmByBlocks() {
    for (int r = 0; r < rankComm_.nranks(); ++r)
      multiply(shape_.mLocal, aGathered_.data() + r * aLocalBytes(), c_.data() + r * cBlockBytes());
  }
  void ncclThenGemm() {
    nccl_->allGather(aLocal_.data(), aGathered_.data(), shape_.mLocal * shape_.k, options_.type, ncclComm_, stream_);
    gemm();
  }
  // keepGathered: the gathered A lands in aGathered, as NCCL's AllGather leaves it; otherwise the
  // library gathers into its workspace and copies no own block.
  void fused(bool keepGathered = true) {
    SLIMECCL_PERF_CALL(rankComm_, slimecclAllGatherGemm, aLocal_.data(), keepGathered ? aGathered_.data() : nullptr,
                       b_.data(), c_.data(), shape_.mLocal, shape_.n, shape_.k, options_.type, rankComm_.comm(),
                       rankComm_.stream());
  }

  // Milliseconds per call of each, timed on the GPU: the median over iterations (the calls take
  // turns in each), then the mean over ranks.
  std::vector<double> time(const std::vector<std::function<void()>>& calls) {
    for (int i = 0; i < options_.warmupIters; ++i)
      for (const auto& call : calls) call();
    cudaCheck(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    std::vector<std::vector<double>> samples(calls.size());
    for (int i = 0; i < options_.iters; ++i)
      for (size_t c = 0; c < calls.size(); ++c) {
        rankComm_.barrier();
        cudaCheck(cudaEventRecord(start_, stream_), "cudaEventRecord");
        calls[c]();
        cudaCheck(cudaEventRecord(stop_, stream_), "cudaEventRecord");
        cudaCheck(cudaEventSynchronize(stop_), "cudaEventSynchronize");
        float ms = 0;
        cudaCheck(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
        samples[c].push_back(ms);
      }
    std::vector<double> result;
    for (std::vector<double>& perCall : samples) {
      std::nth_element(perCall.begin(), perCall.begin() + perCall.size() / 2, perCall.end());
      result.push_back(combineTimeAcrossRanks(rankComm_, perCall[perCall.size() / 2], TimeAverage::Mean));
    }
    return result;
  }

  // Elements of C (summed over ranks and both forms of the fused call) that differ from cuBLASLt run
  // block by block on the gathered A, the GEMMs the fused call makes, bit for bit.
  int64_t wrongElements() {
    allGather();
    for (int r = 0; r < rankComm_.nranks(); ++r)
      multiply(shape_.mLocal, aGathered_.data() + r * aLocalBytes(), cReference_.data() + r * cBlockBytes());
    std::vector<char> got(rows() * shape_.n * elem_), want(got.size());
    cReference_.download(want.data(), 0, want.size());
    int64_t wrong = 0;
    for (bool keepGathered : {true, false}) {
      cudaCheck(cudaMemsetAsync(c_.data(), 0xff, got.size(), stream_), "cudaMemsetAsync");
      fused(keepGathered);
      cudaCheck(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
      c_.download(got.data(), 0, got.size());
      for (size_t i = 0; i < got.size(); i += elem_) wrong += memcmp(got.data() + i, want.data() + i, elem_) != 0;
    }
    int64_t total = 0;
    for (int64_t w : gatherFromAllRanks(rankComm_, wrong)) total += w;
    return total;
  }

 private:
  size_t rows() const { return shape_.mLocal * static_cast<size_t>(rankComm_.nranks()); }
  size_t aLocalBytes() const { return shape_.mLocal * shape_.k * elem_; }
  size_t cBlockBytes() const { return shape_.mLocal * shape_.n * elem_; }

  void multiply(size_t m, const char* a, char* c) { gemm_.multiply(m, shape_.k, shape_.n, a, b_.data(), c, stream_); }

  RankComm& rankComm_;
  const GemmOptions& options_;
  const GemmShape shape_;
  const NcclLibrary* nccl_;
  void* ncclComm_;
  cudaStream_t stream_;
  size_t elem_;
  DeviceBuffer aLocal_, aGathered_, b_, c_, cReference_;
  LtGemm gemm_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// NCCL's comm for the baseline, made alike on every rank; null where the library is not usable.
void* ncclCommFor(RankComm& rankComm, const NcclLibrary& nccl) {
  if (!nccl.usable()) return nullptr;
  std::vector<char> id(NcclLibrary::kUniqueIdBytes);
  if (rankComm.rank() == 0) nccl.uniqueId(id.data());
  std::vector<char> all(id.size() * static_cast<size_t>(rankComm.nranks()));
  rankComm.allGatherBytes(id.data(), all.data(), id.size());
  return nccl.initRank(rankComm.nranks(), all.data(), rankComm.rank());
}

}  // namespace

int64_t runDeviceRank(LocalProcess& process, int thread, const GemmOptions& options, const NcclLibrary& nccl) {
  useGpuOfRank(globalRank(process.placement.rank, process.threads, thread));
  RankComm rankComm(process, thread, StreamMode::Cuda);
  void* ncclComm = ncclCommFor(rankComm, nccl);
  const bool prints = rankComm.rank() == 0;
  if (prints) {
    std::printf("# allgather_gemm_perf -D 1: %d ranks, one GPU each, %s, %d iterations; NCCL baseline: %s\n",
                rankComm.nranks(), typeText(options.type), options.iters,
                nccl.usable() ? nccl.description().c_str() : ("none: " + nccl.why()).c_str());
    std::printf(
        "#\n#  mLocal       K       N  nranks   allgather(ms)   gemm(ms)  by_blocks(ms)  nccl_ag+gemm(ms)  "
        "overlapped(ms)  efficiency  vs_nccl  no_A_kept(ms)  efficiency  #wrong\n");
  }
  int64_t wrongTotal = 0;
  for (const GemmShape& shape : options.shapes) {
    DeviceShapeBench bench(rankComm, options, shape, &nccl, ncclComm);
    const int64_t wrong = options.check != 0 ? bench.wrongElements() : 0;
    wrongTotal += wrong;
    std::vector<std::function<void()>> calls{[&] { bench.allGather(); }, [&] { bench.gemm(); },
                                             [&] { bench.gemmByBlocks(); }, [&] { bench.fused(); },
                                             [&] { bench.fused(false); }};
    if (ncclComm != nullptr) calls.push_back([&] { bench.ncclThenGemm(); });
    const std::vector<double> ms = bench.time(calls);
    const double allGather = ms[0], gemm = ms[1], byBlocks = ms[2], fused = ms[3], fusedNoA = ms[4];
    const double ncclSeq = ncclComm != nullptr ? ms[5] : 0;
    if (prints) {
      const std::string ncclText = ncclComm != nullptr ? std::to_string(ncclSeq).substr(0, 8) : "n/a";
      const std::string vsNccl = ncclComm != nullptr ? std::to_string(ncclSeq / fused).substr(0, 5) : "n/a";
      const double longer = std::max(allGather, gemm);
      std::printf("%9zu %7zu %7zu %7d %15.3f %10.3f %14.3f %17s %15.3f %11.2f %8s %14.3f %11.2f %7s\n", shape.mLocal,
                  shape.k, shape.n, rankComm.nranks(), allGather, gemm, byBlocks, ncclText.c_str(), fused,
                  longer / fused, vsNccl.c_str(), fusedNoA, longer / fusedNoA,
                  options.check != 0 ? std::to_string(wrong).c_str() : "N/A");
      std::fflush(stdout);
    }
  }
  rankComm.barrier();
  if (ncclComm != nullptr) nccl.destroy(ncclComm);
  return wrongTotal;
}

}  // namespace slimeccl_perf
