#include "src/debug/dump_signal.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "src/debug/flight_recorder.h"
#include "src/base/log.h"
#include "src/base/param.h"

namespace slimeccl {
namespace {

int wakePipe[2] = {-1, -1};

// Async-signal-safe: only a write to the pipe; the dumper thread does the rest.
void onDumpSignal(int) {
  char byte = 1;
  ssize_t ignored = write(wakePipe[1], &byte, 1);
  (void)ignored;
}

int parseSignal(const std::string& name) {
  std::string n = name.rfind("SIG", 0) == 0 ? name.substr(3) : name;
  if (n == "USR1") return SIGUSR1;
  if (n == "USR2") return SIGUSR2;
  if (n == "QUIT") return SIGQUIT;
  char* end = nullptr;
  long number = strtol(n.c_str(), &end, 10);
  if (end == n.c_str() || *end != '\0') return 0;
  // Only signals nobody else needs: a handler that returns from SIGSEGV would run the fault again
  // for ever, and one on SIGTERM or SIGINT would keep the process from stopping when asked.
  bool spare =
      number == SIGUSR1 || number == SIGUSR2 || number == SIGQUIT || (number >= SIGRTMIN && number <= SIGRTMAX);
  return spare ? static_cast<int>(number) : 0;
}

}  // namespace

void installDumpSignal() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::string name = envString("SLIMECCL_DEBUG_DUMP");
    if (name.empty()) return;
    int sig = parseSignal(name);
    if (sig == 0) {
      SLIMECCL_WARN(kLogInit, -1,
                    "SLIMECCL_DEBUG_DUMP='{}' is not a signal this can take (use SIGUSR1, SIGUSR2, SIGQUIT, their "
                    "numbers or a real-time signal's)",
                    name);
      return;
    }
    if (pipe2(wakePipe, O_CLOEXEC) != 0) return;
    std::thread([] {
      char byte;
      while (read(wakePipe[0], &byte, 1) > 0) dumpAllCommunicators();
    }).detach();
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = onDumpSignal;
    action.sa_flags = SA_RESTART;
    sigaction(sig, &action, nullptr);
    SLIMECCL_INFO(kLogInit, -1, "flight recorder dumps on signal {}", sig);
  });
}

}  // namespace slimeccl
