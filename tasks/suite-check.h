// suite-check.h: `kvarena tasks validate` and `kvarena tasks list`: a suite folder loaded
// with the task loader (which checks fields, references and duplicate ids), plus what
// the oracle and the env server need: every task has a well-formed oracle plan ending in
// stop, names only known sites, uses placeholders only of its own sites, and its memory
// facts (long-horizon) are seen at least k_min_memory_distance steps before they are used,
// on a step whose "expect" shows them.
#pragma once
#include <string>
#include <vector>

#include "task/task.h"

namespace kvarena::tasks {

inline constexpr int k_min_memory_distance = 5;

// The sites the local env serves, by task name.
extern const char* const k_local_sites[3];  // classifieds shopping reddit

struct suite_check_result {
  std::vector<task> tasks;            // the tasks that loaded
  std::vector<std::string> origins;   // their files
  std::vector<std::string> errors;    // "FILE: field: what is wrong"
  bool ok() const { return errors.empty(); }
};

// `require_memory`: every task must carry memory facts (the long-horizon suite; the CLI
// turns it on for a folder named long-horizon).
suite_check_result check_suite(const std::string& path, bool require_memory = false);

// The checks beyond the loader for one task (check_suite runs them on each).
std::vector<std::string> check_task_extension(const task& t, const std::string& origin, bool require_memory);

// One line per task: id, sites, eval types, difficulty, intent (cut to fit a terminal),
// under a header line.
std::string suite_table(const std::vector<task>& tasks, size_t intent_width = 80);

}  // namespace kvarena::tasks
