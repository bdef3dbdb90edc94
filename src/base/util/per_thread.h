// One object of type T per thread. A thread_local object of a shared library is looked up at
// each use; here the thread reaches it through one pointer, which the library's TLS descriptors
// (-mtls-dialect=gnu2, CMakeLists.txt) find in a few instructions, while an ordinary thread_local
// holder owns it and destroys it when the thread exits. Not initial-exec: the library's TLS block
// holds the static CUDA runtime's too, aligned to a page, more than the static TLS that glibc
// keeps for libraries loaded by dlopen (Python's extension modules load libslimeccl.so so).
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
  static thread_local T* object = nullptr;
  if (__builtin_expect(object == nullptr, 0)) object = makePerThread<T>(&object);
  return *object;
}

}  // namespace slimeccl
