// SLIMECCL_DEBUG_DUMP=SIGUSR1 (or USR2, or a signal number): on that signal, every live
// communicator's flight recorder is written to stderr by a helper thread (not the handler).
#pragma once

namespace slimeccl {

// Installs the handler once per process when SLIMECCL_DEBUG_DUMP is set.
void installDumpSignal();

}  // namespace slimeccl
