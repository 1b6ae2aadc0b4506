// What every FileSystem shares (see filesystem.h).
#include "platform/filesystem.h"

namespace dlenv {

namespace {

// The default reader: read_at of the file system, which opens the file each time.
class ReopeningReader final : public FileReader {
 public:
  ReopeningReader(const FileSystem& fs, std::string path) : fs_(fs), path_(std::move(path)) {}
  Result<size_t> read_at(uint64_t offset, std::span<char> buffer) override {
    return fs_.read_at(path_, offset, buffer);
  }

 private:
  const FileSystem& fs_;
  std::string path_;
};

}  // namespace

Result<std::unique_ptr<FileReader>> FileSystem::open_reader(std::string_view path) const {
  // The same failure as a read: a missing, unreadable or directory path.
  char probe = 0;
  auto n = read_at(path, 0, std::span<char>(&probe, 0));
  if (!n) return std::unexpected(n.error());
  return std::unique_ptr<FileReader>(std::make_unique<ReopeningReader>(*this, std::string(path)));
}

}  // namespace dlenv
