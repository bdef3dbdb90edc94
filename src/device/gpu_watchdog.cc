#include "src/device/gpu_watchdog.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "src/device/gpu_peers.h"

namespace slimeccl {
namespace {

constexpr int kIdlePassMs = 20;

class Watchdog {
 public:
  static Watchdog& instance() {
    static Watchdog* dog = new Watchdog();  // never destroyed: comms may outlive statics
    return *dog;
  }

  void add(GpuPeers* peers) {
    std::lock_guard<std::mutex> lock(mutex_);
    watched_.push_back(peers);
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
    wake_.notify_all();
  }

  // A pass holds the lock from start to end: once these have it, no pass is using `peers`.
  void remove(GpuPeers* peers) {
    std::lock_guard<std::mutex> lock(mutex_);
    watched_.erase(std::remove(watched_.begin(), watched_.end(), peers), watched_.end());
  }

  void orphan(GpuPeers* peers) {
    std::lock_guard<std::mutex> lock(mutex_);
    peers->markOrphaned();
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return !watched_.empty(); });
      for (GpuPeers* peers : watched_) peers->watch();
      // Those retired with ops running are freed once the ops have ended, on a thread of their
      // own: freeing device memory may wait for the GPU to idle, and a stream on it may be waiting
      // for a flag that only this thread lets go.
      const auto running =
          std::stable_partition(watched_.begin(), watched_.end(), [](GpuPeers* peers) { return !peers->orphanDone(); });
      if (running != watched_.end()) {
        std::vector<GpuPeers*> done(running, watched_.end());
        watched_.erase(running, watched_.end());
        std::thread([done] {
          for (GpuPeers* peers : done) delete peers;
        }).detach();
      }
      // Every millisecond while an op is on a GPU; otherwise only peers can fail, which the
      // passes check every 20 ms anyway, and an op queued meanwhile is seen within that.
      const bool busy = std::any_of(watched_.begin(), watched_.end(), [](GpuPeers* peers) { return !peers->idle(); });
      wake_.wait_for(lock, std::chrono::milliseconds(busy ? 1 : kIdlePassMs));
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<GpuPeers*> watched_;
  std::thread thread_;
};

}  // namespace

void watchGpuPeers(GpuPeers* peers) { Watchdog::instance().add(peers); }
void unwatchGpuPeers(GpuPeers* peers) { Watchdog::instance().remove(peers); }
void orphanGpuPeers(GpuPeers* peers) { Watchdog::instance().orphan(peers); }

}  // namespace slimeccl
