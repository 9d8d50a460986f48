// kv-freekv-recall.h: FreeKV's device-side page working set and the CPU recall that fills it.
// kv_device_pages: per layer and KV head, `n_slots` page slots, the keys of all slots in one
// block and their values in another, so resident pages in neighbouring slots are one
// contiguous run for the attention kernel (a page's K and V sit apart; the host pool keeps a
// page's K then V together), and which host page each slot holds. plan() makes
// the recall incremental: only pages new to the device move, into slots of pages no longer
// wanted. kv_recall_worker: double-buffered copy host -> device. A worker thread gathers a
// batch of host pages into one staging buffer while the caller scatters the other staging
// buffer into the device slots (on CUDA: pinned memory, two streams and events instead).
// submit()/wait() are the overlapped form: a layer's pages are queued as one-page pieces that
// help_one() copies (straight into the slot: no staging), called by the compute thread pool
// in its idle moments (thread_pool::set_idle_task) while the caller computes other layers;
// wait(layer) copies what is left of that layer itself and returns once its pages are in
// place. Why not the worker thread: with as many compute threads as cores, a third runnable
// thread takes a core from the barrier-synchronised pool and the step got slower than doing
// the copies serially (measured 12.9 vs 12.1 ms at 8K on 2 cores); the pool's spin-waits are
// idle time that costs nothing to fill.
// Not here: which pages are wanted (kv-policy-freekv.cpp).
#pragma once
#include <condition_variable>
#include <cstdint>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

#include "kv-host-pool.h"

namespace kvarena {

struct kv_page_copy {
  int32_t head = 0, page = 0, slot = 0;  // host page of KV head `head` -> device slot
};

class kv_device_pages {
 public:
  kv_device_pages() = default;
  kv_device_pages(int64_t n_layers, int64_t n_kv_heads, int64_t head_dim, int64_t page,
                  int64_t n_slots);

  // The copies that make `want[h]` (ascending page ids, at most n_slots each) resident for
  // every KV head of `layer`: pages already resident stay put; slots are reserved now.
  std::vector<kv_page_copy> plan(int64_t layer, const std::vector<std::vector<int32_t>>& want);

  uint16_t* slot_k(int64_t layer, int64_t head, int64_t slot);  // (page, head_dim) keys
  uint16_t* slot_v(int64_t layer, int64_t head, int64_t slot);  // (page, head_dim) values
  // Copies a page in the host pool's layout (2, page, head_dim) into a slot.
  void put(int64_t layer, int64_t head, int64_t slot, const uint16_t* page_kv);
  int32_t slot_page(int64_t layer, int64_t head, int64_t slot) const;  // -1: empty
  int64_t n_slots() const { return n_slots_; }
  int64_t page_elems() const { return 2 * page_ * head_dim_; }
  size_t device_bytes() const { return data_.size() * sizeof(uint16_t) + slot_page_.size() * 4; }

 private:
  int64_t n_kv_heads_ = 0, head_dim_ = 0, page_ = 32, n_slots_ = 0;
  std::vector<uint16_t> data_;      // (n_layers, n_kv_heads, 2, n_slots, page, head_dim)
  std::vector<int32_t> slot_page_;  // (n_layers, n_kv_heads, n_slots) host page id or -1
};

class kv_recall_worker {
 public:
  // stage_pages: pages per staging buffer (two buffers of stage_pages * page_elems fp16).
  kv_recall_worker(int64_t stage_pages, int64_t page_elems);
  ~kv_recall_worker();
  kv_recall_worker(const kv_recall_worker&) = delete;
  kv_recall_worker& operator=(const kv_recall_worker&) = delete;

  // Copies each job's host page of `layer` into its device slot; returns when all are done.
  // Returns the bytes moved host -> device.
  size_t recall(const kv_host_pool& pool, int64_t layer, kv_device_pages& dev,
                const std::vector<kv_page_copy>& jobs);
  size_t staging_bytes() const { return (stage_[0].size() + stage_[1].size()) * sizeof(uint16_t); }

  // Queues the copies for `layer` and returns at once (the slots were reserved by plan()).
  // The caller must not touch the layer's slots, nor append to its host pages, before
  // wait(layer).
  void submit(const kv_host_pool& pool, int64_t layer, kv_device_pages& dev, std::vector<kv_page_copy> jobs);
  // Blocks until every submitted copy of `layer` is done; returns their bytes (since the
  // last wait of that layer).
  size_t wait(int64_t layer);
  // Copies one queued page (of `layer`, or of any layer when -1); false when none is left to
  // claim. Thread-safe: any number of threads may help at once.
  bool help_one(int64_t layer = -1);

 private:
  struct async_job {
    const kv_host_pool* pool;
    int64_t layer;
    kv_device_pages* dev;
    std::vector<kv_page_copy> jobs;
    size_t next = 0, done = 0;  // pieces claimed, pieces copied
  };
  void run();
  std::list<async_job> queue_;        // submitted, not all copied (elements stay put)
  std::vector<size_t> async_bytes_;   // (layers seen) bytes moved since the last wait
  int64_t stage_pages_, page_elems_;
  std::vector<uint16_t> stage_[2];  // (stage_pages, 2, page, head_dim) each

  // One recall at a time; batch b goes through stage_[b % 2].
  std::mutex mu_;
  std::condition_variable cv_;
  const kv_host_pool* pool_ = nullptr;
  int64_t layer_ = 0;
  const std::vector<kv_page_copy>* jobs_ = nullptr;
  int64_t n_batches_ = 0, gathered_ = 0, scattered_ = 0;  // batches done by each side
  uint64_t generation_ = 0;  // blocking recalls started
  uint64_t finished_ = 0;    // blocking recalls the worker has fully let go of
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace kvarena
