// test-cuda.cpp: the CUDA backend's CPU-side tests (engine/cuda/), label `gpu`; they run
// everywhere the CUDA build compiles, no GPU needed:
//   - error macros and the allocator's accounting;
//   - launch-configuration math (split-K plan, causal split ranges, shared-memory budgets);
//   - the span attention's algorithm emulated on the CPU (tiles, online softmax, split
//     merge, mass pass) against the engine's ref::kv_attend, over FP16/INT8/paged spans,
//     GQA, chunks, batches;
//   - the references of the new kernels against the engine's own code (INT8 blocks vs
//     kv_store, page digests vs kv_host_pool, the compaction plan vs kv_store::compact).
// The GPU tests (GTEST_SKIP without a device): every kernel against its CPU reference in
// test-cuda-kernels.cpp; the device KV store and the CUDA forward against the CPU forward and
// session in test-cuda-forward.cpp; FreeKV in test-cuda-freekv.cpp; gpt2's batch and position
// limit in test-cuda-gpt2.cpp. Shared helpers: cuda-test-util.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda-check.h"
#include "cuda-launch.h"
#include "cuda-memory.h"
#include "cuda-ref.h"
#include "cuda-test-util.h"
#include "ggml-types.h"
#include "kv/kv-host-pool.h"
#include "kv/kv-store.h"
#include "kv-span-fixture.h"

using namespace kvarena;
using namespace kvarena::test;

// ======================= CPU: error checks and accounting =======================

TEST(CudaCheck, FailedCallThrowsWithFileLineCallAndError) {
  try {
    CUDA_CHECK(cudaSetDevice(12345));  // invalid device, or no driver/GPU at all: fails either way
    FAIL() << "cudaSetDevice(12345) succeeded";
  } catch (const engine_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("test-cuda.cpp:"), std::string::npos) << m;
    EXPECT_NE(m.find("cudaSetDevice(12345)"), std::string::npos) << m;
    EXPECT_NE(m.find("failed: cuda"), std::string::npos) << m;  // the error's name, cudaError...
  }
  (void)cudaGetLastError();
  try {
    CUBLAS_CHECK(CUBLAS_STATUS_NOT_INITIALIZED);
    FAIL();
  } catch (const engine_error& e) {
    EXPECT_NE(std::string(e.what()).find("CUBLAS_STATUS_NOT_INITIALIZED"), std::string::npos) << e.what();
  }
}

TEST(CudaCheck, DeviceCountNeverThrows) {
  const int n = cuda_device_count();
  EXPECT_GE(n, 0);
  if (n == 0) {
    EXPECT_FALSE(have_gpu());
  }
}

TEST(CudaMemory, AccountingLivePeakAndSnapshots) {
  cuda_memory_accounting a;
  a.on_alloc(100);
  a.on_alloc(50);
  EXPECT_EQ(a.live_bytes(), 150u);
  EXPECT_EQ(a.n_live_allocations(), 2u);
  a.on_free(100);
  a.on_alloc(20);
  EXPECT_EQ(a.live_bytes(), 70u);
  EXPECT_EQ(a.peak_bytes(), 150u);
  a.on_device_info(900, 1000);
  a.on_device_info(500, 1000);
  a.on_device_info(800, 1000);
  EXPECT_EQ(a.device_used_bytes(), 200u);
  EXPECT_EQ(a.peak_device_bytes(), 500u);
  EXPECT_EQ(a.device_total_bytes(), 1000u);
  a.on_free(50);
  a.on_free(20);
  EXPECT_EQ(a.live_bytes(), 0u);
  EXPECT_EQ(a.n_live_allocations(), 0u);
}

TEST(CudaMemory, AllocationWithoutDeviceIsAnEngineError) {
  if (have_gpu()) GTEST_SKIP() << "a device is present (this checks the no-device message)";
  cuda_allocator a;
  EXPECT_THROW(a.alloc(1024, "test buffer"), engine_error);
  EXPECT_EQ(a.live_bytes(), 0u);
  EXPECT_EQ(a.alloc(0, "nothing"), nullptr);  // zero bytes never touch the driver
}

// ======================= CPU: launch configuration =======================

