// A file path in a fresh temporary directory, removed (with the directory) at the end of scope.
#pragma once

#include <string>

namespace slimeccl::test {

class ScratchFile {
 public:
  explicit ScratchFile(const std::string& name);
  ~ScratchFile();
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string directory_;
  std::string path_;
};

}  // namespace slimeccl::test
