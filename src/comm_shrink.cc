#include "src/comm_shrink.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "src/bootstrap/auth.h"
#include "src/bootstrap/root.h"
#include "src/comm.h"
#include "src/base/error.h"
#include "src/exec/submit.h"
#include "src/init.h"
#include "src/base/param.h"
#include "topo/interfaces.h"

namespace slimeccl {
namespace {

// Split secrets are bound to (split number << 32 | color), never negative.
constexpr int64_t kShrinkBinding = -1;

// What the first rank that stays sends the others.
struct ShrinkInvite {
  SockAddr root;
  Nonce salt;
};

slimecclResult_t survivorsOf(const slimecclComm* comm, const int* excluded, int excludedCount,
                             std::vector<int>* survivors) {
  std::vector<bool> gone(static_cast<size_t>(comm->nranks), false);
  for (int i = 0; i < excludedCount; ++i) {
    if (excluded[i] < 0 || excluded[i] >= comm->nranks)
      return fail(slimecclInvalidArgument, "rank {}: CommShrink: excluded rank {} is not a rank of the comm (0..{})",
                  comm->rank, excluded[i], comm->nranks - 1);
    gone[static_cast<size_t>(excluded[i])] = true;
  }
  if (gone[static_cast<size_t>(comm->rank)])
    return fail(slimecclInvalidUsage,
                "rank {}: CommShrink: this rank is in its own list of excluded ranks; only the ranks that stay call it",
                comm->rank);
  for (int r = 0; r < comm->nranks; ++r)
    if (!gone[static_cast<size_t>(r)]) survivors->push_back(r);
  return slimecclSuccess;
}

OpRecord message(Coll coll, slimecclComm* comm, ShrinkInvite* invite, int peer) {
  return OpRecord{coll,
                  comm,
                  coll == Coll::Send ? invite : nullptr,
                  coll == Coll::Recv ? invite : nullptr,
                  sizeof(ShrinkInvite),
                  slimecclUint8,
                  slimecclSum,
                  -1,
                  peer,
                  0,
                  nullptr};
}

// The first rank that stays: a root with the derived secret, and the invite to every other.
slimecclResult_t invite(slimecclComm* comm, const std::vector<int>& survivors, UniqueIdContents* id) {
  ShrinkInvite invite{};
  if (!makeNonce(&invite.salt))
    return fail(slimecclSystemError, "rank {}: CommShrink: cannot read random bytes", comm->rank);
  id->secret = deriveSecret(comm->secret, kShrinkBinding, invite.salt);
  NetInterface iface;
  slimecclResult_t started = selectInterface(envString("SLIMECCL_SOCKET_IFNAME"), &iface);
  id->root = iface.addr;
  if (started == slimecclSuccess) started = startRoot(&id->root, id->secret, comm->params.timeoutMs);
  if (started != slimecclSuccess) {
    prefixThreadError(fmt::format("rank {}: CommShrink: starting the new comm's bootstrap root: ", comm->rank));
    return started;
  }
  invite.root = id->root;
  SLIMECCL_CHECK(groupStart());
  slimecclResult_t rc = slimecclSuccess;
  for (size_t i = 1; i < survivors.size() && rc == slimecclSuccess; ++i)
    rc = submitOp(message(Coll::Send, comm, &invite, survivors[i]));
  const slimecclResult_t ended = groupEnd();
  return rc != slimecclSuccess ? rc : ended;
}

// The settings the new comm keeps from the old one where the caller's config leaves them unset.
slimecclConfig_t inherited(const slimecclComm* comm, const slimecclConfig_t* config) {
  slimecclConfig_t out = SLIMECCL_CONFIG_INITIALIZER;
  // A config from an older header is shorter: its missing fields keep the initializer's values.
  if (config != nullptr) memcpy(&out, config, std::min(config->size, sizeof(out)));
  out.size = sizeof(out);
  if (out.timeoutMs == SLIMECCL_CONFIG_UNDEF_INT)
    out.timeoutMs = static_cast<int>(std::min<int64_t>(comm->params.timeoutMs, INT_MAX));
  if (out.cudaDevice == SLIMECCL_CONFIG_UNDEF_INT && comm->device >= 0) out.cudaDevice = comm->device;
  if (out.maxCTAs == SLIMECCL_CONFIG_UNDEF_INT && comm->params.maxCtas) out.maxCTAs = *comm->params.maxCtas;
  return out;
}

}  // namespace

slimecclResult_t commShrink(slimecclComm* comm, const int* excluded, int excludedCount, slimecclComm** out,
                            const slimecclConfig_t* config) {
  if (groupIsOpen())
    return fail(slimecclInvalidUsage,
                "rank {}: CommShrink: called inside a group; the ranks that stay exchange the new comm's root over the "
                "old comm, which a group would hold back until its end",
                comm->rank);
  std::vector<int> survivors;
  SLIMECCL_CHECK(survivorsOf(comm, excluded, excludedCount, &survivors));
  int newRank = 0;
  while (survivors[static_cast<size_t>(newRank)] != comm->rank) ++newRank;
  UniqueIdContents id{};
  if (newRank == 0) {
    SLIMECCL_CHECK(invite(comm, survivors, &id));
  } else {
    ShrinkInvite invite{};
    SLIMECCL_CHECK(submitOp(message(Coll::Recv, comm, &invite, survivors[0])));
    id.root = invite.root;
    id.secret = deriveSecret(comm->secret, kShrinkBinding, invite.salt);
  }
  const slimecclConfig_t settings = inherited(comm, config);
  return commInitRank(out, static_cast<int>(survivors.size()), id, newRank, &settings);
}

}  // namespace slimeccl
