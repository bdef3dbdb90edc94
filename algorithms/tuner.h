// The tuner: one table (collective x size range x rank-count range x topology class -> algorithm,
// chunk size), read top to bottom, first match wins. Defaults come from measurements on one host
// over shm and several namespace-hosts over sockets, and from the alpha-beta model in
// docs/tuning.md. SLIMECCL_ALGO ("allgather:hd,allreduce:ring") overrides per collective.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "algorithms/catalog.h"

namespace slimeccl {

// The pipelining unit when neither the table nor SLIMECCL_CHUNK_BYTES says otherwise.
constexpr size_t kDefaultChunkBytes = 512 * 1024;
// Send/Recv forward nothing, so their chunks only bound one net message: larger ones cost fewer
// round trips (over shm a chunk of this size is still pulled in one copy at full speed).
constexpr size_t kP2PChunkBytes = 4 * 1024 * 1024;

// SharedSlots: one host whose ranks share memory slots (shm between every pair; see
// src/exec/mailbox.h), for the algorithms those slots carry.
enum class TopoClass : unsigned char { Any, SingleHost, MultiHost, SharedSlots };

// What the table is matched against besides the call.
struct TunerTopology {
  bool singleHost;
  bool sharedSlots;
};

struct TunerRow {
  Coll coll;
  size_t minBytes;  // inclusive; bytes as nccl-tests counts them (see opBytes)
  size_t maxBytes;  // exclusive
  int minRanks;     // inclusive
  int maxRanks;     // inclusive
  TopoClass topo;
  Algo algo;
  size_t chunkBytes;
};

struct TunerChoice {
  Algo algo;
  size_t chunkBytes;
  bool forced;  // from SLIMECCL_ALGO
};

// Per-collective overrides parsed from SLIMECCL_ALGO.
struct AlgoOverrides {
  std::vector<std::pair<Coll, Algo>> entries;
  static slimecclResult_t parse(const std::string& text, AlgoOverrides* out);
};

const std::vector<TunerRow>& defaultTunerTable();
// The size the table is keyed by: the total bytes of the op as nccl-tests reports them.
size_t opBytes(Coll coll, size_t count, size_t typeBytes, int nranks);
TunerChoice chooseAlgorithm(Coll coll, size_t bytes, int nranks, TunerTopology topo, const AlgoOverrides& overrides);
// "any", "one host", "several hosts", "shared slots".
const char* topoClassName(TopoClass topo);
// The table in force, one row per line, for SLIMECCL_DEBUG=INFO and slimeccl-info.
std::string describeTunerTable(const AlgoOverrides& overrides);
// Collective names as SLIMECCL_ALGO spells them: "allgather", "allreduce", ...
const char* collKey(Coll coll);

}  // namespace slimeccl
