// test-cuda.cpp: the CUDA backend's CPU-side tests (engine/cuda/), label `gpu`; they run
// everywhere the CUDA build compiles, no GPU needed:
//   - error macros and the allocator's accounting;
//   - launch-configuration math (split-K plan, causal split ranges, shared-memory budgets);
//   - the span attention's algorithm emulated on the CPU (tiles, online softmax, split
//     merge, mass pass) against the engine's ref::kv_attend, over FP16/INT8/paged spans,
//     GQA, chunks, batches;
//   - the references of the new kernels against the engine's own code (INT8 blocks vs
//     kv_store, page digests vs kv_host_pool, the compaction plan vs kv_store::compact);
//   - RoPE with Llama 3 / linear scaling and qwen3's per-head RMSNorm: the kernels' own
//     element code (cuda-rowmath.h) run on the CPU against the engine's references;
//   - quantized blocks (Q8_0, Q4_0, Q2_K..Q6_K) decoded by the device's code (cuda-quant.h)
//     bit for bit against dequantize_row_ref.
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
#include "cuda-model.h"
#include "cuda-quant.h"
#include "cuda-quant-test-util.h"
#include "cuda-ref.h"
#include "cuda-test-util.h"
#include "ggml-types.h"
#include "kv/kv-host-pool.h"
#include "kv/kv-store.h"
#include "kv-span-fixture.h"
#include "model-random.h"

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

// ======================= CPU: uploads, the activation cast, INT8 blocking =======================

TEST(CudaMemory, StagingRingNeverOverwritesBytesACopyMayStillRead) {
  // The pinned ring's plan against a model of the device: a grant's bytes are "in flight"
  // until the host has waited for the event of their segment (recorded when the ring left
  // it) or the ring grew (the wrapper waits for every copy). No new grant may overlap bytes
  // in flight; the host waits only when it comes back to a segment, a whole ring later.
  struct live_grant {
    size_t off, len;
    int seg;
    bool closed;  // its segment's event was recorded after it
  };
  std::mt19937 rng(5);
  staging_ring_plan p(1024, 4);
  std::vector<live_grant> live;
  int64_t waits = 0, closes = 0, grows = 0;
  std::vector<bool> recorded(4, false);
  for (int i = 0; i < 5000; ++i) {
    const size_t n = i == 3000 ? 3000 : size_t(1 + rng() % (i % 7 == 0 ? 700 : 120));
    const staging_ring_plan::grant g = p.take(n);
    if (g.grow_to > 0) {
      ++grows;
      EXPECT_EQ(g.grow_to, p.arena_bytes());
      EXPECT_GE(p.segment_bytes(), staging_ring_plan::aligned(n));
      live.clear();
      std::fill(recorded.begin(), recorded.end(), false);
    }
    if (g.close >= 0) {
      ++closes;
      recorded[size_t(g.close)] = true;
      for (live_grant& l : live)
        if (l.seg == g.close) l.closed = true;
    }
    if (g.wait >= 0) {
      ++waits;
      ASSERT_TRUE(recorded[size_t(g.wait)]) << "waits for an event never recorded";
      recorded[size_t(g.wait)] = false;
      // Everything of that segment was enqueued before its event: done now.
      live.erase(std::remove_if(live.begin(), live.end(), [&](const live_grant& l) {
                   EXPECT_TRUE(l.seg != g.wait || l.closed);
                   return l.seg == g.wait;
                 }), live.end());
    }
    const size_t len = staging_ring_plan::aligned(n);
    ASSERT_EQ(g.offset % 16, 0u);
    ASSERT_LE(g.offset + len, p.arena_bytes());
    const int seg = int(g.offset / p.segment_bytes());
    ASSERT_EQ(int((g.offset + len - 1) / p.segment_bytes()), seg) << "a grant straddles two segments";
    for (const live_grant& l : live)
      ASSERT_TRUE(g.offset + len <= l.off || l.off + l.len <= g.offset)
          << "grant " << i << " [" << g.offset << ", " << g.offset + len << ") overwrites bytes in flight";
    live.push_back({g.offset, len, seg, false});
  }
  EXPECT_EQ(grows, 1);  // the one 3000-byte request: segments of 4096 from then on
  EXPECT_EQ(p.segment_bytes(), 4096u);
  EXPECT_GT(closes, 100);
  // The first lap and the lap after the growth never wait.
  EXPECT_LE(waits, closes - 2 * (p.n_segments() - 1));
  EXPECT_GT(waits, 0);
}

