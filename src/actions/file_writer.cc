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

Result<void> FaultInjectingWriter::write_new_file(const std::string& path, std::string_view data,
                                                  uint32_t mode) {
  if (auto f = step("write " + path, [&] {
        (void)inner_.write_new_file(path, data.substr(0, data.size() / 2), mode);
      }))
    return std::unexpected(*f);
  return inner_.write_new_file(path, data, mode);
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
