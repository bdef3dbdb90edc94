#include "src/base/log.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "src/base/util/strings.h"

namespace slimeccl {
namespace {

struct LogConfig {
  LogLevel level = LogLevel::None;
  unsigned subsys = kLogAll;
  std::string host;
  FILE* out = stderr;
};

unsigned parseSubsys(const char* text) {
  if (text == nullptr || *text == '\0') return kLogAll;
  static const struct {
    const char* name;
    unsigned bit;
  } kNames[] = {{"INIT", kLogInit},           {"NET", kLogNet},   {"COLL", kLogColl}, {"P2P", kLogP2P},
                {"BOOTSTRAP", kLogBootstrap}, {"TOPO", kLogTopo}, {"TUNE", kLogTune}, {"ALL", kLogAll}};
  bool exclude = text[0] == '^';
  unsigned mask = 0;
  for (const std::string& item : splitList(exclude ? text + 1 : text, ',')) {
    for (const auto& entry : kNames) {
      if (strcasecmp(item.c_str(), entry.name) == 0) mask |= entry.bit;
    }
  }
  return exclude ? ~mask : mask;
}

const LogConfig& config() {
  static const LogConfig cfg = [] {
    LogConfig c;
    if (const char* level = getenv("SLIMECCL_DEBUG")) {
      if (strcasecmp(level, "WARN") == 0)
        c.level = LogLevel::Warn;
      else if (strcasecmp(level, "INFO") == 0)
        c.level = LogLevel::Info;
      else if (strcasecmp(level, "TRACE") == 0)
        c.level = LogLevel::Trace;
    }
    c.subsys = parseSubsys(getenv("SLIMECCL_DEBUG_SUBSYS"));
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    c.host = host;
    if (const char* file = getenv("SLIMECCL_DEBUG_FILE")) {
      std::string path = file;
      // %h and %p expand to host and pid so that every process gets its own file.
      for (size_t at; (at = path.find("%p")) != std::string::npos;) path.replace(at, 2, std::to_string(getpid()));
      for (size_t at; (at = path.find("%h")) != std::string::npos;) path.replace(at, 2, c.host);
      if (FILE* f = fopen(path.c_str(), "a")) c.out = f;
    }
    return c;
  }();
  return cfg;
}

const char* levelName(LogLevel level) {
  switch (level) {
    case LogLevel::Warn: return "WARN";
    case LogLevel::Info: return "INFO";
    case LogLevel::Trace: return "TRACE";
    default: return "";
  }
}

}  // namespace

bool logEnabled(LogLevel level, unsigned subsys) {
  const LogConfig& c = config();
  return level <= c.level && (c.subsys & subsys) != 0;
}

void logWrite(LogLevel level, unsigned subsys, int rank, std::string_view message) {
  const LogConfig& c = config();
  static std::mutex writeMutex;
  std::string line = rank >= 0 ? fmt::format("{}:{}:{} rank {} slimeccl {} {}\n", c.host, getpid(),
                                             static_cast<long>(syscall(SYS_gettid)), rank, levelName(level), message)
                               : fmt::format("{}:{}:{} slimeccl {} {}\n", c.host, getpid(),
                                             static_cast<long>(syscall(SYS_gettid)), levelName(level), message);
  std::lock_guard<std::mutex> lock(writeMutex);
  fwrite(line.data(), 1, line.size(), c.out);
  fflush(c.out);
}

}  // namespace slimeccl
