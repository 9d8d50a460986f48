// cuda-quant.h: decoding of ggml's quantized blocks (Q8_0, Q4_0, Q2_K, Q3_K, Q4_K, Q5_K,
// Q6_K) and the per-lane work of the matrix-vector kernel as KV_HD functions, so the device kernels that keep weights quantized
// (cu::qmatvec, cu::dequant_rows_f16) and the CPU test that checks them bit for bit against
// dequantize_row_ref (ggml-types.cpp) run the very same code. Byte offsets follow the block
// layouts in ggml-types.h; fp16 fields are read byte by byte (blocks are 2-byte aligned only).
// Products and differences use round-to-nearest intrinsics on the device, so nvcc cannot
// fuse them into FMAs: the result equals the host reference's float arithmetic exactly.
#pragma once
#include <cstdint>

#include "cuda-launch.h"
#include "ggml-types.h"
#if defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

namespace kvarena::cu {

// The types kept quantized on the device (their decode below).
inline bool quant_on_device(ggml_type t) {
  switch (t) {
    case ggml_type::q8_0:
    case ggml_type::q4_0:
    case ggml_type::q2_k:
    case ggml_type::q3_k:
    case ggml_type::q4_k:
    case ggml_type::q5_k:
    case ggml_type::q6_k: return true;
    default: return false;
  }
}

KV_HD inline float qf16(const uint8_t* p) {
  const uint16_t h = uint16_t(p[0] | (p[1] << 8));
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(h));
#else
  return fp16_to_fp32(h);
#endif
}
KV_HD inline float qmul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
KV_HD inline float qsub(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

// k4_scale_min / k3_scale of ggml-types.h, for both sides.
KV_HD inline void qk4_scale_min(const uint8_t* s, int g, int& sc, int& m) {
  if (g < 4) {
    sc = s[g] & 63;
    m = s[g + 4] & 63;
  } else {
    sc = (s[g + 4] & 0x0f) | ((s[g - 4] >> 6) << 4);
    m = (s[g + 4] >> 4) | ((s[g] >> 6) << 4);
  }
}
KV_HD inline int qk3_scale(const uint8_t* s, int g) {
  const int lo = (s[g % 8] >> (4 * (g / 8))) & 0x0f;
  const int hi = (s[8 + g % 4] >> (2 * (g / 4))) & 3;
  return (lo | hi << 4) - 32;
}

// Elements e0..e0+7 (e0 a multiple of 8) of a row of type t starting at `row` -> out[0..8).
// Every 8-element run lies inside one block and one scale group of every type here.
KV_HD inline void dequant8(ggml_type t, const uint8_t* row, int64_t e0, float* out) {
  switch (t) {
    case ggml_type::q8_0: {  // 34 bytes: d, q[32]
      const uint8_t* b = row + (e0 / 32) * 34;
      const float d = qf16(b);
      for (int k = 0; k < 8; ++k) out[k] = qmul(float(int8_t(b[2 + e0 % 32 + k])), d);
      return;
    }
    case ggml_type::q4_0: {  // 18 bytes: d, q[16] (element j low nibble, j+16 high)
      const uint8_t* b = row + (e0 / 32) * 18;
      const float d = qf16(b);
      for (int k = 0; k < 8; ++k) {
        const int j = int(e0 % 32) + k;
        const int q = j < 16 ? (b[2 + j] & 0x0f) : (b[2 + j - 16] >> 4);
        out[k] = qmul(float(q - 8), d);
      }
      return;
    }
    case ggml_type::q2_k: {  // 84 bytes: scales[16]@0, qs[64]@16, d@80, dmin@82
      const uint8_t* b = row + (e0 / 256) * 84;
      const float d = qf16(b + 80), dmin = qf16(b + 82);
      for (int k = 0; k < 8; ++k) {
        const int e = int(e0 % 256) + k, h = e / 128, j = (e % 128) / 32, l = e % 32;
        const int q = (b[16 + 32 * h + l] >> (2 * j)) & 3;
        const int sc = b[e / 16];
        out[k] = qsub(qmul(qmul(d, float(sc & 15)), float(q)), qmul(dmin, float(sc >> 4)));
      }
      return;
    }
    case ggml_type::q3_k: {  // 110 bytes: hmask[32]@0, qs[64]@32, scales[12]@96, d@108
      const uint8_t* b = row + (e0 / 256) * 110;
      const float d = qf16(b + 108);
      for (int k = 0; k < 8; ++k) {
        const int e = int(e0 % 256) + k, h = e / 128, j = (e % 128) / 32, l = e % 32;
        const int lo = (b[32 + 32 * h + l] >> (2 * j)) & 3;
        const int hbit = (b[l] >> (4 * h + j)) & 1;
        out[k] = qmul(qmul(d, float(qk3_scale(b + 96, e / 16))), float(lo - (hbit ? 0 : 4)));
      }
      return;
    }
    case ggml_type::q4_k:
    case ggml_type::q5_k: {  // d@0, dmin@2, scales[12]@4, (Q5_K: qh[32]@16), qs[128]@16 or @48
      const bool five = t == ggml_type::q5_k;
      const uint8_t* b = row + (e0 / 256) * (five ? 176 : 144);
      const uint8_t* qs = b + (five ? 48 : 16);
      const float d = qf16(b), dmin = qf16(b + 2);
      int sc, m;
      qk4_scale_min(b + 4, int(e0 % 256) / 32, sc, m);
      for (int k = 0; k < 8; ++k) {
        const int e = int(e0 % 256) + k, c = e / 64, hi = (e % 64) / 32, l = e % 32;
        int q = (qs[32 * c + l] >> (4 * hi)) & 15;
        if (five) q |= ((b[16 + l] >> (2 * c + hi)) & 1) << 4;
        out[k] = qsub(qmul(qmul(d, float(sc)), float(q)), qmul(dmin, float(m)));
      }
      return;
    }
    case ggml_type::q6_k: {  // 210 bytes: ql[128]@0, qh[64]@128, scales[16]@192 (int8), d@208
      const uint8_t* b = row + (e0 / 256) * 210;
      const float d = qf16(b + 208);
      for (int k = 0; k < 8; ++k) {
        const int e = int(e0 % 256) + k, h = e / 128, j = (e % 128) / 32, l = e % 32;
        const int lo = (b[64 * h + l + 32 * (j & 1)] >> (4 * (j >> 1))) & 15;
        const int hi = (b[128 + 32 * h + l] >> (2 * j)) & 3;
        out[k] = qmul(qmul(d, float(int8_t(b[192 + e / 16]))), float((lo | hi << 4) - 32));
      }
      return;
    }
    default:
      for (int k = 0; k < 8; ++k) out[k] = 0.f;  // not a device-quantized type (callers check)
      return;
  }
}

// F16 bits -> float, on either side.
KV_HD inline float qh2f(uint16_t h) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(h));
#else
  return fp16_to_fp32(h);
#endif
}

// Lane `lane` (0..31) of the warp cu::qmatvec gives a row: its partial dot products acc[i]
// (i < N tokens) of the quantized row (cols elements) with the F16 activation rows x (ldx
// apart), over the 8-element runs lane, lane + 32, ... The warp then sums the 32 lanes with
// the butterfly (xor 16..1).
template <int N>
KV_HD inline void qmatvec_lane(ggml_type t, const uint8_t* row, int64_t cols, const uint16_t* x, int64_t ldx,
                               int lane, float* acc) {
  for (int i = 0; i < N; ++i) acc[i] = 0.f;
  float v[8];
  for (int64_t e0 = int64_t(lane) * 8; e0 < cols; e0 += 32 * 8) {
    dequant8(t, row, e0, v);
    for (int i = 0; i < N; ++i) {
      const uint16_t* xi = x + i * ldx + e0;
      float s = 0.f;
      for (int k = 0; k < 8; ++k) s += v[k] * qh2f(xi[k]);
      acc[i] += s;
    }
  }
}

}  // namespace kvarena::cu
