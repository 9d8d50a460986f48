// results-db.h: what a run writes to and reads from its results file. A work item is one
// (task, policy, seed) of a run; its outcome is one task_results row, its steps rows and
// its sampled kv_trace rows, written in one transaction (a killed process leaves an item
// whole or absent, never half).
//
// How the runner uses it (one writer per file; one file per shard):
//   results_writer w(out_path, {.created_by = "kvarena 0.1.0"});
//   int64_t run = w.begin_run(info, resume);        // resume: the run of that name, if any
//   w.add_work_items(run, every_item_of_every_shard);  // the plan; merge lists what is missing
//   auto skip = w.done_items(run);                  // resume skips these
//   for each item of this shard not in skip: ... w.write_item(run, result, steps, trace);
// Resume policy: only status "done" items are skipped; "error" and "timeout" items run
// again and their rows are replaced.
// Not here: merge of shard files (results-merge.h), the report (results-report.h).
#pragma once
#include <compare>
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sqlite-util.h"

namespace kvarena::results {

// The unit of work, resume and merge.
struct work_item {
  std::string task_id;
  std::string policy;  // the run's label for the policy: "full", "confkv", ..., "oracle"
  int64_t seed = 0;
  auto operator<=>(const work_item&) const = default;
};

// A work item of the run's plan and the shard it was assigned to (item k of the sorted
// list goes to shard k mod N; specs/cluster.md).
struct planned_item {
  work_item item;
  int64_t shard = 0;
};

enum class item_status {
  done,     // the agent finished (stop action, answer, or step limit); success says how it went
  error,    // the item could not be run to an end (engine or env failure): retried on resume
  timeout,  // the item ran past its wall-clock limit: retried on resume
};
const char* to_string(item_status s);
// "done" | "error" | "timeout"; throws results_error otherwise.
item_status parse_item_status(std::string_view s);

// A run: one suite x policies x seeds evaluation. `name` is unique in a file and is how
// --resume and merge find a run; the other fields are its identity (resume and merge
// refuse a run of the same name that differs in any of them), except `version`.
struct run_info {
  std::string name;
  std::string model;                  // model file or name
  std::string suite;                  // task suite folder
  std::vector<std::string> policies;  // policy labels, as in work items
  std::vector<int64_t> seeds;
  std::string version;                // kvarena version / git describe of the writer
  std::string config_json = "{}";     // the whole run configuration as a JSON object
};

// "" when a and b are the same run (same name, model, suite, policies, seeds and config,
// JSON compared by value); else what differs, e.g. "model a.gguf vs b.gguf".
std::string run_identity_difference(const run_info& a, const run_info& b);

// A runs row as read back.
struct run_row {
  int64_t run_id = 0;
  std::string created_at;  // UTC, ISO 8601
  run_info info;
};

// One task_results row. Bytes, milliseconds and tokens as the names say. A token or
// memory figure < 0 is not known (NULL): an agent endpoint (run --agent-url) that does not
// report it.
struct task_result {
  work_item item;
  item_status status = item_status::done;
  bool success = false;
  double score = 0;               // the evaluators' score in [0, 1]
  int64_t steps = 0;              // agent steps taken
  std::string answer;             // the agent's final answer ("" when none)
  std::string final_url;          // the page the agent ended on
  int64_t prompt_tokens = 0;      // tokens prefilled over the whole item
  int64_t generated_tokens = 0;   // tokens decoded over the whole item
  int64_t peak_kv_bytes = 0;      // most KV cache bytes on the device at any time
  int64_t peak_kv_host_bytes = 0; // most KV bytes in host memory (FreeKV's offloaded copy; else 0)
  int64_t peak_device_bytes = 0;  // most device bytes in all: weights + KV + scratch
  // Most logical KV bytes after any forward call (live tokens at their precision + the
  // policy's state: engine/kv/kv-logical-bytes.h), independent of allocation history.
  int64_t peak_kv_logical_bytes = 0;
  // The process's resident high-water mark during the item (VmHWM, reset per item where the
  // kernel allows; with several workers in one process it covers all of them), plus the
  // device's allocated high-water on CUDA.
  int64_t peak_process_bytes = 0;
  int64_t template_id = -1;       // the task's intent_template_id (per-template means); < 0: none (NULL)
  std::string eval_detail;        // the evaluators' verdicts and notes, one per line ("" when not evaluated)
  double wall_ms = 0;             // the item end to end
  double prefill_ms = 0;          // of which prompt prefill
  double decode_ms = 0;           // of which token decode
  std::string error;              // why, for error and timeout ("" for done)
  std::string finished_at;        // UTC, ISO 8601; filled by the writer (read back only)
  int64_t model_calls = -1;       // requests to the agent endpoint, retries included; < 0: no endpoint (NULL)
  int64_t model_retries = -1;     // of which retries; < 0: no endpoint (NULL)
};

// One agent step of an item (a steps row); token and memory figures < 0: not known (NULL).
struct step_row {
  int64_t step = 0;               // 0-based, unique within the item
  std::string action;             // the action text the agent emitted
  std::string action_error;       // the env's error for it ("" for none; stored NULL)
  int64_t kv_tokens = 0;          // tokens in the KV cache after the step (per layer and KV head, max)
  int64_t kv_bytes = 0;           // KV bytes on the device after the step
  double confidence = -1;         // the step's confidence in [0, 1]; < 0: not computed (NULL)
  int64_t budget = -1;            // tokens the policy allowed this step; < 0: unbounded (NULL)
  double latency_ms = 0;          // model time of the step: prefill of the new tokens + decode
  int64_t prompt_tokens = 0;      // new tokens prefilled this step
  int64_t generated_tokens = 0;   // tokens decoded this step
  int64_t kv_logical_bytes = 0;   // logical KV bytes after the step
  int64_t process_bytes = 0;      // the process's resident bytes after the step's model call
  std::string observation;        // the observation text the model was shown
  std::string output;             // the model's reply
  // The Set-of-Marks screenshot shown with the observation (PNG bytes; "" when none):
  // written as a file beside the results file with a step_screenshots row
  // (step-screenshots.h), never into the steps table.
  std::string screenshot_png;
  std::string screenshot_path;    // read back: that file, relative to the results file's folder ("" when none)
  int64_t model_retries = -1;     // the agent endpoint's failed tries before its answer; < 0: no endpoint (NULL)
  std::string model_retry_log;    // what they were ("HTTP 429 (waited 1000 ms)"); "" none (NULL)
};

// One sample of an item's KV size over its tokens (a kv_trace row), e.g. one per forward
// call; the drops after evictions make CONF-KV's sawtooth.
struct kv_sample {
  int64_t token_index = 0;  // tokens seen so far in the sequence
  int64_t kv_bytes = 0;     // KV bytes on the device then
  int64_t budget = -1;      // tokens the policy allowed; < 0: unbounded (NULL)
  double confidence = -1;   // < 0: not computed (NULL)
  int64_t kv_logical_bytes = 0;  // logical KV bytes then
};

// At most `max_points` samples that keep the shape: the first and the last, and per bucket
// of consecutive samples its lowest and highest kv_bytes in their order. Input returned
// as is when it is short enough or max_points < 4.
std::vector<kv_sample> downsample_trace(const std::vector<kv_sample>& samples, size_t max_points);

struct writer_options {
  int busy_timeout_ms = 60000;      // wait this long for a reader's lock before failing
  std::string created_by = "kvarena";  // meta.created_by of a new file
  size_t max_trace_samples = 4096;  // write_item downsamples longer traces to this (0: keep all)
};

// The one writer of a results file. Methods are safe to call from several threads (they
// are serialised); one process should hold one writer per file.
class results_writer {
 public:
  // Opens `path`, creating the file and its tables when absent. Throws results_error for a
  // foreign file or another schema version.
  explicit results_writer(const std::string& path, const writer_options& opt = {});

