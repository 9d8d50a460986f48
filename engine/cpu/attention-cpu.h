// attention-cpu.h: causal multi-head attention of a chunk of new queries over one layer's
// KV view, on the CPU. GQA: query head h reads KV head h / (n_heads / n_kv_heads). The
// optimised version is multi-threaded over (KV head, query block) items and uses AVX-512
// where the CPU has it; ref::attend is the plain-loop reference tests compare it with.
// Not here: where keys/values live or which are kept (the KV cache / store does that).
#pragma once
#include <cstdint>
#include <vector>

#include "thread-pool.h"

namespace kvarena {

// One layer's kept keys and values as attention reads them. Keys are stored after RoPE at
// their true positions, so attention needs no positions: causality is by index.
struct kv_view {
  const float* k = nullptr;  // (n_kv_heads, head_stride): token t of head g at k + g*head_stride + t*head_dim
  const float* v = nullptr;  // same layout as k
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t head_stride = 0;   // floats between heads (>= n_tokens * head_dim)
  int64_t n_tokens = 0;      // valid tokens per head
};

// Per-thread scratch for attend(), sized once for the largest view and chunk it will see,
// so attention allocates nothing per call.
class attention_scratch {
 public:
  attention_scratch() = default;
  // n_threads: pool size; max_tokens: largest kv_view::n_tokens; group: n_heads / n_kv_heads.
  attention_scratch(int n_threads, int64_t max_tokens, int64_t head_dim, int64_t group);
  size_t bytes() const { return buf_.size() * sizeof(float); }

  int64_t query_block() const { return query_block_; }  // queries per work item
  float* scores(int ith) { return buf_.data() + size_t(ith) * per_thread_; }  // (group*query_block, max_tokens)
  float* key_tile(int ith) { return scores(ith) + scores_floats_; }            // (head_dim, 16)
  float* query(int ith) { return key_tile(ith) + tile_floats_; }               // (group*query_block, head_dim)
  int64_t max_tokens() const { return max_tokens_; }
  int64_t head_dim() const { return head_dim_; }
  int64_t group() const { return group_; }
  int n_threads() const { return n_threads_; }

 private:
  int n_threads_ = 0;
  int64_t max_tokens_ = 0, head_dim_ = 0, group_ = 0, query_block_ = 0;
  size_t scores_floats_ = 0, tile_floats_ = 0, per_thread_ = 0;
  std::vector<float> buf_;
};

// out[i, h, :] = sum_t softmax_t(scale * q[i,h] . k[g,t]) * v[g,t]  over t <= n_tokens - n_q + i
// (query i is the i-th of the view's last n_q tokens).
// q: (n_q, n_heads, head_dim), rows q_stride floats apart; out: (n_q, n_heads, head_dim),
// rows out_stride floats apart. n_heads % view.n_kv_heads == 0, n_q <= view.n_tokens.
void attend(thread_pool& pool, const kv_view& view, const float* q, int64_t q_stride, int64_t n_q,
            int64_t n_heads, float scale, float* out, int64_t out_stride, attention_scratch& scratch);

namespace ref {
// Same contract: plain loops, one thread, max-subtracted softmax.
void attend(const kv_view& view, const float* q, int64_t q_stride, int64_t n_q, int64_t n_heads,
            float scale, float* out, int64_t out_stride);
}  // namespace ref

}  // namespace kvarena
