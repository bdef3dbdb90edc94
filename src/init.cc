#include "src/init.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>

#include "src/bootstrap/auth.h"
#include "src/bootstrap/join.h"
#include "src/bootstrap/root.h"
#include "src/comm.h"
#include "src/debug/dump_signal.h"
#include "src/device/gpu.h"
#include "src/device/gpu_direct.h"
#include "src/base/error.h"
#include "src/base/util/secure.h"
#include "topo/interfaces.h"

namespace slimeccl {
namespace {

// How long a rank hosting the root waits for it to answer the other ranks.
constexpr int kRootDrainMs = 5000;
constexpr int64_t kRootIdleMinMs = 600000;

struct CommDeleter {
  void operator()(slimecclComm* comm) const {
    commRelease(comm);
    delete comm;
  }
};
using CommPtr = std::unique_ptr<slimecclComm, CommDeleter>;

// The config's cudaDevice, or SLIMECCL_CONFIG_UNDEF_INT where the config is older than that field
// (a program built against a header without it passes a smaller size).
// Fields added after the first release: a config made by an older header ends before them.
#define CONFIG_FIELD(config, field)                                                                \
  ((config)->size >= offsetof(slimecclConfig_t, field) + sizeof((config)->field) ? (config)->field \
                                                                                 : SLIMECCL_CONFIG_UNDEF_INT)

int configuredDevice(const slimecclConfig_t* config) { return CONFIG_FIELD(config, cudaDevice); }
int configuredMaxCtas(const slimecclConfig_t* config) { return CONFIG_FIELD(config, maxCTAs); }

void applyConfig(slimecclComm* comm, const slimecclConfig_t* config) {
  comm->params = CommParams::fromEnv();
  if (config == nullptr) return;
  if (config->timeoutMs != SLIMECCL_CONFIG_UNDEF_INT) comm->params.timeoutMs = config->timeoutMs;
  if (config->netName != SLIMECCL_CONFIG_UNDEF_PTR) comm->params.net = config->netName;
  if (config->commName != SLIMECCL_CONFIG_UNDEF_PTR) comm->name = config->commName;
  if (const int device = configuredDevice(config); device != SLIMECCL_CONFIG_UNDEF_INT) comm->device = device;
  if (const int ctas = configuredMaxCtas(config); ctas != SLIMECCL_CONFIG_UNDEF_INT) comm->params.maxCtas = ctas;
}

// What each rank contributes to a split.
struct SplitEntry {
  int32_t color;
  int32_t key;
  int32_t parentRank;
  int32_t refused;  // the rank's own call failed (a slimecclResult_t); 0: it did not
  Nonce salt;       // the new rank 0's makes the new comm's secret from the parent's (never sent)
  RankInfo info;
};

}  // namespace

slimecclResult_t makeLocalUniqueId(UniqueIdContents* out) {
  NetInterface iface;
  SLIMECCL_CHECK(selectInterface(envString("SLIMECCL_SOCKET_IFNAME"), &iface));
  if (!randomBytes(out->secret.bytes, kSecretBytes))
    return fail(slimecclSystemError, "cannot read random bytes for the secret: {}", strerror(errno));
  out->root = iface.addr;
  out->rootAtRankZero = false;
  // The root waits for the first rank at least kRootIdleMinMs: between slimecclGetUniqueId and the
  // first init a job may load a model or wait on a slow launcher, and a root that left would turn
  // that into "cannot reach the bootstrap root". Once a rank arrives, the ranks' timeout governs.
  int64_t timeoutMs = envInt("SLIMECCL_TIMEOUT_MS", kDefaultTimeoutMs);
  return startRoot(&out->root, out->secret, timeoutMs <= 0 ? 0 : std::max(timeoutMs, kRootIdleMinMs));
}

slimecclResult_t checkConfig(const slimecclConfig_t* config, const char* opName) {
  if (config == nullptr) return slimecclSuccess;
  if (config->magic != SLIMECCL_CONFIG_MAGIC || config->size < offsetof(slimecclConfig_t, cudaDevice))
    return fail(slimecclInvalidArgument, "{}: config was not set up with SLIMECCL_CONFIG_INITIALIZER", opName);
  if (config->netName != SLIMECCL_CONFIG_UNDEF_PTR && config->netName[0] == '\0')
    return fail(slimecclInvalidArgument, "{}: config netName is an empty string", opName);
  const int device = configuredDevice(config);
  if (device != SLIMECCL_CONFIG_UNDEF_INT && (device < 0 || device >= gpuCount()))
    return fail(slimecclInvalidArgument, "{}: config cudaDevice {} is not a GPU of this process ({} GPUs{}{})", opName,
                device, gpuCount(), gpuPresent() ? "" : ": ", gpuAbsence());
  const int ctas = configuredMaxCtas(config);
  if (ctas != SLIMECCL_CONFIG_UNDEF_INT && (ctas < 1 || ctas > kMaxSmCopyBlocks))
    return fail(slimecclInvalidArgument, "{}: config maxCTAs {} is not between 1 and {}", opName, ctas,
                kMaxSmCopyBlocks);
  return slimecclSuccess;
}

slimecclResult_t commInitRank(slimecclComm** out, int nranks, const UniqueIdContents& id, int rank,
                              const slimecclConfig_t* config) {
  CommPtr comm(new slimecclComm());
  applyConfig(comm.get(), config);
  comm->secret = id.secret;
  Deadline deadline = Deadline::afterMs(comm->params.timeoutMs);
  if (id.rootAtRankZero && rank == 0) {
    SockAddr bindAddr = id.root;
    slimecclResult_t rc = startRoot(&bindAddr, id.secret, comm->params.timeoutMs);
    if (rc != slimecclSuccess) {
      prefixThreadError(fmt::format("rank 0: SLIMECCL_COMM_ID={}: ", id.root.toString()));
      return rc;
    }
  }
  RankInfo mine;
  SLIMECCL_CHECK(commPrepare(comm.get(), rank, nranks, &mine));
  SLIMECCL_CHECK(comm->ring.listen(&mine.ringAddr));
  std::vector<RankInfo> table;
  slimecclResult_t joined = joinThroughRoot(id, nranks, rank, comm->params.timeoutMs, mine, &table);
  waitForLocalRoot(id.root, kRootDrainMs);
  SLIMECCL_CHECK(joined);
  SLIMECCL_CHECK(commFinish(comm.get(), std::move(table), deadline));
  SLIMECCL_CHECK(setUpNamedGpus(comm.get()));
  SLIMECCL_CHECK(setUpHostTiers(comm.get()));
  installDumpSignal();
  registerForDumps(comm.get());
  *out = comm.release();
  return slimecclSuccess;
}

namespace {

// The new comm's half of a split before the ranks exchange entries: its listening ring and this
// rank's info.
slimecclResult_t prepareChild(slimecclComm* parent, const slimecclConfig_t* config, CommPtr* child, SplitEntry* mine) {
  child->reset(new slimecclComm());
  applyConfig(child->get(), config);
  if (config == nullptr || config->timeoutMs == SLIMECCL_CONFIG_UNDEF_INT)
    (*child)->params.timeoutMs = parent->params.timeoutMs;
  if (config == nullptr || configuredDevice(config) == SLIMECCL_CONFIG_UNDEF_INT) (*child)->device = parent->device;
  if (config == nullptr || configuredMaxCtas(config) == SLIMECCL_CONFIG_UNDEF_INT)
    (*child)->params.maxCtas = parent->params.maxCtas;
  if (!makeNonce(&mine->salt))
    return fail(slimecclSystemError, "rank {}: CommSplit: cannot read random bytes", parent->rank);
  SLIMECCL_CHECK(commPrepare(child->get(), parent->rank, parent->nranks, &mine->info));
  return (*child)->ring.listen(&mine->info.ringAddr);
}

}  // namespace

slimecclResult_t commSplit(slimecclComm* parent, int color, int key, slimecclComm** out, const slimecclConfig_t* config,
                           slimecclResult_t refusal) {
  if (out != nullptr) *out = nullptr;
  CommPtr child;
  SplitEntry mine{};
  mine.color = color < 0 ? SLIMECCL_SPLIT_NOCOLOR : color;
  mine.key = key;
  mine.parentRank = parent->rank;
  if (refusal == slimecclSuccess && color >= 0) refusal = prepareChild(parent, config, &child, &mine);
  // A refused call still takes part in the exchange, so that every rank learns of it at once
  // (instead of waiting out the timeout) and the parent's ring stays in step.
  const std::string refusalText = refusal != slimecclSuccess ? threadError() : std::string();
  mine.refused = refusal;
  std::vector<SplitEntry> all(parent->nranks);
  all[parent->rank] = mine;
  Deadline deadline = Deadline::afterMs(parent->params.timeoutMs);
  uint64_t seq = parent->splitSeq++;
  slimecclResult_t rc = parent->ring.allgather(all.data(), sizeof(SplitEntry), deadline, &parent->aborted);
  if (rc != slimecclSuccess) {
    std::string cause = threadError();
    std::string sentence =
        fmt::format("rank {}: CommSplit (split {}, color {}, key {}) failed{}: {}", parent->rank, seq, color, key,
                    rc == slimecclTimeout ? " (a rank did not call it in time)" : "", cause);
    // The bootstrap ring is out of step now, so the parent cannot split again.
    commFail(parent, rc, sentence);
    return setError(rc, sentence);
  }
  if (refusal != slimecclSuccess) return setError(refusal, refusalText);
  for (const SplitEntry& e : all)
    if (e.refused != slimecclSuccess)
      return fail(slimecclInvalidUsage,
                  "rank {}: CommSplit (split {}, color {}, key {}): parent rank {} refused its own call ({}), so no "
                  "rank gets a new communicator; the parent stays usable",
                  parent->rank, seq, color, key, e.parentRank,
                  slimecclGetErrorString(static_cast<slimecclResult_t>(e.refused)));
  if (color < 0) return slimecclSuccess;
  std::vector<SplitEntry> members;
  for (const SplitEntry& e : all)
    if (e.color == color) members.push_back(e);
  std::stable_sort(members.begin(), members.end(), [](const SplitEntry& a, const SplitEntry& b) {
    return a.key != b.key ? a.key < b.key : a.parentRank < b.parentRank;
  });
  std::vector<RankInfo> table;
  int newRank = -1;
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i].parentRank == parent->rank) newRank = static_cast<int>(i);
    table.push_back(members[i].info);
    table.back().rank = static_cast<int>(i);
  }
  child->rank = newRank;
  child->nranks = static_cast<int>(members.size());
  // Only holders of the parent's secret can compute the new comm's from the new rank 0's salt.
  child->secret = deriveSecret(parent->secret, static_cast<int64_t>(seq << 32) | static_cast<uint32_t>(color),
                               members.front().salt);
  if (child->name.empty()) child->name = fmt::format("{}.split{}.color{}", parent->name, seq, color);
  rc = commFinish(child.get(), std::move(table), deadline);
  if (rc != slimecclSuccess) {
    prefixThreadError(fmt::format("rank {}: CommSplit (color {}): new comm rank {}: ", parent->rank, color, newRank));
    return rc;
  }
  SLIMECCL_CHECK(setUpNamedGpus(child.get()));
  SLIMECCL_CHECK(setUpHostTiers(child.get()));
  registerForDumps(child.get());
  *out = child.release();
  return slimecclSuccess;
}

}  // namespace slimeccl
