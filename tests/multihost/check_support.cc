#include "check_support.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace multihost {
namespace {

// Set once the rank is known, so that every failure line says which rank failed.
int gRankForMessages = -1;

int intFromEnv(const char* name, int minimum) {
  const char* text = std::getenv(name);
  if (text == nullptr) fail(std::string(name) + " is not set; run this program under slimeccl-run");
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < minimum)
    fail(std::string(name) + "='" + text + "' is not an integer of at least " + std::to_string(minimum));
  return static_cast<int>(value);
}

}  // namespace

LaunchLayout layoutFromEnv() {
  LaunchLayout layout;
  layout.nranks = intFromEnv("SLIMECCL_NRANKS", 1);
  layout.rank = intFromEnv("SLIMECCL_RANK", 0);
  gRankForMessages = layout.rank;
  layout.ranksPerHost = intFromEnv("SLIMECCL_LOCAL_NRANKS", 1);
  if (layout.rank >= layout.nranks) fail("SLIMECCL_RANK is not below SLIMECCL_NRANKS");
  if (layout.nranks % layout.ranksPerHost != 0)
    fail("SLIMECCL_NRANKS is not a multiple of SLIMECCL_LOCAL_NRANKS; the host split needs equal hosts");
  return layout;
}

uint64_t nextCallSeed() {
  static uint64_t calls = 0;
  return ++calls;
}

void fail(const std::string& what) {
  std::fprintf(stderr, "multihost_check rank %d: FAILED: %s\n", gRankForMessages, what.c_str());
  std::exit(1);
}

void requireSuccess(slimecclResult_t rc, const char* call, slimecclComm_t comm) {
  if (rc == slimecclSuccess) return;
  const char* last = slimecclGetLastError(comm);
  fail(std::string(call) + " returned " + std::to_string(rc) + " (" + slimecclGetErrorString(rc) +
       "): " + (last != nullptr ? last : "(no last error)"));
}

}  // namespace multihost
