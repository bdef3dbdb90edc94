#include "src/device/host_relay.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include <fmt/format.h>

#ifdef SLIMECCL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace slimeccl {

namespace {

// A plan's streams: AllReduce runs on four (algorithms/relay_plan.h).
constexpr int kRelayStreams = 4;

}  // namespace

char* HostRelay::slot(RelayLane lane, int writer, int reader, int slot) const {
  return map_ + static_cast<size_t>(writer) * relayBytes(nranks_, slotBytes_) +
         relaySlotOffset(lane, writer, reader, slot, slotBytes_);
}

void HostRelay::unlinkName() {
  if (!name_.empty()) shm_unlink(name_.c_str());
  name_.clear();
}

#ifdef SLIMECCL_HAVE_CUDA

class RelaySegment {
 public:
  // The process's mapping of the segment `name` of `bytes`, made and pinned by the first of its
  // ranks to ask (pinned for every GPU: cudaHostRegisterPortable), shared by the others; null with
  // *why where that failed.
  static std::shared_ptr<RelaySegment> open(const std::string& name, size_t bytes, std::string* why) {
    static std::mutex mutex;
    static std::map<std::string, std::weak_ptr<RelaySegment>> mapped;
    std::lock_guard<std::mutex> lock(mutex);
    std::erase_if(mapped, [](const auto& entry) { return entry.second.expired(); });
    if (std::shared_ptr<RelaySegment> shared = mapped[name].lock()) {
      if (shared->bytes_ == bytes) return shared;
      // Ranks of one comm size it alike; a differing size means they disagree on the comm.
      *why = fmt::format("the host relays {} are mapped here as {} bytes, not {}", name, shared->bytes_, bytes);
      return nullptr;
    }
    std::shared_ptr<RelaySegment> segment(new RelaySegment(bytes));
    if (!segment->map(name, why)) return nullptr;
    mapped[name] = segment;
    return segment;
  }
  ~RelaySegment() {
    if (pinned_) cudaHostUnregister(map_);
    cudaGetLastError();
    if (map_ != nullptr) munmap(map_, bytes_);
  }
  RelaySegment(const RelaySegment&) = delete;
  RelaySegment& operator=(const RelaySegment&) = delete;
  char* base() const { return static_cast<char*>(map_); }

 private:
  explicit RelaySegment(size_t bytes) : bytes_(bytes) {}

  bool map(const std::string& name, std::string* why) {
    const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT, 0600);
    if (fd < 0) {
      *why = fmt::format("cannot open the host relays {}: {}", name, strerror(errno));
      return false;
    }
    // Every process allocates the same pages (ftruncate alone would leave a /dev/shm too small for
    // them to fault in later as SIGBUS); they start zeroed.
    const int allocated = posix_fallocate(fd, 0, static_cast<off_t>(bytes_));
    if (allocated != 0) {
      close(fd);
      *why = fmt::format("cannot make the host relays of {} bytes in /dev/shm: {}", bytes_, strerror(allocated));
      return false;
    }
    map_ = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const int mapped = errno;
    close(fd);
    if (map_ == MAP_FAILED) {
      map_ = nullptr;
      *why = fmt::format("cannot map the host relays: {}", strerror(mapped));
      return false;
    }
    if (cudaHostRegister(map_, bytes_, cudaHostRegisterPortable) != cudaSuccess) {
      *why = fmt::format("pinning the host relays failed: {}", cudaGetErrorString(cudaGetLastError()));
      return false;
    }
    pinned_ = true;
    return true;
  }

  size_t bytes_;
  void* map_ = nullptr;
  bool pinned_ = false;
};

std::unique_ptr<HostRelay> HostRelay::create(const uint8_t* key, size_t keyBytes, int rank, int nranks,
                                             size_t slotBytes, std::string* why) {
  std::unique_ptr<HostRelay> relay(new HostRelay());
  relay->rank_ = rank;
  relay->nranks_ = nranks;
  relay->slotBytes_ = slotBytes;
  relay->name_ = "/slimeccl-relay-";
  for (size_t i = 0; i < keyBytes; ++i) relay->name_ += fmt::format("{:02x}", key[i]);
  relay->segment_ = RelaySegment::open(relay->name_, static_cast<size_t>(nranks) * relayBytes(nranks, slotBytes), why);
  if (relay->segment_ == nullptr) return nullptr;
  relay->map_ = relay->segment_->base();
  const auto failed = [why](const char* what) {
    *why = fmt::format("{} failed: {}", what, cudaGetErrorString(cudaGetLastError()));
    return nullptr;
  };
  const size_t landingBytes = relayLandingBytes(nranks, slotBytes);
  if (landingBytes != 0 && cudaMalloc(reinterpret_cast<void**>(&relay->landing_), landingBytes) != cudaSuccess)
    return failed("allocating the relays' landing area");
  for (int i = 0; i < kRelayStreams; ++i) {
    cudaStream_t stream = nullptr;
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
      return failed("creating a relay stream");
    relay->streams_.push_back(stream);
    cudaEvent_t join = nullptr;
    if (cudaEventCreateWithFlags(&join, cudaEventDisableTiming) != cudaSuccess) return failed("creating an event");
    relay->joins_.push_back(join);
  }
  cudaEvent_t fork = nullptr;
  if (cudaEventCreateWithFlags(&fork, cudaEventDisableTiming) != cudaSuccess) return failed("creating an event");
  relay->fork_ = fork;
  return relay;
}

void* HostRelay::signalEvent(int event) {
  while (static_cast<int>(signals_.size()) <= event) {
    cudaEvent_t made = nullptr;
    if (cudaEventCreateWithFlags(&made, cudaEventDisableTiming) != cudaSuccess) return nullptr;
    signals_.push_back(made);
  }
  return signals_[event];
}

HostRelay::~HostRelay() {
  for (void* stream : streams_) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
  for (void* event : joins_) cudaEventDestroy(static_cast<cudaEvent_t>(event));
  for (void* event : signals_) cudaEventDestroy(static_cast<cudaEvent_t>(event));
  if (fork_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(fork_));
  if (landing_ != nullptr) cudaFree(landing_);
  cudaGetLastError();
  unlinkName();
}

#else

class RelaySegment {};

std::unique_ptr<HostRelay> HostRelay::create(const uint8_t*, size_t, int, int, size_t, std::string* why) {
  *why = "this build of slimeccl has no CUDA support";
  return nullptr;
}

void* HostRelay::signalEvent(int) { return nullptr; }

HostRelay::~HostRelay() { unlinkName(); }

#endif

}  // namespace slimeccl
