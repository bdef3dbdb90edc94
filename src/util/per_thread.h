// One object of type T per thread, reached in two instructions. A thread_local object of a shared
// library is looked up by a call of __tls_get_addr at each use; here the thread reaches it through
// an initial-exec pointer (8 bytes of the static TLS block, which even a dlopen()ed library can
// have), while an ordinary thread_local holder owns it and destroys it when the thread exits.
#pragma once

namespace slimeccl {

template <typename T>
class PerThreadHolder {
 public:
  explicit PerThreadHolder(T** slot) : slot_(slot) {}
  ~PerThreadHolder() { *slot_ = nullptr; }
  PerThreadHolder(const PerThreadHolder&) = delete;
  PerThreadHolder& operator=(const PerThreadHolder&) = delete;
  T value;

 private:
  T** slot_;
};

// Kept out of line: the first use of a thread, and the only one that touches the holder.
template <typename T>
[[gnu::noinline]] T* makePerThread(T** slot) {
  thread_local PerThreadHolder<T> holder(slot);
  return &holder.value;
}

// Each T is one per-thread object (give a distinct type to each use).
template <typename T>
inline T& perThread() {
  static thread_local T* object __attribute__((tls_model("initial-exec"))) = nullptr;
  if (__builtin_expect(object == nullptr, 0)) object = makePerThread<T>(&object);
  return *object;
}

}  // namespace slimeccl
