// serve-scheduler.h: runs the admitted requests of `kvarena serve` on the engine. --parallel N
// workers, each one sequence at a time (make_sequence under the request's KV policy, with
// decode_batch N: on a device backend the N sequences' decode steps run as one batched
// forward call, engine/decode-batcher.h; on the CPU the N sequences share the threads, each
// threads / N). At most `queue` requests wait for a worker: one more is refused (submit
// returns false -> 503). A request is stopped when its client goes away (cancel) or its
// deadline passes; a cancelled request that still waits leaves the queue at once.
// Not here: HTTP, JSON (serve-routes.cpp).
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kv/kv-policy-registry.h"
#include "memory-stats.h"
#include "model.h"
#include "sampler.h"
#include "sequence.h"
#include "tokenizer.h"

namespace kvarena::serve {

using serve_clock = std::chrono::steady_clock;

// What a finished request reports (usage and the finish).
struct serve_outcome {
  generate_result result;             // text, tokens, stop_reason, prompt and generate ms
  int64_t prompt_tokens = 0;
  std::string finish;                 // OpenAI's finish_reason: "stop" or "length"
  std::string stop_reason;            // kvarena's: eos, stop, length, context, deadline
  size_t peak_kv_logical_bytes = 0;   // memory_stats::kv_logical_peak_bytes of the sequence
  size_t peak_kv_bytes = 0;           // memory_stats::kv_peak_bytes (allocated, device side)
  int64_t kv_kept_tokens = -1;        // tokens kept per KV head after the last step (max over layers)
  double queue_ms = 0;                // admitted -> a worker took it
  int error_status = 0;               // > 0: no result; the HTTP status (504 deadline, 500 engine)
  std::string error;
};

struct serve_job {
  std::vector<int32_t> prompt;        // (n_prompt,) token ids, BOS included where the model wants it
  generate_options gen;               // max_tokens, stop strings, stop_at_eos (on_token is the scheduler's)
  sampler_options sampling;
  kv_policy_spec kv;
  serve_clock::time_point admitted, deadline;
  // Called on the worker thread: after each token (the text so far), and once at the end
  // (not at all when the job was cancelled: its client is gone).
  std::function<void(const generate_result&)> on_token;
  std::function<void(const serve_outcome&)> on_done;
  std::atomic<bool> cancelled{false};
};

struct scheduler_options {
  std::string backend = "cpu";
  int parallel = 1;     // requests decoding at once
  int queue = 16;       // requests waiting at most
  int threads = 2;      // engine threads in all (CPU: each sequence gets threads / parallel, >= 1)
  int64_t n_ctx = 0;    // context per sequence; 0: the model's
};

class serve_scheduler {
 public:
  serve_scheduler(const model& m, const tokenizer& tok, scheduler_options opt);
  ~serve_scheduler();  // stop()
  serve_scheduler(const serve_scheduler&) = delete;
  serve_scheduler& operator=(const serve_scheduler&) = delete;

  // Queues the job; false when `queue` jobs already wait (and every worker is busy).
  bool submit(std::shared_ptr<serve_job> job);
  // The job's client went away: it stops at its next token, or leaves the queue now.
  void cancel(const std::shared_ptr<serve_job>& job);
  // Cancels everything, joins the workers. Idempotent.
  void stop();

  int active() const;   // jobs on a worker now
  int queued() const;   // jobs waiting
  int64_t served() const;     // jobs a worker finished (a result, an error, or cancelled) since the start
  int64_t cancelled() const;  // requests stopped or dropped from the queue because their client went away
  const scheduler_options& options() const { return opt_; }

 private:
  void work();
  // false: the job was cancelled (its client went away) and nobody was answered.
  bool run_job(serve_job& job, std::unique_ptr<sequence>& seq, std::string& seq_key);

  const model& model_;
  const tokenizer& tok_;
  scheduler_options opt_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<serve_job>> queue_;
  std::vector<std::shared_ptr<serve_job>> running_;
  bool stopping_ = false;
  int64_t served_ = 0, cancelled_ = 0;
  std::vector<std::thread> workers_;
};

}  // namespace kvarena::serve