TEST(CudaRef, ActivationCastSaturatesInsteadOfOverflowing) {
  // cu::f32_to_f16 (every GEMM input) saturates: a SwiGLU output of 70000 would otherwise be
  // inf in F16, and inf * 0-weight = NaN spreads through the next GEMM's whole row.
  const uint16_t f16_max = 0x7BFF, f16_min = 0xFBFF;
  EXPECT_EQ(fp32_to_fp16(70000.f), 0x7C00);  // the plain cast overflows to inf
  EXPECT_EQ(cuda_ref::f32_to_f16_sat(70000.f), f16_max);
  EXPECT_EQ(cuda_ref::f32_to_f16_sat(65520.f), f16_max);  // would round up to inf
  EXPECT_EQ(cuda_ref::f32_to_f16_sat(65504.f), f16_max);
  EXPECT_EQ(cuda_ref::f32_to_f16_sat(-1e30f), f16_min);
  EXPECT_EQ(cuda_ref::f32_to_f16_sat(INFINITY), f16_max);
  EXPECT_EQ(cuda_ref::f32_to_f16_sat(-INFINITY), f16_min);
  const float nan_back = fp16_to_fp32(cuda_ref::f32_to_f16_sat(std::nanf("")));
  EXPECT_TRUE(std::isnan(nan_back)) << "NaN must stay visible";
  // Inside the range: exactly the plain cast (round to nearest even), subnormals included.
  std::mt19937 rng(9);
  for (float x : uniform(rng, 20000, -65504.f, 65504.f)) ASSERT_EQ(cuda_ref::f32_to_f16_sat(x), fp32_to_fp16(x)) << x;
  for (float x : uniform(rng, 2000, -1e-4f, 1e-4f)) ASSERT_EQ(cuda_ref::f32_to_f16_sat(x), fp32_to_fp16(x)) << x;
  // A SwiGLU row with large gate/up values (as real models' FFNs reach in a few channels)
  // through the strided reference: every element finite, the big ones at the F16 limit.
  const int64_t n = 3, w = 64, ld = 80;
  std::vector<float> gate = uniform(rng, n * ld, -4.f, 4.f), up = uniform(rng, n * ld, -4.f, 4.f);
  gate[5] = 900.f, up[5] = 300.f;    // silu(900) * 300 = 270000
  gate[ld + 7] = 700.f, up[ld + 7] = -200.f;
  std::vector<float> act(size_t(n * ld));
  for (size_t i = 0; i < act.size(); ++i) act[i] = gate[i] / (1.f + std::exp(-gate[i])) * up[i];
  std::vector<uint16_t> h(size_t(n * w), 0);
  cuda_ref::f32_to_f16(act.data(), ld, h.data(), w, n, w);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < w; ++j) ASSERT_TRUE(std::isfinite(fp16_to_fp32(h[size_t(i * w + j)]))) << i << "," << j;
  EXPECT_EQ(h[5], f16_max);
  EXPECT_EQ(h[size_t(w + 7)], f16_min);
}

