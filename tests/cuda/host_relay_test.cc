// The GPU-to-GPU path through host relays (docs/cuda.md, "Through host relays"): with
// SLIMECCL_P2P_DISABLE=1 every op on device buffers and a CUDA-ordered stream crosses the relays
// on copy engines, with no host thread between the ranks. Every op in and out of place, at counts
// of one chunk, of several rounds of the slots, and between; every type and op of the reductions; a
// PreMulSum; groups of messages with several per peer and to the rank itself; a captured graph
// replayed; an abort that lets a waiting stream go. Each test checks the data and, through
// slimecclCommGetDevicePathInfo and the op's route, that the ops went through the relays. Ranks are
// processes, which may share one GPU; threads run where each has a GPU of its own.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "buffers.h"
#include "device_values.h"
#include "gpu_ranks.h"
#include "harness.h"
#include "premul_sum_values.h"
#include "rank_check.h"
#include "reduction_expectations.h"

namespace slimeccl_test {
namespace {

constexpr size_t kSlotBytes = 64 * 1024;

// Relays forced, with slots of 64 KiB so that modest counts take several rounds of them.
RunOptions relaysOn(RunOptions options = {}) {
  options.env["SLIMECCL_P2P_DISABLE"] = "1";
  options.env["SLIMECCL_RELAY_SLOT_BYTES"] = std::to_string(kSlotBytes);
  return options;
}

// Skips the layout where the GPUs do not allow it: threads need a GPU each.
#define SKIP_WITHOUT_THE_LAYOUTS_GPUS(launch)                  \
  SKIP_WITHOUT_A_GPU();                                        \
  if ((launch) != Launch::kForkedShm && usableGpus() < kRanks) \
  GTEST_SKIP() << "ranks that are threads need a GPU each: " << usableGpus() << " usable here"

// Every op since `before` went through the relays: `ops` of them.
void checkRelayed(slimecclComm_t comm, const slimecclDevicePathInfo& before, unsigned long long ops) {
  const slimecclDevicePathInfo now = pathOf(comm);
  RANK_CHECK(now.gpuToGpu == 1 && now.hostRelays == 1, "the comm has no path through host relays");
  RANK_CHECK(now.opsGpuToGpu - before.opsGpuToGpu == ops, "ops GPU to GPU: ", now.opsGpuToGpu - before.opsGpuToGpu,
             " of ", ops);
  RANK_CHECK(now.opsRelayed - before.opsRelayed == ops, "ops relayed: ", now.opsRelayed - before.opsRelayed, " of ",
             ops);
  RANK_CHECK(now.opsStaged == before.opsStaged, "ops staged: ", now.opsStaged - before.opsStaged);
  RANK_CHECK(now.opsBySms == before.opsBySms && now.opsByLines == before.opsByLines, "a kernel moved bytes");
  slimecclOpRoute route;
  RANK_CHECK_SUCCESS(slimecclCommGetLastOpRoute(comm, &route), comm);
  RANK_CHECK(route.route == slimecclRouteGpuToGpu && strcmp(route.algorithm, "relay") == 0, "route ", route.route,
             " algorithm '", route.algorithm, "'");
}

// Counts within one chunk, at one chunk of ints, and over several rounds of the four slots.
const size_t kCounts[] = {1, 4099, kSlotBytes / 4, 300001};

class HostRelays : public ::testing::TestWithParam<Launch> {};

TEST_P(HostRelays, EveryOpInAndOutOfPlaceGoesThroughTheRelays) {
  SKIP_WITHOUT_THE_LAYOUTS_GPUS(GetParam());
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const int next = (rank + 1) % kRanks, prev = (rank + kRanks - 1) % kRanks;
        for (size_t count : kCounts)
          for (bool inPlace : {false, true}) {
            const slimecclDevicePathInfo before = pathOf(comm);
            Ints send(count * kRanks), recv(count * kRanks), bsend(count), brecv(count), asend(count * kRanks),
                arecv(count * kRanks), rsend(count * kRanks), rrecv(count * kRanks), msg(count), got(count);
            int32_t* mine = inPlace ? recv.data + rank * count : send.data;
            (inPlace ? recv : send).write(valuesOf(rank, count), inPlace ? rank * count : 0);
            RANK_CHECK_SUCCESS(slimecclAllGather(mine, recv.data, count, slimecclInt32, comm, gpu.stream), comm);
            const int root = static_cast<int>(count % kRanks);
            Ints& bsource = inPlace ? brecv : bsend;
            if (rank == root) bsource.write(valuesOf(root, count, 0, 3));
            RANK_CHECK_SUCCESS(
                slimecclBroadcast(bsource.data, brecv.data, count, slimecclInt32, root, comm, gpu.stream), comm);
            Ints& adest = inPlace ? asend : arecv;
            asend.write(valuesOf(rank, count * kRanks));
            RANK_CHECK_SUCCESS(slimecclAlltoAll(asend.data, adest.data, count, slimecclInt32, comm, gpu.stream), comm);
            // Sums of every rank's values: AllReduce, ReduceScatter and Reduce of the same input.
            Ints& rsource = inPlace ? rrecv : rsend;
            rsource.write(valuesOf(rank, count * kRanks, 0, 5));
            RANK_CHECK_SUCCESS(
                slimecclAllReduce(rsource.data, rrecv.data, count, slimecclInt32, slimecclSum, comm, gpu.stream), comm);
            gpu.sync();
            std::vector<int32_t> reduced = rrecv.read();
            rsource.write(valuesOf(rank, count * kRanks, 0, 5));
            int32_t* rsOut = inPlace ? rrecv.data + rank * count : rrecv.data;
            RANK_CHECK_SUCCESS(
                slimecclReduceScatter(rsource.data, rsOut, count, slimecclInt32, slimecclSum, comm, gpu.stream), comm);
            gpu.sync();
            std::vector<int32_t> scattered = rrecv.read();
            rsource.write(valuesOf(rank, count * kRanks, 0, 5));
            RANK_CHECK_SUCCESS(
                slimecclReduce(rsource.data, rrecv.data, count, slimecclInt32, slimecclSum, root, comm, gpu.stream),
                comm);
            // A sendrecv ring: in place, each rank receives into the buffer it sends.
            msg.write(valuesOf(rank, count, 0, 7));
            Ints& into = inPlace ? msg : got;
            RANK_CHECK_SUCCESS(slimecclGroupStart(), comm);
            RANK_CHECK_SUCCESS(slimecclSend(msg.data, count, slimecclInt32, next, comm, gpu.stream), comm);
            RANK_CHECK_SUCCESS(slimecclRecv(into.data, count, slimecclInt32, prev, comm, gpu.stream), comm);
            RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
            gpu.sync();
            checkRelayed(comm, before, 8);
            const std::vector<int32_t> gathered = recv.read(), bgot = brecv.read(), agot = adest.read(),
                                       rootGot = rrecv.read(), ring = into.read();
            auto sumOf = [&](size_t i) {
              int32_t sum = 0;
              for (int r = 0; r < kRanks; ++r) sum += valueOf(r, i, 5);
              return sum;
            };
            for (int r = 0; r < kRanks; ++r)
              for (size_t i = 0; i < count; ++i) {
                RANK_CHECK(gathered[r * count + i] == valueOf(r, i), "AllGather count ", count, " in place ", inPlace,
                           " block ", r, " element ", i);
                RANK_CHECK(agot[r * count + i] == valueOf(r, rank * count + i), "AlltoAll count ", count, " in place ",
                           inPlace, " from ", r, " element ", i);
              }
            for (size_t i = 0; i < count; ++i) {
              RANK_CHECK(bgot[i] == valueOf(root, i, 3), "Broadcast count ", count, " element ", i);
              RANK_CHECK(reduced[i] == sumOf(i), "AllReduce count ", count, " in place ", inPlace, " element ", i);
              RANK_CHECK(scattered[(inPlace ? rank * count : 0) + i] == sumOf(rank * count + i), "ReduceScatter count ",
                         count, " in place ", inPlace, " element ", i);
              if (rank == root)
                RANK_CHECK(rootGot[i] == sumOf(i), "Reduce count ", count, " in place ", inPlace, " element ", i);
              RANK_CHECK(ring[i] == valueOf(prev, i, 7), "Send/Recv count ", count, " in place ", inPlace, " element ",
                         i);
            }
          }
      },
      relaysOn());
}

