#include "src/base/sys/sockaddr.h"

#include <arpa/inet.h>
#include <netdb.h>

#include <cstring>

#include "src/base/error.h"

namespace slimeccl {

SockAddr::SockAddr() { memset(&u, 0, sizeof(u)); }

socklen_t SockAddr::length() const { return family() == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in); }

uint16_t SockAddr::port() const { return ntohs(family() == AF_INET6 ? u.v6.sin6_port : u.v4.sin_port); }

void SockAddr::setPort(uint16_t port) {
  if (family() == AF_INET6)
    u.v6.sin6_port = htons(port);
  else
    u.v4.sin_port = htons(port);
}

std::string SockAddr::toString() const {
  char host[INET6_ADDRSTRLEN] = {0};
  if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &u.v6.sin6_addr, host, sizeof(host));
    return "[" + std::string(host) + "]:" + std::to_string(port());
  }
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &u.v4.sin_addr, host, sizeof(host));
    return std::string(host) + ":" + std::to_string(port());
  }
  return "<no address>";
}

slimecclResult_t parseHostPort(const std::string& text, SockAddr* out) {
  std::string host, port;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return fail(slimecclInvalidArgument, "address '{}' is not of the form [ipv6]:port", text);
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0)
      return fail(slimecclInvalidArgument, "address '{}' is not of the form host:port", text);
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  char* end = nullptr;
  long portNumber = strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || portNumber < 0 || portNumber > 65535)
    return fail(slimecclInvalidArgument, "address '{}' has an invalid port '{}'", text, port);
  addrinfo hints;
  memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &result);
  if (rc != 0 || result == nullptr)
    return fail(slimecclInvalidArgument, "cannot resolve host '{}' of address '{}': {}", host, text, gai_strerror(rc));
  memcpy(&out->u, result->ai_addr, result->ai_addrlen);
  freeaddrinfo(result);
  out->setPort(static_cast<uint16_t>(portNumber));
  return slimecclSuccess;
}

}  // namespace slimeccl