TEST(CudaRef, QuantizePlanGrowsAsTheBlockByBlockLoop) {
  // The batched plan's capacities are what quantize_old's old per-block ensure calls made
  // (same device bytes): INT8 capacity 100 holding 96, 3 blocks leave -> 128, 160, then
  // max(192, 160 + 160/4) rounded to 32 = 224 (one jump would give 192); scales 3 -> 5 -> 5 -> 8.
  const kv_quantize_plan p = plan_kv_quantize({{96, 40 + 3 * 32 + 5, 3}}, 40, 200, 100, 3, 0);
  ASSERT_EQ(p.blocks, std::vector<int64_t>{3});
  EXPECT_EQ(p.c8, 224);
  EXPECT_EQ(p.cb, 8);
  // Below window + 32 nothing moves, whatever the counts.
  const kv_quantize_plan none = plan_kv_quantize({{0, 71, 0}, {32, 40, 1}}, 40, 80, 32, 1, 0);
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.c8, 32);
  EXPECT_EQ(none.shift_src.size(), 0u);
}

TEST(CudaRef, QuantizePlanReproducesKvStoreQuantizeOld) {
  // The device store's one-pass INT8 blocking, emulated on flat head-major arrays with the
  // kernels' references (per head one kv_quantize_f16 over its blocks, the block ids
  // scattered, the FP16 rows shifted through a scratch), must leave what kv_store's
  // block-by-block quantize_old leaves, over rounds of appends of 1..150 tokens (0..4
  // blocks per head per call) and per-head evictions (heads of unequal counts).
  const int64_t d = 32, n_kv = 3, B = kv_int8_block, W = 40;
  kv_store_config sc;
  sc.n_layers = 1, sc.n_kv_heads = n_kv, sc.head_dim = d, sc.int8 = true, sc.fp16_window = W;
  kv_store store(sc);
  std::mt19937 rng(29);
  int64_t pos = 0, c8 = 0, cb = 0;
  int64_t max_blocks = 0;
  for (int round = 0; round < 12; ++round) {
    const int64_t n = 1 + (round * 53) % 150;
    const std::vector<float> k = uniform(rng, n * n_kv * d, -2.f, 2.f), v = uniform(rng, n * n_kv * d, -1.f, 1.f);
    store.append(0, pos, n, k.data(), v.data(), n_kv * d);
    pos += n;
    std::vector<host_head> before(static_cast<size_t>(n_kv));
    std::vector<kv_quantize_counts> counts;
    int64_t c16 = 0;
    for (int64_t g = 0; g < n_kv; ++g) {
      before[size_t(g)] = copy_head(store, 0, g);
      const host_head& h = before[size_t(g)];
      counts.push_back({h.n8, h.n16, h.nb});
      c16 = std::max(c16, h.n16 + 3);  // some slack: rows are addressed g*c16 + i
      c8 = std::max(c8, h.n8), cb = std::max(cb, h.nb);
    }
    // The device arrays before the step.
    std::vector<uint16_t> k16(size_t(n_kv * c16 * d)), v16(k16.size());
    for (int64_t g = 0; g < n_kv; ++g) {
      const host_head& h = before[size_t(g)];
      std::copy(h.k16.begin(), h.k16.end(), k16.begin() + g * c16 * d);
      std::copy(h.v16.begin(), h.v16.end(), v16.begin() + g * c16 * d);
    }
    const kv_quantize_plan p = plan_kv_quantize(counts, W, c16, c8, cb, 0);
    ASSERT_GE(p.c8, c8);
    ASSERT_GE(p.cb, cb);
    std::vector<int8_t> kq(size_t(n_kv * p.c8 * d)), vq(kq.size());
    std::vector<int32_t> block(size_t(n_kv * p.c8), -1);
    std::vector<float> ks(size_t(n_kv * p.cb * d)), vs(ks.size());
    for (int64_t g = 0; g < n_kv; ++g) {  // the repitched old contents
      const host_head& h = before[size_t(g)];
      std::copy(h.kq.begin(), h.kq.end(), kq.begin() + g * p.c8 * d);
      std::copy(h.vq.begin(), h.vq.end(), vq.begin() + g * p.c8 * d);
      std::copy(h.block.begin(), h.block.end(), block.begin() + g * p.c8);
      std::copy(h.ks.begin(), h.ks.end(), ks.begin() + g * p.cb * d);
      std::copy(h.vs.begin(), h.vs.end(), vs.begin() + g * p.cb * d);
    }
    // What cuda_kv_store::quantize_old launches, on the references.
    for (int64_t g = 0; g < n_kv; ++g) {
      const host_head& h = before[size_t(g)];
      const int64_t kb = p.blocks[size_t(g)];
      max_blocks = std::max(max_blocks, kb);
      if (kb == 0) continue;
      cuda_ref::kv_quantize_f16(k16.data() + g * c16 * d, B * d, kb, B, d, kq.data() + (g * p.c8 + h.n8) * d, B * d,
                                ks.data() + (g * p.cb + h.nb) * d, d);
      cuda_ref::kv_quantize_f16(v16.data() + g * c16 * d, B * d, kb, B, d, vq.data() + (g * p.c8 + h.n8) * d, B * d,
                                vs.data() + (g * p.cb + h.nb) * d, d);
    }
    ASSERT_EQ(p.ids.size(), p.id_rows.size());
    cuda_ref::gather_rows(p.ids.data(), block.data(), 4, nullptr, p.id_rows.data(), int64_t(p.ids.size()));
    ASSERT_EQ(p.shift_src.size(), p.shift_dst.size());
    for (std::vector<uint16_t>* buf : {&k16, &v16}) {
      std::vector<uint16_t> scratch(buf->size());
      cuda_ref::gather_rows(buf->data(), scratch.data(), d * 2, p.shift_src.data(), p.shift_dst.data(),
                            int64_t(p.shift_src.size()));
      cuda_ref::gather_rows(scratch.data(), buf->data(), d * 2, p.shift_dst.data(), p.shift_dst.data(),
                            int64_t(p.shift_dst.size()));
    }
    store.quantize_old(0);
    for (int64_t g = 0; g < n_kv; ++g) {
      const host_head& h = before[size_t(g)];
      const int64_t kb = p.blocks[size_t(g)];
      host_head got;
      got.d = d, got.n8 = h.n8 + kb * B, got.n16 = h.n16 - kb * B, got.nb = h.nb + kb, got.pos = h.pos;
      got.kq.assign(kq.begin() + g * p.c8 * d, kq.begin() + (g * p.c8 + got.n8) * d);
      got.vq.assign(vq.begin() + g * p.c8 * d, vq.begin() + (g * p.c8 + got.n8) * d);
      got.block.assign(block.begin() + g * p.c8, block.begin() + g * p.c8 + got.n8);
      got.ks.assign(ks.begin() + g * p.cb * d, ks.begin() + (g * p.cb + got.nb) * d);
      got.vs.assign(vs.begin() + g * p.cb * d, vs.begin() + (g * p.cb + got.nb) * d);
      got.k16.assign(k16.begin() + g * c16 * d, k16.begin() + (g * c16 + got.n16) * d);
      got.v16.assign(v16.begin() + g * c16 * d, v16.begin() + (g * c16 + got.n16) * d);
      expect_same_head(got, copy_head(store, 0, g), "round " + std::to_string(round) + " head " + std::to_string(g));
    }
    c8 = p.c8, cb = p.cb;
    if (round % 3 == 2) {  // evict, differently per head
      std::vector<std::vector<int32_t>> keep;
      for (int64_t g = 0; g < n_kv; ++g) keep.push_back(random_keep(rng, store.n_kept(0, g), 0.5 + 0.15 * double(g)));
      store.compact(0, keep);
    }
  }
  EXPECT_GE(max_blocks, 3);  // some calls froze several blocks at once
}

