// NCCL's pre-multiplied sum (slimecclRedOpCreatePreMulSum) on host buffers: every rank's input
// times that rank's own scalar, summed, for AllReduce, ReduceScatter and Reduce in and out of place
// over integer and floating types (inputs whose products and sums are exact in each type, so the
// result is compared bit for bit); an operator destroyed while its call still runs on a stream;
// and the refusals, each with its sentence.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "buffers.h"
#include "harness.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

bool isUnsigned(slimecclDataType_t type) {
  return type == slimecclUint8 || type == slimecclUint32 || type == slimecclUint64;
}

// A small integer as the type stores it (exact in every type here, |v| < 2048).
std::vector<char> encode(slimecclDataType_t type, int64_t v) {
  std::vector<char> out(datatypeSize(type));
  const float f = static_cast<float>(v);
  uint32_t fbits;
  memcpy(&fbits, &f, 4);
  switch (type) {
    case slimecclFloat32: memcpy(out.data(), &f, 4); break;
    case slimecclFloat64: {
      const double d = static_cast<double>(v);
      memcpy(out.data(), &d, 8);
      break;
    }
    case slimecclBfloat16: {
      const uint16_t b = static_cast<uint16_t>(fbits >> 16);
      memcpy(out.data(), &b, 2);
      break;
    }
    case slimecclFloat16: {
      uint16_t h = static_cast<uint16_t>((fbits >> 16) & 0x8000);
      if (v != 0) {
        const int exponent = static_cast<int>((fbits >> 23) & 0xff) - 127 + 15;
        h |= static_cast<uint16_t>((exponent << 10) | ((fbits >> 13) & 0x3ff));
      }
      memcpy(out.data(), &h, 2);
      break;
    }
    default: memcpy(out.data(), &v, out.size()); break;  // little-endian: the low bytes, wrapped
  }
  return out;
}

int64_t inputOf(slimecclDataType_t type, int rank, size_t i) {
  const int64_t v = static_cast<int64_t>((i * 7 + rank * 3) % 11);
  return isUnsigned(type) ? v : v - 5;
}
int64_t scalarOf(slimecclDataType_t type, int rank) {
  return isUnsigned(type) || rank % 2 == 0 ? rank + 1 : -(rank + 1);
}

int64_t expectedAt(slimecclDataType_t type, int nranks, size_t i) {
  int64_t sum = 0;
  for (int r = 0; r < nranks; ++r) sum += scalarOf(type, r) * inputOf(type, r, i);
  return sum;
}

enum class Call { kAllReduce, kReduceScatter, kReduce };

// One call with a PreMulSum operator made for it; checks the output bit for bit.
void premulCall(int rank, int nranks, slimecclComm_t comm, Call call, slimecclDataType_t type, bool inPlace) {
  const size_t count = 1003, elem = datatypeSize(type);
  const int root = nranks - 1;
  const size_t inputs = call == Call::kReduceScatter ? count * nranks : count;
  std::vector<char> send, recv(inputs * elem, 0x5a);
  for (size_t i = 0; i < inputs; ++i) {
    const std::vector<char> e = encode(type, inputOf(type, rank, i));
    send.insert(send.end(), e.begin(), e.end());
  }
  if (inPlace) recv = send;
  const std::vector<char> scalar = encode(type, scalarOf(type, rank));
  slimecclRedOp_t op;
  RANK_CHECK_SUCCESS(
      slimecclRedOpCreatePreMulSum(&op, const_cast<char*>(scalar.data()), type, slimecclScalarHostImmediate, comm),
      comm);
  RANK_CHECK(op >= slimecclNumOps, "operator ", static_cast<int>(op));
  const void* source = inPlace ? static_cast<const void*>(recv.data()) : send.data();
  char* out = inPlace && call == Call::kReduceScatter ? recv.data() + rank * count * elem : recv.data();
  switch (call) {
    case Call::kAllReduce:
      RANK_CHECK_SUCCESS(slimecclAllReduce(source, out, count, type, op, comm, nullptr), comm);
      break;
    case Call::kReduceScatter:
      RANK_CHECK_SUCCESS(slimecclReduceScatter(source, out, count, type, op, comm, nullptr), comm);
      break;
    case Call::kReduce:
      RANK_CHECK_SUCCESS(slimecclReduce(source, out, count, type, op, root, comm, nullptr), comm);
      break;
  }
  RANK_CHECK_SUCCESS(slimecclRedOpDestroy(op, comm), comm);
  if (call == Call::kReduce && rank != root) return;
  const size_t first = call == Call::kReduceScatter ? rank * count : 0;
  for (size_t i = 0; i < count; ++i) {
    const std::vector<char> want = encode(type, expectedAt(type, nranks, first + i));
    RANK_CHECK(memcmp(out + i * elem, want.data(), elem) == 0, "call ", static_cast<int>(call), " type ", type,
               " in place ", inPlace, " element ", i, " (want ", expectedAt(type, nranks, first + i), ")");
  }
}

class PreMulSum : public ::testing::TestWithParam<Launch> {};

