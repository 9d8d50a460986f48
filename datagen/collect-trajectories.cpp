// collect-trajectories.cpp: collect, the first stage of the training data (train-data.h,
// train-data-stages.h): the scripted oracle (tasks/oracle-agent.h) runs every task the
// generator makes for a site content seed, on an in-process env server of that content, and
// each step is recorded as the model would see it (observation, URL and action through
// url_view); the facts a long-horizon task names to carry become the notes of the replies
// that write them (attach_notes).
#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

#include "client/env-client.h"
#include "generator/generate.h"
#include "oracle-agent.h"
#include "page-element.h"
#include "server/env-server.h"
#include "train-data-stages.h"
#include "url-view.h"

namespace kvarena {
namespace {

// Long-horizon tasks name facts to carry (kvarena.memory): each becomes the note of the
// reply to the first action of the plan step after the one that brought it on screen (a
// fact seen after the last step has no such reply and is left out). The note names the
// element showing the fact ("NOTE [84]", the note then that element's whole name, e.g.
// "Rating: 2.4 out of 5 (7 reviews)" for "2.4"); a fact no element shows, or a second fact
// of the same step, is noted as text.
void attach_notes(const tasks::oracle_task_result& r, trajectory* tr) {
  for (const tasks::memory_fact& f : r.memory) {
    for (size_t j = 0; j < r.action_plan_steps.size() && j < tr->steps.size(); ++j) {
      if (r.action_plan_steps[j] != f.seen_step + 1) continue;
      seen_step& s = tr->steps[j];
      const int64_t id = s.note.empty() ? element_showing(s.observation, f.fact) : -1;
      if (id >= 0) {
        s.note = element_text(s.observation, id).value_or(f.fact);
        s.note_element = id;
      } else {
        s.note += (s.note.empty() ? "" : "; ") + f.fact;
        s.note_element = -1;
      }
      break;
    }
  }
}

}  // namespace

std::vector<trajectory> oracle_trajectories(uint64_t site_seed, int jobs, int64_t* n_tasks, int64_t* n_solved,
                                            const train_log& log) {
  const tasks::generated_suites g = tasks::generate_suites(site_seed);
  std::vector<const task*> all;
  for (const auto& [name, ts] : g.suites)
    for (const task& t : ts) all.push_back(&t);
  std::unique_ptr<env_server> server = tasks::start_local_env_server(jobs, site_seed);
  env_client client(server->base_url());
  std::vector<trajectory> out(all.size());
  std::vector<char> solved(all.size(), 0);
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::vector<std::string> failures;
  auto worker = [&] {
    for (size_t i = next++; i < all.size(); i = next++) {
      trajectory tr;
      tr.intent = all[i]->intent;
      std::unique_ptr<url_view> urls;
      auto observe = [&](const env_observation& seen, const std::string& action) {
        if (!urls) urls = std::make_unique<url_view>(seen.url);
        tr.steps.push_back({urls->show(seen.text), urls->show(seen.url), urls->show(action), ""});
      };
      const tasks::oracle_task_result r = tasks::run_oracle_task(client, *all[i], "", observe);
      attach_notes(r, &tr);
      std::lock_guard<std::mutex> lock(mu);
      if (r.solved) {
        solved[i] = 1;
        out[i] = std::move(tr);
      } else {
        failures.push_back("task " + std::to_string(r.task_id) + ": " + r.reason);
      }
    }
  };
  std::vector<std::thread> th;
  for (int k = 0; k < std::max(1, jobs); ++k) th.emplace_back(worker);
  for (auto& t : th) t.join();
  for (const std::string& f : failures) log("site seed " + std::to_string(site_seed) + ": oracle failed " + f);
  std::vector<trajectory> kept;
  for (size_t i = 0; i < all.size(); ++i)
    if (solved[i]) kept.push_back(std::move(out[i]));
  *n_tasks += static_cast<int64_t>(all.size());
  *n_solved += static_cast<int64_t>(kept.size());
  return kept;
}

}  // namespace kvarena
