#include "scratch_directory.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <stdlib.h>

namespace slimeccl::launcher_test {

ScratchDirectory::ScratchDirectory() {
  std::string pattern = (std::filesystem::temp_directory_path() / "slimeccl-launcher-test-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
  path_ = pattern;
}

ScratchDirectory::~ScratchDirectory() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string ScratchDirectory::read(const std::string& name) const {
  std::ifstream stream(file(name));
  std::ostringstream contents;
  contents << stream.rdbuf();
  return contents.str();
}

}  // namespace slimeccl::launcher_test
