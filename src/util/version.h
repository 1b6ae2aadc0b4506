// Dotted numeric versions ("525.60.13", "13.0", "9.19.0.56") compared
// component-wise as integers; missing trailing components count as zero.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlenv {

class Version {
 public:
  Version() = default;
  explicit Version(std::vector<int> parts) : parts_(std::move(parts)) {}
  Version(std::initializer_list<int> parts) : parts_(parts) {}

  // Parses the leading dotted-number part of `text` ("12.4.1", "v11.8", "550.54.15 ").
  // Returns nullopt when no digits start the text (after an optional 'v'/'V').
  static std::optional<Version> parse(std::string_view text);
  // CUDA integer encoding: 12040 -> 12.4, 13000 -> 13.0 (as returned by cuDriverGetVersion).
  static Version from_cuda_int(int encoded);
  // cuDNN CUDNN_VERSION encoding: <9: M*1000+m*100+p; >=9: M*10000+m*100+p.
  static Version from_cudnn_int(long encoded);

  bool empty() const { return parts_.empty(); }
  int major() const { return part(0); }
  int minor() const { return part(1); }
  int patch() const { return part(2); }
  int part(size_t i) const { return i < parts_.size() ? parts_[i] : 0; }
  const std::vector<int>& parts() const { return parts_; }
  // First n components ("12.4.1".truncated(2) == 12.4).
  Version truncated(size_t n) const;
  // The parsed text when there is one (keeps "580.65.06"), else the numbers joined by dots.
  std::string str() const;

  friend std::strong_ordering operator<=>(const Version& a, const Version& b);
  friend bool operator==(const Version& a, const Version& b) { return (a <=> b) == 0; }

 private:
  std::vector<int> parts_;
  std::string text_;  // the text it was parsed from ("580.65.06"), kept for display
};

}  // namespace dlenv
