// The net modules take their NUMA node and listening interface from the context's placement, not
// from the machine's topology: a placement handed in is asked (with the rank), its answer is used
// and its failure is the module's; a context without one has no preferences.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "net/net.h"
#include "src/base/error.h"

namespace slimeccl {
namespace {

class CountingPlacement final : public NetPlacement {
 public:
  int homeNumaNode() const override {
    ++numaAsks;
    return 0;
  }
  slimecclResult_t listenInterface(int rank, NetInterface* out) const override {
    ++interfaceAsks;
    askedRank = rank;
    if (refuse) return fail(slimecclInvalidArgument, "rank {}: the test's placement has no interface", rank);
    return selectInterface("=lo", out);
  }
  std::string placedDevice(int, const char*) const override { return "test0"; }

  bool refuse = false;
  mutable int numaAsks = 0, interfaceAsks = 0, askedRank = -1;
};

// A listener of `module` for `rank` with `placement`, closed at the end of the scope.
struct Listening {
  Listening(NetModule* m, const NetPlacement& placement, int rank) : module(m) {
    char handle[SLIMECCL_NET_HANDLE_MAXSIZE];
    result = module->listen(NetContext{bell.get(), rank, 0, false, &placement}, handle, &comm);
  }
  ~Listening() {
    if (comm != nullptr) module->closeListen(comm);
  }
  NetModule* module;
  std::unique_ptr<Bell> bell{Bell::create()};
  void* comm = nullptr;
  slimecclResult_t result;
};

// The socket module listens where the placement says (asked with the rank), the shm module puts
// its memory on the node the placement names.
TEST(NetPlacement, EachModuleAsksThePlacementItIsHanded) {
  CountingPlacement socketPlacement, shmPlacement;
  const Listening socket(socketNetModule(), socketPlacement, 3), shm(shmNetModule(), shmPlacement, 1);
  EXPECT_TRUE(socket.result == slimecclSuccess && shm.result == slimecclSuccess) << threadError();
  EXPECT_EQ(socketPlacement.interfaceAsks, 1);
  EXPECT_EQ(socketPlacement.askedRank, 3);
  EXPECT_EQ(shmPlacement.numaAsks, 1);
  EXPECT_EQ(shmPlacement.interfaceAsks, 0);
}

TEST(NetPlacement, APlacementsFailureIsTheListenersFailure) {
  CountingPlacement placement;
  placement.refuse = true;
  const Listening listening(socketNetModule(), placement, 5);
  EXPECT_EQ(listening.result, slimecclInvalidArgument);
  EXPECT_EQ(threadError(), "rank 5: the test's placement has no interface");
  EXPECT_EQ(listening.comm, nullptr);
  clearThreadError();
}

TEST(NetPlacement, AContextWithoutOneHasNoPreferences) {
  const NetContext bare{};
  const NetPlacement& none = placementOf(bare);
  EXPECT_EQ(none.homeNumaNode(), -1);
  EXPECT_EQ(none.placedDevice(0, "ib"), "");
  NetInterface iface;
  EXPECT_EQ(none.listenInterface(0, &iface), slimecclSuccess) << threadError();
  EXPECT_FALSE(iface.name.empty());
  CountingPlacement placement;
  const NetContext placed{nullptr, 0, 0, false, &placement};
  EXPECT_EQ(&placementOf(placed), &placement);
}

}  // namespace
}  // namespace slimeccl
