// report-items.cpp: see report-items.h.
#include "report-items.h"

#include <cctype>
#include <cmath>
#include <cstdio>

#include "svg-plot.h"  // xml_escape, format_bytes

namespace kvarena::results {

namespace {

constexpr const char* css = R"css(
body { font-family: sans-serif; margin: 2em; color: #222; max-width: 1500px; }
h1 { font-size: 1.3em; } h2 { font-size: 1.05em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.92em; }
th, td { padding: 3px 9px; border-bottom: 1px solid #ddd; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
pre { background: #f7f7f7; padding: 6px 8px; white-space: pre-wrap; word-break: break-word; margin: 4px 0; }
.ok { color: #1a7f37; } .bad { color: #b42318; } .note { color: #555; font-size: 0.88em; }
.step { border-top: 2px solid #ccc; margin-top: 1.2em; padding-top: 0.4em; }
.view { display: flex; gap: 12px; align-items: flex-start; }
.view img { width: 560px; border: 1px solid #ccc; flex: none; }
.view pre { max-height: 420px; overflow: auto; flex: 1; margin: 0; }
)css";

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string page_head(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>" + xml_escape(title) +
         "</title>\n<style>" + css + "</style>\n</head>\n<body>\n";
}

// A figure the agent endpoint did not report (stored NULL, read as < 0) says so.
std::string known_bytes(int64_t v) { return v < 0 ? "not reported by the endpoint" : format_bytes(double(v)); }
std::string known_count(int64_t v) { return v < 0 ? "(not reported)" : std::to_string(v); }

std::string row(const std::string& key, const std::string& value) {
  return "<tr><th>" + xml_escape(key) + "</th><td>" + value + "</td></tr>\n";
}

std::string item_html(const run_report& r, const task_result& t, const std::vector<step_row>& steps,
                      const std::string& screenshots_base) {
  const std::string title = "task " + t.item.task_id + ", " + t.item.policy + ", seed " + std::to_string(t.item.seed);
  std::string o = page_head("kvarena: " + title);
  o += "<h1>" + xml_escape(title) + "</h1>\n";
  o += "<p class=\"note\">run " + xml_escape(r.run.info.name) + ", model <code>" + xml_escape(r.run.info.model) +
       "</code>, suite <code>" + xml_escape(r.run.info.suite) + "</code></p>\n<table>\n";
  o += row("status", xml_escape(to_string(t.status)) + (t.error.empty() ? "" : ": " + xml_escape(t.error)));
  o += row("success", t.success ? "<span class=\"ok\">yes</span>" : "<span class=\"bad\">no</span>");
  o += row("score", fmt("%g", t.score));
  o += row("answer", "<code>" + xml_escape(t.answer) + "</code>");
  o += row("final page", "<code>" + xml_escape(t.final_url) + "</code>");
  o += row("evaluation", t.eval_detail.empty() ? "-" : "<pre>" + xml_escape(t.eval_detail) + "</pre>");
  o += row("steps", std::to_string(t.steps));
  o += row("peak KV (logical / allocated)", known_bytes(t.peak_kv_logical_bytes) + " / " + known_bytes(t.peak_kv_bytes));
  o += row("process peak", known_bytes(t.peak_process_bytes));
  if (t.model_calls >= 0)
    o += row("agent endpoint", std::to_string(t.model_calls) + " requests, " + std::to_string(t.model_retries) +
                                   " of them retries");
  o += "</table>\n";
  for (const step_row& s : steps) {
    o += "<div class=\"step\">\n<h2>step " + std::to_string(s.step) + ": <code>" + xml_escape(s.action) + "</code>";
    if (!s.action_error.empty()) o += " <span class=\"bad\">(" + xml_escape(s.action_error) + ")</span>";
    o += "</h2>\n<p class=\"note\">KV " + known_count(s.kv_tokens) + " tokens, " + known_bytes(s.kv_logical_bytes) +
         " logical, " + known_bytes(s.kv_bytes) + " allocated";
    if (s.confidence >= 0) o += "; confidence " + fmt("%.3f", s.confidence);
    if (s.budget >= 0) o += "; budget " + std::to_string(s.budget) + " tokens";
    o += "; " + known_count(s.prompt_tokens) + " tokens prefilled, " + known_count(s.generated_tokens) +
         " generated in " + fmt("%.1f", s.latency_ms) + " ms";
    if (s.model_retries > 0) o += "; endpoint retries: " + xml_escape(s.model_retry_log);
    o += "</p>\n";
    o += "<p>observation:</p>\n<div class=\"view\">";
    if (!s.screenshot_path.empty())
      o += "<a href=\"" + xml_escape(screenshots_base + s.screenshot_path) + "\"><img src=\"" +
           xml_escape(screenshots_base + s.screenshot_path) + "\" alt=\"Set-of-Marks screenshot of step " +
           std::to_string(s.step) + "\"/></a>";
    o += "<pre>" + xml_escape(s.observation) + "</pre></div>\n";
    o += "<p>model output:</p>\n<pre>" + xml_escape(s.output) + "</pre>\n";
    o += "<p>parsed action: <code>" + xml_escape(s.action) + "</code>" +
         (s.action_error.empty() ? std::string(" <span class=\"ok\">done</span>")
                                 : " <span class=\"bad\">" + xml_escape(s.action_error) + "</span>") +
         "</p>\n</div>\n";
  }
  o += "</body>\n</html>\n";
  return o;
}

}  // namespace

std::string item_page_name(const work_item& item) {
  std::string s = item.task_id + "_" + item.policy + "_" + std::to_string(item.seed);
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.')) c = '_';
  return s + ".html";
}

std::vector<item_page> report_item_pages(const run_report& r, const std::string& screenshots_base) {
  results_reader rd(r.file);
  std::vector<item_page> out;
  for (const task_result& t : rd.task_results(r.run.run_id))
    out.push_back({item_page_name(t.item), item_html(r, t, rd.steps(r.run.run_id, t.item), screenshots_base)});
  return out;
}

std::string items_index_html(const run_report& r, const std::string& items_dir) {
  std::string o = "<h2>Items: every step of every task</h2>\n<div class=\"wide\">\n<table>\n<thead><tr><th>task</th>"
                  "<th>policy</th><th>seed</th><th>success</th><th>page</th></tr></thead>\n<tbody>\n";
  for (const policy_metrics& m : r.policies)
    for (const item_outcome& it : m.outcomes) {
      const work_item item{it.task, m.policy, it.seed};
      o += "<tr><td>" + xml_escape(it.task) + "</td><td>" + xml_escape(m.policy) + "</td><td>" +
           std::to_string(it.seed) + "</td><td>" + (it.success ? "yes" : "no") + "</td><td><a href=\"" +
           xml_escape(items_dir + "/" + item_page_name(item)) + "\">steps</a></td></tr>\n";
    }
  o += "</tbody>\n</table>\n</div>\n";
  return o;
}

}  // namespace kvarena::results
