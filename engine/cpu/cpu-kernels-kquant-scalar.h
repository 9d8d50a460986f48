// cpu-kernels-kquant-scalar.h: internal to the CPU backend. Decoding one K-quant
// super-block (Q2_K..Q6_K, 256 elements; layouts in ggml-types.h) into one common form that
// every kernel variant computes with:
//   x[e] = (d * sc[g]) * (q[e] - off) - dmin * m[g],   g = e / 16,
// q unsigned (0..63), sc signed 8-bit, m 0..63 (0 for the types without a min). A matmul
// row . Q8_K activations (xd, xq, bsums) is then, per super-block, two integer sums:
//   xd * ( d * sum_g sc[g] * (sum_{e in g} q[e] xq[e] - off * bsum[g]) - dmin * sum_g m[g] bsum[g] ).
// Everything here is static (internal linkage): each variant file compiles its own copy
// with its own ISA flags (see cpu-kernels-impl.h), and none calls ggml-types.h's inline
// helpers for the same reason.
#pragma once
#include <cstdint>
#include <cstring>

#include "ggml-types.h"

namespace kvarena::cpu {

struct kq_scales {
  uint16_t d_bits = 0, dmin_bits = 0;  // fp16; dmin_bits 0 for types without a min
  int off = 0;                         // 32 (Q6_K), 4 (Q3_K), 0 (the others)
  bool has_min = false;                // Q2_K, Q4_K, Q5_K
  int8_t sc[16];                       // per group of 16
  uint8_t m[16];                       // per group of 16 (0 without a min)
};

static inline bool kq_is_k_quant(ggml_type t) {
  return t == ggml_type::q2_k || t == ggml_type::q3_k || t == ggml_type::q4_k ||
         t == ggml_type::q5_k || t == ggml_type::q6_k;
}

static inline size_t kq_block_bytes(ggml_type t) {
  switch (t) {
    case ggml_type::q2_k: return sizeof(block_q2_k);
    case ggml_type::q3_k: return sizeof(block_q3_k);
    case ggml_type::q4_k: return sizeof(block_q4_k);
    case ggml_type::q5_k: return sizeof(block_q5_k);
    case ggml_type::q6_k: return sizeof(block_q6_k);
    default: return 0;
  }
}

static inline uint32_t kq_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Q4_K/Q5_K's 12 packed bytes -> 8 scales and 8 mins (6 bits each), four per 32-bit word:
// groups 0..3 are the low 6 bits of bytes 0..3 (scales) and 4..7 (mins); groups 4..7 take
// their low 4 bits from the nibbles of bytes 8..11 and their top 2 bits from the top 2
// bits of bytes 0..3 (scales) and 4..7 (mins).
static inline void kq_unpack_k4(const uint8_t* s, uint8_t sc8[8], uint8_t m8[8]) {
  const uint32_t a = kq_u32(s), b = kq_u32(s + 4), c = kq_u32(s + 8);
  const uint32_t w[4] = {a & 0x3f3f3f3fu, (c & 0x0f0f0f0fu) | ((a >> 6) & 0x03030303u) << 4,
                         b & 0x3f3f3f3fu, ((c >> 4) & 0x0f0f0f0fu) | ((b >> 6) & 0x03030303u) << 4};
  std::memcpy(sc8, w, 8);
  std::memcpy(m8, w + 2, 8);
}

// Q3_K's 12 packed bytes -> 16 signed scales: group g's low 4 bits are nibble g/8 of byte
// g%8, its top 2 bits are bits 2*(g/4) of byte 8 + g%4; minus 32.
static inline void kq_unpack_k3(const uint8_t* s, int8_t sc[16]) {
  const uint32_t a = kq_u32(s), b = kq_u32(s + 4), c = kq_u32(s + 8);
  const uint32_t w[4] = {(a & 0x0f0f0f0fu) | (c & 0x03030303u) << 4,
                         (b & 0x0f0f0f0fu) | ((c >> 2) & 0x03030303u) << 4,
                         ((a >> 4) & 0x0f0f0f0fu) | ((c >> 4) & 0x03030303u) << 4,
                         ((b >> 4) & 0x0f0f0f0fu) | ((c >> 6) & 0x03030303u) << 4};
  uint8_t u[16];
  std::memcpy(u, w, 16);
  for (int g = 0; g < 16; ++g) sc[g] = int8_t(int(u[g]) - 32);
}

static inline void kq_decode_scales(ggml_type t, const uint8_t* blk, kq_scales& o) {
  switch (t) {
    case ggml_type::q2_k: {
      const auto* b = reinterpret_cast<const block_q2_k*>(blk);
      o.d_bits = b->d;
      o.dmin_bits = b->dmin;
      o.off = 0;
      o.has_min = true;
      for (int g = 0; g < 16; ++g) {
        o.sc[g] = int8_t(b->scales[g] & 15);
        o.m[g] = uint8_t(b->scales[g] >> 4);
      }
      return;
    }
    case ggml_type::q3_k: {
      const auto* b = reinterpret_cast<const block_q3_k*>(blk);
      o.d_bits = b->d;
      o.dmin_bits = 0;
      o.off = 4;
      o.has_min = false;
      kq_unpack_k3(b->scales, o.sc);
      std::memset(o.m, 0, 16);
      return;
    }
    case ggml_type::q4_k:
    case ggml_type::q5_k: {
      const auto* b = reinterpret_cast<const block_q4_k*>(blk);  // same head in Q5_K
      o.d_bits = b->d;
      o.dmin_bits = b->dmin;
      o.off = 0;
      o.has_min = true;
      uint8_t sc8[8], m8[8];
      kq_unpack_k4(b->scales, sc8, m8);
      for (int g = 0; g < 16; ++g) {
        o.sc[g] = int8_t(sc8[g / 2]);
        o.m[g] = m8[g / 2];
      }
      return;
    }
    case ggml_type::q6_k: {
      const auto* b = reinterpret_cast<const block_q6_k*>(blk);
      o.d_bits = b->d;
      o.dmin_bits = 0;
      o.off = 32;
      o.has_min = false;
      std::memcpy(o.sc, b->scales, 16);
      std::memset(o.m, 0, 16);
      return;
    }
    default: return;
  }
}

// q: (256,) unsigned quants of the block in element order.
static inline void kq_decode_quants(ggml_type t, const uint8_t* blk, uint8_t* q) {
  switch (t) {
    case ggml_type::q2_k: {
      const auto* b = reinterpret_cast<const block_q2_k*>(blk);
      for (int e = 0; e < 256; ++e)
        q[e] = uint8_t((b->qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3);
      return;
    }
    case ggml_type::q3_k: {
      const auto* b = reinterpret_cast<const block_q3_k*>(blk);
      for (int e = 0; e < 256; ++e) {
        const int h = e / 128, j = (e % 128) / 32, l = e % 32;
        const int lo = (b->qs[32 * h + l] >> (2 * j)) & 3;
        const int hb = (b->hmask[l] >> (4 * h + j)) & 1;
        q[e] = uint8_t(lo | hb << 2);
      }
      return;
    }
    case ggml_type::q4_k: {
      const auto* b = reinterpret_cast<const block_q4_k*>(blk);
      for (int e = 0; e < 256; ++e) q[e] = uint8_t((b->qs[32 * (e / 64) + e % 32] >> (4 * ((e % 64) / 32))) & 15);
      return;
    }
    case ggml_type::q5_k: {
      const auto* b = reinterpret_cast<const block_q5_k*>(blk);
      for (int e = 0; e < 256; ++e) {
        const int c = e / 64, hi = (e % 64) / 32, l = e % 32;
        q[e] = uint8_t(((b->qs[32 * c + l] >> (4 * hi)) & 15) | ((b->qh[l] >> (2 * c + hi)) & 1) << 4);
      }
      return;
    }
    case ggml_type::q6_k: {
      const auto* b = reinterpret_cast<const block_q6_k*>(blk);
      for (int e = 0; e < 256; ++e) {
        const int h = e / 128, j = (e % 128) / 32, l = e % 32;
        const int lo = (b->ql[64 * h + l + 32 * (j & 1)] >> (4 * (j >> 1))) & 15;
        const int hi = (b->qh[32 * h + l] >> (2 * j)) & 3;
        q[e] = uint8_t(lo | hi << 4);
      }
      return;
    }
    default: return;
  }
}

// out: (256,) floats of one block from its decoded form; d, dmin already converted. The
// expression and its rounding are the reference's (dequantize_row_ref): (d*sc)*(q-off) - dmin*m.
static inline void kq_dequant_decoded(const kq_scales& s, float d, float dmin, const uint8_t* q,
                                      float* out) {
  for (int g = 0; g < 16; ++g) {
    const float dl = d * float(s.sc[g]), ml = dmin * float(s.m[g]);
    for (int i = 0; i < 16; ++i) out[16 * g + i] = dl * float(int(q[16 * g + i]) - s.off) - ml;
  }
}

}  // namespace kvarena::cpu