const slimecclDataType_t kTypes[] = {slimecclInt8,    slimecclUint8,   slimecclInt32,   slimecclUint32,
                                     slimecclInt64,   slimecclUint64,  slimecclFloat16, slimecclFloat32,
                                     slimecclFloat64, slimecclBfloat16};

TEST_P(HostRelays, EveryTypeAndOpOfTheReductions) {
  SKIP_WITHOUT_THE_LAYOUTS_GPUS(GetParam());
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        // Within a chunk, and over several chunks of every type's width (the last part shorter).
        for (size_t count : {size_t{1031}, size_t{40009}}) {
          DeviceBytes send(count * kRanks * 8), recv(count * kRanks * 8);
          for (slimecclDataType_t type : kTypes)
            for (slimecclRedOp_t op : kAllOps) {
              const ReductionValues values(type, op, kRanks, 31 * type + op);
              const size_t elem = datatypeSize(type);
              std::vector<char> input(count * kRanks * elem);
              values.fillInputs(input.data(), rank, 0, count * kRanks);
              const slimecclDevicePathInfo before = pathOf(comm);
              send.write(input);
              RANK_CHECK_SUCCESS(slimecclAllReduce(send.data, recv.data, count, type, op, comm, gpu.stream), comm);
              gpu.sync();
              std::string mismatch = values.resultMismatch(recv.read(0, count * elem).data(), 0, count);
              RANK_CHECK(mismatch.empty(), "AllReduce type ", type, " op ", opName(op), " count ", count, ": ",
                         mismatch);
              RANK_CHECK_SUCCESS(slimecclReduceScatter(send.data, recv.data, count, type, op, comm, gpu.stream), comm);
              gpu.sync();
              mismatch = values.resultMismatch(recv.read(0, count * elem).data(), rank * count, count);
              RANK_CHECK(mismatch.empty(), "ReduceScatter type ", type, " op ", opName(op), " count ", count, ": ",
                         mismatch);
              RANK_CHECK_SUCCESS(slimecclReduce(send.data, recv.data, count, type, op, kRanks - 1, comm, gpu.stream),
                                 comm);
              gpu.sync();
              if (rank == kRanks - 1) {
                mismatch = values.resultMismatch(recv.read(0, count * elem).data(), 0, count);
                RANK_CHECK(mismatch.empty(), "Reduce type ", type, " op ", opName(op), " count ", count, ": ",
                           mismatch);
              }
              checkRelayed(comm, before, 3);
            }
        }
      },
      relaysOn());
}

