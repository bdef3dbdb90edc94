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

  void remove(GpuPeers* peers) {
    std::unique_lock<std::mutex> lock(mutex_);
    watched_.erase(std::remove(watched_.begin(), watched_.end(), peers), watched_.end());
    // The pass in progress may hold it: wait for the pass to end.
    const uint64_t pass = passes_;
    if (polling_) passEnded_.wait(lock, [&] { return passes_ != pass; });
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return !watched_.empty(); });
      polling_ = true;
      for (GpuPeers* peers : watched_) peers->watch();
      // Those retired with ops running are freed once the ops have ended.
      for (auto it = watched_.begin(); it != watched_.end();) {
        if (!(*it)->orphanDone()) {
          ++it;
          continue;
        }
        delete *it;
        it = watched_.erase(it);
      }
      polling_ = false;
      ++passes_;
      passEnded_.notify_all();
      wake_.wait_for(lock, std::chrono::milliseconds(1));
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, passEnded_;
  std::vector<GpuPeers*> watched_;
  std::thread thread_;
  bool polling_ = false;
  uint64_t passes_ = 0;
};

}  // namespace

void watchGpuPeers(GpuPeers* peers) { Watchdog::instance().add(peers); }
void unwatchGpuPeers(GpuPeers* peers) { Watchdog::instance().remove(peers); }

}  // namespace slimeccl
