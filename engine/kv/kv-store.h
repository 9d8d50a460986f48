// kv-store.h: the memory of the KV cache, per layer and KV head: the kept tokens with
// their original positions (keys stored after RoPE, so positions never change), a recent
// FP16 segment and an older INT8 segment, and a per-token score column the policy owns.
// Compaction keeps the kept tokens dense (INT8 values move byte for byte with their
// frozen block scale: nothing is ever re-quantised). The FP16 payload of a head is a ring
// buffer, so dropping a prefix of it, a hole right after a short kept prefix (sinks + sliding
// window) or freezing its oldest block costs O(tokens before the hole), not O(all tokens).
// Byte accounting is of these buffers (the ring changes no allocation size). With
// kv_store_config::f32 the recent segment holds F32 rows instead (the same ring, rows twice
// as wide): the policy-free reference cache, `full` without rounding.
// Not here: which tokens stay (kv-policy.h), the FreeKV host pool (kv-host-pool.h), the
// attention itself (kv-attention-ref.h now, the backend kernels later).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "kv-logical-bytes.h"

namespace kvarena {

struct keep_decision;  // kv-policy.h

constexpr int64_t kv_int8_block = 32;  // tokens per INT8 scale block

// One layer's tokens of one KV head as an attention kernel reads them. Kept index i runs
// over the INT8 segment first (older tokens) then the FP16 segment, in position order. The
// FP16 segment lives in a ring buffer and so comes in at most two parts: kept index
// n_int8 + j is row j of k16/v16 for j < n_fp16, then row j - n_fp16 of k16b/v16b (the part
// that wrapped around to the start of the buffer). pos and mass are dense over all n().
struct kv_head_view {
  int64_t n_int8 = 0;               // tokens in the INT8 segment
  int64_t n_fp16 = 0;               // tokens in the first FP16 part
  int64_t n_fp16b = 0;              // tokens in the second (wrapped) FP16 part
  int64_t head_dim = 0;
  const int8_t* k_q = nullptr;      // (n_int8, head_dim) token-major
  const int8_t* v_q = nullptr;      // (n_int8, head_dim)
  const int32_t* block = nullptr;   // (n_int8,) scale block of each INT8 token
  const float* k_scale = nullptr;   // (n_blocks, head_dim): x = q * scale[block][c]
  const float* v_scale = nullptr;   // (n_blocks, head_dim)
  const uint16_t* k16 = nullptr;    // (n_fp16, head_dim) fp16, token-major
  const uint16_t* v16 = nullptr;    // (n_fp16, head_dim)
  const uint16_t* k16b = nullptr;   // (n_fp16b, head_dim) the FP16 tokens after those of k16
  const uint16_t* v16b = nullptr;   // (n_fp16b, head_dim)
  // An F32 store (kv_store_config::f32) sets these instead of k16..v16b: same shapes, float.
  const float* k32 = nullptr;
  const float* v32 = nullptr;
  const float* k32b = nullptr;
  const float* v32b = nullptr;
  const int32_t* pos = nullptr;     // (n(),) original positions, ascending
  float* mass = nullptr;            // (n(),) the kernel adds attention mass here
                                    // (summed over the group's query heads and the queries)
  int64_t n_fp16_all() const { return n_fp16 + n_fp16b; }
  int64_t n() const { return n_int8 + n_fp16 + n_fp16b; }
};

// The policy's view of one layer: positions, its score column (which it updates in place;
// the store moves it with the tokens), and the attention mass of the last forward chunk.
struct kv_head_meta {
  int64_t n = 0;
  const int32_t* pos = nullptr;   // (n,) original positions, ascending
  float* score = nullptr;         // (n,) policy-owned running score (h2o sum, confkv ema)
  const float* mass = nullptr;    // (n,) attention mass of the last chunk, summed over the group
};
struct kv_layer_meta {
  int64_t layer = 0;
  int64_t seq_len = 0;            // tokens seen so far (the next position)
  int64_t group = 1;              // query heads per KV head: mean mass = mass / group
  int64_t rows = 1;               // tokens (query rows) of the forward call the mass is from
  std::vector<kv_head_meta> heads;  // (n_kv_heads,)
};

struct kv_store_config {
  int64_t n_layers = 0, n_kv_heads = 0, head_dim = 0;
  int64_t group = 1;                    // n_heads / n_kv_heads
  std::vector<int64_t> layer_capacity;  // (n_layers,) max kept tokens per head; empty: unbounded
  bool int8 = false;                    // older tokens in INT8 (head_dim % 32 == 0)
  int64_t fp16_window = 128;            // with int8: the W most recent kept tokens stay FP16
  bool f32 = false;                     // the recent segment in F32, not FP16 (not with int8)
};

class kv_store {
 public:
  kv_store() = default;
  explicit kv_store(const kv_store_config& cfg);

  // Appends n tokens at positions [pos0, pos0+n) to `layer`: k, v are token-major rows
  // (n, n_kv_heads*head_dim), ld floats apart, keys already rotated. Aborts over capacity
  // (the policy evicts between chunks). Scores of new tokens start at 0. The new rows stay
  // FP16 until apply() (INT8 blocks are frozen after the forward call that attended them).
  void append(int64_t layer, int64_t pos0, int64_t n, const float* k, const float* v, int64_t ld);

  // Keeps, for each KV head of `layer`, the kept indices listed (ascending, no duplicates);
  // everything else is dropped and the rest is made dense again. keep: (n_kv_heads,) lists.
  void compact(int64_t layer, const std::vector<std::vector<int32_t>>& keep);

