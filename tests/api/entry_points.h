// Every communication entry point behind one signature, so argument checks can be applied to
// all of them from one table.
#pragma once

#include <slimeccl.h>

#include <functional>
#include <string>
#include <vector>

namespace slimeccl_test {

// The union of the arguments the entry points take. validCallArgs() gives values every entry
// point accepts on a one-rank communicator; a test then breaks one of them.
struct CallArgs {
  const void* sendbuff;
  void* recvbuff;
  size_t count;
  slimecclDataType_t datatype;
  slimecclRedOp_t op;
  int root;
  int peer;
  slimecclComm_t comm;
  slimecclChunkFn onChunk;
  const void* gemmB;   // the GEMM ops' B; sendbuff is their A (block), recvbuff their C
  void* gemmGathered;  // AllGatherGemm's optional gathered A
};

// Which arguments of CallArgs an entry point reads.
enum Uses : unsigned {
  kUsesSendbuff = 1u << 0,
  kUsesRecvbuff = 1u << 1,
  kUsesRedOp = 1u << 2,
  kUsesRoot = 1u << 3,
  kUsesPeer = 1u << 4,
};

struct EntryPoint {
  std::string name;
  unsigned uses;
  std::function<slimecclResult_t(const CallArgs&)> call;
};

const std::vector<EntryPoint>& entryPoints();

// Buffers large enough for every entry point with count 4 on one rank.
struct CallBuffers {
  alignas(64) unsigned char send[4096] = {};
  alignas(64) unsigned char recv[4096] = {};
  alignas(64) unsigned char b[4096] = {};
};

CallArgs validCallArgs(slimecclComm_t comm, CallBuffers& buffers);

}  // namespace slimeccl_test
