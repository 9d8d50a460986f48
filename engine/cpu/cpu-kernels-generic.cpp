// cpu-kernels-generic.cpp: the portable kernel variant: plain C++ loops the compiler may
// auto-vectorise for the baseline ISA. Used where the CPU has neither AVX2 nor AVX-512, and
// as a third independent implementation in the tests. Same semantics as the SIMD variants,
// including rounding activations to Q8_0 for Q8_0/Q4_0 weights; GEMM here is "convert one
// weight row, dot it with every token".
#include <cmath>

#include "cpu-kernels-impl.h"
#include "cpu-kernels-iq4-scalar.h"
#include "cpu-kernels-kquant-scalar.h"

namespace kvarena::cpu {
namespace {

// fp16 -> fp32 through the float unit: shift the fp16 exponent/mantissa into place and
// rescale by 2^112 (which also turns fp16 subnormals into normal floats); inf/NaN apart.
float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t em = h & 0x7fff;
  uint32_t bits;
  if (em >= 0x7c00) {
    bits = sign | 0x7f800000u | (em & 0x3ff) << 13;
  } else {
    float f;
    const uint32_t shifted = em << 13;
    std::memcpy(&f, &shifted, 4);
    f *= 0x1p112f;
    std::memcpy(&bits, &f, 4);
    bits |= sign;
  }
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

// dst: (n,) = elements [k, k+n) of a float-like weight row.
void convert_span(ggml_type t, const uint8_t* row, int64_t k, int64_t n, float* dst) {
  if (t == ggml_type::f32) {
    std::memcpy(dst, row + 4 * k, size_t(n) * 4);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, row + 2 * (k + i), 2);
    dst[i] = t == ggml_type::f16 ? half_to_float(h) : bf16_to_fp32(h);
  }
}

void quantize_block(const float* x, block_q8x* b) {
  float amax = 0.0f;
  for (int i = 0; i < 32; ++i) amax = std::fmax(amax, std::fabs(x[i]));
  const float d = amax / q8x_max;
  const float id = amax != 0.0f ? q8x_max / amax : 0.0f;  // 127 / amax, as ggml x86's quantize_row_q8_0
  int sum = 0;
  for (int i = 0; i < 32; ++i) {
    const int q = int(std::nearbyint(x[i] * id));  // nearest even, as cvtps2dq
    b->q[i] = int8_t(q);
    sum += q;
  }
  // d is kept rounded to fp16, as ggml's block_q8_0 stores it (q uses the unrounded 127 / amax)
  const float dr = half_to_float(fp32_to_fp16(d));
  b->d = dr;
  b->s = dr * float(sum);
}

void dequant_block(ggml_type t, const uint8_t* blk, float* out) {
  if (t == ggml_type::q8_0) {
    const auto* b = reinterpret_cast<const block_q8_0*>(blk);
    const float d = half_to_float(b->d);
    for (int i = 0; i < 32; ++i) out[i] = float(b->q[i]) * d;
  } else {
    const auto* b = reinterpret_cast<const block_q4_0*>(blk);
    const float d = half_to_float(b->d);
    for (int i = 0; i < 16; ++i) {
      out[i] = float((b->q[i] & 0x0F) - 8) * d;
      out[i + 16] = float((b->q[i] >> 4) - 8) * d;
    }
  }
}

bool is_quantized(ggml_type t) { return t == ggml_type::q8_0 || t == ggml_type::q4_0; }

float dot_f32(const float* a, const float* b, int64_t n) {
  float s[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) s[j] += a[i + j] * b[i + j];
  float r = ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
  for (; i < n; ++i) r += a[i] * b[i];
  return r;
}

// Integer dot product of one row's blocks against one token's Q8_0 activations.
float dot_quantized(ggml_type t, const uint8_t* row, const block_q8x* xq, int64_t nb) {
  float s = 0.0f;
  for (int64_t b = 0; b < nb; ++b) {
    int32_t acc = 0;
    float dw;
    if (t == ggml_type::q8_0) {
      const auto* wb = reinterpret_cast<const block_q8_0*>(row) + b;
      for (int i = 0; i < 32; ++i) acc += int32_t(wb->q[i]) * xq[b].q[i];
      dw = half_to_float(wb->d);
    } else {
      const auto* wb = reinterpret_cast<const block_q4_0*>(row) + b;
      for (int i = 0; i < 16; ++i)
        acc += ((wb->q[i] & 0x0F) - 8) * xq[b].q[i] + ((wb->q[i] >> 4) - 8) * xq[b].q[i + 16];
      dw = half_to_float(wb->d);
    }
    s += float(acc) * dw * xq[b].d;
  }
  return s;
}

void matvec(const weights& w, const float* x, int64_t ldx, const block_q8x* xq, int n_tok,
            int64_t r0, int64_t r1, float* y, int64_t ldy) {
  const int64_t K = w.in;
  constexpr int64_t chunk = 256;
  float buf[chunk];
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = w.data + size_t(r) * w.row_bytes;
    if (is_quantized(w.type)) {
      for (int t = 0; t < n_tok; ++t) y[t * ldy + r] = dot_quantized(w.type, row, xq + t * (K / 32), K / 32);
      continue;
    }
    float s[4] = {};
    for (int64_t k = 0; k < K; k += chunk) {
      const int64_t n = K - k < chunk ? K - k : chunk;
      convert_span(w.type, row, k, n, buf);
      for (int t = 0; t < n_tok; ++t) s[t] += dot_f32(buf, x + t * ldx + k, n);
    }
    for (int t = 0; t < n_tok; ++t) y[t * ldy + r] = s[t];
  }
}

