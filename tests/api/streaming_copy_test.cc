// Copies with streaming stores (forced for every op by SLIMECCL_STREAM_COPY_BYTES=1): AllGather,
// Send/Recv and the collectives whose schedules copy locally deliver every byte, at odd sizes and
// odd offsets, in and out of place, from private buffers and from buffers of slimecclMemAlloc.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "harness.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

// A rank's bytes: from the heap, or from slimecclMemAlloc (which shm peers map and copy from).
class Bytes {
 public:
  Bytes(size_t size, bool shared) : shared_(shared) {
    if (shared_) {
      if (size > 0) RANK_CHECK_SUCCESS(slimecclMemAlloc(reinterpret_cast<void**>(&data_), size), nullptr);
    } else {
      heap_.resize(size);
      data_ = heap_.data();
    }
  }
  ~Bytes() {
    if (shared_) slimecclMemFree(data_);
  }
  Bytes(const Bytes&) = delete;
  Bytes& operator=(const Bytes&) = delete;
  uint8_t* data() const { return data_; }

 private:
  bool shared_;
  std::vector<uint8_t> heap_;
  uint8_t* data_ = nullptr;
};

uint8_t byteOf(int rank, size_t i, int round) { return static_cast<uint8_t>(rank * 97 + i * 13 + (i >> 8) + round); }
int32_t intOf(int rank, size_t i) { return static_cast<int32_t>(rank * 1000003 + i * 7); }

// Odd byte counts: blocks start at odd offsets of the receive buffer; the largest is past a chunk.
const size_t kCounts[] = {1, 4099, 70001, 1048579};

using Param = std::tuple<Launch, bool>;  // launch, shared buffers
class StreamingCopies : public ::testing::TestWithParam<Param> {
 protected:
  static RunOptions options() {
    RunOptions o;
    o.env.emplace(std::string("SLIMECCL_STREAM_COPY_BYTES"), std::string("1"));
    return o;
  }
  static Launch launch() { return std::get<0>(GetParam()); }
  static bool shared() { return std::get<1>(GetParam()); }
};

TEST_P(StreamingCopies, AllGatherInAndOutOfPlace) {
  const bool useShared = shared();
  runRanks(
      launch(), 3,
      [useShared](int rank, slimecclComm_t comm) {
        const int nranks = 3;
        for (size_t count : kCounts) {
          for (bool inPlace : {false, true}) {
            Bytes send(count, useShared), recv(count * nranks, useShared);
            uint8_t* mine = inPlace ? recv.data() + rank * count : send.data();
            for (size_t i = 0; i < count; ++i) mine[i] = byteOf(rank, i, inPlace);
            RANK_CHECK_SUCCESS(slimecclAllGather(mine, recv.data(), count, slimecclUint8, comm, nullptr), comm);
            for (int r = 0; r < nranks; ++r)
              for (size_t i = 0; i < count; ++i)
                RANK_CHECK(recv.data()[r * count + i] == byteOf(r, i, inPlace), "count ", count, " in place ", inPlace,
                           " block ", r, " byte ", i);
          }
        }
      },
      options());
}

TEST_P(StreamingCopies, SendRecvRing) {
  const bool useShared = shared();
  runRanks(
      launch(), 3,
      [useShared](int rank, slimecclComm_t comm) {
        const int nranks = 3, next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
        for (size_t count : kCounts) {
          Bytes out(count, useShared), in(count + 1, useShared);
          for (int round = 0; round < 2; ++round) {
            for (size_t i = 0; i < count; ++i) out.data()[i] = byteOf(rank, i, round);
            // One byte in: the receive lands at an odd address.
            RANK_CHECK_SUCCESS(slimecclGroupStart(), nullptr);
            RANK_CHECK_SUCCESS(slimecclSend(out.data(), count, slimecclUint8, next, comm, nullptr), comm);
            RANK_CHECK_SUCCESS(slimecclRecv(in.data() + 1, count, slimecclUint8, prev, comm, nullptr), comm);
            RANK_CHECK_SUCCESS(slimecclGroupEnd(), nullptr);
            for (size_t i = 0; i < count; ++i)
              RANK_CHECK(in.data()[1 + i] == byteOf(prev, i, round), "count ", count, " round ", round, " byte ", i);
          }
        }
      },
      options());
}

TEST_P(StreamingCopies, AllReduceBroadcastAndReduceScatter) {
  const bool useShared = shared();
  runRanks(
      launch(), 3,
      [useShared](int rank, slimecclComm_t comm) {
        const int nranks = 3;
        for (size_t count : {size_t{5}, size_t{70001}, size_t{300007}}) {
          const size_t bytes = count * nranks * sizeof(int32_t);
          Bytes sendBytes(bytes, useShared), recvBytes(bytes, useShared);
          auto* send = reinterpret_cast<int32_t*>(sendBytes.data());
          auto* recv = reinterpret_cast<int32_t*>(recvBytes.data());
          for (size_t i = 0; i < count * nranks; ++i) send[i] = intOf(rank, i);
          RANK_CHECK_SUCCESS(slimecclAllReduce(send, recv, count, slimecclInt32, slimecclSum, comm, nullptr), comm);
          for (size_t i = 0; i < count; ++i)
            RANK_CHECK(recv[i] == intOf(0, i) + intOf(1, i) + intOf(2, i), "AllReduce count ", count, " element ", i);
          RANK_CHECK_SUCCESS(slimecclBroadcast(send, recv, count, slimecclInt32, 1, comm, nullptr), comm);
          for (size_t i = 0; i < count; ++i)
            RANK_CHECK(recv[i] == intOf(1, i), "Broadcast count ", count, " element ", i);
          RANK_CHECK_SUCCESS(slimecclReduceScatter(send, recv, count, slimecclInt32, slimecclSum, comm, nullptr), comm);
          for (size_t i = 0; i < count; ++i) {
            const size_t at = rank * count + i;
            RANK_CHECK(recv[i] == intOf(0, at) + intOf(1, at) + intOf(2, at), "ReduceScatter count ", count,
                       " element ", i);
          }
        }
      },
      options());
}

INSTANTIATE_TEST_SUITE_P(Launches, StreamingCopies,
                         ::testing::Combine(::testing::Values(Launch::kForkedShm, Launch::kForkedSocket,
                                                              Launch::kThreads),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           std::string name = launchName(std::get<0>(info.param));
                           name.append(std::get<1>(info.param) ? "_shared_buffers" : "_private_buffers");
                           return name;
                         });

}  // namespace
}  // namespace slimeccl_test
