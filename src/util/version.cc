#include "util/version.h"

#include <charconv>

namespace dlenv {

std::optional<Version> Version::parse(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  if (i < text.size() && (text[i] == 'v' || text[i] == 'V')) ++i;
  std::vector<int> parts;
  while (i < text.size()) {
    if (text[i] < '0' || text[i] > '9') break;
    int value = 0;
    auto [ptr, ec] = std::from_chars(text.data() + i, text.data() + text.size(), value);
    if (ec != std::errc()) return std::nullopt;  // overflow
    parts.push_back(value);
    i = static_cast<size_t>(ptr - text.data());
    if (i + 1 < text.size() && text[i] == '.' && text[i + 1] >= '0' && text[i + 1] <= '9') {
      ++i;
      continue;
    }
    break;
  }
  if (parts.empty()) return std::nullopt;
  Version v(std::move(parts));
  size_t start = 0;
  while (start < text.size() &&
         (text[start] == ' ' || text[start] == '\t' || text[start] == 'v' || text[start] == 'V')) {
    ++start;
  }
  v.text_ = std::string(text.substr(start, i - start));
  return v;
}

Version Version::from_cuda_int(int encoded) {
  return Version{encoded / 1000, (encoded % 1000) / 10};
}

Version Version::from_cudnn_int(long encoded) {
  if (encoded >= 90000) {
    return Version{static_cast<int>(encoded / 10000), static_cast<int>((encoded % 10000) / 100),
                   static_cast<int>(encoded % 100)};
  }
  return Version{static_cast<int>(encoded / 1000), static_cast<int>((encoded % 1000) / 100),
                 static_cast<int>(encoded % 100)};
}

Version Version::truncated(size_t n) const {
  std::vector<int> p(parts_.begin(),
                     parts_.begin() + static_cast<long>(std::min(n, parts_.size())));
  return Version(std::move(p));
}

std::string Version::str() const {
  if (!text_.empty()) return text_;
  std::string out;
  for (size_t i = 0; i < parts_.size(); ++i) {
    if (i) out += '.';
    out += std::to_string(parts_[i]);
  }
  return out;
}

std::strong_ordering operator<=>(const Version& a, const Version& b) {
  size_t n = std::max(a.parts_.size(), b.parts_.size());
  for (size_t i = 0; i < n; ++i) {
    if (auto c = a.part(i) <=> b.part(i); c != 0) return c;
  }
  return std::strong_ordering::equal;
}

}  // namespace dlenv
