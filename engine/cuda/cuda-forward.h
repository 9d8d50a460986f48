// cuda-forward.h: the forward pass on the GPU (llama, qwen2: RMSNorm, fused QKV GEMM
// (+ qwen2 biases), RoPE adjacent/NEOX, FP16 KV cache, GQA attention, fused gate/up GEMM,
// SwiGLU; gpt2: learned position embeddings, LayerNorm with bias, fused QKV with bias, no
// RoPE, GELU FFN with biases; residuals folded into the GEMMs (beta = 1)), one sequence or
// a batch of sequences decoding one token each.
//   cuda_engine   the weights on the device, the stream, cuBLAS, scratch sized once for the
//                 largest chunk / batch; runs forward() and forward_batch().
//   cuda_sequence one sequence's KV on the device: the plain FP16 cache (head-major per
//                 layer), or a policy's store (cuda_kv_runtime: full, window, h2o, confkv,
//                 confkv-l, freekv; the CPU policy objects decide, the device holds the
//                 tokens, FreeKV's host pool is pinned host memory).
//   cuda_session  a sequence with the session conveniences: chunked append, decode steps
//                 (confidence from the logits when the policy gates on it), logits, greedy
//                 next token, memory report.
// Not here (see README.md): sampling other than greedy.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "cuda-gemm.h"
#include "cuda-kv-runtime.h"
#include "cuda-kernels.h"
#include "cuda-memory.h"
#include "cuda-model.h"
#include "memory-stats.h"
#include "model.h"

namespace kvarena {

struct cuda_engine_options {
  int64_t max_chunk = 512;  // most tokens of one forward() call
  int64_t max_batch = 32;   // most sequences of one forward_batch() call
  // Quantized matrices (Q8_0, Q4_0, Q2_K..Q6_K) stay quantized on the device (decode: a
  // matrix-vector kernel decoding blocks in registers; prefill: F16 row tiles + cuBLAS).
  // false, or KVARENA_CUDA_WEIGHTS=f16 in the environment: every matrix widened to F16 at
  // upload (the earlier behaviour, to compare).
  bool keep_quantized = true;
};

// The engine's choice of keep_quantized: the option, unless $KVARENA_CUDA_WEIGHTS says "f16"
// (false) or "native" (true); another value is an engine_error.
bool cuda_keep_quantized(const cuda_engine_options& opt);

class cuda_sequence;

class cuda_engine {
 public:
  // Uploads the weights (engine_error: no device, unsupported model, out of memory).
  explicit cuda_engine(const model& m, const cuda_engine_options& opt = {});
  ~cuda_engine();
  cuda_engine(const cuda_engine&) = delete;
  cuda_engine& operator=(const cuda_engine&) = delete;

  const model_config& config() const { return w_->config(); }
  const cuda_engine_options& options() const { return opt_; }
  cuda_allocator& allocator() { return *alloc_; }
  cudaStream_t stream() const { return stream_; }

  // Runs tokens[0..n) (1 <= n <= max_chunk, and <= the policy's max_chunk; ids in range) of
  // s at positions [s.n_past(), s.n_past() + n) and appends their keys/values; with
  // want_logits the last row's logits become logits row 0. sig: what the policy sees this
  // step (default: decode when n == 1, confidence 0). Throws engine_error when s would
  // overflow its capacity.
  void forward(cuda_sequence& s, const int32_t* tokens, int64_t n, bool want_logits,
               const step_signals* sig = nullptr);
  // One token for each of seqs (distinct; all plain caches of equal capacity, or all under
  // policies; 1 <= B <= max_batch); logits row b for seqs[b]; sigs: one per sequence.
  void forward_batch(const std::vector<cuda_sequence*>& seqs, const int32_t* tokens, bool want_logits,
                     const std::vector<step_signals>* sigs = nullptr);

  // Of the last forward call (they synchronise the stream):
  void logits(int64_t row, float* host) const;  // (n_vocab,)
  std::vector<int32_t> argmax(int64_t rows);     // greedy tokens of rows [0, rows)
  const float* logits_device() const { return logits_.data(); }  // (rows, n_vocab)
  void synchronize() const;

