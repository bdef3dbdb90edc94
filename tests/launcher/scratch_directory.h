// A temporary directory that ranks write marker files into.
#pragma once

#include <filesystem>
#include <string>

namespace slimeccl::launcher_test {

class ScratchDirectory {
 public:
  ScratchDirectory();
  ~ScratchDirectory();
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path file(const std::string& name) const { return path_ / name; }
  // Contents of `name`, or an empty string when it does not exist.
  std::string read(const std::string& name) const;

 private:
  std::filesystem::path path_;
};

}  // namespace slimeccl::launcher_test
