#include "util/safe_text.h"

#include <gtest/gtest.h>

#include <string>

namespace dlenv {
namespace {

using nlohmann::json;

// Decodes the JSON string escapes json_text writes back to bytes, the way Python's
// json.loads + .encode("utf-8", "surrogateescape") does for \udcXX.
std::string bytes_of_json_string(const std::string& lit) {
  std::string out;
  for (size_t i = 1; i + 1 < lit.size(); ++i) {
    if (lit[i] != '\\') {
      out += lit[i];
      continue;
    }
    char e = lit[++i];
    if (e != 'u') {
      out += e == 'n'   ? '\n'
             : e == 't' ? '\t'
             : e == 'r' ? '\r'
             : e == 'b' ? '\b'
             : e == 'f' ? '\f'
                        : e;
      continue;
    }
    unsigned cp = static_cast<unsigned>(std::stoul(lit.substr(i + 1, 4), nullptr, 16));
    i += 4;
    if (cp >= 0xDC80 && cp <= 0xDCFF) {
      out += static_cast<char>(cp - 0xDC00);
    } else if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else {  // U+0080..U+07FF
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  return out;
}

TEST(Utf8, SequenceLengthFollowsPythonsDecoder) {
  EXPECT_EQ(utf8_sequence_length("a", 0), 1u);
  EXPECT_EQ(utf8_sequence_length("\xc3\xa9", 0), 2u);          // é
  EXPECT_EQ(utf8_sequence_length("\xe4\xb8\xad", 0), 3u);      // 中
  EXPECT_EQ(utf8_sequence_length("\xf0\x9f\x98\x80", 0), 4u);  // emoji
  EXPECT_EQ(utf8_sequence_length("\xff", 0), 0u);
  EXPECT_EQ(utf8_sequence_length("\x80", 0), 0u);              // stray continuation
  EXPECT_EQ(utf8_sequence_length("\xc0\xaf", 0), 0u);          // overlong '/'
  EXPECT_EQ(utf8_sequence_length("\xe0\x80\xaf", 0), 0u);      // overlong
  EXPECT_EQ(utf8_sequence_length("\xed\xa0\x80", 0), 0u);      // a UTF-16 surrogate
  EXPECT_EQ(utf8_sequence_length("\xf4\x90\x80\x80", 0), 0u);  // above U+10FFFF
  EXPECT_EQ(utf8_sequence_length("\xe4\xb8", 0), 0u);          // truncated
}

TEST(JsonText, SameAsNlohmannForValidText) {
  json j = {{"schema", "x/1"},
            {"n", 3},
            {"f", 0.25},
            {"big", 18446744073709551615ull},
            {"neg", -7},
            {"b", true},
            {"null", nullptr},
            {"empty_o", json::object()},
            {"empty_a", json::array()},
            {"a", {1, "two", {{"k", "v\n\t\"\\\x01"}}}},
            {"utf8", "中文 é"}};
  EXPECT_EQ(json_text(j, 2), j.dump(2));
  EXPECT_EQ(json_text(j), j.dump());
  EXPECT_EQ(json_text(j, 4), j.dump(4));
}

TEST(JsonText, InvalidUtf8BecomesSurrogateEscapesAndTheBytesComeBack) {
  const std::string path = std::string("/opt/lib\xff\xfe/x\xe4\xb8/\xc3\xa9") + "\x80z";
  json j = {{"path", path}, {std::string("key\xff"), 1}};
  EXPECT_THROW((void)j.dump(), json::type_error);  // what nlohmann alone does (316)
  const std::string text = json_text(j);
  EXPECT_EQ(text,
            "{\"key\\udcff\":1,\"path\":\"/opt/lib\\udcff\\udcfe/x\\udce4\\udcb8/\xc3\xa9"
            "\\udc80z\"}");
  // Valid JSON (nlohmann rejects lone surrogates, so check the grammar through a parse of
  // the text with the escapes made pairs-free: every \udcXX is a 6-character escape).
  const size_t start = text.find("\"/opt");
  const size_t end = text.find('"', start + 1);
  EXPECT_EQ(bytes_of_json_string(text.substr(start, end - start + 1)), path);
}

TEST(ParseJsonText, GivesBackTheBytesJsonTextWrote) {
  const std::string path = std::string("/opt/lib\xff\xfe/x\xe4\xb8/\xc3\xa9") + "\x80z";
  json j = {{"path", path}, {std::string("key\xff"), 1}, {"list", {path, "plain"}}};
  EXPECT_EQ(parse_json_text(json_text(j)), j);
  EXPECT_EQ(parse_ordered_json_text(json_text(j, 2))["path"], path);
}

TEST(ParseJsonText, RealPairsAndTheMarkerItselfAreKept) {
  // \ud83d\udc80 is a real pair (U+1F480), not a byte; U+FDD0 (the internal marker) in the
  // text, raw or escaped, comes back as itself; an escaped backslash before "udc80" is text.
  const std::string text =
      "[\"\\ud83d\\udc80\", \"\xef\xb7\x90\\udc80\", \"\\ufdd0\xef\xb7\x90\", \"\\\\udc80\"]";
  const json j = parse_json_text(text);
  ASSERT_TRUE(j.is_array());
  EXPECT_EQ(j[0], "\xf0\x9f\x92\x80");
  EXPECT_EQ(j[1], std::string("\xef\xb7\x90") + "\x80");
  EXPECT_EQ(j[2], "\xef\xb7\x90\xef\xb7\x90");
  EXPECT_EQ(j[3], "\\udc80");
}

TEST(ParseJsonText, BadTextFailsAsNlohmannDoes) {
  EXPECT_THROW((void)parse_json_text("{\"a\": "), json::parse_error);
  EXPECT_TRUE(parse_json_text("[\"\\udc41\"]", false).is_discarded());  // not a byte escape
  EXPECT_TRUE(parse_json_text("\"\xff\"", false).is_discarded());       // raw bad byte
}

TEST(ParseJsonText, EveryByteStringRoundTrips) {
  uint32_t seed = 12345;
  auto next = [&] {
    seed = seed * 1103515245u + 12345u;
    return static_cast<unsigned char>(seed >> 16);
  };
  for (int round = 0; round < 2000; ++round) {
    std::string s;
    const int n = next() % 24;
    for (int k = 0; k < n; ++k) {
      // Mostly the interesting bytes: high ones, the marker's, quotes and backslashes.
      static constexpr unsigned char kPick[] = {0xef, 0xb7, 0x90, 0xed, 0xb0, 0x80, 0xff,
                                                0xc3, 0xa9, '\\', '"',  'u',  'd',  'c'};
      const unsigned char r = next();
      s += static_cast<char>(r < 128 ? kPick[r % sizeof kPick] : next());
    }
    const json j = {{s, s}};
    ASSERT_EQ(parse_json_text(json_text(j)), j) << json_text(j);
  }
}

TEST(JsonText, ControlsAndC1AreEscaped) {
  json j = std::string(
      "a\x1b[31mred\x07\x7f\xc2\x9b"
      "b");
  EXPECT_EQ(json_text(j), "\"a\\u001b[31mred\\u0007\\u007f\\u009bb\"");
  EXPECT_EQ(json::parse(json_text(j)).get<std::string>(), j.get<std::string>());
}

TEST(VisibleText, ControlsEscapesAndBadBytesAreShown) {
  EXPECT_EQ(visible_text("plain /usr/lib/x.so 中文"), "plain /usr/lib/x.so 中文");
  EXPECT_EQ(visible_text("a\x1b]0;title\x07z"), "a\\e]0;title\\az");
  EXPECT_EQ(visible_text("over\rwrite\x08\x01"), "over\\rwrite\\b\\x01");
  EXPECT_EQ(visible_text("csi\xc2\x9b"
                         "31m"),
            "csi\\u009b31m");  // C1 CSI
  EXPECT_EQ(visible_text("raw\x9b"
                         "31m\xff"),
            "raw\\x9b31m\\xff");
  EXPECT_EQ(visible_text("del\x7f"), "del\\x7f");
  EXPECT_EQ(visible_text("C:\\Windows\\System32"), "C:\\Windows\\System32");
  EXPECT_EQ(visible_text("two\nlines\tx"), "two\\nlines\\tx");
  EXPECT_EQ(visible_text("two\nlines\tx", /*keep_newlines=*/true), "two\nlines\tx");
}

}  // namespace
}  // namespace dlenv