// ======================= CPU: RoPE with scaling and per-head RMSNorm =======================

// cu::rope's arithmetic (cu::rope_pair, the very code the kernel runs) against the engine's
// reference rotations with Llama 3's rope_freqs divisors and linear scaling, adjacent and
// NEOX, partial rotation, positions up to 131000.
TEST(CudaRef, RopeEmulationWithScalingMatchesTheReference) {
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> u(-1.f, 1.f), uf(1.f, 8.f);
  const int64_t n = 5, heads = 3, hd = 64, ld = heads * hd + 16;
  std::vector<float> ff(size_t(hd / 2));
  for (float& f : ff) f = uf(rng);
  const std::vector<int32_t> pos = {0, 3, 17, 4095, 131000};
  for (bool neox : {false, true})
    for (int64_t rope_dims : {int64_t(64), int64_t(32)})
      for (int scaled = 0; scaled < 3; ++scaled) {  // none, linear, linear + factors
        const float fs = scaled ? 0.25f : 1.f;
        const float* f = scaled == 2 ? ff.data() : nullptr;
        std::vector<float> x(size_t(n * ld));
        for (float& v : x) v = u(rng);
        std::vector<float> got = x, want = x;
        cuda_ref::rope_emulated(got.data(), ld, n, heads, hd, rope_dims, pos.data(), 500000.f, fs, f, neox);
        cuda_ref::rope(want.data(), ld, n, heads, hd, rope_dims, pos.data(), 500000.f, fs, f, neox);
        expect_close(got, want, 1e-6f, 1e-6f,
                     std::string(neox ? "neox" : "adjacent") + " dims " + std::to_string(rope_dims) + " scaled " +
                         std::to_string(scaled));
        // The scaling changes the result (a kernel that ignored it would fail above).
        if (scaled) {
          std::vector<float> plain = x;
          cuda_ref::rope(plain.data(), ld, n, heads, hd, rope_dims, pos.data(), 500000.f, 1.f, nullptr, neox);
          float d = 0;
          for (size_t e = 0; e < plain.size(); ++e) d = std::max(d, std::fabs(plain[e] - want[e]));
          EXPECT_GT(d, 0.1f);
        }
      }
}

