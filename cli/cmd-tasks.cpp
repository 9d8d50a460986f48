// cmd-tasks.cpp: `kvarena tasks generate|validate|list|oracle` (tasks/ does the work).
//   generate --out tasks [--seed 1] [--check]  write the suites (or, with --check, compare
//                                              the files there with what would be written)
//   validate DIR...                            loader checks + oracle plans + known sites
//   list DIR                                   a table: id, sites, eval types, difficulty, intent
//   oracle --suite DIR [--env-url URL] [-j N] [--task ID]...
//                                              the scripted oracle through the env API; JSON
//                                              summary on stdout, exit 1 unless 100% solved
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli-commands.h"
#include "generator/generate.h"
#include "oracle-agent.h"
#include "server/env-server.h"
#include "suite-check.h"

namespace kvarena::cli {

namespace {

namespace fs = std::filesystem;

// The long-horizon suite's tasks must carry memory facts; a folder of that name (or a
// task file in it) is held to that.
bool is_long_horizon(const std::string& path) {
  fs::path p = fs::path(path).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();  // "tasks/long-horizon/"
  return p.filename() == "long-horizon" || p.parent_path().filename() == "long-horizon";
}

int run_generate(const std::string& out, uint64_t seed, bool check) {
  auto g = tasks::generate_suites(seed);
  if (!check) {
    std::string err;
    if (!tasks::write_suites(g, out, &err)) throw std::runtime_error("tasks generate: " + err);
    for (const auto& [suite, ts] : g.suites)
      std::fprintf(stderr, "kvarena tasks: wrote %zu tasks to %s\n", ts.size(), (fs::path(out) / suite).c_str());
    return 0;
  }
  int differ = 0;
  std::set<std::string> expected;
  for (const auto& [rel, text] : tasks::suite_files(g)) {
    expected.insert(rel);
    std::ifstream f(fs::path(out) / rel, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    if (!f || ss.str() != text) {
      std::fprintf(stderr, "kvarena tasks: %s differs from the generator's output\n", (fs::path(out) / rel).c_str());
      ++differ;
    }
  }
  for (const auto& [suite, ts] : g.suites) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::path(out) / suite, ec))
      if (e.path().extension() == ".json" && !expected.count(suite + "/" + e.path().filename().string())) {
        std::fprintf(stderr, "kvarena tasks: %s is not made by the generator\n", e.path().c_str());
        ++differ;
      }
  }
  if (differ) {
    std::fprintf(stderr, "kvarena tasks: %d file(s) out of date; run `kvarena tasks generate --out %s`\n", differ,
                 out.c_str());
    return 1;
  }
  std::fprintf(stderr, "kvarena tasks: %s is up to date\n", out.c_str());
  return 0;
}

int run_validate(const std::vector<std::string>& dirs) {
  int bad = 0;
  for (const std::string& dir : dirs) {
    auto r = tasks::check_suite(dir, is_long_horizon(dir));
    for (const std::string& e : r.errors) std::fprintf(stderr, "%s\n", e.c_str());
    std::printf("%s: %zu tasks, %zu problem(s)\n", dir.c_str(), r.tasks.size(), r.errors.size());
    if (!r.ok()) ++bad;
  }
  return bad ? 1 : 0;
}

int run_list(const std::string& dir) {
  auto r = tasks::check_suite(dir, false);
  for (const std::string& e : r.errors) std::fprintf(stderr, "%s\n", e.c_str());
  std::fputs(tasks::suite_table(r.tasks).c_str(), stdout);
  return r.tasks.empty() ? 1 : 0;
}

struct oracle_args {
  std::string suite;
  std::string env_url;
  int jobs = 8;
  std::vector<int64_t> only;
};

