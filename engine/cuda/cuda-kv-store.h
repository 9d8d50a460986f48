// cuda-kv-store.h: the KV store of one sequence on the device, with kv_store's semantics
// (engine/kv/kv-store.h): per layer and KV head the kept tokens in an older INT8 segment
// (per-channel scale per block of 32, frozen) and a recent FP16 segment, compaction that
// keeps them dense and moves INT8 rows byte for byte with their block's scale, and the
// per-key attention mass the kernels add. The payload lives on the device; positions,
// scores, block ids and the fetched mass live on the host, where the CPU policy objects
// read them (kv_layer_meta), so a policy runs unchanged on either backend.
// Device layout per layer: k16/v16 (n_kv, c16, D) F16; kq/vq (n_kv, c8, D) INT8; block
// (n_kv, c8); k_scale/v_scale (n_kv, cb, D); mass (n_kv, c8 + c16) by kept index (INT8 first).
// Capacities grow geometrically and shrink after compaction when mostly empty, like kv_store.
// Not here: which tokens stay (the policy), the driver (cuda-kv-runtime.h).
#pragma once
#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "cuda-kernels.h"
#include "cuda-memory.h"
#include "kv/kv-policy.h"
#include "kv/kv-store.h"

namespace kvarena {

// kv_store::compact's bookkeeping for one head, as a plan the device carries out: the rows
// that stay (in order) and the renumbering of INT8 scale blocks (in order of first use).
struct kv_compaction_plan {
  std::vector<int32_t> int8_rows;  // old INT8-segment indices that stay, ascending
  std::vector<int32_t> new_block;  // (int8_rows.size(),) block id of each after compaction
  std::vector<int32_t> scale_src;  // (blocks after,) old block id of each new block
  std::vector<int32_t> fp16_rows;  // old FP16-segment indices that stay, ascending
};
// block: (n_int8,) block ids; keep: ascending kept indices (INT8 segment first).
kv_compaction_plan plan_kv_compaction(const int32_t* block, int64_t n_int8, int64_t n_fp16,
                                      const std::vector<int32_t>& keep);

// quantize_old's work on one layer as a plan, carried out in one pass (per head with blocks
// two kv_quantize_f16 launches; one index upload; one scatter of the new block ids; one
// shift of the FP16 segments), where it used to loop per 32-token block per head, shifting
// the whole FP16 segment and uploading index lists each time. Per head g the oldest
// blocks[g] = (n16 - fp16_window) / 32 blocks leave the FP16 window (none when
// n16 < fp16_window + 32), as kv_store::quantize_old's loop; the INT8 and scale capacities
// grow as that loop's block-by-block growth would (same device bytes), once.
struct kv_quantize_counts {
  int64_t n8 = 0, n16 = 0, nb = 0;  // INT8 tokens, FP16 tokens, scale blocks
};
struct kv_quantize_plan {
  std::vector<int64_t> blocks;  // (n_kv,) blocks frozen per head
  int64_t c8 = 0, cb = 0;       // INT8 token / scale block capacities per head after the step
  // The new rows' block ids: INT8 row id_rows[j] (g*c8 + i, with the new c8) gets ids[j].
  std::vector<int32_t> id_rows, ids;
  // The FP16 rows that stay move down: row shift_src[j] -> shift_dst[j] (g*c16 + i).
  std::vector<int32_t> shift_src, shift_dst;
  bool empty() const { return ids.empty(); }
};
kv_quantize_plan plan_kv_quantize(const std::vector<kv_quantize_counts>& heads, int64_t fp16_window, int64_t c16,
                                  int64_t c8, int64_t cb, int64_t capacity);

// One head's contents copied to the host (tests compare them with kv_store's).
struct cuda_kv_head_data {
  int64_t n_int8 = 0, n_fp16 = 0, n_blocks = 0;
  std::vector<uint16_t> k16, v16;     // (n_fp16, D)
  std::vector<int8_t> kq, vq;         // (n_int8, D)
  std::vector<int32_t> block;         // (n_int8,)
  std::vector<float> k_scale, v_scale;  // (n_blocks, D)
  std::vector<int32_t> pos;           // (n_int8 + n_fp16,)
};

class cuda_kv_store {
 public:
  cuda_kv_store(const kv_store_config& cfg, cuda_allocator& a, cudaStream_t st);
  cuda_kv_store(const cuda_kv_store&) = delete;
  cuda_kv_store& operator=(const cuda_kv_store&) = delete;

