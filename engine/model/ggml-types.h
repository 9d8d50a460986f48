// ggml-types.h: the ggml tensor element types kvarena reads and writes (F32, F16, BF16,
// Q8_0, Q4_0), their block layouts, scalar conversions and plain-loop (reference)
// dequantise/quantise routines. Optimised kernels live in cpu-kernels; these are the
// reference every kernel is checked against.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

namespace kvarena {

enum class ggml_type : uint32_t { f32 = 0, f16 = 1, q4_0 = 2, q8_0 = 8, bf16 = 30 };

struct ggml_type_traits {
  const char* name;
  int64_t block_elems;  // elements per block (1 for plain types)
  size_t block_bytes;   // bytes per block
};

// nullopt for types kvarena does not support.
std::optional<ggml_type> ggml_type_from_u32(uint32_t t);
const ggml_type_traits& ggml_traits(ggml_type t);
std::optional<ggml_type> ggml_type_from_name(const std::string& name);  // "f32", "q8_0", ...

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
#pragma pack(pop)
static_assert(sizeof(block_q8_0) == 34);
static_assert(sizeof(block_q4_0) == 18);

float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_fp16(float f);  // round to nearest even, like F16C
inline float bf16_to_fp32(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t fp32_to_bf16(float f);  // round to nearest even

// Reference (plain loop) conversions of one row of n elements.
void dequantize_row_ref(ggml_type t, const void* src, float* dst, int64_t n);
void quantize_row_ref(ggml_type t, const float* src, void* dst, int64_t n);

}  // namespace kvarena
