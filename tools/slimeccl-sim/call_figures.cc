#include "tools/slimeccl-sim/call_figures.h"

#include <algorithm>
#include <limits>

#include "tools/slimeccl-sim/schedule_graph.h"

namespace slimeccl::sim {

CallFigures measureCall(const SimCall& call, const CostModel& cost, std::vector<Schedule>* keptSchedules) {
  CallFigures figures;
  const TopologySummary topology = hostLayout(call.nranks, call.hosts);
  ScheduleGraph graph(call.nranks);
  for (int rank = 0; rank < call.nranks; ++rank) {
    Schedule schedule = buildCollective(scheduleRequest(call, rank, topology));
    if (!graph.addRank(schedule, &figures.error)) return figures;
    if (keptSchedules != nullptr) keptSchedules->push_back(std::move(schedule));
  }
  if (!graph.matchMessages(&figures.error)) return figures;
  if (!alphaBetaMicroseconds(graph, cost, &figures.microseconds, &figures.error)) return figures;

  figures.minSends = std::numeric_limits<size_t>::max();
  figures.minBytesSent = std::numeric_limits<size_t>::max();
  for (const RankTraffic& traffic : graph.traffic()) {
    figures.minSends = std::min(figures.minSends, traffic.sends);
    figures.maxSends = std::max(figures.maxSends, traffic.sends);
    figures.minBytesSent = std::min(figures.minBytesSent, traffic.bytesSent);
    figures.maxBytesSent = std::max(figures.maxBytesSent, traffic.bytesSent);
    figures.messages += traffic.sends;
    figures.bytesSent += traffic.bytesSent;
  }
  figures.steps = graph.stepCount();
  figures.ok = true;
  return figures;
}

}  // namespace slimeccl::sim
