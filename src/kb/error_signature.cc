#include "kb/error_signature.h"

#include "util/strings.h"

namespace dlenv {

const ErrorSignature* longest_error_signature(std::string_view text) {
  if (text.empty()) return nullptr;
  const std::string low = to_lower(text);
  const ErrorSignature* best = nullptr;
  for (const ErrorSignature& s : kErrorSignatures) {
    if (best && s.text.size() <= best->text.size()) continue;
    if (low.find(s.text) != std::string::npos) best = &s;
  }
  return best;
}

}  // namespace dlenv
