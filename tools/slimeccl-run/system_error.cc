#include "system_error.h"

#include <cerrno>
#include <system_error>
#include <unistd.h>

namespace slimeccl::run {

void throwSystemError(const std::string& what) { throw std::system_error(errno, std::generic_category(), what); }

bool writeAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t written = ::write(fd, data.data(), data.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

}  // namespace slimeccl::run
