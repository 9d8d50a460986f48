// cuda-quant-test-util.h: random quantized blocks for the CUDA quantized-weight tests
// (test-cuda.cpp: decoding bit for bit; test-cuda-kernels.cpp: qmatvec and F16 tiles;
// test-cuda-forward.cpp: K-quant matrices swapped into a model). Random bytes with every
// fp16 scale field set to a finite value; `scaled_random_blocks` rescales those fields so
// the decoded values have a chosen standard deviation.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "ggml-types.h"

namespace kvarena::test {

// Byte offsets of a block's fp16 scale fields (d, and dmin where the type has one).
inline std::vector<size_t> quant_scale_fields(ggml_type t) {
  switch (t) {
    case ggml_type::q8_0:
    case ggml_type::q4_0: return {0};
    case ggml_type::q2_k: return {80, 82};
    case ggml_type::q3_k: return {108};
    case ggml_type::q4_k:
    case ggml_type::q5_k: return {0, 2};
    case ggml_type::q6_k: return {208};
    default: return {};
  }
}

// n_blocks random blocks of type t: random bytes, every scale field uniform in +-4 (every
// fifth block's scaled by 1e-6: subnormal fp16), so any decoding slip shows.
inline std::vector<uint8_t> random_blocks(ggml_type t, int64_t n_blocks, std::mt19937& rng) {
  const auto& tr = ggml_traits(t);
  std::vector<uint8_t> b(tr.block_bytes * size_t(n_blocks));
  for (auto& v : b) v = uint8_t(rng());
  std::uniform_real_distribution<float> u(-4.f, 4.f);
  for (int64_t i = 0; i < n_blocks; ++i) {
    const float sub = (i % 5 == 4) ? 1e-6f : 1.f;
    for (size_t f : quant_scale_fields(t)) {
      const uint16_t h = fp32_to_fp16(u(rng) * sub);
      b[size_t(i) * tr.block_bytes + f] = uint8_t(h & 0xff);
      b[size_t(i) * tr.block_bytes + f + 1] = uint8_t(h >> 8);
    }
  }
  return b;
}

// A (rows, cols) matrix of type t whose decoded values have standard deviation ~std_target:
// random blocks, then every scale field multiplied by std_target / (the measured std).
inline std::vector<uint8_t> scaled_random_blocks(ggml_type t, int64_t rows, int64_t cols, float std_target,
                                                 std::mt19937& rng) {
  const auto& tr = ggml_traits(t);
  std::vector<uint8_t> b = random_blocks(t, rows * cols / tr.block_elems, rng);
  const size_t rb = ggml_row_bytes(t, cols);
  std::vector<float> row(static_cast<size_t>(cols));
  double ss = 0;
  for (int64_t r = 0; r < rows; ++r) {
    dequantize_row_ref(t, b.data() + size_t(r) * rb, row.data(), cols);
    for (float v : row) ss += double(v) * v;
  }
  const float f = std_target / float(std::sqrt(ss / double(rows * cols)));
  for (size_t o = 0; o < b.size(); o += tr.block_bytes)
    for (size_t fld : quant_scale_fields(t)) {
      const uint16_t h0 = uint16_t(b[o + fld] | (b[o + fld + 1] << 8));
      const uint16_t h = fp32_to_fp16(fp16_to_fp32(h0) * f);
      b[o + fld] = uint8_t(h & 0xff), b[o + fld + 1] = uint8_t(h >> 8);
    }
  return b;
}

// Worst |got - want| / (sum_c |w x| + 1) of y = beta*y0 + x @ w^T, w: (rows, cols) blocks of
// type t dequantised by dequantize_row_ref, x: (n, cols) F16 rows ldx apart; the dot
// products in double. y0 and got: (n, ldy).
inline double qmatvec_worst_error(ggml_type t, const std::vector<uint8_t>& w, int64_t rows, int64_t cols,
                                  const std::vector<uint16_t>& xh, int64_t ldx, int64_t n,
                                  const std::vector<float>& y0, const std::vector<float>& got, int64_t ldy,
                                  float beta) {
  const size_t rb = ggml_row_bytes(t, cols);
  std::vector<float> wr(static_cast<size_t>(cols));
  double worst = 0;
  for (int64_t r = 0; r < rows; ++r) {
    dequantize_row_ref(t, w.data() + size_t(r) * rb, wr.data(), cols);
    for (int64_t i = 0; i < n; ++i) {
      double s = 0, mag = 0;
      for (int64_t c = 0; c < cols; ++c) {
        const double p = double(wr[size_t(c)]) * fp16_to_fp32(xh[size_t(i * ldx + c)]);
        s += p, mag += std::fabs(p);
      }
      const double want = s + double(beta) * y0[size_t(i * ldy + r)];
      worst = std::max(worst, std::fabs(double(got[size_t(i * ldy + r)]) - want) / (mag + 1.0));
    }
  }
  return worst;
}

}  // namespace kvarena::test
