// cuda-backend.cpp: see cuda-backend.h.
#include "cuda-backend.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>

#include "cuda-check.h"
#include "cuda-forward.h"
#include "decode-batcher.h"
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
  std::once_flag batcher_once;
  std::unique_ptr<decode_batcher> batcher;  // sequences made with decode_batch > 1 (--batch)
};

// How long a queued decode step waits for the other members' before its batch runs.
constexpr std::chrono::microseconds k_batch_wait{1000};

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
      : shared_(engine_for(m)), session_(*shared_->engine, options(o, shared_->engine->options().max_chunk)) {
    if (o.decode_batch > 1) {
      shared_engine* se = shared_.get();
      std::call_once(se->batcher_once, [se] {
        se->batcher = std::make_unique<decode_batcher>(
            int(se->engine->options().max_batch), k_batch_wait,
            [se](const std::vector<decode_batcher::request>& rs) { run_batch(*se, rs); });
      });
      shared_->batcher->join();
      batched_ = true;
    }
  }
  ~cuda_backend_sequence() override {
    if (batched_) shared_->batcher->leave();
  }

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
    if (batched_) {
      session_.check_room(1);  // a full context fails this sequence alone, not its batch
      shared_->batcher->decode(this, token);  // run_batch: this sequence's step, batched with others'
      report(true, 1, t0);
      return;
    }
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

  // One batched decode step for the requests (cuda_backend_sequence*, token): sequences the
  // engine can step together (all under policies, or plain caches of one capacity) go
  // through forward_batch in groups of at most max_batch; each copies its logits row out.
  static void run_batch(shared_engine& se, const std::vector<decode_batcher::request>& rs) {
    std::lock_guard<std::mutex> lock(se.mu);
    cuda_engine& e = *se.engine;
    std::map<int64_t, std::vector<const decode_batcher::request*>> groups;  // -1: policies; else capacity
    for (const auto& r : rs) {
      auto* s = static_cast<cuda_backend_sequence*>(r.seq);
      s->session_.check_room(1);
      groups[s->session_.sequence().kv() ? -1 : s->session_.n_ctx()].push_back(&r);
    }
    const size_t max_b = size_t(e.options().max_batch);
    for (const auto& [key, members] : groups) {
      for (size_t i0 = 0; i0 < members.size(); i0 += max_b) {
        const size_t n = std::min(max_b, members.size() - i0);
        std::vector<cuda_sequence*> seqs;
        std::vector<int32_t> tokens;
        std::vector<step_signals> sigs(n);
        for (size_t k = 0; k < n; ++k) {
          auto* s = static_cast<cuda_backend_sequence*>(members[i0 + k]->seq);
          seqs.push_back(&s->session_.sequence_for_batch());
          tokens.push_back(members[i0 + k]->token);
          sigs[k].decode = true;
        }
        e.forward_batch(seqs, tokens.data(), true, &sigs);
        for (size_t k = 0; k < n; ++k) {
          auto* s = static_cast<cuda_backend_sequence*>(members[i0 + k]->seq);
          s->logits_.resize(size_t(e.config().n_vocab));
          e.logits(int64_t(k), s->logits_.data());
        }
      }
    }
  }

  bool batched_ = false;
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
