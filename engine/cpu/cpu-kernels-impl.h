// cpu-kernels-impl.h: internal to the CPU backend. The table of functions each kernel
// variant (generic / AVX2 / AVX-512) provides, and the layouts of the scratch buffers that
// cpu-kernels.cpp hands them. Only cpu-kernels*.cpp include this; the public API is
// cpu-kernels.h.
//
// Variant files are compiled with their own ISA flags. To keep AVX-512 code from leaking
// into a path that runs on an older CPU, a variant file keeps everything it defines in an
// anonymous namespace and avoids library templates (std::vector, std::function...) whose
// out-of-line copies the linker could pick from that file. Scratch memory is therefore
// owned by cpu-kernels.cpp and passed in.
#pragma once
#include <cstddef>
#include <cstdint>

#include "ggml-types.h"

namespace kvarena::cpu {

// A weight matrix as the kernels see it: `out` rows of `in` elements, row r at
// data + r * row_bytes.
struct weights {
  ggml_type type;
  int64_t in;
  int64_t out;
  size_t row_bytes;
  const uint8_t* data;
};

// One block of 32 activations rounded to Q8_0 for the integer dot products against
// Q8_0/Q4_0 weights: x[i] ~= d * q[i]; s = d * sum(q), used to fold Q4_0's "-8" offset out
// of the inner loop.
struct block_q8x {
  float d;
  float s;
  int8_t q[32];
};
static_assert(sizeof(block_q8x) == 40);

// One super-block of 256 activations rounded to Q8_K (for K-quant weights), as llama.cpp's
// quantize_row_q8_K: max = the element of largest magnitude (with its sign), iscale =
// -127/max, q = min(127, round-to-nearest-even(iscale*x)), d = 1/iscale; bsums[g] = sum of
// q over group g of 16. x[i] ~= d*q[i]. All variants share one rounding (quantize_q8k in
// cpu-kernels.cpp), so every path sees the same activations.
struct block_q8k {
  float d;
  int8_t q[256];
  int16_t bsums[16];
};
static_assert(sizeof(block_q8k) == 292);

// Activation rounding shared by every variant: q = round-to-nearest-even(x * (127 / amax)),
// d = amax / 127 stored rounded to fp16, as ggml's x86 quantize_row_q8_0 computes them (its
// block_q8_0), so the activations are llama.cpp's to the bit for the same x.
// |x - d*q| <= d/2 + 127 * 2^-11 d per element (the tests' bound).
constexpr float q8x_max = 127.0f;

// The matrix-vector kernel handles up to this many tokens at once, reading the weights once
// for all of them.
constexpr int small_batch_max_tokens = 4;
// matvec_k (K-quant weights) takes up to this many tokens per call: each super-block is
// unpacked once for all of them.
constexpr int kq_max_tokens = 8;

struct kernel_table {
  const char* name;

  // GEMM tiling: x is packed once per matmul into tiles of `gemm_tile_tokens` tokens,
  // xt: (n_tiles, Kp, gemm_tile_tokens) with Kp = in rounded up to gemm_k_align, zero-padded
  // past n_tok and past in; rows are split between threads in multiples of gemm_panel_rows;
  // each thread needs a panel scratch of gemm_panel_floats() floats (64-byte aligned).
  int gemm_tile_tokens;
  int gemm_panel_rows;
  int gemm_k_align;

  // y[t*ldy + r] = dot(row r of w, x_t) for r in [r0, r1), t < n_tok <= small_batch_max_tokens.
  // x: (n_tok, in) rows ldx apart; xq: (n_tok, in/32) blocks, only for Q8_0/Q4_0 weights.
  void (*matvec)(const weights& w, const float* x, int64_t ldx, const block_q8x* xq, int n_tok,
                 int64_t r0, int64_t r1, float* y, int64_t ldy);
  // The same for K-quant weights against Q8_K activations xq: (n_tok, in/256) blocks.
  void (*matvec_k)(const weights& w, const block_q8k* xq, int n_tok, int64_t r0, int64_t r1,
                   float* y, int64_t ldy);
  // xq: (n/32,) = x: (n,) rounded to Q8_0; n a multiple of 32.
  void (*quantize_q8x)(const float* x, block_q8x* xq, int64_t n);
  // Packs tiles [tile0, tile1) of x: (n_tok, in) into xt (layout above). With round_q8 (for
  // Q8_0/Q4_0 weights) the values are rounded to Q8_0 on the way, as quantize_q8x does, so
  // those weights see the same activations on the GEMM path as on the matvec path; a variant
  // may then use a layout of its own (AVX-512 keeps the bytes for its integer GEMM) as long
  // as it fits in gemm_xt_floats() and its gemm reads it.
  void (*pack_x)(const float* x, int64_t n_tok, int64_t in, bool round_q8, int64_t tile0,
                 int64_t tile1, float* xt);
  // y[t*ldy + r] for r in [r0, r1) (r0 a multiple of gemm_panel_rows), all n_tok tokens,
  // from packed xt; panel: this thread's scratch. Not used for K-quant weights (matvec_k
  // handles every token count).
  void (*gemm)(const weights& w, const float* xt, int64_t n_tok, int64_t r0, int64_t r1,
               float* y, int64_t ldy, float* panel);
  // K-quant weights, n_tok >= 16 (prefill), where a variant has one (else nullptr: matvec_k
  // runs every token count): y[t*ldy + r] for r in [r0, r1) (r0 a multiple of gemm_k_rows),
  // every token of xq: (n_tok, in/256) Q8_K blocks; panel: this thread's scratch of
  // in/256 * gemm_k_block_bytes bytes (64-byte aligned).
  void (*gemm_k)(const weights& w, const block_q8k* xq, int64_t n_tok, int64_t r0, int64_t r1,
                 float* y, int64_t ldy, uint8_t* panel);
  int gemm_k_rows;
  int gemm_k_block_bytes;
  void (*get_row)(const weights& w, int64_t r, float* dst);

