// agent-model-engine.cpp: the embedded engine as the agent's model (agent-model.h): one
// engine session per episode under the item's KV policy. History mode last resets it at
// every step (the prompt is first); full appends only the continuation. Each step's
// prompt text is encoded with parse_special (BOS on a first prompt), generated with the
// template's and the run's stop strings, and metered (kv-meter.h): the step's KV figures,
// the episode's peaks and KV trace.
#include <algorithm>
#include <optional>
#include <stdexcept>

#include "agent-loop.h"
#include "agent-model.h"
#include "kv-meter.h"
#include "process-memory.h"

namespace kvarena {

namespace {

class engine_episode final : public episode_model {
 public:
  engine_episode(const agent_config& cfg, const model_context& mc)
      : cfg_(cfg), mc_(mc), meter_(cfg.trace_every, cfg.max_trace_points) {
    if (!mc_.llm || !mc_.tok) throw std::invalid_argument("model_context has no model or no tokenizer");
    session_options so = mc_.session;
    so.track_confidence = true;  // a step's confidence is a recorded column
    session_ = make_sequence(mc_.backend, *mc_.llm, so);
    session_->on_step([this](const kv_step_stats& s) { meter_.on_forward(s); });
    sampler_.emplace(mc_.sampling);
    generate_.max_tokens = cfg_.max_new_tokens;
    generate_.stop = mc_.chat.stop_strings();
    generate_.stop.insert(generate_.stop.end(), cfg_.stop.begin(), cfg_.stop.end());
  }

  std::optional<std::string> prompt(const model_prompt& p, episode_result& r) override {
    if (p.text->first) session_->reset();
    step_ = p.step;
    tokens_ = mc_.tok->encode(p.text->text, /*add_bos=*/p.text->first, /*parse_special=*/true);
    const int64_t need = session_->n_past() + static_cast<int64_t>(tokens_.size()) + cfg_.max_new_tokens;
    if (need <= session_->n_ctx()) return std::nullopt;
    if (p.step == 0) {
      // Nothing ran: the model cannot do this task with these settings; an error row, not
      // a "done" row of zero steps that would count as the policy's failure.
      throw std::runtime_error(
          "the first prompt (" + std::to_string(tokens_.size()) + " tokens, " + std::to_string(p.obs_tokens) +
          " of them the observation) + max_new_tokens " + std::to_string(cfg_.max_new_tokens) +
          " does not fit n_ctx " + std::to_string(session_->n_ctx()) +
          ": raise --ctx (the model's context length is " + std::to_string(mc_.llm->config.n_ctx) +
          ") or lower --max-obs-tokens (now " +
          (cfg_.max_obs_tokens > 0 ? std::to_string(cfg_.max_obs_tokens) : std::string("0, no limit")) +
          ") or --max-new-tokens");
    }
    r.end_reason = "Context full: " + std::to_string(session_->n_past()) + " tokens + " +
                   std::to_string(tokens_.size()) + " new + max_new_tokens " + std::to_string(cfg_.max_new_tokens) +
                   " > n_ctx " + std::to_string(session_->n_ctx());
    return early_stop_answer(r.end_reason);
  }

  void reply(step_record& rec) override {
    meter_.begin_step(step_);
    const generate_result g = generate(*session_, *mc_.tok, tokens_, generate_, *sampler_);
    const step_kv kv = meter_.end_step(*session_, static_cast<int64_t>(tokens_.size() + g.tokens.size()));
    rec.output = g.text;
    rec.prompt_tokens = static_cast<int64_t>(tokens_.size());
    rec.generated_tokens = static_cast<int64_t>(g.tokens.size());
    rec.gen_stop = g.stop_reason;
    rec.kv_tokens = kv.kv_tokens;
    rec.seq_len = kv.seq_len;
    rec.kv_bytes = kv.kv_bytes;
    rec.kv_host_bytes = kv.kv_host_bytes;
    rec.kv_logical_bytes = kv.kv_logical_bytes;
    rec.process_bytes = process_rss_bytes();
    rec.confidence = kv.confidence;
    rec.budget = kv.budget;
    rec.prefill_ms = g.prompt_ms;
    rec.decode_ms = g.generate_ms;
    rec.latency_ms = g.prompt_ms + g.generate_ms;
  }

  void collect(episode_result& r) override {
    r.peak_kv_bytes = meter_.peak_kv_bytes();
    r.peak_kv_host_bytes = meter_.peak_kv_host_bytes();
    const memory_stats m = session_->memory();
    r.peak_kv_bytes = std::max(r.peak_kv_bytes, m.kv_peak_bytes);
    r.peak_kv_host_bytes = std::max(r.peak_kv_host_bytes, m.kv_host_peak_bytes);
    r.peak_device_bytes = m.weights_bytes + r.peak_kv_bytes + m.scratch_bytes;
    r.peak_kv_logical_bytes = std::max(meter_.peak_kv_logical_bytes(), m.kv_logical_peak_bytes);
    // The process's resident high-water since run_episode reset it; on a GPU backend the
    // device's allocated high-water (memory_stats::peak_total_bytes there) is added.
    r.peak_process_bytes = process_peak_bytes(*session_);
    r.kv_trace = meter_.trace();
  }

 private:
  const agent_config& cfg_;
  const model_context& mc_;
  kv_meter meter_;                     // before session_: the session's callback points here
  std::unique_ptr<sequence> session_;  // the model's sequence on mc_.backend
  std::optional<sampler> sampler_;
  generate_options generate_;          // the step's token limit and stop strings
  std::vector<int32_t> tokens_;        // the prompt taken last
  int step_ = 0;
};

class engine_agent_model final : public agent_model {
 public:
  std::unique_ptr<episode_model> start_episode(const agent_config& cfg, const model_context& mc) const override {
    return std::make_unique<engine_episode>(cfg, mc);
  }
};

}  // namespace

std::shared_ptr<const agent_model> make_engine_agent_model() { return std::make_shared<engine_agent_model>(); }

}  // namespace kvarena
