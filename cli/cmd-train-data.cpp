// cmd-train-data.cpp: `kvarena train-data`: the training data of the project's agent model
// (datagen/train-data.h). Without --tokenizer it writes DIR/corpus.txt, the tokenizer
// trainer's input; with one, DIR/tokens/* (train-tokens.h), DIR/manifest.json (what was
// generated, from what) and DIR/samples.txt.
//   kvarena train-data --out DIR --seed 0 --site-seeds 2-41 [--tokenizer DIR/tokenizer.gguf]
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli-commands.h"
#include "engine-error.h"
#include "tokenizer.h"
#include "train-data.h"

namespace kvarena::cli {
namespace {

struct train_data_args {
  train_data_options o;  // the flags write its fields; site_seeds and tok come from the two below
  std::string site_seeds = "2-41";
  std::string tokenizer_path;
};

uint64_t parse_u64(const std::string& s, const std::string& what) {
  size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size()) throw engine_error("--site-seeds: '" + s + "' is not a " + what);
  return v;
}

// "2-41", "2,5,9" or a mix ("2-4,9").
std::vector<uint64_t> parse_seed_ranges(const std::string& text) {
  std::vector<uint64_t> out;
  size_t b = 0;
  while (b <= text.size()) {
    size_t e = text.find(',', b);
    if (e == std::string::npos) e = text.size();
    const std::string item = text.substr(b, e - b);
    const size_t dash = item.find('-');
    if (dash == std::string::npos) {
      out.push_back(parse_u64(item, "seed"));
    } else {
      const uint64_t lo = parse_u64(item.substr(0, dash), "seed range (A-B)");
      const uint64_t hi = parse_u64(item.substr(dash + 1), "seed range (A-B)");
      if (hi < lo || hi - lo > 100000) throw engine_error("--site-seeds: bad range '" + item + "'");
      for (uint64_t s = lo; s <= hi; ++s) out.push_back(s);
    }
    b = e + 1;
  }
  return out;
}

int run_train_data(const train_data_args& a) {
  train_data_options o = a.o;
  o.site_seeds = parse_seed_ranges(a.site_seeds);
  std::unique_ptr<tokenizer> tok;
  if (!a.tokenizer_path.empty()) {
    tok = tokenizer::from_file(a.tokenizer_path);
    o.tok = tok.get();
  }
  o.log = [](const std::string& m) { std::fprintf(stderr, "[train-data] %s\n", m.c_str()); };
  const train_data_summary s = write_train_data(o);

  nlohmann::ordered_json m;
  m["data_seed"] = a.o.seed;
  m["site_seeds"] = a.site_seeds;
  m["tokenizer"] = a.tokenizer_path;
  m["max_obs_tokens"] = a.o.max_obs_tokens;
  m["max_doc_tokens"] = a.o.max_doc_tokens;
  m["niah_needles"] = a.o.niah_needles;
  m["kv_queries"] = a.o.kv_queries;
  m["lookup_queries"] = a.o.lookup_queries;
  m["renamed_copies"] = a.o.renamed.copies;
  m["renamed_crop"] = a.o.renamed.crop_share;
  m["renamed_lines"] = a.o.renamed.crop_lines;
  m["renamed_swap"] = a.o.renamed.swap_share;
  m["retarget_variants"] = a.o.retarget;
  m["retarget_crop"] = a.o.retarget_crop;
  m["revalued_copies"] = a.o.revalued;
  m["tasks"] = s.tasks;
  m["solved"] = s.solved;
  m["skipped_site_seeds"] = s.skipped_seeds;
  nlohmann::ordered_json sets = nlohmann::ordered_json::object();
  for (const auto& [name, n] : s.sequences) sets[name]["sequences"] = n;
  for (const auto& [name, n] : s.tokens) sets[name]["tokens"] = n;
  m["datasets"] = sets;
  if (tok) m["n_vocab"] = tok->n_vocab();
  const std::string path = a.o.out_dir + "/manifest.json";
  std::ofstream f(path);
  f << m.dump(2) << "\n";
  if (!f) throw engine_error(path + ": cannot write");
  std::printf("%s\n", m.dump().c_str());
  return s.solved == s.tasks ? 0 : 4;
}

}  // namespace

