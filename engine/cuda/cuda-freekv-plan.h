// cuda-freekv-plan.h: the host-side planning of FreeKV on the CUDA backend, as plain C++
// with no CUDA in it, so CPU-only CI builds and tests it against the CPU FreeKV's own
// decisions (tests/test-cuda-freekv-plan.cpp; it compiles this file into the test directly).
//   freekv_slot_table      which host page each device page slot holds, per (layer, KV head):
//                          plan() makes a recall incremental (only pages new to the device
//                          move, into slots of pages no longer wanted; kv_device_pages::plan's
//                          rule), resident() lists a want's (page, slot) pairs in page order
//                          (the attention's spans), free_slots() the reusable slots.
//   freekv_filled_pages    which host pages a chunk completes (they are copied to the host then).
//   freekv_window_row      where a page's first token sits in the store's window rows.
//   freekv_recall_batches  a recall's jobs cut into staging batches, alternating the two
//                          staging buffers and streams.
// Not here: which pages are wanted (the CPU policy object, kv-policy-freekv.cpp), the copies
// (cuda-freekv-pool.h, cuda-freekv-recall.h), the per-layer driver (cuda-freekv.h).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "kv/kv-freekv-recall.h"

namespace kvarena {

class freekv_slot_table {
 public:
  freekv_slot_table() = default;
  freekv_slot_table(int64_t n_layers, int64_t n_kv_heads, int64_t n_slots);

  // The copies that make want[h] (ascending page ids, at most n_slots each) resident for
  // every KV head of `layer`: resident pages stay in their slots; new pages go to the free
  // slots in ascending slot order, in want order. The slots are reserved now.
  std::vector<kv_page_copy> plan(int64_t layer, const std::vector<std::vector<int32_t>>& want);
  // (page, slot) of each page of want (ascending), in page order; aborts when one is not
  // resident (plan() must have run for it).
  std::vector<std::pair<int32_t, int32_t>> resident(int64_t layer, int64_t head,
                                                    const std::vector<int32_t>& want) const;
  // Ascending slots of (layer, head) that are empty or hold a page not in want.
  std::vector<int32_t> free_slots(int64_t layer, int64_t head, const std::vector<int32_t>& want) const;

  int32_t slot_page(int64_t layer, int64_t head, int64_t slot) const;  // -1: empty
  int64_t n_slots() const { return n_slots_; }
  void clear();  // every slot empty (a new sequence)

 private:
  const int32_t* head_slots(int64_t layer, int64_t head) const;
  int64_t n_kv_heads_ = 0, n_slots_ = 0;
  std::vector<int32_t> slot_page_;  // (n_layers, n_kv_heads, n_slots) host page id or -1
};

// Pages completed by appending n tokens at positions [pos0, pos0 + n) when tokens
// [0, pos0) came before: [first, last) page ids (empty when first == last).
std::pair<int32_t, int32_t> freekv_filled_pages(int64_t pos0, int64_t n, int64_t page);

// Row of the window (kept positions pos (n,), ascending, as the store holds them) where the
// page starting at position page_pos0 begins; -1 when its `page` tokens are not all there
// as consecutive rows (the window must still hold a page when it fills).
int64_t freekv_window_row(const int32_t* pos, int64_t n, int64_t page_pos0, int64_t page);

struct freekv_recall_batch {
  int64_t j0 = 0, j1 = 0;  // jobs [j0, j1)
  int buffer = 0;          // staging buffer and stream: batch b uses b % 2
};
// n_jobs jobs in batches of at most stage_pages (> 0).
std::vector<freekv_recall_batch> freekv_recall_batches(int64_t n_jobs, int64_t stage_pages);

}  // namespace kvarena