int run_oracle(const oracle_args& a) {
  auto loaded = tasks::check_suite(a.suite, false);
  for (const std::string& e : loaded.errors) std::fprintf(stderr, "%s\n", e.c_str());
  if (loaded.tasks.empty()) throw std::runtime_error("tasks oracle: no task loaded from " + a.suite);
  std::vector<task> ts;
  std::vector<std::string> origins;
  for (size_t i = 0; i < loaded.tasks.size(); ++i) {
    if (!a.only.empty() && std::find(a.only.begin(), a.only.end(), loaded.tasks[i].task_id) == a.only.end()) continue;
    ts.push_back(loaded.tasks[i]);
    origins.push_back(loaded.origins[i]);
  }
  std::unique_ptr<env_server> local;
  std::string url = a.env_url;
  if (url.empty()) {
    local = tasks::start_local_env_server(a.jobs);
    url = local->base_url();
    std::fprintf(stderr, "kvarena tasks oracle: env server with in-process sites at %s\n", url.c_str());
  }
  env_client client(url);
  const bool tty = isatty(STDERR_FILENO);
  tasks::oracle_run_options opt;
  opt.jobs = a.jobs;
  size_t failed = 0;
  opt.progress = [&](size_t done, size_t total, const tasks::oracle_task_result& r) {
    if (!r.solved) {
      ++failed;
      std::fprintf(stderr, "%stask %lld (%s): FAILED: %s\n", tty ? "\r\033[K" : "", (long long)r.task_id,
                   r.origin.c_str(), r.reason.c_str());
    }
    if (tty) std::fprintf(stderr, "\r\033[Koracle: %zu/%zu tasks, %zu failed", done, total, failed);
  };
  auto result = tasks::run_oracle_suite(client, ts, origins, opt);
  if (tty) std::fprintf(stderr, "\n");
  std::printf("%s\n", tasks::oracle_summary_json(a.suite, result).c_str());
  if (!loaded.errors.empty()) return 1;
  return result.all_solved() ? 0 : 1;
}

}  // namespace

void add_tasks_command(CLI::App& app, command_fn& run) {
  auto* tasks_cmd = app.add_subcommand("tasks", "Task suites: generate, validate, list, and solve them with the oracle");
  tasks_cmd->require_subcommand(1);

  auto* gen = tasks_cmd->add_subcommand("generate", "Write the suites from the seeded site data (deterministic)");
  auto gen_out = std::make_shared<std::string>("tasks");
  auto gen_seed = std::make_shared<uint64_t>(tasks::k_default_task_seed);
  auto gen_check = std::make_shared<bool>(false);
  gen->add_option("--out,-o", *gen_out, "Folder that gets <suite>/<id>.json");
  gen->add_option("--seed", *gen_seed, "Site content seed (the env server's default is 1)");
  gen->add_flag("--check", *gen_check, "Compare the files in --out with the generator's output instead of writing");
  gen->callback([&run, gen_out, gen_seed, gen_check] {
    run = [=] { return run_generate(*gen_out, *gen_seed, *gen_check); };
  });

  auto* val = tasks_cmd->add_subcommand("validate", "Check suites: loader rules, oracle plans, sites, memory facts");
  auto dirs = std::make_shared<std::vector<std::string>>();
  val->add_option("dirs", *dirs, "Suite folders or task files")->required();
  val->callback([&run, dirs] { run = [dirs] { return run_validate(*dirs); }; });

  auto* lst = tasks_cmd->add_subcommand("list", "Table of a suite's tasks");
  auto dir = std::make_shared<std::string>();
  lst->add_option("dir", *dir, "Suite folder or task file")->required();
  lst->callback([&run, dir] { run = [dir] { return run_list(*dir); }; });

  auto* ora = tasks_cmd->add_subcommand("oracle", "Solve every task with the scripted oracle through the env API");
  auto a = std::make_shared<oracle_args>();
  ora->add_option("--suite,-s", a->suite, "Suite folder")->required();
  ora->add_option("--env-url", a->env_url, "An env server to use (default: start one with in-process sites)");
  ora->add_option("-j,--jobs", a->jobs, "Sessions at once")->check(CLI::Range(1, 256));
  ora->add_option("--task", a->only, "Only these task ids (repeatable)");
  ora->callback([&run, a] { run = [a] { return run_oracle(*a); }; });
}

}  // namespace kvarena::cli
