// kv-store.cpp: append, compaction, INT8 blocking and byte accounting of kv_store.
// The FP16 rows of a head form a ring (head_store::r0): freezing the oldest block advances
// r0, and a compaction whose FP16 hole is one range moves only the shorter side of it.
#include "kv-store.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine-error.h"
#include "ggml-types.h"
#include "kv-policy.h"

namespace kvarena {

namespace {
int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }
}  // namespace

// Grow by a quarter: the slack an unbounded cache holds stays small, and the copies stay
// amortised O(1) per token.
int64_t kv_store_grown_tokens(int64_t have, int64_t need, int64_t cap) {
  int64_t a = std::max(need, have + have / 4);
  a = round_up(std::max<int64_t>(a, kv_int8_block), kv_int8_block);
  if (cap > 0) a = std::min(a, std::max(cap, need));
  return a;
}
// A quarter of headroom over what is kept.
int64_t kv_store_shrunk_tokens(int64_t n) { return round_up(std::max<int64_t>(n + n / 4, 1), kv_int8_block); }

void kv_quantize_block(const float* x, int64_t n, int64_t d, int8_t* q, float* scale) {
  for (int64_t c = 0; c < d; ++c) {
    float amax = 0.f;
    for (int64_t t = 0; t < n; ++t) amax = std::max(amax, std::fabs(x[t * d + c]));
    scale[c] = amax / 127.f;
  }
  for (int64_t t = 0; t < n; ++t)
    for (int64_t c = 0; c < d; ++c) {
      float s = scale[c];
      float r = s > 0.f ? std::nearbyint(x[t * d + c] / s) : 0.f;
      q[t * d + c] = int8_t(std::clamp(r, -127.f, 127.f));
    }
}

kv_store::kv_store(const kv_store_config& cfg) : cfg_(cfg) {
  KV_ASSERT(cfg.n_layers > 0 && cfg.n_kv_heads > 0 && cfg.head_dim > 0 && cfg.group > 0);
  KV_ASSERT(cfg.layer_capacity.empty() || int64_t(cfg.layer_capacity.size()) == cfg.n_layers);
  KV_ASSERT(!cfg.int8 || (cfg.head_dim % kv_int8_block == 0 && cfg.fp16_window >= 0));
  KV_ASSERT(!(cfg.int8 && cfg.f32));
  row_words_ = cfg.head_dim * (cfg.f32 ? 2 : 1);
  layers_.resize(size_t(cfg.n_layers));
  for (int64_t l = 0; l < cfg.n_layers; ++l) {
    layers_[l].heads.resize(size_t(cfg.n_kv_heads));
    layers_[l].capacity = cfg.layer_capacity.empty() ? 0 : cfg.layer_capacity[l];
  }
}

void kv_store::track(int64_t delta) {
  device_bytes_ = size_t(int64_t(device_bytes_) + delta);
  peak_device_bytes_ = std::max(peak_device_bytes_, device_bytes_);
}

template <class T>
void kv_store::resize_buf(buf<T>& b, int64_t elems, int64_t keep_elems, int64_t from) {
  if (elems == b.alloc) return;
  KV_ASSERT(keep_elems <= elems && keep_elems <= b.alloc && (keep_elems == 0 || from < b.alloc));
  std::unique_ptr<T[]> p(elems > 0 ? new T[size_t(elems)]() : nullptr);
  if (keep_elems > 0) {
    const int64_t first = std::min(keep_elems, b.alloc - from);
    std::memcpy(p.get(), b.p.get() + from, size_t(first) * sizeof(T));
    if (first < keep_elems) std::memcpy(p.get() + first, b.p.get(), size_t(keep_elems - first) * sizeof(T));
  }
  track((elems - b.alloc) * int64_t(sizeof(T)));
  b.p = std::move(p);
  b.alloc = elems;
}

void kv_store::resize_fp16(head_store& h, int64_t tokens) {
  const int64_t d = row_words_;
  if (tokens * d == h.k16.alloc) return;
  resize_buf(h.k16, tokens * d, h.n_fp16 * d, h.r0 * d);
  resize_buf(h.v16, tokens * d, h.n_fp16 * d, h.r0 * d);
  h.r0 = 0;
}