  // n token rows (device, (n, n_kv*D), ld floats apart; keys after RoPE) at positions
  // [pos0, pos0 + n) appended to every head of `layer`, then INT8 blocking.
  void append(int64_t layer, int64_t pos0, int64_t n, const float* k, const float* v, int64_t ld);
  // Keeps keep[g] (ascending kept indices) of each head; the rest is dropped, made dense.
  void compact(int64_t layer, const std::vector<std::vector<int32_t>>& keep);
  void apply(int64_t layer, const keep_decision& d);  // compaction when evicting, then INT8 blocking
  void quantize_old(int64_t layer);

  void clear_mass(int64_t layer);  // before the layer's attention (async)
  void fetch_mass(int64_t layer);  // the layer's mass to the host (synchronises the stream)
  kv_layer_meta layer_meta(int64_t layer);  // host pos/score/mass, what the policy reads
  // The layer's heads (INT8 span, FP16 span each), appended to t.
  void add_spans(int64_t layer, cu::kv_span_table& t, bool with_mass) const;
  // Head g's spans (INT8, FP16) appended to the head t is building (no begin_head).
  void add_head_spans(int64_t layer, int64_t g, cu::kv_span_table& t, bool with_mass) const;
  // True when every head holds the same FP16-only tokens count: contiguous per head, so the
  // prefill kernel can run over k16/v16 (head g at + g*head_stride).
  bool uniform_fp16(int64_t layer, int64_t* n_tokens, const uint16_t** k16, const uint16_t** v16,
                    int64_t* head_stride) const;

  int64_t n_kept(int64_t layer, int64_t head) const;
  kv_head_counts counts(int64_t layer, int64_t head) const;  // FP16, INT8 tokens, INT8 blocks
  std::vector<int32_t> kept_positions(int64_t layer, int64_t head) const;
  int64_t seq_len(int64_t layer) const { return layers_[size_t(layer)].seq_len; }
  int64_t capacity(int64_t layer) const { return layers_[size_t(layer)].capacity; }
  void set_capacity(int64_t layer, int64_t tokens) { layers_[size_t(layer)].capacity = tokens; }
  const kv_store_config& config() const { return cfg_; }
  size_t device_bytes() const { return bytes_; }
  size_t peak_device_bytes() const { return peak_bytes_; }
  cuda_kv_head_data download(int64_t layer, int64_t head) const;  // synchronises

 private:
  struct head_meta {
    int64_t n8 = 0, n16 = 0, nb = 0;
    std::vector<int32_t> pos, block;  // (n8 + n16,), (n8,)
    std::vector<float> score, mass;   // (n8 + n16,)
  };
  struct layer_dev {
    int64_t c16 = 0, c8 = 0, cb = 0;  // per-head capacities: FP16 tokens, INT8 tokens, scale blocks
    cuda_buffer<uint16_t> k16, v16;
    cuda_buffer<int8_t> kq, vq;
    cuda_buffer<int32_t> block;
    cuda_buffer<float> ks, vs, mass;
    std::vector<head_meta> heads;  // (n_kv,)
    int64_t seq_len = 0, capacity = 0;
  };
  template <class T>
  void repitch(cuda_buffer<T>& b, int64_t old_c, int64_t new_c, int64_t row_elems, int64_t keep_rows, const char* what);
  void ensure(layer_dev& L, int64_t need16, int64_t need8, int64_t need_blocks);
  void resize(layer_dev& L, int64_t c16, int64_t c8, int64_t cb);  // repitch what changed
  void shrink_if_sparse(layer_dev& L);
  void realloc_mass(layer_dev& L);
  void recount();
  // Index lists: appended to one host batch, sent in one upload (through the pinned ring).
  size_t stage_idx(const std::vector<int32_t>& v);  // offset of v in the batch
  int32_t* upload_staged_idx(int which);            // the batch to idx_[which]; its device base
  // dst rows d[j] of buf (total_rows rows of row_bytes) = rows s[j] (device lists of n), through
  // the scratch (source and destination rows may overlap).
  void move_rows(void* buf, int64_t total_rows, int64_t row_bytes, const int32_t* s, const int32_t* d, int64_t n);

  kv_store_config cfg_;
  cuda_allocator* a_;
  cudaStream_t st_;
  std::vector<layer_dev> layers_;
  cuda_buffer<uint8_t> scratch_;
  cuda_buffer<int32_t> idx_[2];  // device index batches: [0] moves, blocking, compaction; [1] append's head offsets
  std::vector<int32_t> idx_batch_;  // host side of the next index upload
  cuda_upload_ring stage_;          // pinned staging of every upload (one stream: st_)
  size_t bytes_ = 0, peak_bytes_ = 0;
};

}  // namespace kvarena
