#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "src/device/kernel_table.cuh"
#include "src/device/line_protocol.h"
#include "src/device/reduce_arith.cuh"

namespace slimeccl {
namespace {

// Polls of a line between two looks at the words that stop a kernel: the comm's failed word in
// device memory, and (every kReleaseEvery polls) the host's release word across PCIe.
constexpr uint32_t kFailedEvery = 256;
constexpr uint32_t kReleaseEvery = 32768;
// Polls after which a waiting thread reports itself stuck to the host (some milliseconds), and again
// every so many after.
constexpr uint32_t kStuckPolls = 16384;

__device__ __forceinline__ void storeLine(uint4* at, uint64_t data, uint32_t flag) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(at), "r"(static_cast<uint32_t>(data)),
               "r"(flag), "r"(static_cast<uint32_t>(data >> 32)), "r"(flag)
               : "memory");
}

__device__ __forceinline__ uint4 loadLine(const uint4* at) {
  uint4 v;
  asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(at)
               : "memory");
  return v;
}

__device__ __forceinline__ uint64_t lineData(uint4 v) { return v.x | (static_cast<uint64_t>(v.z) << 32); }

// A step's flag: never 0, which is what a cleared line holds.
__device__ __forceinline__ uint32_t flagOf(uint64_t step) {
  const auto flag = static_cast<uint32_t>(step);
  return flag == 0 ? 1 : flag;
}

// Up to 8 bytes at `p`, as wide as its alignment allows; the bytes past `n` are 0.
__device__ __forceinline__ uint64_t loadBytes(const char* p, int n) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  if (n == 8 && (at & 7) == 0) return *reinterpret_cast<const uint64_t*>(p);
  uint64_t v = 0;
  if (n == 8 && (at & 3) == 0) {
    const auto* w = reinterpret_cast<const uint32_t*>(p);
    return w[0] | (static_cast<uint64_t>(w[1]) << 32);
  }
  for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

__device__ __forceinline__ void storeBytes(char* p, uint64_t v, int n) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  if (n == 8 && (at & 7) == 0) {
    *reinterpret_cast<uint64_t*>(p) = v;
    return;
  }
  if (n == 8 && (at & 3) == 0) {
    auto* w = reinterpret_cast<uint32_t*>(p);
    w[0] = static_cast<uint32_t>(v);
    w[1] = static_cast<uint32_t>(v >> 32);
    return;
  }
  for (int i = 0; i < n; ++i) p[i] = static_cast<char>(v >> (8 * i));
}

// What every wait of a block checks: its own stop word, the comm's failed word, the host's release.
// A wait that lasts reports itself to the host (which times the comm out if it goes on), and says
// when it ended.
struct Stopper {
  LineState* state;
  volatile LineProgress* progress;
  volatile int* stop;  // shared by the block
  LineSignature call;
  uint32_t polls = 0;
  uint32_t reports = 0;   // of this thread
  uint64_t reported = 0;  // the id of the wait it reported, until that ends

  // False once the block must give up (and then the whole kernel does).
  __device__ bool keepWaiting() {
    if (*stop) return false;
    if (++polls % kFailedEvery != 0) return true;
    bool give = *reinterpret_cast<volatile uint32_t*>(&state->failed) != 0;
    if (!give && polls % kReleaseEvery == 0) give = progress->release != 0;
    if (give) {
      atomicExch(&state->failed, 1u);
      *stop = 1;
      return false;
    }
    if (polls % kStuckPolls == 0) {
      reported = (static_cast<uint64_t>(blockIdx.x) << 44) | (static_cast<uint64_t>(threadIdx.x) << 32) | ++reports;
      progress->stuckCall.count = call.count;
      progress->stuckCall.coll = call.coll;
      progress->stuckCall.type = call.type;
      progress->stuckCall.redOp = call.redOp;
      progress->stuckCall.root = call.root;
      progress->stuckId = reported;
    }
    return true;
  }
  // A wait ended: the thread starts counting afresh, and a wait it reported is over. Only the wait
  // reported last clears the report: one that ended while another thread's later report stands
  // would otherwise leave stuckId != resolvedId for good, and the host would time out a comm that
  // runs. A wait still on when the last reporter clears it reports itself again kStuckPolls later;
  // a clear that races another thread's report can still leave one standing, which the host takes
  // as ended once it has not changed for a second (GpuPeers::linesStuck).
  __device__ void waited() {
    polls = 0;
    if (reported != 0 && progress->stuckId == reported) progress->resolvedId = reported;
    reported = 0;
  }
};

