// NvmlHealthReader against the fake libnvidia-ml (tests/fixtures/fake_nvml.c).
#include <gtest/gtest.h>

#include "probe/fake_library_test_support.h"
#include "probe/nvml_health.h"

namespace dlenv {
namespace {

[[maybe_unused]] const auto* const kCleanup =
    ::testing::AddGlobalTestEnvironment(new testing::RemoveFakesAtExit("nvmlhealth"));

std::string fake(const std::string& define = "") {
  return testing::build_fake_library("nvmlhealth", "fake_nvml.c", define.empty() ? "ok" : "min",
                                     "libnvidia-ml.so.1", define);
}

TEST(NvmlHealth, ReadsModeProcessesEccAndRemapByPciBusId) {
  testing::EnvGuard mode("FAKE_NVML_MODE", "ok");
  auto reader = NvmlHealthReader::open({fake()});
  ASSERT_TRUE(reader) << reader.error().message;
  EXPECT_EQ((*reader)->library(), fake());
  // CUDA prints the 4-digit domain form; NVML finds the GPU by it.
  auto h0 = (*reader)->by_pci_bus_id("0000:18:00.0");
  ASSERT_TRUE(h0);
  EXPECT_EQ(h0->compute_mode, "default");
  EXPECT_EQ(h0->compute_processes, 0);
  EXPECT_EQ(h0->ecc_enabled, true);
  EXPECT_EQ(h0->ecc_uncorrected_volatile, 0u);
  EXPECT_EQ(h0->ecc_corrected_volatile, 0u);
  EXPECT_EQ(h0->remap_pending, false);
  // GPU 1: exclusive-process, two processes, ECC not supported -> off, no counts.
  auto h1 = (*reader)->by_pci_bus_id("0000:2a:00.0");
  ASSERT_TRUE(h1);
  EXPECT_EQ(h1->compute_mode, "exclusive-process");
  EXPECT_EQ(h1->compute_processes, 2);
  EXPECT_EQ(h1->ecc_enabled, false);
  EXPECT_FALSE(h1->ecc_uncorrected_volatile.has_value());
  EXPECT_FALSE((*reader)->by_pci_bus_id("0000:99:00.0"));
  EXPECT_FALSE((*reader)->by_pci_bus_id(""));
  EXPECT_TRUE((*reader)->by_index(1));
  EXPECT_FALSE((*reader)->by_index(7));
}

TEST(NvmlHealth, CountsThatGrowBetweenReadsAndPendingRemaps) {
  testing::EnvGuard mode("FAKE_NVML_MODE", "ecc");
  auto reader = NvmlHealthReader::open({fake()});
  ASSERT_TRUE(reader) << reader.error().message;
  auto before = (*reader)->by_index(0), after = (*reader)->by_index(0);
  ASSERT_TRUE(before && after);
  ASSERT_TRUE(before->ecc_uncorrected_volatile && after->ecc_uncorrected_volatile);
  EXPECT_GT(*after->ecc_uncorrected_volatile, *before->ecc_uncorrected_volatile);
  EXPECT_EQ(before->remap_pending, true);
}

TEST(NvmlHealth, OptionalQueriesMissingAndInitFailuresAreClean) {
  {
    testing::EnvGuard mode("FAKE_NVML_MODE", "ok");
    auto reader = NvmlHealthReader::open({fake("-DFAKE_NVML_MINIMAL")});
    ASSERT_TRUE(reader) << reader.error().message;
    auto h = (*reader)->by_index(0);
    ASSERT_TRUE(h);
    EXPECT_TRUE(h->compute_mode.empty());
    EXPECT_FALSE(h->ecc_enabled.has_value());
    EXPECT_FALSE((*reader)->by_pci_bus_id("0000:18:00.0"));  // no lookup by bus id
  }
  testing::EnvGuard mode("FAKE_NVML_MODE", "nodriver");
  auto reader = NvmlHealthReader::open({fake(), "/nonexistent/libnvidia-ml.so.1"});
  ASSERT_FALSE(reader);
  EXPECT_NE(reader.error().message.find("nvmlInit failed (return code 9)"), std::string::npos)
      << reader.error().message;
  EXPECT_NE(reader.error().message.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos);
}

}  // namespace
}  // namespace dlenv
