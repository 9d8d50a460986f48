// cmd-results.cpp: the results database commands (results/ does the work).
//   merge OUT.sqlite SHARD.sqlite...   pool shard files into OUT (created when absent; merging
//                                      again adds what is new); prints per-run counts and the
//                                      planned items not done. Exit 0 when complete, 3 when
//                                      items are missing (so a Slurm merge job shows it), 1 on error.
//   report RUN.sqlite [--run NAME] [--task ID] [--html FILE] [--json]
//                                      per-policy table on stdout (or its JSON with --json);
//                                      --html writes a self-contained page with SVG plots.
//                                      The file's bench_results rows (`kvarena bench ... --db`)
//                                      follow as tables (report-bench.h); a file with only
//                                      those gets only them.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "cli-commands.h"
#include "report-bench.h"
#include "report-html.h"
#include "report-items.h"
#include "results-merge.h"
#include "results-report.h"
#include "results-schema.h"

namespace kvarena::cli {

namespace {

constexpr int k_exit_incomplete = 3;

struct report_args {
  std::string file;
  std::string html;
  bool json = false;
  results::report_options opt;
};

int run_merge(const std::string& out, const std::vector<std::string>& inputs) {
  auto sum = results::merge_results(out, inputs);
  std::fputs(results::format_merge_summary(sum).c_str(), stdout);
  return sum.complete() ? 0 : k_exit_incomplete;
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  f.close();
  if (!f) throw results::results_error("cannot write " + path.string());
}

// True when `path` has the tables `kvarena run` writes (not only a bench_results table).
bool has_run_tables(const std::string& path) {
  if (!std::filesystem::exists(path)) return true;  // build_report says the file is missing
  auto db = results::sql_db::open(path, false, true, 10000);
  return db.query_int("PRAGMA user_version") != 0 ||
         db.query_int("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name <> 'bench_results' "
                      "AND name <> 'sqlite_sequence'") > 0;
}

int run_bench_only_report(const report_args& a, const results::bench_report& b) {
  if (!a.html.empty()) {
    write_file(a.html, results::bench_report_page(b, a.file));
    std::fprintf(stderr, "kvarena report: wrote %s\n", a.html.c_str());
  }
  const std::string text = a.json ? results::bench_only_json(b, a.file) + "\n"
                                  : a.file + ": benchmarks only (no runs)\n" + results::bench_report_text(b);
  std::fputs(text.c_str(), stdout);
  return 0;
}

int run_report(const report_args& a) {
  const results::bench_report b = results::build_bench_report(a.file);
  if (!b.groups.empty() && !has_run_tables(a.file)) return run_bench_only_report(a, b);
  auto r = results::build_report(a.file, a.opt);
  if (!a.html.empty()) {
    // The item pages go to "<FILE without .html>-items/" beside the page, which links to them.
    const std::filesystem::path page(a.html);
    std::filesystem::path items = page;
    items.replace_extension();
    items += "-items";
    std::error_code ec;
    std::filesystem::create_directories(items, ec);
    if (ec) throw results::results_error("cannot create " + items.string() + ": " + ec.message());
    // Step screenshots stay beside the results file; the pages point there.
    std::string shots = std::filesystem::weakly_canonical(a.file).parent_path().lexically_relative(
                            std::filesystem::weakly_canonical(items)).generic_string();
    if (shots.empty() || shots == ".") shots = "";
    else shots += "/";
    size_t n = 0;
    for (const results::item_page& p : results::report_item_pages(r, shots)) {
      write_file(items / p.name, p.html);
      ++n;
    }
    write_file(page, results::report_html(r, items.filename().string(), results::bench_report_html(b)));
    std::fprintf(stderr, "kvarena report: wrote %s and %zu item pages in %s\n", a.html.c_str(), n,
                 items.string().c_str());
  }
  const std::string text = a.json ? results::report_json(r, b.groups.empty() ? "" : results::bench_report_json(b)) + "\n"
                                  : results::report_text(r) + results::bench_report_text(b);
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace

void add_merge_command(CLI::App& app, command_fn& run) {
  auto* cmd = app.add_subcommand("merge", "Pool shard results files into one and list the work items still missing "
                                          "(exit 3 when incomplete)");
  auto out = std::make_shared<std::string>();
  auto inputs = std::make_shared<std::vector<std::string>>();
  cmd->add_option("out", *out, "Merged results file (created when absent)")->required();
  cmd->add_option("shards", *inputs, "Shard results files")->required();
  cmd->callback([&run, out, inputs] { run = [=] { return run_merge(*out, *inputs); }; });
}

void add_report_command(CLI::App& app, command_fn& run) {
  auto* cmd = app.add_subcommand("report", "Per-policy success, memory and latency of a run; HTML with plots");
  auto a = std::make_shared<report_args>();
  cmd->add_option("file", a->file, "Results file (.sqlite)")->required();
  cmd->add_option("--run", a->opt.run_name, "Run name (default: the file's latest run)");
  cmd->add_option("--task", a->opt.trace_task, "Task of the KV-over-tokens plot (default: the longest trace)");
  cmd->add_option("--html", a->html, "Also write a self-contained HTML report here");
  cmd->add_flag("--json", a->json, "Print the per-policy metrics as JSON instead of the table");
  cmd->callback([&run, a] { run = [a] { return run_report(*a); }; });
}

}  // namespace kvarena::cli
