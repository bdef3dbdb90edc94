// The TCP connection beside each verbs connection: it carries the two setup records, then stays
// open so that a peer that goes away is noticed (its kernel closes the socket) even when no work
// request of ours is outstanding to time out.
#pragma once

#include <cstddef>
#include <string>

#include "include/slimeccl.h"
#include "src/base/sys/sockaddr.h"

namespace slimeccl {

// Listens on the interface SLIMECCL_SOCKET_IFNAME selects (as the socket module does).
slimecclResult_t sideListen(SockAddr* addr, int* fd);
// Connects (bounded wait: only the peer's kernel has to answer) and returns a non-blocking fd.
slimecclResult_t sideConnect(const SockAddr& addr, int* fd);
// Reads what has arrived of a len-byte record into buf (*got counts); *complete once all is in.
slimecclResult_t sideRead(int fd, void* buf, size_t len, size_t* got, bool* complete);
// Writes a small record (bounded wait).
slimecclResult_t sideWrite(int fd, const void* buf, size_t len);

enum class SideState { Open, Closed, Broken };
// Looks without consuming whether the peer closed its end; *why tells a broken one's cause.
SideState sidePeek(int fd, std::string* why);

}  // namespace slimeccl
