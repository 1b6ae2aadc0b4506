// Ids that `dlenv verify` reports (it runs real work on the GPU, so these come from
// results, not from facts): listed here so `dlenv explain` and docs/findings.md know
// them. Their checks live in the gpu layer; the table entries have none.
#include "rules/rules.h"

namespace dlenv {

const std::vector<Rule>& verify_rules() {
  static const std::vector<Rule> table = {
      {FindingId::verify_wrong_result, nullptr},
      {FindingId::verify_ecc_errors, nullptr},
      {FindingId::verify_cuda_error, nullptr},
      {FindingId::verify_out_of_memory, nullptr},
      {FindingId::verify_cublas_not_loadable, nullptr},
      {FindingId::verify_cudnn_not_loadable, nullptr},
      {FindingId::verify_cudnn_error, nullptr},
      {FindingId::verify_crashed, nullptr},
  };
  return table;
}

}  // namespace dlenv
