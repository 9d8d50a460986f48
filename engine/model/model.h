// model.h: a loaded model: hyperparameters plus views of every weight tensor, wherever
// they live (a GGUF memory map, or buffers the model owns, e.g. a llama2.c checkpoint).
// Loading validates every tensor's presence, type and shape against the config and
// throws engine_error "PATH: what is wrong". The forward pass lives in model-forward-*.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tensor-view.h"

namespace kvarena {

class gguf_file;

enum class model_arch { llama, qwen2, gpt2, qwen3 };
const char* model_arch_name(model_arch a);

struct model_config {
  model_arch arch = model_arch::llama;
  int64_t n_vocab = 0;
  int64_t dim = 0;         // embedding width
  int64_t n_layers = 0;
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;  // GQA: n_heads % n_kv_heads == 0
  int64_t head_dim = 0;    // dim / n_heads
  int64_t ffn_dim = 0;
  int64_t n_ctx = 0;       // trained context length
  int64_t rope_dims = 0;   // llama: rotated dims per head (<= head_dim)
  float rope_freq_base = 10000.0f;
  // How RoPE pairs dims: false = adjacent (x[2i], x[2i+1]) as llama GGUFs store Q/K;
  // true = halves (x[i], x[i + rope_dims/2]), llama.cpp's "NEOX" mode, used for qwen2, qwen3.
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
  int64_t kv_dim() const { return n_kv_heads * head_dim; }
};

// Tensors of one transformer block. Absent ones have data == nullptr.
// Shapes (ggml order, ne[0] contiguous): matrices {in, out}; vectors {n}.
struct layer_weights {
  tensor_view attn_norm, attn_norm_b;  // {dim}; _b: gpt2 LayerNorm bias
  tensor_view wq, wk, wv;              // llama: {dim, dim}, {dim, kv_dim}, {dim, kv_dim}
  tensor_view bq, bk, bv;              // qwen2 biases {dim}, {kv_dim}, {kv_dim}
  tensor_view q_norm, k_norm;          // qwen3: per-head RMSNorm weights {head_dim}
  tensor_view wqkv, bqkv;              // gpt2 fused: {dim, 3*dim}, {3*dim}
  tensor_view wo, bo;                  // {dim, dim}; bo: gpt2
  tensor_view ffn_norm, ffn_norm_b;    // {dim}
  tensor_view w_gate;                  // llama: {dim, ffn}
  tensor_view w_up, b_up;              // {dim, ffn}; b_up: gpt2
  tensor_view w_down, b_down;          // {ffn, dim}; b_down: gpt2
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
