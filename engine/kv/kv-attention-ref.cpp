// kv-attention-ref.cpp: reference attention over kv_store views (see the header).
#include "kv-attention-ref.h"

#include <cmath>
#include <limits>
#include <vector>

#include "engine-error.h"
#include "ggml-types.h"

namespace kvarena {

namespace {
void load(const kv_head_view& v, int64_t t, bool value, float* dst) {
  const int64_t d = v.head_dim;
  if (t < v.n_int8) {
    const int8_t* q = (value ? v.v_q : v.k_q) + t * d;
    const float* s = (value ? v.v_scale : v.k_scale) + int64_t(v.block[t]) * d;
    for (int64_t c = 0; c < d; ++c) dst[c] = float(q[c]) * s[c];
  } else {
    const bool wrapped = t >= v.n_int8 + v.n_fp16;  // the ring's second part
    const int64_t r = t - v.n_int8 - (wrapped ? v.n_fp16 : 0);
    if (v.k32) {  // an F32 store
      const float* x = wrapped ? (value ? v.v32b : v.k32b) : (value ? v.v32 : v.k32);
      for (int64_t c = 0; c < d; ++c) dst[c] = x[r * d + c];
    } else {
      const uint16_t* h = wrapped ? (value ? v.v16b : v.k16b) : (value ? v.v16 : v.k16);
      for (int64_t c = 0; c < d; ++c) dst[c] = fp16_to_fp32(h[r * d + c]);
    }
  }
}
}  // namespace

void kv_load_key(const kv_head_view& v, int64_t t, float* dst) { load(v, t, false, dst); }
void kv_load_value(const kv_head_view& v, int64_t t, float* dst) { load(v, t, true, dst); }

void kv_attend_ref(kv_store& store, int64_t layer, const float* q, int64_t q_stride,
                   const int32_t* q_pos, int64_t n_q, int64_t n_heads, float scale, float* out,
                   int64_t out_stride, bool add_mass) {
  const kv_store_config& cfg = store.config();
  const int64_t d = cfg.head_dim;
  KV_ASSERT(n_heads % cfg.n_kv_heads == 0);
  const int64_t group = n_heads / cfg.n_kv_heads;
  for (int64_t g = 0; g < cfg.n_kv_heads; ++g) {
    kv_head_view v = store.head_view(layer, g);
    const int64_t n = v.n();
    std::vector<float> K(static_cast<size_t>(n * d)), V(K.size()), p(static_cast<size_t>(n));  // (n, head_dim)
    for (int64_t t = 0; t < n; ++t) {
      kv_load_key(v, t, &K[t * d]);
      kv_load_value(v, t, &V[t * d]);
    }
    for (int64_t i = 0; i < n_q; ++i)
      for (int64_t h = g * group; h < (g + 1) * group; ++h) {
        const float* qr = q + i * q_stride + h * d;
        float* o = out + i * out_stride + h * d;
        float mx = -std::numeric_limits<float>::infinity();
        for (int64_t t = 0; t < n; ++t) {
          if (v.pos[t] > q_pos[i]) { p[t] = -std::numeric_limits<float>::infinity(); continue; }
          double s = 0;
          for (int64_t c = 0; c < d; ++c) s += double(qr[c]) * K[t * d + c];
          p[t] = float(s) * scale;
          mx = std::max(mx, p[t]);
        }
        for (int64_t c = 0; c < d; ++c) o[c] = 0.f;
        if (mx == -std::numeric_limits<float>::infinity()) continue;  // nothing visible
        double sum = 0;
        for (int64_t t = 0; t < n; ++t) {
          p[t] = std::isinf(p[t]) ? 0.f : std::exp(p[t] - mx);
          sum += p[t];
        }
        for (int64_t t = 0; t < n; ++t) {
          const float w = float(p[t] / sum);
          if (add_mass) v.mass[t] += w;
          for (int64_t c = 0; c < d; ++c) o[c] += w * V[t * d + c];
        }
      }
  }
}

}  // namespace kvarena
