// ggml-types.cpp: type table, scalar fp16/bf16 conversions and the reference (plain loop)
// row dequantise/quantise for every supported ggml type.
#include "ggml-types.h"

#include <algorithm>
#include <cmath>

#include "engine-error.h"

namespace kvarena {

namespace {
const ggml_type_traits k_f32{"f32", 1, 4};
const ggml_type_traits k_f16{"f16", 1, 2};
const ggml_type_traits k_bf16{"bf16", 1, 2};
const ggml_type_traits k_q8_0{"q8_0", 32, sizeof(block_q8_0)};
const ggml_type_traits k_q4_0{"q4_0", 32, sizeof(block_q4_0)};
const ggml_type_traits k_q2_k{"q2_k", 256, sizeof(block_q2_k)};
const ggml_type_traits k_q3_k{"q3_k", 256, sizeof(block_q3_k)};
const ggml_type_traits k_q4_k{"q4_k", 256, sizeof(block_q4_k)};
const ggml_type_traits k_q5_k{"q5_k", 256, sizeof(block_q5_k)};
const ggml_type_traits k_q6_k{"q6_k", 256, sizeof(block_q6_k)};
const ggml_type_traits k_iq4_nl{"iq4_nl", 32, sizeof(block_iq4_nl)};
const ggml_type_traits k_iq4_xs{"iq4_xs", 256, sizeof(block_iq4_xs)};
}  // namespace

std::optional<ggml_type> ggml_type_from_u32(uint32_t t) {
  switch (t) {
    case 0: return ggml_type::f32;
    case 1: return ggml_type::f16;
    case 2: return ggml_type::q4_0;
    case 8: return ggml_type::q8_0;
    case 10: return ggml_type::q2_k;
    case 11: return ggml_type::q3_k;
    case 12: return ggml_type::q4_k;
    case 13: return ggml_type::q5_k;
    case 14: return ggml_type::q6_k;
    case 20: return ggml_type::iq4_nl;
    case 23: return ggml_type::iq4_xs;
    case 30: return ggml_type::bf16;
    default: return std::nullopt;
  }
}

const ggml_type_traits& ggml_traits(ggml_type t) {
  switch (t) {
    case ggml_type::f32: return k_f32;
    case ggml_type::f16: return k_f16;
    case ggml_type::bf16: return k_bf16;
    case ggml_type::q8_0: return k_q8_0;
    case ggml_type::q4_0: return k_q4_0;
    case ggml_type::q2_k: return k_q2_k;
    case ggml_type::q3_k: return k_q3_k;
    case ggml_type::q4_k: return k_q4_k;
    case ggml_type::q5_k: return k_q5_k;
    case ggml_type::q6_k: return k_q6_k;
    case ggml_type::iq4_nl: return k_iq4_nl;
    case ggml_type::iq4_xs: return k_iq4_xs;
  }
  KV_ASSERT(false && "unknown ggml_type");
  return k_f32;
}

std::optional<ggml_type> ggml_type_from_name(const std::string& name) {
  for (ggml_type t : {ggml_type::f32, ggml_type::f16, ggml_type::bf16, ggml_type::q8_0,
                      ggml_type::q4_0}) {
    if (name == ggml_traits(t).name) return t;
  }
  return std::nullopt;
}

float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: value = mant * 2^-24
      float f = std::ldexp(float(mant), -24);
      std::memcpy(&bits, &f, 4);
      bits |= sign;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t fp32_to_fp16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000;
  const uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {  // inf or nan
    return uint16_t(sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 : 0));
  }
  if (absx >= 0x477ff000u) return uint16_t(sign | 0x7c00);  // rounds to >= 65520: inf
  if (absx < 0x38800000u) {                                 // below min normal: subnormal/zero
    // value / 2^-24, rounded to nearest even
    float a;
    std::memcpy(&a, &absx, 4);
    float scaled = a * 16777216.0f;  // exact (power of two)
    uint32_t m = uint32_t(std::nearbyint(scaled));
    return uint16_t(sign | m);  // m == 0x400 lands exactly on the min normal, which is right
  }
  // normal: round mantissa from 23 to 10 bits, nearest even
  uint32_t mant = absx + 0xfff + ((absx >> 13) & 1);
  uint32_t h = (mant >> 13) - (112u << 10);
  return uint16_t(sign | h);
}

