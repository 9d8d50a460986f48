// cuda-ref.cpp: CPU references and the span-attention emulation (see the header).
#include "cuda-ref.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "cpu-kernels.h"
#include "cuda-quant.h"
#include "cuda-rowmath.h"
#include "engine-error.h"
#include "ggml-types.h"
#include "kv/kv-store.h"
#include "model-forward.h"

namespace kvarena::cuda_ref {

void embed_f16(const uint16_t* table, int64_t dim, const int32_t* tokens, int64_t n, float* x) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < dim; ++c) x[i * dim + c] = fp16_to_fp32(table[int64_t(tokens[i]) * dim + c]);
}

void rope(float* x, int64_t ld, int64_t n, int64_t n_heads, int64_t head_dim, int64_t rope_dims,
          const int32_t* pos, float freq_base, float freq_scale, const float* freq_factors, bool neox) {
  for (int64_t i = 0; i < n; ++i) {
    if (neox) {
      detail::rope_neox(x + i * ld, n_heads, head_dim, rope_dims, pos[i], freq_base, freq_scale, freq_factors);
    } else {
      ref::rope_adjacent(x + i * ld, n_heads, head_dim, rope_dims, pos[i], freq_base, freq_scale, freq_factors);
    }
  }
}

void rope_emulated(float* x, int64_t ld, int64_t n, int64_t n_heads, int64_t head_dim, int64_t rope_dims,
                   const int32_t* pos, float freq_base, float freq_scale, const float* freq_factors, bool neox) {
  for (int64_t e = 0; e < n * n_heads * (rope_dims / 2); ++e)
    cu::rope_pair(x, ld, n_heads, head_dim, rope_dims, pos, freq_base, freq_scale, freq_factors, neox, e);
}

void rmsnorm_heads(float* x, int64_t ld, int64_t n, int64_t n_heads, int64_t head_dim, const float* w, float eps) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t h = 0; h < n_heads; ++h) {
      float* xh = x + i * ld + h * head_dim;
      ref::rmsnorm(xh, w, xh, head_dim, eps);
    }
}

void rmsnorm_heads_emulated(float* x, int64_t ld, int64_t n, int64_t n_heads, int64_t head_dim, const float* w,
                            float eps) {
  constexpr int L = cu::k_head_norm_lanes;
  for (int64_t u = 0; u < n * n_heads; ++u) {
    float* xh = x + (u / n_heads) * ld + (u % n_heads) * head_dim;
    float v[L], t[L];
    for (int l = 0; l < L; ++l) v[l] = cu::head_norm_partial(xh, head_dim, l);
    for (int o = 16; o > 0; o >>= 1) {  // __shfl_xor_sync: lane l adds lane l^o's value
      for (int l = 0; l < L; ++l) t[l] = v[l] + v[l ^ o];
      std::copy(t, t + L, v);
    }
    const float inv = cu::head_norm_inv(v[0], head_dim, eps);
    for (int64_t c = 0; c < head_dim; ++c) xh[c] = xh[c] * inv * w[c];
  }
}

namespace {
template <int N>
void qmatvec_rows(ggml_type t, const uint8_t* w, int64_t rows, int64_t cols, const uint16_t* x, int64_t ldx,
                  float* y, int64_t ldy, float beta) {
  const size_t rb = ggml_row_bytes(t, cols);
  for (int64_t r = 0; r < rows; ++r) {
    float acc[32][N], tmp[32][N];
    for (int l = 0; l < 32; ++l) cu::qmatvec_lane<N>(t, w + size_t(r) * rb, cols, x, ldx, l, acc[l]);
    for (int o = 16; o > 0; o >>= 1) {  // __shfl_xor_sync: lane l adds lane l^o's value
      for (int l = 0; l < 32; ++l)
        for (int i = 0; i < N; ++i) tmp[l][i] = acc[l][i] + acc[l ^ o][i];
      std::memcpy(acc, tmp, sizeof(acc));
    }
    for (int i = 0; i < N; ++i) y[i * ldy + r] = beta == 0.f ? acc[0][i] : beta * y[i * ldy + r] + acc[0][i];
  }
}
}  // namespace

