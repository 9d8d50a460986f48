// results-db.cpp: the writer and reader of results-db.h.
#include "results-db.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "results-schema.h"
#include "step-screenshots.h"

namespace kvarena::results {

using json = nlohmann::json;

const char* to_string(item_status s) {
  switch (s) {
    case item_status::done: return "done";
    case item_status::error: return "error";
    case item_status::timeout: return "timeout";
  }
  return "?";
}

item_status parse_item_status(std::string_view s) {
  if (s == "done") return item_status::done;
  if (s == "error") return item_status::error;
  if (s == "timeout") return item_status::timeout;
  throw results_error("unknown item status \"" + std::string(s) + "\" (expected done, error or timeout)");
}

namespace {

// The config as canonical JSON text (keys sorted, no spaces), so equal configs compare equal.
std::string canonical_config(const std::string& text) {
  json j = json::parse(text.empty() ? "{}" : text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw results_error("run config is not a JSON object: " + text.substr(0, 120));
  return j.dump();
}

std::string join_strings(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) {
    if (!s.empty()) s += ',';
    s += x;
  }
  return s;
}

std::string join_ints(const std::vector<int64_t>& v) {
  std::string s;
  for (auto x : v) {
    if (!s.empty()) s += ',';
    s += std::to_string(x);
  }
  return s;
}

// Binds (task_id, policy, seed) at first..first+2.
void bind_item(sql_stmt& st, int first, const work_item& it) {
  st.bind_text(first, it.task_id).bind_text(first + 1, it.policy).bind_int(first + 2, it.seed);
}

const char* const run_select =
    "SELECT run_id, name, created_at, model, suite, policies, seeds, version, config FROM runs ";

// The row a prepared run_select statement is on.
run_row run_from(sql_db& db, sql_stmt& st) {
  run_row r;
  r.run_id = st.int64(0);
  r.info.name = st.text(1);
  r.created_at = st.text(2);
  r.info.model = st.text(3);
  r.info.suite = st.text(4);
  json pol = json::parse(st.text(5), nullptr, false), seeds = json::parse(st.text(6), nullptr, false);
  if (!pol.is_array() || !seeds.is_array())
    throw results_error("results file " + db.path() + ": run " + r.info.name + " has malformed policies/seeds JSON");
  for (const auto& p : pol) r.info.policies.push_back(p.get<std::string>());
  for (const auto& s : seeds) r.info.seeds.push_back(s.get<int64_t>());
  r.info.version = st.text(7);
  r.info.config_json = st.text(8);
  return r;
}

const char* const item_where = "run_id = ?1 AND task_id = ?2 AND policy = ?3 AND seed = ?4";

void bind_optional(sql_stmt& st, int i, bool present, double v) {
  if (present) st.bind_real(i, v);
  else st.bind_null(i);
}

void bind_optional_int(sql_stmt& st, int i, bool present, int64_t v) {
  if (present) st.bind_int(i, v);
  else st.bind_null(i);
}

// A figure that may be unknown: < 0 is stored NULL and read back as -1.
void bind_known(sql_stmt& st, int i, int64_t v) { bind_optional_int(st, i, v >= 0, v); }
int64_t known(const sql_stmt& st, int i) { return st.is_null(i) ? -1 : st.int64(i); }

}  // namespace

std::string run_identity_difference(const run_info& a, const run_info& b) {
  if (a.name != b.name) return "name " + a.name + " vs " + b.name;
  if (a.model != b.model) return "model " + a.model + " vs " + b.model;
  if (a.suite != b.suite) return "suite " + a.suite + " vs " + b.suite;
  if (a.policies != b.policies) return "policies " + join_strings(a.policies) + " vs " + join_strings(b.policies);
  if (a.seeds != b.seeds) return "seeds " + join_ints(a.seeds) + " vs " + join_ints(b.seeds);
  std::string ca = canonical_config(a.config_json), cb = canonical_config(b.config_json);
  if (ca != cb) return "config " + ca.substr(0, 200) + " vs " + cb.substr(0, 200);
  return "";
}

std::vector<kv_sample> downsample_trace(const std::vector<kv_sample>& samples, size_t max_points) {
  if (samples.size() <= max_points || max_points < 4) return samples;
  // Interior samples fall into buckets; each bucket keeps its min and its max (2 points).
  const size_t interior = samples.size() - 2, buckets = (max_points - 2) / 2;
  std::vector<kv_sample> out;
  out.reserve(max_points);
  out.push_back(samples.front());
  for (size_t b = 0; b < buckets; ++b) {
    size_t lo = 1 + interior * b / buckets, hi = 1 + interior * (b + 1) / buckets;  // [lo, hi)
    if (lo >= hi) continue;
    size_t mn = lo, mx = lo;
    for (size_t i = lo; i < hi; ++i) {
      if (samples[i].kv_bytes < samples[mn].kv_bytes) mn = i;
      if (samples[i].kv_bytes > samples[mx].kv_bytes) mx = i;
    }
    out.push_back(samples[std::min(mn, mx)]);
    if (mn != mx) out.push_back(samples[std::max(mn, mx)]);
  }
  out.push_back(samples.back());
  return out;
}

// ---- writer ----

results_writer::results_writer(const std::string& path, const writer_options& opt)
    : opt_(opt), db_(open_results_file(path, open_mode::write, opt.busy_timeout_ms, opt.created_by)) {}

std::optional<int64_t> results_writer::find_run(const std::string& name) {
  std::lock_guard lock(mu_);
  auto r = results::find_run(db_, name);
  return r ? std::optional<int64_t>(r->run_id) : std::nullopt;
}

int64_t results_writer::begin_run(const run_info& info, bool resume) {
  if (info.name.empty()) throw results_error("a run needs a name");
  std::string config = canonical_config(info.config_json);
  std::lock_guard lock(mu_);
  sql_transaction tx(db_);
  if (auto old = results::find_run(db_, info.name)) {
    if (!resume)
      throw results_error("run " + info.name + " already exists in " + path() +
                          "; pass --resume to continue it, or choose another run name");
    if (auto diff = run_identity_difference(old->info, info); !diff.empty())
      throw results_error("cannot resume run " + info.name + " in " + path() + ": it was started with another " +
                          diff + "; choose another run name");
    tx.commit();
    return old->run_id;
  }
  auto st = db_.prepare(
      "INSERT INTO runs (name, created_at, model, suite, policies, seeds, version, config) "
      "VALUES (?1, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), ?2, ?3, ?4, ?5, ?6, ?7)");
  st.bind_text(1, info.name).bind_text(2, info.model).bind_text(3, info.suite);
  st.bind_text(4, json(info.policies).dump()).bind_text(5, json(info.seeds).dump());
  st.bind_text(6, info.version).bind_text(7, config);
  st.step();
  int64_t id = db_.last_insert_rowid();
  tx.commit();
  return id;
}

void results_writer::add_work_items(int64_t run_id, const std::vector<planned_item>& items) {
  std::lock_guard lock(mu_);
  sql_transaction tx(db_);
  auto st = db_.prepare(
      "INSERT OR IGNORE INTO work_items (run_id, task_id, policy, seed, shard) VALUES (?1, ?2, ?3, ?4, ?5)");
  for (const auto& p : items) {
    st.bind_int(1, run_id);
    bind_item(st, 2, p.item);
    st.bind_int(5, p.shard);
    st.step();
    st.reset();
  }
  tx.commit();
}

std::set<work_item> results_writer::done_items(int64_t run_id) {
  std::lock_guard lock(mu_);
  std::set<work_item> out;
  auto st = db_.prepare("SELECT task_id, policy, seed FROM task_results WHERE run_id = ?1 AND status = 'done'");
  st.bind_int(1, run_id);
  while (st.step()) out.insert({st.text(0), st.text(1), st.int64(2)});
  return out;
}

bool results_writer::write_item(int64_t run_id, const task_result& r, const std::vector<step_row>& steps,
                                const std::vector<kv_sample>& trace) {
  std::lock_guard lock(mu_);
  sql_transaction tx(db_);
  {
    auto st = db_.prepare("SELECT 1 FROM runs WHERE run_id = ?1");
    st.bind_int(1, run_id);
    if (!st.step()) throw results_error("write_item: no run " + std::to_string(run_id) + " in " + path());
  }
  if (r.status != item_status::done) {  // a done row stays: an error never replaces it
    auto st = db_.prepare(std::string("SELECT 1 FROM task_results WHERE ") + item_where + " AND status = 'done'");
    st.bind_int(1, run_id);
    bind_item(st, 2, r.item);
    if (st.step()) return false;
  }
  for (const char* table : {"task_results", "steps", "kv_trace", "step_screenshots"}) {
    auto st = db_.prepare(std::string("DELETE FROM ") + table + " WHERE " + item_where);
    st.bind_int(1, run_id);
    bind_item(st, 2, r.item);
    st.step();
  }
  {
    auto st = db_.prepare(std::string("INSERT INTO task_results (run_id, ") + task_result_columns +
                          ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
                          "?18, ?19, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), ?20, ?21, ?22, ?23, ?24, ?25)");
    st.bind_int(1, run_id);
    bind_item(st, 2, r.item);
    st.bind_text(5, to_string(r.status)).bind_int(6, r.success ? 1 : 0).bind_real(7, r.score).bind_int(8, r.steps);
    st.bind_text(9, r.answer).bind_text(10, r.final_url);
    bind_known(st, 11, r.prompt_tokens);
    bind_known(st, 12, r.generated_tokens);
    bind_known(st, 13, r.peak_kv_bytes);
    bind_known(st, 14, r.peak_kv_host_bytes);
    bind_known(st, 15, r.peak_device_bytes);
    st.bind_real(16, r.wall_ms).bind_real(17, r.prefill_ms).bind_real(18, r.decode_ms);
    if (r.error.empty()) st.bind_null(19);
    else st.bind_text(19, r.error);
    bind_known(st, 20, r.peak_kv_logical_bytes);
    bind_known(st, 21, r.peak_process_bytes);
    bind_optional_int(st, 22, r.template_id >= 0, r.template_id);
    st.bind_text(23, r.eval_detail);
    bind_known(st, 24, r.model_calls);
    bind_known(st, 25, r.model_retries);
    st.step();
  }
  {
    auto st = db_.prepare(std::string("INSERT INTO steps (run_id, ") + step_columns +
                          ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
                          "?19, ?20)");
    for (const auto& s : steps) {
      st.bind_int(1, run_id);
      bind_item(st, 2, r.item);
      st.bind_int(5, s.step).bind_text(6, s.action);
      if (s.action_error.empty()) st.bind_null(7);
      else st.bind_text(7, s.action_error);
      bind_known(st, 8, s.kv_tokens);
      bind_known(st, 9, s.kv_bytes);
      bind_optional(st, 10, s.confidence >= 0, s.confidence);
      bind_optional_int(st, 11, s.budget >= 0, s.budget);
      st.bind_real(12, s.latency_ms);
      bind_known(st, 13, s.prompt_tokens);
      bind_known(st, 14, s.generated_tokens);
      bind_known(st, 15, s.kv_logical_bytes);
      bind_known(st, 16, s.process_bytes);
      st.bind_text(17, s.observation).bind_text(18, s.output);
      bind_known(st, 19, s.model_retries);
      if (s.model_retry_log.empty()) st.bind_null(20);
      else st.bind_text(20, s.model_retry_log);
      st.step();
      st.reset();
    }
  }
  write_step_screenshots(db_, run_id, r.item, steps);
  {
    auto kept = downsample_trace(trace, opt_.max_trace_samples);
    auto st = db_.prepare(std::string("INSERT INTO kv_trace (run_id, ") + kv_trace_columns +
                          ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    for (size_t i = 0; i < kept.size(); ++i) {
      const auto& k = kept[i];
      st.bind_int(1, run_id);
      bind_item(st, 2, r.item);
      st.bind_int(5, int64_t(i)).bind_int(6, k.token_index).bind_int(7, k.kv_bytes);
      bind_optional_int(st, 8, k.budget >= 0, k.budget);
      bind_optional(st, 9, k.confidence >= 0, k.confidence);
      st.bind_int(10, k.kv_logical_bytes);
      st.step();
      st.reset();
    }
  }
  tx.commit();
  return true;
}

// ---- reader ----

results_reader::results_reader(const std::string& path) : db_(open_results_file(path, open_mode::read)) {}

std::vector<run_row> results_reader::runs() {
  std::vector<run_row> out;
  auto st = db_.prepare(std::string(run_select) + "ORDER BY run_id");
  while (st.step()) out.push_back(run_from(db_, st));
  return out;
}

std::optional<run_row> results_reader::find_run(const std::string& name) { return results::find_run(db_, name); }

std::vector<planned_item> results_reader::work_items(int64_t run_id) {
  std::vector<planned_item> out;
  auto st = db_.prepare(
      "SELECT task_id, policy, seed, shard FROM work_items WHERE run_id = ?1 ORDER BY task_id, policy, seed");
  st.bind_int(1, run_id);
  while (st.step()) out.push_back({{st.text(0), st.text(1), st.int64(2)}, st.int64(3)});
  return out;
}

std::vector<task_result> results_reader::task_results(int64_t run_id) {
  std::vector<task_result> out;
  auto st = db_.prepare(std::string("SELECT ") + task_result_columns +
                        " FROM task_results WHERE run_id = ?1 ORDER BY task_id, policy, seed");
  st.bind_int(1, run_id);
  while (st.step()) {
    task_result r;
    r.item = {st.text(0), st.text(1), st.int64(2)};
    r.status = parse_item_status(st.text(3));
    r.success = st.int64(4) != 0;
    r.score = st.real(5);
    r.steps = st.int64(6);
    r.answer = st.text(7);
    r.final_url = st.text(8);
    r.prompt_tokens = known(st, 9);
    r.generated_tokens = known(st, 10);
    r.peak_kv_bytes = known(st, 11);
    r.peak_kv_host_bytes = known(st, 12);
    r.peak_device_bytes = known(st, 13);
    r.wall_ms = st.real(14);
    r.prefill_ms = st.real(15);
    r.decode_ms = st.real(16);
    r.error = st.text(17);
    r.finished_at = st.text(18);
    r.peak_kv_logical_bytes = known(st, 19);
    r.peak_process_bytes = known(st, 20);
    r.template_id = st.is_null(21) ? -1 : st.int64(21);
    r.eval_detail = st.text(22);
    r.model_calls = known(st, 23);
    r.model_retries = known(st, 24);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<step_row> results_reader::steps(int64_t run_id, const work_item& item) {
  std::vector<step_row> out;
  auto st = db_.prepare(std::string("SELECT ") + step_columns + " FROM steps WHERE " + item_where + " ORDER BY step");
  st.bind_int(1, run_id);
  bind_item(st, 2, item);
  while (st.step()) {
    step_row s;
    s.step = st.int64(3);
    s.action = st.text(4);
    s.action_error = st.text(5);
    s.kv_tokens = known(st, 6);
    s.kv_bytes = known(st, 7);
    s.confidence = st.is_null(8) ? -1 : st.real(8);
    s.budget = st.is_null(9) ? -1 : st.int64(9);
    s.latency_ms = st.real(10);
    s.prompt_tokens = known(st, 11);
    s.generated_tokens = known(st, 12);
    s.kv_logical_bytes = known(st, 13);
    s.process_bytes = known(st, 14);
    s.observation = st.text(15);
    s.output = st.text(16);
    s.model_retries = known(st, 17);
    s.model_retry_log = st.text(18);
    out.push_back(std::move(s));
  }
  read_step_screenshot_paths(db_, run_id, item, out);
  return out;
}

std::vector<kv_sample> results_reader::trace(int64_t run_id, const work_item& item) {
  std::vector<kv_sample> out;
  auto st = db_.prepare(std::string("SELECT ") + kv_trace_columns + " FROM kv_trace WHERE " + item_where +
                        " ORDER BY sample");
  st.bind_int(1, run_id);
  bind_item(st, 2, item);
  while (st.step())
    out.push_back({st.int64(4), st.int64(5), st.is_null(6) ? -1 : st.int64(6), st.is_null(7) ? -1 : st.real(7),
                   st.int64(8)});
  return out;
}

std::optional<run_row> find_run(sql_db& db, const std::string& name) {
  auto st = db.prepare(std::string(run_select) + "WHERE name = ?1");
  st.bind_text(1, name);
  return st.step() ? std::optional<run_row>(run_from(db, st)) : std::nullopt;
}

std::vector<missing_item> missing_items(sql_db& db, int64_t run_id) {
  std::vector<missing_item> out;
  auto st = db.prepare(
      "SELECT w.task_id, w.policy, w.seed, w.shard, COALESCE(t.status, 'absent') FROM work_items w "
      "LEFT JOIN task_results t ON t.run_id = w.run_id AND t.task_id = w.task_id AND t.policy = w.policy "
      "AND t.seed = w.seed WHERE w.run_id = ?1 AND (t.status IS NULL OR t.status <> 'done') "
      "ORDER BY w.task_id, w.policy, w.seed");
  st.bind_int(1, run_id);
  while (st.step()) out.push_back({{{st.text(0), st.text(1), st.int64(2)}, st.int64(3)}, st.text(4)});
  return out;
}

}  // namespace kvarena::results
