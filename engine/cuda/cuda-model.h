// cuda-model.h: a model's weights on the device, for the CUDA forward pass. Matrices are in
// ggml row layout ((out, in) row-major). With keep_quantized (the default; the engine's
// option, KVARENA_CUDA_WEIGHTS=f16 turns it off) Q8_0/Q4_0/Q2_K..Q6_K matrices stay as the
// file stores them (cu::qmatvec decodes them; prefill dequantises row tiles to F16 for
// cuBLAS); everything else, and every matrix without keep_quantized, is F16 (F16 copied as is;
// F32/BF16/quantized dequantised and rounded). The token embedding is always F16 (a gather);
// a tied output reads it. Norm weights and biases stay F32. Q, K, V are concatenated into one (q_dim + 2*kv_dim, dim)
// matrix and gate/up into one (2*ffn, dim), so each is one GEMM (q_dim = n_heads * head_dim,
// which may differ from dim).
// llama (with Llama 3's rope_freqs factors or linear RoPE scaling), qwen2 (q/k/v biases),
// qwen3 (per-head q/k RMSNorm weights), phi3 (its fused q|k|v and gate|up, which the loader
// hands over as row views, uploaded as the llama matrices) and gpt2 (fused Q|K|V with bias, LayerNorm weights
// and biases, learned position embeddings, output/FFN biases, up/down FFN without a gate).
#pragma once
#include <cstdint>
#include <vector>

#include "cuda-memory.h"
#include "model.h"

namespace kvarena {

// Row blocks of one matrix, stacked along the output dimension (q|k|v, gate|up): one part
// when the stacked tensors share a stored type, else one per tensor.
struct cuda_matrix_part {
  ggml_type type = ggml_type::f16;  // f16, or a type cu::quant_on_device keeps
  int64_t rows = 0, cols = 0;
  const uint8_t* data = nullptr;    // device: (rows, ggml_row_bytes(type, cols)) bytes
  cuda_buffer<uint8_t> own;         // the bytes (empty when data is borrowed: tied output)
};
struct cuda_matrix {
  std::vector<cuda_matrix_part> parts;
  int64_t rows() const {
    int64_t r = 0;
    for (const auto& p : parts) r += p.rows;
    return r;
  }
  int64_t cols() const { return parts.empty() ? 0 : parts[0].cols; }
  bool quantized() const {
    for (const auto& p : parts)
      if (p.type != ggml_type::f16) return true;
    return false;
  }
};

struct cuda_layer_weights {
  cuda_matrix wqkv;                 // (q_dim + 2*kv_dim, dim): q rows, k rows, v rows
  cuda_buffer<float> bqkv;          // (q_dim + 2*kv_dim,) qwen2, gpt2; empty otherwise
  cuda_buffer<float> q_norm;        // (head_dim,) qwen3; empty otherwise
  cuda_buffer<float> k_norm;        // (head_dim,) qwen3
  cuda_matrix wo;                   // (dim, q_dim)
  cuda_buffer<float> bo;            // (dim,) gpt2
  cuda_matrix w_gate_up;            // (2*ffn, dim): gate rows, then up rows (llama, qwen2)
  cuda_matrix w_up;                 // (ffn, dim) gpt2
  cuda_buffer<float> b_up;          // (ffn,) gpt2
  cuda_matrix w_down;               // (dim, ffn)
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
  // keep_quantized: quantized matrices stay as stored (else every matrix is F16).
  cuda_model(const model& m, cuda_allocator& a, bool keep_quantized = true);

  const model_config& config() const { return c_; }
  const uint16_t* tok_embd() const { return tok_embd_.data(); }  // (n_vocab, dim)
  const cuda_matrix& output() const { return output_; }  // (n_vocab, dim); tied: the embedding's bytes
  const float* output_norm() const { return output_norm_.data(); }  // (dim,)
  const float* output_norm_b() const { return output_norm_b_.data(); }  // (dim,) gpt2; else null
  const uint16_t* pos_embd() const { return pos_embd_.data(); }  // (n_ctx, dim) gpt2; else null
  const float* rope_freq_factors() const { return rope_ff_.data(); }  // (rope_dims/2,) Llama 3; else null
  const cuda_layer_weights& layer(int64_t l) const { return layers_[size_t(l)]; }
  size_t weight_bytes() const { return bytes_; }
  // Widest matrix kept quantized (cols), 0 when none: the engine sizes its F16 tile scratch.
  int64_t max_quantized_cols() const { return max_qcols_; }

 private:
  model_config c_;
  bool tied_ = false;
  cuda_buffer<uint16_t> tok_embd_;
  cuda_matrix output_;
  cuda_buffer<float> output_norm_, output_norm_b_;
  cuda_buffer<uint16_t> pos_embd_;
  cuda_buffer<float> rope_ff_;
  std::vector<cuda_layer_weights> layers_;
  size_t bytes_ = 0;
  int64_t max_qcols_ = 0;
  bool keep_quantized_ = true;
  cuda_allocator* alloc_ = nullptr;
  cuda_matrix upload_matrix(const std::vector<const tensor_view*>& ts, const char* what);
};

// How the tensors ts (stacked along the output dimension, equal widths) go to the device:
// parts of (type, rows) from tensors [first, last). keep_quantized and all of one type kept
// quantized (cu::quant_on_device): one part of that type; keep_quantized and mixed types with
// any kept quantized: one part per tensor (kept types as stored, others F16); otherwise one
// F16 part. Plain C++ (test-cuda checks it without a GPU).
struct cuda_part_plan {
  ggml_type type;
  int64_t rows;
  size_t first, last;
};
std::vector<cuda_part_plan> plan_cuda_matrix(const std::vector<const tensor_view*>& ts, bool keep_quantized);

// Checks that the CUDA forward supports this config; throws engine_error saying what not.
void check_cuda_model_config(const model_config& c);

}  // namespace kvarena