void qmatvec_emulated(ggml_type t, const uint8_t* w, int64_t rows, int64_t cols, const uint16_t* x, int64_t ldx,
                      int64_t n, float* y, int64_t ldy, float beta) {
  KV_ASSERT(cu::quant_on_device(t) && cols % 8 == 0 && n >= 1 && n <= cu::k_qmatvec_max_tokens);
  switch (n) {
    case 1: return qmatvec_rows<1>(t, w, rows, cols, x, ldx, y, ldy, beta);
    case 2: return qmatvec_rows<2>(t, w, rows, cols, x, ldx, y, ldy, beta);
    case 3: return qmatvec_rows<3>(t, w, rows, cols, x, ldx, y, ldy, beta);
    case 4: return qmatvec_rows<4>(t, w, rows, cols, x, ldx, y, ldy, beta);
    case 5: return qmatvec_rows<5>(t, w, rows, cols, x, ldx, y, ldy, beta);
    case 6: return qmatvec_rows<6>(t, w, rows, cols, x, ldx, y, ldy, beta);
    case 7: return qmatvec_rows<7>(t, w, rows, cols, x, ldx, y, ldy, beta);
    default: return qmatvec_rows<8>(t, w, rows, cols, x, ldx, y, ldy, beta);
  }
}

void dequant_rows_f16(ggml_type t, const uint8_t* w, int64_t r0, int64_t n_rows, int64_t cols, uint16_t* dst) {
  const size_t rb = ggml_row_bytes(t, cols);
  float v[8];
  for (int64_t r = 0; r < n_rows; ++r)
    for (int64_t e0 = 0; e0 < cols; e0 += 8) {
      cu::dequant8(t, w + size_t(r0 + r) * rb, e0, v);
      for (int k = 0; k < 8; ++k) dst[r * cols + e0 + k] = fp32_to_fp16(v[k]);
    }
}

void gather_rows(const void* src, void* dst, int64_t row_bytes, const int32_t* src_idx, const int32_t* dst_idx,
                 int64_t n) {
  for (int64_t j = 0; j < n; ++j)
    std::memcpy(static_cast<uint8_t*>(dst) + (dst_idx ? int64_t(dst_idx[j]) : j) * row_bytes,
                static_cast<const uint8_t*>(src) + (src_idx ? int64_t(src_idx[j]) : j) * row_bytes, size_t(row_bytes));
}

uint16_t f32_to_f16_sat(float x) {
  constexpr float m = 65504.f;  // the largest finite F16
  return fp32_to_fp16(x > m ? m : (x < -m ? -m : x));
}

void f32_to_f16(const float* src, int64_t ld_src, uint16_t* dst, int64_t ld_dst, int64_t n, int64_t width) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < width; ++j) dst[i * ld_dst + j] = f32_to_f16_sat(src[i * ld_src + j]);
}

void kv_quantize_f16(const uint16_t* src, int64_t src_stride, int64_t n_units, int64_t n_tok, int64_t head_dim,
                     int8_t* q, int64_t q_stride, float* scale, int64_t scale_stride) {
  std::vector<float> x(static_cast<size_t>(n_tok * head_dim));
  for (int64_t u = 0; u < n_units; ++u) {
    for (int64_t e = 0; e < n_tok * head_dim; ++e) x[size_t(e)] = fp16_to_fp32(src[u * src_stride + e]);
    kv_quantize_block(x.data(), n_tok, head_dim, q + u * q_stride, scale + u * scale_stride);
  }
}

void page_digest(const uint16_t* keys, int64_t unit_stride, int64_t n_units, int64_t page, int64_t d,
                 float* kmin, float* kmax) {
  for (int64_t u = 0; u < n_units; ++u)
    for (int64_t c = 0; c < d; ++c) {
      float lo = INFINITY, hi = -INFINITY;
      for (int64_t t = 0; t < page; ++t) {
        const float x = fp16_to_fp32(keys[u * unit_stride + t * d + c]);
        lo = std::min(lo, x);
        hi = std::max(hi, x);
      }
      kmin[u * d + c] = lo;
      kmax[u * d + c] = hi;
    }
}