TEST(CudaLaunch, SplitPlanCoversTheContextWithoutEmptySplits) {
  for (int64_t n_sm : {1, 4, 108, 132})
    for (int64_t base : {1, 2, 8, 32, 256, 4096})
      for (int64_t N : {1, 31, 32, 33, 255, 256, 1000, 4096, 8192, 131072}) {
        const cu::attn_split_plan p = cu::plan_attention_splits(N, base, n_sm);
        SCOPED_TRACE("N=" + std::to_string(N) + " base=" + std::to_string(base) + " sm=" + std::to_string(n_sm));
        EXPECT_GE(p.n_splits, 1);
        EXPECT_EQ(p.split_len % cu::k_attn_tile, 0);
        EXPECT_GE(p.n_splits * p.split_len, N);                  // covers every token
        EXPECT_LT((p.n_splits - 1) * p.split_len, std::max<int64_t>(N, 1));  // the last split is not empty
        if (p.n_splits > 1) {
          EXPECT_GE(p.split_len, cu::k_min_split_tokens - cu::k_attn_tile);
        }
      }
}

TEST(CudaLaunch, SplitPlanFillsTheDeviceForLongDecode) {
  // Batch-1 decode of an 8B-shaped model (8 KV heads) at 8K tokens on an H200 (132 SMs):
  // ~2 blocks per SM in total.
  const cu::attn_split_plan p = cu::plan_attention_splits(8192, 8, 132);
  EXPECT_GE(p.n_splits * 8, 132);
  EXPECT_LE(p.n_splits * 8, 2 * 132 + 8);
  // Short context or a big batch: no split.
  EXPECT_EQ(cu::plan_attention_splits(200, 8, 132).n_splits, 1);
  EXPECT_EQ(cu::plan_attention_splits(8192, 8 * 64, 132).n_splits, 1);
}

TEST(CudaLaunch, SplitTokensPartitionEachRowsVisibleTokens) {
  for (int64_t N : {1, 5, 64, 100, 1000})
    for (int64_t n_q : {int64_t(1), std::min<int64_t>(N, 7)})
      for (int64_t split_len : {32, 64, 256}) {
        const int64_t S = cu::ceil_div(N, split_len);
        for (int64_t i = 0; i < n_q; ++i) {
          int64_t covered = 0, next = 0;
          for (int64_t s = 0; s < S + 1; ++s) {  // one split past the end must be empty
            int64_t b, e;
            cu::attn_split_tokens(N, n_q, i, s, split_len, &b, &e);
            if (e > b) {
              EXPECT_EQ(b, next);
              next = e;
              covered += e - b;
            }
          }
          EXPECT_EQ(covered, N - n_q + i + 1) << "N=" << N << " n_q=" << n_q << " i=" << i;
        }
      }
}

TEST(CudaLaunch, SharedMemoryBudgets) {
  // Decode attention of common shapes stays under the default 48 KiB (no opt-in needed).
  EXPECT_LE(cu::span_attention_smem_bytes(4, 128), size_t(48 * 1024));
  EXPECT_LE(cu::span_attention_smem_bytes(8, 128), size_t(48 * 1024));
  // head_dim 256 needs the opt-in (the launcher raises the limit), within an A100's 163 KiB.
  EXPECT_GT(cu::span_attention_smem_bytes(1, 256), size_t(48 * 1024));
  EXPECT_LE(cu::span_attention_smem_bytes(8, 256), size_t(163 * 1024));
  // Prefill: 64 rows per block for head_dim 128 on H100/H200 (227 KiB) and A100 (163 KiB).
  EXPECT_EQ(cu::prefill_positions_per_block(4, 128, 227 * 1024), 16);
  EXPECT_EQ(cu::prefill_positions_per_block(4, 128, 163 * 1024), 16);
  EXPECT_EQ(cu::prefill_positions_per_block(1, 128, 227 * 1024), 64);
  // head_dim 256 halves the rows on an A100; tiny budgets fall to 0 (the launcher throws).
  EXPECT_EQ(cu::prefill_positions_per_block(4, 256, 163 * 1024), 8);
  EXPECT_EQ(cu::prefill_positions_per_block(8, 256, 1024), 0);
  for (int64_t g : {1, 2, 4, 8, 16})
    for (int64_t d : {64, 128, 256}) {
      const int64_t p = cu::prefill_positions_per_block(g, d, 227 * 1024);
      ASSERT_GE(p, 1);
      EXPECT_LE(cu::prefill_attention_smem_bytes(p * g, d), size_t(227 * 1024));
    }
}

TEST(CudaLaunch, MergeWeightIgnoresEmptySplits) {
  EXPECT_EQ(cu::merge_weight(-INFINITY, 3.f), 0.f);
  EXPECT_EQ(cu::merge_weight(-INFINITY, -INFINITY), 0.f);
  EXPECT_FLOAT_EQ(cu::merge_weight(2.f, 3.f), std::exp(-1.f));
}

// ======================= CPU: references vs the engine =======================