// K-quant rows against Q8_K activations: the integer sums of cpu-kernels-kquant-scalar.h.
void matvec_k(const weights& w, const block_q8k* xq, int n_tok, int64_t r0, int64_t r1, float* y,
              int64_t ldy) {
  const int64_t nb = w.in / 256;
  const size_t bb = kq_block_bytes(w.type);
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = w.data + size_t(r) * w.row_bytes;
    float s[kq_max_tokens] = {};
    for (int64_t b = 0; b < nb; ++b) {
      kq_scales sc;
      uint8_t q[256];
      kq_decode_scales(w.type, row + size_t(b) * bb, sc);
      kq_decode_quants(w.type, row + size_t(b) * bb, q);
      const float d = half_to_float(sc.d_bits), dmin = sc.has_min ? half_to_float(sc.dmin_bits) : 0.0f;
      for (int t = 0; t < n_tok; ++t) {
        const block_q8k& x = xq[t * nb + b];
        int32_t isum = 0, msum = 0;
        for (int g = 0; g < 16; ++g) {
          int32_t gs = 0;
          for (int i = 0; i < 16; ++i) gs += int32_t(q[16 * g + i]) * x.q[16 * g + i];
          isum += sc.sc[g] * (gs - sc.off * x.bsums[g]);
          msum += sc.m[g] * x.bsums[g];
        }
        s[t] += x.d * (d * float(isum) - dmin * float(msum));
      }
    }
    for (int t = 0; t < n_tok; ++t) y[t * ldy + r] = s[t];
  }
}

void quantize_q8x(const float* x, block_q8x* xq, int64_t n) {
  for (int64_t b = 0; b < n / 32; ++b) quantize_block(x + 32 * b, xq + b);
}

// Tiles of one token, no padding: xt is x itself (rounded to Q8_0 when asked).
void pack_x(const float* x, int64_t n_tok, int64_t in, bool round_q8, int64_t tile0,
            int64_t tile1, float* xt) {
  for (int64_t t = tile0; t < tile1; ++t) {
    if (!round_q8) {
      std::memcpy(xt + t * in, x + t * in, size_t(in) * 4);
      continue;
    }
    for (int64_t b = 0; b < in / 32; ++b) {
      block_q8x q;
      quantize_block(x + t * in + 32 * b, &q);
      for (int i = 0; i < 32; ++i) xt[t * in + 32 * b + i] = q.d * float(q.q[i]);
    }
  }
}

