// train-data-on-seed.h: test helpers for write_train_data on one real site seed (the
// oracle's trajectories; no tokenizer, so the rendered text goes to corpus.txt).
#pragma once
#include <stdlib.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "train-data.h"

namespace kvarena {

// Options for `site_seed` into a fresh folder /tmp/kvarena-test-TAG-XXXXXX: no NIAH or kv
// documents, 2 oracle sessions at once; the caller sets the rest and removes the folder.
inline train_data_options one_seed_options(uint64_t site_seed, const std::string& tag) {
  std::string tmpl = "/tmp/kvarena-test-" + tag + "-XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp " + tmpl);
  train_data_options o;
  o.out_dir = tmpl;
  o.site_seeds = {site_seed};
  o.n_niah = 0;
  o.n_kv = 0;
  o.jobs = 2;
  return o;
}

// A whole file as text ("" when it cannot be read).
inline std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace kvarena
