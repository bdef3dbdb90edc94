#include "algorithms/schedule.h"

#include <fmt/format.h>

namespace slimeccl {

std::string describeSchedule(const Schedule& schedule) {
  std::string out;
  auto range = [](const BufferRange& r) {
    const char* name = r.buffer == BufferId::Send ? "send" : r.buffer == BufferId::Recv ? "recv" : "scratch";
    return fmt::format("{}[{}+{}]", name, r.offset, r.bytes);
  };
  for (size_t i = 0; i < schedule.steps.size(); ++i) {
    const Step& s = schedule.steps[i];
    switch (s.kind) {
      case StepKind::Send: out += fmt::format("{}: send {} to {}", i, range(s.src), s.peer); break;
      case StepKind::Recv: out += fmt::format("{}: recv {} from {}", i, range(s.dst), s.peer); break;
      case StepKind::RecvReduce:
        out += fmt::format("{}: recv from {}, {} = {} op incoming", i, s.peer, range(s.dst), range(s.src));
        break;
      case StepKind::Copy: out += fmt::format("{}: copy {} -> {}", i, range(s.src), range(s.dst)); break;
      case StepKind::Reduce: out += fmt::format("{}: {} op= {}", i, range(s.dst), range(s.src)); break;
      case StepKind::Scale: out += fmt::format("{}: {} /= nranks", i, range(s.dst)); break;
    }
    if (s.dependsOn >= 0) out += fmt::format(" after {}", s.dependsOn);
    out += "\n";
  }
  return out;
}

}  // namespace slimeccl
