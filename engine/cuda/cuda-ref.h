// cuda-ref.h: CPU references for the CUDA kernels that have no engine ref:: counterpart,
// and a CPU emulation of the span attention's algorithm (tiles, online softmax, split-K
// merge, mass pass) that the tests check against ref::kv_attend on machines without a GPU.
// Plain loops over host memory; compiled by the host compiler (no nvcc needed).
// Kernels with an engine reference use it directly: ref::rmsnorm, ref::layernorm,
// ref::rope_adjacent / detail::rope_neox, ref::silu_mul, ref::gelu, argmax,
// kv_quantize_block, ref::kv_attend.
#pragma once
#include <cstdint>
#include <vector>

#include "cuda-kernels.h"
#include "kv/kv-attention-cpu.h"

namespace kvarena::cuda_ref {

// x: (n, dim) = rows tokens[i] of an F16 table.
void embed_f16(const uint16_t* table, int64_t dim, const int32_t* tokens, int64_t n, float* x);
// Rows of x (n, ld) rotated at positions pos[i]: the engine's reference RoPE per row
// (ref::rope_adjacent / detail::rope_neox with the scaling terms; freq_factors host, or null).
void rope(float* x, int64_t ld, int64_t n, int64_t n_heads, int64_t head_dim, int64_t rope_dims,
          const int32_t* pos, float freq_base, float freq_scale, const float* freq_factors, bool neox);
// cu::rope's arithmetic on the CPU: cu::rope_pair over every (row, head, pair).
void rope_emulated(float* x, int64_t ld, int64_t n, int64_t n_heads, int64_t head_dim, int64_t rope_dims,
                   const int32_t* pos, float freq_base, float freq_scale, const float* freq_factors, bool neox);
// The engine's reference of cu::rmsnorm_heads: ref::rmsnorm on each head, in place.
void rmsnorm_heads(float* x, int64_t ld, int64_t n, int64_t n_heads, int64_t head_dim, const float* w, float eps);
// cu::rmsnorm_heads' arithmetic on the CPU: 32 lanes' partial sums, the butterfly, the scale.
void rmsnorm_heads_emulated(float* x, int64_t ld, int64_t n, int64_t n_heads, int64_t head_dim, const float* w,
                            float eps);
// The activation cast every GEMM input goes through (cu::f32_to_f16): saturating to
// +-65504 (infinities included; NaN stays NaN), then round to nearest even (fp32_to_fp16).
uint16_t f32_to_f16_sat(float x);
// dst (n, width) = f32_to_f16_sat(src), rows ld_* elements apart.
void f32_to_f16(const float* src, int64_t ld_src, uint16_t* dst, int64_t ld_dst, int64_t n, int64_t width);
// dst row dst_idx[j] (j when null) = src row src_idx[j] (j when null).
void gather_rows(const void* src, void* dst, int64_t row_bytes, const int32_t* src_idx, const int32_t* dst_idx,
                 int64_t n);
// INT8 blocks of F16 rows, as cu::kv_quantize_f16 (through kv_quantize_block).
void kv_quantize_f16(const uint16_t* src, int64_t src_stride, int64_t n_units, int64_t n_tok, int64_t head_dim,
                     int8_t* q, int64_t q_stride, float* scale, int64_t scale_stride);
// Per unit: per-channel min/max of its (page, D) F16 keys.
void page_digest(const uint16_t* keys, int64_t unit_stride, int64_t n_units, int64_t page, int64_t head_dim,
                 float* kmin, float* kmax);
// out (n_kv, n_cand): mean over the group of softmax_j(Quest bound), in double.
void page_scores(const float* q, const float* kmin, const float* kmax, const int32_t* cand, int64_t n_cand,
                 int64_t n_heads, int64_t n_kv, int64_t head_dim, float scale, float* out);

// cu::qmatvec's arithmetic on the CPU (host arrays): per row, 32 lanes of
// cu::qmatvec_lane, the butterfly, beta. 1 <= n <= cu::k_qmatvec_max_tokens.
void qmatvec_emulated(ggml_type t, const uint8_t* w, int64_t rows, int64_t cols, const uint16_t* x, int64_t ldx,
                      int64_t n, float* y, int64_t ldy, float beta);
// cu::dequant_rows_f16 on the CPU: cu::dequant8 per 8-element run, rounded to F16.
void dequant_rows_f16(ggml_type t, const uint8_t* w, int64_t r0, int64_t n_rows, int64_t cols, uint16_t* dst);

// The span table (host memory pointers) of sequence `seq` as ref::kv_attend's heads.
std::vector<kv_attn_head> attn_heads(const cu::kv_span_table& table, int64_t seq, int64_t n_kv);

// The span attention as the GPU computes it (float math, 32-token tiles, online softmax,
// the same split plan for n_sm multiprocessors, the same merge and mass pass), over a table
// whose spans point at host memory. a.heads/a.spans are ignored (the table is used).
void attend_spans_emulated(const cu::kv_span_table& table, const cu::span_attention_args& a, int64_t n_sm);

}  // namespace kvarena::cuda_ref
