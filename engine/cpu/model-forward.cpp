// model-forward.cpp: forward_state (buffers sized once), the architecture dispatch, and
// forward_ops: the kernel calls the architectures share, optimised or reference.
#include "model-forward.h"

#include <algorithm>
#include <cmath>

#include "cpu-kernels.h"
#include "engine-error.h"

namespace kvarena {

forward_state::forward_state(const model& m, const forward_options& opt)
    : pool(opt.n_threads), opt_(opt) {
  const auto& c = m.config;
  KV_ASSERT(opt.max_chunk >= 1 && opt.max_tokens >= 1);
  const size_t C = size_t(opt.max_chunk);
  x.resize(C * size_t(c.dim));
  xn.resize(C * size_t(c.dim));
  if (c.arch == model_arch::gpt2) {
    q.resize(C * size_t(c.dim + 2 * c.kv_dim()));
  } else {
    q.resize(C * size_t(c.q_dim()));
    k.resize(C * size_t(c.kv_dim()));
    v.resize(C * size_t(c.kv_dim()));
    up.resize(C * size_t(c.ffn_dim));
  }
  att.resize(C * size_t(std::max(c.dim, c.q_dim())));
  tmp.resize(C * size_t(c.dim));
  gate.resize(C * size_t(c.ffn_dim));
  rope_cs.resize(C * size_t(c.rope_dims));
  if (!c.layer_swa.empty()) {  // the sliding-window layers' own RoPE (base, no scaling)
    rope_swa.arch = c.arch;
    rope_swa.head_dim = c.head_dim, rope_swa.rope_dims = c.rope_dims, rope_swa.rope_neox = c.rope_neox;
    rope_swa.n_heads = c.n_heads, rope_swa.n_kv_heads = c.n_kv_heads;
    rope_swa.rope_freq_base = c.rope_freq_base_swa;
    rope_swa.rope_freq_scale = c.rope_freq_scale_swa;
    rope_cs_swa.resize(C * size_t(c.rope_dims));
  }
}

size_t forward_state::scratch_bytes() const {
  size_t n = 0;
  for (const auto* b : {&x, &xn, &q, &k, &v, &att, &tmp, &gate, &up, &rope_cs, &rope_cs_swa}) n += b->size();
  return n * sizeof(float);
}

void forward(const model& m, forward_state& st, const int32_t* tokens, int64_t n, int64_t pos0,
             logits_mode mode, float* logits) {
  KV_ASSERT(n >= 1 && n <= st.options().max_chunk);
  KV_ASSERT(pos0 >= 0 && pos0 + n <= st.options().max_tokens);
  KV_ASSERT(st.kvr);
  if (m.config.arch == model_arch::gpt2) {
    detail::forward_gpt2(m, st, tokens, n, pos0, mode, logits);
  } else if (m.config.arch == model_arch::gemma2 || m.config.arch == model_arch::gemma3) {
    detail::forward_gemma(m, st, tokens, n, pos0, mode, logits);
  } else {
    detail::forward_llama(m, st, tokens, n, pos0, mode, logits);
  }
}

// ---- forward_ops ----

namespace {
// Row operations on fewer elements than this run on the calling thread: a pool round trip
// (~1-2 us) would cost more than it saves.
constexpr int64_t k_min_elems_to_split = 1 << 15;
}

template <typename F>
void forward_ops::rows(int64_t n, int64_t width, const F& fn) {
  if (n < 2 || n * width < k_min_elems_to_split || pool_.size() == 1) {
    fn(int64_t(0), n);
    return;
  }
  const F* f = &fn;
  pool_.run([f, n](int ith, int nth) {
    int64_t b, e;
    split_range(n, ith, nth, b, e);
    if (b < e) (*f)(b, e);
  });
}

void forward_ops::matmul(const tensor_view& w, const float* x, int64_t n, float* y) {
  if (opt_.reference) {
    ref::matmul(w, x, n, y);
  } else {
    kvarena::matmul(pool_, w, x, n, y);
  }
}

namespace {

// Rows [r0, r1) of w as a matrix of its own (no name: nothing to allocate).
tensor_view row_slice(const tensor_view& w, int64_t r0, int64_t r1) {
  tensor_view v;
  v.type = w.type;
  v.n_dims = 2;
  v.ne[0] = w.ne[0];
  v.ne[1] = r1 - r0;
  v.data = w.data + size_t(r0) * w.row_bytes();
  v.nbytes = size_t(r1 - r0) * w.row_bytes();
  return v;
}

// Rows are handed to threads in multiples of this (the kernels' row tiles divide it).
constexpr int64_t k_row_align = 16;

}  // namespace

void forward_ops::matmul_same_input(
    std::initializer_list<std::pair<const tensor_view*, float*>> parts, const float* x, int64_t n) {
  if (n > 1 || opt_.reference || pool_.size() == 1) {
    for (const auto& [w, y] : parts) matmul(*w, x, n, y);
    return;
  }
  // One token: the matrices' rows laid end to end, split in aligned ranges; each thread
  // runs the kernel on its slices (a run() inside a job runs inline).
  struct job_t {
    const std::pair<const tensor_view*, float*>* parts;
    size_t n_parts;
    int64_t total_units;
    const float* x;
    thread_pool* pool;
  } job{parts.begin(), parts.size(), 0, x, &pool_};
  for (const auto& [w, y] : parts) job.total_units += (w->rows() + k_row_align - 1) / k_row_align;
  const job_t* jp = &job;
  pool_.run([jp](int ith, int nth) {
    int64_t u0, u1;
    split_range(jp->total_units, ith, nth, u0, u1);
    int64_t base = 0;  // first unit of the current part
    for (size_t p = 0; p < jp->n_parts && u0 < u1; ++p) {
      const tensor_view& w = *jp->parts[p].first;
      const int64_t units = (w.rows() + k_row_align - 1) / k_row_align;
      const int64_t a = std::max(u0, base), b = std::min(u1, base + units);
      if (a < b) {
        const int64_t r0 = (a - base) * k_row_align, r1 = std::min(w.rows(), (b - base) * k_row_align);
        kvarena::matmul(*jp->pool, row_slice(w, r0, r1), jp->x, 1, jp->parts[p].second + r0);
      }
      base += units;
    }
  });
}

void forward_ops::swiglu(const tensor_view& w_gate, const tensor_view& w_up, const float* x,
                         int64_t n, float* gate, float* up) {
  if (n > 1 || opt_.reference || pool_.size() == 1) {
    matmul(w_gate, x, n, gate);
    matmul(w_up, x, n, up);
    silu_mul(gate, up, n * w_gate.rows());
    return;
  }
  struct job_t {
    const tensor_view* wg;
    const tensor_view* wu;
    const float* x;
    float* gate;
    float* up;
    thread_pool* pool;
  } job{&w_gate, &w_up, x, gate, up, &pool_};
  const job_t* jp = &job;
  pool_.run([jp](int ith, int nth) {
    const int64_t rows = jp->wg->rows();
    int64_t u0, u1;
    split_range((rows + k_row_align - 1) / k_row_align, ith, nth, u0, u1);
    const int64_t r0 = std::min(rows, u0 * k_row_align), r1 = std::min(rows, u1 * k_row_align);
    if (r0 >= r1) return;
    kvarena::matmul(*jp->pool, row_slice(*jp->wg, r0, r1), jp->x, 1, jp->gate + r0);
    kvarena::matmul(*jp->pool, row_slice(*jp->wu, r0, r1), jp->x, 1, jp->up + r0);
    kvarena::silu_mul(jp->gate + r0, jp->up + r0, r1 - r0);
  });
}

void forward_ops::geglu(const tensor_view& w_gate, const tensor_view& w_up, const float* x, int64_t n,
                        float* gate, float* up) {
  matmul(w_gate, x, n, gate);
  matmul(w_up, x, n, up);
  const int64_t ne = n * w_gate.rows();
  gelu(gate, ne);
  for (int64_t i = 0; i < ne; ++i) gate[i] *= up[i];
}

void forward_ops::softcap(float* x, int64_t n_elems, float cap) {
  const float inv = 1.0f / cap;  // as ggml: scale by 1/cap, tanh, scale by cap
  for (int64_t i = 0; i < n_elems; ++i) x[i] = std::tanh(x[i] * inv) * cap;
}

void forward_ops::embed(const tensor_view& w, const int32_t* tokens, int64_t n, float* x) {
  const int64_t dim = w.ne[0];
  for (int64_t i = 0; i < n; ++i) {
    if (opt_.reference) {
      ref::get_row(w, tokens[i], x + i * dim);
    } else {
      kvarena::get_row(w, tokens[i], x + i * dim);
    }
  }
}

void forward_ops::rmsnorm(const float* x, const tensor_view& w, float* y, int64_t n, int64_t dim,
                          float eps) {
  const float* wd = reinterpret_cast<const float*>(w.data);
  const bool r = opt_.reference;
  rows(n, dim, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      if (r) {
        ref::rmsnorm(x + i * dim, wd, y + i * dim, dim, eps);
      } else {
        kvarena::rmsnorm(x + i * dim, wd, y + i * dim, dim, eps);
      }
    }
  });
}