void page_scores(const float* q, const float* kmin, const float* kmax, const int32_t* cand, int64_t n_cand,
                 int64_t n_heads, int64_t n_kv, int64_t d, float scale, float* out) {
  const int64_t G = n_heads / n_kv;
  std::vector<double> s(static_cast<size_t>(n_cand));
  for (int64_t g = 0; g < n_kv; ++g) {
    std::vector<double> mean(static_cast<size_t>(n_cand), 0.0);
    for (int64_t h = g * G; h < (g + 1) * G; ++h) {
      double mx = -INFINITY, z = 0;
      for (int64_t j = 0; j < n_cand; ++j) {
        const float* mn = kmin + (int64_t(cand[j]) * n_kv + g) * d;
        const float* mk = kmax + (int64_t(cand[j]) * n_kv + g) * d;
        double b = 0;
        for (int64_t c = 0; c < d; ++c) {
          const double qc = q[h * d + c];
          b += std::max(qc * mk[c], qc * mn[c]);
        }
        s[size_t(j)] = b * scale;
        mx = std::max(mx, s[size_t(j)]);
      }
      for (int64_t j = 0; j < n_cand; ++j) z += (s[size_t(j)] = std::exp(s[size_t(j)] - mx));
      for (int64_t j = 0; j < n_cand; ++j) mean[size_t(j)] += s[size_t(j)] / z / double(G);
    }
    for (int64_t j = 0; j < n_cand; ++j) out[g * n_cand + j] = float(mean[size_t(j)]);
  }
}

std::vector<kv_attn_head> attn_heads(const cu::kv_span_table& table, int64_t seq, int64_t n_kv) {
  std::vector<kv_attn_head> out(static_cast<size_t>(n_kv));
  for (int64_t g = 0; g < n_kv; ++g) {
    const cu::kv_head_dev& H = table.heads()[size_t(seq * n_kv + g)];
    for (int32_t s = 0; s < H.n_spans; ++s) {
      const cu::kv_span_dev& d = table.spans()[size_t(H.span0 + s)];
      kv_span k;
      k.n = d.n;
      k.k16 = d.k16;
      k.v16 = d.v16;
      k.kq = d.kq;
      k.vq = d.vq;
      k.block = d.block;
      k.k_scale = d.k_scale;
      k.v_scale = d.v_scale;
      k.mass = d.mass;
      out[size_t(g)].spans.push_back(k);
    }
  }
  return out;
}

namespace {
// Token t of head H dequantised: key and value rows (d,).
void load_token(const cu::kv_span_table& table, const cu::kv_head_dev& H, int64_t t, int64_t d, float* k,
                float* v, float** mass) {
  int32_t s = H.n_spans - 1;
  while (table.spans()[size_t(H.span0 + s)].tok0 > t) --s;
  const cu::kv_span_dev& sp = table.spans()[size_t(H.span0 + s)];
  const int64_t off = t - sp.tok0;
  for (int64_t c = 0; c < d; ++c) {
    if (sp.kq) {
      k[c] = float(sp.kq[off * d + c]) * sp.k_scale[int64_t(sp.block[off]) * d + c];
      v[c] = float(sp.vq[off * d + c]) * sp.v_scale[int64_t(sp.block[off]) * d + c];
    } else {
      k[c] = fp16_to_fp32(sp.k16[off * d + c]);
      v[c] = fp16_to_fp32(sp.v16[off * d + c]);
    }
  }
  *mass = sp.mass ? sp.mass + off : nullptr;
}
}  // namespace

