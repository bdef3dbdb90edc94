#include "tests/topo/scratch_file.h"

#include <stdlib.h>
#include <unistd.h>

#include <stdexcept>

namespace slimeccl::test {

ScratchFile::ScratchFile(const std::string& name) {
  char pattern[] = "/tmp/slimeccl-topo-XXXXXX";
  if (mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed for " + name);
  directory_ = pattern;
  path_ = directory_ + "/" + name;
}

ScratchFile::~ScratchFile() {
  unlink(path_.c_str());
  rmdir(directory_.c_str());
}

}  // namespace slimeccl::test
