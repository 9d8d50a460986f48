// serve-scheduler.cpp: the workers, the bounded queue, cancellation and deadlines
// (serve-scheduler.h).
#include "serve-scheduler.h"

#include <algorithm>
#include <cstdio>

#include "session.h"

namespace kvarena::serve {
namespace {

double ms_between(serve_clock::time_point a, serve_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

serve_scheduler::serve_scheduler(const model& m, const tokenizer& tok, scheduler_options opt)
    : model_(m), tok_(tok), opt_(std::move(opt)) {
  opt_.parallel = std::max(1, opt_.parallel);
  opt_.queue = std::max(0, opt_.queue);
  for (int i = 0; i < opt_.parallel; ++i) workers_.emplace_back([this] { work(); });
}

serve_scheduler::~serve_scheduler() { stop(); }

bool serve_scheduler::submit(std::shared_ptr<serve_job> job) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (stopping_) return false;
    if (running_.size() + queue_.size() >= size_t(opt_.parallel + opt_.queue)) return false;
    queue_.push_back(std::move(job));
  }
  cv_.notify_one();
  return true;
}

void serve_scheduler::cancel(const std::shared_ptr<serve_job>& job) {
  job->cancelled = true;
  std::lock_guard<std::mutex> lk(mu_);
  auto it = std::find(queue_.begin(), queue_.end(), job);
  if (it != queue_.end()) {
    queue_.erase(it);
    ++cancelled_;
  }
}

void serve_scheduler::stop() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
    for (auto& j : queue_) j->cancelled = true;
    for (auto& j : running_) j->cancelled = true;
    queue_.clear();
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
}

int serve_scheduler::active() const {
  std::lock_guard<std::mutex> lk(mu_);
  return int(running_.size());
}
int serve_scheduler::queued() const {
  std::lock_guard<std::mutex> lk(mu_);
  return int(queue_.size());
}
int64_t serve_scheduler::served() const {
  std::lock_guard<std::mutex> lk(mu_);
  return served_;
}
int64_t serve_scheduler::cancelled() const {
  std::lock_guard<std::mutex> lk(mu_);
  return cancelled_;
}

void serve_scheduler::work() {
  // The worker's sequence, kept between jobs under the same policy on the CPU (reset()
  // keeps its memory). A device backend's sequence is dropped after each job, so an idle
  // worker is no member its decode batcher waits for.
  std::unique_ptr<sequence> seq;
  std::string seq_key;
  for (;;) {
    std::shared_ptr<serve_job> job;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      running_.push_back(job);
    }
    const bool answered = run_job(*job, seq, seq_key);
    if (opt_.backend != "cpu") seq.reset();
    {
      std::lock_guard<std::mutex> lk(mu_);
      running_.erase(std::find(running_.begin(), running_.end(), job));
      ++served_;
      if (!answered) ++cancelled_;
    }
  }
}

bool serve_scheduler::run_job(serve_job& job, std::unique_ptr<sequence>& seq, std::string& seq_key) {
  serve_outcome out;
  const auto taken = serve_clock::now();
  out.queue_ms = ms_between(job.admitted, taken);
  out.prompt_tokens = int64_t(job.prompt.size());
  if (job.cancelled) return false;
  auto finish_error = [&](int status, std::string msg) {
    out.error_status = status;
    out.error = std::move(msg);
    if (job.on_done) job.on_done(out);
    return true;
  };
  if (taken >= job.deadline)
    return finish_error(504, "the request waited in the queue past its deadline (the server's --timeout-s); retry, or "
                             "start the server with a larger --queue bound or --timeout-s");
  try {
    session_options so;
    so.n_threads = opt_.backend == "cpu" ? std::max(1, opt_.threads / opt_.parallel) : opt_.threads;
    so.n_ctx = opt_.n_ctx;
    so.kv_policy = job.kv.name;
    so.kv = job.kv.options;
    so.kv_overlap = job.kv.overlap;
    so.decode_batch = opt_.parallel;
    const std::string key = job.kv.text + (job.kv.overlap ? "" : ":no-overlap");
    if (seq && key == seq_key) {
      seq->reset();
    } else {
      seq.reset();
      seq = make_sequence(opt_.backend, model_, so);
      seq_key = key;
    }
    const auto t0 = serve_clock::now();
    seq->append(job.prompt);
    seq->synchronize();
    const double prompt_ms = ms_between(t0, serve_clock::now());
    bool deadline_hit = false;
    generate_options gen = job.gen;
    gen.on_token = [&](const generate_result& r) {
      if (job.cancelled) return false;
      if (serve_clock::now() >= job.deadline) {
        deadline_hit = true;
        return false;
      }
      if (job.on_token) job.on_token(r);
      return true;
    };
    generate_result r;
    if (job.cancelled) return false;
    if (serve_clock::now() >= job.deadline) {
      deadline_hit = true;
      r.stop_reason = "cancelled";
    } else {
      sampler smp(job.sampling);
      r = generate(*seq, tok_, {}, gen, smp);
    }
    if (r.stop_reason == "cancelled" && !deadline_hit) return false;  // the client is gone: nobody to answer
    r.prompt_ms = prompt_ms;
    r.n_prompt = out.prompt_tokens;
    out.stop_reason = deadline_hit ? "deadline" : r.stop_reason;
    out.finish = (r.stop_reason == "eos" || r.stop_reason == "stop") ? "stop" : "length";
    const memory_stats mem = seq->memory();
    out.peak_kv_logical_bytes = mem.kv_logical_peak_bytes;
    out.peak_kv_bytes = mem.kv_peak_bytes;
    const std::vector<int64_t>& kept = seq->last_step().kept;
    if (!kept.empty()) out.kv_kept_tokens = *std::max_element(kept.begin(), kept.end());
    out.result = std::move(r);
    if (job.on_done) job.on_done(out);
    return true;
  } catch (const std::exception& e) {
    seq.reset();  // its state is unknown after a failure
    seq_key.clear();
    std::fprintf(stderr, "kvarena serve: a request failed in the engine: %s\n", e.what());
    return finish_error(500, std::string("the engine failed on this request: ") + e.what());
  }
}

}  // namespace kvarena::serve