// Copies in pieces within which neither range wraps, in the order that reads every row
// before it is overwritten: ascending when moving down, descending when moving up.
void kv_store::move_fp16(head_store& h, int64_t dst, int64_t src, int64_t n) {
  if (n <= 0 || dst == src) return;
  const int64_t d = row_words_, A = h.k16.alloc / d;
  KV_ASSERT(dst >= 0 && src >= 0 && std::max(dst, src) + n <= A);  // rows stay distinct mod A
  fp16_tokens_moved_ += n;
  for (int64_t done = 0; done < n;) {
    int64_t s, t, c;
    if (dst < src) {
      s = (h.r0 + src + done) % A;
      t = (h.r0 + dst + done) % A;
      c = std::min({n - done, A - s, A - t});
    } else {  // exclusive ends of what is left, then back by c
      const int64_t se = (h.r0 + src + n - done - 1) % A + 1, te = (h.r0 + dst + n - done - 1) % A + 1;
      c = std::min({n - done, se, te});
      s = se - c;
      t = te - c;
    }
    std::memmove(h.k16.p.get() + t * d, h.k16.p.get() + s * d, size_t(c * d) * 2);
    std::memmove(h.v16.p.get() + t * d, h.v16.p.get() + s * d, size_t(c * d) * 2);
    done += c;
  }
}

// Makes room for n_int8 + n_fp16 tokens (contents of the current counts are kept).
void kv_store::ensure_tokens(layer_store& L, head_store& h, int64_t n8, int64_t n16) {
  const int64_t d = cfg_.head_dim, w = row_words_, n = n8 + n16, cur = h.n_int8 + h.n_fp16;
  if (n > h.pos.alloc) {
    int64_t a = kv_store_grown_tokens(h.pos.alloc, n, L.capacity);
    resize_buf(h.pos, a, cur);
    resize_buf(h.score, a, cur);
    resize_buf(h.mass, a, cur);
  }
  if (n16 * w > h.k16.alloc) resize_fp16(h, kv_store_grown_tokens(h.k16.alloc / w, n16, L.capacity));
  if (n8 * d > h.k_q.alloc) {
    int64_t a = kv_store_grown_tokens(h.k_q.alloc / d, n8, L.capacity);
    resize_buf(h.k_q, a * d, h.n_int8 * d);
    resize_buf(h.v_q, a * d, h.n_int8 * d);
    resize_buf(h.block, a, h.n_int8);
  }
  int64_t need_blocks = h.n_blocks + (n8 > h.n_int8 ? 1 : 0);
  if (need_blocks * d > h.k_scale.alloc) {
    int64_t a = std::max(need_blocks, h.k_scale.alloc / d * 3 / 2 + 1);
    resize_buf(h.k_scale, a * d, h.n_blocks * d);
    resize_buf(h.v_scale, a * d, h.n_blocks * d);
  }
}

// After compaction: give memory back when a buffer is less than half used (the confkv
// "sawtooth" must show in the bytes), keeping a quarter of headroom.
void kv_store::shrink_if_sparse(layer_store& L, head_store& h) {
  const int64_t d = cfg_.head_dim;
  auto target = kv_store_shrunk_tokens;
  const int64_t n = h.n_int8 + h.n_fp16;
  if (n * 2 < h.pos.alloc && target(n) < h.pos.alloc) {
    resize_buf(h.pos, target(n), n);
    resize_buf(h.score, target(n), n);
    resize_buf(h.mass, target(n), n);
  }
  if (h.n_fp16 * 2 * row_words_ < h.k16.alloc && target(h.n_fp16) * row_words_ < h.k16.alloc)
    resize_fp16(h, target(h.n_fp16));
  if (h.n_int8 * 2 * d < h.k_q.alloc && target(h.n_int8) * d < h.k_q.alloc) {
    resize_buf(h.k_q, target(h.n_int8) * d, h.n_int8 * d);
    resize_buf(h.v_q, target(h.n_int8) * d, h.n_int8 * d);
    resize_buf(h.block, target(h.n_int8), h.n_int8);
  }
  if (h.n_blocks * 2 * d < h.k_scale.alloc) {
    resize_buf(h.k_scale, h.n_blocks * d, h.n_blocks * d);
    resize_buf(h.v_scale, h.n_blocks * d, h.n_blocks * d);
  }
}

