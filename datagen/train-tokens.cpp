// train-tokens.cpp: see train-tokens.h.
#include "train-tokens.h"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "eval/action-parse.h"
#include "tokenizer.h"

namespace kvarena {

std::optional<std::pair<size_t, size_t>> action_free_text_span(std::string_view reply) {
  const bool fenced = reply.find("```") != std::string_view::npos;
  const action_parse_result r = fenced ? parse_model_output(reply) : parse_action(reply);
  if (!r.ok() || r.free_text_begin == r.free_text_end) return std::nullopt;
  return std::make_pair(r.free_text_begin, r.free_text_end);
}

std::optional<std::pair<size_t, size_t>> note_line_span(std::string_view reply) {
  if (reply.substr(0, 6) != "NOTE: " && reply.substr(0, 6) != "NOTE [") return std::nullopt;
  const size_t end = reply.find('\n');
  if (end == std::string_view::npos) return std::nullopt;
  return std::make_pair(size_t{0}, end);
}

void encode_sequence(const train_sequence& q, const tokenizer& tok, std::vector<uint16_t>* ids,
                     std::vector<uint8_t>* mask) {
  for (size_t i = 0; i < q.segments.size(); ++i) {
    const train_segment& s = q.segments[i];
    const std::vector<int32_t> seg_ids = tok.encode(s.text, /*add_bos=*/i == 0, /*parse_special=*/true);
    std::vector<uint8_t> seg_mask(seg_ids.size(), s.target ? 1 : 0);
    std::vector<std::pair<size_t, size_t>> spans;
    if (s.target)
      for (const auto& span : {note_line_span(s.text), action_free_text_span(s.text)})
        if (span) spans.push_back(*span);
    if (!spans.empty()) {
      // Byte offsets of the pieces; a BOS the encoder added has no bytes of the text.
      const size_t first = (i == 0 && tok.adds_bos() && !seg_ids.empty() && seg_ids[0] == tok.bos_id()) ? 1 : 0;
      std::vector<size_t> at(seg_ids.size() + 1, 0);
      for (size_t k = first; k < seg_ids.size(); ++k) at[k + 1] = at[k] + tok.token_to_piece(seg_ids[k]).size();
      if (at.back() == s.text.size())  // the pieces spell the text: mark those inside the span
        for (size_t k = first; k < seg_ids.size(); ++k)
          for (const auto& [from, to] : spans)
            if (at[k] < to && at[k + 1] > from) seg_mask[k] = 2;
    }
    for (size_t k = 0; k < seg_ids.size(); ++k) {
      ids->push_back(static_cast<uint16_t>(seg_ids[k]));
      mask->push_back(seg_mask[k]);
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
