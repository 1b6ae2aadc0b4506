#include "actions/file_writer.h"

#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "util/strings.h"

namespace dlenv {
namespace {

namespace sfs = std::filesystem;

class RealFileWriter : public FileWriter {
 public:
  explicit RealFileWriter(std::string root) : root_(std::move(root)) {
    while (!root_.empty() && root_.back() == '/') root_.pop_back();
  }

  Result<void> make_dir(const std::string& path, uint32_t mode) override {
    const std::string h = host_path(path);
    std::error_code ec;
    if (!sfs::create_directory(h, ec)) {
      return fail(fmt::format("cannot create the directory {}: {}", h,
                              ec ? ec.message() : "it already exists"));
    }
    sfs::permissions(h, static_cast<sfs::perms>(mode & 07777), ec);
    return {};
  }

  Result<void> write_new_file(const std::string& path, std::string_view data,
                              uint32_t mode) override {
    const std::string h = host_path(path);
    std::error_code ec;
    if (sfs::exists(sfs::symlink_status(h, ec))) {
      return fail(fmt::format("cannot write {}: something is already there", h));
    }
    {
      std::ofstream out(h, std::ios::binary | std::ios::trunc);
      if (!out) return fail(fmt::format("cannot create {}: {}", h, std::strerror(errno)));
      out.write(data.data(), static_cast<std::streamsize>(data.size()));
      out.flush();
      if (!out) {
        std::string why = std::strerror(errno);
        out.close();
        sfs::remove(h, ec);
        return fail(fmt::format("cannot write {} ({} bytes): {}", h, data.size(), why));
      }
    }
    sfs::permissions(h, static_cast<sfs::perms>(mode & 07777), ec);
    if (ec) return fail(fmt::format("cannot set the permissions of {}: {}", h, ec.message()));
    return {};
  }

  Result<void> make_symlink(const std::string& path, const std::string& target) override {
    const std::string h = host_path(path);
    std::error_code ec;
    sfs::create_symlink(target, h, ec);
    if (ec)
      return fail(fmt::format("cannot create the link {} -> {}: {}", h, target, ec.message()));
    return {};
  }

  Result<void> rename(const std::string& from, const std::string& to) override {
    const std::string hf = host_path(from), ht = host_path(to);
    std::error_code ec;
    if (sfs::exists(sfs::symlink_status(ht, ec))) {
      return fail(fmt::format("cannot move {} to {}: the destination exists", hf, ht));
    }
    sfs::rename(hf, ht, ec);
    if (ec) return fail(fmt::format("cannot move {} to {}: {}", hf, ht, ec.message()));
    return {};
  }

  Result<void> remove(const std::string& path) override {
    const std::string h = host_path(path);
    std::error_code ec;
    if (!sfs::remove(h, ec)) {
      return fail(fmt::format("cannot remove {}: {}", h, ec ? ec.message() : "it does not exist"));
    }
    return {};
  }

  bool exists(const std::string& path) const override {
    std::error_code ec;
    return sfs::exists(sfs::symlink_status(host_path(path), ec));
  }

  std::string host_path(const std::string& path) const override {
    if (root_.empty()) return path;
    return root_ + (starts_with(path, "/") ? "" : "/") + path;
  }

 private:
  std::string root_;
};

}  // namespace

std::unique_ptr<FileWriter> make_file_writer(const std::string& root) {
  return std::make_unique<RealFileWriter>(root == "/" ? "" : root);
}

Transaction::~Transaction() {
  if (!done_) rollback();
}

Result<void> Transaction::make_dir(const std::string& path, uint32_t mode) {
  // A failed step may still leave a partial result behind: undo whatever appeared.
  const bool existed = w_.exists(path);
  auto r = w_.make_dir(path, mode);
  if (r || (!existed && w_.exists(path))) undo_.push_back({Undo::remove_path, path, "", 0});
  return r;
}

Result<void> Transaction::make_dirs(const std::string& path,
                                    const std::function<bool(const std::string&)>& exists) {
  if (path.empty() || path == "/" || exists(path)) return {};
  auto parent = make_dirs(path_dirname(path), exists);
  if (!parent) return parent;
  return make_dir(path);
}

Result<void> Transaction::write_new_file(const std::string& path, std::string_view data,
                                         uint32_t mode) {
  // A failed step may still leave a partial result behind: undo whatever appeared.
  const bool existed = w_.exists(path);
  auto r = w_.write_new_file(path, data, mode);
  if (r || (!existed && w_.exists(path))) undo_.push_back({Undo::remove_path, path, "", 0});
  return r;
}

Result<void> Transaction::make_symlink(const std::string& path, const std::string& target) {
  // A failed step may still leave a partial result behind: undo whatever appeared.
  const bool existed = w_.exists(path);
  auto r = w_.make_symlink(path, target);
  if (r || (!existed && w_.exists(path))) undo_.push_back({Undo::remove_path, path, "", 0});
  return r;
}

Result<void> Transaction::rename(const std::string& from, const std::string& to) {
  auto r = w_.rename(from, to);
  if (r) undo_.push_back({Undo::rename_back, to, from, 0});
  return r;
}

Result<void> Transaction::remove_dir(const std::string& path, uint32_t mode) {
  auto r = w_.remove(path);
  if (r) undo_.push_back({Undo::recreate_dir, path, "", mode});
  return r;
}

std::vector<std::string> Transaction::commit() {
  done_ = true;
  undo_.clear();
  std::vector<std::string> failed;
  for (const auto& p : on_commit_) {
    if (auto r = w_.remove(p); !r) failed.push_back(r.error().message);
  }
  on_commit_.clear();
  return failed;
}

std::vector<std::string> Transaction::rollback() {
  done_ = true;
  std::vector<std::string> failed;
  for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) {
    Result<void> r = it->kind == Undo::remove_path   ? w_.remove(it->a)
                     : it->kind == Undo::rename_back ? w_.rename(it->a, it->b)
                                                     : w_.make_dir(it->a, it->mode);
    if (!r) failed.push_back(r.error().message);
  }
  undo_.clear();
  on_commit_.clear();
  return failed;
}

}  // namespace dlenv
