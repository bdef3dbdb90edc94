// Parameters for tests that run the same body under several launches and rank counts.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

#include "harness.h"

namespace slimeccl_test {

struct LaunchCase {
  Launch launch;
  int nranks;
};

// Every launch crossed with every rank count.
std::vector<LaunchCase> launchCases(std::initializer_list<Launch> launches, std::initializer_list<int> nranks);

// Test-name suffix such as "forked_socket_8ranks".
std::string launchCaseName(const ::testing::TestParamInfo<LaunchCase>& info);

// NOLINTNEXTLINE(readability-identifier-naming): gtest finds PrintTo by this name
void PrintTo(const LaunchCase& launchCase, std::ostream* os);

}  // namespace slimeccl_test