// A line of step `flag` at `at`, waited for; false when the wait gave up.
__device__ __forceinline__ bool awaitLine(const uint4* at, uint32_t flag, Stopper& stopper, uint64_t* data) {
  for (;;) {
    const uint4 v = loadLine(at);
    if (v.y == flag && v.w == flag) {
      *data = lineData(v);
      stopper.waited();
      return true;
    }
    if (!stopper.keepWaiting()) return false;
  }
}

__device__ __forceinline__ void clearLine(uint4* at) { storeLine(at, 0, 0); }

__device__ __forceinline__ uint64_t loadAck(const char* zone, size_t at) {
  return *reinterpret_cast<const volatile uint64_t*>(zone + at);
}

// The rank's view of the job, shared by its blocks' steps.
struct Context {
  const LineJob& job;
  LineState* state;
  Stopper& stopper;
  int lane;

  __device__ char* zone(int rank) const { return reinterpret_cast<char*>(job.zones[rank]); }
  __device__ uint4* area(int holder, int from, uint64_t step) const {
    return reinterpret_cast<uint4*>(zone(holder) + lineStepArea(from, lane, static_cast<int>(step % kLineSlots)));
  }
  // The bytes of message `m` that step `s` of this lane carries, and where they start.
  __device__ void chunk(const LineMessage& m, uint64_t s, uint64_t* offset, int* length) const {
    const uint64_t first = (s * m.lanes + lane) * m.chunkBytes;
    *offset = first;
    *length = first >= m.bytes ? 0 : static_cast<int>(m.bytes - first < m.chunkBytes ? m.bytes - first : m.chunkBytes);
  }
  // The steps this lane takes of message `m` (lane 0 takes one even when the message is empty).
  __device__ uint32_t steps(const LineMessage& m) const {
    if (m.chunks == 0) return lane == 0 ? 1 : 0;
    const auto l = static_cast<uint32_t>(lane), lanes = static_cast<uint32_t>(m.lanes);
    return m.chunks > l ? (m.chunks - l + lanes - 1) / lanes : 0;
  }
};

// The bytes as they are (Transform of an exchange).
struct AsTheyAre {
  __device__ uint64_t operator()(uint64_t bytes) const { return bytes; }
};

// Sends step `s` of this lane of message `m` to its peer as the channel's step `t` (from 1), once the
// step before in the same slot is acknowledged. `src`: where the message's bytes are read; each
// line's bytes go as `transform` gives them.
template <typename Transform>
__device__ void sendStep(Context& c, const LineMessage& m, const char* src, uint64_t s, uint64_t t,
                         Transform transform) {
  const int me = c.job.rank;
  if (t > kLineSlots) {
    const size_t ack = lineAck(c.job.nranks, m.peer, c.lane, static_cast<int>(t % kLineSlots));
    while (loadAck(c.zone(me), ack) < t - kLineSlots)
      if (!c.stopper.keepWaiting()) return;
    c.stopper.waited();
  }
  uint4* area = c.area(m.peer, me, t);
  const uint32_t flag = flagOf(t);
  if (c.lane == 0 && s == 0 && threadIdx.x < 2) {
    const LineSignature& sig = m.signature;
    const uint64_t word = threadIdx.x == 0 ? sig.count
                                           : (sig.coll | (sig.type << 8) | (sig.redOp << 16) |
                                              (static_cast<uint64_t>(static_cast<uint32_t>(sig.root)) << 32));
    storeLine(area + threadIdx.x, word, flag);
  }
  uint64_t offset;
  int length;
  c.chunk(m, s, &offset, &length);
  const int lines = (length + 7) / 8;
  for (int j = threadIdx.x; j < lines; j += kLineThreads) {
    const int n = length - 8 * j < 8 ? length - 8 * j : 8;
    storeLine(area + 2 + j, transform(loadBytes(src + offset + 8 * j, n)), flag);
  }
}

__device__ bool sameCall(const LineSignature& a, const LineSignature& b) {
  return a.count == b.count && a.coll == b.coll && a.type == b.type && a.redOp == b.redOp && a.root == b.root;
}

