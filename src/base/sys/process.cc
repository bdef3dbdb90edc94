#include "src/base/sys/process.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>

namespace slimeccl {

bool processGone(int pid) {
  if (pid <= 0 || pid == getpid()) return false;
  if (kill(pid, 0) != 0 && errno == ESRCH) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pidField, name, state;
  return stat >> pidField >> name >> state && state == "Z";
}

}  // namespace slimeccl
