#include "util/hostlist.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <tuple>

namespace dlenv {
namespace {

// A name split around its last run of digits: prefix, the digits, suffix.
struct NumberedName {
  std::string prefix;
  std::string digits;
  std::string suffix;
};

std::optional<NumberedName> split_last_number(std::string_view name) {
  size_t end = name.find_last_of("0123456789");
  if (end == std::string_view::npos) return std::nullopt;
  size_t begin = end;
  while (begin > 0 && name[begin - 1] >= '0' && name[begin - 1] <= '9') --begin;
  size_t len = end + 1 - begin;
  if (len > 18) return std::nullopt;  // fits in a long long
  return NumberedName{std::string(name.substr(0, begin)), std::string(name.substr(begin, len)),
                      std::string(name.substr(end + 1))};
}

long long to_number(std::string_view digits) {
  long long v = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), v);
  return v;
}

std::string padded(long long n, size_t width) {
  std::string s = std::to_string(n);
  if (s.size() < width) s.insert(0, width - s.size(), '0');
  return s;
}

// Names that share prefix and suffix and a number format: `width` 0 is unpadded.
struct GroupKey {
  std::string prefix;
  std::string suffix;
  size_t width;
  auto operator<=>(const GroupKey&) const = default;
};

std::string ranges_text(const std::set<long long>& numbers, size_t width) {
  std::string out;
  auto it = numbers.begin();
  while (it != numbers.end()) {
    long long first = *it;
    long long last = first;
    auto next = std::next(it);
    while (next != numbers.end() && *next == last + 1) {
      last = *next;
      ++next;
    }
    if (!out.empty()) out += ',';
    out += padded(first, width);
    if (last != first) out += "-" + padded(last, width);
    it = next;
  }
  return out;
}

}  // namespace

std::string compress_hostlist(const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, NumberedName>> numbered;
  std::set<std::tuple<std::string, std::string, size_t>> padded_groups;  // prefix, suffix, width
  std::set<std::string> plain;
  for (const std::string& name : names) {
    auto n = split_last_number(name);
    if (!n) {
      plain.insert(name);
      continue;
    }
    if (n->digits.size() > 1 && n->digits[0] == '0') {
      padded_groups.emplace(n->prefix, n->suffix, n->digits.size());
    }
    numbered.emplace_back(name, std::move(*n));
  }
  std::map<GroupKey, std::set<long long>> groups;
  for (auto& [name, n] : numbered) {
    // A number without a leading zero joins a padded group of its own width ("100" with
    // "099"), else the unpadded one.
    size_t width =
        padded_groups.contains({n.prefix, n.suffix, n.digits.size()}) ? n.digits.size() : 0;
    groups[GroupKey{n.prefix, n.suffix, width}].insert(to_number(n.digits));
  }
  struct Element {
    std::string prefix, suffix;
    long long first;
    std::string text;
  };
  std::vector<Element> elements;
  for (const auto& [key, numbers] : groups) {
    std::string text;
    if (numbers.size() == 1) {
      text = key.prefix + padded(*numbers.begin(), key.width) + key.suffix;
    } else {
      text = key.prefix + "[" + ranges_text(numbers, key.width) + "]" + key.suffix;
    }
    elements.push_back({key.prefix, key.suffix, *numbers.begin(), std::move(text)});
  }
  for (const std::string& name : plain) elements.push_back({name, "", -1, name});
  std::sort(elements.begin(), elements.end(), [](const Element& a, const Element& b) {
    return std::tie(a.prefix, a.suffix, a.first, a.text) <
           std::tie(b.prefix, b.suffix, b.first, b.text);
  });
  std::string out;
  for (const Element& e : elements) {
    if (!out.empty()) out += ',';
    out += e.text;
  }
  return out;
}

std::optional<std::vector<std::string>> expand_hostlist(std::string_view expr, size_t max_names) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < expr.size()) {
    // One element: up to the next ',' outside brackets.
    size_t end = i;
    int depth = 0;
    while (end < expr.size() && (expr[end] != ',' || depth > 0)) {
      if (expr[end] == '[') ++depth;
      if (expr[end] == ']' && --depth < 0) return std::nullopt;
      ++end;
    }
    if (depth != 0) return std::nullopt;
    std::string_view element = expr.substr(i, end - i);
    i = end + 1;
    if (element.empty()) continue;
    size_t open = element.find('[');
    if (open == std::string_view::npos) {
      out.emplace_back(element);
    } else {
      size_t close = element.find(']', open);
      std::string_view prefix = element.substr(0, open);
      std::string_view suffix = element.substr(close + 1);
      if (suffix.find('[') != std::string_view::npos) return std::nullopt;  // one bracket only
      std::string_view body = element.substr(open + 1, close - open - 1);
      size_t p = 0;
      while (p <= body.size()) {
        size_t comma = body.find(',', p);
        if (comma == std::string_view::npos) comma = body.size();
        std::string_view range = body.substr(p, comma - p);
        p = comma + 1;
        size_t dash = range.find('-');
        std::string_view lo = range.substr(0, dash);
        std::string_view hi = dash == std::string_view::npos ? lo : range.substr(dash + 1);
        auto digits_only = [](std::string_view s) {
          return !s.empty() && s.size() <= 18 &&
                 std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
        };
        if (!digits_only(lo) || !digits_only(hi)) return std::nullopt;
        long long a = to_number(lo), b = to_number(hi);
        if (b < a) return std::nullopt;
        size_t width = lo.size() > 1 && lo[0] == '0' ? lo.size() : 0;
        for (long long n = a; n <= b; ++n) {
          if (out.size() >= max_names) return std::nullopt;
          out.push_back(std::string(prefix) + padded(n, width) + std::string(suffix));
        }
      }
    }
    if (out.size() > max_names) return std::nullopt;
  }
  return out;
}

}  // namespace dlenv
