// IPv4/IPv6 socket addresses: a fixed-size form that travels inside ids and handles.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "include/slimeccl.h"

namespace slimeccl {

struct SockAddr {
  union {
    sockaddr sa;
    sockaddr_in v4;
    sockaddr_in6 v6;
  } u;

  SockAddr();
  socklen_t length() const;
  int family() const { return u.sa.sa_family; }
  uint16_t port() const;
  void setPort(uint16_t port);
  bool valid() const { return family() == AF_INET || family() == AF_INET6; }
  std::string toString() const;  // "10.0.0.1:5000" or "[fe80::1]:5000"
};

// Parses "host:port" or "[v6]:port"; host may be a name resolved by getaddrinfo.
slimecclResult_t parseHostPort(const std::string& text, SockAddr* out);

}  // namespace slimeccl
