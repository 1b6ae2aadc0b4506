// Hostile files and bytes, in-process (issue 20, items 2, 3 and 5): a FIFO or a socket
// where cudnn_version.h should be is said (never a hang, never "no header"); bytes that are
// not UTF-8 in the environment reach the JSON as \udcXX escapes; an escape sequence in a
// file name is shown, not written. The real binary's write errors and SIGPIPE:
// tests/scripts/output_safety.sh.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <string>

#include "cli/scenario_support.h"

namespace dlenv {
namespace {

using nlohmann::json;

class HostileRoot : public testing::LinuxSysroot<HostileRoot> {
 public:
  HostileRoot() : LinuxSysroot("hostile") {}
  // A CUDA 13 toolkit with a cuDNN 9 library copy (empty files: found by name) and no header.
  HostileRoot& toolkit_with_cudnn() {
    file("/usr/local/cuda-13.0/version.json",
         "{\"cuda\": {\"name\": \"CUDA SDK\", \"version\": \"13.0.2\"}}\n");
    file("/usr/local/cuda-13.0/include/cuda.h", "#define CUDA_VERSION 13000\n");
    file("/usr/local/cuda-13.0/lib64/libcudnn.so.9.19.0");
    link("/usr/local/cuda-13.0/lib64/libcudnn.so.9", "libcudnn.so.9.19.0");
    link("/usr/local/cuda", "cuda-13.0");
    return env("PATH=/usr/bin:/bin\nCUDA_HOME=/usr/local/cuda-13.0\n");
  }
};

const char* kHeader = "/usr/local/cuda-13.0/include/cudnn_version.h";

std::string header_reason(const json& j) {
  for (const auto& c : j["cudnn"]) {
    if (c.contains("header_version")) return c["header_version"].dump();
  }
  return "no cudnn entry with header_version in " + j["cudnn"].dump();
}

TEST(HostileFiles, FifoAsCudnnHeaderIsNamedNotReadNotMissing) {
  HostileRoot s;
  s.toolkit_with_cudnn();
  std::filesystem::create_directories(s.at(kHeader).parent_path());
  ASSERT_EQ(::mkfifo(s.at(kHeader).c_str(), 0644), 0);
  json j = testing::doctor_json(s);  // a blocking open or read would hang here
  const std::string why = header_reason(j);
  EXPECT_NE(why.find("it is a FIFO, not a regular file"), std::string::npos) << why;
  EXPECT_NE(why.find("\"error\""), std::string::npos) << why;
  auto text = testing::doctor(s);
  EXPECT_NE(text.out.find("FIFO"), std::string::npos) << text.out;
}

TEST(HostileFiles, SocketAsCudnnHeaderIsNamed) {
  HostileRoot s;
  s.toolkit_with_cudnn();
  std::filesystem::create_directories(s.at(kHeader).parent_path());
  const std::string path = s.at(kHeader).string();
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) GTEST_SKIP() << "temp path too long for a socket";
  path.copy(addr.sun_path, path.size());
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  json j = testing::doctor_json(s);
  ::close(fd);
  const std::string why = header_reason(j);
  EXPECT_NE(why.find("it is a socket, not a regular file"), std::string::npos) << why;
}

TEST(HostileBytes, InvalidUtf8InTheEnvironmentIsEscapedInJson) {
  HostileRoot s;
  s.toolkit_with_cudnn();
  s.env("PATH=/opt/bin\xff\xfe:/usr/bin\nLD_LIBRARY_PATH=/opt/l\xc3\x28ib\x1b[31m\n");
  auto r = testing::doctor(s, {"--json"});
  ASSERT_TRUE(r.err.empty()) << r.err;  // before the fix: "json type_error.316"
  EXPECT_NE(r.out.find("/opt/bin\\udcff\\udcfe"), std::string::npos) << r.out.substr(0, 2000);
  EXPECT_NE(r.out.find("/opt/l\\udcc3(ib\\u001b[31m"), std::string::npos);
  // The rest of the document is well-formed JSON: with the escapes made harmless, it parses.
  std::string plain = r.out;
  for (size_t p; (p = plain.find("\\udc")) != std::string::npos;) plain.replace(p, 6, "?");
  json parsed;
  EXPECT_NO_THROW(parsed = json::parse(plain));
  EXPECT_TRUE(parsed.contains("env")) << plain.substr(0, 400);
}

TEST(HostileBytes, EscapeSequenceInAFileNameIsShownInText) {
  testing::TempTree t("hostile-name");
  const std::string name = "/lib\x1b]0;title\x07\x1b[2J.so";
  t.file(name, "not an ELF file");
  auto r = testing::run_cli({"deps", t.at(name).string()});
  const std::string all = r.out + r.err;
  EXPECT_EQ(all.find('\x1b'), std::string::npos) << all;
  EXPECT_EQ(all.find('\x07'), std::string::npos) << all;
  EXPECT_NE(all.find("lib\\e]0;title\\a\\e[2J.so"), std::string::npos) << all;
}

}  // namespace
}  // namespace dlenv