void kv_store::append(int64_t layer, int64_t pos0, int64_t n, const float* k, const float* v,
                      int64_t ld) {
  KV_ASSERT(layer >= 0 && layer < cfg_.n_layers && n >= 0);
  layer_store& L = layers_[layer];
  KV_ASSERT(pos0 >= L.seq_len);  // positions only grow
  const int64_t d = cfg_.head_dim;
  for (int64_t g = 0; g < cfg_.n_kv_heads; ++g) {
    head_store& h = L.heads[g];
    const int64_t cur = h.n_int8 + h.n_fp16;
    KV_ASSERT(L.capacity == 0 || cur + n <= L.capacity);  // the policy evicts before appending
    ensure_tokens(L, h, h.n_int8, h.n_fp16 + n);
    const int64_t w = row_words_, A = h.k16.alloc / w;
    for (int64_t t = 0; t < n; ++t) {
      const float* kr = k + t * ld + g * d;
      const float* vr = v + t * ld + g * d;
      const int64_t row = (h.r0 + h.n_fp16 + t) % A;
      uint16_t* kd = h.k16.p.get() + row * w;
      uint16_t* vd = h.v16.p.get() + row * w;
      if (cfg_.f32) {
        std::memcpy(kd, kr, size_t(d) * sizeof(float));
        std::memcpy(vd, vr, size_t(d) * sizeof(float));
      } else {
        for (int64_t c = 0; c < d; ++c) {
          kd[c] = fp32_to_fp16(kr[c]);
          vd[c] = fp32_to_fp16(vr[c]);
        }
      }
      h.pos.p[cur + t] = int32_t(pos0 + t);
      h.score.p[cur + t] = 0.f;
      h.mass.p[cur + t] = 0.f;
    }
    h.n_fp16 += n;
  }
  L.seq_len = pos0 + n;
  // No INT8 blocking here: a chunk's attention reads its own rows in FP16, as a decode step
  // does (spec); apply() freezes the blocks that left the FP16 window after the forward call.
}

void kv_store::quantize_old(int64_t layer) {
  if (!cfg_.int8) return;
  layer_store& L = layers_[layer];
  const int64_t d = cfg_.head_dim, B = kv_int8_block;
  std::vector<float> x(size_t(B * d));  // (32, head_dim) the block being frozen
  for (head_store& h : L.heads) {
    while (h.n_fp16 >= cfg_.fp16_window + B) {
      ensure_tokens(L, h, h.n_int8 + B, h.n_fp16);
      const int64_t A = h.k16.alloc / d;
      for (int kv = 0; kv < 2; ++kv) {
        const uint16_t* src = (kv ? h.v16 : h.k16).p.get();
        for (int64_t t = 0; t < B; ++t) {
          const uint16_t* row = src + (h.r0 + t) % A * d;
          for (int64_t c = 0; c < d; ++c) x[t * d + c] = fp16_to_fp32(row[c]);
        }
        int8_t* q = (kv ? h.v_q : h.k_q).p.get() + h.n_int8 * d;
        float* s = (kv ? h.v_scale : h.k_scale).p.get() + h.n_blocks * d;
        kv_quantize_block(x.data(), B, d, q, s);
      }
      for (int64_t t = 0; t < B; ++t) h.block.p[h.n_int8 + t] = int32_t(h.n_blocks);
      // The FP16 ring loses its oldest 32 tokens: its start advances, nothing moves;
      // positions/scores keep their order (INT8 first).
      h.r0 = (h.r0 + B) % A;
      h.n_int8 += B;
      h.n_fp16 -= B;
      h.n_blocks += 1;
    }
  }
}

