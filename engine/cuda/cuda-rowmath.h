// cuda-rowmath.h: the per-element math of the RoPE and per-head RMSNorm kernels as KV_HD
// functions, so the kernels (cuda-kernels.cu) and their CPU emulations (cuda-ref.cpp, run by
// test-cuda on machines without a GPU) execute the very same code.
#pragma once
#include <math.h>

#include <cstdint>

#include "cuda-launch.h"

namespace kvarena::cu {

// RoPE angle of pair j at position pos, in double (angles reach thousands of radians), in the
// CPU forward's order: pos * freq_scale * base^(-2j/rope_dims) / freq_factors[j] (factors:
// Llama 3's rope_freqs.weight, null = all 1; freq_scale: 1 / linear scaling factor).
KV_HD inline double rope_theta(int64_t pos, int64_t j, int64_t rope_dims, float freq_base, float freq_scale,
                               const float* freq_factors) {
  return double(pos) * double(freq_scale) * pow(double(freq_base), -2.0 * double(j) / double(rope_dims)) /
         (freq_factors ? double(freq_factors[j]) : 1.0);
}

// Element e of the RoPE launch over (n rows, n_heads heads, rope_dims/2 pairs): rotates one
// pair of row i (rows ld floats apart) at position pos[i]; adjacent (2j, 2j+1) or NEOX
// halves (j, j + rope_dims/2). cos/sin in double, the rotation in float.
KV_HD inline void rope_pair(float* x, int64_t ld, int64_t n_heads, int64_t head_dim, int64_t rope_dims,
                            const int32_t* pos, float freq_base, float freq_scale, const float* freq_factors,
                            bool neox, int64_t e) {
  const int64_t half = rope_dims / 2;
  const int64_t j = e % half, h = (e / half) % n_heads, i = e / (half * n_heads);
  const double theta = rope_theta(pos[i], j, rope_dims, freq_base, freq_scale, freq_factors);
  const float c = float(cos(theta)), s = float(sin(theta));
  float* a = x + i * ld + h * head_dim + (neox ? j : 2 * j);
  const int64_t pair = neox ? half : 1;
  const float x0 = a[0], x1 = a[pair];
  a[0] = x0 * c - x1 * s;
  a[pair] = x0 * s + x1 * c;
}

// Per-head RMSNorm by one warp of 32 lanes: lane l's partial sum of squares over channels
// l, l+32, ... (in that order), then the butterfly (xor 16, 8, 4, 2, 1) every lane ends with.
constexpr int k_head_norm_lanes = 32;
KV_HD inline float head_norm_partial(const float* xh, int64_t head_dim, int lane) {
  float ss = 0.f;
  for (int64_t c = lane; c < head_dim; c += k_head_norm_lanes) ss += xh[c] * xh[c];
  return ss;
}
// 1 / rms of the head from its sum of squares (sqrt then divide: the same on host and device).
KV_HD inline float head_norm_inv(float ss, int64_t head_dim, float eps) {
  return 1.f / sqrtf(ss / float(head_dim) + eps);
}

}  // namespace kvarena::cu