void get_row(const weights& w, int64_t r, float* dst) {
  const uint8_t* row = w.data + size_t(r) * w.row_bytes;
  if (kq_is_k_quant(w.type)) {
    const size_t bb = kq_block_bytes(w.type);
    for (int64_t b = 0; b < w.in / 256; ++b) {
      kq_scales sc;
      uint8_t q[256];
      kq_decode_scales(w.type, row + size_t(b) * bb, sc);
      kq_decode_quants(w.type, row + size_t(b) * bb, q);
      kq_dequant_decoded(sc, half_to_float(sc.d_bits), sc.has_min ? half_to_float(sc.dmin_bits) : 0.0f, q,
                         dst + 256 * b);
    }
    return;
  }
  if (!is_quantized(w.type)) {
    convert_span(w.type, row, 0, w.in, dst);
    return;
  }
  const size_t block_bytes = w.type == ggml_type::q8_0 ? sizeof(block_q8_0) : sizeof(block_q4_0);
  for (int64_t b = 0; b < w.in / 32; ++b) dequant_block(w.type, row + b * block_bytes, dst + 32 * b);
}

void gemm(const weights& w, const float* xt, int64_t n_tok, int64_t r0, int64_t r1, float* y,
          int64_t ldy, float* panel) {
  for (int64_t r = r0; r < r1; ++r) {
    get_row(w, r, panel);
    for (int64_t t = 0; t < n_tok; ++t) y[t * ldy + r] = dot_f32(panel, xt + t * w.in, w.in);
  }
}

void rmsnorm(const float* x, const float* w, float* y, int64_t n, float eps) {
  const float scale = 1.0f / std::sqrt(dot_f32(x, x, n) / float(n) + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale * w[i];
}

void layernorm(const float* x, const float* w, const float* b, float* y, int64_t n, float eps) {
  float s = 0.0f;
  for (int64_t i = 0; i < n; ++i) s += x[i];
  const float mean = s / float(n);
  float var = 0.0f;
  for (int64_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  const float inv = 1.0f / std::sqrt(var / float(n) + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv * w[i] + (b ? b[i] : 0.0f);
}

void silu_mul(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void gelu(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    x[i] = v / (1.0f + std::exp(-2.0f * 0.7978845608028654f * (v + 0.044715f * v * v * v)));
  }
}

void softmax(float* x, int64_t n) {
  if (n <= 0) return;
  float mx = x[0];
  for (int64_t i = 1; i < n; ++i) mx = std::fmax(mx, x[i]);
  float s = 0.0f;
  for (int64_t i = 0; i < n; ++i) s += (x[i] = std::exp(x[i] - mx));
  const float inv = 1.0f / s;
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void add(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void axpy(float* y, float alpha, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

const kernel_table table = {
    .name = "generic",
    .gemm_tile_tokens = 1,
    .gemm_panel_rows = 1,
    .gemm_k_align = 1,
    .matvec = matvec,
    .matvec_k = matvec_k,
    .quantize_q8x = quantize_q8x,
    .pack_x = pack_x,
    .gemm = gemm,
    .gemm_k = nullptr,
    .gemm_k_rows = 0,
    .gemm_k_block_bytes = 0,
    .get_row = get_row,
    .rmsnorm = rmsnorm,
    .layernorm = layernorm,
    .silu_mul = silu_mul,
    .gelu = gelu,
    .softmax = softmax,
    .add = add,
    .dot = dot_f32,
    .axpy = axpy,
    .matvec_iq4nl = iq4nl_matvec_plain<half_to_float>,
    .matvec_iq4xs = iq4xs_matvec_plain<half_to_float>,
    .get_row_iq4 = iq4_get_row_plain<half_to_float>,
};

}  // namespace

const kernel_table* kernels_generic() { return &table; }

}  // namespace kvarena::cpu
