#include "probe/nvml.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "platform/dynamic_library.h"
#include "probe/fake_library_test_support.h"

namespace dlenv {
namespace {

namespace fs = std::filesystem;

constexpr unsigned long long kGiB = 1024ULL * 1024ULL * 1024ULL;

std::string fake_root() {
  return testing::fake_root("nvml");
}

[[maybe_unused]] const auto* const kCleanup =
    ::testing::AddGlobalTestEnvironment(new testing::RemoveFakesAtExit("nvml"));

std::string build_fake_nvml(const std::string& subdir, const std::string& file_name,
                            const std::string& define = "") {
  return testing::build_fake_library("nvml", "fake_nvml.c", subdir, file_name, define);
}

// Sets FAKE_NVML_MODE for one test.
class ModeGuard : public testing::EnvGuard {
 public:
  explicit ModeGuard(const char* mode) : EnvGuard("FAKE_NVML_MODE", mode) {}
};

std::string canonical(const std::string& p) {
  return testing::canonical_or_same(p);
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string src(const NvmlSnapshot& s, const std::string& fn) {
  return "NVML " + fn + " (" + *s.library + ")";
}

int call_hook(const DynamicLibrary& lib, const char* name) {
  void* p = lib.symbol(name);
  if (!p) return -1;
  return reinterpret_cast<int (*)()>(p)();
}

TEST(NvmlProbe, DefaultCandidates) {
  EXPECT_EQ(default_nvml_candidates(),
            (std::vector<std::string>{"libnvidia-ml.so.1", "libnvidia-ml.so"}));
}

TEST(NvmlProbe, TwoFakeGpusEveryField) {
  const std::string path = build_fake_nvml("ok", "libnvidia-ml.so.580.95.05");
  ASSERT_FALSE(path.empty());
  ModeGuard mode("ok");
  // Held open so the fake's counters survive the probe's dlclose.
  auto hold = DynamicLibrary::open(path);
  ASSERT_TRUE(hold.has_value()) << hold.error().message;

  NvmlSnapshot s = probe_nvml({path});

  ASSERT_TRUE(s.library.ok()) << s.library.reason;
  EXPECT_EQ(canonical(*s.library), canonical(path));
  EXPECT_NE(s.library.source.find(path), std::string::npos) << s.library.source;

  EXPECT_FALSE(s.init_error.ok()) << *s.init_error;
  EXPECT_EQ(s.init_return, 0);
  EXPECT_GE(s.init_ms, 0.0);
  EXPECT_GE(s.query_ms, 0.0);

  ASSERT_TRUE(s.driver_version.ok()) << s.driver_version.reason;
  EXPECT_EQ(*s.driver_version, "580.95.05");
  EXPECT_EQ(s.driver_version.status, FactStatus::ok);
  EXPECT_EQ(s.driver_version.source, src(s, "nvmlSystemGetDriverVersion"));

  ASSERT_TRUE(s.cuda_driver_version.ok()) << s.cuda_driver_version.reason;
  EXPECT_EQ(*s.cuda_driver_version, 13000);  // the legacy unversioned entry answers 1
  EXPECT_EQ(s.cuda_driver_version.source, src(s, "nvmlSystemGetCudaDriverVersion_v2"));

  ASSERT_TRUE(s.device_count.ok()) << s.device_count.reason;
  EXPECT_EQ(*s.device_count, 2);  // the legacy unversioned entry answers 1
  EXPECT_EQ(s.device_count.source, src(s, "nvmlDeviceGetCount_v2"));
  ASSERT_EQ(s.gpus.size(), 2u);

  const GpuFacts& g0 = s.gpus[0];
  EXPECT_EQ(g0.index, 0);
  EXPECT_EQ(g0.source, src(s, "nvmlDeviceGetHandleByIndex_v2"));
  ASSERT_TRUE(g0.name.ok()) << g0.name.reason;
  EXPECT_EQ(*g0.name, "NVIDIA H200");
  EXPECT_EQ(g0.name.source, src(s, "nvmlDeviceGetName"));
  ASSERT_TRUE(g0.uuid.ok()) << g0.uuid.reason;
  EXPECT_EQ(*g0.uuid, "GPU-11111111-2222-3333-4444-555555555555");
  EXPECT_EQ(g0.uuid.source, src(s, "nvmlDeviceGetUUID"));
  ASSERT_TRUE(g0.pci_bus_id.ok()) << g0.pci_bus_id.reason;
  EXPECT_EQ(*g0.pci_bus_id, "00000000:18:00.0");  // the legacy v1 entry answers "legacy-v1"
  EXPECT_EQ(g0.pci_bus_id.source, src(s, "nvmlDeviceGetPciInfo_v3"));
  ASSERT_TRUE(g0.compute_capability.ok()) << g0.compute_capability.reason;
  EXPECT_EQ(*g0.compute_capability, (Version{9, 0}));
  EXPECT_EQ(g0.compute_capability->str(), "9.0");
  EXPECT_EQ(g0.compute_capability.source, src(s, "nvmlDeviceGetCudaComputeCapability"));
  ASSERT_TRUE(g0.memory_total_bytes.ok()) << g0.memory_total_bytes.reason;
  EXPECT_EQ(*g0.memory_total_bytes, 141 * kGiB);
  EXPECT_EQ(g0.memory_total_bytes.source, src(s, "nvmlDeviceGetMemoryInfo"));
  ASSERT_TRUE(g0.persistence_mode.ok()) << g0.persistence_mode.reason;
  EXPECT_TRUE(*g0.persistence_mode);
  EXPECT_EQ(g0.persistence_mode.source, src(s, "nvmlDeviceGetPersistenceMode"));
  ASSERT_TRUE(g0.mig_mode.ok()) << g0.mig_mode.reason;
  EXPECT_EQ(*g0.mig_mode, "disabled");
  EXPECT_EQ(g0.mig_mode.source, src(s, "nvmlDeviceGetMigMode"));
  ASSERT_TRUE(g0.compute_mode.ok()) << g0.compute_mode.reason;
  EXPECT_EQ(*g0.compute_mode, "default");
  EXPECT_EQ(g0.compute_mode.source, src(s, "nvmlDeviceGetComputeMode"));
  EXPECT_TRUE(g0.visible);

  const GpuFacts& g1 = s.gpus[1];
  EXPECT_EQ(g1.index, 1);
  EXPECT_EQ(g1.name.value, "NVIDIA H200");
  EXPECT_EQ(g1.uuid.value, "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee");
  EXPECT_EQ(g1.pci_bus_id.value, "00000000:2A:00.0");
  EXPECT_EQ(g1.compute_capability.value, (Version{9, 0}));
  EXPECT_EQ(g1.memory_total_bytes.value, 141 * kGiB);
  EXPECT_EQ(g1.persistence_mode.value, false);
  EXPECT_EQ(g1.mig_mode.value, "enabled");
  EXPECT_EQ(g1.compute_mode.value, "exclusive-process");
  // Linux: the driver model query is not supported -> "n/a".
  EXPECT_EQ(g0.driver_model.value, "n/a");
  EXPECT_EQ(g0.driver_model.source, src(s, "nvmlDeviceGetDriverModel_v2"));

  // The newest variants bound, not the legacy unversioned ones.
  for (const char* name :
       {"nvmlInit_v2", "nvmlSystemGetCudaDriverVersion_v2", "nvmlDeviceGetCount_v2",
        "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetPciInfo_v3", "nvmlShutdown",
        "nvmlErrorString", "nvmlSystemGetDriverVersion", "nvmlDeviceGetName", "nvmlDeviceGetUUID",
        "nvmlDeviceGetCudaComputeCapability", "nvmlDeviceGetMemoryInfo",
        "nvmlDeviceGetPersistenceMode", "nvmlDeviceGetMigMode", "nvmlDeviceGetComputeMode"}) {
    EXPECT_TRUE(has(s.bound_symbols, name)) << name;
  }
  for (const char* legacy : {"nvmlInit", "nvmlDeviceGetCount", "nvmlDeviceGetHandleByIndex",
                             "nvmlDeviceGetPciInfo", "nvmlSystemGetCudaDriverVersion"}) {
    EXPECT_FALSE(has(s.bound_symbols, legacy)) << legacy;
  }

  // nvmlInit_v2 was balanced by one nvmlShutdown.
  EXPECT_EQ(call_hook(*hold, "fake_nvml_live_inits"), 0);
  EXPECT_EQ(call_hook(*hold, "fake_nvml_shutdown_calls"), 1);
}

TEST(NvmlProbe, WindowsDriverModelWddmAndTcc) {
  const std::string path = build_fake_nvml("ok", "libnvidia-ml.so.580.95.05");
  ASSERT_FALSE(path.empty());
  ModeGuard mode("windows");
  NvmlSnapshot s = probe_nvml({path});
  ASSERT_EQ(s.gpus.size(), 2u);
  EXPECT_TRUE(has(s.bound_symbols, "nvmlDeviceGetDriverModel_v2"));
  EXPECT_EQ(s.gpus[0].driver_model.value, "WDDM");
  EXPECT_EQ(s.gpus[1].driver_model.value, "TCC (WDDM after a reboot)");
}

TEST(NvmlProbe, VersionMismatchRecordsInitError) {
  const std::string path = build_fake_nvml("mismatch", "libnvidia-ml.so.580.95.05");
  ASSERT_FALSE(path.empty());
  ModeGuard mode("mismatch");
  auto hold = DynamicLibrary::open(path);
  ASSERT_TRUE(hold.has_value()) << hold.error().message;

  NvmlSnapshot s = probe_nvml({path});

  ASSERT_TRUE(s.library.ok()) << s.library.reason;
  EXPECT_EQ(canonical(*s.library), canonical(path));
  ASSERT_TRUE(s.init_error.ok());
  EXPECT_EQ(*s.init_error,
            "Driver/library version mismatch (return code 18, "
            "NVML_ERROR_LIB_RM_VERSION_MISMATCH)");
  EXPECT_EQ(s.init_error.source, src(s, "nvmlInit_v2"));
  EXPECT_EQ(s.init_return, 18);

  EXPECT_FALSE(s.driver_version.ok());
  EXPECT_EQ(s.driver_version.status, FactStatus::error);
  EXPECT_NE(s.driver_version.reason.find("nvmlInit_v2 failed: Driver/library version mismatch"),
            std::string::npos)
      << s.driver_version.reason;
  EXPECT_FALSE(s.cuda_driver_version.ok());
  EXPECT_EQ(s.cuda_driver_version.status, FactStatus::error);
  EXPECT_FALSE(s.device_count.ok());
  EXPECT_EQ(s.device_count.status, FactStatus::error);
  EXPECT_TRUE(s.gpus.empty());
  EXPECT_TRUE(has(s.bound_symbols, "nvmlInit_v2"));
  // No nvmlShutdown after a failed nvmlInit.
  EXPECT_EQ(call_hook(*hold, "fake_nvml_shutdown_calls"), 0);
}

TEST(NvmlProbe, NoPermission) {
  const std::string path = build_fake_nvml("noperm", "libnvidia-ml.so.1");
  ASSERT_FALSE(path.empty());
  ModeGuard mode("noperm");
  NvmlSnapshot s = probe_nvml({path});
  ASSERT_TRUE(s.init_error.ok());
  EXPECT_EQ(*s.init_error, "Insufficient Permissions (return code 4, NVML_ERROR_NO_PERMISSION)");
  EXPECT_EQ(s.init_return, 4);
  EXPECT_EQ(s.driver_version.status, FactStatus::permission_denied);
  EXPECT_TRUE(s.gpus.empty());
}

TEST(NvmlProbe, DriverNotLoaded) {
  const std::string path = build_fake_nvml("nodriver", "libnvidia-ml.so.1");
  ASSERT_FALSE(path.empty());
  ModeGuard mode("nodriver");
  NvmlSnapshot s = probe_nvml({path});
  ASSERT_TRUE(s.init_error.ok());
  EXPECT_EQ(*s.init_error, "Driver Not Loaded (return code 9, NVML_ERROR_DRIVER_NOT_LOADED)");
  EXPECT_EQ(s.init_return, 9);
  EXPECT_EQ(s.driver_version.status, FactStatus::error);
}

TEST(NvmlProbe, FailingDeviceQueriesCarryTheNvmlText) {
  const std::string path = build_fake_nvml("degraded", "libnvidia-ml.so.1");
  ASSERT_FALSE(path.empty());
  ModeGuard mode("degraded");
  NvmlSnapshot s = probe_nvml({path});
  ASSERT_TRUE(s.driver_version.ok()) << s.driver_version.reason;
  ASSERT_EQ(s.gpus.size(), 2u);
  const GpuFacts& g = s.gpus[0];
  EXPECT_TRUE(g.name.ok());

  EXPECT_FALSE(g.uuid.ok());
  EXPECT_EQ(g.uuid.status, FactStatus::error);
  EXPECT_EQ(g.uuid.reason,
            "nvmlDeviceGetUUID failed: Unknown Error (return code 999, NVML_ERROR_UNKNOWN)");
  EXPECT_EQ(g.uuid.source, src(s, "nvmlDeviceGetUUID"));

  EXPECT_FALSE(g.memory_total_bytes.ok());
  EXPECT_EQ(g.memory_total_bytes.status, FactStatus::permission_denied);
  EXPECT_EQ(g.memory_total_bytes.reason,
            "nvmlDeviceGetMemoryInfo failed: Insufficient Permissions (return code 4, "
            "NVML_ERROR_NO_PERMISSION)");

  // MIG not supported by the GPU is an answer, not a failure.
  ASSERT_TRUE(g.mig_mode.ok());
  EXPECT_EQ(*g.mig_mode, "n/a");
}

TEST(NvmlProbe, MissingLibraryIsNotFoundWithTheLoaderText) {
  const std::string missing = fake_root() + "/absent/libnvidia-ml.so.1";
  void* h = ::dlopen(missing.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_EQ(h, nullptr);
  const std::string dl_text = ::dlerror();

  NvmlSnapshot s = probe_nvml({missing});
  EXPECT_FALSE(s.library.ok());
  EXPECT_EQ(s.library.status, FactStatus::not_found);
  EXPECT_NE(s.library.reason.find(dl_text), std::string::npos)
      << "reason: " << s.library.reason << "\ndlerror: " << dl_text;
  EXPECT_FALSE(s.init_error.ok());
  EXPECT_EQ(s.init_error.status, FactStatus::skipped);
  EXPECT_EQ(s.driver_version.status, FactStatus::not_found);
  EXPECT_NE(s.driver_version.reason.find(dl_text), std::string::npos);
  EXPECT_EQ(s.device_count.status, FactStatus::not_found);
  EXPECT_TRUE(s.gpus.empty());
  EXPECT_TRUE(s.bound_symbols.empty());
}

TEST(NvmlProbe, NoCandidates) {
  NvmlSnapshot s = probe_nvml({});
  EXPECT_EQ(s.library.status, FactStatus::not_found);
  EXPECT_FALSE(s.library.reason.empty());
}

TEST(NvmlProbe, MissingRequiredSymbolIsAnErrorNamingIt) {
  const std::string path =
      build_fake_nvml("nohandle", "libnvidia-ml.so.1", "-DFAKE_NVML_OMIT_HANDLE_BY_INDEX");
  ASSERT_FALSE(path.empty());
  ModeGuard mode("ok");
  NvmlSnapshot s = probe_nvml({path});
  EXPECT_FALSE(s.library.ok());
  EXPECT_EQ(s.library.status, FactStatus::error);
  EXPECT_NE(s.library.reason.find("nvmlDeviceGetHandleByIndex"), std::string::npos)
      << s.library.reason;
  EXPECT_EQ(s.init_error.status, FactStatus::skipped);
  EXPECT_FALSE(s.driver_version.ok());
  EXPECT_EQ(s.driver_version.status, FactStatus::error);
  EXPECT_TRUE(s.gpus.empty());
}

TEST(NvmlProbe, MissingOptionalSymbolsAreNotSupported) {
  const std::string path = build_fake_nvml("minimal", "libnvidia-ml.so.1", "-DFAKE_NVML_MINIMAL");
  ASSERT_FALSE(path.empty());
  ModeGuard mode("ok");
  NvmlSnapshot s = probe_nvml({path});
  ASSERT_TRUE(s.library.ok()) << s.library.reason;
  EXPECT_EQ(s.driver_version.value, "580.95.05");
  EXPECT_EQ(s.cuda_driver_version.status, FactStatus::not_supported);
  EXPECT_NE(s.cuda_driver_version.reason.find("nvmlSystemGetCudaDriverVersion"), std::string::npos);
  ASSERT_EQ(s.gpus.size(), 2u);
  const GpuFacts& g = s.gpus[1];
  EXPECT_EQ(g.index, 1);
  for (const Fact<std::string>* f :
       {&g.name, &g.uuid, &g.pci_bus_id, &g.mig_mode, &g.compute_mode}) {
    EXPECT_EQ(f->status, FactStatus::not_supported) << f->reason;
    EXPECT_NE(f->reason.find("is not exported by"), std::string::npos) << f->reason;
  }
  EXPECT_EQ(g.name.reason, "nvmlDeviceGetName is not exported by " + *s.library);
  EXPECT_EQ(g.compute_capability.status, FactStatus::not_supported);
  EXPECT_EQ(g.memory_total_bytes.status, FactStatus::not_supported);
  EXPECT_EQ(g.persistence_mode.status, FactStatus::not_supported);
}

TEST(NvmlProbe, FallsBackToTheNextCandidate) {
  const std::string bad =
      build_fake_nvml("fallback-bad", "libnvidia-ml.so.1", "-DFAKE_NVML_OMIT_HANDLE_BY_INDEX");
  const std::string good = build_fake_nvml("fallback-good", "libnvidia-ml.so.1");
  ASSERT_FALSE(bad.empty());
  ASSERT_FALSE(good.empty());
  ModeGuard mode("ok");
  NvmlSnapshot s = probe_nvml({fake_root() + "/absent/libnvidia-ml.so.1", bad, good});
  ASSERT_TRUE(s.library.ok()) << s.library.reason;
  EXPECT_EQ(canonical(*s.library), canonical(good));
  EXPECT_EQ(s.device_count.value, 2);
}

// Runs against whatever this machine has (usually no driver on build machines).
TEST(NvmlProbe, DefaultCandidatesAreConsistentOnThisMachine) {
  NvmlSnapshot s = probe_nvml(default_nvml_candidates());
  if (!s.library.ok()) {
    EXPECT_NE(s.library.status, FactStatus::ok);
    EXPECT_FALSE(s.library.reason.empty());
    EXPECT_EQ(s.init_error.status, FactStatus::skipped);
    EXPECT_FALSE(s.init_error.reason.empty());
    EXPECT_FALSE(s.driver_version.ok());
    EXPECT_FALSE(s.driver_version.reason.empty());
    EXPECT_TRUE(s.gpus.empty());
  } else if (s.init_error.ok()) {
    EXPECT_FALSE(s.init_error->empty());
    EXPECT_NE(s.init_return, 0);
    EXPECT_FALSE(s.driver_version.ok());
    EXPECT_TRUE(s.gpus.empty());
  } else {
    EXPECT_EQ(s.init_return, 0);
    ASSERT_TRUE(s.driver_version.ok()) << s.driver_version.reason;
    EXPECT_TRUE(Version::parse(*s.driver_version).has_value()) << *s.driver_version;
    if (s.device_count.ok()) {
      EXPECT_EQ(s.gpus.size(), static_cast<size_t>(*s.device_count));
    }
  }
}

}  // namespace
}  // namespace dlenv