  // Carries out a policy's decision for `layer`: compaction when it evicts, then INT8
  // blocking of tokens that left the FP16 window.
  void apply(int64_t layer, const keep_decision& d);

  // Moves the oldest FP16 tokens of every head of `layer` into INT8, a whole block of 32 at a
  // time, while more than fp16_window (+31) tokens are FP16. No-op without int8.
  void quantize_old(int64_t layer);

  kv_head_view head_view(int64_t layer, int64_t head);  // mass writable
  kv_layer_meta layer_meta(int64_t layer);
  void clear_mass(int64_t layer);  // zero the mass column before a forward chunk

  int64_t n_kept(int64_t layer, int64_t head) const;
  kv_head_counts counts(int64_t layer, int64_t head) const;  // FP16, INT8 tokens, INT8 blocks
  std::vector<int32_t> kept_positions(int64_t layer, int64_t head) const;  // ascending
  std::vector<float> kept_scores(int64_t layer, int64_t head) const;      // the policy's score column
  int64_t seq_len(int64_t layer) const { return layers_[layer].seq_len; }
  int64_t capacity(int64_t layer) const;
  void set_capacity(int64_t layer, int64_t tokens);  // per-layer budget (pyramid)
  const kv_store_config& config() const { return cfg_; }

  size_t device_bytes() const { return device_bytes_; }   // allocated now, all buffers
  size_t recount_device_bytes() const;  // walks every buffer: must equal device_bytes()
  size_t peak_device_bytes() const { return peak_device_bytes_; }
  // Bytes one kept recent-segment token (FP16, or F32 in an F32 store) of one head holds
  // (k, v, position, score, mass).
  size_t fp16_token_bytes() const;
  size_t int8_token_bytes() const;  // without its share of the block scales
  // FP16 tokens copied within the ring by compaction and INT8 blocking so far (appends and
  // reallocations not counted): what the ring saves shows here, in tests.
  int64_t fp16_tokens_moved() const { return fp16_tokens_moved_; }

 private:
  // A buffer of T that grows geometrically (capped), shrinks when mostly empty, and reports
  // its allocation to the store's byte counter.
  template <class T>
  struct buf {
    std::unique_ptr<T[]> p;
    int64_t alloc = 0;  // elements allocated
  };
  struct head_store {
    buf<int8_t> k_q, v_q;       // (alloc_tokens, head_dim)
    buf<int32_t> block;         // (alloc_tokens,)
    buf<float> k_scale, v_scale;  // (alloc_blocks, head_dim)
    buf<uint16_t> k16, v16;     // (alloc_tokens16, row_words_) ring: FP16 token f at row
                                // (r0 + f) mod alloc_tokens16; F32 store: a row's words
                                // are its head_dim floats
    buf<int32_t> pos;           // (alloc_tokens,) INT8 segment then FP16 segment, dense
    buf<float> score, mass;     // (alloc_tokens,)
    int64_t n_int8 = 0, n_fp16 = 0, n_blocks = 0;
    int64_t r0 = 0;             // ring row of FP16 token 0 (< alloc_tokens16, or 0)
  };
  struct layer_store {
    std::vector<head_store> heads;  // (n_kv_heads,)
    int64_t capacity = 0;
    int64_t seq_len = 0;
  };
  // Reallocates b to elems, keeping keep_elems read from element `from` on, wrapping at the
  // old allocation (a ring comes out linearised).
  template <class T>
  void resize_buf(buf<T>& b, int64_t elems, int64_t keep_elems, int64_t from = 0);
  void resize_fp16(head_store& h, int64_t tokens);  // k16, v16 linearised: r0 = 0
  // Copies n FP16 tokens of h's ring from FP16 index src to dst (memmove semantics).
  void move_fp16(head_store& h, int64_t dst, int64_t src, int64_t n);
  // The FP16 part of compact: kept (m,) ascending kept indices of the head, all >= base
  // (the INT8 count), FP16 token kept[j] - base becomes FP16 token j.
  void compact_fp16(head_store& h, const int32_t* kept, int64_t m, int64_t base);
  void ensure_tokens(layer_store& L, head_store& h, int64_t n_int8, int64_t n_fp16);
  void shrink_if_sparse(layer_store& L, head_store& h);
  void track(int64_t delta_bytes);

  kv_store_config cfg_;
  int64_t row_words_ = 0;            // 16-bit words of one ring row: head_dim (FP16), 2 * head_dim (F32)
  std::vector<layer_store> layers_;  // (n_layers,)
  size_t device_bytes_ = 0, peak_device_bytes_ = 0;
  int64_t fp16_tokens_moved_ = 0;
};

// The store's allocation rule, shared by every backend's store (tokens): growing from `have`
// to hold `need`: by a quarter, in blocks of 32, never past `cap` (0 = unbounded) unless
// `need` is; and the size a buffer shrinks to when fewer than half of it hold `n` tokens.
int64_t kv_store_grown_tokens(int64_t have, int64_t need, int64_t cap);
int64_t kv_store_shrunk_tokens(int64_t n);

// Symmetric per-channel INT8 quantisation of one block of n <= 32 tokens:
// scale[c] = max_t |x[t][c]| / 127, q = round(x / scale). |x - q*scale| <= scale/2.
void kv_quantize_block(const float* x, int64_t n, int64_t head_dim, int8_t* q, float* scale);

}  // namespace kvarena
