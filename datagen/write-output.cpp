// write-output.cpp: output, the last stage of the training data (train-data.h,
// train-data-stages.h): the datasets into the output folder. retarget-objectives.txt lists
// the objectives agent-retarget made up (the evaluation splits success by them); then either
// corpus.txt, every sequence's text one a line (no tokenizer: the tokenizer trainer's input),
// or each dataset's token files (train-tokens.h) and samples.txt (a few sequences to read).
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "train-data-stages.h"
#include "train-tokens.h"

namespace kvarena {
namespace {

namespace fs = std::filesystem;

void write_retarget_objectives(const std::set<std::string>& intents, const std::string& dir) {
  const fs::path f = fs::path(dir) / "retarget-objectives.txt";
  std::ofstream out(f, std::ios::binary);
  for (const std::string& i : intents) out << i << "\n";
  if (!out) throw std::runtime_error("cannot write " + f.string());
}

void write_corpus_text(const std::vector<const train_dataset*>& sets, const std::string& dir, const train_log& log) {
  const fs::path f = fs::path(dir) / "corpus.txt";
  std::ofstream out(f, std::ios::binary);
  for (const train_dataset* d : sets)
    for (const train_sequence& q : d->sequences) {
      for (const train_segment& s : q.segments) out << s.text;
      out << "\n";
    }
  if (!out) throw std::runtime_error("cannot write " + f.string());
  log("wrote " + f.string());
}

}  // namespace

void write_datasets(const train_data_options& opt, const std::vector<const train_dataset*>& sets,
                    const std::set<std::string>& retarget_intents, train_data_summary& sum, const train_log& log) {
  if (opt.retarget > 0) write_retarget_objectives(retarget_intents, opt.out_dir);
  for (const train_dataset* d : sets) sum.sequences.push_back({d->name, static_cast<int64_t>(d->sequences.size())});
  if (!opt.tok) return write_corpus_text(sets, opt.out_dir, log);
  for (const train_dataset* d : sets) {
    const int64_t n = write_token_files(*d, *opt.tok, opt.out_dir, opt.jobs);
    sum.tokens.push_back({d->name, n});
    log(d->name + ": " + std::to_string(d->sequences.size()) + " sequences, " + std::to_string(n) + " tokens");
  }
  write_samples(sets, (fs::path(opt.out_dir) / "samples.txt").string());
}

}  // namespace kvarena