// The first step of a message's lane 0: its signature, checked by thread `checker` against what this
// rank expects (a thread of the last warp, which small messages leave without lines, so the check
// runs beside the wait for the data). A mismatch is reported (once per comm) and stops the kernel.
__device__ void checkSignature(Context& c, const LineMessage& m, const uint4* area, uint32_t flag, int checker,
                               volatile int* stop) {
  if (c.lane != 0 || static_cast<int>(threadIdx.x) != checker) return;
  uint64_t words[2];
  for (int i = 0; i < 2; ++i)
    if (!awaitLine(area + i, flag, c.stopper, &words[i])) return;
  LineSignature theirs;
  theirs.count = words[0];
  theirs.coll = static_cast<uint8_t>(words[1]);
  theirs.type = static_cast<uint8_t>(words[1] >> 8);
  theirs.redOp = static_cast<uint8_t>(words[1] >> 16);
  theirs.root = static_cast<int32_t>(words[1] >> 32);
  clearLine(const_cast<uint4*>(area));
  clearLine(const_cast<uint4*>(area) + 1);
  if (sameCall(theirs, m.signature)) return;
  *stop = 1;
  if (atomicCAS(&c.state->failed, 0u, 1u) != 0) return;
  auto* progress = const_cast<LineProgress*>(c.stopper.progress);
  progress->mismatchPeer = m.peer;
  progress->mine = m.signature;
  progress->theirs = theirs;
  __threadfence_system();
  *reinterpret_cast<volatile uint32_t*>(&progress->mismatch) = 1;
}

// The acknowledgement of the channel's step `t` from `peer`, by one thread once every thread of the
// block has read and cleared its lines: the reads are done (their values are stored), and a fence of
// the GPU's scope puts the clears in this GPU's memory before the peer can see the acknowledgement
// and write the slot again. (A fence of the system's scope would also wait for every line this
// thread sent over NVLink, about a microsecond.)
__device__ void acknowledgeStep(const Context& c, int peer, uint64_t t) {
  __threadfence();
  *reinterpret_cast<volatile uint64_t*>(
      c.zone(peer) + lineAck(c.job.nranks, c.job.rank, c.lane, static_cast<int>(t % kLineSlots))) = t;
}

// This lane's acknowledgement of the channel's step `t` from `peer`, in the peer's zone.
__device__ void acknowledge(const Context& c, int peer, uint64_t t) {
  __syncthreads();
  if (threadIdx.x == 0) acknowledgeStep(c, peer, t);
}

// Receives step `s` of this lane of message `m` (the channel's step `t`) into `dst`.
__device__ void receiveStep(Context& c, const LineMessage& m, char* dst, uint64_t s, uint64_t t, volatile int* stop) {
  uint4* area = c.area(c.job.rank, m.peer, t);
  const uint32_t flag = flagOf(t);
  if (s == 0) checkSignature(c, m, area, flag, kLineThreads - 1, stop);
  uint64_t offset;
  int length;
  c.chunk(m, s, &offset, &length);
  const int lines = (length + 7) / 8;
  for (int j = threadIdx.x; j < lines && !*stop; j += kLineThreads) {
    uint64_t data;
    if (!awaitLine(area + 2 + j, flag, c.stopper, &data)) break;
    clearLine(area + 2 + j);
    storeBytes(dst + offset + 8 * j, data, length - 8 * j < 8 ? length - 8 * j : 8);
  }
  acknowledge(c, m.peer, t);
}

// Where a send reads its message: its place in the snapshot where the job took one, else its buffer.
__device__ const char* sourceOf(const LineMessage& m) {
  return reinterpret_cast<const char*>(m.snapshotAt != 0 ? m.snapshotAt : m.buffer);
}

// Bytes within the GPU over `threads` threads of which this is `thread`, as wide as the two
// addresses' alignment allows.
__device__ void copyBytes(char* dst, const char* src, uint64_t bytes, uint64_t thread, uint64_t threads) {
  const auto bits = reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src);
  uint64_t done = 0;
  if ((bits & 15) == 0) {
    const uint64_t words = bytes / 16;
    for (uint64_t i = thread; i < words; i += threads)
      reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
    done = words * 16;
  } else if ((bits & 7) == 0) {
    const uint64_t words = bytes / 8;
    for (uint64_t i = thread; i < words; i += threads)
      reinterpret_cast<uint64_t*>(dst)[i] = reinterpret_cast<const uint64_t*>(src)[i];
    done = words * 8;
  } else if ((bits & 3) == 0) {
    const uint64_t words = bytes / 4;
    for (uint64_t i = thread; i < words; i += threads)
      reinterpret_cast<uint32_t*>(dst)[i] = reinterpret_cast<const uint32_t*>(src)[i];
    done = words * 4;
  }
  for (uint64_t i = done + thread; i < bytes; i += threads) dst[i] = src[i];
}

