// task-verdict.h: what kvarena can do with a task that loaded, for `kvarena tasks validate`
// on any suite (VisualWebArena's and WebArena's own task files included):
//   full        every part runs here (text browser, the evaluators as VWA scores them) on the
//               sites it names: kvarena's own for its suites; VisualWebArena's tasks refer to
//               VWA's site content, so they run against those sites by URL
//               (kvarena env-server --sites-url classifieds=URL,...)
//   degraded    it runs, but a part is scored differently from VisualWebArena (each named)
//   cannot_run  it needs what was not configured (each reason says what would make it run:
//               --site NAME=URL, --judge-url / --judge-model, --vqa-url, --browser chromium);
//               among them a VisualWebArena/WebArena task (no kvarena extension) on a site
//               kvarena serves locally: its ids, URLs and answers are that project's site
//               content, which the local site does not hold (--site NAME=URL, or
//               --local-sites-for-real-tasks to run it here anyway)
// A task that does not load is `refused` (the loader's errors; the CLI's business).
// With require_oracle (the project's own suites, CI) a missing or broken oracle plan, a
// non-local site or a placeholder of another task's site are refusals, as check_suite says.
// Not here: loading (envs/task/task.h), the oracle (oracle-agent.h).
#pragma once
#include <set>
#include <string>
#include <vector>

#include "task/task.h"

namespace kvarena::tasks {

enum class verdict_kind { full, degraded, cannot_run, refused };
const char* verdict_name(verdict_kind k);  // "full", "degraded", "cannot_run", "refused"

struct verdict_reason {
  verdict_kind kind;  // the class this part alone puts the task in
  std::string text;   // one line: what, and what would change it
};

struct task_verdict {
  verdict_kind kind = verdict_kind::full;  // the worst of the reasons'
  std::vector<verdict_reason> reasons;
};

struct verdict_options {
  bool require_oracle = false;  // the project's suites: plans, local sites, own placeholders
  bool require_memory = false;  // the long-horizon suite: memory facts too
  // What `kvarena tasks validate` was told is available (the flags of run / env-server):
  bool judge = false;               // --judge-url or --judge-model: fuzzy_match runs
  bool vqa = false;                 // --vqa-url: eval_vqa runs
  bool chromium = false;            // --browser chromium: JavaScript locators, prep_actions
  std::set<std::string> site_urls;  // --site NAME=URL: sites served elsewhere
  bool local_sites_for_real_tasks = false;  // --local-sites-for-real-tasks: run them on local sites
};

// The sites of task t that need the real site: t is another project's task (no kvarena
// extension) and the site is one kvarena serves locally with no --site URL for it.
std::vector<std::string> sites_needing_real_site(const task& t, const std::set<std::string>& site_urls);

// The worst class of any reason decides. origin: for refusal messages ("file.json[3]").
task_verdict verdict_for(const task& t, const std::string& origin, const verdict_options& o);

}  // namespace kvarena::tasks