  size_t weight_bytes() const { return w_->weight_bytes(); }
  size_t scratch_bytes() const;

 private:
  void check_tokens(const int32_t* tokens, int64_t n) const;
  void check_positions(int64_t end) const;  // gpt2: positions [0, end) have embeddings
  void upload_ints(const std::vector<int32_t>& host, int32_t* dev);
  // Attention of rows [r0, n) of a chunk of s (q rows ldq apart from qkv_) into att_ rows 0...
  void attend_chunk(cuda_sequence& s, int64_t l, int64_t n, int64_t r0, float scale);
  // Residual rows 0..n (x_) = token embeddings (+ gpt2's position embeddings) of tok_/pos_.
  void embed(int64_t n);
  // RMSNorm (llama, qwen2) or LayerNorm with bias b (gpt2) of n rows of dim.
  void norm(const float* x, const float* w, const float* b, float* y, int64_t n);
  // qkv_ rows 0..n of layer l: norm, fused Q|K|V GEMM, biases, RoPE (none for gpt2).
  void qkv(int64_t l, int64_t n);
  // The rest of layer l for n_rows residual rows x_rows with attention outputs att (rows dim
  // apart): output projection (into the residual, + gpt2's bias), FFN (SwiGLU, or gpt2's
  // GELU with biases).
  void layer_body(int64_t l, int64_t n_rows, const float* att, float* x_rows);
  // logits_ rows 0..n = output(norm(x_rows)).
  void output_logits(float* x_rows, int64_t n);
  // y: (n, W.rows()) rows ldy apart = beta*y + x @ W^T, x: (n, W.cols()) F16 rows ldx apart;
  // per part: cuBLAS (F16), cu::qmatvec (quantized, n <= 8), or F16 tiles of deq_ + cuBLAS.
  void mm(const cuda_matrix& W, const uint16_t* x, int64_t ldx, int64_t n, float* y, int64_t ldy,
          float beta = 0.f);

  cuda_engine_options opt_;
  std::unique_ptr<cuda_allocator> alloc_;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<cuda_gemm> gemm_;
  std::unique_ptr<cuda_model> w_;
  int64_t rows_max_ = 0;
  // scratch, (rows_max, width) row-major
  cuda_buffer<float> x_;        // (R, dim) residual stream
  cuda_buffer<float> xn_;       // (R, dim) normed
  cuda_buffer<uint16_t> xh_;    // (R, max(dim, q_dim, ffn)) F16 GEMM input
  cuda_buffer<float> qkv_;      // (R, q_dim + 2*kv_dim)
  cuda_buffer<float> att_;      // (R, q_dim)
  cuda_buffer<uint16_t> deq_;   // (deq_rows_, max quantized cols) F16 tile of a quantized matrix (prefill)
  int64_t deq_rows_ = 0;
  cuda_buffer<float> gu_;       // (R, 2*ffn) gate | up
  cuda_buffer<float> logits_;   // (max(1, max_batch), n_vocab)
  cuda_buffer<int32_t> tok_, pos_, slot_, best_;  // (R,)
  cuda_buffer<uint16_t*> kdst_, vdst_;            // (n_layers, max_batch) batch KV destinations
  cu::kv_span_table table_;
  cuda_upload_ring stage_;  // pinned staging of the token/position/slot/pointer uploads (stream_)
  cu::attention_scratch attn_;
  std::vector<int32_t> host_ints_;
  std::vector<float> conf_logits_;  // (n_vocab,) host copy for step_confidence
  float step_confidence(const cuda_sequence& s, int64_t row, bool have_logits);
};

class cuda_sequence {
 public:
  // A plain FP16 KV cache of max_tokens tokens (allocated now).
  cuda_sequence(cuda_engine& e, int64_t max_tokens);
  // The KV under `policy` (full|window|h2o|confkv|confkv-l|freekv; options as the CPU session's);
  // max_tokens bounds the sequence length. engine_error for bad options.
  // overlap (freekv): prefetch the next step's pages after each attention (else recall at select).
  cuda_sequence(cuda_engine& e, int64_t max_tokens, const std::string& policy, const kv_policy_options& o,
                bool overlap = true);

