// test-report-bench.cpp: the benchmark part of `kvarena report` (report-bench.h) on
// bench_results rows written by hand: grouping by invocation, the ratios to full, NIAH's
// per-length counts, the label of rows without a "spec", and the three forms (text, JSON,
// HTML with a plot mark per policy). Every figure is computed by hand in the comments.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench-results-db.h"
#include "report-bench.h"
#include "results-schema.h"
#include "test-util.h"

namespace kvarena::results {
namespace {

using json = nlohmann::json;
constexpr double MiB = 1024.0 * 1024.0;

bench_result_row row(const std::string& bench, const std::string& policy, const json& options, const json& config,
                     const json& metrics) {
  bench_result_row r;
  r.bench = bench;
  r.model = "m.gguf";
  r.policy = policy;
  r.options_json = options.dump();
  r.config_json = config.dump();
  r.metrics_json = metrics.dump();
  return r;
}

// Two ppl invocations (budgets 512t and 256t: two groups), one NIAH, one confidence-kl.
//   ppl 512t: full ppl 2.0, 8 MiB; window@512t ppl 2.5, 2 MiB -> ppl/full 1.250, KV/full 0.250;
//             h2o row without "spec" (an older row) -> label h2o:heavy=256:recent=256, 2.2 / 2.0 = 1.100
//   ppl 256t: window@256t ppl 3.0, 1 MiB; no full row -> ratios "-"
//   niah:     full 3 of 4 (1024: 2/2, 2048: 1/2), window 1 of 4 (1024: 1/2, 2048: 0/2)
std::string make_file(const std::string& name) {
  const std::string path = (kvarena::test::temp_dir("report-bench") / (name + ".sqlite")).string();
  const json c512 = {{"threads", 1}, {"kv_budget", "512t"}, {"text", "t.txt"}};
  const json c256 = {{"threads", 1}, {"kv_budget", "256t"}, {"text", "t.txt"}};
  append_bench_results(path, {row("ppl", "full", json::object(), c512,
                                  {{"spec", "full"}, {"ppl", 2.0}, {"peak_kv_logical_bytes", 8 * MiB},
                                   {"peak_kv_bytes", 9 * MiB}, {"tok_s", 100.0}}),
                              row("ppl", "window", {{"window", 512}}, c512,
                                  {{"spec", "window@512t"}, {"ppl", 2.5}, {"peak_kv_logical_bytes", 2 * MiB},
                                   {"peak_kv_bytes", 3 * MiB}, {"tok_s", 200.0}}),
                              row("ppl", "h2o", {{"heavy", 256}, {"recent", 256}}, c512,
                                  {{"ppl", 2.2}, {"peak_kv_logical_bytes", 2 * MiB}})});
  const auto grid = [](std::vector<bool> ok) {
    json g = json::array();
    const int lengths[] = {1024, 1024, 2048, 2048};
    for (size_t i = 0; i < ok.size(); ++i) g.push_back({{"length", lengths[i]}, {"depth", 0.5}, {"correct", bool(ok[i])}});
    return g;
  };
  const json cn = {{"lengths", {1024, 2048}}, {"kv_budget", "512t"}};
  append_bench_results(path, {row("ppl", "window", {{"window", 256}}, c256,
                                  {{"spec", "window@256t"}, {"ppl", 3.0}, {"peak_kv_logical_bytes", 1 * MiB}}),
                              row("niah", "full", json::object(), cn,
                                  {{"spec", "full"}, {"accuracy", 0.75}, {"peak_kv_logical_bytes", 4 * MiB},
                                   {"grid", grid({true, true, true, false})}}),
                              row("niah", "window", {{"window", 512}}, cn,
                                  {{"spec", "window@512t"}, {"accuracy", 0.25}, {"peak_kv_logical_bytes", 1 * MiB},
                                   {"grid", grid({true, false, false, false})}}),
                              row("confidence-kl", "full", json::object(), {{"every", 8}},
                                  {{"spec", "full"}, {"pearson_r", -0.5}, {"spearman_r", -0.25}, {"n_samples", 40},
                                   {"confidence_mean", 0.8},
                                   {"kl_mean", 0.25}})});
  return path;
}

TEST(ReportBench, GroupsAndRatiosAreTheHandComputedOnes) {
  const bench_report b = build_bench_report(make_file("groups"));
  EXPECT_EQ(b.n_rows, 7u);
  ASSERT_EQ(b.groups.size(), 4u);  // ppl 512t, ppl 256t, niah, confidence-kl
  const bench_group& p = b.groups[0];
  EXPECT_EQ(p.bench, "ppl");
  ASSERT_EQ(p.rows.size(), 3u);
  EXPECT_EQ(p.columns, (std::vector<std::string>{"policy", "ppl", "ppl/full", "KV peak", "KV/full", "alloc KV", "tok/s"}));
  EXPECT_EQ(p.rows[0], (std::vector<std::string>{"full", "2.0000", "1.000", "8.0 MiB", "1.000", "9.0 MiB", "100"}));
  EXPECT_EQ(p.rows[1], (std::vector<std::string>{"window@512t", "2.5000", "1.250", "2.0 MiB", "0.250", "3.0 MiB", "200"}));
  EXPECT_EQ(p.rows[2], (std::vector<std::string>{"h2o:heavy=256:recent=256", "2.2000", "1.100", "2.0 MiB", "0.250", "-", "-"}));
  ASSERT_EQ(p.points.size(), 3u);
  EXPECT_EQ(p.points[1].policy, "window");
  EXPECT_DOUBLE_EQ(p.points[1].value, 2.5);
  EXPECT_DOUBLE_EQ(p.points[1].peak_kv_logical, 2 * MiB);
  EXPECT_EQ(p.points[2].policy, "h2o:heavy=256:recent=256");  // a variant is its own series

  const bench_group& q = b.groups[1];  // no full row: no ratios
  ASSERT_EQ(q.rows.size(), 1u);
  EXPECT_EQ(q.rows[0][2], "-");
  EXPECT_EQ(q.rows[0][4], "-");

  const bench_group& n = b.groups[2];
  EXPECT_EQ(n.bench, "niah");
  EXPECT_EQ(n.rows[0], (std::vector<std::string>{"full", "0.750", "1024: 2/2  2048: 1/2", "4.0 MiB", "1.000"}));
  EXPECT_EQ(n.rows[1], (std::vector<std::string>{"window@512t", "0.250", "1024: 1/2  2048: 0/2", "1.0 MiB", "0.250"}));

  const bench_group& k = b.groups[3];
  EXPECT_EQ(k.rows[0], (std::vector<std::string>{"full", "-0.500", "-0.250", "40", "0.8000", "0.2500"}));
}

TEST(ReportBench, TextJsonAndHtmlCarryTheTables) {
  const bench_report b = build_bench_report(make_file("forms"));
  const std::string text = bench_report_text(b);
  EXPECT_NE(text.find("benchmarks (7 bench_results rows)"), std::string::npos) << text;
  // Columns padded to the widest cell (the h2o label, 24 characters), numbers right-aligned.
  EXPECT_NE(text.find("\n  window@512t               2.5000     1.250  2.0 MiB    0.250   3.0 MiB    200\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("kv_budget 256t"), std::string::npos) << text;  // the groups' titles tell them apart

  const json j = json::parse(bench_report_json(b));
  ASSERT_EQ(j.size(), 4u);
  EXPECT_EQ(j[0]["config"]["kv_budget"], "512t");
  EXPECT_DOUBLE_EQ(j[0]["rows"][1]["ppl_vs_full"].get<double>(), 1.25);
  EXPECT_DOUBLE_EQ(j[0]["rows"][1]["peak_kv_logical_vs_full"].get<double>(), 0.25);
  EXPECT_EQ(j[0]["rows"][1]["options"]["window"], 512);
  EXPECT_FALSE(j[1]["rows"][0].contains("ppl_vs_full"));

  const std::string html = bench_report_html(b);
  size_t svgs = 0, closes = 0;
  for (size_t at = 0; (at = html.find("<svg", at)) != std::string::npos; ++at) ++svgs;
  for (size_t at = 0; (at = html.find("</svg>", at)) != std::string::npos; ++at) ++closes;
  EXPECT_EQ(svgs, 3u);  // ppl twice and niah; confidence-kl has no plot
  EXPECT_EQ(closes, svgs);
  for (const char* s : {"full", "window", "h2o:heavy=256:recent=256"})
    EXPECT_NE(html.find(std::string("data-series=\"") + s + "\""), std::string::npos) << s;
  EXPECT_NE(html.find("<td>h2o:heavy=256:recent=256</td>"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(ReportBench, FilesWithoutBenchRowsGiveNothing) {
  const std::string dir = kvarena::test::temp_dir("report-bench").string();
  EXPECT_TRUE(build_bench_report(dir + "/missing.sqlite").groups.empty());
  const std::string runs = dir + "/runs.sqlite";
  open_results_file(runs, open_mode::write);  // a results file without bench rows
  const bench_report b = build_bench_report(runs);
  EXPECT_TRUE(b.groups.empty());
  EXPECT_EQ(bench_report_text(b), "");
  EXPECT_EQ(bench_report_html(b), "");
}

TEST(ReportBench, ARowWithBrokenJsonIsAnErrorNamingIt) {
  const std::string path = (kvarena::test::temp_dir("report-bench") / "broken.sqlite").string();
  bench_result_row r = row("ppl", "full", json::object(), json::object(), json::object());
  r.metrics_json = "{not json";
  append_bench_results(path, {r});
  try {
    build_bench_report(path);
    FAIL() << "no error";
  } catch (const results_error& e) {
    EXPECT_NE(std::string(e.what()).find("metrics_json is not a JSON object"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvarena::results
