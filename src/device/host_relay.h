// The host relays of a communicator whose GPUs do not reach each other (or SLIMECCL_P2P_DISABLE=1):
// one shared-memory segment with every rank's relay (algorithms/relay_plan.h says how a relay is
// laid out and used), pinned by every rank for its GPU, so that copy engines move chunks between
// each GPU and the relays; this rank's landing area on its GPU, where a reduction's chunks from its
// peers land; and the streams and events a plan runs on. The segment's name is removed once every
// rank has opened it; ranks that are threads of one process map and pin it once, together.
// CUDA-free: the core includes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/relay_plan.h"

namespace slimeccl {

// One process's mapping of a relay segment, pinned for every GPU of the process.
class RelaySegment;

class HostRelay {
 public:
  // Opens (or makes) the segment named by `key`, alike on every rank, pins it and makes the rest on
  // the current GPU; null with *why where something failed.
  static std::unique_ptr<HostRelay> create(const uint8_t* key, size_t keyBytes, int rank, int nranks, size_t slotBytes,
                                           std::string* why);
  void unlinkName();
  // Frees all; no stream may use it any more.
  ~HostRelay();
  HostRelay(const HostRelay&) = delete;
  HostRelay& operator=(const HostRelay&) = delete;

  size_t slotBytes() const { return slotBytes_; }
  // Slot `slot` of `writer`'s lane of kind `lane` that `reader` reads, as this process maps it.
  char* slot(RelayLane lane, int writer, int reader, int slot) const;
  char* landing() const { return landing_; }  // device memory, relayLandingBytes of it
  // The streams a plan runs on (cudaStream_t), and the events that fork them from the caller's
  // stream, join them back and order their steps (cudaEvent_t).
  int streams() const { return static_cast<int>(streams_.size()); }
  void* stream(int i) const { return streams_[i]; }
  void* join(int i) const { return joins_[i]; }
  void* forkEvent() const { return fork_; }
  // The event a plan's Signals of `event` record, made on first use (null where none can be made).
  void* signalEvent(int event);
  // The chunks each lane has carried so far, for the next plan (algorithms/relay_plan.h).
  const RelayLaneCounts& lanes() const { return lanes_; }
  void setLanes(const RelayLaneCounts& lanes) { lanes_ = lanes; }

 private:
  HostRelay() = default;

  std::string name_;
  std::shared_ptr<RelaySegment> segment_;
  char* map_ = nullptr;  // the segment's first byte
  int rank_ = 0, nranks_ = 0;
  size_t slotBytes_ = 0;
  char* landing_ = nullptr;
  std::vector<void*> streams_, joins_, signals_;
  void* fork_ = nullptr;
  RelayLaneCounts lanes_;
};

}  // namespace slimeccl
