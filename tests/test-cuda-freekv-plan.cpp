// test-cuda-freekv-plan.cpp: FreeKV's host-side planning for the CUDA backend
// (engine/cuda/cuda-freekv-plan.cpp, compiled into this test; no CUDA, no GPU), checked
// against the CPU FreeKV's own decisions: the slot table against kv_device_pages::plan, and
// the whole per-layer sequence (host pool, window store, policy select, recall plan,
// speculation, prefetch plan) driven as kv_runtime drives it. Built in every configuration.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "cuda-freekv-plan.h"
#include "kv/kv-freekv-recall.h"
#include "kv/kv-host-pool.h"
#include "kv/kv-policy.h"
#include "kv/kv-store.h"

using namespace kvarena;

namespace {

bool same_jobs(const std::vector<kv_page_copy>& a, const std::vector<kv_page_copy>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].head != b[i].head || a[i].page != b[i].page || a[i].slot != b[i].slot) return false;
  return true;
}

// Every slot of every (layer, head) holds the same page in both tables.
void expect_same_slots(const freekv_slot_table& t, const kv_device_pages& d, int64_t L, int64_t H,
                       const std::string& what) {
  for (int64_t l = 0; l < L; ++l)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = 0; s < t.n_slots(); ++s)
        ASSERT_EQ(t.slot_page(l, h, s), d.slot_page(l, h, s)) << what << " layer " << l << " head " << h << " slot " << s;
}

// The pages of want are resident in increasing page order, each in a slot holding it.
void expect_resident(const freekv_slot_table& t, int64_t l, int64_t h, const std::vector<int32_t>& want) {
  const auto r = t.resident(l, h, want);
  ASSERT_EQ(r.size(), want.size());
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i].first, want[i]);
    EXPECT_EQ(t.slot_page(l, h, r[i].second), want[i]);
  }
}

}  // namespace

TEST(FreekvPlan, SlotTableMatchesKvDevicePagesOnRandomWants) {
  const int64_t L = 2, H = 3, slots = 6;
  freekv_slot_table t(L, H, slots);
  kv_device_pages d(L, H, /*head_dim=*/1, /*page=*/1, slots);  // tiny payload: only the plan matters
  std::mt19937 rng(7);
  int64_t moved = 0, kept = 0;
  for (int round = 0; round < 300; ++round) {
    const int64_t l = rng() % L;
    std::vector<std::vector<int32_t>> want(static_cast<size_t>(H));
    for (auto& w : want) {
      const int64_t n = rng() % (slots + 1);
      for (int32_t p = 0; int64_t(w.size()) < n; p = (p + 1) % 12)
        if (rng() % 3 == 0 && std::find(w.begin(), w.end(), p) == w.end()) w.push_back(p);
      std::sort(w.begin(), w.end());
    }
    const auto jt = t.plan(l, want), jd = d.plan(l, want);
    ASSERT_TRUE(same_jobs(jt, jd)) << "round " << round;
    expect_same_slots(t, d, L, H, "round " + std::to_string(round));
    for (int64_t h = 0; h < H; ++h) {
      expect_resident(t, l, h, want[size_t(h)]);
      // Free slots: exactly the slots whose page is not wanted, ascending.
      const auto fr = t.free_slots(l, h, want[size_t(h)]);
      EXPECT_EQ(int64_t(fr.size()), slots - int64_t(want[size_t(h)].size()));
      EXPECT_TRUE(std::is_sorted(fr.begin(), fr.end()));
      kept += int64_t(want[size_t(h)].size());
    }
    moved += int64_t(jt.size());
  }
  // Incremental: far fewer pages moved than were wanted over the rounds.
  EXPECT_LT(moved, kept);
  t.clear();
  for (int64_t s = 0; s < slots; ++s) EXPECT_EQ(t.slot_page(0, 0, s), -1);
}

