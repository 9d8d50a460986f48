// model-forward.h: the forward pass. forward() runs a chunk of n tokens at positions
// [pos0, pos0 + n) through the model, appending their keys/values to the KV cache and
// writing logits for the last token, for every token, or none (a prefill chunk that is not
// the last). One file per architecture: model-forward-llama.cpp (llama, qwen2, qwen3),
// model-forward-gemma.cpp (gemma3), model-forward-gpt2.cpp. forward_state holds everything a sequence needs between calls
// (KV cache: kv_runtime, thread pool, scratch sized once for the largest chunk), so a decode step
// allocates nothing. Not here: sampling, tokens -> text, chunking (session does those).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

#include "kv/kv-runtime.h"
#include "model.h"
#include "thread-pool.h"

namespace kvarena {

enum class logits_mode { none, last, all };

struct forward_options {
  int n_threads = 1;
  int64_t max_chunk = 512;    // most tokens one forward() call gets
  int64_t max_tokens = 2048;  // KV cache capacity limit (the session's n_ctx)
  // Run the plain-loop reference kernels (ref::matmul, ref::attend, ...) instead of the
  // optimised ones: tests compare the two paths.
  bool reference = false;
  // GELU rounded through F16 like ggml's lookup table (fp16(gelu(fp16(x)))): only for
  // comparing with llama.cpp at F32 tolerance; the default is the exact tanh formula.
  bool gelu_f16_table = false;
};

// Per-sequence state of the forward pass. Buffers are (max_chunk, width) row-major.
class forward_state {
 public:
  forward_state(const model& m, const forward_options& opt);
  forward_state(const forward_state&) = delete;
  forward_state& operator=(const forward_state&) = delete;

  const forward_options& options() const { return opt_; }
  size_t scratch_bytes() const;  // activations + attention scratch (not the KV cache)

  thread_pool pool;
  std::unique_ptr<kv_runtime> kvr;    // the KV cache: the store under the session's policy
                                      // (without one, `full` over an F32 store)
  std::vector<float> x;     // (max_chunk, dim) residual stream
  std::vector<float> xn;    // (max_chunk, dim) normed input of a sublayer
  std::vector<float> q;     // llama: (max_chunk, q_dim) queries; gpt2: (max_chunk, dim + 2*kv_dim) q|k|v
  std::vector<float> k, v;  // (max_chunk, kv_dim) llama keys, values
  std::vector<float> att;   // (max_chunk, max(dim, q_dim)) attention output
  std::vector<float> tmp;   // (max_chunk, dim) sublayer output before the residual add
  std::vector<float> gate;  // (max_chunk, ffn) llama gate / gpt2 up
  std::vector<float> up;    // (max_chunk, ffn) llama up
  std::vector<float> rope_cs;  // (max_chunk, rope_dims/2, 2) cos, sin of the chunk's positions
  // Sliding-window layers with their own RoPE base (gemma3): the RoPE fields of their config
  // (rope_swa) and the chunk's cos, sin under it (max_chunk, rope_dims/2, 2); empty otherwise.
  model_config rope_swa;
  std::vector<float> rope_cs_swa;

 private:
  forward_options opt_;
};

// Runs tokens[0..n) at positions [pos0, pos0 + n) (1 <= n <= max_chunk, ids in range,
// pos0 + n <= max_tokens: the caller checks). logits: (n_vocab,) for `last`,
// (n, n_vocab) for `all`, unused for `none`.
void forward(const model& m, forward_state& st, const int32_t* tokens, int64_t n, int64_t pos0,
             logits_mode mode, float* logits);

// The kernels one forward pass calls, optimised or reference, with the per-row loops the
// architectures share. Row operations on a chunk are split over the pool's threads.
class forward_ops {
 public:
  forward_ops(thread_pool& pool, const forward_options& opt) : pool_(pool), opt_(opt) {}

