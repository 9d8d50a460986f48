// cuda-backend.cpp: see cuda-backend.h.
#include "cuda-backend.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>

#include "cuda-check.h"
#include "cuda-forward.h"
#include "engine-error.h"
#include "sequence.h"
#include "session.h"

namespace kvarena {
namespace {

// One device copy of each model's weights while some sequence uses it. The engine keeps
// the last forward call's logits, so sequences sharing it (--jobs) take turns under its
// mutex and copy their logits out before letting go.
struct shared_engine {
  std::unique_ptr<cuda_engine> engine;
  std::mutex mu;
};

std::shared_ptr<shared_engine> engine_for(const model& m) {
  static std::mutex mu;
  static std::map<const model*, std::weak_ptr<shared_engine>> engines;
  std::lock_guard<std::mutex> lock(mu);
  if (auto e = engines[&m].lock()) return e;
  cuda_engine_options eo;
  eo.max_chunk = 512;
  auto e = std::make_shared<shared_engine>();
  e->engine = std::make_unique<cuda_engine>(m, eo);
  engines[&m] = e;
  return e;
}

class cuda_backend_sequence final : public sequence {
 public:
  cuda_backend_sequence(const model& m, const session_options& o)
      : shared_(engine_for(m)), session_(*shared_->engine, options(o, shared_->engine->options().max_chunk)) {}

  void append(std::span<const int32_t> tokens) override {
    const auto t0 = std::chrono::steady_clock::now();
    {
      std::lock_guard<std::mutex> lock(shared_->mu);
      session_.append(tokens);
      logits_ = session_.logits();  // synchronises; the next sequence's call overwrites the engine's
    }
    report(false, static_cast<int64_t>(tokens.size()), t0);
  }
  void append_decode(int32_t token) override {
    const auto t0 = std::chrono::steady_clock::now();
    {
      std::lock_guard<std::mutex> lock(shared_->mu);
      session_.append_decode(token);
      logits_ = session_.logits();
    }
    report(true, 1, t0);
  }
  const float* next_logits() override {
    if (session_.n_past() == 0) throw engine_error("cuda sequence: no logits before the first token");
    return logits_.data();
  }
  int64_t n_past() const override { return session_.n_past(); }
  int64_t n_ctx() const override { return session_.n_ctx(); }
  int64_t n_vocab() const override { return shared_->engine->config().n_vocab; }
  void reset() override {
    std::lock_guard<std::mutex> lock(shared_->mu);
    session_.reset();
    last_ = {};
    steps_ = 0;
  }
  memory_stats memory() const override { return session_.memory(); }
  const kv_step_stats& last_step() const override { return last_; }
  void on_step(std::function<void(const kv_step_stats&)> fn) override { on_step_ = std::move(fn); }
  void synchronize() override { shared_->engine->synchronize(); }
  const char* backend() const override { return "cuda"; }

 private:
  static cuda_session_options options(const session_options& o, int64_t max_chunk) {
    cuda_session_options c;
    c.n_ctx = o.n_ctx;
    c.prefill_chunk = std::min(o.prefill_chunk, max_chunk);
    c.kv_policy = o.kv_policy;
    c.kv = o.kv;
    c.kv_overlap = o.kv_overlap;
    return c;
  }
  // The policy runtime's statistics of the call; without a policy the fields every
  // backend fills (step, decode, tokens, length, KV bytes).
  void report(bool decode, int64_t n, std::chrono::steady_clock::time_point t0) {
    ++steps_;
    if (const kv_step_stats* st = session_.last_step()) {
      last_ = *st;
    } else {
      last_ = {};
      last_.step = steps_;
      last_.decode = decode;
      last_.n_tokens = n;
      last_.seq_len = session_.n_past();
      last_.kv_device_bytes = session_.memory().kv_bytes;
      last_.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    if (on_step_) on_step_(last_);
  }

  std::shared_ptr<shared_engine> shared_;  // before session_: the session refers to its engine
  cuda_session session_;
  std::vector<float> logits_;  // (n_vocab,) of the last appended position
  kv_step_stats last_;
  int64_t steps_ = 0;
  std::function<void(const kv_step_stats&)> on_step_;
};

}  // namespace

void register_cuda_backend() {
  register_backend({"cuda",
                    [] {
                      if (cuda_device_count() == 0)
                        throw backend_error(
                            "--backend cuda: no CUDA device found (cudaGetDeviceCount reports none: no NVIDIA GPU, "
                            "driver or visible device; check nvidia-smi and CUDA_VISIBLE_DEVICES, or use --backend cpu)");
                    },
                    [](const model& m, const session_options& o) -> std::unique_ptr<sequence> {
                      return std::make_unique<cuda_backend_sequence>(m, o);
                    }});
}

}  // namespace kvarena