TEST(FreekvPlan, FilledPagesMatchTheHostPool) {
  const int64_t page = 8, d = 4, H = 2;
  kv_host_pool pool(1, H, d, page);
  std::mt19937 rng(3);
  std::vector<float> k(static_cast<size_t>(page * H * d), 0.5f), v = k;
  int64_t pos = 0;
  for (int round = 0; round < 60; ++round) {
    const int64_t n = 1 + rng() % page;  // chunks of at most a page, as FreeKV's runtimes run
    const int64_t before = pool.n_pages(0);
    pool.append(0, n, k.data(), v.data(), H * d);
    const auto [first, last] = freekv_filled_pages(pos, n, page);
    EXPECT_EQ(first, before) << "round " << round;
    EXPECT_EQ(last, pool.n_pages(0)) << "round " << round;
    EXPECT_LE(last - first, 1);
    pos += n;
  }
}

TEST(FreekvPlan, WindowRowFindsConsecutivePagesOnly) {
  const std::vector<int32_t> pos = {0, 1, 2, 3, 64, 65, 66, 67, 68, 69, 70, 71, 72};
  EXPECT_EQ(freekv_window_row(pos.data(), int64_t(pos.size()), 64, 8), 4);
  EXPECT_EQ(freekv_window_row(pos.data(), int64_t(pos.size()), 0, 4), 0);
  EXPECT_EQ(freekv_window_row(pos.data(), int64_t(pos.size()), 0, 8), -1);   // a gap after 3
  EXPECT_EQ(freekv_window_row(pos.data(), int64_t(pos.size()), 72, 8), -1);  // not all there yet
  EXPECT_EQ(freekv_window_row(pos.data(), int64_t(pos.size()), 32, 8), -1);  // evicted
}

TEST(FreekvPlan, RecallBatchesCoverEveryJobOnceAlternatingBuffers) {
  for (int64_t n : {0, 1, 7, 8, 9, 33}) {
    const auto b = freekv_recall_batches(n, 8);
    int64_t next = 0;
    for (size_t i = 0; i < b.size(); ++i) {
      EXPECT_EQ(b[i].j0, next);
      EXPECT_GT(b[i].j1, b[i].j0);
      EXPECT_LE(b[i].j1 - b[i].j0, 8);
      EXPECT_EQ(b[i].buffer, int(i % 2));
      next = b[i].j1;
    }
    EXPECT_EQ(next, n);
  }
}

