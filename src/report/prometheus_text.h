// The Prometheus text exposition format (version 0.0.4), shared by `dlenv doctor --format
// prometheus` and `dlenv fleet --prometheus`: gauges only, every family with # HELP and
// # TYPE, label values escaped (\\, \", \n) and made valid UTF-8.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dlenv::report_detail {

// A label value as it goes between the quotes: backslash, double quote and newline escaped;
// invalid UTF-8 replaced by U+FFFD (the format is UTF-8).
std::string prometheus_label_value(std::string_view value);

using PrometheusLabels = std::vector<std::pair<std::string, std::string>>;

class PrometheusWriter {
 public:
  // Starts a gauge family: "# HELP name help" and "# TYPE name gauge".
  void gauge(std::string_view name, std::string_view help);
  // One sample of the family started last: name{k="v",...} value.
  void sample(std::string_view name, const PrometheusLabels& labels, double value);
  const std::string& text() const { return out_; }

 private:
  std::string out_;
};

}  // namespace dlenv::report_detail