// cu::rmsnorm_heads' arithmetic (32 lanes, butterfly, cu::head_norm_inv) against ref::rmsnorm
// on each head, head widths below, at and above a warp's multiple; other bytes untouched.
TEST(CudaRef, RmsnormHeadsEmulationMatchesRmsnormPerHead) {
  std::mt19937 rng(32);
  std::uniform_real_distribution<float> u(-3.f, 3.f), uw(0.5f, 1.5f);
  for (int64_t hd : {int64_t(8), int64_t(64), int64_t(72), int64_t(128), int64_t(256)}) {
    const int64_t n = 4, heads = 5, ld = heads * hd + 24;
    std::vector<float> x(static_cast<size_t>(n * ld)), w(static_cast<size_t>(hd));
    for (float& v : x) v = u(rng);
    for (float& v : w) v = uw(rng);
    std::vector<float> got = x, want = x;
    cuda_ref::rmsnorm_heads_emulated(got.data(), ld, n, heads, hd, w.data(), 1e-6f);
    cuda_ref::rmsnorm_heads(want.data(), ld, n, heads, hd, w.data(), 1e-6f);
    expect_close(got, want, 2e-6f, 2e-6f, "head_dim " + std::to_string(hd));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t c = heads * hd; c < ld; ++c) EXPECT_EQ(got[size_t(i * ld + c)], x[size_t(i * ld + c)]);
  }
}

