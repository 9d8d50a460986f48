// results-report.cpp: metrics, the text table and JSON of results-report.h.
#include "results-report.h"

#include "report-format.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "kv/kv-budget.h"
#include "kv/kv-policy-registry.h"
#include "svg-plot.h"

namespace kvarena::results {

namespace {

using json = nlohmann::ordered_json;  // fields in the documented order

// Report order: the registry's (full first: the reference, then the paper's policies, then
// any registered later), others by name, oracle last.
int policy_rank(const std::string& label) {
  const std::vector<std::string> known = kv_policy_names();
  if (label == "oracle") return std::numeric_limits<int>::max();
  int best = std::numeric_limits<int>::max() - 1;
  size_t best_len = 0;
  for (int i = 0; i < int(known.size()); ++i) {
    const std::string& k = known[i];
    if (label == k) return i;
    // A label with options, e.g. "confkv:tau=0.5", sorts with its policy.
    const bool prefix = label.size() > k.size() && label.compare(0, k.size(), k) == 0;
    if (prefix && !std::isalnum(static_cast<unsigned char>(label[k.size()])) && label[k.size()] != '-' &&
        k.size() > best_len) {
      best = i;
      best_len = k.size();
    }
  }
  return best;
}

// Rows of a --kv-budget sweep ("window@512t") group by budget: the rows without one first
// (full, the reference), then each budget in increasing size (tokens before bytes), the
// policies in registry order within it; the oracle last.
std::tuple<int, double, int> row_order(const std::string& label) {
  const int rank = policy_rank(label);
  if (label == "oracle") return {3, 0.0, rank};
  const size_t at = label.rfind('@');
  if (at == std::string::npos) return {0, 0.0, rank};
  try {
    const kv_budget b = parse_kv_budget(label.substr(at + 1));
    return b.tokens > 0 ? std::tuple<int, double, int>{1, double(b.tokens), rank}
                        : std::tuple<int, double, int>{2, double(b.bytes), rank};
  } catch (const std::exception&) {
    return {0, 0.0, rank};  // an '@' that is not a budget
  }
}

std::string fmt(const char* f, double v) {
  if (std::isnan(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string join(const std::vector<std::string>& v, const char* sep = ",") {
  std::string s;
  for (const auto& x : v) {
    if (!s.empty()) s += sep;
    s += x;
  }
  return s;
}

// null for no value; whole numbers (byte counts) print without ".0".
json num_or_null(double v) {
  if (std::isnan(v)) return nullptr;
  if (v == std::floor(v) && std::fabs(v) < 9e15) return int64_t(v);
  return v;
}

int64_t count_for(sql_db& db, const char* sql, int64_t run_id, const std::string& policy) {
  auto st = db.prepare(sql);
  st.bind_int(1, run_id).bind_text(2, policy);
  return st.step() ? st.int64(0) : 0;
}

policy_metrics metrics_for(sql_db& db, int64_t run_id, const std::string& policy) {
  policy_metrics m;
  m.policy = policy;
  m.planned = count_for(db, "SELECT COUNT(*) FROM work_items WHERE run_id = ?1 AND policy = ?2", run_id, policy);
  std::vector<double> peaks, host_peaks, steps, logical, process;
  std::set<std::string> tasks;
  std::set<int64_t> seeds;
  {
    auto st = db.prepare(
        "SELECT status, success, steps, peak_kv_bytes, peak_kv_host_bytes, peak_kv_logical_bytes, "
        "peak_process_bytes, task_id, seed, template_id FROM task_results "
        "WHERE run_id = ?1 AND policy = ?2");
    st.bind_int(1, run_id).bind_text(2, policy);
    while (st.step()) {
      ++m.items;
      item_status s = parse_item_status(st.text(0));
      m.done += s == item_status::done;
      m.errors += s == item_status::error;
      m.timeouts += s == item_status::timeout;
      m.successes += st.int64(1) != 0;
      item_outcome o;
      o.task = st.text(7), o.seed = st.int64(8), o.success = st.int64(1) != 0, o.ended = s != item_status::error;
      o.logical_peak = st.is_null(5) ? no_value : double(st.int64(5));
      o.template_id = st.is_null(9) ? -1 : st.int64(9);
      m.outcomes.push_back(o);
      tasks.insert(o.task), seeds.insert(o.seed);
      if (s == item_status::error) continue;  // per-item measures: items that ran to an end
      steps.push_back(double(st.int64(2)));
      // NULL: not reported by the agent endpoint (run --agent-url); left out, and said so.
      const auto known = [&](int col, std::vector<double>& v) {
        if (st.is_null(col)) m.memory_not_reported = true;
        else v.push_back(double(st.int64(col)));
      };
      known(3, peaks);
      known(4, host_peaks);
      known(5, logical);
      known(6, process);
    }
  }
  std::vector<double> latencies;
  {
    auto st = db.prepare(
        "SELECT s.latency_ms FROM steps s JOIN task_results t ON t.run_id = s.run_id AND t.task_id = s.task_id "
        "AND t.policy = s.policy AND t.seed = s.seed WHERE s.run_id = ?1 AND s.policy = ?2 AND t.status <> 'error'");
    st.bind_int(1, run_id).bind_text(2, policy);
    while (st.step()) latencies.push_back(st.real(0));
  }
  if (m.items) m.success_rate = double(m.successes) / double(m.items);
  std::tie(m.success_ci_low, m.success_ci_high) = wilson_interval(m.successes, m.items);
  m.n_tasks = int64_t(tasks.size()), m.n_seeds = int64_t(seeds.size());
  m.per_template = template_success(m.outcomes);
  m.template_mean = template_mean(m.per_template);
  m.peak_kv_logical_median = median(logical);
  if (!logical.empty()) m.peak_kv_logical_max = *std::max_element(logical.begin(), logical.end());
  m.peak_process_bytes_median = median(process);
  m.peak_kv_bytes_median = median(peaks);
  if (!peaks.empty()) m.peak_kv_bytes_max = *std::max_element(peaks.begin(), peaks.end());
  m.peak_kv_host_bytes_median = median(host_peaks);
  m.step_ms_median = median(latencies);
  if (!steps.empty()) {
    double sum = 0;
    for (double s : steps) sum += s;
    m.mean_steps = sum / double(steps.size());
  }
  return m;
}

// The item of the KV plot: the asked task (its smallest seed with a trace), else the
// (task, seed) whose trace reaches the most tokens.
bool pick_trace_item(sql_db& db, int64_t run_id, const std::string& task, std::string& task_out, int64_t& seed_out) {
  auto st = task.empty()
                ? db.prepare("SELECT task_id, seed FROM kv_trace WHERE run_id = ?1 GROUP BY task_id, seed "
                             "ORDER BY MAX(token_index) DESC, COUNT(*) DESC, task_id, seed LIMIT 1")
                : db.prepare("SELECT task_id, seed FROM kv_trace WHERE run_id = ?1 AND task_id = ?2 ORDER BY seed LIMIT 1");
  st.bind_int(1, run_id);
  if (!task.empty()) st.bind_text(2, task);
  if (!st.step()) return false;
  task_out = st.text(0);
  seed_out = st.int64(1);
  return true;
}

}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) return no_value;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

run_report build_report(const std::string& path, const report_options& opt) {
  results_reader reader(path);
  sql_db& db = reader.db();
  run_report r;
  r.file = path;
  auto runs = reader.runs();
  r.runs_in_file = int64_t(runs.size());
  if (runs.empty()) throw results_error("results file " + path + " holds no runs yet");
  if (opt.run_name.empty()) {
    r.run = runs.back();
  } else {
    auto found = reader.find_run(opt.run_name);
    if (!found) {
      std::vector<std::string> names;
      for (const auto& x : runs) names.push_back(x.info.name);
      throw results_error("results file " + path + " has no run named " + opt.run_name + " (runs: " + join(names, ", ") +
                          ")");
    }
    r.run = *found;
  }
  const int64_t id = r.run.run_id;

  std::set<std::string> names(r.run.info.policies.begin(), r.run.info.policies.end());
  for (const char* sql : {"SELECT DISTINCT policy FROM task_results WHERE run_id = ?1",
                          "SELECT DISTINCT policy FROM work_items WHERE run_id = ?1"}) {
    auto st = db.prepare(sql);
    st.bind_int(1, id);
    while (st.step()) names.insert(st.text(0));
  }
  std::vector<std::string> order(names.begin(), names.end());
  std::stable_sort(order.begin(), order.end(),
                   [](const std::string& a, const std::string& b) { return row_order(a) < row_order(b); });
  for (const auto& p : order) r.policies.push_back(metrics_for(db, id, p));

  const policy_metrics* full = nullptr;
  for (const auto& m : r.policies)
    if (m.policy == "full") full = &m;
  for (auto& m : r.policies) {
    if (full && full->success_rate > 0) m.retained_vs_full = m.success_rate / full->success_rate;
    if (full && full->peak_kv_logical_median > 0)
      m.peak_kv_median_vs_full = m.peak_kv_logical_median / full->peak_kv_logical_median;
    if (full && m.policy != "oracle") {
      const bootstrap_ci rc = bootstrap_retained(m.outcomes, full->outcomes);
      const bootstrap_ci mc = bootstrap_memory_ratio(m.outcomes, full->outcomes);
      m.retained_ci_low = rc.low, m.retained_ci_high = rc.high;
      m.memory_ratio_ci_low = mc.low, m.memory_ratio_ci_high = mc.high;
    }
  }

  {
    auto st = db.prepare("SELECT COUNT(*) FROM work_items WHERE run_id = ?1");
    st.bind_int(1, id);
    r.planned = st.step() ? st.int64(0) : 0;
  }
  r.not_done = int64_t(missing_items(db, id).size());

  if (pick_trace_item(db, id, opt.trace_task, r.trace_task, r.trace_seed)) {
    for (const auto& m : r.policies) {
      auto samples = reader.trace(id, {r.trace_task, m.policy, r.trace_seed});
      if (!samples.empty()) r.traces.push_back({m.policy, std::move(samples)});
    }
  } else if (!opt.trace_task.empty()) {
    throw results_error("run " + r.run.info.name + " in " + path + " has no kv_trace rows for task " + opt.trace_task);
  }
  return r;
}

std::vector<std::vector<std::string>> report_table(const run_report& r) {
  std::vector<std::vector<std::string>> t;
  t.push_back({"policy", "tasks x seeds", "items", "done", "errors", "success", "95% CI", "tmpl mean", "retained",
               "KV peak med", "KV peak max", "KV med/full", "alloc KV med", "host KV med", "process med",
               "step ms med", "mean steps"});
  for (const auto& m : r.policies) {
    const bool oracle = m.policy == "oracle";  // no model, so no memory to report
    auto mem = [&](double bytes) {
      if (!oracle && std::isnan(bytes) && m.memory_not_reported) return std::string(k_not_reported);
      return oracle ? std::string("-") : format_bytes(bytes);
    };
    std::string success = m.items ? fmt("%.1f%%", 100 * m.success_rate) + " (" + std::to_string(m.successes) + "/" +
                                        std::to_string(m.items) + ")"
                                  : "n/a";
    // A ratio with its bootstrap interval: "33.3% (8.0-100.0)", "0.22x (0.18-0.25)".
    auto with_ci = [](const std::string& point, double lo, double hi, double scale, const char* f) {
      if (std::isnan(lo)) return point;
      return point + " (" + fmt(f, scale * lo) + "-" + fmt(f, scale * hi) + ")";
    };
    t.push_back({oracle ? "oracle (upper bound)" : m.policy,
                 std::to_string(m.n_tasks) + " x " + std::to_string(m.n_seeds),
                 std::to_string(m.planned ? m.planned : m.items),
                 std::to_string(m.done),
                 std::to_string(m.errors + m.timeouts),
                 success,
                 m.items ? fmt("%.1f", 100 * m.success_ci_low) + "-" + fmt("%.1f%%", 100 * m.success_ci_high) : "n/a",
                 std::isnan(m.template_mean) ? "-" : fmt("%.1f%%", 100 * m.template_mean),
                 with_ci(fmt("%.1f%%", 100 * m.retained_vs_full), m.retained_ci_low, m.retained_ci_high, 100, "%.1f"),
                 mem(m.peak_kv_logical_median),
                 mem(m.peak_kv_logical_max),
                 oracle ? "-"
                        : with_ci(fmt("%.2fx", m.peak_kv_median_vs_full), m.memory_ratio_ci_low,
                                  m.memory_ratio_ci_high, 1, "%.2f"),
                 mem(m.peak_kv_bytes_median),
                 oracle || !(m.peak_kv_host_bytes_median > 0) ? "-" : format_bytes(m.peak_kv_host_bytes_median),
                 mem(m.peak_process_bytes_median),
                 fmt("%.1f", m.step_ms_median),
                 fmt("%.1f", m.mean_steps)});
  }
  return t;
}

bool any_memory_not_reported(const run_report& r) {
  for (const policy_metrics& m : r.policies)
    if (m.memory_not_reported) return true;
  return false;
}

std::string report_text(const run_report& r) {
  const auto& i = r.run.info;
  std::string o = "run " + i.name + " (" + r.file + ")\n";
  o += "  model " + i.model + ", suite " + i.suite + ", seeds ";
  std::vector<std::string> seeds;
  for (auto s : i.seeds) seeds.push_back(std::to_string(s));
  o += join(seeds);
  o += ", created " + r.run.created_at + (i.version.empty() ? "" : ", kvarena " + i.version) + "\n";
  if (r.runs_in_file > 1)
    o += "  (the file holds " + std::to_string(r.runs_in_file) + " runs; choose one with --run NAME)\n";
  if (r.planned == 0)
    o += "  no work-item plan stored: completeness unknown\n";
  else if (r.not_done == 0)
    o += "  complete: all " + std::to_string(r.planned) + " planned items done\n";
  else
    o += "  INCOMPLETE: " + std::to_string(r.not_done) + " of " + std::to_string(r.planned) +
         " planned items not done (`kvarena merge` lists them)\n";
  o += "\n";

  o += text_table(report_table(r));
  o += "\nerrors = error + timeout rows; success = successes / task rows (errors count as failures);\n"
       "95% CI = Wilson score interval; tmpl mean = unweighted mean of per-template success rates;\n"
       "retained = success / full's success (in brackets: 95% percentile bootstrap over tasks);\n"
       "KV peak = peak_kv_logical_bytes (live tokens at their precision + policy state) of items that ran\n"
       "to an end; KV med/full = median / full's median (bootstrap 95%); alloc KV = peak_kv_bytes\n"
       "(allocated on the device); host KV = FreeKV's offloaded copy; process = peak_process_bytes\n"
       "(resident high-water); "
       "step ms = median steps.latency_ms; oracle = the scripted agent (upper bound).\n";
  if (any_memory_not_reported(r)) o += std::string(k_not_reported) + " = " + k_not_reported_note + "\n";
  return o;
}

json per_template_json(const std::vector<std::pair<int64_t, double>>& v) {
  json j = json::object();
  for (const auto& [t, rate] : v) j[std::to_string(t)] = rate;
  return j;
}

std::string report_json(const run_report& r, const std::string& benchmarks_json) {
  json pols = json::array();
  for (const auto& m : r.policies)
    pols.push_back({{"policy", m.policy},
                    {"planned_items", m.planned},
                    {"items", m.items},
                    {"done", m.done},
                    {"errors", m.errors},
                    {"timeouts", m.timeouts},
                    {"successes", m.successes},
                    {"success_rate", num_or_null(m.success_rate)},
                    {"success_ci95", {num_or_null(m.success_ci_low), num_or_null(m.success_ci_high)}},
                    {"tasks", m.n_tasks},
                    {"seeds", m.n_seeds},
                    {"template_mean_success", num_or_null(m.template_mean)},
                    {"per_template_success", per_template_json(m.per_template)},
                    {"success_retained_vs_full", num_or_null(m.retained_vs_full)},
                    {"success_retained_ci95", {num_or_null(m.retained_ci_low), num_or_null(m.retained_ci_high)}},
                    {"peak_kv_median_vs_full_ci95",
                     {num_or_null(m.memory_ratio_ci_low), num_or_null(m.memory_ratio_ci_high)}},
                    {"peak_kv_logical_bytes_median", num_or_null(m.peak_kv_logical_median)},
                    {"peak_kv_logical_bytes_max", num_or_null(m.peak_kv_logical_max)},
                    {"peak_process_bytes_median", num_or_null(m.peak_process_bytes_median)},
                    {"peak_kv_bytes_median", num_or_null(m.peak_kv_bytes_median)},
                    {"peak_kv_bytes_max", num_or_null(m.peak_kv_bytes_max)},
                    {"memory_not_reported", m.memory_not_reported},
                    {"peak_kv_median_vs_full", num_or_null(m.peak_kv_median_vs_full)},
                    {"peak_kv_host_bytes_median", num_or_null(m.peak_kv_host_bytes_median)},
                    {"step_ms_median", num_or_null(m.step_ms_median)},
                    {"mean_steps", num_or_null(m.mean_steps)}});
  const auto& i = r.run.info;
  json config = json::parse(i.config_json, nullptr, false);
  json j = {{"file", r.file},
            {"run",
             {{"name", i.name},
              {"created_at", r.run.created_at},
              {"model", i.model},
              {"suite", i.suite},
              {"policies", i.policies},
              {"seeds", i.seeds},
              {"version", i.version},
              {"config", config.is_discarded() ? json(i.config_json) : config}}},
            {"planned_items", r.planned},
            {"not_done_items", r.not_done},
            {"complete", r.planned > 0 ? json(r.not_done == 0) : json(nullptr)},  // null: no plan stored
            {"policies", pols}};
  if (!benchmarks_json.empty()) j["benchmarks"] = json::parse(benchmarks_json);
  return j.dump(2);
}

}  // namespace kvarena::results
