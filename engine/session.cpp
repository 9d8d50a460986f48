// session.cpp: see session.h.
#include "session.h"

#include <algorithm>
#include <chrono>

#include "engine-error.h"
#include "tokenizer.h"

namespace kvarena {

namespace {

session_options checked(const model& m, session_options o) {
  if (o.n_threads < 1) throw engine_error("session: n_threads must be >= 1, got " + std::to_string(o.n_threads));
  if (o.prefill_chunk < 1) {
    throw engine_error("session: prefill_chunk must be >= 1, got " + std::to_string(o.prefill_chunk));
  }
  if (o.n_ctx < 0) throw engine_error("session: n_ctx must be >= 0 (0 = the model's), got " + std::to_string(o.n_ctx));
  if (o.n_ctx == 0) o.n_ctx = m.config.n_ctx;
  if (m.config.arch == model_arch::gpt2 && o.n_ctx > m.config.n_ctx) {
    throw engine_error(m.path + ": n_ctx " + std::to_string(o.n_ctx) +
                       " exceeds the model's position table (" + std::to_string(m.config.n_ctx) +
                       " positions)");
  }
  return o;
}

forward_options forward_opts(const session_options& o) {
  forward_options f;
  f.n_threads = o.n_threads;
  f.max_chunk = std::min(o.prefill_chunk, o.n_ctx);
  f.max_tokens = o.n_ctx;
  f.reference = o.reference;
  f.gelu_f16_table = o.gelu_f16_table;
  return f;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

session::session(const model& m, const session_options& opt)
    : model_(m), opt_(checked(m, opt)),
      state_(std::make_unique<forward_state>(m, forward_opts(opt_))),
      logits_(size_t(m.config.n_vocab)),
      weights_bytes_(m.weight_bytes()) {}

void session::append(std::span<const int32_t> tokens) {
  const int64_t n = int64_t(tokens.size());
  if (n == 0) return;
  const int64_t V = model_.config.n_vocab;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= V) {
      throw engine_error("token id " + std::to_string(tokens[i]) + " (at index " + std::to_string(i) +
                         ") is out of range: the model has n_vocab = " + std::to_string(V));
    }
  }
  if (n_past_ + n > opt_.n_ctx) {
    throw engine_error("context overflow: " + std::to_string(n_past_) + " tokens + " + std::to_string(n) +
                       " new > n_ctx = " + std::to_string(opt_.n_ctx) +
                       " (start a new session or raise n_ctx)");
  }
  if (opt_.all_logits) all_logits_.resize(size_t(n_past_ + n) * size_t(V));

  const int64_t chunk = state_->options().max_chunk;
  for (int64_t i0 = 0; i0 < n; i0 += chunk) {
    const int64_t k = std::min(chunk, n - i0);
    const bool final_chunk = i0 + k == n;
    logits_mode mode = final_chunk ? logits_mode::last : logits_mode::none;
    float* out = logits_.data();
    if (opt_.all_logits) {
      mode = logits_mode::all;
      out = all_logits_.data() + size_t(n_past_) * size_t(V);
    }
    forward(model_, *state_, tokens.data() + i0, k, n_past_, mode, out);
    n_past_ += k;
  }
}

const float* session::logits() const {
  if (n_past_ == 0) throw engine_error("no logits yet: append at least one token first");
  if (opt_.all_logits) return all_logits_.data() + size_t(n_past_ - 1) * size_t(n_vocab());
  return logits_.data();
}

int32_t session::decode_next(sampler& s) {
  const int32_t tok = s.sample(logits(), n_vocab());
  append(std::span<const int32_t>(&tok, 1));
  return tok;
}

generate_result session::generate(const tokenizer& tok, std::span<const int32_t> prompt,
                                  const generate_options& opt, sampler& s) {
  generate_result r;
  auto t0 = std::chrono::steady_clock::now();
  append(prompt);
  r.n_prompt = int64_t(prompt.size());
  r.prompt_ms = ms_since(t0);
  if (n_past_ == 0) throw engine_error("generate needs a non-empty prompt (or tokens appended before)");

  size_t max_stop = 0;
  for (const auto& st : opt.stop) max_stop = std::max(max_stop, st.size());
  t0 = std::chrono::steady_clock::now();
  r.stop_reason = "length";
  for (int64_t step = 0; step < opt.max_tokens; ++step) {
    if (n_past_ >= opt_.n_ctx) {
      r.stop_reason = "context";
      break;
    }
    const int32_t id = s.sample(logits(), n_vocab());
    // End of generation: EOS, or any control token (Llama-3's <|eot_id|> and ChatML's
    // <|im_end|> are control tokens that are not the vocabulary's EOS).
    if (opt.stop_at_eos && (id == tok.eos_id() || tok.is_control(id))) {
      r.stop_reason = "eos";
      break;
    }
    r.tokens.push_back(id);
    append(std::span<const int32_t>(&id, 1));

    const size_t old = r.text.size();
    r.text += tok.token_to_piece(id);
    // A stop string may end inside this piece or straddle the previous one: search only
    // where a new match can start, and cut at the earliest.
    size_t cut = std::string::npos;
    const size_t from = old >= max_stop ? old - max_stop + 1 : 0;
    for (const auto& st : opt.stop) {
      if (st.empty()) continue;
      const size_t p = r.text.find(st, from);
      if (p != std::string::npos) cut = std::min(cut, p);
    }
    if (cut != std::string::npos) {
      r.text.resize(cut);
      r.stop_reason = "stop";
      break;
    }
  }
  r.generate_ms = ms_since(t0);
  return r;
}

void session::reset() {
  n_past_ = 0;
  all_logits_.clear();
  state_->kv.clear();
}

memory_stats session::memory() const {
  memory_stats m;
  m.weights_bytes = weights_bytes_;
  m.kv_bytes = state_->kv.bytes();
  m.kv_peak_bytes = state_->kv.peak_bytes();
  m.scratch_bytes = state_->scratch_bytes() + (logits_.size() + all_logits_.capacity()) * sizeof(float);
  m.peak_total_bytes = m.weights_bytes + m.kv_peak_bytes + m.scratch_bytes;
  return m;
}

}  // namespace kvarena
