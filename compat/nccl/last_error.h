// The sentence of a call this library refused before slimeccl saw it, which ncclGetLastError
// shows until a later call reaches slimeccl.
#pragma once

#include <string>

namespace slimeccl_nccl {

void recordRefusal(const std::string& sentence);
void forgetRefusal();
// The refusal of the calling thread's last call, or null when slimeccl has the last word.
const char* lastRefusal();

}  // namespace slimeccl_nccl