namespace {

struct drive_result {
  int64_t checked = 0, corrected = 0;
  int64_t select_jobs = 0;              // pages recalled at select time (blocking on the GPU)
  int64_t select_jobs_quiet = 0;        // of them on steps where no page filled (decode)
  int64_t prefetch_jobs = 0;
  int64_t quiet_steps = 0;
};

// Drives the CPU FreeKV policy with a host pool and a window store exactly as kv_runtime
// does (append, digests, select, apply, recall plan; after attention speculate and
// prefetch plan) and plans every recall with both kv_device_pages and freekv_slot_table.
drive_result drive(float tau, uint64_t seed, float query_noise) {
  const int64_t L = 2, NH = 4, H = 2, D = 16, P = 32, W = 64, S = 64, B = 448;
  kv_policy_options o;
  o.n_layers = L, o.n_heads = NH, o.n_kv_heads = H, o.head_dim = D;
  o.budget = B, o.window = W, o.sinks = S, o.page = P, o.tau = tau;
  auto policy = make_kv_policy("freekv", o);
  const int64_t slots = as_retrieval(*policy)->page_slots();
  EXPECT_EQ(slots, (B - W - P) / P);
  kv_host_pool pool(L, H, D, P);
  kv_device_pages dev(L, H, D, P, slots);
  freekv_slot_table table(L, H, slots);
  kv_store_config sc;
  sc.n_layers = L, sc.n_kv_heads = H, sc.head_dim = D, sc.group = NH / H;
  sc.layer_capacity.assign(size_t(L), W + P);
  kv_store store(sc);

  std::mt19937 rng{uint32_t(seed)};
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> q(static_cast<size_t>(L * NH * D));
  for (auto& x : q) x = nd(rng);
  std::vector<const float*> qptr(static_cast<size_t>(L));
  for (int64_t l = 0; l < L; ++l) qptr[size_t(l)] = q.data() + l * NH * D;
  drive_result r;
  int64_t pos = 0;
  const int64_t prompt = 640, total = 760;
  while (pos < total) {
    const int64_t n = pos < prompt ? std::min<int64_t>(P, prompt - pos) : 1;
    std::vector<float> k(static_cast<size_t>(n * H * D)), v(k.size());
    for (auto& x : k) x = nd(rng);
    for (auto& x : v) x = nd(rng);
    for (auto& x : q) x = (1.f - query_noise) * x + query_noise * nd(rng);  // queries drift
    step_signals sig;
    sig.decode = n == 1;
    sig.queries = qptr;
    policy->on_step(sig);
    const auto [f0, f1] = freekv_filled_pages(pos, n, P);
    const bool quiet = f0 == f1;
    r.quiet_steps += quiet;
    for (int64_t l = 0; l < L; ++l) {
      pool.append(l, n, k.data(), v.data(), H * D);
      as_retrieval(*policy)->set_digests(l, pool.digests(l));
      store.append(l, pos, n, k.data(), v.data(), H * D);
      // The CUDA runtime copies a page to the host from the window rows when it fills.
      for (int32_t pg = f0; pg < f1; ++pg) {
        const kv_layer_meta m = store.layer_meta(l);
        for (int64_t h = 0; h < H; ++h)
          EXPECT_GE(freekv_window_row(m.heads[size_t(h)].pos, m.heads[size_t(h)].n, int64_t(pg) * P, P), 0)
              << "page " << pg << " left the window before it filled";
      }
      const keep_decision d = policy->select(l, store.layer_meta(l));
      store.apply(l, d);
      if (d.checked) {
        r.checked += H;
        for (bool c : d.corrected) r.corrected += c;
      }
      const auto jt = table.plan(l, d.pages), jd = dev.plan(l, d.pages);
      EXPECT_TRUE(same_jobs(jt, jd)) << "select plan at position " << pos << " layer " << l;
      r.select_jobs += int64_t(jt.size());
      if (quiet && pos >= prompt) r.select_jobs_quiet += int64_t(jt.size());
      for (int64_t h = 0; h < H; ++h) {
        expect_resident(table, l, h, d.pages[size_t(h)]);
        // Device tokens within the budget: the window plus the page slots in use.
        EXPECT_LE(store.n_kept(l, h) + int64_t(d.pages[size_t(h)].size()) * P, B);
      }
      // After the attention: the next step's pages, chosen with this query, prefetched.
      const auto want = as_retrieval(*policy)->speculate(l, pos + n + 1);
      if (!want.empty()) {
        const auto pt = table.plan(l, want), pd = dev.plan(l, want);
        EXPECT_TRUE(same_jobs(pt, pd)) << "prefetch plan at position " << pos << " layer " << l;
        r.prefetch_jobs += int64_t(pt.size());
      }
      expect_same_slots(table, dev, L, H, "position " + std::to_string(pos));
    }
    pos += n;
  }
  return r;
}

}  // namespace

TEST(FreekvPlan, FollowsTheCpuPolicyNeverCorrecting) {
  const drive_result r = drive(-1.f, 11, 0.5f);
  EXPECT_GT(r.checked, 0);
  EXPECT_EQ(r.corrected, 0);
  EXPECT_GT(r.prefetch_jobs, 0);  // there are more candidates than slots: pages do move
  EXPECT_GT(r.quiet_steps, 0);
  // Speculation reuse: on a decode step with no new page, no head is corrected and the
  // candidates did not change, so every page attention needs was prefetched.
  EXPECT_EQ(r.select_jobs_quiet, 0);
}

TEST(FreekvPlan, FollowsTheCpuPolicyCorrectingEveryHead) {
  const drive_result r = drive(1.f, 12, 0.5f);
  EXPECT_GT(r.checked, 0);
  EXPECT_EQ(r.corrected, r.checked);  // tau = 1: a moved query is always below it
  // Corrected heads choose with the new query: pages recalled at select time.
  EXPECT_GT(r.select_jobs_quiet, 0);
}

TEST(FreekvPlan, FollowsTheCpuPolicyWithTheDefaultTau) {
  const drive_result r = drive(-2.f, 13, 0.15f);  // tau 0.9, slowly drifting queries
  EXPECT_GT(r.checked, 0);
  EXPECT_LT(r.corrected, r.checked);
}
