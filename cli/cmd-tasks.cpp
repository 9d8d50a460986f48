// cmd-tasks.cpp: `kvarena tasks generate|validate|list|oracle` (tasks/ does the work).
//   generate --out tasks [--seed 1] [--check]  write the suites (or, with --check, compare
//                                              the files there with what would be written)
//   validate DIR... [--require-oracle] [--json] [--browser chromium] [--judge-url URL |
//            --judge-model FILE] [--vqa-url URL] [--site NAME=URL]...
//                                              per task: full, degraded, cannot_run or refused,
//                                              with reasons, given what the run would have;
//                                              exit 1 when any is refused
//   evaluators                                 what the evaluators support (types, keys, locators, helpers)
//   list DIR                                   a table: id, sites, eval types, difficulty, intent
//   oracle --suite DIR [--env-url URL] [-j N] [--task ID]... [--browser text|chromium]
//                                              the scripted oracle through the env API; JSON
//                                              summary on stdout, exit 1 unless 100% solved
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli-commands.h"
#include "default-model.h"
#include "eval-flags.h"
#include "oracle-visibility.h"
#include "tokenizer.h"
#include "url-view.h"
#include "generator/generate.h"
#include "oracle-agent.h"
#include "server/env-server.h"
#include "eval/vwa-helpers/site-eval-helpers.h"
#include "suite-check.h"
#include "task-verdict.h"

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

struct validate_args {
  std::vector<std::string> dirs;
  bool require_oracle = false;
  bool json = false;
  bool local_sites_for_real_tasks = false;
  std::string browser = "text";
  eval_flags eval;  // what the run would have: a judge, a VQA endpoint, site URLs
};

// The origin of a loader message "ORIGIN: field: what" (origins hold no ": ").
std::string origin_of(const std::string& message) { return message.substr(0, message.find(": ")); }

