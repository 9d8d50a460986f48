// cuda-launch.h: the launch-configuration math of the CUDA kernels as plain functions, so
// the grid and split sizes, shared-memory budgets and the split-K merge are unit-tested on
// machines without a GPU (and the CPU emulation in cuda-ref.cpp uses the same numbers).
// KV_HD functions are compiled for both host and device: the kernels call the very same code.
#pragma once
#include <math.h>

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define KV_HD __host__ __device__
#else
#define KV_HD
#endif

namespace kvarena::cu {

constexpr int64_t k_attn_tile = 32;        // tokens per tile (one per lane in the softmax step)
constexpr int k_attn_threads = 128;        // span (decode) attention block
constexpr int k_prefill_threads = 256;     // prefill attention block
constexpr int64_t k_min_split_tokens = 256;  // split-K: fewer tokens per split is not worth a block
constexpr int64_t k_max_head_dim = 256;

KV_HD inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Split-K (flash-decoding) plan of the span attention: grid = (n_splits, n_kv, rows).
struct attn_split_plan {
  int64_t n_splits = 1;   // blocks per (KV head, query row)
  int64_t split_len = 0;  // tokens per split, a multiple of k_attn_tile
};
// max_tokens: most tokens of any head; base_blocks: n_kv * query rows; n_sm: multiprocessors.
// Aims at two blocks per SM in total, never below k_min_split_tokens per split.
attn_split_plan plan_attention_splits(int64_t max_tokens, int64_t base_blocks, int64_t n_sm);

// Tokens [begin, end) that split s covers for query row i of n_q over a head of n tokens
// (row i sees the first n - n_q + i + 1 tokens: its own position is the last it sees).
KV_HD inline void attn_split_tokens(int64_t n, int64_t n_q, int64_t i, int64_t s, int64_t split_len,
                                    int64_t* begin, int64_t* end) {
  int64_t visible = n - n_q + i + 1;
  visible = visible < 0 ? 0 : (visible > n ? n : visible);
  const int64_t b = s * split_len;
  const int64_t e = b + split_len < visible ? b + split_len : visible;
  *begin = b;
  *end = e > b ? e : b;
}

// Dynamic shared memory (bytes) of the span attention kernel: q (group, D), K tile
// (T, D+1; padded against bank conflicts), V tile (T, D), scores (group, T), accumulators
// (group, D), per-head m, l, alpha (3*group), the tile's span index and offset (2*T int64).
size_t span_attention_smem_bytes(int64_t group, int64_t head_dim);
// Prefill attention: `rows` (query position, head) pairs per block.
size_t prefill_attention_smem_bytes(int64_t rows, int64_t head_dim);
// Query positions per prefill block: rows = positions * group close to 64, fewer while the
// shared memory would exceed max_smem; 0 when even one position does not fit.
int64_t prefill_positions_per_block(int64_t group, int64_t head_dim, size_t max_smem);

// The split-K merge: partials (m_s, l_s, acc_s) of one (row, head) into (M, L); out = acc/L.
// m = -inf marks an empty split. L == 0: nothing visible (out is 0).
KV_HD inline float merge_weight(float m_s, float M) {
  return m_s == -INFINITY ? 0.f : expf(m_s - M);
}

}  // namespace kvarena::cu