void forward_ops::layernorm(const float* x, const tensor_view& w, const tensor_view& b, float* y,
                            int64_t n, int64_t dim, float eps) {
  const float* wd = reinterpret_cast<const float*>(w.data);
  const float* bd = reinterpret_cast<const float*>(b.data);
  const bool r = opt_.reference;
  rows(n, dim, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      if (r) {
        ref::layernorm(x + i * dim, wd, bd, y + i * dim, dim, eps);
      } else {
        kvarena::layernorm(x + i * dim, wd, bd, y + i * dim, dim, eps);
      }
    }
  });
}

void forward_ops::add_bias(float* y, int64_t ld, const tensor_view& b, int64_t n, int64_t width) {
  if (!b) return;
  const float* bd = reinterpret_cast<const float*>(b.data);
  for (int64_t i = 0; i < n; ++i) {
    float* yi = y + i * ld;
    if (opt_.reference) {
      for (int64_t j = 0; j < width; ++j) yi[j] += bd[j];
    } else {
      kvarena::add(yi, bd, width);
    }
  }
}

void forward_ops::add(float* y, const float* x, int64_t n, int64_t width) {
  if (opt_.reference) {
    for (int64_t j = 0; j < n * width; ++j) y[j] += x[j];
  } else {
    kvarena::add(y, x, n * width);
  }
}