// Every send's source copied into the snapshot by the whole grid, which then meets: after it, a
// receive may overwrite what a send reads.
__device__ void takeSnapshot(const LineJob& job, LineState* state, Stopper& stopper) {
  const uint64_t thread = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  const uint64_t threads = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (int k = 0; k < job.messageCount; ++k) {
    const LineMessage& m = job.messages[k];
    if (m.snapshotAt != 0)
      copyBytes(reinterpret_cast<char*>(m.snapshotAt), reinterpret_cast<const char*>(m.buffer), m.bytes, thread,
                threads);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    volatile uint32_t* generation = &state->snapshotGeneration;
    const uint32_t before = *generation;
    __threadfence();
    if (atomicAdd(&state->snapshotArrivals, 1u) == gridDim.x - 1) {
      state->snapshotArrivals = 0;
      __threadfence();
      *generation = before + 1;
    } else {
      while (*generation == before)
        if (!stopper.keepWaiting()) break;
      stopper.waited();
    }
    __threadfence();
  }
  __syncthreads();
}

// A unit's steps, for this lane: step i of its sends (message by message), then step i of its
// receives, so that neither end of an exchange waits for a step the other has yet to take.
__device__ void runExchange(Context& c, const LineUnit& unit, volatile int* stop) {
  const LineJob& job = c.job;
  const int peer = unit.sends > 0 ? job.messages[unit.firstSend].peer : job.messages[unit.firstRecv].peer;
  uint64_t sendTotal = 0, recvTotal = 0;
  for (int k = unit.firstSend; k < unit.firstSend + unit.sends; ++k) sendTotal += c.steps(job.messages[k]);
  for (int k = unit.firstRecv; k < unit.firstRecv + unit.recvs; ++k) recvTotal += c.steps(job.messages[k]);
  const uint64_t sentBefore = c.state->sentSteps[peer][c.lane];
  const uint64_t receivedBefore = c.state->receivedSteps[peer][c.lane];
  int sendMessage = unit.firstSend, recvMessage = unit.firstRecv;
  uint64_t sendInMessage = 0, recvInMessage = 0;
  const uint64_t total = sendTotal > recvTotal ? sendTotal : recvTotal;
  for (uint64_t i = 0; i < total; ++i) {
    if (i < sendTotal) {
      while (sendInMessage >= c.steps(job.messages[sendMessage])) {
        ++sendMessage;
        sendInMessage = 0;
      }
      const LineMessage& m = job.messages[sendMessage];
      sendStep(c, m, sourceOf(m), sendInMessage++, sentBefore + i + 1, AsTheyAre{});
    }
    if (i < recvTotal) {
      while (recvInMessage >= c.steps(job.messages[recvMessage])) {
        ++recvMessage;
        recvInMessage = 0;
      }
      const LineMessage& m = job.messages[recvMessage];
      receiveStep(c, m, reinterpret_cast<char*>(m.buffer), recvInMessage++, receivedBefore + i + 1, stop);
    }
    __syncthreads();
    if (*stop) return;
  }
  if (threadIdx.x == 0) {
    c.state->sentSteps[peer][c.lane] = sentBefore + sendTotal;
    c.state->receivedSteps[peer][c.lane] = receivedBefore + recvTotal;
  }
}

template <typename E>
union Line {
  uint64_t bits;
  typename Arith<E>::Stored elements[8 / sizeof(typename Arith<E>::Stored)];
};

template <typename E, typename Op>
__device__ uint64_t combineLines(uint64_t held, uint64_t in) {
  Line<E> a, b;
  a.bits = held;
  b.bits = in;
#pragma unroll
  for (int i = 0; i < static_cast<int>(sizeof(a.elements) / sizeof(a.elements[0])); ++i)
    a.elements[i] = combine<E, Op>(a.elements[i], b.elements[i]);
  return a.bits;
}

// A PreMulSum's input times its rank's scalar (the rank's own, before it sends or reduces it).
template <typename E>
struct Premultiplied {
  typename Arith<E>::Stored scalar;
  __device__ uint64_t operator()(uint64_t bytes) const {
    Line<E> a;
    a.bits = bytes;
#pragma unroll
    for (int i = 0; i < static_cast<int>(sizeof(a.elements) / sizeof(a.elements[0])); ++i)
      a.elements[i] = premultiply<E>(a.elements[i], scalar);
    return a.bits;
  }
};

