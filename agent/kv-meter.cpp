// kv-meter.cpp: see kv-meter.h.
#include "kv-meter.h"

#include <algorithm>

#include "sequence.h"

namespace kvarena {
namespace {

int64_t max_kept(const kv_step_stats& s) {
  if (s.kept.empty()) return s.seq_len;  // no per-layer counts: everything is kept
  return *std::max_element(s.kept.begin(), s.kept.end());
}

}  // namespace

kv_meter::kv_meter(int trace_every, size_t max_points)
    : stride_(std::max(1, trace_every)), max_points_(std::max<size_t>(2, max_points)) {}

void kv_meter::begin_step(int step) {
  step_ = step;
  step_calls_ = 0;
  conf_sum_ = 0;
  conf_n_ = 0;
  last_traced_ = false;
}

kv_trace_point kv_meter::point_of(const kv_step_stats& s) const {
  kv_trace_point p;
  p.step = step_;
  p.forward_call = calls_;
  p.token_index = tokens_;
  p.seq_len = s.seq_len;
  p.kv_tokens = max_kept(s);
  p.kv_bytes = s.kv_device_bytes;
  p.kv_host_bytes = s.kv_host_bytes;
  p.kv_logical_bytes = s.kv_logical_bytes;
  p.budget = s.budget;
  p.confidence = s.confidence;
  p.decode = s.decode;
  return p;
}

void kv_meter::push(const kv_trace_point& p) {
  if (trace_.size() >= max_points_) {
    size_t w = 0;
    for (size_t i = 0; i < trace_.size(); i += 2) trace_[w++] = trace_[i];
    trace_.resize(w);
    stride_ *= 2;
  }
  trace_.push_back(p);
}

void kv_meter::on_forward(const kv_step_stats& s) {
  ++calls_;
  ++step_calls_;
  tokens_ += s.n_tokens;
  last_ = s;
  peak_kv_bytes_ = std::max(peak_kv_bytes_, s.kv_device_bytes);
  peak_kv_host_bytes_ = std::max(peak_kv_host_bytes_, s.kv_host_bytes);
  peak_kv_logical_bytes_ = std::max(peak_kv_logical_bytes_, s.kv_logical_bytes);
  if (s.decode && s.confidence >= 0) {
    conf_sum_ += s.confidence;
    ++conf_n_;
  }
  // Every prefill chunk (a step has few: they draw the cache's growth and eviction), every
  // stride-th decode step.
  last_traced_ = !s.decode || calls_ % stride_ == 0;
  if (last_traced_) push(point_of(s));
}

step_kv kv_meter::end_step(const sequence& s, int64_t n_tokens) {
  const memory_stats mem = s.memory();
  peak_kv_bytes_ = std::max(peak_kv_bytes_, mem.kv_peak_bytes);
  peak_kv_host_bytes_ = std::max(peak_kv_host_bytes_, mem.kv_host_peak_bytes);
  peak_kv_logical_bytes_ = std::max(peak_kv_logical_bytes_, mem.kv_logical_peak_bytes);
  if (step_calls_ == 0) {
    // No statistics from the engine: the step as one forward call, read off the session.
    ++calls_;
    tokens_ += n_tokens;
    last_ = kv_step_stats{};
    last_.step = calls_;
    last_.n_tokens = n_tokens;
    last_.seq_len = s.n_past();
    last_.kv_device_bytes = mem.kv_bytes;
    last_.kv_host_bytes = mem.kv_host_bytes;
    last_.kv_logical_bytes = mem.kv_logical_bytes;
    peak_kv_bytes_ = std::max(peak_kv_bytes_, mem.kv_bytes);
    last_traced_ = false;
  }
  if (!last_traced_) push(point_of(last_));
  last_traced_ = true;

  step_kv out;
  out.kv_tokens = max_kept(last_);
  out.seq_len = last_.seq_len;
  out.kv_bytes = last_.kv_device_bytes ? last_.kv_device_bytes : mem.kv_bytes;
  out.kv_host_bytes = last_.kv_host_bytes ? last_.kv_host_bytes : mem.kv_host_bytes;
  out.kv_logical_bytes = last_.kv_logical_bytes ? last_.kv_logical_bytes : mem.kv_logical_bytes;
  out.budget = last_.budget;
  out.confidence = conf_n_ > 0 ? static_cast<float>(conf_sum_ / static_cast<double>(conf_n_)) : last_.confidence;
  return out;
}

}  // namespace kvarena
