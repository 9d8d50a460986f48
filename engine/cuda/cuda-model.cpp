// cuda-model.cpp: weight upload (see the header).
#include "cuda-model.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "cpu-kernels.h"
#include "cuda-check.h"
#include "cuda-quant.h"
#include "engine-error.h"
#include "ggml-types.h"

namespace kvarena {

namespace {

// Rows [0, rows) of matrix t as F16 into dst (rows, ne[0]).
void upload_rows_f16(const tensor_view& t, uint16_t* dst) {
  const int64_t in = t.ne[0], rows = t.rows();
  if (t.type == ggml_type::f16) {
    CUDA_CHECK(cudaMemcpy(dst, t.data, size_t(rows * in) * 2, cudaMemcpyHostToDevice));
    return;
  }
  // Other types: dequantise a slab of rows on the host, round to F16, copy.
  const int64_t slab = std::max<int64_t>(1, (int64_t(8) << 20) / std::max<int64_t>(1, in));
  std::vector<float> row(static_cast<size_t>(in));
  std::vector<uint16_t> h(static_cast<size_t>(std::min(slab, rows) * in));
  for (int64_t r0 = 0; r0 < rows; r0 += slab) {
    const int64_t r1 = std::min(rows, r0 + slab);
    for (int64_t r = r0; r < r1; ++r) {
      get_row(t, r, row.data());
      for (int64_t c = 0; c < in; ++c) h[size_t((r - r0) * in + c)] = fp32_to_fp16(row[size_t(c)]);
    }
    CUDA_CHECK(cudaMemcpy(dst + r0 * in, h.data(), size_t((r1 - r0) * in) * 2, cudaMemcpyHostToDevice));
  }
}

void upload_vec_f32(const tensor_view& t, float* dst) {
  std::vector<float> v(static_cast<size_t>(t.n_elements()));
  if (t.type == ggml_type::f32) {
    std::memcpy(v.data(), t.data, v.size() * 4);
  } else {
    get_row(t, 0, v.data());
  }
  CUDA_CHECK(cudaMemcpy(dst, v.data(), v.size() * 4, cudaMemcpyHostToDevice));
}

}  // namespace

void check_cuda_model_config(const model_config& c) {
  // Not the gemma block (post-norms, GeGLU, sliding-window layers, scaled embedding). phi3 is
  // the llama layer: the loader hands its fused qkv and gate|up over as row views.
  if (c.arch == model_arch::gemma2 || c.arch == model_arch::gemma3)
    throw engine_error(std::string("cuda: architecture ") + model_arch_name(c.arch) +
                       " (GeGLU, post-norms, sliding-window layers, soft-capping) is not supported by the CUDA "
                       "backend yet; use --backend cpu");
  if (!c.rope_freq_factors.empty() && int64_t(c.rope_freq_factors.size()) != c.rope_dims / 2)
    throw engine_error("cuda: rope_freqs has " + std::to_string(c.rope_freq_factors.size()) + " factors, not " +
                       std::to_string(c.rope_dims / 2));
  if (c.head_dim % 8 != 0 || c.head_dim > 256)
    throw engine_error("cuda: head_dim " + std::to_string(c.head_dim) +
                       " is not supported by the CUDA attention (a multiple of 8, at most 256)");
  if (c.n_kv_heads <= 0 || c.n_heads % c.n_kv_heads != 0)
    throw engine_error("cuda: n_heads " + std::to_string(c.n_heads) + " is not a multiple of n_kv_heads " +
                       std::to_string(c.n_kv_heads));
}

std::vector<cuda_part_plan> plan_cuda_matrix(const std::vector<const tensor_view*>& ts, bool keep_quantized) {
  bool same = true, any_quant = false;
  for (const tensor_view* t : ts) {
    KV_ASSERT(t->ne[0] == ts[0]->ne[0]);
    same = same && t->type == ts[0]->type;
    any_quant = any_quant || cu::quant_on_device(t->type);
  }
  std::vector<cuda_part_plan> plan;
  if (keep_quantized && any_quant && !same) {  // mixed types (Q4_K_M: v in Q6_K): one part each
    for (size_t i = 0; i < ts.size(); ++i)
      plan.push_back({cu::quant_on_device(ts[i]->type) ? ts[i]->type : ggml_type::f16, ts[i]->rows(), i, i + 1});
    return plan;
  }
  int64_t rows = 0;
  for (const tensor_view* t : ts) rows += t->rows();
  // One part: the file's bytes (all of one kept type), or every tensor widened to F16.
  plan.push_back({keep_quantized && any_quant ? ts[0]->type : ggml_type::f16, rows, 0, ts.size()});
  return plan;
}

cuda_matrix cuda_model::upload_matrix(const std::vector<const tensor_view*>& ts, const char* what) {
  const int64_t cols = ts[0]->ne[0];
  cuda_matrix M;
  for (const cuda_part_plan& pp : plan_cuda_matrix(ts, keep_quantized_)) {
    cuda_matrix_part p;
    p.type = pp.type, p.rows = pp.rows, p.cols = cols;
    const size_t bytes = size_t(pp.rows) * ggml_row_bytes(pp.type, cols);
    p.own = cuda_buffer<uint8_t>(*alloc_, bytes, what);
    p.data = p.own.data();
    bytes_ += bytes;
    size_t off = 0;  // bytes of the part written
    for (size_t i = pp.first; i < pp.last; ++i) {
      const tensor_view& t = *ts[i];
      if (pp.type == ggml_type::f16) {
        upload_rows_f16(t, reinterpret_cast<uint16_t*>(p.own.data() + off));
        off += size_t(t.rows() * cols) * 2;
      } else {  // the blocks as stored
        KV_ASSERT(t.type == pp.type);
        const size_t b = size_t(t.rows()) * t.row_bytes();
        CUDA_CHECK(cudaMemcpy(p.own.data() + off, t.data, b, cudaMemcpyHostToDevice));
        off += b;
      }
    }
    if (pp.type != ggml_type::f16) max_qcols_ = std::max(max_qcols_, cols);
    M.parts.push_back(std::move(p));
  }
  return M;
}

cuda_model::cuda_model(const model& m, cuda_allocator& a, bool keep_quantized)
    : c_(m.config), keep_quantized_(keep_quantized), alloc_(&a) {
  check_cuda_model_config(c_);
  const int64_t D = c_.dim, QD = c_.q_dim(), KV = c_.kv_dim(), F = c_.ffn_dim, V = c_.n_vocab, hd = c_.head_dim;
  const auto f16 = [&](int64_t rows, int64_t cols, const char* what) {
    bytes_ += size_t(rows * cols) * 2;
    return cuda_buffer<uint16_t>(a, size_t(rows * cols), what);
  };
  const auto f32 = [&](int64_t n, const char* what) {
    bytes_ += size_t(n) * 4;
    return cuda_buffer<float>(a, size_t(n), what);
  };
  tok_embd_ = f16(V, D, "token embedding");
  upload_rows_f16(m.tok_embd, tok_embd_.data());
  tied_ = m.output.data == m.tok_embd.data;
  if (!tied_) {
    output_ = upload_matrix({&m.output}, "output matrix");
  } else {  // the F16 embedding's bytes, borrowed
    cuda_matrix_part p;
    p.type = ggml_type::f16, p.rows = V, p.cols = D;
    p.data = reinterpret_cast<const uint8_t*>(tok_embd_.data());
    output_.parts.push_back(std::move(p));
  }
  output_norm_ = f32(D, "output norm");
  upload_vec_f32(m.output_norm, output_norm_.data());
  const bool gpt2 = c_.arch == model_arch::gpt2;
  const auto f32_of = [&](const tensor_view& t, int64_t n, const char* what) {
    cuda_buffer<float> b = f32(n, what);
    upload_vec_f32(t, b.data());
    return b;
  };
  if (!c_.rope_freq_factors.empty()) {  // Llama 3's rope_freqs.weight, as the loader read it
    rope_ff_ = f32(int64_t(c_.rope_freq_factors.size()), "rope frequency factors");
    CUDA_CHECK(cudaMemcpy(rope_ff_.data(), c_.rope_freq_factors.data(), rope_ff_.bytes(), cudaMemcpyHostToDevice));
  }
  if (gpt2) {
    output_norm_b_ = f32_of(m.output_norm_b, D, "output norm bias");
    pos_embd_ = f16(c_.n_ctx, D, "position embedding");
    upload_rows_f16(m.pos_embd, pos_embd_.data());
  }

  layers_.resize(size_t(c_.n_layers));
  for (int64_t l = 0; l < c_.n_layers; ++l) {
    const layer_weights& L = m.layers[size_t(l)];
    cuda_layer_weights& W = layers_[size_t(l)];
    if (gpt2) {  // fused in the file: q rows, k rows, v rows already
      W.wqkv = upload_matrix({&L.wqkv}, "attention q/k/v weights");
      W.bqkv = f32_of(L.bqkv, D + 2 * KV, "attention q/k/v biases");
    } else {
      W.wqkv = upload_matrix({&L.wq, &L.wk, &L.wv}, "attention q/k/v weights");
    }
    KV_ASSERT(W.wqkv.rows() == QD + 2 * KV);
    if (!gpt2 && (L.bq || L.bk || L.bv)) {
      W.bqkv = f32(QD + 2 * KV, "attention q/k/v biases");
      std::vector<float> zero(static_cast<size_t>(QD + 2 * KV), 0.f);
      CUDA_CHECK(cudaMemcpy(W.bqkv.data(), zero.data(), zero.size() * 4, cudaMemcpyHostToDevice));
      if (L.bq) upload_vec_f32(L.bq, W.bqkv.data());
      if (L.bk) upload_vec_f32(L.bk, W.bqkv.data() + QD);
      if (L.bv) upload_vec_f32(L.bv, W.bqkv.data() + QD + KV);
    }
    if (L.q_norm) {  // qwen3
      W.q_norm = f32_of(L.q_norm, hd, "attention q norm");
      W.k_norm = f32_of(L.k_norm, hd, "attention k norm");
    }
    W.wo = upload_matrix({&L.wo}, "attention output weights");
    if (gpt2) {
      W.bo = f32_of(L.bo, D, "attention output bias");
      W.w_up = upload_matrix({&L.w_up}, "ffn up weights");
      W.b_up = f32_of(L.b_up, F, "ffn up bias");
      W.b_down = f32_of(L.b_down, D, "ffn down bias");
      W.attn_norm_b = f32_of(L.attn_norm_b, D, "attention norm bias");
      W.ffn_norm_b = f32_of(L.ffn_norm_b, D, "ffn norm bias");
    } else {
      W.w_gate_up = upload_matrix({&L.w_gate, &L.w_up}, "ffn gate/up weights");
    }
    W.w_down = upload_matrix({&L.w_down}, "ffn down weights");
    W.attn_norm = f32(D, "attention norm");
    upload_vec_f32(L.attn_norm, W.attn_norm.data());
    W.ffn_norm = f32(D, "ffn norm");
    upload_vec_f32(L.ffn_norm, W.ffn_norm.data());
  }
}

}  // namespace kvarena
