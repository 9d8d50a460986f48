// runner-record.h: what the runner writes for a work item: an agent episode, an oracle
// episode or a failure turned into the results file's rows (results-db.h task_result,
// step_row, kv_sample). Plain mappings, no I/O.
//
//   episode status "done" | "timeout" | "error" -> item_status; anything else is an error
//   row (a bug in the loop, recorded rather than lost). error column: the episode's error
//   (error), the end reason (timeout), "" (done).
//   steps: index, action (canonical text, "none" for an unparsable reply), action_error
//   (the parse error or the env's complaint), kv_tokens, kv_bytes, confidence, budget,
//   latency_ms (model time), prompt_tokens, generated_tokens.
//   kv trace: token_index, kv_bytes, budget, confidence (the writer downsamples).
//   oracle: solved -> done/success 1; evaluated below 1 -> done/success 0; anything that
//   stopped it before evaluation (env unreachable, a plan step failing) -> error. Its steps:
//   each action it sent (scrolls included) with the observation it was chosen on.
#pragma once
#include <string>
#include <vector>

#include "episode-result.h"
#include "oracle-agent.h"
#include "results-db.h"

namespace kvarena {

// One item's rows, ready for results_writer::write_item.
struct item_rows {
  results::task_result result;
  std::vector<results::step_row> steps;
  std::vector<results::kv_sample> trace;
};

item_rows rows_from_episode(const results::work_item& item, const episode_result& r);
// steps: the oracle's actions in order (observation and action set; no model columns).
item_rows rows_from_oracle(const results::work_item& item, const tasks::oracle_task_result& r,
                           std::vector<results::step_row> steps = {});
// An error row for an item that threw instead of returning (defensive) or could not start.
item_rows error_rows(const results::work_item& item, const std::string& message, double wall_ms);

}  // namespace kvarena
