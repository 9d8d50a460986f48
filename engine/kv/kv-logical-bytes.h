// kv-logical-bytes.h: the *logical* KV bytes of a sequence, defined once for every backend
// (the CPU kv_runtime and the CUDA cuda_kv_runtime both call these functions with their
// own counts). Logical bytes measure what a policy keeps, not how a store allocates:
//   per layer and KV head, the live tokens at their precision
//     FP16 token: keys + values = 2 * head_dim * 2 bytes
//     INT8 token: 2 * head_dim * 1 byte, plus per INT8 block of 32 tokens its frozen
//                 per-channel scales (keys and values, FP32): 2 * head_dim * 4 bytes
//     F32 token (the plain full cache without a policy): 2 * head_dim * 4 bytes
//   + the policy's own state:
//     a score per kept token (4 bytes) for policies that rank by attention mass (h2o's
//       running sum, confkv's EMA);
//     freekv: the device page slots its attention reads (page * FP16 token bytes each)
//       and the page digests (per full page and KV head, key min and max per channel,
//       FP16: 2 * head_dim * 2 bytes).
// Not counted: capacity beyond the live tokens, growth steps, the prefill chunk in flight,
// positions and the attention-mass scratch (bookkeeping of every policy alike), FreeKV's
// host pool (reported apart as host bytes). The README's results section states the same.
#pragma once
#include <cstddef>
#include <cstdint>

namespace kvarena {

constexpr int64_t kv_logical_int8_block = 32;  // tokens per INT8 scale block (kv_int8_block)

// What one KV head of one layer holds, as counts.
struct kv_head_counts {
  int64_t fp16 = 0;         // FP16 tokens
  int64_t int8 = 0;         // INT8 tokens
  int64_t int8_blocks = 0;  // INT8 scale blocks (frozen per-channel scales)
  int64_t f32 = 0;          // F32 tokens (the policy-free full cache)
  int64_t pages = 0;        // freekv: device page slots attention reads
  int64_t digests = 0;      // freekv: full pages with a digest
};

struct kv_logical_layout {
  int64_t head_dim = 0;
  int64_t page = 32;                 // freekv page size in tokens
  size_t state_bytes_per_token = 0;  // policy score column (4 when the policy ranks by mass)
};

constexpr size_t kv_logical_fp16_token_bytes(int64_t head_dim) { return size_t(2 * head_dim * 2); }
constexpr size_t kv_logical_int8_token_bytes(int64_t head_dim) { return size_t(2 * head_dim); }
constexpr size_t kv_logical_int8_block_bytes(int64_t head_dim) { return size_t(2 * head_dim * 4); }
constexpr size_t kv_logical_digest_bytes(int64_t head_dim) { return size_t(2 * head_dim * 2); }

// The logical bytes of one KV head of one layer.
constexpr size_t kv_logical_head_bytes(const kv_logical_layout& L, const kv_head_counts& c) {
  const int64_t d = L.head_dim;
  return size_t(c.fp16) * kv_logical_fp16_token_bytes(d) + size_t(c.int8) * kv_logical_int8_token_bytes(d) +
         size_t(c.int8_blocks) * kv_logical_int8_block_bytes(d) + size_t(c.f32) * size_t(2 * d * 4) +
         size_t(c.fp16 + c.int8) * L.state_bytes_per_token +
         size_t(c.pages * L.page) * kv_logical_fp16_token_bytes(d) + size_t(c.digests) * kv_logical_digest_bytes(d);
}

}  // namespace kvarena
