#include "rendezvous.h"

#include <arpa/inet.h>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "system_error.h"

namespace slimeccl::run {
namespace {

constexpr size_t kSecretBytes = 16;

std::string toHex(const std::array<uint8_t, kSecretBytes>& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t byte : bytes) {
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 0xf];
  }
  return hex;
}

std::string randomSecret() {
  std::array<uint8_t, kSecretBytes> bytes{};
  size_t filled = 0;
  while (filled < bytes.size()) {
    ssize_t got = ::getrandom(bytes.data() + filled, bytes.size() - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      throwSystemError("getrandom");
    }
    filled += static_cast<size_t>(got);
  }
  return toHex(bytes);
}

// FNV-1a (128 bit) of the master address: every node derives the same value
// without talking to the others. It is predictable, hence not a secret.
std::string secretDerivedFromMaster(const std::string& master) {
  using u128 = unsigned __int128;
  const u128 offsetBasis = (u128{0x6c62272e07bb0142ULL} << 64) | 0x62b821756295c58dULL;
  const u128 prime = (u128{1} << 88) | 0x13bU;
  u128 hash = offsetBasis;
  for (unsigned char c : std::string("slimeccl-comm-secret:") + master) {
    hash ^= c;
    hash *= prime;
  }
  std::array<uint8_t, kSecretBytes> bytes{};
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(hash >> (8 * (bytes.size() - 1 - i)));
  return toHex(bytes);
}

// Binds port 0 on loopback to let the kernel pick a free port, then releases
// it for rank 0 to bind. Another process could take it in between; that race
// is accepted, as rank 0 binds it within milliseconds.
int findFreeLoopbackPort() {
  int socketFd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (socketFd < 0) throwSystemError("socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (::bind(socketFd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::getsockname(socketFd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    int savedErrno = errno;
    ::close(socketFd);
    errno = savedErrno;
    throwSystemError("cannot find a free TCP port on 127.0.0.1");
  }
  ::close(socketFd);
  return ntohs(address.sin_port);
}

const char* nonEmptyEnvironment(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

}  // namespace

Rendezvous chooseRendezvous(const LaunchOptions& options) {
  const char* callerCommId = nonEmptyEnvironment("SLIMECCL_COMM_ID");
  const char* callerSecret = nonEmptyEnvironment("SLIMECCL_COMM_SECRET");

  if (options.master) {
    return Rendezvous{*options.master, callerSecret ? callerSecret : secretDerivedFromMaster(*options.master)};
  }
  return Rendezvous{
      callerCommId ? callerCommId : "127.0.0.1:" + std::to_string(findFreeLoopbackPort()),
      callerSecret ? callerSecret : randomSecret(),
  };
}

}  // namespace slimeccl::run