  void (*rmsnorm)(const float* x, const float* w, float* y, int64_t n, float eps);
  void (*layernorm)(const float* x, const float* w, const float* b, float* y, int64_t n,
                    float eps);
  void (*silu_mul)(float* gate, const float* up, int64_t n);
  void (*gelu)(float* x, int64_t n);
  void (*softmax)(float* x, int64_t n);
  void (*add)(float* y, const float* x, int64_t n);
  float (*dot)(const float* a, const float* b, int64_t n);
  void (*axpy)(float* y, float alpha, const float* x, int64_t n);

  // IQ4 weights (cpu-kernels-iq4-scalar.h; SIMD: cpu-kernels-simd-iq4.h, registered by each
  // variant), every token count, n_tok <= kq_max_tokens per call: y[t*ldy + r] for r in
  // [r0, r1). IQ4_NL against Q8_0 activations xq: (n_tok, in/32); IQ4_XS against Q8_K
  // activations xq: (n_tok, in/256). get_row_iq4: row r of either, dequantised.
  void (*matvec_iq4nl)(const weights& w, const block_q8x* xq, int n_tok, int64_t r0, int64_t r1, float* y,
                       int64_t ldy);
  void (*matvec_iq4xs)(const weights& w, const block_q8k* xq, int n_tok, int64_t r0, int64_t r1, float* y,
                       int64_t ldy);
  void (*get_row_iq4)(const weights& w, int64_t r, float* dst);
};

inline int64_t gemm_padded_k(const kernel_table& k, int64_t in) {
  return (in + k.gemm_k_align - 1) / k.gemm_k_align * k.gemm_k_align;
}
inline int64_t gemm_n_tiles(const kernel_table& k, int64_t n_tok) {
  return (n_tok + k.gemm_tile_tokens - 1) / k.gemm_tile_tokens;
}
inline int64_t gemm_xt_floats(const kernel_table& k, int64_t n_tok, int64_t in) {
  return gemm_n_tiles(k, n_tok) * gemm_padded_k(k, in) * k.gemm_tile_tokens;
}
inline int64_t gemm_panel_floats(const kernel_table& k, int64_t in) {
  return int64_t(k.gemm_panel_rows) * gemm_padded_k(k, in);
}

// x: (n,) rounded to Q8_K into xq: (n/256,); n a multiple of 256 (cpu-kernels.cpp).
void quantize_q8k(const float* x, block_q8k* xq, int64_t n);

// Each returns nullptr where the variant is not compiled in (non-x86 builds); whether the
// CPU can run it is cpu-kernels.cpp's business.
const kernel_table* kernels_generic();
const kernel_table* kernels_avx2();
const kernel_table* kernels_avx512();

}  // namespace kvarena::cpu

// ---------------------------------------------------------------------------------------
// Shared SIMD algorithms. Only the AVX2 and AVX-512 files define KVARENA_CPU_KERNELS_SIMD
// before including this header; each instantiates the templates with its own traits struct
// S, declared in that file's anonymous namespace, so every instantiation has internal
// linkage and stays inside the file compiled for its ISA.
//
// S provides: vf (a vector of W floats), zero, set1, load, store, load_f16, load_bf16,
// fma(a, b, c) = a*b + c, add, sub, mul, div, max, abs, reduce_add, reduce_max, reduce8 (of
// an __m256), exp (~2 ulp), half (fp16 -> float, scalar), dot_u8s8 (8 int32 lanes, each the sum of 4 u8*s8 products
// of 256-bit operands), quantize_block (32 floats -> block_q8x), dequant_q8_0 and
// dequant_q4_0 (one block -> 32 floats). K-quants: cpu-kernels-simd-kquant.h.
// ---------------------------------------------------------------------------------------
#ifdef KVARENA_CPU_KERNELS_SIMD
#include "cpu-kernels-simd-kquant.h"
#include "cpu-kernels-simd-matmul.h"
#include "cpu-kernels-simd-small.h"
#endif  // KVARENA_CPU_KERNELS_SIMD
