// Which finding an error text names: the catalog's error signatures (kb/findings.json
// `signatures`, compiled into kb/finding_catalog.h) found in the text, the longest one winning
// (ties: the catalog's order). Used for a framework's import error under `doctor --deep`.
#pragma once

#include <string_view>

#include "kb/finding_catalog.h"

namespace dlenv {

// nullptr when no signature is in `text` (matched case-insensitively).
const ErrorSignature* longest_error_signature(std::string_view text);

}  // namespace dlenv
