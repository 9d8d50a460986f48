// train-tokens.cpp: see train-tokens.h.
#include "train-tokens.h"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "tokenizer.h"

namespace kvarena {

void encode_sequence(const train_sequence& q, const tokenizer& tok, std::vector<uint16_t>* ids,
                     std::vector<uint8_t>* mask) {
  for (size_t i = 0; i < q.segments.size(); ++i) {
    const train_segment& s = q.segments[i];
    for (int32_t id : tok.encode(s.text, /*add_bos=*/i == 0, /*parse_special=*/true)) {
      ids->push_back(static_cast<uint16_t>(id));
      mask->push_back(s.target ? 1 : 0);
    }
  }
}

int64_t write_token_files(const train_dataset& d, const tokenizer& tok, const std::string& dir, int threads) {
  if (tok.n_vocab() > 65536)
    throw std::runtime_error("train-data: a vocabulary of " + std::to_string(tok.n_vocab()) +
                             " tokens does not fit the uint16 token files");
  const size_t n = d.sequences.size();
  std::vector<std::vector<uint16_t>> ids(n);
  std::vector<std::vector<uint8_t>> masks(n);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) encode_sequence(d.sequences[i], tok, &ids[i], &masks[i]);
  };
  std::vector<std::thread> th;
  for (int k = 0; k < std::max(1, threads); ++k) th.emplace_back(worker);
  for (auto& t : th) t.join();

  const std::filesystem::path base = std::filesystem::path(dir) / "tokens";
  std::filesystem::create_directories(base);
  auto open = [&](const char* ext) {
    const std::filesystem::path p = base / (d.name + ext);
    std::ofstream f(p, std::ios::binary);
    if (!f) throw std::runtime_error("cannot write " + p.string());
    return f;
  };
  std::ofstream tok_f = open(".tok"), mask_f = open(".mask"), idx_f = open(".idx");
  uint64_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    idx_f.write(reinterpret_cast<const char*>(&offset), sizeof offset);
    tok_f.write(reinterpret_cast<const char*>(ids[i].data()), static_cast<std::streamsize>(ids[i].size() * 2));
    mask_f.write(reinterpret_cast<const char*>(masks[i].data()), static_cast<std::streamsize>(masks[i].size()));
    offset += ids[i].size();
  }
  idx_f.write(reinterpret_cast<const char*>(&offset), sizeof offset);
  if (!tok_f || !mask_f || !idx_f) throw std::runtime_error("cannot write the token files of " + d.name);
  return static_cast<int64_t>(offset);
}

void write_samples(const std::vector<const train_dataset*>& sets, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  for (const train_dataset* d : sets) {
    for (size_t i = 0; i < std::min<size_t>(2, d->sequences.size()); ++i) {
      out << "===== " << d->name << " #" << i << " =====\n";
      for (const train_segment& s : d->sequences[i].segments) out << (s.target ? "⟦" + s.text + "⟧" : s.text);
      out << "\n\n";
    }
  }
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace kvarena
