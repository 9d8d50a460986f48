// kv-meter.h: the KV cache as an episode sees it, from the session's per-forward-call
// statistics (session::on_step): per agent step the kept tokens, bytes, budget and mean
// decode confidence; the episode's peaks; and a sampled trace (every prefill chunk, every
// `trace_every`-th decode step, and the last forward call of each step). When the trace
// reaches `max_points` it keeps every other point and samples decode steps half as often,
// so a long task stays small.
// Works also with an engine that reports no step statistics: the step's end is then read
// from the session itself (n_past, memory()).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "episode-result.h"
#include "kv/kv-runtime.h"

namespace kvarena {

class sequence;

struct step_kv {
  int64_t kv_tokens = 0;
  int64_t seq_len = 0;
  size_t kv_bytes = 0;
  size_t kv_host_bytes = 0;
  size_t kv_logical_bytes = 0;
  float confidence = -1.f;  // mean over the step's decode calls that computed one
  int64_t budget = -1;
};

class kv_meter {
 public:
  explicit kv_meter(int trace_every = 8, size_t max_points = 4096);

  void begin_step(int step);
  void on_forward(const kv_step_stats& s);  // install with session::on_step
  // After the step's model call; n_tokens: tokens the call ran (prompt + generated), used
  // only when the session reported no forward calls.
  step_kv end_step(const sequence& s, int64_t n_tokens);

  size_t peak_kv_bytes() const { return peak_kv_bytes_; }
  size_t peak_kv_host_bytes() const { return peak_kv_host_bytes_; }
  size_t peak_kv_logical_bytes() const { return peak_kv_logical_bytes_; }
  const std::vector<kv_trace_point>& trace() const { return trace_; }

 private:
  kv_trace_point point_of(const kv_step_stats& s) const;
  void push(const kv_trace_point& p);

  int64_t stride_;
  size_t max_points_;
  int step_ = 0;
  int64_t calls_ = 0, tokens_ = 0;
  // this step
  int64_t step_calls_ = 0;
  double conf_sum_ = 0;
  int64_t conf_n_ = 0;
  kv_step_stats last_;
  bool last_traced_ = false;
  size_t peak_kv_bytes_ = 0, peak_kv_host_bytes_ = 0, peak_kv_logical_bytes_ = 0;
  std::vector<kv_trace_point> trace_;
};

}  // namespace kvarena
