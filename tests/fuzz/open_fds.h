// Counts this process's open file descriptors, so that a target can state that handling one
// input leaves none behind.
#pragma once

#include <dirent.h>

namespace slimeccl::fuzz {

inline int countOpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int n = 0;
  while (readdir(dir) != nullptr) ++n;
  closedir(dir);
  return n;
}

}  // namespace slimeccl::fuzz
