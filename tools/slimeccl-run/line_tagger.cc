#include "line_tagger.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "system_error.h"

namespace slimeccl::run {

LineTagger::LineTagger(int destinationFd, int globalRank)
    : destination_fd_(destinationFd), global_rank_(globalRank), prefix_("[" + std::to_string(globalRank) + "] ") {}

void LineTagger::append(std::string_view bytes) {
  while (!bytes.empty()) {
    size_t newline = bytes.find('\n');
    if (newline == std::string_view::npos) {
      pending_.append(bytes);
      if (pending_.size() >= kMaxPendingBytes) {
        pending_ += '\n';
        writeLine(pending_);
        pending_.clear();
      }
      return;
    }
    pending_.append(bytes.substr(0, newline + 1));
    writeLine(pending_);
    pending_.clear();
    bytes.remove_prefix(newline + 1);
  }
}

void LineTagger::flushPartialLine() {
  if (pending_.empty()) return;
  pending_ += '\n';
  writeLine(pending_);
  pending_.clear();
}

void LineTagger::writeLine(std::string_view lineWithNewline) {
  // Once the reader of our output is gone, the rank's output is dropped; the
  // rank keeps running and its pipe keeps being drained.
  if (destination_broken_) return;
  std::string tagged = prefix_;
  tagged.append(lineWithNewline);
  if (!writeAll(destination_fd_, tagged)) {
    destination_broken_ = true;
    std::fprintf(stderr, "slimeccl-run: cannot write output of rank %d to fd %d: %s; dropping it\n", global_rank_,
                 destination_fd_, std::strerror(errno));
  }
}

}  // namespace slimeccl::run