uint16_t fp32_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);  // quiet nan
  x += 0x7fff + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

void dequantize_row_ref(ggml_type t, const void* src, float* dst, int64_t n) {
  switch (t) {
    case ggml_type::f32:
      std::memcpy(dst, src, size_t(n) * 4);
      return;
    case ggml_type::f16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(s[i]);
      return;
    }
    case ggml_type::bf16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(s[i]);
      return;
    }
    case ggml_type::q8_0: {
      const auto* b = static_cast<const block_q8_0*>(src);
      for (int64_t i = 0; i < n / q8_0_block; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        for (int j = 0; j < 32; ++j) dst[i * 32 + j] = float(b[i].q[j]) * d;
      }
      return;
    }
    case ggml_type::q4_0: {
      const auto* b = static_cast<const block_q4_0*>(src);
      for (int64_t i = 0; i < n / q4_0_block; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        for (int j = 0; j < 16; ++j) {
          dst[i * 32 + j] = float(int(b[i].q[j] & 0x0f) - 8) * d;
          dst[i * 32 + j + 16] = float(int(b[i].q[j] >> 4) - 8) * d;
        }
      }
      return;
    }
    case ggml_type::q2_k: {
      const auto* b = static_cast<const block_q2_k*>(src);
      for (int64_t i = 0; i < n / qk_k; ++i, dst += qk_k) {
        const float d = fp16_to_fp32(b[i].d), dmin = fp16_to_fp32(b[i].dmin);
        for (int e = 0; e < 256; ++e) {
          const int h = e / 128, j = (e % 128) / 32, l = e % 32;
          const int q = (b[i].qs[32 * h + l] >> (2 * j)) & 3;
          const int sc = b[i].scales[e / 16];
          dst[e] = d * float(sc & 15) * float(q) - dmin * float(sc >> 4);
        }
      }
      return;
    }
    case ggml_type::q3_k: {
      const auto* b = static_cast<const block_q3_k*>(src);
      for (int64_t i = 0; i < n / qk_k; ++i, dst += qk_k) {
        const float d = fp16_to_fp32(b[i].d);
        for (int e = 0; e < 256; ++e) {
          const int h = e / 128, j = (e % 128) / 32, l = e % 32;
          const int lo = (b[i].qs[32 * h + l] >> (2 * j)) & 3;
          const int hbit = (b[i].hmask[l] >> (4 * h + j)) & 1;
          dst[e] = d * float(k3_scale(b[i].scales, e / 16)) * float(lo - (hbit ? 0 : 4));
        }
      }
      return;
    }
    case ggml_type::q4_k:
    case ggml_type::q5_k: {
      const bool five = t == ggml_type::q5_k;
      const size_t bytes = five ? sizeof(block_q5_k) : sizeof(block_q4_k);
      for (int64_t i = 0; i < n / qk_k; ++i, dst += qk_k) {
        const auto* base = static_cast<const uint8_t*>(src) + size_t(i) * bytes;
        const auto* b4 = reinterpret_cast<const block_q4_k*>(base);
        const auto* b5 = reinterpret_cast<const block_q5_k*>(base);
        const float d = fp16_to_fp32(b4->d), dmin = fp16_to_fp32(b4->dmin);
        const uint8_t* qs = five ? b5->qs : b4->qs;
        for (int e = 0; e < 256; ++e) {
          const int c = e / 64, hi = (e % 64) / 32, l = e % 32;
          int q = (qs[32 * c + l] >> (4 * hi)) & 15;
          if (five) q |= ((b5->qh[l] >> (2 * c + hi)) & 1) << 4;
          int sc, m;
          k4_scale_min(b4->scales, e / 32, sc, m);
          dst[e] = d * float(sc) * float(q) - dmin * float(m);
        }
      }
      return;
    }
    case ggml_type::q6_k: {
      const auto* b = static_cast<const block_q6_k*>(src);
      for (int64_t i = 0; i < n / qk_k; ++i, dst += qk_k) {
        const float d = fp16_to_fp32(b[i].d);
        for (int e = 0; e < 256; ++e) {
          const int h = e / 128, j = (e % 128) / 32, l = e % 32;
          const int lo = (b[i].ql[64 * h + l + 32 * (j & 1)] >> (4 * (j >> 1))) & 15;
          const int hi = (b[i].qh[32 * h + l] >> (2 * j)) & 3;
          dst[e] = d * float(b[i].scales[e / 16]) * float((lo | hi << 4) - 32);
        }
      }
      return;
    }
    case ggml_type::iq4_nl: {
      const auto* b = static_cast<const block_iq4_nl*>(src);
      for (int64_t i = 0; i < n / 32; ++i, dst += 32) {
        const float d = fp16_to_fp32(b[i].d);
        for (int j = 0; j < 16; ++j) {
          dst[j] = d * float(iq4_nl_values[b[i].qs[j] & 0x0f]);
          dst[j + 16] = d * float(iq4_nl_values[b[i].qs[j] >> 4]);
        }
      }
      return;
    }
    case ggml_type::iq4_xs: {
      const auto* b = static_cast<const block_iq4_xs*>(src);
      for (int64_t i = 0; i < n / qk_k; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        for (int s = 0; s < 8; ++s, dst += 32) {
          const float dl = d * float(iq4xs_scale(b[i], s) - 32);
          const uint8_t* qs = b[i].qs + 16 * s;
          for (int j = 0; j < 16; ++j) {
            dst[j] = dl * float(iq4_nl_values[qs[j] & 0x0f]);
            dst[j + 16] = dl * float(iq4_nl_values[qs[j] >> 4]);
          }
        }
      }
      return;
    }
  }
  KV_ASSERT(false && "dequantize_row_ref: unknown type");
}