template <typename E>
__device__ uint64_t divideLine(uint64_t held, int divisor) {
  Line<E> a;
  a.bits = held;
#pragma unroll
  for (int i = 0; i < static_cast<int>(sizeof(a.elements) / sizeof(a.elements[0])); ++i)
    a.elements[i] = divide<E>(a.elements[i], divisor);
  return a.bits;
}

// A reduction's steps for this lane: step i of its sends to every peer, then step i of the result
// (where the unit has one: a Reduce's root): each line of every rank's input (this rank's from its
// buffer, the peers' from their lines), in rank order, so every rank computes the same bits.
template <typename E, typename Op, typename Transform>
__device__ void runReduction(Context& c, const LineUnit& unit, Transform own, volatile int* stop) {
  const LineJob& job = c.job;
  const int n = job.nranks, me = job.rank;
  // Every message of the unit has the unit's bytes, and so its shape.
  const LineMessage& shape = job.messages[unit.sends > 0 ? unit.firstSend : unit.firstRecv];
  const uint64_t steps = c.steps(shape);
  const auto* input = reinterpret_cast<const char*>(unit.src);
  auto* out = reinterpret_cast<char*>(unit.dst);
  for (uint64_t i = 0; i < steps; ++i) {
    for (int k = unit.firstSend; k < unit.firstSend + unit.sends; ++k) {
      const LineMessage& m = job.messages[k];
      sendStep(c, m, sourceOf(m), i, c.state->sentSteps[m.peer][c.lane] + i + 1, own);
    }
    if (unit.dst != 0) {
      for (int k = unit.firstRecv; k < unit.firstRecv + unit.recvs; ++k) {
        const LineMessage& m = job.messages[k];
        if (i == 0)
          checkSignature(c, m, c.area(me, m.peer, c.state->receivedSteps[m.peer][c.lane] + 1),
                         flagOf(c.state->receivedSteps[m.peer][c.lane] + 1), kLineThreads - 1 - (k - unit.firstRecv),
                         stop);
      }
      uint64_t offset;
      int length;
      c.chunk(shape, i, &offset, &length);
      const int lines = (length + 7) / 8;
      for (int j = threadIdx.x; j < lines && !*stop; j += kLineThreads) {
        const int bytes = length - 8 * j < 8 ? length - 8 * j : 8;
        // Every rank's input in rank order: this rank's from its buffer, the peers' from their lines.
        uint64_t held = 0;
        bool ok = true;
        for (int r = 0, k = unit.firstRecv; r < n && ok; ++r) {
          uint64_t in;
          if (r == me) {
            in = own(loadBytes(input + offset + 8 * j, bytes));
          } else {
            const LineMessage& m = job.messages[k++];
            const uint64_t t = c.state->receivedSteps[m.peer][c.lane] + i + 1;
            uint4* line = c.area(me, m.peer, t) + 2 + j;
            ok = awaitLine(line, flagOf(t), c.stopper, &in);
            if (ok) clearLine(line);
          }
          held = r == 0 ? in : combineLines<E, Op>(held, in);
        }
        if (!ok) break;
        if (job.divisor != 0) held = divideLine<E>(held, job.divisor);
        storeBytes(out + offset + 8 * j, held, bytes);
      }
      __syncthreads();
      for (int k = unit.firstRecv; k < unit.firstRecv + unit.recvs && threadIdx.x == 0; ++k) {
        const LineMessage& m = job.messages[k];
        acknowledgeStep(c, m.peer, c.state->receivedSteps[m.peer][c.lane] + i + 1);
      }
    }
    __syncthreads();
    if (*stop) return;
  }
  if (threadIdx.x == 0) {
    for (int k = unit.firstSend; k < unit.firstSend + unit.sends; ++k)
      c.state->sentSteps[job.messages[k].peer][c.lane] += steps;
    for (int k = unit.firstRecv; k < unit.firstRecv + unit.recvs; ++k)
      c.state->receivedSteps[job.messages[k].peer][c.lane] += steps;
  }
}

// A PreMulSum's scalar: read where it lies when the kernel starts (what the stream wrote before the
// op), or taken from the call.
template <typename Stored>
__device__ Stored scalarOf(const LineJob& job) {
  if (job.scalarPointer != 0) return *reinterpret_cast<const volatile Stored*>(job.scalarPointer);
  Stored value;
  memcpy(&value, &job.scalarBits, sizeof(Stored));
  return value;
}