// kept: the kept FP16 tokens as kept indices of the head (ascending), base = n_int8.
// Kept set [0, a) U [b, n16): the shorter side moves across the hole (the prefix up, and the
// ring start with it, or the suffix down), so a prefix drop and sinks + window move at most
// a tokens. Otherwise runs of consecutive tokens are gathered down in ring order (every move
// goes down, so ascending in-place copying is safe).
void kv_store::compact_fp16(head_store& h, const int32_t* kept, int64_t m, int64_t base) {
  const int64_t n16 = h.n_fp16;
  auto f = [&](int64_t j) { return int64_t(kept[j]) - base; };  // FP16 index of kept j
  int64_t a = 0;
  while (a < m && f(a) == a) ++a;
  const int64_t tail = m - a;  // kept after the first hole
  if (tail > 0 && f(a) == n16 - tail) {  // one hole: [a, b)
    const int64_t b = n16 - tail;
    if (a <= tail) {
      move_fp16(h, b - a, 0, a);
      h.r0 = (h.r0 + b - a) % (h.k16.alloc / row_words_);
    } else {
      move_fp16(h, a, b, tail);
    }
  } else {
    for (int64_t j = a; j < m;) {
      int64_t e = j + 1;
      while (e < m && kept[e] == kept[e - 1] + 1) ++e;
      move_fp16(h, j, f(j), e - j);
      j = e;
    }
  }
  h.n_fp16 = m;
}

void kv_store::compact(int64_t layer, const std::vector<std::vector<int32_t>>& keep) {
  KV_ASSERT(layer >= 0 && layer < cfg_.n_layers && int64_t(keep.size()) == cfg_.n_kv_heads);
  layer_store& L = layers_[layer];
  const int64_t d = cfg_.head_dim;
  for (int64_t g = 0; g < cfg_.n_kv_heads; ++g) {
    head_store& h = L.heads[g];
    const std::vector<int32_t>& ks = keep[g];
    const int64_t n = h.n_int8 + h.n_fp16, m = int64_t(ks.size());
    if (m == n) continue;  // ascending and unique, so it is everything
    // Positions, scores, mass: dense, in order (moves only go down: safe in place).
    int64_t n8 = 0;  // kept tokens of the INT8 segment
    for (int64_t j = 0; j < m; ++j) {
      const int64_t i = ks[j];
      KV_ASSERT(i >= 0 && i < n && (j == 0 || ks[j - 1] < i));
      h.pos.p[j] = h.pos.p[i];
      h.score.p[j] = h.score.p[i];
      h.mass.p[j] = h.mass.p[i];
      if (i < h.n_int8) n8 = j + 1;
    }
    // INT8 rows by runs of consecutive tokens; scale blocks renumbered in order of first use.
    std::vector<int32_t> block_map(size_t(h.n_blocks), -1);  // old block -> new block
    int32_t n_blocks = 0;
    for (int64_t j = 0; j < n8;) {
      int64_t e = j + 1;
      while (e < n8 && ks[e] == ks[e - 1] + 1) ++e;
      if (ks[j] != j) {
        std::memmove(h.k_q.p.get() + j * d, h.k_q.p.get() + ks[j] * d, size_t((e - j) * d));
        std::memmove(h.v_q.p.get() + j * d, h.v_q.p.get() + ks[j] * d, size_t((e - j) * d));
      }
      for (int64_t u = j; u < e; ++u) {
        const int32_t b = h.block.p[ks[u]];
        if (block_map[b] < 0) {
          block_map[b] = n_blocks;
          std::memmove(h.k_scale.p.get() + n_blocks * d, h.k_scale.p.get() + b * d, size_t(d) * 4);
          std::memmove(h.v_scale.p.get() + n_blocks * d, h.v_scale.p.get() + b * d, size_t(d) * 4);
          ++n_blocks;
        }
        h.block.p[u] = block_map[b];
      }
      j = e;
    }
    compact_fp16(h, ks.data() + n8, m - n8, h.n_int8);
    h.n_int8 = n8;
    h.n_blocks = n_blocks;
    shrink_if_sparse(L, h);
  }
}

void kv_store::apply(int64_t layer, const keep_decision& d) {
  if (!d.keep_all) compact(layer, d.keep);
  quantize_old(layer);
}

