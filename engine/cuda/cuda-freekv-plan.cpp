// cuda-freekv-plan.cpp: FreeKV's host-side planning for the CUDA backend (see the header).
#include "cuda-freekv-plan.h"

#include <algorithm>

#include "engine-error.h"

namespace kvarena {

freekv_slot_table::freekv_slot_table(int64_t n_layers, int64_t n_kv_heads, int64_t n_slots)
    : n_kv_heads_(n_kv_heads), n_slots_(n_slots), slot_page_(size_t(n_layers * n_kv_heads * n_slots), -1) {
  KV_ASSERT(n_layers >= 0 && n_kv_heads >= 0 && n_slots >= 0);
}

const int32_t* freekv_slot_table::head_slots(int64_t layer, int64_t head) const {
  return slot_page_.data() + (layer * n_kv_heads_ + head) * n_slots_;
}

int32_t freekv_slot_table::slot_page(int64_t layer, int64_t head, int64_t slot) const {
  return head_slots(layer, head)[slot];
}

void freekv_slot_table::clear() { std::fill(slot_page_.begin(), slot_page_.end(), -1); }

std::vector<int32_t> freekv_slot_table::free_slots(int64_t layer, int64_t head,
                                                   const std::vector<int32_t>& want) const {
  const int32_t* sp = head_slots(layer, head);
  std::vector<int32_t> out;
  for (int64_t s = 0; s < n_slots_; ++s)
    if (sp[s] < 0 || !std::binary_search(want.begin(), want.end(), sp[s])) out.push_back(int32_t(s));
  return out;
}

std::vector<kv_page_copy> freekv_slot_table::plan(int64_t layer, const std::vector<std::vector<int32_t>>& want) {
  KV_ASSERT(int64_t(want.size()) == n_kv_heads_);
  std::vector<kv_page_copy> jobs;
  for (int64_t h = 0; h < n_kv_heads_; ++h) {
    const std::vector<int32_t>& w = want[size_t(h)];
    KV_ASSERT(int64_t(w.size()) <= n_slots_ && std::is_sorted(w.begin(), w.end()));
    const std::vector<int32_t> free = free_slots(layer, h, w);  // before any reservation
    int32_t* sp = slot_page_.data() + (layer * n_kv_heads_ + h) * n_slots_;
    size_t next = 0;
    for (int32_t p : w) {
      if (std::find(sp, sp + n_slots_, p) != sp + n_slots_) continue;  // already resident
      KV_ASSERT(next < free.size());
      const int32_t s = free[next++];
      sp[s] = p;
      jobs.push_back({int32_t(h), p, s});
    }
  }
  return jobs;
}

std::vector<std::pair<int32_t, int32_t>> freekv_slot_table::resident(int64_t layer, int64_t head,
                                                                     const std::vector<int32_t>& want) const {
  const int32_t* sp = head_slots(layer, head);
  std::vector<std::pair<int32_t, int32_t>> out;
  for (int64_t s = 0; s < n_slots_; ++s)
    if (sp[s] >= 0 && std::binary_search(want.begin(), want.end(), sp[s])) out.push_back({sp[s], int32_t(s)});
  KV_ASSERT(out.size() == want.size());  // every wanted page recalled before attention
  std::sort(out.begin(), out.end());
  return out;
}

std::pair<int32_t, int32_t> freekv_filled_pages(int64_t pos0, int64_t n, int64_t page) {
  KV_ASSERT(pos0 >= 0 && n >= 0 && page > 0);
  return {int32_t(pos0 / page), int32_t((pos0 + n) / page)};
}

int64_t freekv_window_row(const int32_t* pos, int64_t n, int64_t page_pos0, int64_t page) {
  const int32_t* it = std::lower_bound(pos, pos + n, int32_t(page_pos0));
  const int64_t r = it - pos;
  if (r + page > n) return -1;
  for (int64_t t = 0; t < page; ++t)
    if (pos[r + t] != page_pos0 + t) return -1;
  return r;
}

std::vector<freekv_recall_batch> freekv_recall_batches(int64_t n_jobs, int64_t stage_pages) {
  KV_ASSERT(stage_pages > 0 && n_jobs >= 0);
  std::vector<freekv_recall_batch> out;
  for (int64_t j = 0, b = 0; j < n_jobs; j += stage_pages, ++b)
    out.push_back({j, std::min(n_jobs, j + stage_pages), int(b % 2)});
  return out;
}

}  // namespace kvarena
