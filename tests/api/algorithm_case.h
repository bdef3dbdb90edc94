// Parameters for tests that run one collective with one algorithm forced by SLIMECCL_ALGO (or
// the tuner's choice) under one launch and rank count.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

#include "harness.h"

namespace slimeccl_test {

enum class Collective { kAllGather, kReduceScatter, kAllReduce, kBroadcast, kReduce, kAlltoAll };

// "AllReduce", as the entry point is named.
const char* collectiveName(Collective collective);
// "allreduce", as SLIMECCL_ALGO spells the collective.
const char* collectiveKey(Collective collective);
// AllReduce, ReduceScatter and Reduce take an op.
bool isReduction(Collective collective);
// Broadcast and Reduce take a root.
bool isRooted(Collective collective);
// Every algorithm the collective has, as SLIMECCL_ALGO spells them.
std::vector<std::string> algorithmsOf(Collective collective);

// The algorithm of an AlgorithmCase that leaves the choice to the tuner.
inline constexpr const char* kTunerChoice = "default";

struct AlgorithmCase {
  Collective collective;
  std::string algorithm;  // a name from algorithmsOf, or kTunerChoice
  Launch launch;
  int nranks;
};

// Every algorithm of `collective` (and the tuner's choice when asked) crossed with every launch
// and rank count.
std::vector<AlgorithmCase> algorithmCases(Collective collective, bool withTunerChoice,
                                          std::initializer_list<Launch> launches, std::initializer_list<int> nranks);

// SLIMECCL_ALGO=collective:algorithm, or nothing for the tuner's choice.
RunOptions algorithmOptions(const AlgorithmCase& algorithmCase);

// Test-name suffix such as "ring_forked_socket_8ranks".
std::string algorithmCaseName(const ::testing::TestParamInfo<AlgorithmCase>& info);

// NOLINTNEXTLINE(readability-identifier-naming): gtest finds PrintTo by this name
void PrintTo(const AlgorithmCase& algorithmCase, std::ostream* os);

// On a rank: the comm's last op (slimecclCommGetLastOpRoute) was this case's collective, ran over
// the net modules, and with the forced algorithm (any, for the tuner's choice).
void checkRouteTaken(const AlgorithmCase& algorithmCase, slimecclComm_t comm);

}  // namespace slimeccl_test