kv_head_view kv_store::head_view(int64_t layer, int64_t head) {
  head_store& h = layers_[layer].heads[head];
  kv_head_view v;
  const int64_t d = cfg_.head_dim, w = row_words_, A = h.k16.alloc / w;
  v.n_int8 = h.n_int8;
  v.n_fp16 = std::min(h.n_fp16, A - h.r0);  // up to the end of the ring buffer
  v.n_fp16b = h.n_fp16 - v.n_fp16;
  v.head_dim = d;
  v.k_q = h.k_q.p.get();
  v.v_q = h.v_q.p.get();
  v.block = h.block.p.get();
  v.k_scale = h.k_scale.p.get();
  v.v_scale = h.v_scale.p.get();
  if (cfg_.f32) {  // the ring's words are floats (new[] aligns them for float)
    auto as_f32 = [](const uint16_t* p) { return reinterpret_cast<const float*>(p); };
    v.k32 = as_f32(h.k16.p.get() + h.r0 * w);
    v.v32 = as_f32(h.v16.p.get() + h.r0 * w);
    if (v.n_fp16b > 0) v.k32b = as_f32(h.k16.p.get()), v.v32b = as_f32(h.v16.p.get());
  } else {
    v.k16 = h.k16.p.get() + h.r0 * d;
    v.v16 = h.v16.p.get() + h.r0 * d;
    if (v.n_fp16b > 0) v.k16b = h.k16.p.get(), v.v16b = h.v16.p.get();
  }
  v.pos = h.pos.p.get();
  v.mass = h.mass.p.get();
  return v;
}

kv_layer_meta kv_store::layer_meta(int64_t layer) {
  layer_store& L = layers_[layer];
  kv_layer_meta m;
  m.layer = layer;
  m.seq_len = L.seq_len;
  m.group = cfg_.group;
  for (head_store& h : L.heads)
    m.heads.push_back({h.n_int8 + h.n_fp16, h.pos.p.get(), h.score.p.get(), h.mass.p.get()});
  return m;
}

void kv_store::clear_mass(int64_t layer) {
  for (head_store& h : layers_[layer].heads)
    if (h.mass.alloc) std::fill(h.mass.p.get(), h.mass.p.get() + h.mass.alloc, 0.f);
}

int64_t kv_store::n_kept(int64_t layer, int64_t head) const {
  const head_store& h = layers_[layer].heads[head];
  return h.n_int8 + h.n_fp16;
}
kv_head_counts kv_store::counts(int64_t layer, int64_t head) const {
  const head_store& h = layers_[layer].heads[head];
  kv_head_counts c;
  (cfg_.f32 ? c.f32 : c.fp16) = h.n_fp16;
  c.int8 = h.n_int8, c.int8_blocks = h.n_blocks;
  return c;
}
std::vector<int32_t> kv_store::kept_positions(int64_t layer, int64_t head) const {
  const head_store& h = layers_[layer].heads[head];
  return std::vector<int32_t>(h.pos.p.get(), h.pos.p.get() + h.n_int8 + h.n_fp16);
}
std::vector<float> kv_store::kept_scores(int64_t layer, int64_t head) const {
  const head_store& h = layers_[layer].heads[head];
  return std::vector<float>(h.score.p.get(), h.score.p.get() + h.n_int8 + h.n_fp16);
}
int64_t kv_store::capacity(int64_t layer) const { return layers_[layer].capacity; }
void kv_store::set_capacity(int64_t layer, int64_t tokens) { layers_[layer].capacity = tokens; }

size_t kv_store::recount_device_bytes() const {
  size_t b = 0;
  for (const layer_store& L : layers_)
    for (const head_store& h : L.heads)
      b += size_t(h.k_q.alloc + h.v_q.alloc) + size_t(h.block.alloc + h.pos.alloc) * 4 +
           size_t(h.k_scale.alloc + h.v_scale.alloc + h.score.alloc + h.mass.alloc) * 4 +
           size_t(h.k16.alloc + h.v16.alloc) * 2;
  return b;
}

size_t kv_store::fp16_token_bytes() const {
  return size_t(row_words_) * 2 * 2 + sizeof(int32_t) + 2 * sizeof(float);
}
size_t kv_store::int8_token_bytes() const {
  return size_t(cfg_.head_dim) * 2 + 2 * sizeof(int32_t) + 2 * sizeof(float);
}

}  // namespace kvarena
