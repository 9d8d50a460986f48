// generate.h: the deterministic task generator. From the seeded site data it instantiates
// every template of gen-<site>.cpp into the committed suites:
//   vwa-local     one or more tasks per VWA task kind on the local sites (classifieds,
//                 shopping, reddit, and tasks across two sites)
//   long-horizon  tasks whose answer needs a fact seen >= 5 steps before it is used
//   vwa-visual    tasks whose answer depends on a picture (gen-visual.cpp)
// Same seed -> byte-identical files. Task ids are 0..n-1 within each suite, in template
// order; the files are <suite>/<id>.json (task_to_json, 2-space indent, newline at the end).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "task/task.h"

namespace kvarena::tasks {

inline constexpr uint64_t k_default_task_seed = 1;  // the env server's default site seed

struct generated_suites {
  std::map<std::string, std::vector<task>> suites;  // suite name -> tasks in id order
};

// Throws std::runtime_error when the site data lacks what a template needs.
generated_suites generate_suites(uint64_t seed = k_default_task_seed);

// The text of one task file (what write_suites writes).
std::string task_file_text(const task& t);

// Writes <out_dir>/<suite>/<id>.json for every task, after removing the suite folder's
// old *.json files (so a dropped task does not linger). false with *err on failure.
bool write_suites(const generated_suites& g, const std::string& out_dir, std::string* err);

// Files the generator would write, relative to out_dir ("vwa-local/0.json") -> text.
std::map<std::string, std::string> suite_files(const generated_suites& g);

}  // namespace kvarena::tasks
