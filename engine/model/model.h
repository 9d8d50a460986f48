// model.h: a loaded model: hyperparameters plus views of every weight tensor, wherever
// they live (a GGUF memory map, or buffers the model owns, e.g. a llama2.c checkpoint).
// Loading validates every tensor's presence, type and shape against the config and
// throws engine_error "PATH: what is wrong". The forward pass lives in model-forward-*.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tensor-view.h"

namespace kvarena {

class gguf_file;

enum class model_arch { llama, qwen2, gpt2, qwen3, gemma3, gemma2, phi3 };
const char* model_arch_name(model_arch a);
// The architectures the GGUF loader reads, by general.architecture name (nullopt: none),
// and their names as one list for messages ("llama, qwen2, ...").
std::optional<model_arch> model_arch_from_name(const std::string& name);
std::string model_arch_names();

struct model_config {
  model_arch arch = model_arch::llama;
  int64_t n_vocab = 0;
  int64_t dim = 0;         // embedding width
  int64_t n_layers = 0;
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;  // GQA: n_heads % n_kv_heads == 0
  int64_t head_dim = 0;    // dim / n_heads, or the file's attention.key_length (gemma: 256)
  int64_t ffn_dim = 0;
  int64_t n_ctx = 0;       // trained context length
  int64_t rope_dims = 0;   // llama: rotated dims per head (<= head_dim)
  float rope_freq_base = 10000.0f;
  // How RoPE pairs dims: false = adjacent (x[2i], x[2i+1]) as llama GGUFs store Q/K;
  // true = halves (x[i], x[i + rope_dims/2]), llama.cpp's "NEOX" mode, used for qwen2, qwen3, gemma2/3, phi3.
  bool rope_neox = false;
  // RoPE scaling, as llama.cpp applies it: pair j of position p turns by
  //   theta_j = p * rope_freq_scale * base^(-2j/rope_dims) / rope_freq_factors[j].
  // rope_freq_scale: linear scaling (`rope.scaling.type` linear: 1 / `rope.scaling.factor`).
  // rope_freq_factors: Llama 3.1+ scaling (tensor rope_freqs.weight, rope_dims/2 divisors;
  // empty = all 1). YaRN and LongRoPE files are refused at load.
  float rope_freq_scale = 1.0f;
  std::vector<float> rope_freq_factors;
  bool rope_scaled() const { return rope_freq_scale != 1.0f || !rope_freq_factors.empty(); }
  float norm_eps = 1e-5f;  // RMSNorm (llama) or LayerNorm (gpt2) epsilon
  // Sliding-window attention (gemma3): a layer with layer_swa[l] set attends, from query
  // position p, only to keys at positions > p - sliding_window (llama.cpp's standard SWA
  // mask), and turns its RoPE by rope_freq_base_swa / rope_freq_scale_swa (no freq factors).
  // Empty layer_swa: every layer attends to the whole causal past.
  int64_t sliding_window = 0;
  std::vector<uint8_t> layer_swa;  // (n_layers,) 1 = sliding-window layer
  float rope_freq_base_swa = 10000.0f;
  float rope_freq_scale_swa = 1.0f;
  // gemma: the embedding scaled by embed_scale (sqrt(dim)), the queries by attn_scale
  // (0 = 1/sqrt(head_dim)), the final logits soft-capped: cap * tanh(logit / cap) (0 = none),
  // gemma2 also the attention scores (attn_logit_softcap, 0 = none).
  float embed_scale = 1.0f;
  float attn_scale = 0.0f;
  float final_logit_softcap = 0.0f;
  float attn_logit_softcap = 0.0f;
  bool is_swa(int64_t l) const { return !layer_swa.empty() && layer_swa[size_t(l)] != 0; }
  // The attention window of layer l for the KV cache: sliding_window, or 0 (unbounded).
  int64_t layer_window(int64_t l) const { return is_swa(l) ? sliding_window : 0; }
  int64_t q_dim() const { return n_heads * head_dim; }  // query / attention-output width
  int64_t kv_dim() const { return n_kv_heads * head_dim; }
};

// Tensors of one transformer block. Absent ones have data == nullptr.
// Shapes (ggml order, ne[0] contiguous): matrices {in, out}; vectors {n}.
struct layer_weights {
  tensor_view attn_norm, attn_norm_b;  // {dim}; _b: gpt2 LayerNorm bias
  tensor_view wq, wk, wv;              // llama: {dim, q_dim}, {dim, kv_dim}, {dim, kv_dim}
  tensor_view bq, bk, bv;              // qwen2 biases {dim}, {kv_dim}, {kv_dim}
  tensor_view q_norm, k_norm;          // qwen3, gemma3: per-head RMSNorm weights {head_dim}
  tensor_view wqkv, bqkv;              // gpt2 fused: {dim, 3*dim}, {3*dim}
  tensor_view wo, bo;                  // {q_dim, dim}; bo: gpt2
  tensor_view attn_post_norm;          // gemma2/3: RMSNorm of the attention output {dim}
  tensor_view ffn_norm, ffn_norm_b;    // {dim}
  tensor_view w_gate;                  // llama: {dim, ffn}
  tensor_view w_up, b_up;              // {dim, ffn}; b_up: gpt2
  tensor_view w_down, b_down;          // {ffn, dim}; b_down: gpt2
  tensor_view ffn_post_norm;           // gemma2/3: RMSNorm of the FFN output {dim}
};

struct model {
  std::string path;
  model_config config;
  tensor_view tok_embd;               // {dim, n_vocab}
  tensor_view pos_embd;               // gpt2: {dim, n_ctx}
  tensor_view output_norm, output_norm_b;  // {dim}
  tensor_view output;                 // {dim, n_vocab}; == tok_embd when tied
  std::vector<layer_weights> layers;  // (n_layers,)

  std::shared_ptr<const gguf_file> gguf;            // keeps a GGUF mapping alive
  std::shared_ptr<const void> storage;              // other backing storage (llama2c map)
  std::vector<std::vector<uint8_t>> owned;          // buffers the model owns

  // Bytes of all distinct weight tensors (a tied output counted once).
  size_t weight_bytes() const;
};

// Loads a GGUF model or a llama2.c checkpoint (chosen by the file's magic).
std::unique_ptr<model> load_model(const std::string& path);
std::unique_ptr<model> load_model_gguf(std::shared_ptr<const gguf_file> file);
std::unique_ptr<model> load_model_llama2c(const std::string& path);

}  // namespace kvarena