  int64_t n_past() const { return n_past_; }
  int64_t capacity() const { return cap_; }
  size_t kv_bytes() const { return kvr_ ? kvr_->device_bytes() : k_.bytes() + v_.bytes(); }
  size_t kv_peak_bytes() const { return kvr_ ? kvr_->peak_device_bytes() : kv_bytes(); }
  // Logical KV bytes (kv/kv-logical-bytes.h); the plain cache: n_past FP16 tokens (its peak
  // is now: a plain sequence only grows until reset).
  size_t kv_logical_bytes() const;
  size_t kv_logical_peak_bytes() const { return kvr_ ? kvr_->peak_logical_bytes() : kv_logical_bytes(); }
  cuda_kv_runtime* kv() { return kvr_.get(); }  // null for the plain cache
  const cuda_kv_runtime* kv() const { return kvr_.get(); }
  // Most tokens one forward() of this sequence may carry.
  int64_t max_chunk() const;
  void reset();
  // Device copy of o's KV and length (benchmarks fill a batch from one prefill); plain
  // caches only (engine_error for policy sequences: a policy's state cannot be copied).
  void copy_from(const cuda_sequence& o);

  // Head g of layer l: (capacity, head_dim) F16 keys / values.
  uint16_t* keys(int64_t l, int64_t g) const { return k_.data() + (l * n_kv_ + g) * cap_ * hd_; }
  uint16_t* values(int64_t l, int64_t g) const { return v_.data() + (l * n_kv_ + g) * cap_ * hd_; }

 private:
  friend class cuda_engine;
  cuda_engine* e_;
  int64_t cap_ = 0, n_kv_ = 0, hd_ = 0, n_past_ = 0;
  cuda_buffer<uint16_t> k_, v_;  // plain cache: (n_layers, n_kv, capacity, head_dim)
  std::unique_ptr<cuda_kv_runtime> kvr_;  // policy cache (then k_, v_ are empty)
};

struct cuda_session_options {
  int64_t n_ctx = 0;            // most tokens of the sequence; 0: the model's context length
  int64_t prefill_chunk = 512;  // tokens per forward call while appending (<= the engine's max_chunk)
  std::string kv_policy;        // "": the plain FP16 cache; else a policy (see cuda_sequence)
  kv_policy_options kv;         // its options (the shape is filled in)
  bool kv_overlap = true;       // freekv: speculative prefetch overlapped with the step
};

class cuda_session {
 public:
  cuda_session(cuda_engine& e, const cuda_session_options& opt = {});

  void append(std::span<const int32_t> tokens);  // chunked prefill; logits of the last token
  void append_decode(int32_t token);             // one decode step
  int32_t greedy_next();                         // argmax of logits(), appended as a decode step
  const std::vector<float>& logits();            // (n_vocab,) of the last appended position
  int64_t n_past() const { return seq_.n_past(); }
  int64_t n_ctx() const { return seq_.capacity(); }
  const cuda_sequence& sequence() const { return seq_; }
  // The sequence, for a batched decode step the caller runs through cuda_engine::forward_batch
  // (the session's cached logits are dropped: the caller reads the batch's logits row).
  cuda_sequence& sequence_for_batch() {
    logits_fresh_ = false;
    return seq_;
  }
  const kv_step_stats* last_step() const { return seq_.kv() ? &seq_.kv()->last() : nullptr; }
  // weights, KV (device), scratch; peak_total_bytes from the allocator's peak.
  memory_stats memory() const;
  void reset();

  // Throws engine_error when n more tokens would not fit the sequence's context.
  void check_room(int64_t n) const;

 private:
  void run(std::span<const int32_t> tokens, bool decode);
  cuda_engine& e_;
  cuda_session_options opt_;
  cuda_sequence seq_;
  std::vector<float> logits_;
  bool logits_fresh_ = false;
};

}  // namespace kvarena
