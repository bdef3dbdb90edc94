// Passing file descriptors (memfds of FIFOs and doorbells) over a Unix socket.
#pragma once

#include <cstddef>

namespace slimeccl {

// Sends len bytes and nfds descriptors in one datagram; returns false on EAGAIN or error.
bool sendWithFds(int socketFd, const void* data, size_t len, const int* fds, int nfds);
// Receives one datagram; returns the number of descriptors received (-1 on EAGAIN or error).
int recvWithFds(int socketFd, void* data, size_t len, int* fds, int maxFds);

}  // namespace slimeccl
