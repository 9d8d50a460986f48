// cuda-model.h: a model's weights on the device, for the CUDA forward pass. Matrices are
// stored F16 in ggml row layout ((out, in) row-major), whatever their type in the file
// (F16 is copied as is; F32/BF16/Q8_0/Q4_0 are dequantised and rounded to F16); norm
// weights and biases stay F32. Q, K, V are concatenated into one (q_dim + 2*kv_dim, dim)
// matrix and gate/up into one (2*ffn, dim), so each is one GEMM (q_dim = n_heads * head_dim,
// which may differ from dim).
// llama (with Llama 3's rope_freqs factors or linear RoPE scaling), qwen2 (q/k/v biases),
// qwen3 (per-head q/k RMSNorm weights) and gpt2 (fused Q|K|V with bias, LayerNorm weights
// and biases, learned position embeddings, output/FFN biases, up/down FFN without a gate).
#pragma once
#include <cstdint>
#include <vector>

#include "cuda-memory.h"
#include "model.h"

namespace kvarena {

struct cuda_layer_weights {
  cuda_buffer<uint16_t> wqkv;       // (q_dim + 2*kv_dim, dim): q rows, k rows, v rows
  cuda_buffer<float> bqkv;          // (q_dim + 2*kv_dim,) qwen2, gpt2; empty otherwise
  cuda_buffer<float> q_norm;        // (head_dim,) qwen3; empty otherwise
  cuda_buffer<float> k_norm;        // (head_dim,) qwen3
  cuda_buffer<uint16_t> wo;         // (dim, q_dim)
  cuda_buffer<float> bo;            // (dim,) gpt2
  cuda_buffer<uint16_t> w_gate_up;  // (2*ffn, dim): gate rows, then up rows (llama, qwen2)
  cuda_buffer<uint16_t> w_up;       // (ffn, dim) gpt2
  cuda_buffer<float> b_up;          // (ffn,) gpt2
  cuda_buffer<uint16_t> w_down;     // (dim, ffn)
  cuda_buffer<float> b_down;        // (dim,) gpt2
  cuda_buffer<float> attn_norm;     // (dim,)
  cuda_buffer<float> attn_norm_b;   // (dim,) gpt2 LayerNorm bias
  cuda_buffer<float> ffn_norm;      // (dim,)
  cuda_buffer<float> ffn_norm_b;    // (dim,) gpt2
};

class cuda_model {
 public:
  // Uploads every weight (synchronously). Throws engine_error for an architecture or a
  // shape the CUDA backend does not support, or when device memory runs out.
  cuda_model(const model& m, cuda_allocator& a);

  const model_config& config() const { return c_; }
  const uint16_t* tok_embd() const { return tok_embd_.data(); }  // (n_vocab, dim)
  const uint16_t* output() const { return tied_ ? tok_embd_.data() : output_.data(); }  // (n_vocab, dim)
  const float* output_norm() const { return output_norm_.data(); }  // (dim,)
  const float* output_norm_b() const { return output_norm_b_.data(); }  // (dim,) gpt2; else null
  const uint16_t* pos_embd() const { return pos_embd_.data(); }  // (n_ctx, dim) gpt2; else null
  const float* rope_freq_factors() const { return rope_ff_.data(); }  // (rope_dims/2,) Llama 3; else null
  const cuda_layer_weights& layer(int64_t l) const { return layers_[size_t(l)]; }
  size_t weight_bytes() const { return bytes_; }

 private:
  model_config c_;
  bool tied_ = false;
  cuda_buffer<uint16_t> tok_embd_, output_;
  cuda_buffer<float> output_norm_, output_norm_b_;
  cuda_buffer<uint16_t> pos_embd_;
  cuda_buffer<float> rope_ff_;
  std::vector<cuda_layer_weights> layers_;
  size_t bytes_ = 0;
};

// Checks that the CUDA forward supports this config; throws engine_error saying what not.
void check_cuda_model_config(const model_config& c);

}  // namespace kvarena