// Per suite: every task's verdict (task-verdict.h), refused ones from the loader's errors.
// Text: a count per verdict and the reasons behind each, most frequent first; --json: one
// object per task and line. Exit 1 when any task is refused.
int run_validate(const validate_args& a) {
  int refused_total = 0;
  for (const std::string& dir : a.dirs) {
    const task_suite s = load_tasks(dir);
    tasks::verdict_options o;
    o.require_oracle = a.require_oracle;
    o.require_memory = a.require_oracle && is_long_horizon(dir);
    o.judge = a.eval.has_judge();
    o.vqa = !a.eval.vqa_url.empty();
    o.chromium = a.browser == "chromium";
    for (const auto& [name, url] : parse_site_flags(a.eval.sites)) o.site_urls.insert(name);
    o.local_sites_for_real_tasks = a.local_sites_for_real_tasks;
    std::map<std::string, std::vector<std::string>> refused;  // origin -> the loader's messages
    for (const std::string& e : s.errors) refused[origin_of(e)].push_back(e.substr(std::min(e.size(), origin_of(e).size() + 2)));
    std::map<tasks::verdict_kind, int> count;
    std::map<tasks::verdict_kind, std::map<std::string, int>> reasons;
    auto emit = [&](const std::string& origin, const task* t, tasks::verdict_kind k,
                    const std::vector<tasks::verdict_reason>& why_kinds) {
      ++count[k];
      std::vector<std::string> why;
      for (const tasks::verdict_reason& r : why_kinds) {
        ++reasons[r.kind][r.text];  // each reason under its own class
        why.push_back(r.text);
      }
      if (a.json) {
        nlohmann::ordered_json j = {{"suite", dir},
                                    {"origin", origin},
                                    {"task_id", t ? nlohmann::ordered_json(t->task_id) : nlohmann::ordered_json(nullptr)},
                                    {"verdict", tasks::verdict_name(k)},
                                    {"reasons", why}};
        std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
      }
    };
    for (size_t i = 0; i < s.tasks.size(); ++i) {
      const tasks::task_verdict v = tasks::verdict_for(s.tasks[i], s.origins[i], o);
      emit(s.origins[i], &s.tasks[i], v.kind, v.reasons);
    }
    for (const auto& [origin, why] : refused) {
      std::vector<tasks::verdict_reason> rs;
      for (const std::string& w : why) rs.push_back({tasks::verdict_kind::refused, w});
      emit(origin, nullptr, tasks::verdict_kind::refused, rs);
    }
    refused_total += count[tasks::verdict_kind::refused];
    for (const std::string& w : s.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    if (a.json) continue;
    const size_t n = s.tasks.size() + refused.size();
    std::printf("%s: %zu tasks: %d run fully, %d degraded, %d cannot run, %d refused (%zu warnings)\n", dir.c_str(), n,
                count[tasks::verdict_kind::full], count[tasks::verdict_kind::degraded],
                count[tasks::verdict_kind::cannot_run], count[tasks::verdict_kind::refused], s.warnings.size());
    for (tasks::verdict_kind k : {tasks::verdict_kind::refused, tasks::verdict_kind::cannot_run,
                                  tasks::verdict_kind::degraded}) {
      std::vector<std::pair<int, std::string>> top;
      for (const auto& [why, c] : reasons[k]) top.push_back({-c, why});
      std::sort(top.begin(), top.end());
      for (const auto& [c, why] : top) std::printf("  %-10s %4d  %s\n", tasks::verdict_name(k), -c, why.c_str());
    }
  }
  return refused_total ? 1 : 0;
}

// What the evaluators support, and how (the same facts task-verdict.h judges tasks by).
int run_evaluators() {
  std::printf(
      "string_match    exact_match, must_include (|OR| alternatives), must_exclude, one_of, required_values\n"
      "                (<, <=, ==, >=, > on numbers, |OR|): as VisualWebArena scores them\n"
      "                fuzzy_match (a list, or N/A with string_note): asked of an LLM judge, as VWA:\n"
      "                --judge-url URL (OpenAI-compatible) or --judge-model FILE.gguf; without one\n"
      "                VWA/WebArena tasks are `cannot_run` (kvarena's own suites: the deterministic judge)\n"
      "url_match       reference_url alternatives (|OR|), url_note EXACT (default) or GOLD in PRED\n"
      "program_html    targets: url (last, a URL, func:helper(...)), locator: \"\" (the page),\n"
      "                document.querySelector(S).outerText|textContent|innerText|value,\n"
      "                document.body.innerText, func:helper(...); other JavaScript, lambda: and\n"
      "                prep_actions need --browser chromium (`cannot_run` on the text browser)\n"
      "page_image_query eval_vqa: --vqa-url URL (an OpenAI-compatible vision endpoint), else `cannot_run`;\n"
      "                eval_fuzzy_image_match: SSIM of the page's images with the references (> 0.8)\n"
      "sites           classifieds, shopping, reddit served locally; any of classifieds, shopping,\n"
      "                shopping_admin, reddit, gitlab, wikipedia, map, homepage by --site NAME=URL\n"
      "func: helpers  ");
  for (const std::string& n : sites::site_eval_helpers().names()) std::printf(" %s", n.c_str());
  std::printf("\n(kvarena tasks validate FILE says which tasks use what.)\n");
  return 0;
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
  std::string browser = "text";
  int jobs = 8;
  std::vector<int64_t> only;
  std::vector<int64_t> visible_at;  // observation budgets (tokens of `model`'s vocabulary)
  std::string model;                // "": the shipped agent model
};

int run_oracle(const oracle_args& a) {
  if (!a.model.empty() && a.visible_at.empty())
    throw std::invalid_argument("--model " + a.model + " is --visible-at's tokenizer: give --visible-at too (or drop --model)");
  if (a.browser == "chromium" && a.env_url.empty() && !chromium_available()) {
    std::fprintf(stderr,
                 "kvarena tasks oracle: --browser chromium needs /usr/bin/chromium, which is missing; install "
                 "Debian's chromium package (scripts/setup.sh) or use --browser text\n");
    return 2;
  }
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
  opt.browser = a.browser;
  std::unique_ptr<tokenizer> tok;
  std::string model_path;
  std::vector<oracle_step_record> steps;  // --visible-at: every step, for oracle_visibility
  std::mutex steps_mu;
  if (!a.visible_at.empty()) {
    model_path = model_or_default(a.model);
    tok = tokenizer::from_file(model_path);  // a bad file stops here, before any task runs
    opt.observe = [&](size_t task, const env_observation& seen, const std::string& action) {
      std::lock_guard<std::mutex> lock(steps_mu);
      steps.push_back({task, url_view(seen.url).show(seen.text), action});  // the page as the agent shows it
    };
  }
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
  if (tok) {
    std::stable_sort(steps.begin(), steps.end(),
                     [](const oracle_step_record& x, const oracle_step_record& y) { return x.task < y.task; });
    nlohmann::ordered_json j;
    j["visible_at"] = nlohmann::ordered_json::array();
    for (const visibility_at_budget& v : oracle_visibility(steps, *tok, a.visible_at))
      j["visible_at"].push_back({{"budget", v.budget}, {"steps", v.steps}, {"steps_visible", v.steps_visible},
                                 {"tasks", v.tasks}, {"tasks_all_visible", v.tasks_all_visible}});
    j["model"] = model_path;
    std::printf("%s\n", j.dump().c_str());
  }
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

  auto* val = tasks_cmd->add_subcommand(
      "validate", "Per task: runs fully, degraded (which part), cannot run (why), or refused (the loader's errors)");
  auto va = std::make_shared<validate_args>();
  val->add_option("dirs", va->dirs, "Suite folders or task files (VisualWebArena's *.raw.json too)")->required();
  val->add_flag("--require-oracle", va->require_oracle,
                "The project's suites: every task needs its oracle plan, local sites and its own placeholders "
                "(long-horizon: memory facts)");
  val->add_flag("--json", va->json, "One JSON object per task and line: suite, origin, task_id, verdict, reasons");
  val->add_option("--browser", va->browser, "The browser the tasks would run in: text, or chromium (JavaScript)")
      ->check(CLI::IsMember({"text", "chromium"}))
      ->capture_default_str();
  add_eval_flags(val, va->eval, "What the run would have");
  val->add_flag("--local-sites-for-real-tasks", va->local_sites_for_real_tasks,
                "VisualWebArena/WebArena tasks (no kvarena extension) on kvarena's local sites are judged as "
                "runnable (without it: cannot_run, needs_real_site)")
      ->group("What the run would have");
  val->callback([&run, va] { run = [va] { return run_validate(*va); }; });

  auto* evs = tasks_cmd->add_subcommand("evaluators", "What the evaluators support (eval types, keys, locators, helpers)");
  evs->callback([&run] { run = [] { return run_evaluators(); }; });

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
  ora->add_option("--browser", a->browser, "The sessions' browser backend (chromium: headless /usr/bin/chromium)")
      ->check(CLI::IsMember({"text", "chromium"}));
  ora->add_option("--visible-at", a->visible_at,
                  "Also count, per observation budget (tokens; 0: no limit), the steps and tasks whose acted-on "
                  "elements are inside the page cut as the agent cuts it (a second JSON line)")
      ->delimiter(',')->check(CLI::NonNegativeNumber);
  ora->add_option("--model,-m", a->model, "--visible-at's tokenizer: a GGUF (default: the shipped agent model)");
  ora->callback([&run, a] { run = [a] { return run_oracle(*a); }; });
}

}  // namespace kvarena::cli