TEST_P(HostRelays, PreMulSumWithAHostScalar) {
  SKIP_WITHOUT_THE_LAYOUTS_GPUS(GetParam());
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const size_t count = 50001;
        DeviceBytes send(count * kRanks * 4), recv(count * kRanks * 4), scalarOnGpu(4);
        writePreMulInputs(rank, send, count * kRanks);
        float hostScalar;
        slimecclRedOp_t immediate, onDevice;
        makePreMulSumOps(rank, comm, &hostScalar, scalarOnGpu.data, &immediate, &onDevice);
        const slimecclDevicePathInfo before = pathOf(comm);
        RANK_CHECK_SUCCESS(slimecclAllReduce(send.data, recv.data, count, slimecclFloat32, immediate, comm, gpu.stream),
                           comm);
        gpu.sync();
        expectPreMulSum(recv, "AllReduce, host scalar", count, 0, 0);
        RANK_CHECK_SUCCESS(
            slimecclReduceScatter(send.data, recv.data, count, slimecclFloat32, immediate, comm, gpu.stream), comm);
        gpu.sync();
        expectPreMulSum(recv, "ReduceScatter, host scalar", count, rank * count, 0);
        checkRelayed(comm, before, 2);
        // A peer cannot read a scalar in this GPU's memory: that op crosses host staging instead.
        const float value = preMulScalar(rank, 1);
        CUDA_RANK_CHECK(cudaMemcpyAsync(scalarOnGpu.data, &value, 4, cudaMemcpyHostToDevice, gpu.cuda));
        RANK_CHECK_SUCCESS(slimecclAllReduce(send.data, recv.data, count, slimecclFloat32, onDevice, comm, gpu.stream),
                           comm);
        gpu.sync();
        expectPreMulSum(recv, "AllReduce, device scalar", count, 0, 1);
        const slimecclDevicePathInfo after = pathOf(comm);
        RANK_CHECK(after.opsStaged == before.opsStaged + 1 && after.opsRelayed == before.opsRelayed + 2,
                   "the device scalar's op: staged ", after.opsStaged - before.opsStaged);
        RANK_CHECK_SUCCESS(slimecclRedOpDestroy(immediate, comm), comm);
        RANK_CHECK_SUCCESS(slimecclRedOpDestroy(onDevice, comm), comm);
      },
      relaysOn());
}

