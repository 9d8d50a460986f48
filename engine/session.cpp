// session.cpp: see session.h.
#include "session.h"

#include <algorithm>
#include <chrono>

#include "engine-error.h"
#include "kv/kv-confidence.h"
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

// The KV runtime of a session: its policy, or without one the plain cache (`full` over
// an F32 store); the model shape is the session's to fill in.
std::unique_ptr<kv_runtime> make_runtime(const model& m, const session_options& o) {
  kv_runtime_config rc;
  rc.policy = o.kv_policy.empty() ? "full" : o.kv_policy;
  rc.f32 = o.kv_policy.empty();
  rc.reference = o.reference;
  rc.options = o.kv;
  rc.options.n_layers = m.config.n_layers;
  rc.options.n_heads = m.config.n_heads;
  rc.options.n_kv_heads = m.config.n_kv_heads;
  rc.options.head_dim = m.config.head_dim;
  if (!m.config.layer_swa.empty())  // the model's sliding-window layers (gemma3)
    for (int64_t l = 0; l < m.config.n_layers; ++l) rc.layer_window.push_back(m.config.layer_window(l));
  rc.attn_softcap = m.config.attn_logit_softcap;
  rc.max_chunk = std::min(o.prefill_chunk, o.n_ctx);
  rc.overlap = o.kv_overlap;
  return make_kv_runtime(rc);
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

session::session(const model& m, const session_options& opt)
    : model_(m), opt_(checked(m, opt)),
      state_(std::make_unique<forward_state>(m, forward_opts(opt_))),
      logits_(size_t(m.config.n_vocab)),
      weights_bytes_(m.weight_bytes()) {
  state_->kvr = make_runtime(m, opt_);
}

const kv_runtime* session::kv() const { return opt_.kv_policy.empty() ? nullptr : state_->kvr.get(); }
const kv_policy* session::policy() const { return opt_.kv_policy.empty() ? nullptr : &state_->kvr->policy(); }

void session::append(std::span<const int32_t> tokens) { append_tokens(tokens, false); }

void session::append_decode(int32_t token) { append_tokens(std::span<const int32_t>(&token, 1), true); }

void session::append_tokens(std::span<const int32_t> tokens, bool decode) {
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
  forward_chunks(tokens, decode);
}

void session::forward_chunks(std::span<const int32_t> tokens, bool decode) {
  const int64_t n = int64_t(tokens.size());
  const int64_t V = model_.config.n_vocab;
  kv_runtime& kvr = *state_->kvr;
  const int64_t chunk = std::min(state_->options().max_chunk, kvr.max_chunk());
  // A decode step's confidence is that of the logits it produces: a policy gated on it
  // trims this step's cache with it (kv_runtime::end_forward).
  const bool want_conf = decode && (opt_.track_confidence || kvr.needs().logits_confidence);
  for (int64_t i0 = 0; i0 < n; i0 += chunk) {
    const int64_t k = std::min(chunk, n - i0);
    const bool final_chunk = i0 + k == n;
    logits_mode mode = final_chunk ? logits_mode::last : logits_mode::none;
    float* out = logits_.data();
    if (opt_.all_logits) {
      mode = logits_mode::all;
      out = all_logits_.data() + size_t(n_past_) * size_t(V);
    }
    step_signals sig;
    sig.decode = decode;
    const auto t0 = std::chrono::steady_clock::now();
    kvr.begin_forward(sig, n_past_, k);
    forward(model_, *state_, tokens.data() + i0, k, n_past_, mode, out);
    n_past_ += k;
    const float conf = want_conf && final_chunk ? confidence_from_logits(logits(), V) : -1.f;
    const double ms = ms_since(t0);
    last_step_ = kvr.end_forward(ms, conf);
    if (on_step_) on_step_(last_step_);
  }
}


const float* session::logits() const {
  if (n_past_ == 0) throw engine_error("no logits yet: append at least one token first");
  if (opt_.all_logits) return all_logits_.data() + size_t(n_past_ - 1) * size_t(n_vocab());
  return logits_.data();
}


void session::reset() {
  n_past_ = 0;
  all_logits_.clear();
  state_->kvr->reset();
  last_step_ = {};
}

memory_stats session::memory() const {
  memory_stats m;
  m.weights_bytes = weights_bytes_;
  const kv_runtime* r = state_->kvr.get();
  m.kv_bytes = r->device_bytes();
  m.kv_peak_bytes = r->peak_device_bytes();
  m.kv_host_bytes = r->host_bytes();
  m.kv_host_peak_bytes = r->peak_host_bytes();
  m.kv_logical_bytes = r->logical_bytes();
  m.kv_logical_peak_bytes = r->peak_logical_bytes();
  m.scratch_bytes = state_->scratch_bytes() + (logits_.size() + all_logits_.capacity()) * sizeof(float);
  m.peak_total_bytes = m.weights_bytes + m.kv_peak_bytes + m.scratch_bytes;
  return m;
}


}  // namespace kvarena
