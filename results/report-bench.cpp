// report-bench.cpp: the benchmark tables and plots of report-bench.h.
#include "report-bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "bench-results-db.h"
#include "report-format.h"
#include "sqlite-util.h"
#include "svg-plot.h"

namespace kvarena::results {

namespace {

using json = nlohmann::json;

json parse_object(const std::string& text, const bench_result_row& r, const char* what) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw results_error("bench_results row " + std::to_string(r.id) + " (" + r.bench + ", " + r.policy + "): " +
                        what + " is not a JSON object");
  return j;
}

double num(const json& m, const char* key) {
  auto it = m.find(key);
  return it != m.end() && it->is_number() ? it->get<double>() : std::nan("");
}

std::string fmt(const char* f, double v) {
  if (std::isnan(v)) return "-";
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string ratio(double v, double ref) { return std::isnan(v) || !(ref > 0) ? "-" : fmt("%.3f", v / ref); }

// "window:window=512:sinks=0": a row's label when it has no "spec" (rows written before it
// was stored), in the --policies syntax.
std::string label(const std::string& policy, const json& options) {
  std::string s = policy;
  for (const auto& [k, v] : options.items()) s += ":" + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  return s;
}

// A point's series: its spec without the budget ("confkv:kv-int8=1@512t" -> "confkv:kv-int8=1"),
// so each policy variant is one colour across a sweep.
std::string series_of(const std::string& spec) { return spec.substr(0, spec.find('@')); }

// "text /tmp/t.txt, max_tokens 2048, kv_budget 512t": the config's scalars a reader needs to
// tell two groups apart (threads, backend and seed too: they change tok/s and the prompts).
std::string config_summary(const json& c) {
  std::string s;
  for (const auto& [k, v] : c.items()) {
    if (v.is_structured()) {
      if (!v.is_array() || v.size() > 8) continue;
      std::string list;
      for (const auto& e : v) list += (list.empty() ? "" : ",") + (e.is_string() ? e.get<std::string>() : e.dump());
      s += (s.empty() ? "" : ", ") + k + " " + list;
      continue;
    }
    s += (s.empty() ? "" : ", ") + k + " " + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return s;
}

// NIAH: "1024: 3/5  2048: 1/5" from the result's grid.
std::string per_length(const json& m) {
  std::map<long long, std::pair<int, int>> by;  // length -> (correct, total)
  if (auto g = m.find("grid"); g != m.end() && g->is_array())
    for (const auto& cell : *g) {
      auto& [ok, n] = by[cell.value("length", 0LL)];
      ok += cell.value("correct", false) ? 1 : 0;
      ++n;
    }
  std::string s;
  for (const auto& [len, c] : by)
    s += (s.empty() ? "" : "  ") + std::to_string(len) + ": " + std::to_string(c.first) + "/" + std::to_string(c.second);
  return s.empty() ? "-" : s;
}

// The numeric top-level metrics of any bench the report has no table for, in first-seen order.
std::vector<std::string> numeric_keys(const std::vector<json>& metrics) {
  std::vector<std::string> keys;
  for (const auto& m : metrics)
    for (const auto& [k, v] : m.items())
      if (v.is_number() && std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  return keys;
}

void fill_group(bench_group& g, const std::vector<const bench_result_row*>& rows) {
  std::vector<json> metrics, options;
  for (const auto* r : rows) {
    metrics.push_back(parse_object(r->metrics_json, *r, "metrics_json"));
    options.push_back(parse_object(r->options_json, *r, "options_json"));
  }
  // The reference: the group's first full row.
  const json* full = nullptr;
  for (size_t i = 0; i < rows.size() && !full; ++i)
    if (rows[i]->policy == "full") full = &metrics[i];
  const double full_kv = full ? num(*full, "peak_kv_logical_bytes") : std::nan("");
  const std::vector<std::string> generic = numeric_keys(metrics);

  if (g.bench == "ppl") {
    g.columns = {"policy", "ppl", "ppl/full", "KV peak", "KV/full", "alloc KV", "tok/s"};
    g.plot_value = "perplexity";
  } else if (g.bench == "niah") {
    g.columns = {"policy", "accuracy", "correct per length", "KV peak", "KV/full"};
    g.plot_value = "NIAH accuracy";
  } else if (g.bench == "confidence-kl") {
    g.columns = {"policy", "pearson r", "spearman", "samples", "confidence mean", "KL mean"};
  } else {
    g.columns = {"policy"};
    g.columns.insert(g.columns.end(), generic.begin(), generic.end());
    if (!std::isnan(full_kv)) g.columns.push_back("KV/full");
  }

  for (size_t i = 0; i < rows.size(); ++i) {
    const json& m = metrics[i];
    const std::string spec = m.contains("spec") ? m.value("spec", "") : label(rows[i]->policy, options[i]);
    const double kv = num(m, "peak_kv_logical_bytes");
    std::vector<std::string> cells{spec};
    json out = {{"policy", rows[i]->policy}, {"spec", spec}, {"options", options[i]}, {"metrics", m}};
    if (!std::isnan(kv) && full_kv > 0) out["peak_kv_logical_vs_full"] = kv / full_kv;
    if (g.bench == "ppl") {
      const double ppl = num(m, "ppl"), full_ppl = full ? num(*full, "ppl") : std::nan("");
      cells.insert(cells.end(), {fmt("%.4f", ppl), ratio(ppl, full_ppl), format_bytes(kv), ratio(kv, full_kv),
                                 format_bytes(num(m, "peak_kv_bytes")), fmt("%.0f", num(m, "tok_s"))});
      if (!std::isnan(ppl) && full_ppl > 0) out["ppl_vs_full"] = ppl / full_ppl;
      if (!std::isnan(ppl) && !std::isnan(kv)) g.points.push_back({series_of(spec), spec, kv, ppl});
    } else if (g.bench == "niah") {
      const double acc = num(m, "accuracy");
      cells.insert(cells.end(), {fmt("%.3f", acc), per_length(m), format_bytes(kv), ratio(kv, full_kv)});
      if (!std::isnan(acc) && !std::isnan(kv)) g.points.push_back({series_of(spec), spec, kv, acc});
    } else if (g.bench == "confidence-kl") {
      cells.insert(cells.end(), {fmt("%.3f", num(m, "pearson_r")), fmt("%.3f", num(m, "spearman_r")),
                                 fmt("%.0f", num(m, "n_samples")),
                                 fmt("%.4f", num(m, "confidence_mean")), fmt("%.4f", num(m, "kl_mean"))});
    } else {
      for (const auto& k : generic) {
        const double v = num(m, k.c_str());
        cells.push_back(k.find("bytes") != std::string::npos ? format_bytes(v) : fmt("%.6g", v));
      }
      if (!std::isnan(full_kv)) cells.push_back(ratio(kv, full_kv));
    }
    g.rows.push_back(std::move(cells));
    g.row_json.push_back(out.dump());
  }
}

std::vector<std::vector<std::string>> with_header(const bench_group& g) {
  std::vector<std::vector<std::string>> t{g.columns};
  t.insert(t.end(), g.rows.begin(), g.rows.end());
  return t;
}

std::string group_plot(const bench_group& g) {
  plot_spec p;
  p.title = g.plot_value + " vs peak logical KV memory";
  p.x = {"peak logical KV bytes", axis_unit::bytes};
  p.y = {g.plot_value, g.bench == "niah" ? axis_unit::percent : axis_unit::number};
  p.label_points = true;
  std::vector<std::string> order;  // series in first-seen order
  for (const auto& pt : g.points)
    if (std::find(order.begin(), order.end(), pt.policy) == order.end()) order.push_back(pt.policy);
  for (size_t i = 0; i < order.size(); ++i) {
    plot_series s{order[i], series_color(i), {}, {}, {}, {}};
    for (const auto& pt : g.points)
      if (pt.policy == order[i]) {
        s.x.push_back(pt.peak_kv_logical);
        s.y.push_back(pt.value);
      }
    p.series.push_back(std::move(s));
  }
  return svg_plot(p);
}

constexpr const char* notes =
    "KV peak = peak_kv_logical_bytes (live tokens at their precision plus the policy's state); KV/full and "
    "ppl/full are ratios to the group's full row; alloc KV = peak_kv_bytes (allocated).";

}  // namespace

bench_report build_bench_report(const std::string& path) {
  bench_report b;
  // A missing or non-SQLite file has no benchmarks: the run report says what is wrong with it.
  if (!std::filesystem::is_regular_file(path)) return b;
  try {
    sql_db db = sql_db::open(path, false, true, 10000);
    if (db.query_int("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'bench_results'") == 0)
      return b;
  } catch (const results_error&) {
    return b;
  }
  const std::vector<bench_result_row> rows = read_bench_results(path);
  b.n_rows = rows.size();
  std::vector<std::string> keys;
  std::map<std::string, std::vector<const bench_result_row*>> by_key;
  for (const auto& r : rows) {
    const std::string key = r.bench + '\n' + r.model + '\n' + r.config_json;
    if (!by_key.count(key)) keys.push_back(key);
    by_key[key].push_back(&r);
  }
  for (const auto& key : keys) {
    const auto& members = by_key[key];
    bench_group g;
    g.bench = members[0]->bench;
    g.model = members[0]->model;
    g.config_json = members[0]->config_json;
    const json c = parse_object(g.config_json, *members[0], "config_json");
    g.title = g.bench + " \xc2\xb7 " + g.model + " \xc2\xb7 " + config_summary(c);
    fill_group(g, members);
    b.groups.push_back(std::move(g));
  }
  return b;
}

std::string bench_report_text(const bench_report& b) {
  if (b.groups.empty()) return "";
  std::string o = "\nbenchmarks (" + std::to_string(b.n_rows) + " bench_results rows)\n";
  for (const auto& g : b.groups) {
    o += "\n" + g.title + "\n" + text_table(with_header(g), "  ");
  }
  o += std::string("\n") + notes + "\n";
  return o;
}

std::string bench_report_json(const bench_report& b) {
  json groups = json::array();
  for (const auto& g : b.groups) {
    json rows = json::array();
    for (const auto& r : g.row_json) rows.push_back(json::parse(r));
    json c = json::parse(g.config_json, nullptr, false);
    groups.push_back({{"bench", g.bench}, {"model", g.model}, {"config", c}, {"rows", rows}});
  }
  return groups.dump(2);
}

std::string bench_only_json(const bench_report& b, const std::string& file) {
  return json{{"file", file}, {"benchmarks", json::parse(bench_report_json(b))}}.dump(2);
}

std::string bench_report_html(const bench_report& b) {
  if (b.groups.empty()) return "";
  std::string o = "<h2>Benchmarks</h2>\n<p class=\"note\">" + std::to_string(b.n_rows) +
                  " rows of <code>bench_results</code> (<code>kvarena bench ... --db</code>). " + notes + "</p>\n";
  for (const auto& g : b.groups) {
    o += "<h3>" + xml_escape(g.title) + "</h3>\n" + html_table(with_header(g));
    if (!g.plot_value.empty() && !g.points.empty()) o += group_plot(g);
  }
  return o;
}

std::string bench_report_page(const bench_report& b, const std::string& file) {
  std::string o =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>kvarena benchmarks</title>\n"
      "<style>" + std::string(report_page_css()) + "</style>\n"
      "</head>\n<body>\n<h1>kvarena benchmarks: <code>" +
      xml_escape(file) + "</code></h1>\n";
  o += b.groups.empty() ? "<p class=\"note\">No benchmark rows.</p>\n" : bench_report_html(b);
  o += "</body>\n</html>\n";
  return o;
}

}  // namespace kvarena::results
