// results-merge.h: `kvarena merge OUT.sqlite shard-*.sqlite`: pools the shards' rows into
// one results file (ATTACH each shard read-only, so a runner still writing it goes on; copy
// the rows of items OUT does not hold yet, and the step screenshots of those rows only,
// whose paths must stay inside the folders) and says which planned work items are still
// missing, so they can be re-run.
// Runs are matched by name; a shard whose run of that name differs in identity (model,
// suite, policies, seeds, config) is refused. An item already in OUT is kept, except that a
// done row from a shard replaces an error/timeout row (with its steps and trace). OUT may
// already hold merged shards: merging again adds what is new.
// Not here: metrics (results-report.h); they are computed from the pooled rows.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "results-db.h"

namespace kvarena::results {

struct merge_run_state {
  std::string name;
  int64_t planned = 0;   // work items in the run's plan (0: the shards stored no plan)
  int64_t rows = 0;      // task rows in OUT
  int64_t done = 0;      // of which status done
  std::vector<missing_item> missing;  // planned items without a done row, sorted
};

struct merge_summary {
  std::string out;
  std::vector<std::string> inputs;
  int64_t items_added = 0;     // task rows copied into OUT
  int64_t items_replaced = 0;  // error/timeout rows of OUT replaced by a shard's done row
  int64_t items_kept = 0;      // shard rows not copied: OUT already had the item
  std::vector<merge_run_state> runs;  // every run in OUT, by run_id
  bool complete() const;       // every planned item of every run is done
};

// Merges `inputs` into `out` (created when absent). Throws results_error for an input that
// is missing, foreign, of another schema version, is `out` itself, or holds a run that
// conflicts with a run of that name in OUT or an earlier input (all checked before any
// copying); a failure while copying keeps the inputs merged before it.
merge_summary merge_results(const std::string& out, const std::vector<std::string>& inputs,
                            const std::string& created_by = "kvarena");

// The summary for people: per run planned/done counts, then COMPLETE or INCOMPLETE and
// the missing items ("task_id policy seed shard state" lines), at most `max_listed`.
std::string format_merge_summary(const merge_summary& s, size_t max_listed = 1000);

// Per-run state of a results file, as merge reports it (used by merge and the report).
std::vector<merge_run_state> run_states(sql_db& db);

}  // namespace kvarena::results