// A group with two messages of different sizes to each peer, one to the rank itself, and the Recvs
// listed before the Sends.
TEST_P(HostRelays, GroupsOfMessagesWithSeveralPerPeerAndToItself) {
  SKIP_WITHOUT_THE_LAYOUTS_GPUS(GetParam());
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const size_t small = 777, large = 100003;
        std::vector<std::unique_ptr<Ints>> sends, recvs;
        const slimecclDevicePathInfo before = pathOf(comm);
        RANK_CHECK_SUCCESS(slimecclGroupStart(), comm);
        for (int peer = 0; peer < kRanks; ++peer)
          for (size_t count : {large, small}) {
            recvs.push_back(std::make_unique<Ints>(count));
            RANK_CHECK_SUCCESS(slimecclRecv(recvs.back()->data, count, slimecclInt32, peer, comm, gpu.stream), comm);
          }
        for (int peer = 0; peer < kRanks; ++peer)
          for (size_t count : {large, small}) {
            sends.push_back(std::make_unique<Ints>(count));
            sends.back()->write(valuesOf(rank, count, 0, peer + static_cast<int>(count % 5)));
            RANK_CHECK_SUCCESS(slimecclSend(sends.back()->data, count, slimecclInt32, peer, comm, gpu.stream), comm);
          }
        RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
        gpu.sync();
        checkRelayed(comm, before, 4 * kRanks);
        size_t k = 0;
        for (int peer = 0; peer < kRanks; ++peer)
          for (size_t count : {large, small}) {
            const std::vector<int32_t> got = recvs[k++]->read();
            for (size_t i = 0; i < count; ++i)
              RANK_CHECK(got[i] == valueOf(peer, i, rank + static_cast<int>(count % 5)), "from ", peer, " count ",
                         count, " element ", i);
          }
      },
      relaysOn());
}

TEST_P(HostRelays, CapturedGraphReplaysWithNewInputs) {
  SKIP_WITHOUT_THE_LAYOUTS_GPUS(GetParam());
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const size_t count = 70001;
        const int next = (rank + 1) % kRanks, prev = (rank + kRanks - 1) % kRanks;
        Ints send(count), gathered(count * kRanks), sum(count), both(count), all(count * kRanks);
        cudaGraph_t graph = nullptr;
        cudaGraphExec_t exec = nullptr;
        CUDA_RANK_CHECK(cudaStreamBeginCapture(gpu.cuda, cudaStreamCaptureModeThreadLocal));
        RANK_CHECK_SUCCESS(slimecclAllGather(send.data, gathered.data, count, slimecclInt32, comm, gpu.stream), comm);
        RANK_CHECK_SUCCESS(slimecclAllReduce(send.data, sum.data, count, slimecclInt32, slimecclSum, comm, gpu.stream),
                           comm);
        RANK_CHECK_SUCCESS(slimecclGroupStart(), comm);
        RANK_CHECK_SUCCESS(slimecclSend(both.data, count, slimecclInt32, next, comm, gpu.stream), comm);
        RANK_CHECK_SUCCESS(slimecclRecv(both.data, count, slimecclInt32, prev, comm, gpu.stream), comm);
        RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
        RANK_CHECK_SUCCESS(slimecclAlltoAll(all.data, all.data, count, slimecclInt32, comm, gpu.stream), comm);
        CUDA_RANK_CHECK(cudaStreamEndCapture(gpu.cuda, &graph));
        CUDA_RANK_CHECK(cudaGraphInstantiate(&exec, graph, 0));
        checkRelayed(comm, slimecclDevicePathInfo{}, 5);
        for (int replay = 0; replay < 200; ++replay) {
          const std::vector<int32_t> input = valuesOf(rank, count, 0, replay),
                                     blocks = valuesOf(rank, count * kRanks, 0, replay);
          CUDA_RANK_CHECK(
              cudaMemcpyAsync(send.data, input.data(), count * sizeof(int32_t), cudaMemcpyHostToDevice, gpu.cuda));
          CUDA_RANK_CHECK(
              cudaMemcpyAsync(both.data, input.data(), count * sizeof(int32_t), cudaMemcpyHostToDevice, gpu.cuda));
          CUDA_RANK_CHECK(cudaMemcpyAsync(all.data, blocks.data(), blocks.size() * sizeof(int32_t),
                                          cudaMemcpyHostToDevice, gpu.cuda));
          CUDA_RANK_CHECK(cudaGraphLaunch(exec, gpu.cuda));
          if (replay % 37 != 0 && replay != 199) continue;
          gpu.sync();
          const std::vector<int32_t> got = gathered.read(), summed = sum.read(), swapped = both.read(),
                                     mixed = all.read();
          for (int r = 0; r < kRanks; ++r)
            for (size_t i = 0; i < count; ++i) {
              RANK_CHECK(got[r * count + i] == valueOf(r, i, replay), "replay ", replay, " block ", r, " element ", i);
              RANK_CHECK(mixed[r * count + i] == valueOf(r, rank * count + i, replay), "replay ", replay,
                         " in-place AlltoAll block ", r, " element ", i);
            }
          for (size_t i = 0; i < count; ++i) {
            int32_t want = 0;
            for (int r = 0; r < kRanks; ++r) want += valueOf(r, i, replay);
            RANK_CHECK(summed[i] == want, "replay ", replay, " AllReduce element ", i);
            RANK_CHECK(swapped[i] == valueOf(prev, i, replay), "replay ", replay, " in-place Recv element ", i);
          }
        }
        gpu.sync();
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
      },
      relaysOn());
}