TEST_P(PreMulSum, EveryReductionAndTypeOnHostBuffers) {
  for (int nranks : {2, 3}) {
    runRanks(GetParam(), nranks, [nranks](int rank, slimecclComm_t comm) {
      for (Call call : {Call::kAllReduce, Call::kReduceScatter, Call::kReduce})
        for (slimecclDataType_t type :
             {slimecclInt8, slimecclUint8, slimecclInt32, slimecclUint32, slimecclInt64, slimecclUint64,
              slimecclFloat16, slimecclFloat32, slimecclFloat64, slimecclBfloat16})
          for (bool inPlace : {false, true}) premulCall(rank, nranks, comm, call, type, inPlace);
    });
  }
}

// NCCL lets a caller destroy an operator once the call that took it has returned: the call keeps
// the scalar it was given.
TEST_P(PreMulSum, AnOperatorDestroyedWhileItsCallRunsOnAStreamStillApplies) {
  runRanks(GetParam(), 2, [](int rank, slimecclComm_t comm) {
    slimecclStream_t stream = nullptr;
    RANK_CHECK_SUCCESS(slimecclStreamCreate(&stream), comm);
    std::vector<float> data(4096, 1.0f + rank), out(4096, 0.0f);
    float scalar = 10.0f * (rank + 1);
    slimecclRedOp_t op;
    RANK_CHECK_SUCCESS(slimecclRedOpCreatePreMulSum(&op, &scalar, slimecclFloat32, slimecclScalarHostImmediate, comm),
                       comm);
    RANK_CHECK_SUCCESS(slimecclAllReduce(data.data(), out.data(), data.size(), slimecclFloat32, op, comm, stream),
                       comm);
    RANK_CHECK_SUCCESS(slimecclRedOpDestroy(op, comm), comm);
    scalar = -1.0f;
    RANK_CHECK_SUCCESS(slimecclStreamSynchronize(stream), comm);
    for (size_t i = 0; i < out.size(); ++i) RANK_CHECK(out[i] == 10.0f * 1 + 20.0f * 2, "element ", i, ": ", out[i]);
    RANK_CHECK_SUCCESS(slimecclStreamDestroy(stream), comm);
  });
}

// Each refusal is slimecclInvalidArgument with a sentence naming the rank and the cause.
TEST_P(PreMulSum, BadArgumentsAreRefusedWithASentence) {
  runRanks(GetParam(), 2, [](int rank, slimecclComm_t comm) {
    float scalar = 2.0f, in = 1.0f, out = 0.0f;
    slimecclRedOp_t op;
    auto refused = [&](slimecclResult_t result, const std::string& words, const char* what) {
      RANK_CHECK(result == slimecclInvalidArgument, what, ": ", resultName(result));
      const std::string text = lastErrorText(comm);
      RANK_CHECK(
          text.find("rank " + std::to_string(rank)) != std::string::npos && text.find(words) != std::string::npos, what,
          ": ", text);
    };
    refused(slimecclRedOpCreatePreMulSum(nullptr, &scalar, slimecclFloat32, slimecclScalarHostImmediate, comm),
            "op is NULL", "NULL op");
    refused(slimecclRedOpCreatePreMulSum(&op, nullptr, slimecclFloat32, slimecclScalarHostImmediate, comm),
            "scalar is NULL", "NULL scalar");
    refused(slimecclRedOpCreatePreMulSum(&op, &scalar, static_cast<slimecclDataType_t>(42), slimecclScalarHostImmediate,
                                         comm),
            "datatype 42", "bad datatype");
    refused(
        slimecclRedOpCreatePreMulSum(&op, &scalar, slimecclFloat32, static_cast<slimecclScalarResidence_t>(7), comm),
        "residence 7", "bad residence");
    refused(slimecclRedOpCreatePreMulSum(&op, &scalar, slimecclFloat32, slimecclScalarDevice, comm),
            "is not device memory", "host memory as a device scalar");
    RANK_CHECK_SUCCESS(slimecclRedOpCreatePreMulSum(&op, &scalar, slimecclFloat32, slimecclScalarHostImmediate, comm),
                       comm);
    refused(slimecclAllReduce(&in, &out, 1, slimecclInt32, op, comm, nullptr), "was made for datatype float",
            "another datatype");
    RANK_CHECK_SUCCESS(slimecclRedOpDestroy(op, comm), comm);
    refused(slimecclAllReduce(&in, &out, 1, slimecclFloat32, op, comm, nullptr), "nor a live operator",
            "a destroyed operator");
    refused(slimecclRedOpDestroy(op, comm), "destroyed already", "destroyed twice");
    refused(slimecclRedOpDestroy(slimecclSum, comm), "is not an operator", "a built-in op");
  });
}

INSTANTIATE_TEST_SUITE_P(Layouts, PreMulSum, ::testing::Values(Launch::kThreads, Launch::kForkedShm),
                         [](const auto& info) { return std::string(launchName(info.param)); });

}  // namespace
}  // namespace slimeccl_test
