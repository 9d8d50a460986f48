// train-data.h: the training data of the project's own agent model (`kvarena train-data`,
// scripts/train/). Everything is generated here, deterministically from a data seed:
//
//   agent-last, agent-full  the scripted oracle's trajectories on the suites generated for
//                           site content seeds the evaluation does not use (the committed
//                           suites are seed 1), rendered by the agent's own conversation
//                           code (conversation.h) in the compact prompt style and ChatML,
//                           one sequence per step (last) or per episode (full); the
//                           replies and their end marker are the loss targets; a stop
//                           whose answer an element of the shown page is named exactly
//                           answers by that element ("stop [[84]]", action_by_element)
//   agent-crop              the steps of agent-last whose action names an element, with the
//                           observation cut to a few lines around that element's line (the
//                           same reply): more practice per token at reading an element's
//                           id and copying names from the objective
//   agent-renamed           (renamed_copies > 0) the steps of agent-last whose objective quotes
//                           names, in worlds where those names are new (rename-quoted-names.h): the
//                           name can only be copied from the objective, not recalled
//   agent-retarget          (retarget > 0) the steps of agent-last that pick an element the
//                           objective names, again with the objective naming a sibling on the
//                           same page and the action picking it (retarget-objectives.h): only the
//                           objective tells the variants apart; its made-up objectives
//                           are listed in retarget-objectives.txt (one per line) for the
//                           evaluation's seen / unseen split
//   agent-revalued          (revalued > 0) the note step and the steps that type the noted
//                           number, of long-horizon trajectories whose note is copied later,
//                           with that number made random everywhere (revalue-noted-numbers.h): it
//                           can only be copied from the note, not recalled
//   niah                    needle-in-a-haystack documents (several needle phrasings,
//                           filler from seeds the bench does not use), 256..max_doc_tokens;
//                           with niah_needles > 1 up to that many needles, each asked for
//   kv                      key-value retrieval documents ("key K: value V" lines, a query,
//                           or up to kv_queries queries)
//   lookup                  (lookup_queries > 0) each distinct page the oracle saw, then
//                           questions naming an element by role and name, answered by its id
//   corpus                  every distinct page the oracle saw, as plain text (perplexity)
//
// A sequence is a list of segments, each context or target. Without a tokenizer only the
// text is written (corpus.txt, the tokenizer trainer's input); with one, observations are
// cut to max_obs_tokens as the agent cuts them, and every dataset is written as token
// files (train-tokens.h) plus manifest.json and samples.txt (a few sequences to read).
//
// The stages (collect, render, documents, output) are in files of their own, named in
// train-data-stages.h and datagen/README.md; write_train_data (train-data.cpp) runs them.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agent-loop.h"

