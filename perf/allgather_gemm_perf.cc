// allgather_gemm_perf: for each shape, C = AllGather(A) x B four ways on every rank: the AllGather
// alone, the GEMM alone (one BLAS call per rank's row block), the two one after the other, and
// slimecclAllGatherGemm, which runs the GEMM of each landed block while the rest is in flight.
// Prints the times, the speedup over one-after-the-other and the overlap efficiency; with -c 1
// checks C bit for bit against the sequential path and exits non-zero on any difference. With
// -D 1, the same on GPUs against NCCL's AllGather and cuBLASLt (allgather_gemm_device.h).
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "src/base/util/version_line.h"
#include "common/call_check.h"
#include "common/cross_rank.h"
#include "common/gemm_options.h"
#include "common/host_buffer.h"
#include "common/options.h"
#include "common/process_env.h"
#include "common/rank_comm.h"
#include "common/usage_error.h"
#ifdef SLIMECCL_PERF_WITH_CUDA
#include "allgather_gemm_device.h"
#endif

namespace slimeccl_perf {
namespace {

size_t elementSize(slimecclDataType_t type) { return type == slimecclDouble ? 8 : 4; }

// The matrices of one shape on one rank.
struct Matrices {
  Matrices(const GemmShape& shape, int nranks, slimecclDataType_t type)
      : aLocal(shape.mLocal * shape.k * elementSize(type)), aGathered(aLocal.size() * static_cast<size_t>(nranks)),
        b(shape.k * shape.n * elementSize(type)),
        c(shape.mLocal * static_cast<size_t>(nranks) * shape.n * elementSize(type)), cSequential(c.size()) {}
  HostBuffer aLocal, aGathered, b, c, cSequential;
};

void fillRandom(HostBuffer& buffer, slimecclDataType_t type, uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  const size_t elements = buffer.size() / elementSize(type);
  for (size_t i = 0; i < elements; ++i) {
    if (type == slimecclDouble)
      reinterpret_cast<double*>(buffer.data())[i] = value(engine);
    else
      reinterpret_cast<float*>(buffer.data())[i] = static_cast<float>(value(engine));
  }
}

// The GEMM the sequential path runs: one call per rank's row block, the calls the library makes.
void gemmPerBlock(const GemmShape& shape, int nranks, slimecclDataType_t type, const char* a, const char* b, char* c) {
  const int m = static_cast<int>(shape.mLocal), n = static_cast<int>(shape.n), k = static_cast<int>(shape.k);
  const size_t aBlock = shape.mLocal * shape.k * elementSize(type), cBlock = shape.mLocal * shape.n * elementSize(type);
  for (int r = 0; r < nranks; ++r) {
    if (type == slimecclDouble)
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0,
                  reinterpret_cast<const double*>(a + r * aBlock), k, reinterpret_cast<const double*>(b), n, 0.0,
                  reinterpret_cast<double*>(c + r * cBlock), n);
    else
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
                  reinterpret_cast<const float*>(a + r * aBlock), k, reinterpret_cast<const float*>(b), n, 0.0f,
                  reinterpret_cast<float*>(c + r * cBlock), n);
  }
}

class ShapeBench {
 public:
  ShapeBench(RankComm& rankComm, const GemmOptions& options, const GemmShape& shape)
      : rankComm_(rankComm), options_(options), shape_(shape), m_(shape, rankComm.nranks(), options.type) {
    fillRandom(m_.aLocal, options.type, 1000 + static_cast<uint64_t>(rankComm.rank()));
    fillRandom(m_.b, options.type, 7);
  }

  void allGather() {
    SLIMECCL_PERF_CALL(rankComm_, slimecclAllGather, m_.aLocal.data(), m_.aGathered.data(), shape_.mLocal * shape_.k,
                       options_.type, rankComm_.comm(), nullptr);
  }
  void gemmAlone() {
    gemmPerBlock(shape_, rankComm_.nranks(), options_.type, m_.aGathered.data(), m_.b.data(), m_.cSequential.data());
  }
  void sequential() {
    allGather();
    gemmAlone();
  }
  void overlapped() {
    SLIMECCL_PERF_CALL(rankComm_, slimecclAllGatherGemm, m_.aLocal.data(), m_.aGathered.data(), m_.b.data(),
                       m_.c.data(), shape_.mLocal, shape_.n, shape_.k, options_.type, rankComm_.comm(), nullptr);
  }

