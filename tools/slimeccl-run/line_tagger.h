// Prefixes each line of one rank's output stream with "[RANK] ".
#pragma once

#include <string>
#include <string_view>

namespace slimeccl::run {

class LineTagger {
 public:
  LineTagger(int destinationFd, int globalRank);

  // Writes every complete line in `bytes`, with the prefix, in one write so
  // that lines from different ranks never mix; keeps the incomplete tail.
  void append(std::string_view bytes);

  // Writes a kept incomplete line, ending it with a newline.
  void flushPartialLine();

 private:
  void writeLine(std::string_view lineWithNewline);

  // A line longer than this is written in pieces so memory stays bounded.
  static constexpr size_t kMaxPendingBytes = 64 * 1024;

  int destination_fd_;
  int global_rank_;
  std::string prefix_;
  std::string pending_;
  bool destination_broken_ = false;
};

}  // namespace slimeccl::run
