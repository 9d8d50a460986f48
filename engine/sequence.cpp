// sequence.cpp: generate() over any backend, the stop-string cut, and the backend table.
#include "sequence.h"

#include <algorithm>
#include <chrono>
#include <mutex>

#include "engine-error.h"
#include "process-memory.h"
#include "session.h"
#include "tokenizer.h"

namespace kvarena {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

struct backend_table {
  std::mutex mu;
  std::vector<backend_entry> entries;
  backend_table() {
    entries.push_back({"cpu", [] {}, [](const model& m, const session_options& o) -> std::unique_ptr<sequence> {
                         return std::make_unique<session>(m, o);
                       }});
  }
};

backend_table& table() {
  static backend_table t;
  return t;
}

const backend_entry& find_backend(std::string_view name) {
  backend_table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  for (const backend_entry& b : t.entries)
    if (b.name == name) return b;
  if (name == "cuda")
    throw backend_error("--backend cuda: this kvarena was built without CUDA (configure with -DKVARENA_CUDA=ON)");
  std::string names;
  for (const backend_entry& b : t.entries) names += (names.empty() ? "" : ", ") + b.name;
  throw backend_error("unknown backend '" + std::string(name) + "' (valid: " + names + ", cuda)");
}

}  // namespace

int32_t sequence::choose_next(sampler& s) { return s.sample(next_logits(), n_vocab()); }

generate_result generate(sequence& seq, const tokenizer& tok, std::span<const int32_t> prompt,
                         const generate_options& opt, sampler& s) {
  generate_result r;
  auto t0 = std::chrono::steady_clock::now();
  seq.append(prompt);
  r.n_prompt = int64_t(prompt.size());
  if (seq.n_past() == 0) throw engine_error("generate needs a non-empty prompt (or tokens appended before)");
  seq.synchronize();
  r.prompt_ms = ms_since(t0);

  t0 = std::chrono::steady_clock::now();
  r.stop_reason = "length";
  for (int64_t step = 0; step < opt.max_tokens; ++step) {
    if (seq.n_past() >= seq.n_ctx()) {
      r.stop_reason = "context";
      break;
    }
    const int32_t id = seq.choose_next(s);
    // End of generation: EOS, or any control token (Llama-3's <|eot_id|> and ChatML's
    // <|im_end|> are control tokens that are not the vocabulary's EOS).
    if (opt.stop_at_eos && (id == tok.eos_id() || tok.is_control(id))) {
      r.stop_reason = "eos";
      break;
    }
    r.tokens.push_back(id);
    seq.append_decode(id);

    const size_t old = r.text.size();
    r.text += tok.token_to_piece(id);
    const size_t cut = stop_string_cut(r.text, old, opt.stop);
    if (cut != std::string::npos) {
      r.text.resize(cut);
      r.stop_reason = "stop";
      break;
    }
    if (opt.on_token && !opt.on_token(r)) {
      r.stop_reason = "cancelled";
      break;
    }
  }
  seq.synchronize();
  r.generate_ms = ms_since(t0);
  return r;
}

size_t stop_string_cut(const std::string& text, size_t old, const std::vector<std::string>& stops) {
  size_t max_stop = 0;
  for (const auto& st : stops) max_stop = std::max(max_stop, st.size());
  // A stop string may end inside the new piece or straddle the previous one: search only
  // where a new match can start, and cut at the earliest.
  const size_t from = old >= max_stop ? old - max_stop + 1 : 0;
  size_t cut = std::string::npos;
  for (const auto& st : stops) {
    if (st.empty()) continue;
    const size_t p = text.find(st, from);
    if (p != std::string::npos) cut = std::min(cut, p);
  }
  return cut;
}

void register_backend(backend_entry b) {
  backend_table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  for (backend_entry& e : t.entries)
    if (e.name == b.name) {
      e = std::move(b);
      return;
    }
  t.entries.push_back(std::move(b));
}

std::vector<std::string> backend_names() {
  backend_table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  std::vector<std::string> out;
  for (const backend_entry& b : t.entries) out.push_back(b.name);
  return out;
}

void check_backend(std::string_view name) {
  const backend_entry& b = find_backend(name);
  if (b.check) b.check();
}

std::unique_ptr<sequence> make_sequence(std::string_view backend, const model& m, const session_options& opt) {
  return find_backend(backend).make(m, opt);
}

size_t process_peak_bytes(const sequence& s) {
  size_t b = process_peak_rss_bytes();
  if (std::string_view(s.backend()) != "cpu") b += s.memory().peak_total_bytes;
  return b;
}

}  // namespace kvarena
