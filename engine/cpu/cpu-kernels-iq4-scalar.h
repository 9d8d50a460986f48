// cpu-kernels-iq4-scalar.h: internal to the CPU backend. The IQ4_NL / IQ4_XS pieces every
// kernel variant shares (block layouts in ggml-types.h): the kernels' own copy of the
// 16-entry codebook, IQ4_XS's sub-block scales, and the generic variant's plain kernels.
//   IQ4_NL (blocks of 32)  . Q8_0 activations:  sum_b  d_w d_x * sum_j v[q_j] xq_j
//   IQ4_XS (blocks of 256) . Q8_K activations:  sum_B  d_w d_x * sum_s (ls_s - 32) * sum_{j in s} v[q_j] xq_j
// (llama.cpp's vec_dot_iq4_nl_q8_0 / vec_dot_iq4_xs_q8_K: integer sums, then one float
// scale per block). Everything is static (internal linkage): each variant file compiles its
// own copy with its own ISA flags, and nothing calls ggml-types.h's helpers (see
// cpu-kernels-impl.h); the reference (ggml-types.cpp) decodes with its own code.
#pragma once
#include <cstdint>

#include "cpu-kernels-impl.h"

namespace kvarena::cpu {

// The codebook (ggml's kvalues_iq4nl): the value of each 4-bit index.
alignas(16) static constexpr int8_t iq4_kvalues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                                       1,    13,   25,  38,  53,  69,  89,  113};

// IQ4_XS: sub-block s's (0..7) signed scale ls - 32 (-32..31): ls's low 4 bits are nibble
// s%2 of scales_l[s/2], its high 2 bits are bits 2s, 2s+1 of scales_h.
static inline int iq4xs_sub_scale(const block_iq4_xs& b, int s) {
  const int lo = (b.scales_l[s >> 1] >> (4 * (s & 1))) & 0x0f;
  const int hi = (b.scales_h >> (2 * s)) & 3;
  return (lo | hi << 4) - 32;
}

// v: (32,) = the codebook values of one 32-element run: qs (16 bytes) low nibbles then high.
static inline void iq4_values32(const uint8_t* qs, int8_t* v) {
  for (int j = 0; j < 16; ++j) {
    v[j] = iq4_kvalues[qs[j] & 0x0f];
    v[j + 16] = iq4_kvalues[qs[j] >> 4];
  }
}

// ---- the generic variant's kernels (H: fp16 bits -> float) --------------------------------

// y[t*ldy + r] for r in [r0, r1), t < n_tok: IQ4_NL rows . xq: (n_tok, in/32) Q8_0 blocks.
template <float (*H)(uint16_t)>
void iq4nl_matvec_plain(const weights& w, const block_q8x* xq, int n_tok, int64_t r0, int64_t r1, float* y,
                        int64_t ldy) {
  const int64_t nb = w.in / 32;
  for (int64_t r = r0; r < r1; ++r) {
    const auto* row = reinterpret_cast<const block_iq4_nl*>(w.data + size_t(r) * w.row_bytes);
    for (int t = 0; t < n_tok; ++t) {
      float s = 0.0f;
      for (int64_t b = 0; b < nb; ++b) {
        int8_t v[32];
        iq4_values32(row[b].qs, v);
        const block_q8x& x = xq[t * nb + b];
        int32_t acc = 0;
        for (int j = 0; j < 32; ++j) acc += int32_t(v[j]) * x.q[j];
        s += H(row[b].d) * x.d * float(acc);
      }
      y[t * ldy + r] = s;
    }
  }
}

// The same for IQ4_XS rows . xq: (n_tok, in/256) Q8_K blocks.
template <float (*H)(uint16_t)>
void iq4xs_matvec_plain(const weights& w, const block_q8k* xq, int n_tok, int64_t r0, int64_t r1, float* y,
                        int64_t ldy) {
  const int64_t nb = w.in / 256;
  for (int64_t r = r0; r < r1; ++r) {
    const auto* row = reinterpret_cast<const block_iq4_xs*>(w.data + size_t(r) * w.row_bytes);
    for (int t = 0; t < n_tok; ++t) {
      float s = 0.0f;
      for (int64_t b = 0; b < nb; ++b) {
        const block_q8k& x = xq[t * nb + b];
        int32_t acc = 0;
        for (int sb = 0; sb < 8; ++sb) {
          int8_t v[32];
          iq4_values32(row[b].qs + 16 * sb, v);
          int32_t part = 0;
          for (int j = 0; j < 32; ++j) part += int32_t(v[j]) * x.q[32 * sb + j];
          acc += iq4xs_sub_scale(row[b], sb) * part;
        }
        s += H(row[b].d) * x.d * float(acc);
      }
      y[t * ldy + r] = s;
    }
  }
}

// dst: (in,) = row r dequantised (the reference's values, bit for bit: d * v, and for
// IQ4_XS (d * (ls - 32)) * v, each product rounded to float as ggml's dequantize_row does).
template <float (*H)(uint16_t)>
void iq4_get_row_plain(const weights& w, int64_t r, float* dst) {
  const uint8_t* row = w.data + size_t(r) * w.row_bytes;
  int8_t v[32];
  if (w.type == ggml_type::iq4_nl) {
    const auto* b = reinterpret_cast<const block_iq4_nl*>(row);
    for (int64_t i = 0; i < w.in / 32; ++i, dst += 32) {
      const float d = H(b[i].d);
      iq4_values32(b[i].qs, v);
      for (int j = 0; j < 32; ++j) dst[j] = d * float(v[j]);
    }
    return;
  }
  const auto* b = reinterpret_cast<const block_iq4_xs*>(row);
  for (int64_t i = 0; i < w.in / 256; ++i) {
    const float d = H(b[i].d);
    for (int sb = 0; sb < 8; ++sb, dst += 32) {
      const float dl = d * float(iq4xs_sub_scale(b[i], sb));
      iq4_values32(b[i].qs + 16 * sb, v);
      for (int j = 0; j < 32; ++j) dst[j] = dl * float(v[j]);
    }
  }
}

}  // namespace kvarena::cpu
