// report-html.cpp: the HTML page of report-html.h.
#include "report-html.h"

#include <cmath>
#include <set>
#include <string>

#include "report-format.h"
#include "report-items.h"
#include "svg-plot.h"

namespace kvarena::results {

namespace {

// One colour per policy, the same in both plots (by the policy's place in the report).
const char* policy_color(size_t i) { return series_color(i); }

size_t policy_index(const run_report& r, const std::string& policy) {
  for (size_t i = 0; i < r.policies.size(); ++i)
    if (r.policies[i].policy == policy) return i;
  return 0;
}

std::string success_vs_memory_plot(const run_report& r) {
  plot_spec p;
  p.title = "Success rate (95% Wilson interval) vs peak logical KV memory (median per task)";
  p.x = {"peak logical KV bytes, median", axis_unit::bytes};
  p.y = {"success rate", axis_unit::percent};
  p.label_points = true;
  for (size_t i = 0; i < r.policies.size(); ++i) {
    const auto& m = r.policies[i];
    if (std::isnan(m.success_rate)) continue;
    if (m.policy == "oracle") {
      std::string pct = std::to_string(int(std::lround(100 * m.success_rate))) + "%";
      p.hlines.push_back({"oracle (upper bound) " + pct, m.success_rate});
      continue;
    }
    if (std::isnan(m.peak_kv_logical_median)) continue;
    p.series.push_back({m.policy, policy_color(i), {m.peak_kv_logical_median}, {m.success_rate},
                        {m.success_ci_low}, {m.success_ci_high}});
  }
  return svg_plot(p);
}

// Success rate per task template (rows) and policy (columns); "-" where a policy has no row
// of that template.
std::string per_template_table(const run_report& r) {
  std::set<int64_t> ids;
  for (const auto& m : r.policies)
    for (const auto& [t, rate] : m.per_template) ids.insert(t);
  if (ids.empty()) return "";
  std::string o = "<h2>Success rate per task template</h2>\n<div class=\"wide\">\n<table>\n<thead><tr><th>template</th>";
  for (const auto& m : r.policies) o += "<th>" + xml_escape(m.policy) + "</th>";
  o += "</tr></thead>\n<tbody>\n";
  for (int64_t id : ids) {
    o += "<tr><td>" + std::to_string(id) + "</td>";
    for (const auto& m : r.policies) {
      std::string cell = "-";
      for (const auto& [t, rate] : m.per_template)
        if (t == id) cell = std::to_string(int(std::lround(100 * rate))) + "%";
      o += "<td>" + cell + "</td>";
    }
    o += "</tr>\n";
  }
  o += "</tbody>\n</table>\n</div>\n";
  return o;
}

std::string kv_trace_plot(const run_report& r) {
  plot_spec p;
  p.title = "KV cache over the tokens of " + r.trace_task + " (seed " + std::to_string(r.trace_seed) + ")";
  p.x = {"tokens seen", axis_unit::number};
  p.y = {"logical KV bytes", axis_unit::bytes};
  p.lines = true;
  for (const auto& t : r.traces) {
    plot_series s{t.policy, policy_color(policy_index(r, t.policy)), {}, {}, {}, {}};
    for (const auto& k : t.samples) {
      s.x.push_back(double(k.token_index));
      s.y.push_back(double(k.kv_logical_bytes));
    }
    p.series.push_back(std::move(s));
  }
  return svg_plot(p);
}


}  // namespace

std::string report_html(const run_report& r, const std::string& items_dir, const std::string& extra_html) {
  const auto& i = r.run.info;
  std::string seeds;
  for (auto s : i.seeds) {
    if (!seeds.empty()) seeds += ",";
    seeds += std::to_string(s);
  }
  std::string o = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>kvarena report: " +
                  xml_escape(i.name) + "</title>\n<style>" + report_page_css() + "</style>\n</head>\n<body>\n";
  o += "<h1>kvarena report: run " + xml_escape(i.name) + "</h1>\n";
  o += "<p class=\"meta\">model <code>" + xml_escape(i.model) + "</code>, suite <code>" + xml_escape(i.suite) +
       "</code>, seeds " + xml_escape(seeds) + ", created " + xml_escape(r.run.created_at) +
       (i.version.empty() ? "" : ", kvarena " + xml_escape(i.version)) + "; file <code>" + xml_escape(r.file) +
       "</code></p>\n";
  if (r.planned == 0)
    o += "<p class=\"note\">No work-item plan stored: completeness unknown.</p>\n";
  else if (r.not_done == 0)
    o += "<p class=\"complete\">Complete: all " + std::to_string(r.planned) + " planned items done.</p>\n";
  else
    o += "<p class=\"incomplete\">INCOMPLETE: " + std::to_string(r.not_done) + " of " + std::to_string(r.planned) +
         " planned items not done (<code>kvarena merge</code> lists them).</p>\n";

  o += html_table(report_table(r));
  o += "<p class=\"note\">errors = error + timeout rows; success = successes / task rows (errors count as "
       "failures); retained = "
       "success / full's success (in brackets: 95% percentile bootstrap over tasks); 95% CI = Wilson score "
       "interval; tmpl mean = unweighted mean of the per-template success rates (below); "
       "KV peak = <code>peak_kv_logical_bytes</code> "
       "(live tokens at their precision plus the policy's state) over items that ran to an end; "
       "KV med/full = median / full's median; alloc KV = <code>peak_kv_bytes</code> (allocated on the device); "
       "host KV = FreeKV's offloaded copy; process = <code>peak_process_bytes</code> (resident high-water); "
       "step ms = median "
       "<code>steps.latency_ms</code>; oracle = the scripted agent, the upper bound.</p>\n";
  if (any_memory_not_reported(r))
    o += "<p class=\"note\">" + std::string(k_not_reported) + " = " + xml_escape(k_not_reported_note) + "</p>\n";

  o += "<h2>Success rate vs peak logical KV memory</h2>\n" + success_vs_memory_plot(r);
  o += per_template_table(r);
  o += "<h2>KV cache size over a task's tokens</h2>\n";
  if (r.traces.empty())
    o += "<p class=\"note\">The run has no <code>kv_trace</code> rows.</p>\n";
  else
    o += kv_trace_plot(r);
  o += extra_html;
  if (!items_dir.empty()) o += items_index_html(r, items_dir);
  o += "</body>\n</html>\n";
  return o;
}

}  // namespace kvarena::results