void attend_spans_emulated(const cu::kv_span_table& table, const cu::span_attention_args& a, int64_t n_sm) {
  const int64_t d = a.head_dim, G = a.n_heads / a.n_kv, rows = a.n_seq * a.n_q, T = cu::k_attn_tile;
  KV_ASSERT(a.n_heads % a.n_kv == 0 && table.n_heads() == a.n_seq * a.n_kv);
  cu::attn_split_plan plan = cu::plan_attention_splits(table.max_tokens(), a.n_kv * rows, n_sm);
  if (a.force_splits > 0) {
    plan.n_splits = a.force_splits;
    plan.split_len = std::max<int64_t>(
        T, cu::ceil_div(cu::ceil_div(std::max<int64_t>(table.max_tokens(), 1), a.force_splits), T) * T);
  }
  const int64_t S = plan.n_splits;
  std::vector<float> partial(static_cast<size_t>(rows * a.n_heads * S * (d + 2)));
  std::vector<float> stats(static_cast<size_t>(rows * a.n_heads * 2));
  std::vector<float> K(static_cast<size_t>(T * d)), V(static_cast<size_t>(T * d)), sc(static_cast<size_t>(T));
  std::vector<float*> mass_ptr(static_cast<size_t>(T));

  // Pass 1: the partial of every (split, KV head, row) block.
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t g = 0; g < a.n_kv; ++g)
      for (int64_t s = 0; s < S; ++s) {
        const int64_t b = row / a.n_q, i = row % a.n_q;
        const cu::kv_head_dev& H = table.heads()[size_t(b * a.n_kv + g)];
        int64_t t_begin, t_end;
        cu::attn_split_tokens(H.n_tokens, a.n_q, i, s, plan.split_len, &t_begin, &t_end);
        for (int64_t h = g * G; h < (g + 1) * G; ++h) {
          const float* q = a.q + row * a.ldq + h * d;
          float m = -INFINITY, l = 0.f;
          std::vector<float> acc(static_cast<size_t>(d), 0.f);
          for (int64_t t0 = t_begin; t0 < t_end; t0 += T) {
            const int64_t tn = std::min(T, t_end - t0);
            float mx = -INFINITY;
            for (int64_t t = 0; t < tn; ++t) {
              load_token(table, H, t0 + t, d, &K[size_t(t * d)], &V[size_t(t * d)], &mass_ptr[size_t(t)]);
              float dot = 0.f;
              for (int64_t c = 0; c < d; ++c) dot += q[c] * K[size_t(t * d + c)];
              sc[size_t(t)] = dot * a.scale;
              mx = std::max(mx, sc[size_t(t)]);
            }
            const float m_new = std::max(m, mx);
            const float alpha = m == -INFINITY ? 0.f : std::exp(m - m_new);
            float sum = 0.f;
            for (int64_t t = 0; t < tn; ++t) sum += (sc[size_t(t)] = std::exp(sc[size_t(t)] - m_new));
            l = l * alpha + sum;
            m = m_new;
            for (int64_t c = 0; c < d; ++c) {
              float x = acc[size_t(c)] * alpha;
              for (int64_t t = 0; t < tn; ++t) x += sc[size_t(t)] * V[size_t(t * d + c)];
              acc[size_t(c)] = x;
            }
          }
          float* ph = &partial[size_t(((row * a.n_heads + h) * S + s) * (d + 2))];
          std::copy(acc.begin(), acc.end(), ph);
          ph[d] = m;
          ph[d + 1] = l;
        }
      }
  // Pass 2: merge.
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t h = 0; h < a.n_heads; ++h) {
      const float* base = &partial[size_t((row * a.n_heads + h) * S * (d + 2))];
      float M = -INFINITY, L = 0.f;
      for (int64_t s = 0; s < S; ++s) M = std::max(M, base[s * (d + 2) + d]);
      for (int64_t s = 0; s < S; ++s) L += base[s * (d + 2) + d + 1] * cu::merge_weight(base[s * (d + 2) + d], M);
      for (int64_t c = 0; c < d; ++c) {
        float o = 0.f;
        for (int64_t s = 0; s < S; ++s) o += base[s * (d + 2) + c] * cu::merge_weight(base[s * (d + 2) + d], M);
        a.out[row * a.ldo + h * d + c] = L > 0.f ? o / L : 0.f;
      }
      stats[size_t((row * a.n_heads + h) * 2)] = M;
      stats[size_t((row * a.n_heads + h) * 2 + 1)] = L;
    }
  // Pass 3: mass, recomputed from the final max and normaliser.
  if (!a.mass) return;
  for (int64_t b = 0; b < a.n_seq; ++b)
    for (int64_t g = 0; g < a.n_kv; ++g) {
      const cu::kv_head_dev& H = table.heads()[size_t(b * a.n_kv + g)];
      for (int64_t t = 0; t < H.n_tokens; ++t) {
        float* mp;
        load_token(table, H, t, d, K.data(), V.data(), &mp);
        float m = 0.f;
        for (int64_t i = 0; i < a.n_q; ++i) {
          if (t >= H.n_tokens - a.n_q + i + 1) continue;
          const int64_t row = b * a.n_q + i;
          const float wq = std::pow(a.mass_decay, float(a.n_q - 1 - i));
          for (int64_t h = g * G; h < (g + 1) * G; ++h) {
            const float M = stats[size_t((row * a.n_heads + h) * 2)], L = stats[size_t((row * a.n_heads + h) * 2 + 1)];
            if (!(L > 0.f)) continue;
            float dot = 0.f;
            for (int64_t c = 0; c < d; ++c) dot += a.q[row * a.ldq + h * d + c] * K[size_t(c)];
            m += wq * std::exp(dot * a.scale - M) / L;
          }
        }
        if (mp) *mp += m;
      }
    }
}

}  // namespace kvarena::cuda_ref