// Two blocks fit an SM (at most 64 registers a thread), so a kernel's blocks (up to 32 lanes for each
// of 7 peers, and the copies) are all resident at once on an idle GPU: a block may wait for a peer's
// block that waits for another of this kernel's.
// Copies: element type and op do not matter. Reductions: E and Op, and whether inputs are
// multiplied by their rank's scalar first.
template <typename E, typename Op, bool kPreMul>
__global__ void __launch_bounds__(kLineThreads, 2) lineKernel(LineJob job) {
  using Stored = typename Arith<E>::Stored;
#if __CUDA_ARCH__ >= 900
  // Launched as a dependent of the stream's kernel before (launchLines): the next kernel may start its
  // launch now, beside this one, and this one reads nothing the kernel before wrote until it is done.
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __shared__ int stop;
  auto* state = reinterpret_cast<LineState*>(job.state);
  auto* progress = reinterpret_cast<LineProgress*>(job.progress);
  if (threadIdx.x == 0) stop = 0;
  __syncthreads();
  Stopper stopper{state, progress, &stop, job.signature};
  if (job.snapshot && !stop) takeSnapshot(job, state, stopper);
  int u = 0;
  while (u + 1 < job.unitCount && job.units[u + 1].firstBlock <= blockIdx.x) ++u;
  const LineUnit& unit = job.units[u];
  Context c{job, state, stopper, static_cast<int>(blockIdx.x) - unit.firstBlock};
  if (!stop) {
    switch (unit.kind) {
      case LineUnitKind::Exchange: runExchange(c, unit, &stop); break;
      case LineUnitKind::Reduction:
        if constexpr (kPreMul)
          runReduction<E, Op>(c, unit, Premultiplied<E>{scalarOf<Stored>(job)}, &stop);
        else
          runReduction<E, Op>(c, unit, AsTheyAre{}, &stop);
        break;
      case LineUnitKind::Copy:
        copyBytes(reinterpret_cast<char*>(unit.dst), reinterpret_cast<const char*>(unit.src), unit.bytes,
                  c.lane * static_cast<uint64_t>(kLineThreads) + threadIdx.x,
                  static_cast<uint64_t>(unit.lanes) * kLineThreads);
        break;
    }
  }
  // The block's counters and outputs are written before it counts as done.
  __syncthreads();
  if (job.eager && threadIdx.x == 0) {
    __threadfence();
    atomicAdd(&state->doneBlocks, 1u);
  }
}

template <typename E>
struct LineKernels {
  static inline const void* const kernels[kReductionKernelOps] = {
      reinterpret_cast<const void*>(lineKernel<E, SumOp, false>),
      reinterpret_cast<const void*>(lineKernel<E, ProdOp, false>),
      reinterpret_cast<const void*>(lineKernel<E, MaxOp, false>),
      reinterpret_cast<const void*>(lineKernel<E, MinOp, false>),
      reinterpret_cast<const void*>(lineKernel<E, SumOp, true>)};
};
using LineKernelTable = KernelTable<LineKernels>;

// By device whose kernels are loaded: whether it launches a kernel as a dependent of the kernel
// before (compute capability 9.0 on).
std::atomic<bool> dependentLaunches[LineKernelTable::kMaxDevices];

}  // namespace

bool loadLineKernels(int device) {
  if (!LineKernelTable::load(device)) return false;
  int major = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  dependentLaunches[device] = major >= 9;
  return true;
}

int launchLines(const LineJob& job, int device, slimecclDataType_t type, slimecclRedOp_t op, void* stream) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(job.blocks);
  config.blockDim = dim3(kLineThreads);
  config.stream = static_cast<cudaStream_t>(stream);
  // A small op's time is mostly launches: launched as a dependent, the kernel's launch overlaps the
  // end of the kernel before it, and it waits on the GPU (griddepcontrol.wait) for that kernel's
  // writes, as if launched after it.
  cudaLaunchAttribute dependent{};
  dependent.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  dependent.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &dependent;
  config.numAttrs = dependentLaunches[device] ? 1 : 0;
  void* args[] = {const_cast<LineJob*>(&job)};
  return static_cast<int>(cudaLaunchKernelExC(&config, LineKernelTable::of(type, op, job.premul != 0), args));
}

}  // namespace slimeccl
