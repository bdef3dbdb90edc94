// Threads of one process hand a sender's buffer to the receiver (who copies from it) and back
// through the slot ring, whose memory each side maps at its own address. ThreadSanitizer tracks
// synchronization by address, so it cannot see that hand-over and would report the receiver's
// copy as a race with the sender's writes; these calls tell it, keyed by the buffer's address.
// Without ThreadSanitizer they are empty.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define SLIMECCL_SHM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SLIMECCL_SHM_TSAN 1
#endif
#endif

#ifdef SLIMECCL_SHM_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace slimeccl {

// The side that gives the buffer up: all its accesses so far come before the other side's.
inline void releaseBuffer(const void* buffer) {
#ifdef SLIMECCL_SHM_TSAN
  __tsan_release(const_cast<void*>(buffer));
#else
  (void)buffer;
#endif
}

// The side that takes the buffer over, after it learnt of the hand-over.
inline void acquireBuffer(const void* buffer) {
#ifdef SLIMECCL_SHM_TSAN
  __tsan_acquire(const_cast<void*>(buffer));
#else
  (void)buffer;
#endif
}

}  // namespace slimeccl