void forward_ops::silu_mul(float* gate, const float* up, int64_t n_elems) {
  if (opt_.reference) {
    ref::silu_mul(gate, up, n_elems);
  } else {
    kvarena::silu_mul(gate, up, n_elems);
  }
}

void forward_ops::gelu(float* x, int64_t n_elems) {
  if (opt_.gelu_f16_table) {
    // ggml: y = fp16(gelu(fp16(x))) for |x| < 10, x itself above, 0 below.
    for (int64_t i = 0; i < n_elems; ++i) {
      float xi = x[i];
      if (xi <= -10.0f) {
        x[i] = 0.0f;
      } else if (xi < 10.0f) {
        float h = fp16_to_fp32(fp32_to_fp16(xi));
        ref::gelu(&h, 1);
        x[i] = fp16_to_fp32(fp32_to_fp16(h));
      }
    }
    return;
  }
  if (opt_.reference) {
    ref::gelu(x, n_elems);
  } else {
    kvarena::gelu(x, n_elems);
  }
}

void forward_ops::rope_cos_sin(const model_config& c, int64_t pos0, int64_t n, float* cs) {
  // Angles in double: they reach thousands of radians.
  const int64_t half = c.rope_dims / 2;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < half; ++j) {
      const double theta =
          double(pos0 + i) * double(c.rope_freq_scale) *
          std::pow(double(c.rope_freq_base), -2.0 * double(j) / double(c.rope_dims)) /
          (c.rope_freq_factors.empty() ? 1.0 : double(c.rope_freq_factors[size_t(j)]));
      cs[(i * half + j) * 2] = float(std::cos(theta));
      cs[(i * half + j) * 2 + 1] = float(std::sin(theta));
    }
  }
}

