// The checks of the `dlenv.report/1` contract (docs/json-schema.md) that hold for every
// report, whatever the machine: used on Linux and Windows reports alike (--root scenarios
// on Linux, the live dlenv.exe under Wine), so both are held to the same schema.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace dlenv::testing {

// Every way `j` breaks the schema, one line each ("findings[2].severity: ..."); empty when
// it conforms.
inline std::vector<std::string> report_schema_problems(const nlohmann::json& j) {
  using nlohmann::json;
  std::vector<std::string> p;
  auto bad = [&](const std::string& where, const std::string& what) {
    p.push_back(where + ": " + what);
  };
  if (!j.is_object()) return {"the report is not a JSON object"};
  // The documented top-level keys, no others; `system` and `windows` may be absent. (Their
  // order is fixed by report_json(), but a parsed nlohmann::json sorts keys, so it is not
  // checked here.)
  const std::set<std::string> keys = {
      "schema",  "tool",          "rooted",   "root",      "host",     "driver", "gpu_count",
      "gpus",    "toolkits",      "cudnn",    "libraries", "python",   "env",    "system",
      "windows", "live_failures", "findings", "summary",   "timing_ms"};
  const std::set<std::string> optional = {"system", "windows"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!keys.count(it.key())) bad(it.key(), "unknown top-level key");
  }
  for (const auto& k : keys) {
    if (!optional.count(k) && !j.contains(k)) bad(k, "missing");
  }
  if (!p.empty()) return p;

  if (j["schema"] != "dlenv.report/1") bad("schema", "not \"dlenv.report/1\"");
  if (!j["tool"].is_object() || !j["tool"]["version"].is_string()) {
    bad("tool.version", "not a string");
  }
  if (!j["rooted"].is_boolean()) bad("rooted", "not a boolean");
  if (j["rooted"] == true ? !j["root"].is_string() : !j["root"].is_null()) {
    bad("root", "a string exactly when rooted, else null");
  }
  for (const char* obj : {"host", "driver", "env"}) {
    if (!j[obj].is_object()) bad(obj, "not an object");
  }
  for (const char* arr :
       {"gpus", "toolkits", "cudnn", "libraries", "python", "live_failures", "findings"}) {
    if (!j[arr].is_array()) bad(arr, "not an array");
  }
  if (j.contains("windows") && !j["windows"].is_object()) bad("windows", "not an object");
  if (j.contains("system") && !j["system"].is_object()) bad("system", "not an object");

  // Fact objects, wherever they are: {value, source} or {status, reason, source}.
  const std::set<std::string> statuses = {"not-found", "not-supported", "permission-denied",
                                          "timed-out", "error",         "skipped"};
  auto is_fact_shaped = [](const json& o) {
    return o.is_object() && o.contains("source") && (o.contains("value") || o.contains("status"));
  };
  auto check_fact = [&](const std::string& where, const json& f) {
    if (!f["source"].is_string()) bad(where + ".source", "not a string");
    if (f.contains("value")) {
      if (f.contains("status") || f.contains("reason")) {
        bad(where, "a fact with a value has no status or reason");
      }
      const json& v = f["value"];
      if (!(v.is_string() || v.is_boolean() || v.is_number_integer() || v.is_array() ||
            v.is_object())) {
        bad(where + ".value", "not a string, boolean, integer, list or object");
      }
    } else {
      if (!f["status"].is_string() || !statuses.count(f["status"].get<std::string>())) {
        bad(where + ".status", "not one of the documented statuses");
      }
      if (!f.contains("reason") || !f["reason"].is_string()) {
        bad(where + ".reason", "missing or not a string");
      }
    }
  };
  auto walk = [&](auto&& self, const std::string& where, const json& v) -> void {
    if (is_fact_shaped(v)) {
      check_fact(where, v);
      return;
    }
    if (v.is_object()) {
      for (auto it = v.begin(); it != v.end(); ++it) self(self, where + "." + it.key(), *it);
    } else if (v.is_array()) {
      for (size_t i = 0; i < v.size(); ++i) self(self, where + "[" + std::to_string(i) + "]", v[i]);
    }
  };
  for (const char* k : {"host", "driver", "gpu_count", "gpus", "toolkits", "cudnn", "python", "env",
                        "system", "windows"}) {
    if (j.contains(k)) walk(walk, k, j[k]);
  }
  if (!is_fact_shaped(j["gpu_count"])) bad("gpu_count", "not a fact object");
  for (const char* k : {"os", "arch"}) {
    if (!is_fact_shaped(j["host"][k])) bad(std::string("host.") + k, "not a fact object");
  }

  // Findings: id, severity, title, evidence and fix; sorted error, warning, info; counted.
  const std::vector<std::string> severities = {"error", "warning", "info"};
  int counts[3] = {0, 0, 0};
  size_t last_rank = 0;
  for (size_t i = 0; i < j["findings"].size(); ++i) {
    const json& f = j["findings"][i];
    const std::string w = "findings[" + std::to_string(i) + "]";
    if (!f.is_object()) {
      bad(w, "not an object");
      continue;
    }
    for (const char* s : {"id", "severity", "title"}) {
      if (!f.contains(s) || !f[s].is_string() || f[s].get<std::string>().empty()) {
        bad(w + "." + s, "missing or not a non-empty string");
      }
    }
    size_t rank = 3;
    for (size_t s = 0; s < severities.size(); ++s) {
      if (f.value("severity", "") == severities[s]) rank = s;
    }
    if (rank == 3) {
      bad(w + ".severity", "not error, warning or info");
      continue;
    }
    ++counts[rank];
    if (rank < last_rank) bad(w, "out of order (errors, then warnings, then info)");
    last_rank = rank;
    if (!f.contains("evidence") || !f["evidence"].is_array()) {
      bad(w + ".evidence", "not an array");
    } else {
      for (size_t s = 0; s < f["evidence"].size(); ++s) {
        const json& e = f["evidence"][s];
        if (!e.is_object() || !e.contains("fact") || !e["fact"].is_string() ||
            !e.contains("source") || !e["source"].is_string()) {
          bad(w + ".evidence[" + std::to_string(s) + "]", "not {fact: string, source: string}");
        }
      }
    }
    if (!f.contains("fix") || !f["fix"].is_array()) {
      bad(w + ".fix", "not an array");
    } else {
      for (size_t s = 0; s < f["fix"].size(); ++s) {
        const json& x = f["fix"][s];
        if (!x.is_object() || !x.contains("text") || !x["text"].is_string() ||
            !x.contains("command") || !x["command"].is_string() || !x.contains("shell") ||
            !x["shell"].is_string()) {
          bad(w + ".fix[" + std::to_string(s) + "]", "not {text, command, shell} strings");
        }
      }
    }
  }
  const json& sum = j["summary"];
  for (size_t s = 0; s < severities.size(); ++s) {
    const std::string& name = severities[s] == "error"     ? std::string("errors")
                              : severities[s] == "warning" ? std::string("warnings")
                                                           : std::string("info");
    if (!sum.contains(name) || !sum[name].is_number_integer() || sum[name] != counts[s]) {
      bad("summary." + name, "not the number of " + severities[s] + " findings");
    }
  }
  if (!j["timing_ms"].is_object()) {
    bad("timing_ms", "not an object");
  } else {
    for (auto it = j["timing_ms"].begin(); it != j["timing_ms"].end(); ++it) {
      if (!it->is_number()) bad("timing_ms." + it.key(), "not a number");
    }
  }
  return p;
}

}  // namespace dlenv::testing