// What the CUDA backend loads: qwen3, phi3, a head width other than dim / n_heads and RoPE
// scaling (linear, Llama 3's rope_freqs) are accepted; gemma2/gemma3 are refused in one line.
TEST(CudaModel, ConfigChecksAcceptQwen3HeadWidthAndRopeScaling) {
  random_model_spec s;
  s.arch = model_arch::qwen3, s.dim = 192, s.n_layers = 2, s.n_heads = 4, s.n_kv_heads = 2, s.ffn_dim = 256;
  s.n_vocab = 64, s.with_tokenizer = false, s.head_dim = 64, s.rope_freqs = true, s.rope_scale_linear = 8.f;
  const model_config c = random_model_config(s);
  ASSERT_NE(c.q_dim(), c.dim);
  ASSERT_TRUE(c.rope_scaled());
  EXPECT_NO_THROW(check_cuda_model_config(c));
  model_config phi = c;
  phi.arch = model_arch::phi3;
  EXPECT_NO_THROW(check_cuda_model_config(phi));
  for (model_arch a : {model_arch::gemma2, model_arch::gemma3}) {
    model_config g = c;
    g.arch = a;
    try {
      check_cuda_model_config(g);
      ADD_FAILURE() << model_arch_name(a) << " accepted";
    } catch (const engine_error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(model_arch_name(a)), std::string::npos) << m;
      EXPECT_NE(m.find("use --backend cpu"), std::string::npos) << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
  }
  model_config bad = c;
  bad.rope_freq_factors.pop_back();
  EXPECT_THROW(check_cuda_model_config(bad), engine_error);
}

// ======================= CPU: quantized blocks decoded as the device decodes them =======================

// cu::dequant8 (the code cu::qmatvec and cu::dequant_rows_f16 run on the device) equals
// dequantize_row_ref bit for bit on every element of random blocks of each type.
TEST(CudaQuant, Dequant8MatchesTheReferenceBitForBit) {
  std::mt19937 rng(41);
  for (ggml_type t : {ggml_type::q8_0, ggml_type::q4_0, ggml_type::q2_k, ggml_type::q3_k, ggml_type::q4_k,
                      ggml_type::q5_k, ggml_type::q6_k}) {
    SCOPED_TRACE(ggml_traits(t).name);
    ASSERT_TRUE(cu::quant_on_device(t));
    const int64_t cols = 1024, n_blocks = cols / ggml_traits(t).block_elems, rows = 6;
    const std::vector<uint8_t> w = random_blocks(t, n_blocks * rows, rng);
    const size_t row_bytes = ggml_row_bytes(t, cols);
    std::vector<float> want(static_cast<size_t>(cols)), got(want.size());
    int64_t mismatches = 0, nonzero = 0;
    for (int64_t r = 0; r < rows; ++r) {
      dequantize_row_ref(t, w.data() + size_t(r) * row_bytes, want.data(), cols);
      for (int64_t e0 = 0; e0 < cols; e0 += 8) cu::dequant8(t, w.data() + size_t(r) * row_bytes, e0, &got[size_t(e0)]);
      for (int64_t c = 0; c < cols; ++c) {
        uint32_t a, b;
        std::memcpy(&a, &got[size_t(c)], 4);
        std::memcpy(&b, &want[size_t(c)], 4);
        mismatches += a != b;
        nonzero += want[size_t(c)] != 0.f;
      }
    }
    EXPECT_EQ(mismatches, 0);
    EXPECT_GT(nonzero, rows * cols / 2);
  }
  EXPECT_FALSE(cu::quant_on_device(ggml_type::f16));
  EXPECT_FALSE(cu::quant_on_device(ggml_type::bf16));
}

