// Logging: SLIMECCL_DEBUG=WARN|INFO|TRACE, SLIMECCL_DEBUG_SUBSYS=INIT,NET,... (read once per process).
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace slimeccl {

enum class LogLevel { None = 0, Warn = 1, Info = 2, Trace = 3 };

enum LogSubsys : unsigned {
  kLogInit = 1u << 0,
  kLogNet = 1u << 1,
  kLogColl = 1u << 2,
  kLogP2P = 1u << 3,
  kLogBootstrap = 1u << 4,
  kLogTopo = 1u << 5,
  kLogTune = 1u << 6,
  kLogAll = ~0u,
};

bool logEnabled(LogLevel level, unsigned subsys);
// rank < 0: the line is not tied to a communicator rank.
void logWrite(LogLevel level, unsigned subsys, int rank, std::string_view message);

template <typename... Args>
void logf(LogLevel level, unsigned subsys, int rank, fmt::format_string<Args...> format, Args&&... args) {
  if (logEnabled(level, subsys)) logWrite(level, subsys, rank, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace slimeccl

// The arguments are evaluated only when the line is printed: some describe whole schedules, and
// the per-op ones would otherwise cost more than a small op itself.
#define SLIMECCL_LOG_AT(level, subsys, rank, ...)                                                  \
  do {                                                                                             \
    if (::slimeccl::logEnabled(level, subsys)) ::slimeccl::logf(level, subsys, rank, __VA_ARGS__); \
  } while (0)
#define SLIMECCL_WARN(subsys, rank, ...) SLIMECCL_LOG_AT(::slimeccl::LogLevel::Warn, subsys, rank, __VA_ARGS__)
#define SLIMECCL_INFO(subsys, rank, ...) SLIMECCL_LOG_AT(::slimeccl::LogLevel::Info, subsys, rank, __VA_ARGS__)
#define SLIMECCL_TRACE(subsys, rank, ...) SLIMECCL_LOG_AT(::slimeccl::LogLevel::Trace, subsys, rank, __VA_ARGS__)
