// test-report.cpp: `kvarena report` on a hand-made run: 4 tasks x (full, window, confkv) +
// the oracle, with known successes, peaks, steps and latencies. Every metric is checked
// against the value computed by hand below; the text and JSON carry them; the HTML page is
// well-formed (a tag-balance check) and holds the two SVG plots with a mark per policy.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report-html.h"
#include "report-items.h"
#include "results-db.h"
#include "results-report.h"
#include "svg-plot.h"
#include "test-util.h"

namespace kvarena::results {
namespace {

constexpr double MiB = 1024.0 * 1024.0;

struct hand_item {
  const char* task;
  const char* policy;
  item_status status;
  bool success;
  int64_t peak_kv_mib;
  std::vector<double> latencies_ms;  // one step row each
  int64_t steps;                     // task_results.steps
};

// By hand:
//   full:   success t1 t2 t3 = 3/4 = 75%; peaks 100 200 300 400 MiB -> median 250, max 400;
//           latencies 10..80 -> median 45; mean steps 2.
//   window: success t1 = 1/4 = 25% -> retained 25/75 = 1/3; peaks 50 50 60 70 -> median 55,
//           max 70, vs full 55/250 = 0.22; no step rows -> n/a; mean steps 5.
//   confkv: success t1 t2 t4 = 3/4 (t3 is an error row, a failure) -> retained 1;
//           peaks of t1 t2 t4 (the error row is left out) 80 90 100 -> median 90, max 100,
//           vs full 90/250 = 0.36; latencies 5 7 9 (t3's 1000 left out) -> median 7;
//           mean steps 1 (t3's 3 left out).
//   oracle: 4/4 -> retained 4/3.
// Logical peaks are half the allocated ones above (median 125 / 27.5 / 45 MiB, same ratios
// to full), process peaks 1000 MiB more (full's median 1250 MiB).
// Templates: t1 t2 -> 10, t3 t4 -> 20. Per-template success: full 10: 2/2, 20: 1/2 -> mean
// (1 + .5) / 2 = .75; window 10: 1/2, 20: 0/2 -> .25; confkv 10: 2/2, 20: 1/2 -> .75.
// Wilson 95% intervals (z = 1.96): 3/4 -> [0.3006, 0.9544], 1/4 -> [0.0456, 0.6994]
// (p~ = (p + z^2/2n) / (1 + z^2/n), half width z sqrt(p(1-p)/n + z^2/4n^2) / (1 + z^2/n)).
const std::vector<hand_item> k_items = {
    {"t1", "full", item_status::done, true, 100, {10, 20}, 2},
    {"t2", "full", item_status::done, true, 200, {30, 40}, 2},
    {"t3", "full", item_status::done, true, 300, {50, 60}, 2},
    {"t4", "full", item_status::done, false, 400, {70, 80}, 2},
    {"t1", "window", item_status::done, true, 50, {}, 5},
    {"t2", "window", item_status::done, false, 50, {}, 5},
    {"t3", "window", item_status::timeout, false, 60, {}, 5},
    {"t4", "window", item_status::done, false, 70, {}, 5},
    {"t1", "confkv", item_status::done, true, 80, {5}, 1},
    {"t2", "confkv", item_status::done, true, 90, {7}, 1},
    {"t3", "confkv", item_status::error, false, 0, {1000, 1000, 1000}, 3},
    {"t4", "confkv", item_status::done, true, 100, {9}, 1},
    {"t1", "oracle", item_status::done, true, 0, {}, 3},
    {"t2", "oracle", item_status::done, true, 0, {}, 3},
    {"t3", "oracle", item_status::done, true, 0, {}, 3},
    {"t4", "oracle", item_status::done, true, 0, {}, 3},
};

// KV over tokens: t2 has the longest traces (full grows; confkv saws up and down).
std::vector<kv_sample> trace_for(const std::string& task, const std::string& policy) {
  std::vector<kv_sample> out;
  int n = task == "t2" ? 40 : 10;
  for (int i = 0; i < n; ++i) {
    int64_t tokens = 100 * (i + 1);
    int64_t bytes = policy == "confkv" ? (i % 8 + 1) * int64_t(MiB) : tokens * 65536;
    out.push_back({tokens, bytes, policy == "confkv" ? 512 : -1, policy == "confkv" ? 0.7 : -1, bytes / 2});
  }
  return out;
}

std::string make_db(const std::string& name) {
  auto dir = test::temp_dir(name);
  std::string path = (dir / "run.sqlite").string();
  results_writer w(path);
  run_info info;
  info.name = "hand";
  info.model = "m125.gguf";
  info.suite = "tasks/long-horizon";
  info.policies = {"full", "window", "confkv", "oracle"};
  info.seeds = {0};
  info.version = "test";
  int64_t run = w.begin_run(info, false);
  std::vector<planned_item> plan;
  for (const auto& h : k_items) plan.push_back({{h.task, h.policy, 0}, 0});
  w.add_work_items(run, plan);
  for (const auto& h : k_items) {
    task_result r;
    r.item = {h.task, h.policy, 0};
    r.status = h.status;
    r.success = h.success;
    r.score = h.success ? 1 : 0;
    r.steps = h.steps;
    r.peak_kv_bytes = h.peak_kv_mib * int64_t(MiB);
    r.peak_kv_logical_bytes = r.peak_kv_bytes / 2;  // the headline figure: half the allocation here
    r.peak_process_bytes = r.peak_kv_bytes + 1000 * int64_t(MiB);
    r.template_id = std::string(h.task) <= "t2" ? 10 : 20;  // t1 t2: template 10; t3 t4: 20
    if (h.status != item_status::error) r.eval_detail = h.success ? "string_match 1\n" : "string_match 0: expected 'x'\n";
    r.peak_kv_host_bytes = 0;
    if (h.status != item_status::done) r.error = "failed";
    std::vector<step_row> steps;
    for (size_t i = 0; i < h.latencies_ms.size(); ++i) {
      step_row s;
      s.step = int64_t(i);
      s.action = "scroll [down]";
      s.observation = "[1] RootWebArea '" + std::string(h.task) + " <page>'";
      s.output = "I scroll. ```scroll [down]```";
      s.kv_logical_bytes = int64_t(i + 1) * 1024;
      s.latency_ms = h.latencies_ms[i];
      steps.push_back(s);
    }
    std::vector<kv_sample> trace;
    if (std::string(h.policy) != "oracle") trace = trace_for(h.task, h.policy);
    w.write_item(run, r, steps, trace);
  }
  return path;
}

const policy_metrics& find(const run_report& r, const std::string& policy) {
  for (const auto& m : r.policies)
    if (m.policy == policy) return m;
  throw std::runtime_error("no policy " + policy);
}

TEST(Report, MetricsAreTheHandComputedOnes) {
  auto r = build_report(make_db("metrics"));
  ASSERT_EQ(r.policies.size(), 4u);
  EXPECT_EQ(r.policies[0].policy, "full");  // report order
  EXPECT_EQ(r.policies[1].policy, "window");
  EXPECT_EQ(r.policies[2].policy, "confkv");
  EXPECT_EQ(r.policies[3].policy, "oracle");
  EXPECT_EQ(r.planned, 16);
  EXPECT_EQ(r.not_done, 2);  // window t3 (timeout), confkv t3 (error)

  const auto& full = find(r, "full");
  EXPECT_EQ(full.items, 4);
  EXPECT_EQ(full.done, 4);
  EXPECT_EQ(full.successes, 3);
  EXPECT_DOUBLE_EQ(full.success_rate, 0.75);
  EXPECT_DOUBLE_EQ(full.retained_vs_full, 1.0);
  EXPECT_DOUBLE_EQ(full.peak_kv_bytes_median, 250 * MiB);
  EXPECT_DOUBLE_EQ(full.peak_kv_bytes_max, 400 * MiB);
  EXPECT_DOUBLE_EQ(full.peak_kv_median_vs_full, 1.0);
  EXPECT_DOUBLE_EQ(full.peak_kv_logical_median, 125 * MiB);
  EXPECT_DOUBLE_EQ(full.peak_kv_logical_max, 200 * MiB);
  EXPECT_DOUBLE_EQ(full.peak_process_bytes_median, 1250 * MiB);
  EXPECT_NEAR(full.success_ci_low, 0.3006, 1e-4);
  EXPECT_NEAR(full.success_ci_high, 0.9544, 1e-4);
  EXPECT_EQ(full.n_tasks, 4);
  EXPECT_EQ(full.n_seeds, 1);
  EXPECT_EQ(full.per_template, (std::vector<std::pair<int64_t, double>>{{10, 1.0}, {20, 0.5}}));
  EXPECT_DOUBLE_EQ(full.template_mean, 0.75);
  // Full against itself: every resample gives 1.
  EXPECT_DOUBLE_EQ(full.retained_ci_low, 1.0);
  EXPECT_DOUBLE_EQ(full.retained_ci_high, 1.0);
  EXPECT_DOUBLE_EQ(full.step_ms_median, 45.0);
  EXPECT_DOUBLE_EQ(full.mean_steps, 2.0);

  const auto& win = find(r, "window");
  EXPECT_EQ(win.done, 3);
  EXPECT_EQ(win.timeouts, 1);
  EXPECT_DOUBLE_EQ(win.success_rate, 0.25);
  EXPECT_DOUBLE_EQ(win.retained_vs_full, 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(win.peak_kv_bytes_median, 55 * MiB);
  EXPECT_DOUBLE_EQ(win.peak_kv_bytes_max, 70 * MiB);
  EXPECT_DOUBLE_EQ(win.peak_kv_median_vs_full, 0.22);
  EXPECT_DOUBLE_EQ(win.peak_kv_logical_median, 27.5 * MiB);
  EXPECT_NEAR(win.success_ci_low, 0.0456, 1e-4);
  EXPECT_NEAR(win.success_ci_high, 0.6994, 1e-4);
  EXPECT_DOUBLE_EQ(win.template_mean, 0.25);
  // The bootstrap intervals hold the point estimates; window's peaks (25 25 30 35 MiB logical)
  // are each below full's smallest (50), so every resample's ratio is under 35/50 = 0.7.
  EXPECT_LE(win.retained_ci_low, win.retained_vs_full);
  EXPECT_GE(win.retained_ci_high, win.retained_vs_full);
  EXPECT_LE(win.memory_ratio_ci_low, 0.22);
  EXPECT_GE(win.memory_ratio_ci_high, 0.22);
  EXPECT_LT(win.memory_ratio_ci_high, 0.7);
  EXPECT_TRUE(std::isnan(win.step_ms_median));
  EXPECT_DOUBLE_EQ(win.mean_steps, 5.0);

  const auto& ck = find(r, "confkv");
  EXPECT_EQ(ck.items, 4);
  EXPECT_EQ(ck.errors, 1);
  EXPECT_DOUBLE_EQ(ck.success_rate, 0.75);
  EXPECT_DOUBLE_EQ(ck.retained_vs_full, 1.0);
  EXPECT_DOUBLE_EQ(ck.peak_kv_bytes_median, 90 * MiB);
  EXPECT_DOUBLE_EQ(ck.peak_kv_bytes_max, 100 * MiB);
  EXPECT_DOUBLE_EQ(ck.peak_kv_median_vs_full, 0.36);
  EXPECT_DOUBLE_EQ(ck.step_ms_median, 7.0);
  EXPECT_DOUBLE_EQ(ck.mean_steps, 1.0);
  EXPECT_DOUBLE_EQ(ck.template_mean, 0.75);

  const auto& oracle = find(r, "oracle");
  EXPECT_DOUBLE_EQ(oracle.success_rate, 1.0);
  EXPECT_DOUBLE_EQ(oracle.retained_vs_full, 4.0 / 3.0);

  // The KV plot's item: t2 has the longest trace; one line per policy with a trace.
  EXPECT_EQ(r.trace_task, "t2");
  ASSERT_EQ(r.traces.size(), 3u);
  EXPECT_EQ(r.traces[2].policy, "confkv");
  EXPECT_EQ(r.traces[2].samples.size(), 40u);
}

TEST(Report, WithoutAFullRowRetainedIsNa) {
  auto dir = test::temp_dir("nofull");
  std::string path = (dir / "r.sqlite").string();
  {
    results_writer w(path);
    run_info info{"solo", "m", "s", {"window"}, {1}, "", "{}"};
    int64_t run = w.begin_run(info, false);
    task_result t;
    t.item = {"t1", "window", 1};
    t.success = true;
    w.write_item(run, t, {}, {});
  }
  auto r = build_report(path);
  ASSERT_EQ(r.policies.size(), 1u);
  EXPECT_TRUE(std::isnan(r.policies[0].retained_vs_full));
  EXPECT_EQ(r.planned, 0);
  auto t = report_table(r);
  EXPECT_EQ(t[1][8], "n/a");  // retained
  EXPECT_NE(report_text(r).find("no work-item plan stored"), std::string::npos);
  EXPECT_TRUE(r.traces.empty());
  EXPECT_NE(report_html(r).find("no <code>kv_trace</code> rows"), std::string::npos);
}

TEST(Report, TextAndJsonCarryTheMetrics) {
  auto r = build_report(make_db("text"));
  std::string text = report_text(r);
  for (const char* want : {"run hand", "INCOMPLETE: 2 of 16 planned items not done", "75.0% (3/4)", "30.1-95.4%",
                           "33.3%", "125.0 MiB", "200.0 MiB", "250.0 MiB", "1.2 GiB", "0.22x", "0.36x", "45.0",
                           "oracle (upper bound)", "100.0% (4/4)", "133.3%"})
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;

  auto j = nlohmann::json::parse(report_json(r));
  EXPECT_EQ(j["run"]["name"], "hand");
  EXPECT_EQ(j["planned_items"], 16);
  EXPECT_EQ(j["complete"], false);
  ASSERT_EQ(j["policies"].size(), 4u);
  auto& ck = j["policies"][2];
  EXPECT_EQ(ck["policy"], "confkv");
  EXPECT_DOUBLE_EQ(ck["success_rate"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(ck["peak_kv_bytes_median"].get<double>(), 90 * MiB);
  EXPECT_DOUBLE_EQ(ck["peak_kv_logical_bytes_median"].get<double>(), 45 * MiB);
  EXPECT_NEAR(ck["success_ci95"][0].get<double>(), 0.3006, 1e-4);
  EXPECT_DOUBLE_EQ(ck["peak_kv_median_vs_full"].get<double>(), 0.36);
  EXPECT_EQ(ck["errors"], 1);
  EXPECT_TRUE(j["policies"][1]["step_ms_median"].is_null());  // window: no step rows
}

TEST(Report, RunAndTaskCanBeChosen) {
  std::string path = make_db("choose");
  auto r = build_report(path, {.run_name = "hand", .trace_task = "t1"});
  EXPECT_EQ(r.trace_task, "t1");
  EXPECT_EQ(r.traces[0].samples.size(), 10u);
  EXPECT_THROW(build_report(path, {.run_name = "nope"}), results_error);
  EXPECT_THROW(build_report(path, {.trace_task = "t99"}), results_error);
}

// Tags balance: every element opened is closed in order or self-closed; <!...> skipped.
// Returns "" when well-formed, else where it broke.
std::string tag_balance_error(const std::string& html) {
  std::vector<std::string> open;
  size_t i = 0;
  while ((i = html.find('<', i)) != std::string::npos) {
    size_t end = html.find('>', i);
    if (end == std::string::npos) return "unclosed '<' at " + std::to_string(i);
    std::string tag = html.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.empty()) return "empty tag";
    if (tag[0] == '!' || tag[0] == '?') continue;
    if (tag.find('<') != std::string::npos) return "'<' inside tag " + tag;
    bool closing = tag[0] == '/', self = tag.back() == '/';
    std::string name = tag.substr(closing ? 1 : 0);
    name = name.substr(0, name.find_first_of(" \t\n/"));
    if (closing) {
      if (open.empty() || open.back() != name)
        return "</" + name + "> closes <" + (open.empty() ? std::string("nothing") : open.back()) + ">";
      open.pop_back();
    } else if (!self) {
      open.push_back(name);
    }
  }
  if (!open.empty()) return "<" + open.back() + "> never closed";
  // Entities: every '&' starts one.
  for (size_t k = 0; (k = html.find('&', k)) != std::string::npos; ++k) {
    size_t semi = html.find(';', k);
    if (semi == std::string::npos || semi - k > 8) return "bare '&' at " + std::to_string(k);
  }
  return "";
}

// The text of the n-th (0-based) <svg>...</svg>.
std::string nth_svg(const std::string& html, int n) {
  size_t at = 0;
  for (int k = 0; k <= n; ++k) {
    at = html.find("<svg", k ? at + 1 : 0);
    if (at == std::string::npos) return "";
  }
  return html.substr(at, html.find("</svg>", at) - at);
}

TEST(Report, HtmlIsWellFormedWithBothPlots) {
  auto r = build_report(make_db("html"));
  std::string html = report_html(r);
  EXPECT_EQ(tag_balance_error(html), "");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  for (const char* ref : {"src=", "href=", "url(", "@import"})  // nothing fetched: self-contained
    EXPECT_EQ(html.find(ref), std::string::npos) << ref;
  size_t svgs = 0;
  for (size_t k = 0; (k = html.find("<svg", k)) != std::string::npos; ++k) ++svgs;
  ASSERT_EQ(svgs, 2u);

  std::string scatter = nth_svg(html, 0), lines = nth_svg(html, 1);
  for (const char* p : {"full", "window", "confkv"}) {
    EXPECT_NE(scatter.find(std::string("<circle") ), std::string::npos);
    EXPECT_NE(scatter.find(std::string("data-series=\"") + p + "\""), std::string::npos) << p;
    EXPECT_NE(scatter.find(std::string("data-interval=\"") + p + "\""), std::string::npos) << p;  // Wilson whisker
    EXPECT_NE(lines.find(std::string("<polyline fill=\"none\" stroke=\"")), std::string::npos);
    EXPECT_NE(lines.find(std::string("data-series=\"") + p + "\""), std::string::npos) << p;
  }
  EXPECT_NE(scatter.find("data-hline=\"oracle (upper bound) 100%\""), std::string::npos);
  EXPECT_NE(scatter.find("peak logical KV bytes, median (MiB)"), std::string::npos);  // unit on the axis
  EXPECT_NE(scatter.find("success rate (%)"), std::string::npos);
  EXPECT_NE(lines.find("logical KV bytes (MiB)"), std::string::npos);
  EXPECT_NE(lines.find("tokens seen"), std::string::npos);
  // Per-template success (templates 10 and 20; window: 1/2 and 0/2 -> 50% and 0%).
  EXPECT_NE(html.find("Success rate per task template"), std::string::npos);
  EXPECT_NE(html.find("<tr><td>10</td><td>100%</td><td>50%</td><td>100%</td><td>100%</td></tr>"), std::string::npos);
  EXPECT_NE(html.find("<tr><td>20</td><td>50%</td><td>0%</td><td>50%</td><td>100%</td></tr>"), std::string::npos);
  // The table: one row per policy.
  EXPECT_NE(html.find("<td>oracle (upper bound)</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>75.0% (3/4)</td>"), std::string::npos);
}

TEST(Report, TicksAndUnits) {
  EXPECT_EQ(nice_ticks(0, 100, 6), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  EXPECT_EQ(nice_ticks(0, 7, 6), (std::vector<double>{0, 2, 4, 6, 8}));
  auto small = nice_ticks(0, 0.9, 6);
  ASSERT_EQ(small.size(), 6u);
  for (size_t i = 0; i < small.size(); ++i) EXPECT_NEAR(small[i], 0.2 * double(i), 1e-12);
  EXPECT_EQ(nice_ticks(5, 5, 6), (std::vector<double>{5, 6}));
  EXPECT_EQ(format_bytes(640), "640 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(250 * MiB), "250.0 MiB");
  EXPECT_EQ(format_bytes(3.0 * 1024 * MiB), "3.0 GiB");
  EXPECT_EQ(format_bytes(std::nan("")), "-");
  EXPECT_EQ(std::string(byte_unit_for(2 * MiB).name), "MiB");
  EXPECT_EQ(xml_escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 2, 3}), 2.5);
  EXPECT_TRUE(std::isnan(median({})));
}

}  // namespace
}  // namespace kvarena::results

namespace kvarena::results {
namespace {

item_outcome row(const char* task, bool success, double peak, int64_t tmpl = -1) {
  item_outcome o;
  o.task = task, o.success = success, o.ended = true, o.logical_peak = peak, o.template_id = tmpl;
  return o;
}

// Degenerate cases a bootstrap must get exactly, and determinism for the seed.
TEST(ReportStats, BootstrapHandCases) {
  const std::vector<item_outcome> full = {row("a", true, 100), row("b", true, 200), row("c", false, 300)};
  // The same outcomes and peaks as full: every resample's ratios are 1.
  const bootstrap_ci same = bootstrap_retained(full, full);
  EXPECT_DOUBLE_EQ(same.low, 1.0);
  EXPECT_DOUBLE_EQ(same.high, 1.0);
  // Half the memory on every task: median ratio 0.5 in every resample.
  const std::vector<item_outcome> half = {row("a", false, 50), row("b", false, 100), row("c", false, 150)};
  const bootstrap_ci m = bootstrap_memory_ratio(half, full);
  EXPECT_DOUBLE_EQ(m.low, 0.5);
  EXPECT_DOUBLE_EQ(m.high, 0.5);
  // No success anywhere: retained 0 whenever full's resample has a success.
  const bootstrap_ci zero = bootstrap_retained(half, full);
  EXPECT_DOUBLE_EQ(zero.low, 0.0);
  EXPECT_DOUBLE_EQ(zero.high, 0.0);
  // Mixed: deterministic for a seed, and within [0, 3] (policy rate <= 1, full rate >= 1/3).
  const std::vector<item_outcome> mixed = {row("a", true, 10), row("b", false, 10), row("c", true, 10)};
  const bootstrap_ci x = bootstrap_retained(mixed, full), y = bootstrap_retained(mixed, full);
  EXPECT_EQ(x.low, y.low);
  EXPECT_EQ(x.high, y.high);
  EXPECT_GE(x.low, 0.0);
  EXPECT_LE(x.high, 3.0);
  EXPECT_LT(x.low, x.high);
}

TEST(ReportStats, TemplateMeansAreUnweighted) {
  // Template 1: 3 rows, 3 successes (1.0); template 2: 1 row, failed (0.0); one row without.
  const std::vector<item_outcome> rows = {row("a", true, 1, 1), row("b", true, 1, 1), row("c", true, 1, 1),
                                          row("d", false, 1, 2), row("e", true, 1)};
  const auto per = template_success(rows);
  EXPECT_EQ(per, (std::vector<std::pair<int64_t, double>>{{1, 1.0}, {2, 0.0}}));
  EXPECT_DOUBLE_EQ(template_mean(per), 0.5);  // the row mean would be 4/5
  EXPECT_TRUE(std::isnan(template_mean({})));
}

// The trajectory viewer: a page per task row with every step; the main page links them.
TEST(ReportItems, EveryItemHasAPageWithItsStepsAndVerdict) {
  auto r = build_report(make_db("items"));
  const std::vector<item_page> pages = report_item_pages(r);
  ASSERT_EQ(pages.size(), k_items.size());
  const item_page* full_t1 = nullptr;
  for (const item_page& p : pages) {
    EXPECT_EQ(tag_balance_error(p.html), "") << p.name;
    if (p.name == "t1_full_0.html") full_t1 = &p;
  }
  ASSERT_NE(full_t1, nullptr);
  // full t1: two steps (latencies 10, 20), success, its verdict; the observation escaped.
  EXPECT_NE(full_t1->html.find("step 1: <code>scroll [down]</code>"), std::string::npos);
  EXPECT_NE(full_t1->html.find("[1] RootWebArea &#39;t1 &lt;page&gt;&#39;"), std::string::npos);
  EXPECT_NE(full_t1->html.find("I scroll. ```scroll [down]```"), std::string::npos);
  EXPECT_NE(full_t1->html.find("string_match 1"), std::string::npos);
  EXPECT_NE(full_t1->html.find("2.0 KiB logical"), std::string::npos);  // step 1: 2 * 1024
  EXPECT_NE(full_t1->html.find("class=\"ok\">yes"), std::string::npos);
  const std::string main = report_html(r, "run-items");
  EXPECT_EQ(tag_balance_error(main), "");
  EXPECT_NE(main.find("<a href=\"run-items/t1_full_0.html\">steps</a>"), std::string::npos);
  EXPECT_NE(main.find("<a href=\"run-items/t4_oracle_0.html\">steps</a>"), std::string::npos);
  EXPECT_EQ(report_html(r).find("href="), std::string::npos);  // no items folder: no links
  EXPECT_EQ(item_page_name({"12", "confkv:n-high=32@512t", 3}), "12_confkv_n-high_32_512t_3.html");
}

// A --kv-budget sweep: rows grouped by budget (smaller first), policies in registry order
// inside a group; the reference without a budget first, the oracle last.
TEST(Report, BudgetSweepRowsGroupByBudget) {
  auto dir = test::temp_dir("sweep");
  const std::string path = (dir / "r.sqlite").string();
  const std::vector<std::string> labels = {"oracle", "h2o@512t", "window@512t", "full", "h2o@256t", "window@256t",
                                           "window@1MiB"};
  {
    results_writer w(path);
    run_info info{"sweep", "m", "s", labels, {0}, "", "{}"};
    const int64_t run = w.begin_run(info, false);
    for (const std::string& l : labels) {
      task_result t;
      t.item = {"t1", l, 0};
      w.write_item(run, t, {}, {});
    }
  }
  std::vector<std::string> order;
  for (const auto& m : build_report(path).policies) order.push_back(m.policy);
  EXPECT_EQ(order, (std::vector<std::string>{"full", "window@256t", "h2o@256t", "window@512t", "h2o@512t",
                                             "window@1MiB", "oracle"}));
}

}  // namespace
}  // namespace kvarena::results