TEST(CudaRef, SpanAttentionEmulationMatchesKvAttend) {
  for (attn_case c : attention_cases()) {
    c.build(7);
    SCOPED_TRACE(case_name(c));
    const std::vector<float> want = c.reference(true);
    const std::vector<float> want_mass = c.masses();
    for (int64_t forced : {0, 1, 3, 8})
      for (int64_t n_sm : {4, 132}) {
        c.reset_mass();
        cu::kv_span_table t = c.host_table(true);
        std::vector<float> got(want.size());
        cu::span_attention_args a = c.args(got.data());
        a.mass = true;
        a.force_splits = forced;
        cuda_ref::attend_spans_emulated(t, a, n_sm);
        const std::string what = "forced splits " + std::to_string(forced) + ", sm " + std::to_string(n_sm);
        expect_close(got, want, 2e-5f, 2e-4f, "output, " + what);
        expect_close(c.masses(), want_mass, 2e-5f, 2e-4f, "mass, " + what);
      }
    c.reset_mass();
  }
}

TEST(CudaRef, QuantizeMatchesTheStoresInt8Blocks) {
  // The store quantises its FP16 rows block by block when they leave the FP16 window; the
  // CUDA kernel's reference must produce the same bytes and scales from the same rows.
  const int64_t d = 64, n_kv = 2, n = 200;
  kv_store_config sc;
  sc.n_layers = 1, sc.n_kv_heads = n_kv, sc.head_dim = d, sc.int8 = true, sc.fp16_window = 100;
  kv_store store(sc);
  std::mt19937 rng(3);
  const std::vector<float> k = uniform(rng, n * n_kv * d, -3.f, 3.f), v = uniform(rng, n * n_kv * d, -1.f, 1.f);
  store.append(0, 0, n, k.data(), v.data(), n_kv * d);
  store.quantize_old(0);  // after the forward call, as the runtime's apply
  for (int64_t g = 0; g < n_kv; ++g) {
    const kv_head_view hv = store.head_view(0, g);
    ASSERT_EQ(hv.n_int8, 96);  // 3 blocks left the window of 100 (+31)
    // The FP16 rows the store had before blocking: the inputs rounded to FP16.
    std::vector<uint16_t> rows(size_t(hv.n_int8 * d));
    for (int64_t t = 0; t < hv.n_int8; ++t)
      for (int64_t c = 0; c < d; ++c) rows[size_t(t * d + c)] = fp32_to_fp16(k[size_t(t * n_kv * d + g * d + c)]);
    std::vector<int8_t> q(rows.size());
    std::vector<float> s(size_t(3 * d));
    cuda_ref::kv_quantize_f16(rows.data(), 32 * d, 3, 32, d, q.data(), 32 * d, s.data(), d);
    EXPECT_EQ(std::memcmp(q.data(), hv.k_q, q.size()), 0) << "head " << g;
    EXPECT_EQ(std::memcmp(s.data(), hv.k_scale, s.size() * 4), 0) << "head " << g;
  }
}

TEST(CudaRef, PageDigestMatchesTheHostPool) {
  const int64_t d = 64, n_kv = 2, page = 32, n = 5 * page + 7;
  kv_host_pool pool(1, n_kv, d, page);
  std::mt19937 rng(5);
  const std::vector<float> k = uniform(rng, n * n_kv * d, -2.f, 2.f), v = uniform(rng, n * n_kv * d, -1.f, 1.f);
  pool.append(0, n, k.data(), v.data(), n_kv * d);
  const kv_page_digests dg = pool.digests(0);
  ASSERT_EQ(dg.n_pages, 5);
  // Units (page, head) are 2*page*d apart in the pool (K then V of each head page).
  std::vector<float> mn(size_t(5 * n_kv * d)), mx(mn.size());
  cuda_ref::page_digest(pool.page_data(0, 0, 0), 2 * page * d, 5 * n_kv, page, d, mn.data(), mx.data());
  EXPECT_EQ(std::memcmp(mn.data(), dg.kmin, mn.size() * 4), 0);
  EXPECT_EQ(std::memcmp(mx.data(), dg.kmax, mx.size() * 4), 0);
}

