// Error reporting for failed system calls.
#pragma once

#include <string>
#include <string_view>

namespace slimeccl::run {

// Throws std::system_error built from the current errno, with `what` saying
// which operation failed.
[[noreturn]] void throwSystemError(const std::string& what);

// Writes all of `data` to `fd`, retrying short writes and EINTR. Returns false
// on any other error, leaving errno set.
bool writeAll(int fd, std::string_view data);

}  // namespace slimeccl::run
