// Step-appending helpers shared by the schedule builders.
#pragma once

#include "algorithms/catalog.h"
#include "algorithms/schedule.h"

namespace slimeccl {

// Appends a step; returns its index, for later steps to depend on.
int addStep(Schedule& s, const Step& step);

// Adds a communication step unless it would carry no bytes; returns its index or -1.
int addTransfer(Schedule& s, const Step& step);

// The whole count * typeBytes vector of the request in `buffer`.
BufferRange wholeVector(const ScheduleRequest& r, BufferId buffer);

// A reduction over one rank: the input is the result.
Schedule singleRankReduction(const ScheduleRequest& r);

}  // namespace slimeccl
