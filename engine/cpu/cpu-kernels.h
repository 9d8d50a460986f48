// cpu-kernels.h: the CPU backend's numeric kernels. Each has an optimised version
// (AVX-512 / AVX2 chosen at run time, portable fallback) and a plain-loop reference in
// namespace ref (cpu-kernels-ref.cpp) that tests check the optimised one against.
// All activations are F32, row-major; weights are tensor_views in ggml layout
// (ne = {in, out}: row o holds the `in` weights of output o).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tensor-view.h"
#include "thread-pool.h"

namespace kvarena {

// y: (n_tok, out) = x: (n_tok, in) @ W^T, W: ne = {in, out} of type F32/F16/BF16/Q8_0/Q4_0
// or a K-quant (Q2_K..Q6_K) or IQ4_NL / IQ4_XS.
// n_tok < 16 runs the memory-bound matrix-vector kernel (decode; weights read once for all
// tokens), n_tok >= 16 the blocked GEMM (prefill). Weights are used in their stored type,
// never converted whole to F32. Rows are split between the pool's threads; tiny matmuls
// run on the caller alone. x and y must not overlap.
void matmul(thread_pool& pool, const tensor_view& w, const float* x, int64_t n_tok, float* y);

// dst: (n,) = row r of w, dequantised (embedding lookup).
void get_row(const tensor_view& w, int64_t r, float* dst);

// y = x / rms(x) * w  over n elements (y may alias x).
void rmsnorm(const float* x, const float* w, float* y, int64_t n, float eps);
// y = (x - mean) / sqrt(var + eps) * w + b  (y may alias x).
void layernorm(const float* x, const float* w, const float* b, float* y, int64_t n, float eps);
// x: (n_heads, head_dim) rotated in place at position pos; adjacent pairs (x[2i], x[2i+1])
// over the first rope_dims dims of each head; theta_i = pos * base^(-2i/rope_dims).
void rope_adjacent(float* x, int64_t n_heads, int64_t head_dim, int64_t rope_dims, int64_t pos,
                   float freq_base);
// gate[i] = silu(gate[i]) * up[i]
void silu_mul(float* gate, const float* up, int64_t n);
// x[i] = gelu(x[i]) (tanh approximation, as GPT-2 and ggml use)
void gelu(float* x, int64_t n);
// in-place softmax over n elements
void softmax(float* x, int64_t n);
// y[i] += x[i]
void add(float* y, const float* x, int64_t n);
// sum_i a[i] * b[i]
float dot(const float* a, const float* b, int64_t n);
// y[i] += alpha * x[i]
void axpy(float* y, float alpha, const float* x, int64_t n);

// Name of the kernel variant picked at run time ("avx512", "avx2", "generic"). The pick is
// the best the CPU supports, or $KVARENA_CPU_VARIANT when set (engine_error if that names
// an unknown variant or one this CPU can't run).
std::string cpu_kernel_variant();
// The variants this CPU can run, best first (always ends with "generic").
std::vector<std::string> cpu_kernel_variants_supported();
// Switches every kernel to variant `name` (tests and benchmarks; not thread-safe with
// kernels running). engine_error for unknown or unsupported names.
void set_cpu_kernel_variant(const std::string& name);

// Matmul semantics for Q8_0/Q4_0 weights: like llama.cpp, the activations are first rounded
// to Q8_0 (per block of 32: d = amax/127, q = round(x/d), d then kept as fp16 as ggml's
// block_q8_0 stores it), on every path; the decode path then uses integer dot products. So
// |y - y_exact| <= sum over blocks of d_block (1/2 + 127/2048) * sum|w| over the block, plus
// F32 rounding. K-quant weights (Q2_K..Q6_K): the activations are rounded to Q8_K as
// llama.cpp's quantize_row_q8_K does (per 256: signed max m, q = round(-127 x / m),
// d = -m/127 kept in F32) and every token count runs integer dot products per group of 16
// (prefill too: AVX-512 in a VNNI GEMM, AVX2 / generic on groups of 8 tokens through the
// matrix-vector kernel). IQ4_NL weights: activations rounded to Q8_0 as for Q8_0/Q4_0,
// IQ4_XS: to Q8_K as for the K-quants (llama.cpp's vec_dot_type for each), then integer dot
// products for every token count (groups of 8 tokens). F32/F16/BF16 weights use the F32
// activations as they are.

namespace ref {
void matmul(const tensor_view& w, const float* x, int64_t n_tok, float* y);
void get_row(const tensor_view& w, int64_t r, float* dst);
void rmsnorm(const float* x, const float* w, float* y, int64_t n, float eps);
void layernorm(const float* x, const float* w, const float* b, float* y, int64_t n, float eps);
void rope_adjacent(float* x, int64_t n_heads, int64_t head_dim, int64_t rope_dims, int64_t pos,
                   float freq_base);
// With RoPE scaling (model_config's fields): theta_i = pos * freq_scale * base^(-2i/rope_dims)
// / freq_factors[i] (freq_factors may be null: all 1).
void rope_adjacent(float* x, int64_t n_heads, int64_t head_dim, int64_t rope_dims, int64_t pos,
                   float freq_base, float freq_scale, const float* freq_factors);
void silu_mul(float* gate, const float* up, int64_t n);
void gelu(float* x, int64_t n);
void softmax(float* x, int64_t n);
}  // namespace ref

}  // namespace kvarena
