// kv-attention-cpu.h: the CPU attention kernel over the kv_store's memory: FP16 rows (F32
// rows in an F32 store) and INT8 rows (per-channel scale per block of 32 tokens) dequantised inside the kernel, GQA
// (query head h reads KV head h / group), and, only when asked, the per-key attention
// probability mass the eviction policies rank by. A KV head's tokens come as an ordered
// list of spans (the store's INT8 segment, its FP16 segment, FreeKV's page slots), all in
// position order, so causality is by index: the last n_q tokens are the queries' own.
// ref::kv_attend is the plain-loop version tests compare with; kv-attention-ref.h is the
// independent position-based reference over the store itself.
#pragma once
#include <cstdint>
#include <vector>

#include "thread-pool.h"
#include "kv-store.h"

namespace kvarena {

// One contiguous run of n tokens of one KV head: FP16, F32 or INT8 (exactly one kind set).
struct kv_span {
  int64_t n = 0;
  const uint16_t* k16 = nullptr;     // fp16: (n, head_dim) keys, token-major
  const uint16_t* v16 = nullptr;     // fp16: (n, head_dim) values
  const float* k32 = nullptr;        // f32 (the F32 store): (n, head_dim) keys
  const float* v32 = nullptr;        // f32: (n, head_dim) values
  const int8_t* kq = nullptr;        // int8 (when set): (n, head_dim) keys
  const int8_t* vq = nullptr;        // int8: (n, head_dim) values
  const int32_t* block = nullptr;    // int8: (n,) scale block of each token
  const float* k_scale = nullptr;    // int8: (n_blocks, head_dim), x = q * scale[block][c]
  const float* v_scale = nullptr;    // int8: (n_blocks, head_dim)
  float* mass = nullptr;             // (n,) or nullptr: the kernel adds probability mass here
                                     // (summed over the group's query heads and the queries)
};

// All tokens one KV head attends over, spans in position order.
struct kv_attn_head {
  std::vector<kv_span> spans;
  int64_t n_tokens() const {
    int64_t n = 0;
    for (const kv_span& s : spans) n += s.n;
    return n;
  }
};

// The spans of a store head view: the INT8 segment, FP16 part 1, and FP16 part 2 when the
// FP16 ring wraps; mass included when with_mass.
kv_attn_head kv_attn_head_from_view(const kv_head_view& v, bool with_mass);

// Scratch (per thread and shared), grown on demand and kept between calls (a decode step
// allocates nothing once warm).
class kv_attend_scratch {
 public:
  size_t bytes() const;
  // Implementation-owned (layouts in kv-attention-cpu.cpp), rebuilt by every call.
  struct head_plan {
    int64_t n_tokens = 0, tok_off = 0;  // the head's tokens; its first in the flat token order
    int64_t item0 = 0, n_items = 0;     // its work items (token ranges or query blocks)
    int64_t split_len = 0, span0 = 0;   // tokens per range (split mode); first entry in span_start
    int64_t s_off = 0, s_ld = 0;        // split mode: its scores in `shared`, rows s_ld apart
  };
  std::vector<head_plan> plan;                 // (n_kv_heads,)
  std::vector<int64_t> span_start;             // (all spans,) first token of each span in its head
  std::vector<float> shared;                   // split mode: scores and partial outputs of all items
  std::vector<std::vector<float>> per_thread;  // (n_threads,) queries, outputs, tile, scores, mass sums
};

// out[i, h, :] = sum_t softmax_t(scale * q[i,h] . k[g,t]) * v[g,t] over t <= N - n_q + i,
// N = heads[g].n_tokens() (equal for every g is not required), g = h / (n_heads / heads.size()).
// q: (n_q, n_heads, head_dim), rows ldq floats apart; out: same shape, rows ldo apart.
// Spans with mass != nullptr get the probability each of their tokens received added, query
// i's weighted mass_decay^(n_q - 1 - i): 1 sums the queries (H2O); CONF-KV's EMA decay d
// gives each token sum_i d^(n_q-1-i) p_i, what n_q one-token steps of the EMA add (the
// policy then scales its old score by d^n_q), so its score does not depend on the chunking.
// mass_scale multiplies every query's weight (a call over part of a chunk's rows,
// kv-attention-window.h: the weight its rows have in the whole chunk). softcap > 0: each
// score s = scale * q . k becomes softcap * tanh(s / softcap) before the softmax (gemma2).
void kv_attend(thread_pool& pool, const std::vector<kv_attn_head>& heads, int64_t head_dim,
               const float* q, int64_t ldq, int64_t n_q, int64_t n_heads, float scale, float* out,
               int64_t ldo, kv_attend_scratch& scratch, float mass_decay = 1.0f, float mass_scale = 1.0f,
               float softcap = 0.0f);

namespace ref {
// Same contract: plain loops, one thread, double accumulation.
void kv_attend(const std::vector<kv_attn_head>& heads, int64_t head_dim, const float* q,
               int64_t ldq, int64_t n_q, int64_t n_heads, float scale, float* out, int64_t ldo,
               float mass_decay = 1.0f, float mass_scale = 1.0f, float softcap = 0.0f);
}  // namespace ref

}  // namespace kvarena
