// cuda-kv-store.cpp: the device KV store (see the header). Every operation mirrors
// kv-store.cpp step for step so the two hold the same bytes after the same calls
// (tests/test-cuda-forward.cpp compares them).
#include "cuda-kv-store.h"

#include <algorithm>
#include <numeric>

#include "cuda-check.h"
#include "engine-error.h"

namespace kvarena {

kv_compaction_plan plan_kv_compaction(const int32_t* block, int64_t n_int8, int64_t n_fp16,
                                      const std::vector<int32_t>& keep) {
  kv_compaction_plan p;
  std::vector<int32_t> block_map;  // old block -> new block, -1: not kept yet
  for (size_t j = 0; j < keep.size(); ++j) {
    const int64_t i = keep[j];
    KV_ASSERT(i >= 0 && i < n_int8 + n_fp16 && (j == 0 || keep[j - 1] < i));
    if (i < n_int8) {
      const int32_t b = block[i];
      if (b >= int32_t(block_map.size())) block_map.resize(size_t(b) + 1, -1);
      if (block_map[size_t(b)] < 0) {
        block_map[size_t(b)] = int32_t(p.scale_src.size());
        p.scale_src.push_back(b);
      }
      p.int8_rows.push_back(int32_t(i));
      p.new_block.push_back(block_map[size_t(b)]);
    } else {
      p.fp16_rows.push_back(int32_t(i - n_int8));
    }
  }
  return p;
}

kv_quantize_plan plan_kv_quantize(const std::vector<kv_quantize_counts>& heads, int64_t fp16_window, int64_t c16,
                                  int64_t c8, int64_t cb, int64_t capacity) {
  const int64_t B = kv_int8_block;
  kv_quantize_plan p;
  p.blocks.assign(heads.size(), 0);
  p.c8 = c8, p.cb = cb;
  // The capacities as quantize_old's block-by-block ensure calls grew them (head by head).
  for (size_t g = 0; g < heads.size(); ++g) {
    const kv_quantize_counts& h = heads[g];
    KV_ASSERT(h.n8 >= 0 && h.n16 >= 0 && h.nb >= 0 && h.n16 <= c16);
    const int64_t k = h.n16 >= fp16_window + B ? (h.n16 - fp16_window) / B : 0;
    p.blocks[g] = k;
    for (int64_t j = 1; j <= k; ++j) {
      const int64_t need8 = h.n8 + j * B, needb = h.nb + j;
      if (need8 > p.c8) p.c8 = kv_store_grown_tokens(p.c8, need8, capacity);
      if (needb > p.cb) p.cb = std::max(needb, p.cb * 3 / 2 + 1);
    }
  }
  for (size_t g = 0; g < heads.size(); ++g) {
    const kv_quantize_counts& h = heads[g];
    const int64_t k = p.blocks[g], gi = int64_t(g);
    if (k == 0) continue;
    for (int64_t t = 0; t < k * B; ++t) {
      p.id_rows.push_back(int32_t(gi * p.c8 + h.n8 + t));
      p.ids.push_back(int32_t(h.nb + t / B));
    }
    for (int64_t j = k * B; j < h.n16; ++j) {
      p.shift_src.push_back(int32_t(gi * c16 + j));
      p.shift_dst.push_back(int32_t(gi * c16 + j - k * B));
    }
  }
  return p;
}

cuda_kv_store::cuda_kv_store(const kv_store_config& cfg, cuda_allocator& a, cudaStream_t st)
    : cfg_(cfg), a_(&a), st_(st) {
  KV_ASSERT(cfg.n_layers > 0 && cfg.n_kv_heads > 0 && cfg.head_dim > 0 && cfg.group > 0);
  KV_ASSERT(cfg.layer_capacity.empty() || int64_t(cfg.layer_capacity.size()) == cfg.n_layers);
  KV_ASSERT(!cfg.int8 || (cfg.head_dim % kv_int8_block == 0 && cfg.fp16_window >= 0));
  layers_.resize(size_t(cfg.n_layers));
  for (int64_t l = 0; l < cfg.n_layers; ++l) {
    layers_[size_t(l)].heads.resize(size_t(cfg.n_kv_heads));
    layers_[size_t(l)].capacity = cfg.layer_capacity.empty() ? 0 : cfg.layer_capacity[size_t(l)];
  }
}

void cuda_kv_store::recount() {
  size_t b = 0;
  for (const layer_dev& L : layers_)
    b += L.k16.bytes() + L.v16.bytes() + L.kq.bytes() + L.vq.bytes() + L.block.bytes() + L.ks.bytes() +
         L.vs.bytes() + L.mass.bytes();
  bytes_ = b;
  peak_bytes_ = std::max(peak_bytes_, bytes_);
}

template <class T>
void cuda_kv_store::repitch(cuda_buffer<T>& b, int64_t old_c, int64_t new_c, int64_t row_elems, int64_t keep_rows,
                            const char* what) {
  const int64_t H = cfg_.n_kv_heads;
  cuda_buffer<T> nb;
  if (new_c > 0) nb = cuda_buffer<T>(*a_, size_t(H * new_c * row_elems), what);
  keep_rows = std::min({keep_rows, old_c, new_c});
  if (keep_rows > 0 && b.data())
    CUDA_CHECK(cudaMemcpy2DAsync(nb.data(), size_t(new_c * row_elems) * sizeof(T), b.data(),
                                 size_t(old_c * row_elems) * sizeof(T), size_t(keep_rows * row_elems) * sizeof(T),
                                 size_t(H), cudaMemcpyDeviceToDevice, st_));
  b = std::move(nb);  // cudaFree of the old buffer waits for the copy
}

void cuda_kv_store::realloc_mass(layer_dev& L) {
  const int64_t cm = L.c8 + L.c16;
  if (int64_t(L.mass.size()) != cfg_.n_kv_heads * cm)
    L.mass = cm > 0 ? cuda_buffer<float>(*a_, size_t(cfg_.n_kv_heads * cm), "KV attention mass") : cuda_buffer<float>();
}

void cuda_kv_store::ensure(layer_dev& L, int64_t need16, int64_t need8, int64_t need_blocks) {
  const int64_t c16 = need16 > L.c16 ? kv_store_grown_tokens(L.c16, need16, L.capacity) : L.c16;
  const int64_t c8 = need8 > L.c8 ? kv_store_grown_tokens(L.c8, need8, L.capacity) : L.c8;
  const int64_t cb = need_blocks > L.cb ? std::max(need_blocks, L.cb * 3 / 2 + 1) : L.cb;
  resize(L, c16, c8, cb);
}

void cuda_kv_store::resize(layer_dev& L, int64_t c16, int64_t c8, int64_t cb) {
  const int64_t D = cfg_.head_dim;
  int64_t max16 = 0, max8 = 0, maxb = 0;
  for (const head_meta& h : L.heads) max16 = std::max(max16, h.n16), max8 = std::max(max8, h.n8), maxb = std::max(maxb, h.nb);
  KV_ASSERT(c16 >= max16 && c8 >= max8 && cb >= maxb);
  bool changed = false;
  if (c16 != L.c16) {
    repitch(L.k16, L.c16, c16, D, max16, "KV cache (fp16 keys)");
    repitch(L.v16, L.c16, c16, D, max16, "KV cache (fp16 values)");
    L.c16 = c16, changed = true;
  }
  if (c8 != L.c8) {
    repitch(L.kq, L.c8, c8, D, max8, "KV cache (int8 keys)");
    repitch(L.vq, L.c8, c8, D, max8, "KV cache (int8 values)");
    repitch(L.block, L.c8, c8, 1, max8, "KV cache (int8 blocks)");
    L.c8 = c8, changed = true;
  }
  if (cb != L.cb) {
    repitch(L.ks, L.cb, cb, D, maxb, "KV cache (int8 scales)");
    repitch(L.vs, L.cb, cb, D, maxb, "KV cache (int8 scales)");
    L.cb = cb, changed = true;
  }
  if (changed) {
    realloc_mass(L);
    recount();
  }
}

void cuda_kv_store::shrink_if_sparse(layer_dev& L) {
  const int64_t D = cfg_.head_dim;
  int64_t max16 = 0, max8 = 0, maxb = 0;
  for (const head_meta& h : L.heads) max16 = std::max(max16, h.n16), max8 = std::max(max8, h.n8), maxb = std::max(maxb, h.nb);
  bool changed = false;
  if (max16 * 2 < L.c16 && kv_store_shrunk_tokens(max16) < L.c16) {
    const int64_t c = kv_store_shrunk_tokens(max16);
    repitch(L.k16, L.c16, c, D, max16, "KV cache (fp16 keys)");
    repitch(L.v16, L.c16, c, D, max16, "KV cache (fp16 values)");
    L.c16 = c, changed = true;
  }
  if (max8 * 2 < L.c8 && kv_store_shrunk_tokens(max8) < L.c8) {
    const int64_t c = kv_store_shrunk_tokens(max8);
    repitch(L.kq, L.c8, c, D, max8, "KV cache (int8 keys)");
    repitch(L.vq, L.c8, c, D, max8, "KV cache (int8 values)");
    repitch(L.block, L.c8, c, 1, max8, "KV cache (int8 blocks)");
    L.c8 = c, changed = true;
  }
  if (maxb * 2 < L.cb) {
    repitch(L.ks, L.cb, maxb, D, maxb, "KV cache (int8 scales)");
    repitch(L.vs, L.cb, maxb, D, maxb, "KV cache (int8 scales)");
    L.cb = maxb, changed = true;
  }
  if (changed) {
    realloc_mass(L);
    recount();
  }
}

size_t cuda_kv_store::stage_idx(const std::vector<int32_t>& v) {
  const size_t off = idx_batch_.size();
  idx_batch_.insert(idx_batch_.end(), v.begin(), v.end());
  return off;
}

int32_t* cuda_kv_store::upload_staged_idx(int which) {
  cuda_buffer<int32_t>& b = idx_[which];
  const size_t n = idx_batch_.size();
  // Growing frees the old buffer: cudaFree waits for the kernels still reading it.
  if (b.size() < n) b = cuda_buffer<int32_t>(*a_, std::max(n, 2 * b.size()), "KV index lists");
  stage_.upload(b.data(), idx_batch_.data(), n * 4, *a_, st_);
  idx_batch_.clear();
  return b.data();
}

void cuda_kv_store::move_rows(void* buf, int64_t total_rows, int64_t row_bytes, const int32_t* s, const int32_t* d,
                              int64_t n) {
  if (n <= 0) return;
  const size_t need = size_t(total_rows * row_bytes);
  if (scratch_.size() < need) scratch_ = cuda_buffer<uint8_t>(*a_, need, "KV compaction scratch");
  // Into the scratch at the destination rows, then back: no row is read after being written.
  cu::gather_rows(buf, scratch_.data(), row_bytes, s, d, n, st_);
  cu::gather_rows(scratch_.data(), buf, row_bytes, d, d, n, st_);
}

void cuda_kv_store::append(int64_t layer, int64_t pos0, int64_t n, const float* k, const float* v, int64_t ld) {
  KV_ASSERT(layer >= 0 && layer < cfg_.n_layers && n >= 0);
  layer_dev& L = layers_[size_t(layer)];
  KV_ASSERT(pos0 >= L.seq_len);
  if (n == 0) return;
  const int64_t D = cfg_.head_dim, H = cfg_.n_kv_heads;
  int64_t need16 = 0;
  std::vector<int32_t> tok0(static_cast<size_t>(H));
  for (int64_t g = 0; g < H; ++g) {
    const head_meta& h = L.heads[size_t(g)];
    KV_ASSERT(L.capacity == 0 || h.n8 + h.n16 + n <= L.capacity);  // the policy evicts before appending
    need16 = std::max(need16, h.n16 + n);
    tok0[size_t(g)] = int32_t(h.n16);
  }
  ensure(L, need16, 0, 0);
  stage_idx(tok0);
  cu::kv_write_f16(k, v, ld, n, H, D, L.k16.data(), L.v16.data(), L.c16 * D, 0, st_, upload_staged_idx(1));
  for (head_meta& h : L.heads) {
    for (int64_t t = 0; t < n; ++t) {
      h.pos.push_back(int32_t(pos0 + t));
      h.score.push_back(0.f);
    }
    h.n16 += n;
  }
  L.seq_len = pos0 + n;
  // INT8 blocks are frozen by apply(), after the forward call (the chunk reads its rows in FP16).
}

void cuda_kv_store::quantize_old(int64_t layer) {
  if (!cfg_.int8) return;
  layer_dev& L = layers_[size_t(layer)];
  const int64_t D = cfg_.head_dim, B = kv_int8_block, H = cfg_.n_kv_heads;
  std::vector<kv_quantize_counts> counts(static_cast<size_t>(H));
  for (int64_t g = 0; g < H; ++g) {
    const head_meta& h = L.heads[size_t(g)];
    counts[size_t(g)] = {h.n8, h.n16, h.nb};
  }
  const kv_quantize_plan p = plan_kv_quantize(counts, cfg_.fp16_window, L.c16, L.c8, L.cb, L.capacity);
  if (p.empty()) return;
  resize(L, L.c16, p.c8, p.cb);
  // The oldest blocks of each head, in one launch per head and K/V (no host wait).
  for (int64_t g = 0; g < H; ++g) {
    const head_meta& h = L.heads[size_t(g)];
    const int64_t k = p.blocks[size_t(g)];
    if (k == 0) continue;
    for (int kv = 0; kv < 2; ++kv) {
      const uint16_t* src = (kv ? L.v16 : L.k16).data() + g * L.c16 * D;
      int8_t* q = (kv ? L.vq : L.kq).data() + (g * L.c8 + h.n8) * D;
      float* sc = (kv ? L.vs : L.ks).data() + (g * L.cb + h.nb) * D;
      cu::kv_quantize_f16(src, B * D, k, B, D, q, B * D, sc, D, st_);
    }
  }
  // One upload: the new rows' block ids and rows, then the FP16 rows that move down.
  const size_t o_ids = stage_idx(p.ids), o_rows = stage_idx(p.id_rows), o_src = stage_idx(p.shift_src),
               o_dst = stage_idx(p.shift_dst);
  const int32_t* dev = upload_staged_idx(0);
  cu::gather_rows(dev + o_ids, L.block.data(), 4, nullptr, dev + o_rows, int64_t(p.ids.size()), st_);
  // The FP16 segments lose their oldest rows (positions/scores keep their order).
  const int64_t n_shift = int64_t(p.shift_src.size());
  move_rows(L.k16.data(), H * L.c16, D * 2, dev + o_src, dev + o_dst, n_shift);
  move_rows(L.v16.data(), H * L.c16, D * 2, dev + o_src, dev + o_dst, n_shift);
  for (int64_t g = 0; g < H; ++g) {
    head_meta& h = L.heads[size_t(g)];
    const int64_t k = p.blocks[size_t(g)];
    for (int64_t t = 0; t < k * B; ++t) h.block.push_back(int32_t(h.nb + t / B));
    h.n8 += k * B;
    h.n16 -= k * B;
    h.nb += k;
  }
}

void cuda_kv_store::compact(int64_t layer, const std::vector<std::vector<int32_t>>& keep) {
  KV_ASSERT(layer >= 0 && layer < cfg_.n_layers && int64_t(keep.size()) == cfg_.n_kv_heads);
  layer_dev& L = layers_[size_t(layer)];
  const int64_t D = cfg_.head_dim, H = cfg_.n_kv_heads;
  std::vector<int32_t> s16, d16, s8, d8, sb, db;
  bool any = false, any8 = false;
  for (int64_t g = 0; g < H; ++g) {
    head_meta& h = L.heads[size_t(g)];
    const std::vector<int32_t>& ks = keep[size_t(g)];
    if (int64_t(ks.size()) == h.n8 + h.n16) continue;  // ascending and unique: everything stays
    any = true;
    const kv_compaction_plan p = plan_kv_compaction(h.block.data(), h.n8, h.n16, ks);
    for (size_t j = 0; j < p.fp16_rows.size(); ++j) {
      s16.push_back(int32_t(g * L.c16 + p.fp16_rows[j]));
      d16.push_back(int32_t(g * L.c16 + int64_t(j)));
    }
    for (size_t j = 0; j < p.int8_rows.size(); ++j) {
      s8.push_back(int32_t(g * L.c8 + p.int8_rows[j]));
      d8.push_back(int32_t(g * L.c8 + int64_t(j)));
    }
    for (size_t b = 0; b < p.scale_src.size(); ++b) {
      sb.push_back(int32_t(g * L.cb + p.scale_src[b]));
      db.push_back(int32_t(g * L.cb + int64_t(b)));
    }
    any8 = any8 || h.n8 > 0;
    std::vector<int32_t> pos;
    std::vector<float> score;
    for (int32_t i : ks) {
      pos.push_back(h.pos[size_t(i)]);
      score.push_back(h.score[size_t(i)]);
    }
    h.pos = std::move(pos);
    h.score = std::move(score);
    h.block = p.new_block;
    h.n8 = int64_t(p.int8_rows.size());
    h.n16 = int64_t(p.fp16_rows.size());
    h.nb = int64_t(p.scale_src.size());
  }
  if (!any) return;
  // Every index list (and the new block ids) in one upload.
  const size_t o_s16 = stage_idx(s16), o_d16 = stage_idx(d16);
  size_t o_s8 = 0, o_d8 = 0, o_sb = 0, o_db = 0, o_blocks = 0;
  std::vector<int32_t> blocks;
  if (any8) {
    o_s8 = stage_idx(s8), o_d8 = stage_idx(d8), o_sb = stage_idx(sb), o_db = stage_idx(db);
    blocks.assign(static_cast<size_t>(H * L.c8), 0);  // the new block ids of every head
    for (int64_t g = 0; g < H; ++g)
      std::copy(L.heads[size_t(g)].block.begin(), L.heads[size_t(g)].block.end(), blocks.begin() + g * L.c8);
    o_blocks = stage_idx(blocks);
  }
  const int32_t* dev = upload_staged_idx(0);
  move_rows(L.k16.data(), H * L.c16, D * 2, dev + o_s16, dev + o_d16, int64_t(s16.size()));
  move_rows(L.v16.data(), H * L.c16, D * 2, dev + o_s16, dev + o_d16, int64_t(s16.size()));
  if (any8) {
    move_rows(L.kq.data(), H * L.c8, D, dev + o_s8, dev + o_d8, int64_t(s8.size()));
    move_rows(L.vq.data(), H * L.c8, D, dev + o_s8, dev + o_d8, int64_t(s8.size()));
    move_rows(L.ks.data(), H * L.cb, D * 4, dev + o_sb, dev + o_db, int64_t(sb.size()));
    move_rows(L.vs.data(), H * L.cb, D * 4, dev + o_sb, dev + o_db, int64_t(sb.size()));
    if (!blocks.empty())
      CUDA_CHECK(cudaMemcpyAsync(L.block.data(), dev + o_blocks, blocks.size() * 4, cudaMemcpyDeviceToDevice, st_));
  }
  shrink_if_sparse(L);
}

void cuda_kv_store::apply(int64_t layer, const keep_decision& d) {
  if (!d.keep_all) compact(layer, d.keep);
  quantize_old(layer);
}

void cuda_kv_store::clear_mass(int64_t layer) {
  layer_dev& L = layers_[size_t(layer)];
  if (L.mass.data()) CUDA_CHECK(cudaMemsetAsync(L.mass.data(), 0, L.mass.bytes(), st_));
  for (head_meta& h : L.heads) h.mass.assign(h.pos.size(), 0.f);
}

void cuda_kv_store::fetch_mass(int64_t layer) {
  layer_dev& L = layers_[size_t(layer)];
  const int64_t cm = L.c8 + L.c16;
  for (int64_t g = 0; g < cfg_.n_kv_heads; ++g) {
    head_meta& h = L.heads[size_t(g)];
    h.mass.resize(h.pos.size());
    if (!h.mass.empty())
      CUDA_CHECK(cudaMemcpyAsync(h.mass.data(), L.mass.data() + g * cm, h.mass.size() * 4, cudaMemcpyDeviceToHost, st_));
  }
  CUDA_CHECK(cudaStreamSynchronize(st_));
}

kv_layer_meta cuda_kv_store::layer_meta(int64_t layer) {
  layer_dev& L = layers_[size_t(layer)];
  kv_layer_meta m;
  m.layer = layer;
  m.seq_len = L.seq_len;
  m.group = cfg_.group;
  for (head_meta& h : L.heads) {
    if (h.mass.size() != h.pos.size()) h.mass.assign(h.pos.size(), 0.f);
    m.heads.push_back({int64_t(h.pos.size()), h.pos.data(), h.score.data(), h.mass.data()});
  }
  return m;
}

void cuda_kv_store::add_spans(int64_t layer, cu::kv_span_table& t, bool with_mass) const {
  for (int64_t g = 0; g < cfg_.n_kv_heads; ++g) {
    t.begin_head();
    add_head_spans(layer, g, t, with_mass);
  }
}

void cuda_kv_store::add_head_spans(int64_t layer, int64_t g, cu::kv_span_table& t, bool with_mass) const {
  const layer_dev& L = layers_[size_t(layer)];
  const int64_t D = cfg_.head_dim, cm = L.c8 + L.c16;
  const head_meta& h = L.heads[size_t(g)];
  cu::kv_span_dev q8;
  q8.n = h.n8;
  if (h.n8 > 0) {
    q8.kq = L.kq.data() + g * L.c8 * D;
    q8.vq = L.vq.data() + g * L.c8 * D;
    q8.block = L.block.data() + g * L.c8;
    q8.k_scale = L.ks.data() + g * L.cb * D;
    q8.v_scale = L.vs.data() + g * L.cb * D;
    q8.mass = with_mass ? L.mass.data() + g * cm : nullptr;
  }
  t.add_span(q8);
  cu::kv_span_dev f16;
  f16.n = h.n16;
  if (h.n16 > 0) {
    f16.k16 = L.k16.data() + g * L.c16 * D;
    f16.v16 = L.v16.data() + g * L.c16 * D;
    f16.mass = with_mass ? L.mass.data() + g * cm + h.n8 : nullptr;
  }
  t.add_span(f16);
}

bool cuda_kv_store::uniform_fp16(int64_t layer, int64_t* n_tokens, const uint16_t** k16, const uint16_t** v16,
                                 int64_t* head_stride) const {
  const layer_dev& L = layers_[size_t(layer)];
  for (const head_meta& h : L.heads)
    if (h.n8 != 0 || h.n16 != L.heads[0].n16) return false;
  *n_tokens = L.heads[0].n16;
  *k16 = L.k16.data();
  *v16 = L.v16.data();
  *head_stride = L.c16 * cfg_.head_dim;
  return true;
}

int64_t cuda_kv_store::n_kept(int64_t layer, int64_t head) const {
  const head_meta& h = layers_[size_t(layer)].heads[size_t(head)];
  return h.n8 + h.n16;
}
kv_head_counts cuda_kv_store::counts(int64_t layer, int64_t head) const {
  const head_meta& h = layers_[size_t(layer)].heads[size_t(head)];
  kv_head_counts c;
  c.fp16 = h.n16, c.int8 = h.n8, c.int8_blocks = h.nb;
  return c;
}

std::vector<int32_t> cuda_kv_store::kept_positions(int64_t layer, int64_t head) const {
  return layers_[size_t(layer)].heads[size_t(head)].pos;
}

cuda_kv_head_data cuda_kv_store::download(int64_t layer, int64_t head) const {
  const layer_dev& L = layers_[size_t(layer)];
  const head_meta& h = L.heads[size_t(head)];
  const int64_t D = cfg_.head_dim, g = head;
  cuda_kv_head_data o;
  o.n_int8 = h.n8, o.n_fp16 = h.n16, o.n_blocks = h.nb, o.pos = h.pos;
  o.k16.resize(size_t(h.n16 * D)), o.v16.resize(o.k16.size());
  o.kq.resize(size_t(h.n8 * D)), o.vq.resize(o.kq.size()), o.block.resize(size_t(h.n8));
  o.k_scale.resize(size_t(h.nb * D)), o.v_scale.resize(o.k_scale.size());
  CUDA_CHECK(cudaStreamSynchronize(st_));
  auto get = [](void* dst, const void* src, size_t bytes) {
    if (bytes) CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
  };
  get(o.k16.data(), L.k16.data() + g * L.c16 * D, o.k16.size() * 2);
  get(o.v16.data(), L.v16.data() + g * L.c16 * D, o.v16.size() * 2);
  get(o.kq.data(), L.kq.data() + g * L.c8 * D, o.kq.size());
  get(o.vq.data(), L.vq.data() + g * L.c8 * D, o.vq.size());
  get(o.block.data(), L.block.data() + g * L.c8, o.block.size() * 4);
  get(o.k_scale.data(), L.ks.data() + g * L.cb * D, o.k_scale.size() * 4);
  get(o.v_scale.data(), L.vs.data() + g * L.cb * D, o.v_scale.size() * 4);
  return o;
}

}  // namespace kvarena
