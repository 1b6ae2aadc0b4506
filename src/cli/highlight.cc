#include "cli/highlight.h"

#include <cctype>

#include "util/ansi.h"

namespace dlenv {

std::string highlight_line(std::string_view line) {
  size_t indent = line.find_first_not_of(' ');
  if (indent == std::string_view::npos) return std::string(line);
  std::string_view rest = line.substr(indent);
  // The first word: error / warning / failed.
  size_t word_end = 0;
  while (word_end < rest.size() && std::isalpha(static_cast<unsigned char>(rest[word_end]))) {
    ++word_end;
  }
  std::string_view word = rest.substr(0, word_end);
  if (word_end > 0 && (word_end == rest.size() || rest[word_end] == ':' || rest[word_end] == ' ')) {
    Style s = word == "failed" ? Style::red : severity_style(word);
    if (word == "error" || word == "warning" || word == "failed") {
      return std::string(line.substr(0, indent)) + paint(word, s, true) +
             std::string(rest.substr(word_end));
    }
  }
  if (indent > 0 && rest.starts_with("! ")) {
    return std::string(line.substr(0, indent)) + paint("!", Style::yellow, true) +
           std::string(rest.substr(1));
  }
  std::string out;
  bool tagged = false;
  for (size_t i = 0; i < line.size();) {
    bool done = false;
    for (std::string_view severity : {"error", "warning", "info"}) {
      std::string tag = "[" + std::string(severity) + "]";
      if (line.substr(i).starts_with(tag)) {
        out += paint(tag, severity_style(severity), true);
        i += tag.size();
        done = tagged = true;
        break;
      }
    }
    if (!done) out += line[i++];
  }
  if (tagged) return out;
  if (indent == 0 && std::isalpha(static_cast<unsigned char>(line[0]))) {
    return paint(line, Style::bold, true);
  }
  return std::string(line);
}

HighlightBuf::int_type HighlightBuf::overflow(int_type ch) {
  if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
  char c = traits_type::to_char_type(ch);
  if (!enabled_) {
    dest_.put(c);
    return ch;
  }
  if (c == '\n') {
    dest_ << highlight_line(line_) << '\n';
    line_.clear();
  } else {
    line_ += c;
  }
  return ch;
}

std::streamsize HighlightBuf::xsputn(const char* s, std::streamsize n) {
  if (!enabled_) {
    dest_.write(s, n);
    return n;
  }
  for (std::streamsize i = 0; i < n; ++i) overflow(traits_type::to_int_type(s[i]));
  return n;
}

int HighlightBuf::sync() {
  dest_ << line_;
  line_.clear();
  dest_.flush();
  return 0;
}

}  // namespace dlenv