  // y: (n, out) = x: (n, in) @ w^T
  void matmul(const tensor_view& w, const float* x, int64_t n, float* y);
  // y_i = x @ w_i^T for up to 3 matrices with the same input (q, k, v): for one token the
  // rows of all of them are split over the threads in one pool round trip.
  void matmul_same_input(std::initializer_list<std::pair<const tensor_view*, float*>> parts,
                         const float* x, int64_t n);
  // gate = silu(x @ w_gate^T) * (x @ w_up^T): (n, ffn); up: (n, ffn) scratch. For one
  // token each thread computes and combines its own slice of both, one round trip.
  void swiglu(const tensor_view& w_gate, const tensor_view& w_up, const float* x, int64_t n,
              float* gate, float* up);
  // gate = gelu(x @ w_gate^T) * (x @ w_up^T): (n, ffn) (GELU as gelu() computes it); up: scratch
  void geglu(const tensor_view& w_gate, const tensor_view& w_up, const float* x, int64_t n, float* gate,
             float* up);
  // x = cap * tanh(x / cap), element-wise (logit soft-capping)
  void softcap(float* x, int64_t n_elems, float cap);
  // x: (n, dim) = rows tokens[i] of the embedding
  void embed(const tensor_view& w, const int32_t* tokens, int64_t n, float* x);
  // y: (n, dim) = rmsnorm(x) * w, row by row
  void rmsnorm(const float* x, const tensor_view& w, float* y, int64_t n, int64_t dim, float eps);
  // y: (n, dim) = layernorm(x) * w + b, row by row
  void layernorm(const float* x, const tensor_view& w, const tensor_view& b, float* y, int64_t n,
                 int64_t dim, float eps);
  // y[i, :] += b for each of n rows of `width`, rows ld floats apart (no-op for an absent b)
  void add_bias(float* y, int64_t ld, const tensor_view& b, int64_t n, int64_t width);
  // y += x over (n, width) rows, both contiguous
  void add(float* y, const float* x, int64_t n, int64_t width);
  void silu_mul(float* gate, const float* up, int64_t n_elems);
  void gelu(float* x, int64_t n_elems);
  // cs: (n, rope_dims/2, 2) = cos, sin of theta_j = (pos0 + i) * base^(-2j/rope_dims)
  // (times the config's RoPE scaling: rope_freq_scale, / rope_freq_factors[j]),
  // computed once per chunk and shared by every layer's q and k.
  void rope_cos_sin(const model_config& c, int64_t pos0, int64_t n, float* cs);
  // Rotates the first rope_dims dims of every head of n rows of q (n_heads heads, rows ldq
  // floats apart) and k (n_kv_heads, ldk), row i at position pos0 + i; adjacent pairs or
  // NEOX halves as the config says. cs from rope_cos_sin (the reference path ignores it).
  void rope(float* q, int64_t ldq, float* k, int64_t ldk, int64_t n, const model_config& c,
            int64_t pos0, const float* cs);

 private:
  template <typename F>
  void rows(int64_t n, int64_t width, const F& fn);  // fn(i0, i1) over n rows, threaded when large

  thread_pool& pool_;
  const forward_options& opt_;
};

namespace detail {
// The chunk's keys/values of layer l into the sequence's KV cache: (n, kv_dim) rows, ld apart.
void store_kv(forward_state& st, int64_t l, const float* k, const float* v, int64_t ld);
// The first row of the chunk whose attention layer l needs: every row but in the last layer,
// where only the logits' rows are (all rows when the policy ranks by every row's attention;
// at least one, since attention runs the policy for the layer).
int64_t first_attention_row(const forward_state& st, bool last_layer, logits_mode mode, int64_t n);
// Attention of the chunk's rows [r0, n) (q points at row r0) over layer l's cache into
// out: (n - r0, n_heads*head_dim), rows ldo apart.
void attend_layer(forward_state& st, int64_t l, int64_t n, int64_t r0, const float* q, int64_t ldq, float scale,
                  float* out, int64_t ldo);
void forward_llama(const model& m, forward_state& st, const int32_t* tokens, int64_t n,
                   int64_t pos0, logits_mode mode, float* logits);
void forward_gpt2(const model& m, forward_state& st, const int32_t* tokens, int64_t n,
                  int64_t pos0, logits_mode mode, float* logits);
void forward_gemma(const model& m, forward_state& st, const int32_t* tokens, int64_t n,
                   int64_t pos0, logits_mode mode, float* logits);
// NEOX RoPE of one row (plain reference): (n_heads, head_dim), pairs (x[i], x[i + rope_dims/2]),
// theta_i = pos * base^(-2i/rope_dims).
void rope_neox(float* x, int64_t n_heads, int64_t head_dim, int64_t rope_dims, int64_t pos,
               float freq_base, float freq_scale, const float* freq_factors);
void rope_neox(float* x, int64_t n_heads, int64_t head_dim, int64_t rope_dims, int64_t pos,
               float freq_base);
}  // namespace detail

}  // namespace kvarena
