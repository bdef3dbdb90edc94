// Checks usable inside a rank, whether the rank is a thread or a forked child: a failed check
// throws RankFailure, which the launcher turns into a gtest failure for that rank. gtest
// assertions are not used there because they do not cross fork().
#pragma once

#include <slimeccl.h>

#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>

// Lets gtest print result codes by name in EXPECT_EQ messages.
// NOLINTNEXTLINE(readability-identifier-naming): gtest finds PrintTo by this name
void PrintTo(slimecclResult_t result, std::ostream* os);

namespace slimeccl_test {

class RankFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The enumerator name, e.g. "slimecclTimeout", or "result N" for codes outside the enum.
std::string resultName(slimecclResult_t result);

// slimecclGetLastError as a string; "(null)" when the library returns NULL.
std::string lastErrorText(slimecclComm_t comm);

template <typename... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

// Runs body; a failure inside it is reported with `context` in front, e.g. the case of a sweep.
template <typename Body>
void withContext(const std::string& context, Body&& body) {
  try {
    body();
  } catch (const RankFailure& failure) {
    throw RankFailure(context + ": " + failure.what());
  }
}

[[noreturn]] void failRank(const char* file, int line, const std::string& what);

// Throws unless actual == expected; the message quotes the call and the library's last error
// (for `comm`, or the thread's when comm is NULL).
void checkResult(slimecclResult_t expected, slimecclResult_t actual, const char* call, slimecclComm_t comm,
                 const char* file, int line);

}  // namespace slimeccl_test

#define RANK_CHECK(cond, ...)                                                                                      \
  do {                                                                                                             \
    if (!(cond))                                                                                                   \
      ::slimeccl_test::failRank(__FILE__, __LINE__,                                                                \
                                ::slimeccl_test::concat("check failed: " #cond __VA_OPT__(, ": ", ) __VA_ARGS__)); \
  } while (0)

// `comm` only names whose last error goes into the message; pass NULL after a call that frees it.
#define RANK_CHECK_RESULT(expected, call, comm) \
  ::slimeccl_test::checkResult((expected), (call), #call, (comm), __FILE__, __LINE__)

#define RANK_CHECK_SUCCESS(call, comm) RANK_CHECK_RESULT(slimecclSuccess, call, comm)
