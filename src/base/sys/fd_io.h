// Bounded blocking I/O on non-blocking file descriptors (bootstrap sockets).
#pragma once

#include <atomic>
#include <cstddef>

#include "include/slimeccl.h"
#include "src/base/sys/time.h"

namespace slimeccl {

void setNonBlocking(int fd);
// Wait for events on fd; returns Success when ready, Timeout when the deadline passes,
// InvalidUsage (with a sentence) when *abortFlag becomes true.
slimecclResult_t waitFd(int fd, short events, const Deadline& deadline, const std::atomic<bool>* abortFlag);
// Reads/writes exactly len bytes before the deadline; a closed or reset peer is a RemoteError.
slimecclResult_t readFully(int fd, void* buf, size_t len, const Deadline& deadline, const std::atomic<bool>* abortFlag);
slimecclResult_t writeFully(int fd, const void* buf, size_t len, const Deadline& deadline,
                            const std::atomic<bool>* abortFlag);
// Sends sendLen bytes to sendFd while receiving recvLen bytes from recvFd, so that rings of ranks
// that all send first cannot deadlock on full socket buffers.
slimecclResult_t exchange(int sendFd, const void* sendBuf, size_t sendLen, int recvFd, void* recvBuf, size_t recvLen,
                          const Deadline& deadline, const std::atomic<bool>* abortFlag);

}  // namespace slimeccl