namespace kvarena {

class tokenizer;

struct train_segment {
  std::string text;     // encoded with parse_special
  bool target = false;  // in the loss
};

struct train_sequence {
  std::vector<train_segment> segments;
};

// One oracle step as the model sees it: the observation and URL through url_view, the
// action with the session's URLs shown the same way.
struct seen_step {
  std::string observation;
  std::string url;
  std::string action;  // "click [12]"
  std::string note = {};  // the reply's note (a remembered fact on screen here), "" when none
  int64_t note_element = -1;  // the element on this page whose name is `note` (the reply's "NOTE [id]"), else -1
};

struct trajectory {
  std::string intent;
  std::vector<seen_step> steps;
};

struct train_dataset {
  std::string name;  // "agent-last", ...
  std::vector<train_sequence> sequences;
};

// A cut step keeps k_crop_lines_least..k_crop_lines_most page lines (drawn) each side of
// its element: agent-crop always, agent-renamed by default.
constexpr int64_t k_crop_lines_least = 2, k_crop_lines_most = 24;

// agent-renamed's knobs (rename-quoted-names.h). The defaults are round 8's data.
struct rename_options {
  int copies = 0;           // > 0: this many renamings per trajectory whose objective quotes names
  double crop_share = 0.5;  // share of its steps with the page cut around the acted-on element
  int64_t crop_lines = k_crop_lines_most;  // most page lines kept each side of that element (drawn
                                           // from min(k_crop_lines_least, this))
  double swap_share = 0.5;  // share of a name's words swapped for new ones (at least one)
};

struct train_data_options {
  std::string out_dir;
  uint64_t seed = 0;                 // NIAH / kv documents, sampling
  std::vector<uint64_t> site_seeds;  // site content seeds of the trajectories (never 1)
  int jobs = 4;                      // oracle sessions at once
  int64_t max_obs_tokens = 1024;     // as `kvarena run` (needs the tokenizer)
  int64_t n_niah = 2000;             // NIAH documents
  int64_t n_kv = 1000;               // key-value documents
  int64_t max_doc_tokens = 4096;     // longest NIAH / kv document
  int64_t niah_needles = 1;          // most needles per NIAH document (1..3), each asked for
  int64_t kv_queries = 1;            // most queries per kv document, each a target
  int64_t lookup_queries = 0;        // > 0: a lookup document per page, up to this many queries
  rename_options renamed;            // agent-renamed (copies > 0)
  int retarget = 0;                  // > 0: agent-retarget, up to this many variants per step
  double retarget_crop = 0.5;        // agent-retarget: share of its steps with the page cut
  int revalued = 0;                  // > 0: agent-revalued, this many copies per trajectory that types its note
  const tokenizer* tok = nullptr;    // null: text only (corpus.txt)
  std::function<void(const std::string&)> log;  // progress lines
};

struct train_data_summary {
  std::vector<std::pair<std::string, int64_t>> sequences;  // per dataset
  std::vector<std::pair<std::string, int64_t>> tokens;     // per dataset (with a tokenizer)
  int64_t tasks = 0, solved = 0;
  std::vector<uint64_t> skipped_seeds;  // the task generator failed on their content
};

// Throws std::invalid_argument on bad options (site seed 1, no seeds, renamed copies < 0,
// a renamed or retarget share outside [0, 1], crop lines < 1, retarget variants < 0;
// before anything is written), std::runtime_error
// when a file cannot be written or the oracle fails a task.
train_data_summary write_train_data(const train_data_options& opt);

// A trajectory in one history mode (ChatML, compact style) as agent_conversation renders
// it: last -> a sequence per step, full -> one. The replies and the marker that ends each
// (the template's stop marker, "<|im_end|>") are targets. With a tokenizer the observations
// are cut to max_obs_tokens first, as the agent cuts them.
std::vector<train_sequence> render_trajectory(const trajectory& tr, history_mode mode, const tokenizer* tok,
                                              int64_t max_obs_tokens);

// The observation cut to its header (up to the first blank line) and the lines from `before`
// lines before the line of element [element_id] to `after` lines after it; nullopt when the
// observation has no such line.
std::optional<std::string> crop_observation(const std::string& observation, int64_t element_id, int64_t before,
                                            int64_t after);

// agent-crop's sequences of one trajectory: history mode last, each step whose action names
// an element on its page (and that writes no note), its observation cropped around it with
// k_crop_lines_least..k_crop_lines_most lines on each side drawn from `seed`.
std::vector<train_sequence> render_cropped_steps(const trajectory& tr, uint64_t seed, const tokenizer* tok,
                                                 int64_t max_obs_tokens);

// The documents alone (deterministic for a seed), for tests.
// max_needles / max_queries > 1: documents with up to that many needles / queries, every
// one asked for with its answer a target (more retrieval practice per token); 1: one.
train_dataset niah_documents(uint64_t seed, int64_t n, int64_t max_words, int64_t max_needles = 1);
train_dataset kv_documents(uint64_t seed, int64_t n, int64_t max_pairs, int64_t max_queries = 1);
// One document per page (that has an element whose role and name no other line shares): the
// page, then up to max_queries questions "Which element is the link 'Cars'? It is", each
// answered " [58]." (a target): the agent's step of finding an element's id, without the rest.
train_dataset lookup_documents(const std::vector<std::string>& pages, uint64_t seed, int64_t max_queries);

}  // namespace kvarena