// cu::qmatvec's arithmetic on the CPU (32 lanes of cu::qmatvec_lane, the butterfly, beta)
// against the dequantised rows dotted in double with the same F16 activations, 1..8 tokens,
// beta 0 and 1, every type; the F16 tiles of cu::dequant_rows_f16 bit for bit against
// fp32_to_fp16 of dequantize_row_ref.
TEST(CudaQuant, MatvecAndTileEmulationsMatchTheDequantisedRows) {
  std::mt19937 rng(43);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (ggml_type t : {ggml_type::q8_0, ggml_type::q4_0, ggml_type::q2_k, ggml_type::q3_k, ggml_type::q4_k,
                      ggml_type::q5_k, ggml_type::q6_k}) {
    SCOPED_TRACE(ggml_traits(t).name);
    const int64_t rows = 37, cols = 768, ldx = cols + 8, ldy = rows + 3;
    const std::vector<uint8_t> w = scaled_random_blocks(t, rows, cols, 0.05f, rng);
    for (int64_t n : {int64_t(1), int64_t(3), int64_t(8)})
      for (float beta : {0.f, 1.f}) {
        std::vector<uint16_t> xh(static_cast<size_t>(n * ldx));
        for (auto& h : xh) h = fp32_to_fp16(u(rng));
        std::vector<float> y0(static_cast<size_t>(n * ldy));
        for (auto& v : y0) v = u(rng);
        std::vector<float> got = y0;
        cuda_ref::qmatvec_emulated(t, w.data(), rows, cols, xh.data(), ldx, n, got.data(), ldy, beta);
        EXPECT_LT(qmatvec_worst_error(t, w, rows, cols, xh, ldx, n, y0, got, ldy, beta), 1e-5)
            << "n=" << n << " beta=" << beta;
        for (int64_t i = 0; i < n; ++i)
          for (int64_t r = rows; r < ldy; ++r) EXPECT_EQ(got[size_t(i * ldy + r)], y0[size_t(i * ldy + r)]);
      }
    const int64_t r0 = 5, nr = 20;
    std::vector<uint16_t> tile(static_cast<size_t>(nr * cols));
    cuda_ref::dequant_rows_f16(t, w.data(), r0, nr, cols, tile.data());
    std::vector<float> row(static_cast<size_t>(cols));
    int64_t mismatches = 0;
    for (int64_t r = 0; r < nr; ++r) {
      dequantize_row_ref(t, w.data() + size_t(r0 + r) * ggml_row_bytes(t, cols), row.data(), cols);
      for (int64_t c = 0; c < cols; ++c) mismatches += tile[size_t(r * cols + c)] != fp32_to_fp16(row[size_t(c)]);
    }
    EXPECT_EQ(mismatches, 0);
  }
}

// Which matrices stay quantized on the device and how stacked tensors split into parts.
TEST(CudaModel, MatrixPlanKeepsQuantizedTypesAndSplitsMixedStacks) {
  const auto view = [](ggml_type t, int64_t rows) {
    tensor_view v;
    v.type = t, v.n_dims = 2, v.ne[0] = 256, v.ne[1] = rows;
    return v;
  };
  const tensor_view q = view(ggml_type::q4_k, 256), k = view(ggml_type::q4_k, 64), v6 = view(ggml_type::q6_k, 64),
                    v4 = view(ggml_type::q4_k, 64), f = view(ggml_type::f32, 64), h = view(ggml_type::f16, 64);
  auto same = plan_cuda_matrix({&q, &k, &v4}, true);  // one part of the file's bytes
  ASSERT_EQ(same.size(), 1u);
  EXPECT_EQ(same[0].type, ggml_type::q4_k);
  EXPECT_EQ(same[0].rows, 384);
  EXPECT_EQ(same[0].last, 3u);
  auto mixed = plan_cuda_matrix({&q, &k, &v6}, true);  // Q4_K_M: v in Q6_K
  ASSERT_EQ(mixed.size(), 3u);
  EXPECT_EQ(mixed[2].type, ggml_type::q6_k);
  EXPECT_EQ(mixed[1].rows, 64);
  EXPECT_EQ(mixed[2].first, 2u);
  auto with_f32 = plan_cuda_matrix({&q, &f}, true);  // the F32 tensor widened to F16
  ASSERT_EQ(with_f32.size(), 2u);
  EXPECT_EQ(with_f32[0].type, ggml_type::q4_k);
  EXPECT_EQ(with_f32[1].type, ggml_type::f16);
  for (const auto& p : plan_cuda_matrix({&q, &k, &v6}, false)) EXPECT_EQ(p.type, ggml_type::f16);
  EXPECT_EQ(plan_cuda_matrix({&q, &k, &v6}, false).size(), 1u);
  auto plain = plan_cuda_matrix({&f, &h}, true);  // nothing quantized: one F16 part
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].type, ggml_type::f16);
  EXPECT_EQ(plain[0].rows, 128);
}
