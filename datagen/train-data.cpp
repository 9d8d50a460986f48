// train-data.cpp: see train-data.h. write_train_data runs the stages of train-data-stages.h in
// order: the options checked; per site seed the oracle's trajectories collected and rendered
// into the agent datasets (agent-last, agent-full, agent-crop and the enabled augmentations);
// the distinct pages as the corpus; the retrieval documents; the files.
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "generator/generate.h"
#include "splitmix64.h"
#include "rename-quoted-names.h"
#include "retarget-objectives.h"
#include "revalue-noted-numbers.h"
#include "train-data-stages.h"

namespace kvarena {
namespace {

namespace fs = std::filesystem;

// std::invalid_argument naming the first bad option, before anything is written.
void check_options(const train_data_options& opt) {
  if (opt.site_seeds.empty()) throw std::invalid_argument("train-data: no site seeds");
  for (uint64_t s : opt.site_seeds)
    if (s == tasks::k_default_task_seed)
      throw std::invalid_argument("train-data: site seed 1 is the committed suites' content (evaluation); train on others");
  if (opt.renamed.copies < 0) throw std::invalid_argument("train-data: renamed copies must be >= 0");
  if (!(opt.renamed.crop_share >= 0 && opt.renamed.crop_share <= 1))
    throw std::invalid_argument("train-data: the renamed steps' crop share must be in [0, 1]");
  if (!(opt.renamed.swap_share >= 0 && opt.renamed.swap_share <= 1))
    throw std::invalid_argument("train-data: the renamed names' swap share must be in [0, 1]");
  if (opt.retarget < 0) throw std::invalid_argument("train-data: retarget variants must be >= 0");
  if (opt.revalued < 0) throw std::invalid_argument("train-data: revalued copies must be >= 0");
  if (!(opt.retarget_crop >= 0 && opt.retarget_crop <= 1))
    throw std::invalid_argument("train-data: the retargeted steps' crop share must be in [0, 1]");
  if (opt.renamed.crop_lines < 1) throw std::invalid_argument("train-data: the renamed steps' crop lines must be >= 1");
}

// The agent datasets and the pages the oracle saw, filled site seed by site seed.
struct agent_datasets {
  train_dataset last{"agent-last", {}}, full{"agent-full", {}}, crop{"agent-crop", {}};
  train_dataset renamed{"agent-renamed", {}}, retarget{"agent-retarget", {}}, revalued{"agent-revalued", {}};
  std::set<std::string> retarget_intents;  // the objectives agent-retarget made up
  std::set<std::string> pages_seen;
  std::vector<std::string> pages;  // each distinct page once, in the order first seen
};

void append(train_dataset& d, std::vector<train_sequence> sequences) {
  for (train_sequence& q : sequences) d.sequences.push_back(std::move(q));
}

// One trajectory of site seed s rendered into every agent dataset it feeds; each
// augmentation's seed mixes the site seed with its dataset's size so far. Its pages into the
// page list.
void add_trajectory(const train_data_options& opt, uint64_t s, const trajectory& tr,
                    const std::vector<std::string>& words, agent_datasets& a) {
  const tokenizer* tok = opt.tok;
  const int64_t max_obs = opt.max_obs_tokens;
  append(a.last, render_trajectory(tr, history_mode::last, tok, max_obs));
  append(a.full, render_trajectory(tr, history_mode::full, tok, max_obs));
  append(a.crop,
         render_cropped_steps(tr, opt.seed ^ splitmix64(s * 1000003 + a.crop.sequences.size()), tok, max_obs));
  if (opt.renamed.copies > 0)
    append(a.renamed, render_renamed_steps(tr, words, opt.seed ^ splitmix64(s * 7919 + a.renamed.sequences.size()),
                                           opt.renamed, tok, max_obs));
  if (opt.retarget > 0)
    append(a.retarget,
           render_retargeted_steps(tr, opt.retarget, opt.retarget_crop,
                                   opt.seed ^ splitmix64(s * 4099 + a.retarget.sequences.size()), tok, max_obs,
                                   &a.retarget_intents));
  if (opt.revalued > 0)
    append(a.revalued, render_revalued_steps(tr, opt.revalued,
                                             opt.seed ^ splitmix64(s * 6151 + a.revalued.sequences.size()), tok, max_obs));
  for (const seen_step& st : tr.steps)
    if (a.pages_seen.insert(st.observation).second) a.pages.push_back(st.observation);
}

// The words of every page of these trajectories: agent-renamed's vocabulary of new names.
std::vector<std::string> page_words(const std::vector<trajectory>& trs) {
  std::vector<std::string> texts;
  for (const trajectory& tr : trs)
    for (const seen_step& st : tr.steps) texts.push_back(st.observation);
  return word_pool(texts);
}

// The k-th site seed's trajectories collected and rendered into `a`; a seed whose content the
// task generator cannot instantiate every template on is skipped (sum.skipped_seeds).
void add_site_seed(const train_data_options& opt, size_t k, agent_datasets& a, train_data_summary& sum,
                   const train_log& log) {
  const uint64_t s = opt.site_seeds[k];
  std::vector<trajectory> trs;
  try {
    trs = oracle_trajectories(s, opt.jobs, &sum.tasks, &sum.solved, log);
  } catch (const std::runtime_error& e) {
    log("site seed " + std::to_string(s) + ": skipped (" + e.what() + ")");
    sum.skipped_seeds.push_back(s);
    return;
  }
  const std::vector<std::string> words = opt.renamed.copies > 0 ? page_words(trs) : std::vector<std::string>{};
  int64_t steps = 0;
  for (const trajectory& tr : trs) {
    add_trajectory(opt, s, tr, words, a);
    steps += static_cast<int64_t>(tr.steps.size());
  }
  log("site seed " + std::to_string(s) + " (" + std::to_string(k + 1) + "/" + std::to_string(opt.site_seeds.size()) +
      "): " + std::to_string(trs.size()) + " trajectories, " + std::to_string(steps) + " steps");
}

// The datasets in the order the summary, the token files and samples.txt list them.
std::vector<const train_dataset*> dataset_order(const train_data_options& opt, const agent_datasets& a,
                                                const train_dataset& corpus, const document_datasets& docs) {
  std::vector<const train_dataset*> sets = {&a.last, &a.full, &a.crop};
  if (opt.renamed.copies > 0) sets.push_back(&a.renamed);
  if (opt.retarget > 0) sets.push_back(&a.retarget);
  if (opt.revalued > 0) sets.push_back(&a.revalued);
  sets.insert(sets.end(), {&docs.niah, &docs.kv, &corpus});
  if (opt.lookup_queries > 0) sets.push_back(&docs.lookup);
  return sets;
}

}  // namespace

train_data_summary write_train_data(const train_data_options& opt) {
  check_options(opt);
  const train_log log = [&](const std::string& m) {
    if (opt.log) opt.log(m);
  };
  fs::create_directories(opt.out_dir);
  train_data_summary sum;
  agent_datasets agent;
  for (size_t k = 0; k < opt.site_seeds.size(); ++k) add_site_seed(opt, k, agent, sum, log);
  train_dataset corpus{"corpus", {}};
  for (const std::string& p : agent.pages) corpus.sequences.push_back({{{p, true}}});
  const document_datasets docs = retrieval_documents(opt, agent.pages, log);
  write_datasets(opt, dataset_order(opt, agent, corpus, docs), agent.retarget_intents, sum, log);
  return sum;
}

}  // namespace kvarena
