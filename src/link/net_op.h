// A net operation of the executor: one isend or irecv on a lane, posted once its dependency
// is met, with what to do when it completes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace slimeccl {

struct OpPlan;
struct Session;

enum class NetOpKind : unsigned char {
  Hello,       // the ConnectHello that opens a connection
  HeaderSend,  // descriptor, with the first chunk inline when small
  HeaderRecv,
  CtsSend,  // the receiver's descriptor, sent back to the sender
  CtsRecv,
  DataSend,
  DataRecv,
};

struct NetOp {
  NetOpKind kind;
  char* data = nullptr;
  size_t bytes = 0;
  // Ready once *dependency >= needed (dependency == nullptr: ready at once).
  const size_t* dependency = nullptr;
  size_t needed = 0;
  bool inlined = false;  // a first chunk carried inside its session's header message
  OpPlan* plan = nullptr;
  Session* session = nullptr;
  int step = -1;      // data chunks: the schedule step this chunk belongs to
  size_t chunk = 0;   // index of the chunk within its step
  size_t offset = 0;  // byte offset of the chunk within its step
  void* request = nullptr;
};

}  // namespace slimeccl