TEST(CudaRef, PageScoresAreAMeanOfSoftmaxes) {
  const int64_t d = 32, n_kv = 2, H = 6, n_pages = 9;
  std::mt19937 rng(11);
  const std::vector<float> q = uniform(rng, H * d, -1.f, 1.f);
  std::vector<float> mn = uniform(rng, n_pages * n_kv * d, -1.f, 0.f), mx = uniform(rng, n_pages * n_kv * d, 0.f, 1.f);
  const std::vector<int32_t> cand = {1, 2, 4, 7, 8};
  std::vector<float> out(size_t(n_kv * cand.size()));
  cuda_ref::page_scores(q.data(), mn.data(), mx.data(), cand.data(), int64_t(cand.size()), H, n_kv, d, 0.2f, out.data());
  for (int64_t g = 0; g < n_kv; ++g) {
    float sum = 0;
    for (size_t j = 0; j < cand.size(); ++j) {
      EXPECT_GT(out[g * cand.size() + j], 0.f);
      sum += out[g * cand.size() + j];
    }
    EXPECT_NEAR(sum, 1.f, 1e-5f);
  }
  // A page whose bounds dominate another's in every channel scores at least as high.
  for (int64_t c = 0; c < d; ++c) {
    mx[size_t((7 * n_kv + 0) * d + c)] = 2.f, mn[size_t((7 * n_kv + 0) * d + c)] = -2.f;
  }
  cuda_ref::page_scores(q.data(), mn.data(), mx.data(), cand.data(), int64_t(cand.size()), H, n_kv, d, 0.2f, out.data());
  for (size_t j = 0; j < cand.size(); ++j) EXPECT_GE(out[3], out[j]);
}

namespace {

// The compaction plan applied to a kv_store head's host arrays (host_head: cuda-test-util.h).
host_head apply_plan(const host_head& h, const std::vector<int32_t>& keep) {
  const kv_compaction_plan p = plan_kv_compaction(h.block.data(), h.n8, h.n16, keep);
  host_head o;
  o.d = h.d, o.n8 = int64_t(p.int8_rows.size()), o.n16 = int64_t(p.fp16_rows.size()), o.nb = int64_t(p.scale_src.size());
  const int64_t d = h.d;
  for (int32_t r : p.int8_rows) {
    o.kq.insert(o.kq.end(), h.kq.begin() + r * d, h.kq.begin() + (r + 1) * d);
    o.vq.insert(o.vq.end(), h.vq.begin() + r * d, h.vq.begin() + (r + 1) * d);
  }
  o.block = p.new_block;
  for (int32_t b : p.scale_src) {
    o.ks.insert(o.ks.end(), h.ks.begin() + b * d, h.ks.begin() + (b + 1) * d);
    o.vs.insert(o.vs.end(), h.vs.begin() + b * d, h.vs.begin() + (b + 1) * d);
  }
  for (int32_t r : p.fp16_rows) {
    o.k16.insert(o.k16.end(), h.k16.begin() + r * d, h.k16.begin() + (r + 1) * d);
    o.v16.insert(o.v16.end(), h.v16.begin() + r * d, h.v16.begin() + (r + 1) * d);
  }
  for (int32_t i : keep) o.pos.push_back(h.pos[size_t(i)]);
  return o;
}

}  // namespace

TEST(CudaRef, CompactionPlanReproducesKvStoreCompact) {
  // The device store carries out plan_kv_compaction; applied to the store's own arrays it
  // must give what kv_store::compact gives, through several rounds of appends (INT8
  // blocking) and evictions (blocks partly kept, renumbered).
  const int64_t d = 32, n_kv = 2;
  kv_store_config sc;
  sc.n_layers = 1, sc.n_kv_heads = n_kv, sc.head_dim = d, sc.int8 = true, sc.fp16_window = 40;
  kv_store store(sc);
  std::mt19937 rng(17);
  int64_t pos = 0;
  for (int round = 0; round < 6; ++round) {
    const int64_t n = 50 + 17 * round;
    const std::vector<float> k = uniform(rng, n * n_kv * d, -2.f, 2.f), v = uniform(rng, n * n_kv * d, -1.f, 1.f);
    store.append(0, pos, n, k.data(), v.data(), n_kv * d);
    store.quantize_old(0);  // the blocking a forward call's apply does
    pos += n;
    std::vector<std::vector<int32_t>> keep(static_cast<size_t>(n_kv));
    std::vector<host_head> want(static_cast<size_t>(n_kv));
    for (int64_t g = 0; g < n_kv; ++g) {
      const host_head before = copy_head(store, 0, g);
      keep[size_t(g)] = random_keep(rng, before.n8 + before.n16, 0.6);
      want[size_t(g)] = apply_plan(before, keep[size_t(g)]);
    }
    store.compact(0, keep);
    for (int64_t g = 0; g < n_kv; ++g)
      expect_same_head(copy_head(store, 0, g), want[size_t(g)], "round " + std::to_string(round) + " head " + std::to_string(g));
  }
}
