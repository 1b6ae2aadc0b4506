// The host's own /etc/ld.so.cache against `ldconfig -p` (Linux only: it runs the
// host's ldconfig; ldcache_test.cc has the byte-buffer tests every platform runs).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "binfmt/ldcache.h"

namespace dlenv {
namespace {

TEST(LdCacheOnDisk, MatchesLdconfig) {
  const std::string path = "/etc/ld.so.cache";
  std::ifstream in(path, std::ios::binary);
  if (!in) GTEST_SKIP() << path << " not present";
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

  std::string ldconfig;
  for (const char* p : {"/sbin/ldconfig", "/usr/sbin/ldconfig", "/bin/ldconfig"}) {
    if (std::filesystem::exists(p)) {
      ldconfig = p;
      break;
    }
  }
  if (ldconfig.empty()) GTEST_SKIP() << "ldconfig not found";
  FILE* pipe = ::popen((ldconfig + " -p -C " + path + " 2>/dev/null").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  ASSERT_EQ(::pclose(pipe), 0) << "ldconfig -p failed";

  // "N libs found in cache `/etc/ld.so.cache'" then "\tsoname (flags) => path".
  std::vector<std::pair<std::string, std::string>> want;
  size_t declared = 0;
  size_t pos = 0;
  bool first = true;
  while (pos < out.size()) {
    size_t eol = out.find('\n', pos);
    if (eol == std::string::npos) eol = out.size();
    const std::string line = out.substr(pos, eol - pos);
    pos = eol + 1;
    if (first) {
      declared = std::stoul(line);
      first = false;
      continue;
    }
    const size_t paren = line.find(" (");
    const size_t arrow = line.rfind(" => ");
    if (paren == std::string::npos || arrow == std::string::npos) continue;
    const size_t start = line.find_first_not_of('\t');
    want.emplace_back(line.substr(start, paren - start), line.substr(arrow + 4));
  }
  ASSERT_EQ(want.size(), declared);

  auto r = parse_ld_cache(ByteView(data), path);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_TRUE(r->has_value());
  const LdCache& c = **r;
  ASSERT_EQ(c.entries.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(c.entries[i].soname, want[i].first) << i;
    EXPECT_EQ(c.entries[i].path, want[i].second) << i;
  }
  // Every soname is found, and find() returns an entry for that soname.
  for (const auto& [soname, p] : want) {
    const LdCacheEntry* e = c.find(soname);
    ASSERT_NE(e, nullptr) << soname;
    EXPECT_EQ(e->soname, soname);
  }
}

}  // namespace
}  // namespace dlenv
