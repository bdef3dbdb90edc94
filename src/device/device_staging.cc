#include "src/device/device_staging.h"

#include <algorithm>

#include "src/comm.h"
#include "src/device/gpu.h"
#include "src/device/gpu_rdma.h"
#include "src/base/error.h"

namespace slimeccl {
namespace {

// Small spans take a block of this size, so that ops of any small size reuse one block.
constexpr size_t kSmallestSpanBytes = 64 * 1024;

bool within(const void* p, const StagingSpan& span) {
  const char* c = static_cast<const char*>(p);
  return c >= span.memory && c < span.memory + span.bytes;
}

// Points the op's buffers that lie in the span at the same places of `host`, the span's staging:
// buffers that were in place stay in place.
void repointInto(OpRecord& op, const StagingSpan& span, char* host) {
  if (span.inBytes > 0 && within(op.sendbuff, span))
    op.sendbuff = host + (static_cast<const char*>(op.sendbuff) - span.memory);
  if (span.outBytes > 0 && within(op.recvbuff, span))
    op.recvbuff = host + (static_cast<const char*>(op.recvbuff) - span.memory);
}

}  // namespace

int deviceOfRegion(Region region) {
  int device = -1;
  if (region.bytes == 0 || !isDeviceMemory(region.data, &device)) return -1;
  return device;
}

std::vector<StagingSpan> stagingSpans(Region read, int readDevice, Region written, int writtenDevice) {
  if (read.bytes == 0) readDevice = -1;
  if (written.bytes == 0) writtenDevice = -1;
  if (readDevice >= 0 && writtenDevice >= 0 && overlaps(read, written)) {
    const char* first = std::min(read.data, written.data);
    const char* end = std::max(read.data + read.bytes, written.data + written.bytes);
    return {StagingSpan{first, writtenDevice, static_cast<size_t>(end - first), static_cast<size_t>(read.data - first),
                        read.bytes, static_cast<size_t>(written.data - first), written.bytes}};
  }
  std::vector<StagingSpan> spans;
  if (readDevice >= 0) spans.push_back(StagingSpan{read.data, readDevice, read.bytes, 0, read.bytes, 0, 0});
  if (writtenDevice >= 0)
    spans.push_back(StagingSpan{written.data, writtenDevice, written.bytes, 0, 0, 0, written.bytes});
  return spans;
}

bool DeviceStaging::onDevice(const OpRecord& op) {
  return gpuPresent() && (deviceOfRegion(readRegion(op)) >= 0 || deviceOfRegion(writtenRegion(op)) >= 0);
}

namespace {

// Whether the net reaches the op's buffer, on GPU `device`, itself (see reachedByNet): a Send
// reads only, a Recv writes only, so one region holds it.
bool netReaches(const OpRecord& op, int device) {
  const slimecclComm* comm = op.comm;
  return comm->gdrPeerClass >= 0 && op.isP2P() && op.peer != comm->rank &&
         peerClassOf(comm, op.peer) == comm->gdrPeerClass && device == comm->gdrGpu;
}

}  // namespace

bool DeviceStaging::reachedByNet(const OpRecord& op) {
  if (op.comm->gdrPeerClass < 0) return false;
  return netReaches(op, deviceOfRegion(op.coll == Coll::Send ? readRegion(op) : writtenRegion(op)));
}

slimecclResult_t DeviceStaging::stage(std::vector<OpRecord>& ops, std::unique_ptr<DeviceStaging>* out) {
  out->reset();
  if (!gpuPresent()) return slimecclSuccess;
  std::unique_ptr<DeviceStaging> staging;
  for (OpRecord& op : ops) {
    const Region read = readRegion(op), written = writtenRegion(op);
    const int readDevice = deviceOfRegion(read), writtenDevice = deviceOfRegion(written);
    if (readDevice < 0 && writtenDevice < 0) continue;
    if (netReaches(op, std::max(readDevice, writtenDevice))) {
      op.netReachesDevice = true;
      if (staging == nullptr) staging = std::make_unique<DeviceStaging>();
      staging->reached_.push_back(&op);
      continue;
    }
    op.comm->opsStaged.fetch_add(1, std::memory_order_relaxed);
    if (staging == nullptr) staging = std::make_unique<DeviceStaging>();
    SLIMECCL_CHECK(staging->stageOp(op, stagingSpans(read, readDevice, written, writtenDevice)));
  }
  *out = std::move(staging);
  return slimecclSuccess;
}

slimecclResult_t DeviceStaging::stageOp(OpRecord& op, const std::vector<StagingSpan>& spans) {
  for (const StagingSpan& span : spans) {
    StagingBlock block;
    if (!StagingPool::instance().acquire(std::max(span.bytes, kSmallestSpanBytes), -1, &block)) {
      prefixThreadError(
          fmt::format("rank {}: {}: host staging for its device buffers: ", op.comm->rank, describeOp(op)));
      return slimecclSystemError;
    }
    blocks_.push_back(block);
    char* host = block.data;
    if (span.inBytes > 0)
      in_.push_back({host + span.inOffset, span.memory + span.inOffset, span.inBytes, span.device, &op});
    if (span.outBytes > 0)
      out_.push_back(
          {const_cast<char*>(span.memory) + span.outOffset, host + span.outOffset, span.outBytes, span.device, &op});
    repointInto(op, span, host);
  }
  return slimecclSuccess;
}

DeviceStaging::~DeviceStaging() {
  for (const StagingBlock& block : blocks_) StagingPool::instance().release(block);
}

slimecclResult_t DeviceStaging::copyIn(CopyOrder order) const {
  if (order == CopyOrder::AfterLegacyStream)
    for (const OpRecord* op : reached_) {
      const slimecclResult_t rc = awaitLegacyStream(op->comm->gdrGpu);
      if (rc != slimecclSuccess) {
        prefixThreadError(
            fmt::format("rank {}: {}: before the NIC reads its device buffer: ", op->comm->rank, describeOp(*op)));
        return rc;
      }
    }
  return run(in_, order, "input");
}

slimecclResult_t DeviceStaging::copyOut(CopyOrder order) const {
  for (const OpRecord* op : reached_) {
    if (op->coll != Coll::Recv) continue;
    const slimecclResult_t rc = flushRdmaWrites(op->comm->gdrGpu);
    if (rc != slimecclSuccess) {
      prefixThreadError(fmt::format("rank {}: {}: ", op->comm->rank, describeOp(*op)));
      return rc;
    }
  }
  return run(out_, order, "output");
}

slimecclResult_t DeviceStaging::run(const std::vector<GpuCopy>& copies, CopyOrder order, const char* direction) {
  for (const GpuCopy& copy : copies) {
    const slimecclResult_t rc = gpuCopy(copy.dst, copy.src, copy.bytes, copy.device, order);
    if (rc != slimecclSuccess) {
      prefixThreadError(fmt::format("rank {}: {}: staging its {} on GPU {}: ", copy.op->comm->rank,
                                    describeOp(*copy.op), direction, copy.device));
      return rc;
    }
  }
  return slimecclSuccess;
}

}  // namespace slimeccl
