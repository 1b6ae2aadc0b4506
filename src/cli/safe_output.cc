#include "cli/safe_output.h"

#include "util/safe_text.h"

namespace dlenv {

void VisibleTextBuf::write_line(bool with_newline) {
  dest_ << visible_text(line_, /*keep_newlines=*/true);
  if (with_newline) dest_ << '\n';
  line_.clear();
}

VisibleTextBuf::int_type VisibleTextBuf::overflow(int_type ch) {
  if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
  char c = traits_type::to_char_type(ch);
  if (c == '\n') {
    write_line(true);
  } else {
    line_ += c;
  }
  return dest_ ? ch : traits_type::eof();
}

std::streamsize VisibleTextBuf::xsputn(const char* s, std::streamsize n) {
  for (std::streamsize i = 0; i < n; ++i) {
    if (s[i] == '\n') {
      write_line(true);
    } else {
      line_ += s[i];
    }
  }
  return dest_ ? n : 0;
}

int VisibleTextBuf::sync() {
  if (!line_.empty()) write_line(false);
  dest_.flush();
  return dest_ ? 0 : -1;
}

}  // namespace dlenv
