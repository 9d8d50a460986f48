// test-kv-host-pool.cpp: FreeKV's host side: the host pool's head-major pages against
// their token-major source, and the recall copying exactly the requested pages.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <vector>

#include "ggml-types.h"
#include "kv/kv-freekv-recall.h"
#include "kv/kv-host-pool.h"
#include "kv/kv-store.h"
#include "kv-span-fixture.h"

using namespace kvarena;

using kvarena::test::fp16_round;
using kvarena::test::random_rows;

TEST(KvHostPool, HeadMajorPagesMatchTokenMajorSource) {
  const int64_t d = 32, kv = 3, p = 32, n = 70, ld = kv * d + 5;  // padded rows
  std::mt19937 rng(9);
  auto k = random_rows(rng, n, ld), v = random_rows(rng, n, ld);
  kv_host_pool pool(2, kv, d, p);
  pool.append(1, 40, k.data(), v.data(), ld);  // in two uneven chunks
  pool.append(1, 30, k.data() + 40 * ld, v.data() + 40 * ld, ld);
  ASSERT_EQ(pool.n_pages(1), 2);  // token 64..69 wait for the third page
  EXPECT_EQ(pool.n_pages(0), 0);
  kv_page_digests dg = pool.digests(1);
  for (int64_t pg = 0; pg < 2; ++pg)
    for (int64_t g = 0; g < kv; ++g) {
      const uint16_t* pd = pool.page_data(1, pg, g);  // (2, p, d)
      for (int64_t c = 0; c < d; ++c) {
        float mn = 1e30f, mx = -1e30f;
        for (int64_t t = 0; t < p; ++t) {
          const int64_t src = (pg * p + t) * ld + g * d + c;
          EXPECT_EQ(pd[t * d + c], fp32_to_fp16(k[src]));
          EXPECT_EQ(pd[(p + t) * d + c], fp32_to_fp16(v[src]));
          mn = std::min(mn, fp16_round(k[src]));
          mx = std::max(mx, fp16_round(k[src]));
        }
        EXPECT_EQ(dg.kmin[(pg * kv + g) * d + c], mn);
        EXPECT_EQ(dg.kmax[(pg * kv + g) * d + c], mx);
      }
    }
  EXPECT_GE(pool.host_bytes(), size_t(2 * kv * 2 * p * d * 2));
}

// Recall: only pages new to the device are copied, each into a slot that held an unwanted
// page, and every resident slot ends up byte-equal to its host page; the double buffer is
// exercised with batches smaller than the request (3 pages per staging buffer).
TEST(KvFreekvRecall, CopiesExactlyTheRequestedPages) {
  const int64_t d = 32, kv = 2, p = 16, L = 2, slots = 5;
  std::mt19937 rng(13);
  auto k = random_rows(rng, 200, kv * d), v = random_rows(rng, 200, kv * d);
  kv_host_pool pool(L, kv, d, p);
  for (int64_t l = 0; l < L; ++l) pool.append(l, 200, k.data(), v.data(), kv * d);
  ASSERT_EQ(pool.n_pages(1), 12);
  kv_device_pages dev(L, kv, d, p, slots);
  kv_recall_worker worker(3, pool.page_elems());
  const size_t page_bytes = size_t(pool.page_elems()) * 2;

  auto check_resident = [&](const std::vector<std::vector<int32_t>>& want) {
    for (int64_t g = 0; g < kv; ++g) {
      std::set<int32_t> seen;
      for (int64_t s = 0; s < slots; ++s) {
        const int32_t pg = dev.slot_page(1, g, s);
        if (pg < 0) continue;
        seen.insert(pg);
        // The host page is (2, p, d): its keys, then its values; the slot keeps them apart.
        EXPECT_EQ(std::memcmp(dev.slot_k(1, g, s), pool.page_data(1, pg, g), page_bytes / 2), 0)
            << "keys: head " << g << " slot " << s << " page " << pg;
        EXPECT_EQ(std::memcmp(dev.slot_v(1, g, s), pool.page_data(1, pg, g) + p * d, page_bytes / 2), 0)
            << "values: head " << g << " slot " << s << " page " << pg;
      }
      for (int32_t pg : want[g]) EXPECT_TRUE(seen.count(pg)) << "page " << pg << " not resident";
    }
  };

  std::vector<std::vector<int32_t>> want = {{1, 3, 7}, {0, 2, 4, 5, 11}};
  auto jobs = dev.plan(1, want);
  EXPECT_EQ(jobs.size(), 8u);
  EXPECT_EQ(worker.recall(pool, 1, dev, jobs), 8 * page_bytes);
  check_resident(want);
  for (int64_t g = 0; g < kv; ++g)  // layer 0 was never asked for
    for (int64_t s = 0; s < slots; ++s) EXPECT_EQ(dev.slot_page(0, g, s), -1);

  // Head 0 swaps page 1 for page 9: one copy, into page 1's slot; nothing else moves.
  int64_t slot_of_1 = -1, slot_of_3 = -1;
  for (int64_t s = 0; s < slots; ++s) {
    if (dev.slot_page(1, 0, s) == 1) slot_of_1 = s;
    if (dev.slot_page(1, 0, s) == 3) slot_of_3 = s;
  }
  want = {{3, 7, 9}, {0, 2, 4, 5, 11}};
  jobs = dev.plan(1, want);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].head, 0);
  EXPECT_EQ(jobs[0].page, 9);
  EXPECT_EQ(dev.slot_page(1, 0, slot_of_3), 3);
  EXPECT_EQ(worker.recall(pool, 1, dev, jobs), page_bytes);
  check_resident(want);
  EXPECT_EQ(dev.slot_page(1, 0, slot_of_1), 9);

  // Many random working sets through the same worker: always exact.
  for (int it = 0; it < 200; ++it) {
    for (auto& w : want) {
      std::set<int32_t> s;
      const size_t n = 1 + rng() % slots;
      while (s.size() < n) s.insert(int32_t(rng() % 12));
      w.assign(s.begin(), s.end());
    }
    jobs = dev.plan(1, want);
    EXPECT_EQ(worker.recall(pool, 1, dev, jobs), jobs.size() * page_bytes);
    check_resident(want);
  }
}
