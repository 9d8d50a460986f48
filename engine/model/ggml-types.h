// ggml-types.h: the ggml tensor element types kvarena reads and writes (F32, F16, BF16,
// Q8_0, Q4_0; read only: the K-quants Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and the non-linear
// IQ4_NL, IQ4_XS), their block layouts,
// scalar conversions and plain-loop (reference) dequantise/quantise routines. Optimised kernels live in cpu-kernels; these are the
// reference every kernel is checked against.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

namespace kvarena {

enum class ggml_type : uint32_t {
  f32 = 0, f16 = 1, q4_0 = 2, q8_0 = 8,
  q2_k = 10, q3_k = 11, q4_k = 12, q5_k = 13, q6_k = 14,  // read only (see quantize_row_ref)
  iq4_nl = 20, iq4_xs = 23,                               // read only
  bf16 = 30
};

struct ggml_type_traits {
  const char* name;
  int64_t block_elems;  // elements per block (1 for plain types)
  size_t block_bytes;   // bytes per block
};

// nullopt for types kvarena does not support.
std::optional<ggml_type> ggml_type_from_u32(uint32_t t);
const ggml_type_traits& ggml_traits(ggml_type t);
// "f32", "q8_0", ...: the types kvarena can also write (quantize_row_ref), so no K-quant.
std::optional<ggml_type> ggml_type_from_name(const std::string& name);
// The K-quants: super-blocks of 256 elements, matmul activations rounded to Q8_K.
inline bool ggml_is_k_quant(ggml_type t) {
  return t == ggml_type::q2_k || t == ggml_type::q3_k || t == ggml_type::q4_k ||
         t == ggml_type::q5_k || t == ggml_type::q6_k;
}

// The 4-bit non-linear types: each nibble indexes a 16-entry codebook (iq4_nl_values).
// IQ4_NL blocks of 32, matmul activations rounded to Q8_0 (as llama.cpp's vec_dot_type);
// IQ4_XS super-blocks of 256, activations rounded to Q8_K.
inline bool ggml_is_iq4(ggml_type t) { return t == ggml_type::iq4_nl || t == ggml_type::iq4_xs; }

// Bytes of a row of n elements; n must be a multiple of the block size.
inline size_t ggml_row_bytes(ggml_type t, int64_t n) {
  const auto& tr = ggml_traits(t);
  return size_t(n / tr.block_elems) * tr.block_bytes;
}

constexpr int64_t q8_0_block = 32;  // Q8_0 block: fp16 scale d, then 32 int8 q; x = q*d
constexpr int64_t q4_0_block = 32;  // Q4_0 block: fp16 scale d, 16 bytes of nibbles; x = (q-8)*d

#pragma pack(push, 1)
struct block_q8_0 {
  uint16_t d;      // fp16 scale
  int8_t q[32];    // (32,)
};
struct block_q4_0 {
  uint16_t d;      // fp16 scale
  uint8_t q[16];   // element j: low nibble of q[j]; element j+16: high nibble
};

// K-quants (ggml's ggml-common.h layouts; element order within a super-block of 256 as
// dequantize_row_ref decodes it). fp16 fields are uint16_t.
// Q2_K: 16 groups of 16; x = d*(sc&15)*q - dmin*(sc>>4), q 2 bits. Byte qs[32h + l] holds
//   elements 128h + 32j + l (j = 0..3, bits 2j..2j+1) for l < 32.
struct block_q2_k {
  uint8_t scales[16];  // per group: low nibble scale, high nibble min
  uint8_t qs[64];
  uint16_t d, dmin;
};
// Q3_K: 16 groups of 16; x = d*(s-32)*(q - 4*(1-hbit)), s 6 bits (packed in 12 bytes: low
//   4 bits of s[g] in scales[g%8] (nibble g/8), high 2 bits in scales[8 + g%4] (bits 2*(g/4))),
//   q's low 2 bits as Q2_K's qs, its third bit in hmask[l] bit (4h + j) for element 128h+32j+l.
struct block_q3_k {
  uint8_t hmask[32];
  uint8_t qs[64];
  uint8_t scales[12];
  uint16_t d;
};
// Q4_K: 8 groups of 32; x = d*sc[g]*q - dmin*m[g], sc/m 6 bits packed in 12 bytes (see
//   k4_scale_min); byte qs[32c + l] holds element 64c + l (low nibble) and 64c + 32 + l (high).
struct block_q4_k {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qs[128];
};
// Q5_K: Q4_K plus a fifth bit: element 64c + l has bit 2c of qh[l], 64c + 32 + l bit 2c+1.
struct block_q5_k {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qh[32];
  uint8_t qs[128];
};
// Q6_K: 16 groups of 16; x = d*scales[g]*(q - 32), q 6 bits. In half h (128 elements):
//   element 128h + 32j + l (l < 32) has low 4 bits in ql[64h + l + 32*(j&1)] (nibble j>>1)
//   and high 2 bits in qh[32h + l] bits 2j..2j+1.
struct block_q6_k {
  uint8_t ql[128];
  uint8_t qh[64];
  int8_t scales[16];
  uint16_t d;
};
// IQ4_NL: x = d * iq4_nl_values[q], q 4 bits; byte qs[j] holds element j (low nibble) and
//   element j + 16 (high nibble).
struct block_iq4_nl {
  uint16_t d;      // fp16 scale
  uint8_t qs[16];
};
// IQ4_XS: 8 sub-blocks of 32; sub-block s: x = d * (ls - 32) * iq4_nl_values[q], ls 6 bits:
//   low 4 bits in scales_l[s/2] (nibble s%2), high 2 bits in scales_h bits 2s..2s+1 (see
//   iq4xs_scale); byte qs[16s + j] holds element 32s + j (low nibble) and 32s + 16 + j (high).
struct block_iq4_xs {
  uint16_t d;  // fp16 scale
  uint16_t scales_h;
  uint8_t scales_l[4];
  uint8_t qs[128];
};
#pragma pack(pop)
static_assert(sizeof(block_q8_0) == 34);
static_assert(sizeof(block_q4_0) == 18);
static_assert(sizeof(block_q2_k) == 84);
static_assert(sizeof(block_q3_k) == 110);
static_assert(sizeof(block_q4_k) == 144);
static_assert(sizeof(block_q5_k) == 176);
static_assert(sizeof(block_q6_k) == 210);
static_assert(sizeof(block_iq4_nl) == 18);
static_assert(sizeof(block_iq4_xs) == 136);
constexpr int64_t qk_k = 256;  // K-quant super-block

// Q4_K / Q5_K: the 6-bit scale and min of group g (0..7) from the 12 packed bytes: groups
// 0..3 in the low 6 bits of bytes g and g+4; groups 4..7 take 4 bits from byte g+4 (low
// nibble: scale, high: min) and their top 2 bits from the top of bytes g-4 and g.
inline void k4_scale_min(const uint8_t* s, int g, int& sc, int& m) {
  if (g < 4) {
    sc = s[g] & 63;
    m = s[g + 4] & 63;
  } else {
    sc = (s[g + 4] & 0x0f) | ((s[g - 4] >> 6) << 4);
    m = (s[g + 4] >> 4) | ((s[g] >> 6) << 4);
  }
}
// Q3_K: the signed scale (-32..31) of group g (0..15).
inline int k3_scale(const uint8_t* s, int g) {
  const int lo = (s[g % 8] >> (4 * (g / 8))) & 0x0f;
  const int hi = (s[8 + g % 4] >> (2 * (g / 4))) & 3;
  return (lo | hi << 4) - 32;
}

// IQ4_NL / IQ4_XS codebook: the value of each 4-bit index (ggml's kvalues_iq4nl).
inline constexpr int8_t iq4_nl_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                             1,    13,   25,  38,  53,  69,  89,  113};
// IQ4_XS: the unsigned 6-bit scale ls (0..63) of sub-block s (0..7); the factor is ls - 32.
inline int iq4xs_scale(const block_iq4_xs& b, int s) {
  return ((b.scales_l[s / 2] >> (4 * (s % 2))) & 0x0f) | (((b.scales_h >> (2 * s)) & 3) << 4);
}

float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_fp16(float f);  // round to nearest even, like F16C
inline float bf16_to_fp32(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t fp32_to_bf16(float f);  // round to nearest even

// Reference (plain loop) conversions of one row of n elements (a multiple of the block).
// quantize_row_ref throws engine_error for the K-quants and IQ4 types (kvarena only reads them).
void dequantize_row_ref(ggml_type t, const void* src, float* dst, int64_t n);
void quantize_row_ref(ggml_type t, const float* src, void* dst, int64_t n);

}  // namespace kvarena
