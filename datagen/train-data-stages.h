// train-data-stages.h: the stages of write_train_data (train-data.h), each in a file of its
// own, as the data flows:
//
//   collect    collect-trajectories.cpp   the scripted oracle's trajectories per site
//                                         content seed, the notes of long-horizon tasks attached
//   render     render-sequences.cpp       a trajectory as the agent's ChatML sequences
//              crop-around-element.cpp    agent-crop: steps with the page cut around the element
//              rename-quoted-names.cpp    agent-renamed: quoted names swapped for new ones
//              retarget-objectives.cpp    agent-retarget: the objective naming a sibling element
//              revalue-noted-numbers.cpp  agent-revalued: a noted number made random everywhere
//   documents  retrieval-documents.cpp    niah, kv and lookup documents
//   output     write-output.cpp           the files: token files and samples, or corpus.txt
//
// train-data.cpp runs them in that order. Internal to datagen/: the declarations the stages'
// files share; everything a caller uses is in train-data.h.
#pragma once
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "train-data.h"

namespace kvarena {

// Progress lines (train_data_options::log, or nothing).
using train_log = std::function<void(const std::string&)>;

// collect (collect-trajectories.cpp): the oracle's trajectories on every task generated for
// `site_seed` (solved ones only; the oracle solves all, and each failure is logged), on
// `jobs` sessions at once. Adds the tasks and the solved ones to *n_tasks and *n_solved.
// std::runtime_error when the task generator cannot instantiate every template on that content.
std::vector<trajectory> oracle_trajectories(uint64_t site_seed, int jobs, int64_t* n_tasks, int64_t* n_solved,
                                            const train_log& log);

// documents (retrieval-documents.cpp): the retrieval documents, from opt.seed: niah and kv
// (lengths from opt.max_doc_tokens), and with opt.lookup_queries > 0 lookup over `pages` (cut
// to opt.max_obs_tokens as the agent sees them). NIAH haystacks mix the bench's filler
// sentences with these pages.
struct document_datasets {
  train_dataset niah{"niah", {}}, kv{"kv", {}}, lookup{"lookup", {}};
};
document_datasets retrieval_documents(const train_data_options& opt, const std::vector<std::string>& pages,
                                      const train_log& log);

// output (write-output.cpp): `sets` into opt.out_dir, their sequence counts (and token
// counts) into sum: retarget-objectives.txt when opt.retarget > 0; then without a tokenizer
// corpus.txt (every sequence's text, one a line), with one each dataset's token files
// (train-tokens.h) and samples.txt. std::runtime_error when a file cannot be written.
void write_datasets(const train_data_options& opt, const std::vector<const train_dataset*>& sets,
                    const std::set<std::string>& retarget_intents, train_data_summary& sum, const train_log& log);

}  // namespace kvarena
