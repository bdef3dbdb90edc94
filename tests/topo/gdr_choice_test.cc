// GPUDirect RDMA or host staging for device buffers to other hosts (topo/gdr_choice.h): every
// reason either way, SLIMECCL_GDR's three settings, SLIMECCL_GDR_LEVEL against the PCI path, and
// the parsing of both. The NIC is asked first: where none takes device memory, the GPU does not
// matter.
#include <gtest/gtest.h>

#include "topo/gdr_choice.h"

namespace slimeccl::test {
namespace {

// A GPU and an ib device that allow everything, one PCIe switch apart.
GdrFacts everythingAllows() {
  GdrFacts facts;
  facts.gpu = true;
  facts.gpuIndex = 0;
  facts.gpuRdma = true;
  facts.gpuDmabuf = true;
  facts.module = "ib";
  facts.nic = DeviceMemorySupport{"mlx5_0", true, true, "mlx5_0 registers dmabufs; nvidia-peermem is loaded"};
  facts.pathKnown = true;
  facts.path = PathClass::Pix;
  return facts;
}

bool says(const GdrChoice& choice, const std::string& text) { return choice.reason.find(text) != std::string::npos; }

TEST(GdrChoice, DmabufWhereTheGpuExportsAndTheNicRegistersThem) {
  const GdrChoice choice = chooseGdr(everythingAllows());
  EXPECT_EQ(choice.route, DeviceMemoryRoute::Dmabuf);
  EXPECT_FALSE(choice.refused);
  EXPECT_TRUE(says(choice, "GPUDirect RDMA by dmabuf: GPU 0 and mlx5_0, PIX apart")) << choice.reason;
}

TEST(GdrChoice, PeerMemoryWhereDmabufIsMissingOnEitherSide) {
  GdrFacts facts = everythingAllows();
  facts.gpuDmabuf = false;
  EXPECT_EQ(chooseGdr(facts).route, DeviceMemoryRoute::PeerMemory);
  facts = everythingAllows();
  facts.nic.dmabuf = false;
  const GdrChoice choice = chooseGdr(facts);
  EXPECT_EQ(choice.route, DeviceMemoryRoute::PeerMemory);
  EXPECT_TRUE(says(choice, "by peer memory")) << choice.reason;
}

TEST(GdrChoice, StagingNamesWhatIsMissing) {
  struct Case {
    void (*change)(GdrFacts*);
    std::string reason;
  };
  const Case cases[] = {
      {[](GdrFacts* f) { f->setting = GdrSetting::Off; }, "host staging: SLIMECCL_GDR=off"},
      {[](GdrFacts* f) { f->module.clear(); }, "no module serves peers on other hosts"},
      {[](GdrFacts* f) {
         f->gpu = false;
         f->gpuWhy = "no CUDA driver";
       },
       "no GPU (no CUDA driver)"},
      {[](GdrFacts* f) {
         f->module = "socket";
         f->nic = DeviceMemorySupport{"", false, false, "the 'socket' module moves bytes with the CPU"};
       },
       "host staging: the 'socket' module moves bytes with the CPU"},
      {[](GdrFacts* f) { f->gpuRdma = false; }, "GPU 0 does not support GPUDirect RDMA"},
      {[](GdrFacts* f) {
         f->gpu = false;
         f->nic.dmabuf = false;
         f->nic.peerMemory = false;
         f->nic.why = "rxe_a refuses dmabuf registrations";
       },
       "host staging: rxe_a refuses dmabuf registrations"},
      {[](GdrFacts* f) {
         f->gpuDmabuf = false;
         f->nic.peerMemory = false;
         f->nic.why = "mlx5_0 registers dmabufs; no peer memory client";
       },
       "GPU 0 does not export dmabufs, and mlx5_0 registers dmabufs; no peer memory client"},
      {[](GdrFacts* f) { f->pathKnown = false; }, "the PCI path between GPU 0 and mlx5_0 is not known"},
      {[](GdrFacts* f) { f->path = PathClass::Sys; },
       "GPU 0 and mlx5_0 are SYS apart, farther than SLIMECCL_GDR_LEVEL=PXB"},
  };
  for (const Case& c : cases) {
    GdrFacts facts = everythingAllows();
    c.change(&facts);
    const GdrChoice choice = chooseGdr(facts);
    EXPECT_EQ(choice.route, DeviceMemoryRoute::None) << c.reason;
    EXPECT_FALSE(choice.refused) << c.reason;
    EXPECT_TRUE(says(choice, c.reason)) << choice.reason;
  }
}

TEST(GdrChoice, TheLevelBoundsThePathUnderAuto) {
  GdrFacts facts = everythingAllows();
  facts.path = PathClass::Pxb;
  EXPECT_EQ(chooseGdr(facts).route, DeviceMemoryRoute::Dmabuf);
  facts.path = PathClass::Phb;
  EXPECT_EQ(chooseGdr(facts).route, DeviceMemoryRoute::None);
  facts.farthest = PathClass::Phb;
  EXPECT_EQ(chooseGdr(facts).route, DeviceMemoryRoute::Dmabuf);
}

TEST(GdrChoice, OnIgnoresDistanceAndRefusesWhatCannotBe) {
  GdrFacts facts = everythingAllows();
  facts.setting = GdrSetting::On;
  facts.path = PathClass::Sys;
  EXPECT_EQ(chooseGdr(facts).route, DeviceMemoryRoute::Dmabuf);
  facts.pathKnown = false;
  EXPECT_EQ(chooseGdr(facts).route, DeviceMemoryRoute::Dmabuf);
  facts.gpuRdma = false;
  const GdrChoice choice = chooseGdr(facts);
  EXPECT_EQ(choice.route, DeviceMemoryRoute::None);
  EXPECT_TRUE(choice.refused);
  EXPECT_TRUE(says(choice, "SLIMECCL_GDR=on asks for GPUDirect RDMA, which cannot be used: GPU 0 does not support"))
      << choice.reason;
}

TEST(GdrChoice, SettingsParse) {
  GdrSetting setting = GdrSetting::Off;
  EXPECT_TRUE(parseGdrSetting("", &setting));
  EXPECT_EQ(setting, GdrSetting::Auto);
  EXPECT_TRUE(parseGdrSetting("on", &setting));
  EXPECT_EQ(setting, GdrSetting::On);
  EXPECT_TRUE(parseGdrSetting("0", &setting));
  EXPECT_EQ(setting, GdrSetting::Off);
  EXPECT_FALSE(parseGdrSetting("yes", &setting));
  PathClass level = PathClass::Sys;
  EXPECT_TRUE(parsePathClass("phb", &level));
  EXPECT_EQ(level, PathClass::Phb);
  EXPECT_TRUE(parsePathClass("NODE", &level));
  EXPECT_EQ(level, PathClass::Node);
  EXPECT_FALSE(parsePathClass("near", &level));
}

}  // namespace
}  // namespace slimeccl::test
