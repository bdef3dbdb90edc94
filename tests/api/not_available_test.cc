// Entry points declared in the API but not implemented in this build yet: they validate their
// arguments like the others, then refuse valid calls with InvalidUsage and a clear sentence.
#include <gtest/gtest.h>

#include <string>

#include "entry_points.h"
#include "rank_check.h"
#include "single_rank_comm.h"

namespace slimeccl_test {
namespace {

constexpr const char* kNotAvailable = "is not available in this build yet";

using NotYetAvailable = SingleRankComm;

TEST_F(NotYetAvailable, ValidCallsAreInvalidUsageWithASentence) {
  CallBuffers buffers;
  int checked = 0;
  for (const EntryPoint& entry : entry_points()) {
    if (entry.available) continue;
    ++checked;
    EXPECT_EQ(slimecclInvalidUsage, entry.call(valid_call_args(comm_, buffers)))
        << entry.name << "; last error: " << last_error_text(comm_);
    EXPECT_NE(std::string::npos, last_error_text(comm_).find(kNotAvailable))
        << entry.name << ": slimecclGetLastError(comm) is \"" << last_error_text(comm_) << "\"";
    EXPECT_NE(std::string::npos, last_error_text(nullptr).find(kNotAvailable))
        << entry.name << ": slimecclGetLastError(NULL) is \"" << last_error_text(nullptr) << "\"";
  }
  EXPECT_EQ(2, checked) << "AllGatherGemm, AllGatherOverlap";
}

TEST_F(NotYetAvailable, AllGatherOverlapRejectsANullCallback) {
  CallBuffers buffers;
  EXPECT_EQ(slimecclInvalidArgument, slimecclAllGatherOverlap(buffers.send, buffers.recv, 4, slimecclFloat32, nullptr,
                                                              nullptr, comm_, nullptr))
      << last_error_text(nullptr);
}

TEST_F(NotYetAvailable, AllGatherGemmRejectsIntegerDatatypes) {
  CallBuffers buffers;
  for (slimecclDataType_t datatype :
       {slimecclInt8, slimecclUint8, slimecclInt32, slimecclUint32, slimecclInt64, slimecclUint64}) {
    EXPECT_EQ(slimecclInvalidArgument, slimecclAllGatherGemm(buffers.send, nullptr, buffers.b, buffers.recv, 4, 4, 4,
                                                             datatype, comm_, nullptr))
        << "datatype " << static_cast<int>(datatype) << "; last error: " << last_error_text(nullptr);
  }
}

TEST_F(NotYetAvailable, AllGatherGemmRejectsMissingMatrices) {
  CallBuffers buffers;
  EXPECT_EQ(slimecclInvalidArgument,
            slimecclAllGatherGemm(nullptr, nullptr, buffers.b, buffers.recv, 4, 4, 4, slimecclFloat32, comm_, nullptr))
      << "NULL A";
  EXPECT_EQ(slimecclInvalidArgument,
            slimecclAllGatherGemm(buffers.send, nullptr, nullptr, buffers.recv, 4, 4, 4, slimecclFloat32, comm_, nullptr))
      << "NULL B";
  EXPECT_EQ(slimecclInvalidArgument,
            slimecclAllGatherGemm(buffers.send, nullptr, buffers.b, nullptr, 4, 4, 4, slimecclFloat32, comm_, nullptr))
      << "NULL C";
  // The gathered A is optional, so this call is valid and only refused as not available yet.
  EXPECT_EQ(slimecclInvalidUsage, slimecclAllGatherGemm(buffers.send, buffers.recv + 2048, buffers.b, buffers.recv, 4,
                                                        4, 4, slimecclFloat32, comm_, nullptr))
      << last_error_text(comm_);
}

}  // namespace
}  // namespace slimeccl_test