  // A new run; or, with resume, the existing run of that name (a new one when none).
  // Throws when the name exists and !resume, and when resume finds a run of that name
  // with another identity (model, suite, policies, seeds, config).
  int64_t begin_run(const run_info& info, bool resume);
  // The run of that name, if any.
  std::optional<int64_t> find_run(const std::string& name);

  // Records the run's plan (INSERT OR IGNORE: calling it again on resume is harmless).
  void add_work_items(int64_t run_id, const std::vector<planned_item>& items);
  // Items of the run whose row has status done: the ones resume skips.
  std::set<work_item> done_items(int64_t run_id);

  // The item's task row, steps and trace in one transaction, replacing any earlier row of
  // the item (an error row being retried) with its steps and trace. A done row is never
  // replaced by an error or timeout row (two runners overlapping on one item): then nothing
  // is written and false is returned. Throws results_error (and writes nothing) for a bad
  // row, e.g. two steps with one step number.
  bool write_item(int64_t run_id, const task_result& result, const std::vector<step_row>& steps,
                  const std::vector<kv_sample>& trace);

  const std::string& path() const { return db_.path(); }

 private:
  std::mutex mu_;
  writer_options opt_;
  sql_db db_;
};

// Reading a results file (report, merge, tests; plain sqlite3 works as well).
class results_reader {
 public:
  // Throws results_error when the file is missing, foreign or of another schema version.
  explicit results_reader(const std::string& path);

  std::vector<run_row> runs();  // by run_id
  std::optional<run_row> find_run(const std::string& name);
  std::vector<planned_item> work_items(int64_t run_id);     // sorted by item
  std::vector<task_result> task_results(int64_t run_id);    // sorted by item
  std::vector<step_row> steps(int64_t run_id, const work_item& item);   // by step
  std::vector<kv_sample> trace(int64_t run_id, const work_item& item);  // by sample

  sql_db& db() { return db_; }

 private:
  sql_db db_;
};

// The run of that name in an open results file, if any.
std::optional<run_row> find_run(sql_db& db, const std::string& name);

// A planned item without a done row, and what its row says ("absent", "error", "timeout").
struct missing_item {
  planned_item planned;
  std::string state;
};
// The run's planned items that are not done, sorted by item. Empty when the run stored
// no plan (nothing is known to be missing then).
std::vector<missing_item> missing_items(sql_db& db, int64_t run_id);

}  // namespace kvarena::results
