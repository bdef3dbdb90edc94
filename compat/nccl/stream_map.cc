#include "compat/nccl/stream_map.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>

#include "compat/nccl/compat.h"

namespace slimeccl_nccl {
namespace {

// cudaStreamPerThread names another stream on every thread, so its entries are kept per thread.
constexpr uintptr_t kPerThreadStream = 0x2;

using Key = std::tuple<uintptr_t, int, std::thread::id>;

std::mutex mapMutex;
std::map<Key, slimecclStream_t>& streams() {
  static auto* made = new std::map<Key, slimecclStream_t>();  // never freed: used until exit
  return *made;
}

}  // namespace

ncclResult_t streamFor(cudaStream_t stream, int device, slimecclStream_t* out) {
  const auto handle = reinterpret_cast<uintptr_t>(stream);
  const Key key{handle, device, handle == kPerThreadStream ? std::this_thread::get_id() : std::thread::id()};
  std::lock_guard<std::mutex> lock(mapMutex);
  auto found = streams().find(key);
  if (found != streams().end()) {
    *out = found->second;
    return ncclSuccess;
  }
  slimecclStream_t made = nullptr;
  // The NULL stream is the current GPU's: the comm's GPU is made current while its stream is made.
  ScopedDevice on(device);
  const slimecclResult_t rc = slimecclStreamCreateFromCuda(&made, stream);
  if (rc != slimecclSuccess) {
    if (stream == nullptr && device < 0) {
      *out = nullptr;
      return fromNative(slimecclSuccess);
    }
    return fromNative(rc);
  }
  streams().emplace(key, made);
  *out = made;
  return ncclSuccess;
}

}  // namespace slimeccl_nccl
