// Host staging for ops on CUDA device buffers. The executor, the schedules and the net modules
// work on host memory, so an op whose buffers are device memory runs on host copies of them (from
// the staging pool; not pinned, see src/device/gpu.h): its input is copied in before it runs and
// its output out after it. Where an op's input and output overlap (in place), one staging span
// holds both, so the op still runs in place.
#pragma once

#include <memory>
#include <vector>

#include "src/device/gpu.h"
#include "src/exec/staging_pool.h"
#include "src/op.h"

namespace slimeccl {

// One copy between device memory and staging.
struct GpuCopy {
  void* dst;
  const void* src;
  size_t bytes;
  int device;          // the GPU whose memory one end is
  const OpRecord* op;  // whose buffer it is, for the error sentence
};

// Device memory of one op that gets a staging span: the op's input at inOffset (inBytes, copied
// in; 0 when the span holds no input) and its output at outOffset (outBytes, copied out).
struct StagingSpan {
  const char* memory = nullptr;  // the span's first byte in device memory
  int device = -1;               // the GPU that memory is on
  size_t bytes = 0;
  size_t inOffset = 0, inBytes = 0;
  size_t outOffset = 0, outBytes = 0;
};

// The spans an op needs, given the GPU of each region (-1: host memory): none when neither is
// device memory, one when both are and they overlap, else one per region on a GPU.
std::vector<StagingSpan> stagingSpans(Region read, int readDevice, Region written, int writtenDevice);
// The GPU of a region's memory, -1 for host memory or an empty region.
int deviceOfRegion(Region region);

class DeviceStaging {
 public:
  // Points the device buffers of `ops` at staging (ops with only host buffers stay as they are);
  // *out stays null when no op has device buffers.
  static slimecclResult_t stage(std::vector<OpRecord>& ops, std::unique_ptr<DeviceStaging>* out);
  // Whether the op reads or writes device memory.
  static bool onDevice(const OpRecord& op);
  // Whether the net module reads or writes the op's device memory itself (GPUDirect RDMA, chosen
  // at init for this rank's GPU and the peers of one class): a Send or Recv to such a peer.
  static bool reachedByNet(const OpRecord& op);
  // Whether the op reads or writes device memory that must cross host staging.
  static bool needed(const OpRecord& op) { return onDevice(op) && !reachedByNet(op); }
  DeviceStaging() = default;
  ~DeviceStaging();  // the staging goes back to the pool
  DeviceStaging(const DeviceStaging&) = delete;
  DeviceStaging& operator=(const DeviceStaging&) = delete;

  // The copies, each done when it returns. Around ops the net reaches on the device: before, the
  // work `order` puts first has finished (the NIC reads their buffers from then on); after, what
  // the NIC wrote into GPU memory is visible to later GPU work.
  slimecclResult_t copyIn(CopyOrder order) const;
  slimecclResult_t copyOut(CopyOrder order) const;

 private:
  slimecclResult_t stageOp(OpRecord& op, const std::vector<StagingSpan>& spans);
  static slimecclResult_t run(const std::vector<GpuCopy>& copies, CopyOrder order, const char* direction);

  std::vector<StagingBlock> blocks_;
  std::vector<const OpRecord*> reached_;  // ops the net reaches on the device
  std::vector<GpuCopy> in_, out_;
};

}  // namespace slimeccl