void forward_ops::rope(float* q, int64_t ldq, float* k, int64_t ldk, int64_t n,
                       const model_config& c, int64_t pos0, const float* cs) {
  const int64_t hd = c.head_dim, half = c.rope_dims / 2;
  if (opt_.reference) {
    for (int64_t i = 0; i < n; ++i) {
      for (auto [x, heads] : {std::pair{q + i * ldq, c.n_heads}, std::pair{k + i * ldk, c.n_kv_heads}}) {
        const float* ff = c.rope_freq_factors.empty() ? nullptr : c.rope_freq_factors.data();
        if (c.rope_neox) {
          detail::rope_neox(x, heads, hd, c.rope_dims, pos0 + i, c.rope_freq_base, c.rope_freq_scale, ff);
        } else {
          ref::rope_adjacent(x, heads, hd, c.rope_dims, pos0 + i, c.rope_freq_base, c.rope_freq_scale, ff);
        }
      }
    }
    return;
  }
  const int64_t pair = c.rope_neox ? half : 1;  // distance between the two dims of a pair
  const int64_t step = c.rope_neox ? 1 : 2;     // distance between consecutive pairs
  rows(n, (c.n_heads + c.n_kv_heads) * c.rope_dims, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const float* csi = cs + i * 2 * half;
      for (auto [x, heads] : {std::pair{q + i * ldq, c.n_heads}, std::pair{k + i * ldk, c.n_kv_heads}}) {
        for (int64_t h = 0; h < heads; ++h) {
          float* xh = x + h * hd;
          for (int64_t j = 0; j < half; ++j) {
            float* a = xh + j * step;
            const float x0 = a[0], x1 = a[pair], co = csi[2 * j], si = csi[2 * j + 1];
            a[0] = x0 * co - x1 * si;
            a[pair] = x0 * si + x1 * co;
          }
        }
      }
    }
  });
}

namespace detail {

void store_kv(forward_state& st, int64_t l, const float* k, const float* v, int64_t ld) {
  st.kvr->append(l, k, v, ld);
}

int64_t first_attention_row(const forward_state& st, bool last_layer, logits_mode mode, int64_t n) {
  if (!last_layer || mode == logits_mode::all) return 0;
  return st.kvr->needs_all_rows() ? 0 : n - 1;
}

void attend_layer(forward_state& st, int64_t l, int64_t n, int64_t r0, const float* q, int64_t ldq, float scale,
                  float* out, int64_t ldo) {
  st.kvr->attend(st.pool, l, q, ldq, n - r0, scale, out, ldo);
}

void rope_neox(float* x, int64_t n_heads, int64_t head_dim, int64_t rope_dims, int64_t pos,
               float freq_base) {
  rope_neox(x, n_heads, head_dim, rope_dims, pos, freq_base, 1.0f, nullptr);
}

void rope_neox(float* x, int64_t n_heads, int64_t head_dim, int64_t rope_dims, int64_t pos,
               float freq_base, float freq_scale, const float* freq_factors) {
  const int64_t half = rope_dims / 2;
  for (int64_t i = 0; i < half; ++i) {
    const double theta = double(pos) * double(freq_scale) *
                         std::pow(double(freq_base), -2.0 * double(i) / double(rope_dims)) /
                         (freq_factors ? double(freq_factors[i]) : 1.0);
    const float c = float(std::cos(theta)), s = float(std::sin(theta));
    for (int64_t h = 0; h < n_heads; ++h) {
      float* xh = x + h * head_dim;
      const float a = xh[i], b = xh[i + half];
      xh[i] = a * c - b * s;
      xh[i + half] = a * s + b * c;
    }
  }
}

}  // namespace detail

}  // namespace kvarena
