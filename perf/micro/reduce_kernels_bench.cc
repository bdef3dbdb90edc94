// Throughput of the reduction kernels, the shared-memory byte FIFO, and copies with and without
// streaming stores, per datatype and size.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "algorithms/reduce.h"
#include "net/shm/byte_fifo.h"
#include "src/base/sys/stream_copy.h"

namespace slimeccl {
namespace {

void reduceSum(benchmark::State& state, slimecclDataType_t type, size_t elementBytes) {
  size_t bytes = static_cast<size_t>(state.range(0));
  size_t count = bytes / elementBytes;
  std::vector<char> a(bytes, 1), b(bytes, 2), out(bytes);
  for (auto _ : state) {
    reduceArrays(out.data(), a.data(), b.data(), count, type, slimecclSum);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

void fifoStream(benchmark::State& state) {
  size_t capacity = 512 * 1024, message = static_cast<size_t>(state.range(0));
  std::vector<char> mapping(ByteFifo::mappingBytes(capacity));
  ByteFifo::format(mapping.data(), capacity);
  ByteFifo writer(mapping.data()), reader(mapping.data());
  std::vector<char> in(message, 3), out(message);
  for (auto _ : state) {
    // Single-threaded: measures the copy cost in and out of the ring, not cross-core traffic.
    for (size_t done = 0; done < message;) {
      size_t n = writer.write(in.data() + done, message - done);
      size_t got = 0;
      while (got < n) got += reader.read(out.data() + done + got, n - got);
      done += n;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(message));
}

// Copies a region of range(0) bytes in 1 MiB pieces (the direct AllGather's chunk) with memcpy or
// with streaming stores; with two threads both cores copy at once, each its own region.
void copyInPieces(benchmark::State& state, bool streaming) {
  size_t bytes = static_cast<size_t>(state.range(0)), piece = size_t{1} << 20;
  std::vector<char> from(bytes, 1), to(bytes, 2);
  for (auto _ : state) {
    for (size_t at = 0; at < bytes; at += piece) {
      size_t n = std::min(piece, bytes - at);
      if (streaming)
        copyStreaming(to.data() + at, from.data() + at, n);
      else
        memcpy(to.data() + at, from.data() + at, n);
    }
    benchmark::DoNotOptimize(to.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

BENCHMARK_CAPTURE(copyInPieces, memcpy, false)->Arg(4 << 20)->Arg(64 << 20)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK_CAPTURE(copyInPieces, streaming, true)->Arg(4 << 20)->Arg(64 << 20)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK_CAPTURE(reduceSum, float, slimecclFloat32, 4)->Range(4 << 10, 16 << 20);
BENCHMARK_CAPTURE(reduceSum, double, slimecclFloat64, 8)->Range(4 << 10, 16 << 20);
BENCHMARK_CAPTURE(reduceSum, int32, slimecclInt32, 4)->Range(4 << 10, 16 << 20);
BENCHMARK_CAPTURE(reduceSum, half, slimecclFloat16, 2)->Range(4 << 10, 16 << 20);
BENCHMARK_CAPTURE(reduceSum, bfloat16, slimecclBfloat16, 2)->Range(4 << 10, 16 << 20);
BENCHMARK(fifoStream)->Range(4 << 10, 64 << 20);

}  // namespace
}  // namespace slimeccl

BENCHMARK_MAIN();
