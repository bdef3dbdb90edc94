// Blocking loopback socket I/O for the fuzz targets' own ends of a connection. libFuzzer's timer
// signal interrupts blocking calls, so each call here carries on through EINTR.
#pragma once

#include <cstddef>
#include <string>

#include "src/base/sys/sockaddr.h"

namespace slimeccl::fuzz {

// A connected socket; aborts the target if the connection cannot be made.
int connectTo(const SockAddr& addr);
// Sends every byte unless the peer has gone; returns how many were sent.
size_t sendAll(int fd, const std::string& bytes);
// Receives exactly len bytes unless the peer closes or timeoutMs passes; returns how many came.
size_t recvAll(int fd, void* buf, size_t len, int timeoutMs);
// Waits (at most timeoutMs) until the peer has acknowledged every byte sent, so that a reset that
// follows cannot overtake them.
void waitDelivered(int fd, int timeoutMs);
// Closes with a reset rather than a FIN, so that no TIME_WAIT is left behind: thousands of
// connections a second would otherwise fill the loopback ports.
void closeWithReset(int fd);

}  // namespace slimeccl::fuzz
