// runner-record.cpp: see runner-record.h.
#include "runner-record.h"

#include <cstdio>

namespace kvarena {

namespace {

int64_t i64(size_t v) { return static_cast<int64_t>(v); }

// The evaluators' verdicts, one line each ("string_match 1: ..."), then the notes.
std::string eval_detail_text(const eval_result& e, bool evaluated) {
  if (!evaluated) return "";
  std::string s;
  char score[32];
  for (const evaluator_result& v : e.evaluators) {
    std::snprintf(score, sizeof score, "%g", v.score);
    s += v.type + " " + score + (v.detail.empty() ? "" : ": " + v.detail) + "\n";
  }
  if (!e.judge.empty()) s += "judge: " + e.judge + "\n";
  for (const std::string& n : e.notes) s += "note: " + n + "\n";
  return s;
}

}  // namespace

item_rows rows_from_episode(const results::work_item& item, const episode_result& r) {
  item_rows out;
  results::task_result& t = out.result;
  t.item = item;
  if (r.status == "done") {
    t.status = results::item_status::done;
  } else if (r.status == "timeout") {
    t.status = results::item_status::timeout;
    t.error = r.end_reason.empty() ? "timeout" : r.end_reason;
  } else {
    t.status = results::item_status::error;
    t.error = r.status == "error" ? r.error : "episode ended with unknown status '" + r.status + "': " + r.error;
    if (t.error.empty()) t.error = "error (no message)";
  }
  t.success = r.success;
  t.score = r.score;
  t.steps = r.steps;
  t.answer = r.answer;
  t.final_url = r.final_url;
  const reported_figures& known = r.reported;  // what an endpoint did not report is NULL
  t.prompt_tokens = known.tokens ? r.prompt_tokens : -1;
  t.generated_tokens = known.tokens ? r.generated_tokens : -1;
  t.peak_kv_bytes = known.kv_bytes ? i64(r.peak_kv_bytes) : -1;
  t.peak_kv_host_bytes = known.host_device ? i64(r.peak_kv_host_bytes) : -1;
  t.peak_device_bytes = known.host_device ? i64(r.peak_device_bytes) : -1;
  t.peak_kv_logical_bytes = known.kv_logical ? i64(r.peak_kv_logical_bytes) : -1;
  t.peak_process_bytes = known.process ? i64(r.peak_process_bytes) : -1;
  t.model_calls = r.model_calls;
  t.model_retries = r.model_retries;
  t.eval_detail = eval_detail_text(r.evaluation, r.status == "done" || r.status == "timeout");
  t.wall_ms = r.wall_ms;
  t.prefill_ms = r.prefill_ms;
  t.decode_ms = r.decode_ms;

  out.steps.reserve(r.step_records.size());
  for (const step_record& s : r.step_records) {
    results::step_row row;
    row.step = s.index;
    row.action = s.action;
    row.action_error = s.action_error.value_or("");
    const reported_figures& known = s.reported;
    row.kv_tokens = known.kv_tokens ? s.kv_tokens : -1;
    row.kv_bytes = known.kv_bytes ? i64(s.kv_bytes) : -1;
    row.confidence = s.confidence;
    row.budget = s.budget;
    row.latency_ms = s.latency_ms;
    row.prompt_tokens = known.tokens ? s.prompt_tokens : -1;
    row.generated_tokens = known.tokens ? s.generated_tokens : -1;
    row.kv_logical_bytes = known.kv_logical ? i64(s.kv_logical_bytes) : -1;
    row.process_bytes = known.process ? i64(s.process_bytes) : -1;
    row.model_retries = s.model_retries;
    row.model_retry_log = s.model_retry_log;
    row.observation = s.observation;
    row.output = s.output;
    row.screenshot_png = s.screenshot_png;
    out.steps.push_back(std::move(row));
  }
  out.trace.reserve(r.kv_trace.size());
  for (const kv_trace_point& p : r.kv_trace) out.trace.push_back({p.token_index, i64(p.kv_bytes), p.budget, p.confidence, i64(p.kv_logical_bytes)});
  return out;
}

item_rows rows_from_oracle(const results::work_item& item, const tasks::oracle_task_result& r,
                           std::vector<results::step_row> steps) {
  item_rows out;
  out.steps = std::move(steps);
  results::task_result& t = out.result;
  t.item = item;
  t.success = r.solved;
  t.score = r.score;
  t.steps = r.steps;
  t.wall_ms = r.wall_ms;
  // run_oracle_task says "evaluation: ..." when it ran to the end and scored below 1.
  const bool evaluated = r.solved || r.reason.rfind("evaluation:", 0) == 0;
  t.status = evaluated ? results::item_status::done : results::item_status::error;
  if (!evaluated) t.error = r.reason.empty() ? "oracle failed (no reason given)" : r.reason;
  return out;
}

item_rows error_rows(const results::work_item& item, const std::string& message, double wall_ms) {
  item_rows out;
  out.result.item = item;
  out.result.status = results::item_status::error;
  out.result.error = message.empty() ? "error (no message)" : message;
  out.result.wall_ms = wall_ms;
  return out;
}

}  // namespace kvarena