void quantize_row_ref(ggml_type t, const float* src, void* dst, int64_t n) {
  switch (t) {
    case ggml_type::f32:
      std::memcpy(dst, src, size_t(n) * 4);
      return;
    case ggml_type::f16: {
      auto* d = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = fp32_to_fp16(src[i]);
      return;
    }
    case ggml_type::bf16: {
      auto* d = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = fp32_to_bf16(src[i]);
      return;
    }
    case ggml_type::q8_0: {  // d = amax/127, q = round(x/d)  (as ggml's reference)
      auto* b = static_cast<block_q8_0*>(dst);
      for (int64_t i = 0; i < n / q8_0_block; ++i) {
        float amax = 0;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(src[i * 32 + j]));
        const float d = amax / 127.0f;
        const float id = d != 0 ? 1.0f / d : 0.0f;
        b[i].d = fp32_to_fp16(d);
        for (int j = 0; j < 32; ++j) b[i].q[j] = int8_t(std::lround(src[i * 32 + j] * id));
      }
      return;
    }
    case ggml_type::q4_0: {  // d = max/-8 (signed max by magnitude), q = clamp(x/d + 8.5)
      auto* b = static_cast<block_q4_0*>(dst);
      for (int64_t i = 0; i < n / q4_0_block; ++i) {
        float amax = 0, maxv = 0;
        for (int j = 0; j < 32; ++j) {
          const float v = src[i * 32 + j];
          if (std::fabs(v) > amax) { amax = std::fabs(v); maxv = v; }
        }
        const float d = maxv / -8.0f;
        const float id = d != 0 ? 1.0f / d : 0.0f;
        b[i].d = fp32_to_fp16(d);
        for (int j = 0; j < 16; ++j) {
          const int q0 = std::min(15, int(src[i * 32 + j] * id + 8.5f));
          const int q1 = std::min(15, int(src[i * 32 + j + 16] * id + 8.5f));
          b[i].q[j] = uint8_t(q0 | (q1 << 4));
        }
      }
      return;
    }
    case ggml_type::q2_k:
    case ggml_type::q3_k:
    case ggml_type::q4_k:
    case ggml_type::q5_k:
    case ggml_type::q6_k:
    case ggml_type::iq4_nl:
    case ggml_type::iq4_xs:
      throw engine_error(std::string("quantize_row_ref: kvarena reads ") + ggml_traits(t).name +
                         " tensors but does not write them (quantize with llama.cpp)");
  }
  KV_ASSERT(false && "quantize_row_ref: unknown type");
}

}  // namespace kvarena
