// Untrusted bytes (paths, environment values, strings read from libraries) made safe to
// write out: valid JSON whatever the bytes, and text that cannot drive a terminal.
// Every JSON document dlenv writes goes through json_text(); every text renderer shows
// untrusted strings through visible_text() (docs/json-schema.md, "Bytes that are not UTF-8").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace dlenv {

// The length of the well-formed UTF-8 sequence that starts at s[i] (1-4), or 0 when the
// bytes there are not one (a stray continuation byte, an overlong form, a surrogate, a
// code point above U+10FFFF, a truncated sequence) - the rules Python's decoder applies.
size_t utf8_sequence_length(std::string_view s, size_t i);

// `j` as JSON text, as nlohmann's dump(indent) writes it, except that it never throws on
// strings (values or keys) that are not UTF-8: each byte that is not part of a well-formed
// UTF-8 sequence is written as \udcXX (XX: the byte), the escape Python's surrogateescape
// uses, so that json.loads(text) then .encode("utf-8", "surrogateescape") gives back the
// original bytes. DEL and the C1 controls (U+0080-U+009F) are written as \u escapes too.
// indent < 0: compact, one line.
// Key order is kept: ordered_json (the report) keeps its insertion order, json its sorted one.
std::string json_text(const nlohmann::json& j, int indent = -1);
std::string json_text(const nlohmann::ordered_json& j, int indent = -1);

// The inverse of json_text(): `text` parsed as JSON, each \udcXX escape that is not the
// second half of a surrogate pair given back as the byte XX (0x80-0xFF), so that any string
// json_text() wrote - a path with bytes that are not UTF-8 - reads back byte for byte.
// Anything else as nlohmann::json::parse: on bad text it throws json::parse_error, or, with
// allow_exceptions false, returns a value whose is_discarded() is true.
nlohmann::json parse_json_text(std::string_view text, bool allow_exceptions = true);
nlohmann::ordered_json parse_ordered_json_text(std::string_view text, bool allow_exceptions = true);

// `s` with every byte that could act on a terminal made visible: C0 controls as \t \n \r
// \e \a \b \f \v or \xNN, DEL as \x7f, the C1 controls (U+0080-U+009F) as \u0080-\u009f,
// bytes that are not UTF-8 as \xNN. Well-formed printable UTF-8 is kept, and so is the
// backslash (Windows paths are full of them): the escapes are for a reader, not a parser.
// keep_newlines: '\n' and '\t' are kept as they are (for a whole line-oriented text).
std::string visible_text(std::string_view s, bool keep_newlines = false);

}  // namespace dlenv
