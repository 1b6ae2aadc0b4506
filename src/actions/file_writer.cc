#include "actions/file_writer.h"

#include <fmt/format.h>

namespace dlenv {

std::optional<Error> FaultInjectingWriter::step(const std::string& what,
                                                const std::function<void()>& half) {
  if (++calls_ != fault_at_) return std::nullopt;
  if (half) half();
  if (at_fault_) at_fault_();
  return Error{fmt::format("injected failure at step {}: {}", calls_, what)};
}

Result<void> FaultInjectingWriter::make_dir(const std::string& path, uint32_t mode) {
  if (auto f = step("make_dir " + path)) return std::unexpected(*f);
  return inner_.make_dir(path, mode);
}

Result<void> FileWriter::write_new_file(const std::string& path, std::string_view data,
                                        uint32_t mode) {
  auto f = create_new_file(path, mode, data.size());
  if (!f) return std::unexpected(f.error());
  if (auto w = (*f)->write(data); !w) return w;
  return (*f)->finish();
}

namespace {

// The file of the faulty call: its bytes pass through until half of the promised
// size is reached; there the fault happens (what a full disk or a crash leaves).
class FaultyNewFile : public NewFile {
 public:
  FaultyNewFile(std::unique_ptr<NewFile> inner, uint64_t size, std::function<Result<void>()> fault)
      : inner_(std::move(inner)), half_(size / 2), fault_(std::move(fault)) {}
  Result<void> write(std::string_view data) override {
    const uint64_t room = half_ - written_;
    if (data.size() < room) {
      written_ += data.size();
      return inner_->write(data);
    }
    if (auto w = inner_->write(data.substr(0, static_cast<size_t>(room))); !w) return w;
    written_ = half_;
    return fault_();
  }
  Result<void> set_owner(uint32_t uid, uint32_t gid) override {
    return inner_->set_owner(uid, gid);
  }
  Result<void> finish() override { return fault_(); }

 private:
  std::unique_ptr<NewFile> inner_;
  uint64_t half_;
  uint64_t written_ = 0;
  std::function<Result<void>()> fault_;
};

}  // namespace

Result<std::unique_ptr<NewFile>> FaultInjectingWriter::create_new_file(const std::string& path,
                                                                       uint32_t mode,
                                                                       uint64_t size) {
  if (++calls_ != fault_at_) return inner_.create_new_file(path, mode, size);
  auto inner = inner_.create_new_file(path, mode, size);
  if (!inner) return inner;
  const std::string what = fmt::format("injected failure at step {}: write {}", calls_, path);
  auto fault = [this, what]() -> Result<void> {
    if (at_fault_) at_fault_();
    return fail(what);
  };
  return std::unique_ptr<NewFile>(new FaultyNewFile(std::move(*inner), size, fault));
}

Result<void> FaultInjectingWriter::make_symlink(const std::string& path,
                                                const std::string& target) {
  if (auto f = step("symlink " + path)) return std::unexpected(*f);
  return inner_.make_symlink(path, target);
}

Result<void> FaultInjectingWriter::rename(const std::string& from, const std::string& to) {
  if (auto f = step("rename " + from)) return std::unexpected(*f);
  return inner_.rename(from, to);
}

Result<void> FaultInjectingWriter::replace_file(const std::string& from, const std::string& to) {
  if (auto f = step("replace " + to)) return std::unexpected(*f);
  return inner_.replace_file(from, to);
}

Result<void> FaultInjectingWriter::remove(const std::string& path) {
  if (auto f = step("remove " + path)) return std::unexpected(*f);
  return inner_.remove(path);
}

Result<void> FaultInjectingWriter::append_durably(const std::string& path, std::string_view data) {
  if (auto f = step("append " + path,
                    [&] { (void)inner_.append_durably(path, data.substr(0, data.size() / 2)); }))
    return std::unexpected(*f);
  return inner_.append_durably(path, data);
}

}  // namespace dlenv
