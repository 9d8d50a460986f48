// kv-freekv-recall.cpp: incremental recall planning and the double-buffered CPU recall.
#include "kv-freekv-recall.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "engine-error.h"

namespace kvarena {

kv_device_pages::kv_device_pages(int64_t n_layers, int64_t n_kv_heads, int64_t head_dim,
                                 int64_t page, int64_t n_slots)
    : n_kv_heads_(n_kv_heads), head_dim_(head_dim), page_(page), n_slots_(n_slots),
      data_(size_t(n_layers * n_kv_heads * n_slots * 2 * page * head_dim)),
      slot_page_(size_t(n_layers * n_kv_heads * n_slots), -1) {}

std::vector<kv_page_copy> kv_device_pages::plan(int64_t layer,
                                                const std::vector<std::vector<int32_t>>& want) {
  KV_ASSERT(int64_t(want.size()) == n_kv_heads_);
  std::vector<kv_page_copy> jobs;
  std::vector<std::pair<int32_t, int32_t>> resident;  // (page, slot), sorted by page
  std::vector<int32_t> free_slots;
  for (int64_t h = 0; h < n_kv_heads_; ++h) {
    const std::vector<int32_t>& w = want[h];
    KV_ASSERT(int64_t(w.size()) <= n_slots_);
    int32_t* sp = &slot_page_[size_t((layer * n_kv_heads_ + h) * n_slots_)];
    resident.clear();
    for (int64_t s = 0; s < n_slots_; ++s)
      if (sp[s] >= 0) resident.push_back({sp[s], int32_t(s)});
    std::sort(resident.begin(), resident.end());
    // Both lists ascending: one merge finds the wanted pages already resident.
    std::vector<char> keep(size_t(n_slots_), 0), have(w.size(), 0);
    for (size_t i = 0, r = 0; i < w.size(); ++i) {
      while (r < resident.size() && resident[r].first < w[i]) ++r;
      if (r < resident.size() && resident[r].first == w[i]) keep[size_t(resident[r].second)] = 1, have[i] = 1;
    }
    free_slots.clear();
    for (int64_t s = 0; s < n_slots_; ++s)
      if (!keep[size_t(s)]) free_slots.push_back(int32_t(s));
    size_t next = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      if (have[i]) continue;  // already resident
      const int32_t s = free_slots[next++];
      sp[s] = w[i];
      jobs.push_back({int32_t(h), w[i], s});
    }
  }
  return jobs;
}

uint16_t* kv_device_pages::slot_k(int64_t layer, int64_t head, int64_t slot) {
  return &data_[size_t((((layer * n_kv_heads_ + head) * 2) * n_slots_ + slot) * page_ * head_dim_)];
}
uint16_t* kv_device_pages::slot_v(int64_t layer, int64_t head, int64_t slot) {
  return &data_[size_t((((layer * n_kv_heads_ + head) * 2 + 1) * n_slots_ + slot) * page_ * head_dim_)];
}
void kv_device_pages::put(int64_t layer, int64_t head, int64_t slot, const uint16_t* page_kv) {
  const size_t half = size_t(page_ * head_dim_);
  std::memcpy(slot_k(layer, head, slot), page_kv, half * sizeof(uint16_t));
  std::memcpy(slot_v(layer, head, slot), page_kv + half, half * sizeof(uint16_t));
}
int32_t kv_device_pages::slot_page(int64_t layer, int64_t head, int64_t slot) const {
  return slot_page_[size_t((layer * n_kv_heads_ + head) * n_slots_ + slot)];
}

kv_recall_worker::kv_recall_worker(int64_t stage_pages, int64_t page_elems)
    : stage_pages_(stage_pages), page_elems_(page_elems) {
  KV_ASSERT(stage_pages > 0 && page_elems > 0);
  for (auto& s : stage_) s.resize(size_t(stage_pages * page_elems));
  thread_ = std::thread([this] { run(); });
}

kv_recall_worker::~kv_recall_worker() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

