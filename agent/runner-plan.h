// runner-plan.h: what a `kvarena run` will do before anything runs: its work items
// (task, policy, seed), which shard of a job array this process is (--shard I/N, or the
// Slurm / Kubernetes index variables), which items are this shard's, and where the results
// file is. Pure functions over plain values: no model, no env, no file is opened here.
//
// The contract (specs/cluster.md):
//   - every (task, policy label, seed) is one work item; the items are sorted (task_id as
//     text, then policy label, then seed) and item k goes to shard k mod N;
//   - the shard comes from --shard I/N; else SLURM_ARRAY_TASK_ID + SLURM_ARRAY_TASK_COUNT
//     (an array whose ids are not 0..N-1 is refused: --array=1-4 or a step other than 1);
//     else JOB_COMPLETION_INDEX (Kubernetes Indexed Jobs) with N from --shard-count;
//   - with a shard, --out is a folder and the file is <out>/shard-I-of-N.sqlite; every
//     shard file records the whole plan, so a merge names the items of shards that never ran.
// Not here: running the items (runner.h), the results file itself (results/results-db.h).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results-db.h"

namespace kvarena {

// One shard of a job array: index in 0..count-1.
struct shard_spec {
  int64_t index = 0;
  int64_t count = 1;
  std::string source;  // where it came from, for messages: "--shard", "SLURM_ARRAY_TASK_ID", ...
  bool operator==(const shard_spec& o) const { return index == o.index && count == o.count; }
};

// "I/N" (0 <= I < N); std::invalid_argument naming the text and the valid range otherwise,
// e.g. "--shard 2/2: the index must be in 0..1 (shards are numbered from 0)".
shard_spec parse_shard(std::string_view text);

// The shard from the environment when no --shard was given: SLURM_ARRAY_TASK_ID with
// SLURM_ARRAY_TASK_COUNT (and SLURM_ARRAY_TASK_MIN/MAX/STEP when set, which must describe
// 0..N-1), else JOB_COMPLETION_INDEX with `shard_count` (--shard-count). nullopt when none
// of these is set. std::invalid_argument for an id outside 0..N-1, a count missing or not
// a positive integer, or --shard-count without JOB_COMPLETION_INDEX. `getenv` is
// injectable for tests (default: std::getenv).
using env_lookup = std::function<const char*(const char*)>;
std::optional<shard_spec> shard_from_environment(std::optional<int64_t> shard_count,
                                                 const env_lookup& getenv = {});

// Seeds 0..n-1 (--seeds N); std::invalid_argument when n < 1.
std::vector<int64_t> seeds_from_count(int64_t n);
// "0,5,7" (--seed-list): distinct non-negative integers in the given order;
// std::invalid_argument for anything else.
std::vector<int64_t> parse_seed_list(std::string_view text);

// Every (task, policy, seed), sorted, item k assigned to shard k mod shard_count.
std::vector<results::planned_item> plan_work_items(const std::vector<std::string>& task_ids,
                                                   const std::vector<std::string>& policies,
                                                   const std::vector<int64_t>& seeds, int64_t shard_count);
// The items of `plan` assigned to shard `index`, in plan order.
std::vector<results::work_item> shard_work_items(const std::vector<results::planned_item>& plan, int64_t index);

// "shard-I-of-N.sqlite"
std::string shard_file_name(const shard_spec& s);

// The results file and run name of a run.
//   --out FILE.sqlite (no shard)   -> FILE.sqlite, name = its stem
//   --out DIR (a shard, or an existing folder, or a path ending in '/')
//                                  -> DIR/shard-I-of-N.sqlite (shard-0-of-1 without a
//                                     shard), name = DIR's last component
//   no --out                       -> results/runs/<name>.sqlite, or results/runs/<name>/
//                                     with a shard; name = --name or "<suite>-<model stem>"
//                                     ("<suite>-oracle" for the oracle agent)
// --name always wins for the name. std::invalid_argument for a shard with an --out that
// names a .sqlite file (a folder is needed: each shard writes its own file).
struct run_output {
  std::string file;
  std::string name;
  bool folder = false;  // the file sits in an --out folder (created when absent)
};
run_output resolve_run_output(const std::string& out, const std::string& name, const std::optional<shard_spec>& shard,
                              const std::string& suite, const std::string& model_or_agent);

}  // namespace kvarena