void add_train_data_command(CLI::App& app, command_fn& run) {
  auto* sub = app.add_subcommand("train-data", "Write the agent model's training data (oracle trajectories, NIAH, kv)");
  auto a = std::make_shared<train_data_args>();
  sub->add_option("--out,-o", a->o.out_dir, "Output folder")->required();
  sub->add_option("--seed", a->o.seed, "Data seed (documents)")->capture_default_str();
  sub->add_option("--site-seeds", a->site_seeds, "Site content seeds of the trajectories: A-B, a list, or both (never 1)")
      ->capture_default_str();
  sub->add_option("--tokenizer", a->tokenizer_path, "Vocabulary GGUF: write token files (without: corpus.txt only)");
  sub->add_option("--jobs,-j", a->o.jobs, "Oracle sessions and encoding threads at once")
      ->capture_default_str()->check(CLI::Range(1, 256));
  sub->add_option("--max-obs-tokens", a->o.max_obs_tokens, "Observation budget, as kvarena run's")->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--niah", a->o.n_niah, "NIAH documents")->capture_default_str()->check(CLI::NonNegativeNumber);
  sub->add_option("--kv", a->o.n_kv, "Key-value documents")->capture_default_str()->check(CLI::NonNegativeNumber);
  sub->add_option("--max-doc-tokens", a->o.max_doc_tokens, "Longest NIAH / kv document")->capture_default_str()
      ->check(CLI::Range(int64_t(128), int64_t(1) << 20));
  sub->add_option("--niah-needles", a->o.niah_needles,
                  "Most needles per NIAH document, each of its own phrasing and asked for in turn")
      ->capture_default_str()->check(CLI::Range(1, 3));
  sub->add_option("--kv-queries", a->o.kv_queries, "Most queries per kv document, each answer a target")
      ->capture_default_str()->check(CLI::Range(1, 64));
  sub->add_option("--lookup-queries", a->o.lookup_queries,
                  "Element lookup documents: each page seen, then up to N questions for an element's id (0: none)")
      ->capture_default_str()->check(CLI::Range(0, 64));
  sub->add_option("--renamed", a->o.renamed.copies,
                  "agent-renamed: each trajectory whose objective quotes names, this many times with new names (0: none)")
      ->capture_default_str()->check(CLI::Range(0, 16));
  sub->add_option("--renamed-crop", a->o.renamed.crop_share,
                  "agent-renamed: share of its steps with the page cut to the lines around the acted-on element")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  sub->add_option("--renamed-lines", a->o.renamed.crop_lines,
                  "agent-renamed: most page lines kept each side of the element in a cut step (drawn from 2)")
      ->capture_default_str()->check(CLI::Range(int64_t(1), int64_t(1000)));
  sub->add_option("--renamed-swap", a->o.renamed.swap_share,
                  "agent-renamed: share of a quoted name's words swapped for new ones (at least one)")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  sub->add_option("--retarget", a->o.retarget,
                  "agent-retarget: each step that picks an element the objective names, up to N times with the "
                  "objective naming a sibling (0: none)")
      ->capture_default_str()->check(CLI::Range(0, 16));
  sub->add_option("--retarget-crop", a->o.retarget_crop,
                  "agent-retarget: share of its steps with the page cut to the lines around the element")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  sub->add_option("--revalue", a->o.revalued,
                  "agent-revalued: each long-horizon trajectory that types its noted number, N times with that "
                  "number made random everywhere (the note step and the typing steps; 0: none)")
      ->capture_default_str()->check(CLI::Range(0, 64));
  sub->callback([&run, a] { run = [a] { return run_train_data(*a); }; });
}

}  // namespace kvarena::cli