// The gathering side: batch b of the current recall into stage_[b % 2], once the caller has
// scattered batch b - 2 out of it.
// Only blocking recalls: the overlapped pieces are copied by help_one's callers.
void kv_recall_worker::run() {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_.wait(lk, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    for (int64_t b = 0; b < n_batches_; ++b) {
      cv_.wait(lk, [&] { return stop_ || scattered_ >= b - 1; });
      if (stop_) return;
      const std::vector<kv_page_copy>& jobs = *jobs_;
      const int64_t j0 = b * stage_pages_, j1 = std::min<int64_t>(int64_t(jobs.size()), j0 + stage_pages_);
      lk.unlock();
      uint16_t* st = stage_[b % 2].data();
      for (int64_t j = j0; j < j1; ++j)
        std::memcpy(st + (j - j0) * page_elems_, pool_->page_data(layer_, jobs[j].page, jobs[j].head),
                    size_t(page_elems_) * sizeof(uint16_t));
      lk.lock();
      gathered_ = b + 1;
      cv_.notify_all();
    }
    // The caller is still scattering the last batches: the staging buffers are not free for
    // the next recall until it is done.
    cv_.wait(lk, [&] { return stop_ || scattered_ >= n_batches_; });
    if (stop_) return;
    finished_ = seen;  // recall() returns only now, so the next one cannot reset the counters early
    cv_.notify_all();
  }
}

void kv_recall_worker::submit(const kv_host_pool& pool, int64_t layer, kv_device_pages& dev,
                              std::vector<kv_page_copy> jobs) {
  if (jobs.empty()) return;
  KV_ASSERT(pool.page_elems() == page_elems_ && dev.page_elems() == page_elems_);
  std::lock_guard<std::mutex> lk(mu_);
  queue_.push_back({&pool, layer, &dev, std::move(jobs)});
}

bool kv_recall_worker::help_one(int64_t layer) {
  async_job* job = nullptr;
  size_t i = 0;
  {
    std::lock_guard<std::mutex> lk(mu_);
    for (async_job& j : queue_)
      if ((layer < 0 || j.layer == layer) && j.next < j.jobs.size()) {
        job = &j, i = j.next++;
        break;
      }
  }
  if (!job) return false;
  // The job stays in the list until its last piece is counted, so `job` is valid here.
  const kv_page_copy& c = job->jobs[i];
  job->dev->put(job->layer, c.head, c.slot, job->pool->page_data(job->layer, c.page, c.head));
  std::lock_guard<std::mutex> lk(mu_);
  if (size_t(job->layer) >= async_bytes_.size()) async_bytes_.resize(size_t(job->layer) + 1, 0);
  async_bytes_[size_t(job->layer)] += size_t(page_elems_) * sizeof(uint16_t);
  if (++job->done == job->jobs.size()) {
    for (auto it = queue_.begin(); it != queue_.end(); ++it)
      if (&*it == job) {
        queue_.erase(it);
        break;
      }
    cv_.notify_all();
  }
  return true;
}

size_t kv_recall_worker::wait(int64_t layer) {
  while (help_one(layer)) {
  }
  // Pieces of the layer other threads claimed may still be copying.
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] {
    for (const async_job& j : queue_)
      if (j.layer == layer) return false;
    return true;
  });
  if (size_t(layer) >= async_bytes_.size()) return 0;
  return std::exchange(async_bytes_[size_t(layer)], size_t(0));
}

size_t kv_recall_worker::recall(const kv_host_pool& pool, int64_t layer, kv_device_pages& dev,
                                const std::vector<kv_page_copy>& jobs) {
  if (jobs.empty()) return 0;
  KV_ASSERT(pool.page_elems() == page_elems_ && dev.page_elems() == page_elems_);
  const int64_t n_batches = (int64_t(jobs.size()) + stage_pages_ - 1) / stage_pages_;
  {
    std::lock_guard<std::mutex> lk(mu_);
    pool_ = &pool, layer_ = layer, jobs_ = &jobs;
    n_batches_ = n_batches, gathered_ = 0, scattered_ = 0;
    ++generation_;
  }
  cv_.notify_all();
  for (int64_t b = 0; b < n_batches; ++b) {
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return gathered_ > b; });
    }
    // Scatter batch b while the worker gathers batch b + 1 into the other buffer.
    const int64_t j0 = b * stage_pages_, j1 = std::min<int64_t>(int64_t(jobs.size()), j0 + stage_pages_);
    const uint16_t* st = stage_[b % 2].data();
    for (int64_t j = j0; j < j1; ++j)
      dev.put(layer, jobs[j].head, jobs[j].slot, st + (j - j0) * page_elems_);
    {
      std::lock_guard<std::mutex> lk(mu_);
      scattered_ = b + 1;
    }
    cv_.notify_all();
  }
  {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return finished_ == generation_; });
  }
  return jobs.size() * size_t(page_elems_) * sizeof(uint16_t);
}

}  // namespace kvarena
