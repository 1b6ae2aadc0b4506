// The walks of doctor's loader facts share one LoaderFileCache: these trees of Python
// environments whose framework libraries are hard links of one set (as conda leaves them),
// copies, or another file at the same place check that sharing changes no answer, and
// that the parsing work stays flat as environments sharing their files are added.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "binfmt/test_builders.h"
#include "platform/env.h"
#include "probe/loader_model.h"
#include "probe/probe.h"
#include "util/temp_dir_test_support.h"

namespace dlenv {
namespace {

namespace fs = std::filesystem;

void write_elf(const fs::path& p, const testbuild::ElfSpec& spec) {
  fs::create_directories(p.parent_path());
  const auto bytes = testbuild::build_elf(spec).bytes;
  std::ofstream(p, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

testbuild::ElfSpec lib(const std::string& soname, std::vector<std::string> needed = {},
                       std::optional<std::string> rpath = std::nullopt) {
  testbuild::ElfSpec s;
  s.soname = soname;
  s.needed = std::move(needed);
  s.rpath = std::move(rpath);
  return s;
}

// How an environment gets its files from the first one's.
enum class Files { hard_links, copies };

class EnvTree {
 public:
  EnvTree() : root_(testing::make_unique_temp_dir("loader-file-cache")) {}
  ~EnvTree() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  static std::string prefix(int i) { return "/home/u/miniconda3/envs/e" + std::to_string(i); }
  static std::string site(int i) { return prefix(i) + "/lib/python3.12/site-packages"; }
  static std::string torch_lib(int i) { return site(i) + "/torch/lib/libtorch_cuda.so"; }
  static std::string cudnn_lib(int i) { return site(i) + "/nvidia/cudnn/lib/libcudnn.so.9"; }

  // Environment 0 holds the files: libtorch_cuda.so needs libcudnn.so.9 through its
  // DT_RPATH, libcudnn.so.9 needs libcudnn_graph.so.9 beside it.
  void first() {
    write_elf(at(torch_lib(0)), lib("libtorch_cuda.so", {"libcudnn.so.9", "libc10.so"},
                                    "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN"));
    write_elf(at(site(0) + "/torch/lib/libc10.so"), lib("libc10.so"));
    write_elf(at(cudnn_lib(0)), lib("libcudnn.so.9", {"libcudnn_graph.so.9"}));
    write_elf(at(site(0) + "/nvidia/cudnn/lib/libcudnn_graph.so.9"), lib("libcudnn_graph.so.9"));
  }

  // Environment i with environment 0's files, linked or copied.
  void like_first(int i, Files how) {
    for (const auto& rel :
         {"/torch/lib/libtorch_cuda.so", "/torch/lib/libc10.so", "/nvidia/cudnn/lib/libcudnn.so.9",
          "/nvidia/cudnn/lib/libcudnn_graph.so.9"}) {
      const fs::path to = at(site(i) + rel);
      fs::create_directories(to.parent_path());
      if (how == Files::hard_links) {
        fs::create_hard_link(at(site(0) + rel), to);
      } else {
        fs::copy_file(at(site(0) + rel), to);
      }
    }
  }

  fs::path at(const std::string& logical) const { return root_ / logical.substr(1); }
  const fs::path& root() const { return root_; }

 private:
  fs::path root_;
};

PythonEnv torch_env(int i) {
  PythonEnv e;
  e.interpreter = Fact<std::string>::known(EnvTree::prefix(i) + "/bin/python3", "test");
  e.prefix = EnvTree::prefix(i);
  e.kind = "conda";
  e.site_packages = {EnvTree::site(i)};
  FrameworkFacts fw;
  fw.name = "torch";
  fw.package = "torch";
  fw.version = "2.9.0+cu130";
  fw.cuda = Fact<std::string>::known("13.0", "test");
  fw.cuda_build = Fact<bool>::known(true, "test");
  e.frameworks.push_back(fw);
  return e;
}

// Doctor's loader facts for the environments `envs` of the tree.
LoaderFacts loader_facts(const EnvTree& t, const std::vector<int>& envs) {
  auto fsys = make_rooted_filesystem(t.root().string());
  auto env = make_map_env({});
  auto kb = Kb::load_embedded();
  EXPECT_TRUE(kb.has_value());
  ProbeContext ctx{*fsys, *env, **kb};
  ctx.live = false;
  Facts f;
  for (int i : envs) f.python.push_back(torch_env(i));
  return probe_loader_facts(ctx, read_loader_config(ctx), f);
}

const LoadContext* framework_of(const LoaderFacts& lf, const std::string& prefix) {
  for (const auto& c : lf.contexts) {
    if (c.kind == "framework" && c.python_prefix == prefix) return &c;
  }
  return nullptr;
}

const ResolvedLib* lib_named(const LoadContext& c, const std::string& name) {
  for (const auto& l : c.libs) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

// Everything the rules read of a context's libraries, as text (for comparisons).
std::string describe(const LoadContext& c) {
  std::string out = c.label + " | " + c.error + "\n";
  for (const auto& l : c.libs) {
    out += l.name + " <- " + l.requester + ": " + l.path + " [" + l.rule + ": " + l.rule_detail +
           "] missing=" + std::to_string(l.missing) +
           " wrong_class=" + std::to_string(l.wrong_class) + " problem=" + l.problem + "\n";
  }
  return out;
}

TEST(LoaderFileCache, HardLinkedEnvironmentsEachResolveTheirOwnFiles) {
  EnvTree t;
  t.first();
  t.like_first(1, Files::hard_links);
  t.like_first(2, Files::hard_links);
  // Environment 2's libcudnn.so.9 is another file at the same place: it needs a library
  // nothing provides.
  fs::remove(t.at(EnvTree::cudnn_lib(2)));
  write_elf(t.at(EnvTree::cudnn_lib(2)),
            lib("libcudnn.so.9", {"libcudnn_graph.so.9", "libextra.so.1"}));
  ASSERT_EQ(fs::hard_link_count(t.at(EnvTree::torch_lib(0))), 3u);

  const LoaderFacts all = loader_facts(t, {0, 1, 2});
  for (int i : {0, 1, 2}) {
    const LoadContext* c = framework_of(all, EnvTree::prefix(i));
    ASSERT_NE(c, nullptr) << i;
    const ResolvedLib* cudnn = lib_named(*c, "libcudnn.so.9");
    ASSERT_NE(cudnn, nullptr) << describe(*c);
    EXPECT_EQ(cudnn->path, EnvTree::cudnn_lib(i)) << describe(*c);
    EXPECT_EQ(cudnn->rule, "DT_RPATH") << describe(*c);
    const ResolvedLib* graph = lib_named(*c, "libcudnn_graph.so.9");
    ASSERT_NE(graph, nullptr) << describe(*c);
    EXPECT_EQ(graph->path, EnvTree::site(i) + "/nvidia/cudnn/lib/libcudnn_graph.so.9");
    const ResolvedLib* extra = lib_named(*c, "libextra.so.1");
    if (i == 2) {
      ASSERT_NE(extra, nullptr) << describe(*c);
      EXPECT_TRUE(extra->missing) << describe(*c);
    } else {
      EXPECT_EQ(extra, nullptr) << describe(*c);
    }
  }
  // Sharing changes nothing: each environment modelled alone, with a cache of its own,
  // gives the same contexts.
  for (int i : {0, 1, 2}) {
    const LoaderFacts alone = loader_facts(t, {i});
    const LoadContext* a = framework_of(alone, EnvTree::prefix(i));
    const LoadContext* b = framework_of(all, EnvTree::prefix(i));
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(describe(*a), describe(*b));
  }
}

// The ELF parses of walks over `envs` environments sharing one cache.
LoaderFileCache::Counts walk_envs(const EnvTree& t, int envs, bool shared) {
  auto fsys = make_rooted_filesystem(t.root().string());
  auto kb = Kb::load_embedded();
  EXPECT_TRUE(kb.has_value());
  LinuxLoaderSettings s;
  s.companions = false;
  s.symbols = false;
  s.parallel_lookups = false;
  s.default_dirs = {"/usr/lib"};
  auto cache = std::make_shared<LoaderFileCache>(*fsys);
  LoaderFileCache::Counts total;
  for (int i = 0; i < envs; ++i) {
    LinuxLoaderSettings si = s;
    auto own = std::make_shared<LoaderFileCache>(*fsys);
    si.files = shared ? cache : own;
    auto tree = model_linux_load(*fsys, **kb, EnvTree::torch_lib(i), si);
    EXPECT_TRUE(tree.has_value());
    if (tree) {
      EXPECT_EQ(tree->objects.size(), 4u);  // libtorch_cuda, libcudnn, libc10, libcudnn_graph
      for (const auto& o : tree->objects) {
        EXPECT_TRUE(o.path && o.path->starts_with(EnvTree::prefix(i) + "/")) << o.name;
      }
    }
    if (!shared) {
      const auto c = own->counts();
      total.elf_parses += c.elf_parses;
      total.header_reads += c.header_reads;
    }
  }
  return shared ? cache->counts() : total;
}

TEST(LoaderFileCache, ParsesStayFlatAcrossEnvironmentsSharingTheirFiles) {
  EnvTree t;
  t.first();
  for (int i = 1; i < 8; ++i) t.like_first(i, Files::hard_links);
  const auto one = walk_envs(t, 1, /*shared=*/true);
  const auto eight = walk_envs(t, 8, /*shared=*/true);
  EXPECT_EQ(one.elf_parses, 4u);
  EXPECT_EQ(eight.elf_parses, one.elf_parses);  // each file parsed once, whatever its paths
  // Headers are read by path (ld.so's check of each candidate): one per environment's file.
  EXPECT_EQ(eight.header_reads, 8 * one.header_reads);
  // Without sharing, every walk parses its own.
  EXPECT_EQ(walk_envs(t, 8, /*shared=*/false).elf_parses, 8 * one.elf_parses);
}

TEST(LoaderFileCache, CopiesAreParsedEach) {
  EnvTree t;
  t.first();
  for (int i = 1; i < 4; ++i) t.like_first(i, Files::copies);
  const auto one = walk_envs(t, 1, /*shared=*/true);
  EXPECT_EQ(walk_envs(t, 4, /*shared=*/true).elf_parses, 4 * one.elf_parses);
}

TEST(LoaderFileCache, AFileRewrittenInPlaceIsParsedAgainByANewCache) {
  EnvTree t;
  t.first();
  auto fsys = make_rooted_filesystem(t.root().string());
  const std::string p = EnvTree::cudnn_lib(0);
  LoaderFileCache before(*fsys);
  auto a = before.elf(p, false);
  ASSERT_TRUE(a && *a);
  EXPECT_EQ((*a)->needed, std::vector<std::string>{"libcudnn_graph.so.9"});
  // The same inode, new contents (a longer needed list: another size).
  write_elf(t.at(p), lib("libcudnn.so.9", {"libcudnn_graph.so.9", "libcudnn_ops.so.9"}));
  LoaderFileCache after(*fsys);
  auto b = after.elf(p, false);
  ASSERT_TRUE(b && *b);
  EXPECT_EQ((*b)->needed, (std::vector<std::string>{"libcudnn_graph.so.9", "libcudnn_ops.so.9"}));
  // Not an ELF file: said, and remembered as such.
  std::ofstream(t.at(p), std::ios::trunc) << "not a library";
  LoaderFileCache text(*fsys);
  auto c = text.elf(p, false);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(*c, nullptr);
  EXPECT_EQ(text.header(p).error, "not an ELF file");
}

}  // namespace
}  // namespace dlenv