  // Seconds per call of each of `calls`, the median over iterations, then the mean over ranks.
  // The calls take turns within every iteration, so that a change in the machine's load during
  // the run weighs on all of them alike.
  std::vector<double> time(const std::vector<std::function<void()>>& calls) {
    for (int i = 0; i < options_.warmupIters; ++i)
      for (const auto& call : calls) call();
    std::vector<std::vector<double>> samples(calls.size());
    for (int i = 0; i < options_.iters; ++i) {
      for (size_t c = 0; c < calls.size(); ++c) {
        rankComm_.barrier();
        const auto start = std::chrono::steady_clock::now();
        calls[c]();
        samples[c].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
    }
    std::vector<double> seconds;
    for (std::vector<double>& perCall : samples) {
      std::nth_element(perCall.begin(), perCall.begin() + perCall.size() / 2, perCall.end());
      seconds.push_back(combineTimeAcrossRanks(rankComm_, perCall[perCall.size() / 2], TimeAverage::Mean));
    }
    return seconds;
  }

  // Elements of C (summed over ranks) that differ from the sequential path's, bit for bit.
  int64_t wrongElements() {
    sequential();
    const std::vector<char> gathered(m_.aGathered.data(), m_.aGathered.data() + m_.aGathered.size());
    std::memset(m_.c.data(), 0xff, m_.c.size());
    std::memset(m_.aGathered.data(), 0xff, m_.aGathered.size());
    overlapped();
    const size_t elem = elementSize(options_.type);
    int64_t wrong = 0;
    for (size_t i = 0; i < m_.c.size(); i += elem)
      wrong += std::memcmp(m_.c.data() + i, m_.cSequential.data() + i, elem) != 0;
    for (size_t i = 0; i < gathered.size(); i += elem)
      wrong += std::memcmp(m_.aGathered.data() + i, gathered.data() + i, elem) != 0;
    int64_t total = 0;
    for (int64_t w : gatherFromAllRanks(rankComm_, wrong)) total += w;
    return total;
  }

 private:
  RankComm& rankComm_;
  const GemmOptions& options_;
  const GemmShape shape_;
  Matrices m_;
};

std::string header() {
  return "#\n"
         "#  mLocal       K       N  nranks   allgather(ms)   gemm(ms)  sequential(ms)  overlapped(ms)  speedup  "
         "efficiency  #wrong\n";
}

// Returns the count of wrong elements over all shapes.
int64_t runRank(LocalProcess& process, int thread, const GemmOptions& options) {
  RankComm rankComm(process, thread, StreamMode::Blocking);
  const bool prints = rankComm.rank() == 0;
  const char* gemmThreads = std::getenv("SLIMECCL_GEMM_THREADS");
  if (prints)
    std::printf("# allgather_gemm_perf: %d ranks, %s, %d iterations, SLIMECCL_GEMM_THREADS=%s%s%s\n%s",
                rankComm.nranks(), options.type == slimecclDouble ? "double" : "float", options.iters,
                gemmThreads ? gemmThreads : "(default)",
                options.algo.empty() ? "" : ", SLIMECCL_ALGO=", options.algo.c_str(), header().c_str());
  int64_t wrongTotal = 0;
  for (const GemmShape& shape : options.shapes) {
    ShapeBench bench(rankComm, options, shape);
    // The first AllGatherGemm sets the BLAS thread count, so every GEMM below runs with it.
    bench.overlapped();
    const int64_t wrong = options.check != 0 ? bench.wrongElements() : 0;
    wrongTotal += wrong;
    const std::vector<double> seconds = bench.time({[&] { bench.allGather(); }, [&] { bench.gemmAlone(); },
                                                    [&] { bench.sequential(); }, [&] { bench.overlapped(); }});
    const double allGather = seconds[0], gemm = seconds[1], sequential = seconds[2], overlapped = seconds[3];
    if (prints) {
      const double speedup = sequential / overlapped;
      const double efficiency = (sequential - overlapped) / std::min(allGather, gemm);
      std::printf("%9zu %7zu %7zu %7d %15.3f %10.3f %15.3f %15.3f %8.2f %11.2f %7s\n", shape.mLocal, shape.k, shape.n,
                  rankComm.nranks(), allGather * 1e3, gemm * 1e3, sequential * 1e3, overlapped * 1e3, speedup,
                  efficiency, options.check != 0 ? std::to_string(wrong).c_str() : "N/A");
      std::fflush(stdout);
    }
  }
  rankComm.barrier();
  return wrongTotal;
}

}  // namespace
}  // namespace slimeccl_perf

int main(int argc, char** argv) {
  using namespace slimeccl_perf;
  const std::string program = "allgather_gemm_perf";
  GemmOptions options;
  ProcessPlacement placement;
  try {
    options = parseGemmOptions({argv + 1, static_cast<size_t>(argc - 1)});
    if (options.help) {
      std::fputs(gemmUsageText(program).c_str(), stdout);
      return 0;
    }
    if (options.version) {
      std::fputs(slimeccl::versionLine(program).c_str(), stdout);
      return 0;
    }
#ifndef SLIMECCL_PERF_WITH_CUDA
    if (options.deviceBuffers) throw UsageError("-D 1 needs a build with CUDA");
#endif
    if (!options.algo.empty()) setenv("SLIMECCL_ALGO", algoEnvValue("allgather", options.algo).c_str(), 1);
    placement = discoverProcessPlacement([](const char* name) -> const char* { return std::getenv(name); });
    requireBootstrapAddress(placement, [](const char* name) -> const char* { return std::getenv(name); });
  } catch (const UsageError& error) {
    std::fprintf(stderr, "%s: %s\nRun '%s -h' for the options.\n", program.c_str(), error.what(), program.c_str());
    return kUsageErrorStatus;
  }
  slimecclUniqueId id{};
  checkCall(slimecclGetUniqueId(&id), "slimecclGetUniqueId", globalRank(placement.rank, options.threads, 0), nullptr);
  LocalProcess process(placement, options.threads, id);
#ifdef SLIMECCL_PERF_WITH_CUDA
  const std::unique_ptr<NcclLibrary> nccl =
      options.deviceBuffers ? std::make_unique<NcclLibrary>(options.ncclLibrary) : nullptr;
#endif
  std::vector<int64_t> wrong(static_cast<size_t>(options.threads), 0);
  std::vector<std::thread> threads;
  for (int thread = 0; thread < options.threads; ++thread) {
    threads.emplace_back([&, thread] {
      try {
#ifdef SLIMECCL_PERF_WITH_CUDA
        if (options.deviceBuffers) {
          wrong[static_cast<size_t>(thread)] = runDeviceRank(process, thread, options, *nccl);
          return;
        }
#endif
        wrong[static_cast<size_t>(thread)] = runRank(process, thread, options);
      } catch (const std::exception& error) {
        std::fprintf(stderr, "rank %d: %s\n", globalRank(placement.rank, options.threads, thread), error.what());
        std::_Exit(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return wrong.front() != 0 ? 1 : 0;
}