// Rank 1's stream reaches the AllReduce late: rank 0's stream waits on a relay's flag until the
// abort lets it go.
TEST_P(HostRelays, AbortReleasesAStreamWaitingOnARelay) {
  SKIP_WITHOUT_THE_LAYOUTS_GPUS(GetParam());
  RunOptions options;
  options.teardown = Teardown::kNone;
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const size_t count = 1 << 20;
        Ints send(count), recv(count);
        if (rank == 1) reachTheNextOpLate(gpu);
        RANK_CHECK_SUCCESS(slimecclAllReduce(send.data, recv.data, count, slimecclInt32, slimecclSum, comm, gpu.stream),
                           comm);
        checkRelayed(comm, slimecclDevicePathInfo{}, 1);
        endAbortTest(comm, gpu, rank, "rank 1");
      },
      relaysOn(options));
}

// As PyTorch and other callers capture: the comm's very first op inside a global-mode capture (the
// relays are set up there), then a stream the library has never seen that joins a capture through
// an event; each capture survives, and its graph replays with new inputs.
TEST(HostRelaysCapture, AFirstOpAndAStreamJoiningThroughAnEventAreCaptured) {
  SKIP_WITHOUT_A_GPU();
  runRanks(
      Launch::kForkedShm, kRanks,
      [](int rank, slimecclComm_t comm) {
        RankGpu gpu(rank);
        const size_t count = 40001;
        Ints send(count), sum(count), gathered(count * kRanks);
        cudaGraph_t first = nullptr, second = nullptr;
        CUDA_RANK_CHECK(cudaStreamBeginCapture(gpu.cuda, cudaStreamCaptureModeGlobal));
        RANK_CHECK_SUCCESS(slimecclAllReduce(send.data, sum.data, count, slimecclInt32, slimecclSum, comm, gpu.stream),
                           comm);
        CUDA_RANK_CHECK(cudaStreamEndCapture(gpu.cuda, &first));
        cudaStream_t joined = nullptr;
        cudaEvent_t fork = nullptr, join = nullptr;
        CUDA_RANK_CHECK(cudaStreamCreateWithFlags(&joined, cudaStreamNonBlocking));
        CUDA_RANK_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
        CUDA_RANK_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
        CUDA_RANK_CHECK(cudaStreamBeginCapture(gpu.cuda, cudaStreamCaptureModeGlobal));
        CUDA_RANK_CHECK(cudaEventRecord(fork, gpu.cuda));
        CUDA_RANK_CHECK(cudaStreamWaitEvent(joined, fork, 0));
        slimecclStream_t onJoined = nullptr;
        RANK_CHECK_SUCCESS(slimecclStreamCreateFromCuda(&onJoined, joined), comm);
        RANK_CHECK_SUCCESS(slimecclAllGather(send.data, gathered.data, count, slimecclInt32, comm, onJoined), comm);
        CUDA_RANK_CHECK(cudaEventRecord(join, joined));
        CUDA_RANK_CHECK(cudaStreamWaitEvent(gpu.cuda, join, 0));
        CUDA_RANK_CHECK(cudaStreamEndCapture(gpu.cuda, &second));
        checkRelayed(comm, slimecclDevicePathInfo{}, 2);
        cudaGraphExec_t firstExec = nullptr, secondExec = nullptr;
        CUDA_RANK_CHECK(cudaGraphInstantiate(&firstExec, first, 0));
        CUDA_RANK_CHECK(cudaGraphInstantiate(&secondExec, second, 0));
        for (int replay = 0; replay < 20; ++replay) {
          const std::vector<int32_t> input = valuesOf(rank, count, 0, replay);
          CUDA_RANK_CHECK(
              cudaMemcpyAsync(send.data, input.data(), count * sizeof(int32_t), cudaMemcpyHostToDevice, gpu.cuda));
          CUDA_RANK_CHECK(cudaGraphLaunch(firstExec, gpu.cuda));
          CUDA_RANK_CHECK(cudaGraphLaunch(secondExec, gpu.cuda));
          gpu.sync();
          const std::vector<int32_t> sums = sum.read(), blocks = gathered.read();
          for (size_t i = 0; i < count; ++i) {
            int32_t want = 0;
            for (int r = 0; r < kRanks; ++r) want += valueOf(r, i, replay);
            RANK_CHECK(sums[i] == want, "replay ", replay, " AllReduce element ", i);
          }
          for (int r = 0; r < kRanks; ++r)
            for (size_t i = 0; i < count; ++i)
              RANK_CHECK(blocks[r * count + i] == valueOf(r, i, replay), "replay ", replay, " AllGather block ", r,
                         " element ", i);
        }
        cudaGraphExecDestroy(firstExec);
        cudaGraphExecDestroy(secondExec);
        cudaGraphDestroy(first);
        cudaGraphDestroy(second);
        RANK_CHECK_SUCCESS(slimecclStreamDestroy(onJoined), nullptr);
        cudaEventDestroy(fork);
        cudaEventDestroy(join);
        cudaStreamDestroy(joined);
      },
      relaysOn());
}

