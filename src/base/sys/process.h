// Whether another process on this host still runs.
#pragma once

namespace slimeccl {

// True when `pid` names no process, or a zombie (killed, not yet reaped by its parent: gone all
// the same). False for the calling process and where it cannot tell.
bool processGone(int pid);

}  // namespace slimeccl
