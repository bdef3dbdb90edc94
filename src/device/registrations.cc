#include "src/device/registrations.h"

#include <algorithm>

namespace slimeccl {

void* Registrations::add(const void* data, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.push_back(std::make_unique<Entry>(Entry{static_cast<const char*>(data), bytes}));
  return entries_.back().get();
}

bool Registrations::remove(void* handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const auto& entry) { return entry.get() == handle; });
  if (it == entries_.end()) return false;
  entries_.erase(it);
  return true;
}

bool Registrations::covers(const void* data, size_t bytes) const {
  const char* start = static_cast<const char*>(data);
  std::lock_guard<std::mutex> lock(mutex_);
  return std::any_of(entries_.begin(), entries_.end(), [&](const auto& entry) {
    return start >= entry->data && bytes <= entry->bytes &&
           start - entry->data <= static_cast<ptrdiff_t>(entry->bytes - bytes);
  });
}

}  // namespace slimeccl