INSTANTIATE_TEST_SUITE_P(Layouts, HostRelays, ::testing::Values(Launch::kForkedShm, Launch::kThreads),
                         [](const ::testing::TestParamInfo<Launch>& info) { return launchName(info.param); });

// Without SLIMECCL_P2P_DISABLE, GPUs that reach each other (or ranks sharing one) map each other's
// buffers, and GPUs that do not take the relays.
TEST(HostRelaysOff, OnlyGpusThatCannotReachEachOtherTakeRelays) {
  SKIP_WITHOUT_A_GPU();
  runRanks(Launch::kForkedShm, kRanks, [](int rank, slimecclComm_t comm) {
    RankGpu gpu(rank);
    bool reach = true;
    for (int r = 0; r < kRanks; ++r) {
      const int mine = rank % usableGpus(), theirs = r % usableGpus();
      int can = 1;
      if (mine != theirs) CUDA_RANK_CHECK(cudaDeviceCanAccessPeer(&can, mine, theirs));
      reach = reach && can != 0;
    }
    Ints send(4099), recv(4099 * kRanks);
    RANK_CHECK_SUCCESS(slimecclAllGather(send.data, recv.data, 4099, slimecclInt32, comm, gpu.stream), comm);
    gpu.sync();
    const slimecclDevicePathInfo info = pathOf(comm);
    RANK_CHECK(info.gpuToGpu == 1 && info.hostRelays == (reach ? 0 : 1) && info.opsRelayed == (reach ? 0u : 1u),
               "GPUs reach each other: ", reach, "; relays ", info.hostRelays, ", ops relayed ", info.opsRelayed);
  });
}

}  // namespace
}  // namespace slimeccl_test
