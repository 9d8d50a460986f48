// test-cuda.cpp: the CUDA backend (engine/cuda/), label `gpu`.
// CPU part (runs everywhere the CUDA build compiles, no GPU needed):
//   - error macros and the allocator's accounting;
//   - launch-configuration math (split-K plan, causal split ranges, shared-memory budgets);
//   - the span attention's algorithm emulated on the CPU (tiles, online softmax, split
//     merge, mass pass) against the engine's ref::kv_attend, over FP16/INT8/paged spans,
//     GQA, chunks, batches;
//   - the references of the new kernels against the engine's own code (INT8 blocks vs
//     kv_store, page digests vs kv_host_pool).
// GPU part (GTEST_SKIP without a device): every kernel against its CPU reference within a
// stated tolerance, cuBLAS GEMM, and the CUDA forward's logits against the CPU forward on
// random-weight llama, qwen2 and gpt2 models (single sequence, chunked prefill, batched
// decode; gpt2's batch and position limit in test-cuda-gpt2.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "cpu-kernels.h"
#include "cuda-check.h"
#include "cuda-forward.h"
#include "cuda-gemm.h"
#include "cuda-kernels.h"
#include "cuda-kv-store.h"
#include "cuda-launch.h"
#include "cuda-memory.h"
#include "cuda-ref.h"
#include "ggml-types.h"
#include "kv/kv-attention-cpu.h"
#include "kv/kv-host-pool.h"
#include "kv/kv-store.h"
#include "model-forward.h"
#include "model-random.h"
#include "sampler.h"
#include "session.h"
#include "kv-span-fixture.h"
#include "test-util.h"

using namespace kvarena;
using namespace kvarena::test;

namespace {

bool have_gpu() {
  static const int n = cuda_device_count();
  return n > 0;
}

#define REQUIRE_GPU()                                                                            \
  do {                                                                                           \
    if (!have_gpu())                                                                             \
      GTEST_SKIP() << "no CUDA device (cudaGetDeviceCount failed or returned 0); the GPU "       \
                      "agreement tests run on a GPU machine (scripts/gpu-check.sh)";             \
  } while (0)

void expect_close(const std::vector<float>& got, const std::vector<float>& want, float atol, float rtol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t bad = 0, worst = 0;
  double worst_err = -1;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(double(got[i]) - double(want[i]));
    const double tol = atol + rtol * std::fabs(double(want[i]));
    if (!(err <= tol)) ++bad;
    if (!(err <= worst_err) || std::isnan(err)) worst_err = err, worst = i;
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << got.size() << " elements off; worst at " << worst
                     << ": got " << got[worst] << " want " << want[worst] << " (atol " << atol << ", rtol "
                     << rtol << ")";
}

// ---- device helpers (GPU tests only) ----

struct gpu_ctx {
  cuda_allocator alloc;
  cudaStream_t st = nullptr;
  gpu_ctx() { CUDA_CHECK(cudaStreamCreate(&st)); }
  ~gpu_ctx() {
    (void)cudaStreamSynchronize(st);
    (void)cudaStreamDestroy(st);
  }
  template <class T>
  cuda_buffer<T> up(const std::vector<T>& v) {
    cuda_buffer<T> b(alloc, std::max<size_t>(v.size(), 1), "test");
    if (!v.empty()) CUDA_CHECK(cudaMemcpy(b.data(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    return b;
  }
  template <class T>
  std::vector<T> down(const cuda_buffer<T>& b, size_t n) {
    CUDA_CHECK(cudaStreamSynchronize(st));
    std::vector<T> v(n);
    if (n) CUDA_CHECK(cudaMemcpy(v.data(), b.data(), n * sizeof(T), cudaMemcpyDeviceToHost));
    return v;
  }
};

// ---- synthetic KV spans (kv-span-fixture.h) ----

// seq -> head -> spans; head (b, g) has N_b - 13*g tokens.
struct attn_case {
  int64_t n_seq = 1, n_kv = 2, group = 4, d = 64, n_q = 1;
  std::vector<int64_t> n_tokens;  // (n_seq,)
  layout lay = layout::fp16;
  std::vector<std::vector<std::vector<span_data>>> data;  // (n_seq, n_kv, spans)
  std::vector<float> q;                                   // (n_seq*n_q, n_heads*d)

  int64_t n_heads() const { return n_kv * group; }
  void build(uint32_t seed) {
    std::mt19937 rng(seed);
    data.assign(size_t(n_seq), {});
    for (int64_t b = 0; b < n_seq; ++b) {
      data[size_t(b)].resize(size_t(n_kv));
      for (int64_t g = 0; g < n_kv; ++g) {
        const int64_t N = std::max<int64_t>(n_q, n_tokens[size_t(b)] - 13 * g);
        for (auto [n, i8] : span_lengths(rng, lay, N)) data[size_t(b)][size_t(g)].push_back(make_span(rng, n, d, i8));
      }
    }
    q = uniform(rng, n_seq * n_q * n_heads() * d, -1.f, 1.f);
  }
  // Host-pointer table (for the references).
  cu::kv_span_table host_table(bool with_mass) {
    cu::kv_span_table t;
    for (auto& seq : data)
      for (auto& head : seq) {
        t.begin_head();
        for (span_data& s : head) t.add_span(dev_span(s, with_mass));
      }
    return t;
  }
  static cu::kv_span_dev dev_span(span_data& s, bool with_mass) {
    cu::kv_span_dev sp;
    sp.n = s.n;
    if (s.int8) {
      sp.kq = s.kq.data(), sp.vq = s.vq.data(), sp.block = s.block.data();
      sp.k_scale = s.ks.data(), sp.v_scale = s.vs.data();
    } else {
      sp.k16 = s.k16.data(), sp.v16 = s.v16.data();
    }
    sp.mass = with_mass ? s.mass.data() : nullptr;
    return sp;
  }
  std::vector<float> masses() const {
    std::vector<float> m;
    for (const auto& seq : data)
      for (const auto& h : seq)
        for (const span_data& s : h) m.insert(m.end(), s.mass.begin(), s.mass.end());
    return m;
  }
  void reset_mass() {
    for (auto& seq : data)
      for (auto& h : seq)
        for (span_data& s : h) s.mass.assign(size_t(s.n), 0.25f);
  }
  // ref::kv_attend per sequence: out (n_seq*n_q, n_heads*d); masses added.
  std::vector<float> reference(bool with_mass) {
    const int64_t H = n_heads();
    std::vector<float> out(size_t(n_seq * n_q * H * d));
    cu::kv_span_table t = host_table(with_mass);
    for (int64_t b = 0; b < n_seq; ++b) {
      std::vector<kv_attn_head> heads = cuda_ref::attn_heads(t, b, n_kv);
      ref::kv_attend(heads, d, q.data() + b * n_q * H * d, H * d, n_q, H, scale(), out.data() + b * n_q * H * d,
                     H * d);
    }
    return out;
  }
  float scale() const { return 1.f / std::sqrt(float(d)); }
  cu::span_attention_args args(float* out) const {
    cu::span_attention_args a;
    a.n_seq = n_seq, a.n_kv = n_kv, a.n_heads = n_heads(), a.head_dim = d, a.n_q = n_q;
    a.q = q.data(), a.ldq = n_heads() * d, a.out = out, a.ldo = n_heads() * d, a.scale = scale();
    return a;
  }
};

std::string case_name(const attn_case& c) {
  return "seq=" + std::to_string(c.n_seq) + " kv=" + std::to_string(c.n_kv) + " group=" + std::to_string(c.group) +
         " d=" + std::to_string(c.d) + " n_q=" + std::to_string(c.n_q) + " N=" + std::to_string(c.n_tokens[0]) +
         " layout=" + layout_name(c.lay);
}

std::vector<attn_case> attention_cases() {
  std::vector<attn_case> cs;
  auto add = [&](int64_t n_seq, int64_t n_kv, int64_t group, int64_t d, int64_t n_q, std::vector<int64_t> n,
                 layout l) {
    attn_case c;
    c.n_seq = n_seq, c.n_kv = n_kv, c.group = group, c.d = d, c.n_q = n_q, c.n_tokens = std::move(n), c.lay = l;
    cs.push_back(std::move(c));
  };
  add(1, 2, 4, 64, 1, {1}, layout::fp16);                 // a single token
  add(1, 2, 4, 64, 1, {100}, layout::fp16);               // decode, one partial tile
  add(1, 1, 8, 128, 1, {777}, layout::int8_fp16);         // INT8 + FP16 segments
  add(1, 2, 4, 128, 1, {1500}, layout::pages);            // FreeKV page slots + window
  add(1, 4, 1, 64, 5, {300}, layout::int8_fp16);          // MHA, a chunk of 5 queries
  add(3, 2, 2, 64, 1, {40, 333, 1030}, layout::fp16);     // a batch of unequal sequences
  add(2, 2, 4, 64, 3, {97, 500}, layout::pages);          // batch of chunks over pages
  return cs;
}

}  // namespace

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

// A kv_store head as plain host arrays (what the device holds), and the plan applied to it.
struct host_head {
  int64_t n8 = 0, n16 = 0, nb = 0, d = 0;
  std::vector<int8_t> kq, vq;
  std::vector<int32_t> block, pos;
  std::vector<float> ks, vs;
  std::vector<uint16_t> k16, v16;
};

host_head copy_head(kv_store& s, int64_t layer, int64_t g) {
  const kv_head_view v = s.head_view(layer, g);
  host_head h;
  h.d = v.head_dim, h.n8 = v.n_int8, h.n16 = v.n_fp16_all();
  for (int64_t t = 0; t < v.n_int8; ++t) h.nb = std::max<int64_t>(h.nb, v.block[t] + 1);
  h.kq.assign(v.k_q, v.k_q + h.n8 * h.d), h.vq.assign(v.v_q, v.v_q + h.n8 * h.d);
  h.block.assign(v.block, v.block + h.n8), h.pos.assign(v.pos, v.pos + h.n8 + h.n16);
  h.ks.assign(v.k_scale, v.k_scale + h.nb * h.d), h.vs.assign(v.v_scale, v.v_scale + h.nb * h.d);
  h.k16.assign(v.k16, v.k16 + v.n_fp16 * h.d), h.v16.assign(v.v16, v.v16 + v.n_fp16 * h.d);
  h.k16.insert(h.k16.end(), v.k16b, v.k16b + v.n_fp16b * h.d);  // the ring's wrapped part
  h.v16.insert(h.v16.end(), v.v16b, v.v16b + v.n_fp16b * h.d);
  return h;
}

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

void expect_same_head(const host_head& a, const host_head& b, const std::string& what) {
  EXPECT_EQ(a.n8, b.n8) << what;
  EXPECT_EQ(a.n16, b.n16) << what;
  EXPECT_EQ(a.nb, b.nb) << what;
  EXPECT_EQ(a.pos, b.pos) << what;
  EXPECT_EQ(a.block, b.block) << what;
  EXPECT_EQ(a.kq, b.kq) << what;
  EXPECT_EQ(a.vq, b.vq) << what;
  EXPECT_EQ(a.ks, b.ks) << what;
  EXPECT_EQ(a.vs, b.vs) << what;
  EXPECT_EQ(a.k16, b.k16) << what;
  EXPECT_EQ(a.v16, b.v16) << what;
}

// Random ascending subset of [0, n) of about `frac` of it.
std::vector<int32_t> random_keep(std::mt19937& rng, int64_t n, double frac) {
  std::vector<int32_t> k;
  std::bernoulli_distribution keep(frac);
  for (int64_t i = 0; i < n; ++i)
    if (keep(rng)) k.push_back(int32_t(i));
  return k;
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

// ======================= GPU: kernels vs references =======================

namespace {

// Rows of random F32 data, uploaded.
struct rows_case {
  int64_t n, dim;
  std::vector<float> x;
};

}  // namespace

TEST(CudaKernels, RmsnormAndLayernorm) {
  REQUIRE_GPU();
  gpu_ctx g;
  std::mt19937 rng(1);
  for (int64_t dim : {64, 100, 4096}) {
    const int64_t n = 7;
    const std::vector<float> x = uniform(rng, n * dim, -3.f, 3.f), w = uniform(rng, dim, 0.5f, 1.5f),
                             b = uniform(rng, dim, -0.5f, 0.5f);
    auto dx = g.up(x), dw = g.up(w), db = g.up(b);
    cuda_buffer<float> dy(g.alloc, size_t(n * dim), "y");
    std::vector<float> want(size_t(n * dim));
    cu::rmsnorm(dx.data(), dw.data(), dy.data(), n, dim, 1e-5f, g.st);
    for (int64_t i = 0; i < n; ++i) ref::rmsnorm(&x[i * dim], w.data(), &want[i * dim], dim, 1e-5f);
    expect_close(g.down(dy, want.size()), want, 1e-5f, 1e-5f, "rmsnorm dim " + std::to_string(dim));
    cu::layernorm(dx.data(), dw.data(), db.data(), dy.data(), n, dim, 1e-5f, g.st);
    for (int64_t i = 0; i < n; ++i) ref::layernorm(&x[i * dim], w.data(), b.data(), &want[i * dim], dim, 1e-5f);
    expect_close(g.down(dy, want.size()), want, 2e-5f, 2e-5f, "layernorm dim " + std::to_string(dim));
  }
}

TEST(CudaKernels, RopeAdjacentAndNeox) {
  REQUIRE_GPU();
  gpu_ctx g;
  std::mt19937 rng(2);
  const int64_t n = 5, heads = 4, hd = 64, ld = heads * hd + 32;  // rows with a gap
  for (bool neox : {false, true})
    for (int64_t rope_dims : {int64_t(64), int64_t(32)}) {
      const std::vector<float> x = uniform(rng, n * ld, -1.f, 1.f);
      const std::vector<int32_t> pos = {0, 1, 17, 4095, 131000};
      auto dx = g.up(x);
      auto dp = g.up(pos);
      cu::rope(dx.data(), ld, n, heads, hd, rope_dims, dp.data(), 500000.f, neox, g.st);
      std::vector<float> want = x;
      cuda_ref::rope(want.data(), ld, n, heads, hd, rope_dims, pos.data(), 500000.f, neox);
      expect_close(g.down(dx, x.size()), want, 2e-6f, 2e-6f,
                   std::string(neox ? "neox" : "adjacent") + " rope_dims " + std::to_string(rope_dims));
    }
}

TEST(CudaKernels, ActivationsAddBiasEmbedConvert) {
  REQUIRE_GPU();
  gpu_ctx g;
  std::mt19937 rng(3);
  const int64_t n = 3, w = 1000, ld = 2 * w;
  // silu_mul on the gate half of (n, 2w) rows, up in the other half
  const std::vector<float> gu = uniform(rng, n * ld, -6.f, 6.f);
  auto dgu = g.up(gu);
  cu::silu_mul(dgu.data(), ld, dgu.data() + w, ld, n, w, g.st);
  std::vector<float> got = g.down(dgu, gu.size()), want_g, got_g;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<float> gate(gu.begin() + i * ld, gu.begin() + i * ld + w);
    ref::silu_mul(gate.data(), &gu[size_t(i * ld + w)], w);
    want_g.insert(want_g.end(), gate.begin(), gate.end());
    got_g.insert(got_g.end(), got.begin() + i * ld, got.begin() + i * ld + w);
  }
  expect_close(got_g, want_g, 1e-6f, 1e-5f, "silu_mul");
  // gelu
  const std::vector<float> x = uniform(rng, 4097, -8.f, 8.f);
  auto dx = g.up(x);
  cu::gelu(dx.data(), int64_t(x.size()), g.st);
  std::vector<float> want = x;
  ref::gelu(want.data(), int64_t(want.size()));
  expect_close(g.down(dx, x.size()), want, 1e-6f, 1e-5f, "gelu");
  // add and add_bias
  const std::vector<float> y = uniform(rng, n * ld, -1.f, 1.f), b = uniform(rng, w, -1.f, 1.f);
  auto dy = g.up(y), dy2 = g.up(y), db = g.up(b);
  cu::add(dy.data(), dy2.data(), n * ld, g.st);
  want = y;
  for (float& v : want) v += v;
  expect_close(g.down(dy, y.size()), want, 0.f, 0.f, "add");
  dy = g.up(y);
  cu::add_bias(dy.data(), ld, db.data(), n, w, g.st);
  want = y;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < w; ++j) want[size_t(i * ld + j)] += b[size_t(j)];
  expect_close(g.down(dy, y.size()), want, 0.f, 0.f, "add_bias");
  // embedding from F16
  const int64_t V = 50, dim = 96;
  const std::vector<uint16_t> table = to_f16(uniform(rng, V * dim, -1.f, 1.f));
  const std::vector<int32_t> toks = {0, 49, 7, 7};
  auto dt = g.up(table);
  auto dk = g.up(toks);
  cuda_buffer<float> de(g.alloc, size_t(4 * dim), "e");
  cu::embed_f16(dt.data(), dim, dk.data(), 4, de.data(), g.st);
  std::vector<float> we(size_t(4 * dim));
  cuda_ref::embed_f16(table.data(), dim, toks.data(), 4, we.data());
  expect_close(g.down(de, we.size()), we, 0.f, 0.f, "embed_f16");
  // F32 -> F16 -> F32 with strides: round to nearest even, exact on the way back
  const std::vector<float> f = uniform(rng, n * ld, -70000.f, 70000.f);
  auto df = g.up(f);
  cuda_buffer<uint16_t> dh(g.alloc, size_t(n * w), "h");
  cu::f32_to_f16(df.data(), ld, dh.data(), w, n, w, g.st);
  const std::vector<uint16_t> h = g.down(dh, size_t(n * w));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < w; ++j)
      ASSERT_EQ(h[size_t(i * w + j)], fp32_to_fp16(f[size_t(i * ld + j)])) << i << "," << j;
  cuda_buffer<float> db2(g.alloc, size_t(n * w), "f");
  cu::f16_to_f32(dh.data(), w, db2.data(), w, n, w, g.st);
  const std::vector<float> back = g.down(db2, size_t(n * w));
  for (size_t i = 0; i < back.size(); ++i) ASSERT_EQ(back[i], fp16_to_fp32(h[i]));
}

TEST(CudaKernels, ArgmaxMatchesGreedyWithTies) {
  REQUIRE_GPU();
  gpu_ctx g;
  std::mt19937 rng(4);
  const int64_t rows = 5, V = 128256;
  std::vector<float> x = uniform(rng, rows * V, -5.f, 5.f);
  x[size_t(1 * V + 77)] = 9.f, x[size_t(1 * V + 100000)] = 9.f;  // a tie: the lower index wins
  for (int64_t j = 0; j < V; ++j) x[size_t(2 * V + j)] = -INFINITY;
  auto dx = g.up(x);
  cuda_buffer<int32_t> out(g.alloc, size_t(rows), "argmax");
  cu::argmax(dx.data(), rows, V, V, out.data(), g.st);
  const std::vector<int32_t> got = g.down(out, size_t(rows));
  for (int64_t r = 0; r < rows; ++r) EXPECT_EQ(got[size_t(r)], argmax(&x[size_t(r * V)], V)) << "row " << r;
}

TEST(CudaKernels, KvWriteQuantizeGather) {
  REQUIRE_GPU();
  gpu_ctx g;
  std::mt19937 rng(5);
  const int64_t n = 40, n_kv = 2, d = 64, cap = 100, tok0 = 17, ld = 3 * n_kv * d;
  const std::vector<float> kv = uniform(rng, n * ld, -2.f, 2.f);
  auto dkv = g.up(kv);
  cuda_buffer<uint16_t> k16(g.alloc, size_t(n_kv * cap * d), "k"), v16(g.alloc, size_t(n_kv * cap * d), "v");
  cu::kv_write_f16(dkv.data(), dkv.data() + n_kv * d, ld, n, n_kv, d, k16.data(), v16.data(), cap * d, tok0, g.st);
  const std::vector<uint16_t> hk = g.down(k16, k16.size()), hv = g.down(v16, v16.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t h = 0; h < n_kv; ++h)
      for (int64_t c = 0; c < d; ++c) {
        ASSERT_EQ(hk[size_t((h * cap + tok0 + i) * d + c)], fp32_to_fp16(kv[size_t(i * ld + h * d + c)]));
        ASSERT_EQ(hv[size_t((h * cap + tok0 + i) * d + c)], fp32_to_fp16(kv[size_t(i * ld + n_kv * d + h * d + c)]));
      }
  // Batched rows: row i to its own buffer and slot.
  const std::vector<int32_t> slots = {3, 0, 99};
  std::vector<cuda_buffer<uint16_t>> bk, bv;
  std::vector<uint16_t*> pk, pv;
  for (int i = 0; i < 3; ++i) {
    bk.emplace_back(g.alloc, size_t(n_kv * cap * d), "bk");
    bv.emplace_back(g.alloc, size_t(n_kv * cap * d), "bv");
    pk.push_back(bk.back().data());
    pv.push_back(bv.back().data());
  }
  auto dpk = g.up(pk), dpv = g.up(pv);
  auto ds = g.up(slots);
  cu::kv_write_f16_rows(dkv.data(), dkv.data() + n_kv * d, ld, 3, n_kv, d, dpk.data(), dpv.data(), ds.data(), cap * d,
                        g.st);
  for (int i = 0; i < 3; ++i) {
    const std::vector<uint16_t> r = g.down(bk[size_t(i)], bk[size_t(i)].size());
    for (int64_t h = 0; h < n_kv; ++h)
      for (int64_t c = 0; c < d; ++c)
        ASSERT_EQ(r[size_t((h * cap + slots[size_t(i)]) * d + c)], fp32_to_fp16(kv[size_t(i * ld + h * d + c)]));
  }
  // INT8 blocks from F16 rows: bit-identical to the CPU (same IEEE operations).
  const int64_t units = 3;
  const std::vector<uint16_t> src = to_f16(uniform(rng, units * 32 * d, -4.f, 4.f));
  auto dsrc = g.up(src);
  cuda_buffer<int8_t> dq(g.alloc, src.size(), "q");
  cuda_buffer<float> dsc(g.alloc, size_t(units * d), "scale");
  cu::kv_quantize_f16(dsrc.data(), 32 * d, units, 32, d, dq.data(), 32 * d, dsc.data(), d, g.st);
  std::vector<int8_t> wq(src.size());
  std::vector<float> ws(size_t(units * d));
  cuda_ref::kv_quantize_f16(src.data(), 32 * d, units, 32, d, wq.data(), 32 * d, ws.data(), d);
  EXPECT_EQ(g.down(dq, wq.size()), wq);
  EXPECT_EQ(g.down(dsc, ws.size()), ws);
  // Gathers of 256-byte, 12-byte and 3-byte rows (the three copy widths), dense or to
  // given destination rows.
  for (int64_t rb : {256, 12, 3})
    for (bool scatter : {false, true}) {
      std::vector<uint8_t> rows(size_t(rb * 20));
      for (auto& b : rows) b = uint8_t(rng());
      const std::vector<int32_t> idx = {0, 2, 3, 9, 19}, didx_h = {7, 1, 0, 3, 4};
      auto drows = g.up(rows);
      auto didx = g.up(idx);
      auto ddst = g.up(didx_h);
      std::vector<uint8_t> want(size_t(rb * 8), 0);
      auto dst = g.up(want);
      cu::gather_rows(drows.data(), dst.data(), rb, didx.data(), scatter ? ddst.data() : nullptr, 5, g.st);
      cuda_ref::gather_rows(rows.data(), want.data(), rb, idx.data(), scatter ? didx_h.data() : nullptr, 5);
      EXPECT_EQ(g.down(dst, want.size()), want) << "row bytes " << rb << (scatter ? ", scattered" : "");
    }
}

TEST(CudaKernels, PageDigestAndScores) {
  REQUIRE_GPU();
  gpu_ctx g;
  std::mt19937 rng(6);
  const int64_t d = 128, n_kv = 8, H = 32, page = 32, n_pages = 70;
  const std::vector<uint16_t> pages = to_f16(uniform(rng, n_pages * n_kv * 2 * page * d, -2.f, 2.f));
  auto dp = g.up(pages);
  cuda_buffer<float> mn(g.alloc, size_t(n_pages * n_kv * d), "mn"), mx(g.alloc, size_t(n_pages * n_kv * d), "mx");
  cu::page_digest(dp.data(), 2 * page * d, n_pages * n_kv, page, d, mn.data(), mx.data(), g.st);
  std::vector<float> wmn(mn.size()), wmx(mx.size());
  cuda_ref::page_digest(pages.data(), 2 * page * d, n_pages * n_kv, page, d, wmn.data(), wmx.data());
  const std::vector<float> gmn = g.down(mn, wmn.size()), gmx = g.down(mx, wmx.size());
  EXPECT_EQ(gmn, wmn);
  EXPECT_EQ(gmx, wmx);
  const std::vector<float> q = uniform(rng, H * d, -1.f, 1.f);
  std::vector<int32_t> cand;
  for (int32_t j = 16; j < 60; ++j) cand.push_back(j);
  auto dq = g.up(q);
  auto dc = g.up(cand);
  const int64_t nc = int64_t(cand.size());
  cuda_buffer<float> bounds(g.alloc, size_t(H * nc), "bounds"), out(g.alloc, size_t(n_kv * nc), "scores");
  const float scale = 1.f / std::sqrt(float(d));
  cu::page_scores(dq.data(), mn.data(), mx.data(), dc.data(), nc, H, n_kv, d, scale, bounds.data(), out.data(), g.st);
  std::vector<float> want(size_t(n_kv * nc));
  cuda_ref::page_scores(q.data(), gmn.data(), gmx.data(), cand.data(), nc, H, n_kv, d, scale, want.data());
  expect_close(g.down(out, want.size()), want, 1e-7f, 1e-4f, "page scores");
}

namespace {

// The case's spans copied to the device (host data kept for the reference).
struct device_spans {
  std::vector<cuda_buffer<uint16_t>> h16;
  std::vector<cuda_buffer<int8_t>> q8;
  std::vector<cuda_buffer<int32_t>> blocks;
  std::vector<cuda_buffer<float>> floats;
  std::vector<std::pair<cuda_buffer<float>*, span_data*>> mass;  // device mass -> host span
  cu::kv_span_table table;

  device_spans(gpu_ctx& g, attn_case& c, bool with_mass) {
    size_t n_spans = 0;
    for (auto& seq : c.data)
      for (auto& h : seq) n_spans += h.size();
    h16.reserve(2 * n_spans), q8.reserve(2 * n_spans), blocks.reserve(n_spans), floats.reserve(3 * n_spans);
    for (auto& seq : c.data)
      for (auto& head : seq) {
        table.begin_head();
        for (span_data& s : head) {
          cu::kv_span_dev sp;
          sp.n = s.n;
          if (s.int8) {
            q8.push_back(g.up(s.kq)), sp.kq = q8.back().data();
            q8.push_back(g.up(s.vq)), sp.vq = q8.back().data();
            blocks.push_back(g.up(s.block)), sp.block = blocks.back().data();
            floats.push_back(g.up(s.ks)), sp.k_scale = floats.back().data();
            floats.push_back(g.up(s.vs)), sp.v_scale = floats.back().data();
          } else {
            h16.push_back(g.up(s.k16)), sp.k16 = h16.back().data();
            h16.push_back(g.up(s.v16)), sp.v16 = h16.back().data();
          }
          if (with_mass) {
            floats.push_back(g.up(s.mass));
            sp.mass = floats.back().data();
            mass.push_back({&floats.back(), &s});
          }
          table.add_span(sp);
        }
      }
  }
  // Device masses copied back into the host spans.
  void fetch_mass(gpu_ctx& g) {
    for (auto& [d, s] : mass) s->mass = g.down(*d, size_t(s->n));
  }
};

}  // namespace

TEST(CudaKernels, SpanAttentionMatchesKvAttend) {
  REQUIRE_GPU();
  gpu_ctx g;
  cu::attention_scratch scratch;
  for (attn_case c : attention_cases()) {
    c.build(21);
    SCOPED_TRACE(case_name(c));
    const std::vector<float> want = c.reference(true);
    const std::vector<float> want_mass = c.masses();
    for (int64_t forced : {0, 1, 5}) {
      c.reset_mass();
      device_spans ds(g, c, true);
      ds.table.upload(g.alloc, g.st);
      auto dq = g.up(c.q);
      cuda_buffer<float> dout(g.alloc, want.size(), "out");
      cu::span_attention_args a = c.args(dout.data());
      a.q = dq.data();
      a.heads = ds.table.d_heads(), a.spans = ds.table.d_spans();
      a.max_tokens = ds.table.max_tokens();
      a.mass = true;
      a.force_splits = forced;
      cu::attend_spans(a, scratch, g.alloc, g.st);
      // Tolerance: F32 sums in another order than the double reference; values are O(1).
      expect_close(g.down(dout, want.size()), want, 1e-4f, 1e-3f, "output, forced splits " + std::to_string(forced));
      ds.fetch_mass(g);
      expect_close(c.masses(), want_mass, 1e-5f, 1e-3f, "mass, forced splits " + std::to_string(forced));
    }
  }
}

TEST(CudaKernels, SpanAttentionLongContextSplitK) {
  REQUIRE_GPU();
  gpu_ctx g;
  cu::attention_scratch scratch;
  attn_case c;
  c.n_seq = 1, c.n_kv = 8, c.group = 4, c.d = 128, c.n_q = 1, c.n_tokens = {8192}, c.lay = layout::int8_fp16;
  c.build(99);
  const std::vector<float> want = c.reference(false);
  device_spans ds(g, c, false);
  ds.table.upload(g.alloc, g.st);
  auto dq = g.up(c.q);
  cuda_buffer<float> dout(g.alloc, want.size(), "out");
  cu::span_attention_args a = c.args(dout.data());
  a.q = dq.data(), a.heads = ds.table.d_heads(), a.spans = ds.table.d_spans(), a.max_tokens = ds.table.max_tokens();
  cu::attend_spans(a, scratch, g.alloc, g.st);
  expect_close(g.down(dout, want.size()), want, 1e-4f, 1e-3f, "8K tokens, natural split plan");
}

TEST(CudaKernels, PrefillAttentionMatchesKvAttend) {
  REQUIRE_GPU();
  gpu_ctx g;
  std::mt19937 rng(8);
  struct shape {
    int64_t n_kv, group, d, N, n_q;
  };
  for (const shape s : {shape{2, 4, 64, 100, 100}, shape{2, 4, 128, 300, 57}, shape{4, 1, 64, 65, 65},
                        shape{1, 8, 128, 1000, 333}, shape{2, 2, 256, 200, 200}}) {
    SCOPED_TRACE("kv=" + std::to_string(s.n_kv) + " group=" + std::to_string(s.group) + " d=" + std::to_string(s.d) +
                 " N=" + std::to_string(s.N) + " n_q=" + std::to_string(s.n_q));
    const int64_t H = s.n_kv * s.group, cap = s.N + 9, ldq = H * s.d + 8;
    const std::vector<uint16_t> k = to_f16(uniform(rng, s.n_kv * cap * s.d, -2.5f, 2.5f)),
                                v = to_f16(uniform(rng, s.n_kv * cap * s.d, -1.f, 1.f));
    const std::vector<float> q = uniform(rng, s.n_q * ldq, -1.f, 1.f);
    auto dk = g.up(k), dv = g.up(v);
    auto dq = g.up(q);
    cuda_buffer<float> dout(g.alloc, size_t(s.n_q * H * s.d), "out");
    const float scale = 1.f / std::sqrt(float(s.d));
    cu::attend_prefill(dk.data(), dv.data(), cap * s.d, s.N, s.n_kv, H, s.d, dq.data(), ldq, s.n_q, scale, dout.data(),
                       H * s.d, g.st);
    std::vector<kv_attn_head> heads(size_t(s.n_kv));
    for (int64_t h = 0; h < s.n_kv; ++h) {
      kv_span sp;
      sp.n = s.N;
      sp.k16 = &k[size_t(h * cap * s.d)];
      sp.v16 = &v[size_t(h * cap * s.d)];
      heads[size_t(h)].spans.push_back(sp);
    }
    std::vector<float> want(size_t(s.n_q * H * s.d));
    ref::kv_attend(heads, s.d, q.data(), ldq, s.n_q, H, scale, want.data(), H * s.d);
    expect_close(g.down(dout, want.size()), want, 1e-4f, 1e-3f, "prefill");
  }
}

TEST(CudaKernels, GemmF16MatchesReferenceMatmul) {
  REQUIRE_GPU();
  gpu_ctx g;
  cuda_gemm gemm(g.st);
  std::mt19937 rng(9);
  for (int64_t n : {1, 3, 64}) {
    const int64_t in = 256, out = 200, ldy = out + 5;
    const std::vector<uint16_t> w = to_f16(uniform(rng, out * in, -0.1f, 0.1f));
    const std::vector<float> x = uniform(rng, n * in, -1.f, 1.f);
    std::vector<uint16_t> xh = to_f16(x);
    auto dw = g.up(w);
    auto dx = g.up(xh);
    const std::vector<float> y0 = uniform(rng, n * ldy, -1.f, 1.f);
    auto dy = g.up(y0);
    gemm.matmul_f16(dw.data(), out, in, dx.data(), in, n, dy.data(), ldy, 1.f);  // y += W x
    // Reference: ref::matmul on the F16 weights with the F16-rounded activations.
    tensor_view tv;
    tv.type = ggml_type::f16, tv.n_dims = 2, tv.ne[0] = in, tv.ne[1] = out;
    tv.data = reinterpret_cast<const uint8_t*>(w.data()), tv.nbytes = w.size() * 2;
    std::vector<float> xr(xh.size()), yr(size_t(n * out));
    for (size_t i = 0; i < xh.size(); ++i) xr[i] = fp16_to_fp32(xh[i]);
    ref::matmul(tv, xr.data(), n, yr.data());
    std::vector<float> want = y0;
    for (int64_t t = 0; t < n; ++t)
      for (int64_t o = 0; o < out; ++o) want[size_t(t * ldy + o)] += yr[size_t(t * out + o)];
    expect_close(g.down(dy, want.size()), want, 1e-4f, 1e-4f, "gemm n=" + std::to_string(n));
  }
}

TEST(CudaMemory, AllocatorCountsDeviceAllocations) {
  REQUIRE_GPU();
  cuda_allocator a;
  {
    cuda_buffer<float> b1(a, 1 << 20, "b1");
    cuda_buffer<uint16_t> b2(a, 1 << 19, "b2");
    EXPECT_EQ(a.live_bytes(), size_t(4 << 20) + size_t(1 << 20));
    a.snapshot();
    EXPECT_GE(a.peak_device_bytes(), size_t(5 << 20));
  }
  EXPECT_EQ(a.live_bytes(), 0u);
  EXPECT_EQ(a.peak_bytes(), size_t(5 << 20));
  EXPECT_THROW(a.alloc(size_t(1) << 50, "an impossible buffer"), engine_error);
}

// ======================= GPU: the forward pass =======================

namespace {

struct model_case {
  const char* name;
  random_model_spec spec;
};

random_model_spec spec_of(model_arch a, int64_t dim, int64_t heads, int64_t kv_heads, int64_t ffn, ggml_type t,
                          bool tied, uint64_t seed) {
  random_model_spec s;
  s.arch = a, s.dim = dim, s.n_layers = 3, s.n_heads = heads, s.n_kv_heads = kv_heads, s.ffn_dim = ffn;
  s.n_vocab = 512, s.n_ctx = 1024, s.type = t, s.seed = seed, s.tie_output = tied, s.output_scale = 3.f;
  s.with_tokenizer = false;
  return s;
}

std::vector<model_case> model_cases() {
  return {{"llama-gqa-f16", spec_of(model_arch::llama, 256, 8, 2, 512, ggml_type::f16, false, 1)},
          {"llama-mha-q8", spec_of(model_arch::llama, 128, 2, 2, 384, ggml_type::q8_0, false, 2)},
          {"qwen2-tied-f32", spec_of(model_arch::qwen2, 192, 6, 2, 320, ggml_type::f32, true, 3)},
          // gpt2: learned positions, LayerNorm with bias, fused QKV with bias, GELU FFN
          {"gpt2-tied-f32", spec_of(model_arch::gpt2, 128, 4, 4, 256, ggml_type::f32, true, 4)}};
}

// CPU logits of every position of `tokens` (plain F32 cache).
std::vector<float> cpu_logits_all(const model& m, const std::vector<int32_t>& tokens) {
  forward_options fo;
  fo.max_chunk = int64_t(tokens.size());
  fo.max_tokens = int64_t(tokens.size());
  forward_state st(m, fo);
  std::vector<float> out(tokens.size() * size_t(m.config.n_vocab));
  forward(m, st, tokens.data(), int64_t(tokens.size()), 0, logits_mode::all, out.data());
  return out;
}

// Logits agree when F16 activations are involved: relative to the logits' spread.
void expect_logits_close(const std::vector<float>& got, const float* want, int64_t V, const std::string& what) {
  float spread = 0;
  for (int64_t i = 0; i < V; ++i) spread = std::max(spread, std::fabs(want[i]));
  std::vector<float> w(want, want + V);
  expect_close(got, w, 2e-2f * std::max(spread, 1.f), 0.f, what);
}

}  // namespace

TEST(CudaForward, LogitsMatchTheCpuForward) {
  REQUIRE_GPU();
  const auto dir = test::temp_dir("models");
  for (const model_case& mc : model_cases()) {
    SCOPED_TRACE(mc.name);
    const std::string path = (dir / (std::string(mc.name) + ".gguf")).string();
    write_random_model(mc.spec, path);
    auto m = load_model(path);
    const int64_t V = m->config.n_vocab;
    std::mt19937 rng(5);
    std::vector<int32_t> toks(70);
    for (auto& t : toks) t = int32_t(rng() % uint32_t(V));
    const std::vector<float> want = cpu_logits_all(*m, toks);

    cuda_engine_options eo;
    eo.max_chunk = 32, eo.max_batch = 4;
    cuda_engine e(*m, eo);
    // Prompt of 40 in chunks of 32 and 8, then 30 decode steps, each compared.
    cuda_session_options so;
    so.n_ctx = 128, so.prefill_chunk = 32;
    cuda_session s(e, so);
    s.append(std::span<const int32_t>(toks.data(), 40));
    expect_logits_close(s.logits(), &want[size_t(39 * V)], V, "after the prompt");
    for (int64_t i = 40; i < 70; ++i) {
      s.append_decode(toks[size_t(i)]);
      expect_logits_close(s.logits(), &want[size_t(i * V)], V, "decode position " + std::to_string(i));
    }
    const memory_stats ms = s.memory();
    EXPECT_GT(ms.weights_bytes, 0u);
    EXPECT_EQ(ms.kv_bytes, size_t(2 * m->config.n_layers * m->config.kv_dim() * 128 * 2));
  }
}

TEST(CudaForward, BatchedDecodeMatchesSingleSequences) {
  REQUIRE_GPU();
  const auto dir = test::temp_dir("models");
  const model_case mc = model_cases()[0];
  const std::string path = (dir / "batch.gguf").string();
  write_random_model(mc.spec, path);
  auto m = load_model(path);
  const int64_t V = m->config.n_vocab, B = 3;
  cuda_engine_options eo;
  eo.max_chunk = 64, eo.max_batch = 4;
  cuda_engine e(*m, eo);
  std::mt19937 rng(6);
  std::vector<std::vector<int32_t>> prompts = {std::vector<int32_t>(10), std::vector<int32_t>(37), std::vector<int32_t>(5)};
  for (auto& p : prompts)
    for (auto& t : p) t = int32_t(rng() % uint32_t(V));
  std::vector<std::unique_ptr<cuda_sequence>> seqs;
  std::vector<cuda_sequence*> ptrs;
  for (int64_t b = 0; b < B; ++b) {
    seqs.push_back(std::make_unique<cuda_sequence>(e, 64));
    e.forward(*seqs.back(), prompts[size_t(b)].data(), int64_t(prompts[size_t(b)].size()), false);
    ptrs.push_back(seqs.back().get());
  }
  const std::vector<int32_t> next = {1, 2, 3};
  e.forward_batch(ptrs, next.data(), true);
  std::vector<std::vector<float>> batched(static_cast<size_t>(B), std::vector<float>(static_cast<size_t>(V)));
  for (int64_t b = 0; b < B; ++b) e.logits(b, batched[size_t(b)].data());
  const std::vector<int32_t> greedy = e.argmax(B);
  for (int64_t b = 0; b < B; ++b) {
    std::vector<int32_t> all = prompts[size_t(b)];
    all.push_back(next[size_t(b)]);
    const std::vector<float> want = cpu_logits_all(*m, all);
    expect_logits_close(batched[size_t(b)], &want[size_t((all.size() - 1) * size_t(V))], V,
                        "batch row " + std::to_string(b));
    EXPECT_EQ(greedy[size_t(b)], argmax(batched[size_t(b)].data(), V));
  }
}

TEST(CudaForward, UserErrorsAreEngineErrors) {
  REQUIRE_GPU();
  const auto dir = test::temp_dir("models");
  const model_case mc = model_cases()[0];
  const std::string path = (dir / "errors.gguf").string();
  write_random_model(mc.spec, path);
  auto m = load_model(path);
  cuda_engine e(*m);
  cuda_session_options so;
  so.n_ctx = 8;
  cuda_session s(e, so);
  const std::vector<int32_t> bad = {1, int32_t(m->config.n_vocab)};
  EXPECT_THROW(s.append(bad), engine_error);
  const std::vector<int32_t> many(9, 1);
  EXPECT_THROW(s.append(many), engine_error);
  EXPECT_THROW(s.logits(), engine_error);  // nothing appended yet
}

// ======================= GPU: the device KV store and policies =======================

TEST(CudaKvStore, MatchesKvStoreByteForByte) {
  REQUIRE_GPU();
  gpu_ctx g;
  const int64_t d = 64, n_kv = 2, L = 2;
  kv_store_config sc;
  sc.n_layers = L, sc.n_kv_heads = n_kv, sc.head_dim = d, sc.int8 = true, sc.fp16_window = 40;
  kv_store cpu(sc);
  cuda_kv_store dev(sc, g.alloc, g.st);
  std::mt19937 rng(23);
  int64_t pos = 0;
  for (int round = 0; round < 8; ++round) {
    const int64_t n = 1 + (round * 29) % 70;
    const std::vector<float> k = uniform(rng, n * n_kv * d, -2.f, 2.f), v = uniform(rng, n * n_kv * d, -1.f, 1.f);
    auto dk = g.up(k), dv = g.up(v);
    for (int64_t l = 0; l < L; ++l) {
      cpu.append(l, pos, n, k.data(), v.data(), n_kv * d);
      dev.append(l, pos, n, dk.data(), dv.data(), n_kv * d);
      if (round % 2 == 1) {  // evict in odd rounds, differently per head
        keep_decision kd;
        kd.keep_all = false;
        for (int64_t h = 0; h < n_kv; ++h) kd.keep.push_back(random_keep(rng, cpu.n_kept(l, h), 0.5 + 0.2 * double(h)));
        cpu.apply(l, kd);
        dev.apply(l, kd);
      }
      for (int64_t h = 0; h < n_kv; ++h) {
        const host_head want = copy_head(cpu, l, h);
        const cuda_kv_head_data got = dev.download(l, h);
        host_head gh;
        gh.d = d, gh.n8 = got.n_int8, gh.n16 = got.n_fp16, gh.nb = got.n_blocks;
        gh.kq = got.kq, gh.vq = got.vq, gh.block = got.block, gh.pos = got.pos;
        gh.ks = got.k_scale, gh.vs = got.v_scale, gh.k16 = got.k16, gh.v16 = got.v16;
        // kv_store keeps unused scale blocks after the last INT8 row only transiently: compare
        // the blocks the rows use.
        expect_same_head(gh, want, "round " + std::to_string(round) + " layer " + std::to_string(l) + " head " +
                                       std::to_string(h));
      }
    }
    pos += n;
  }
  EXPECT_GT(dev.peak_device_bytes(), 0u);
}

namespace {

// Kept positions of every (layer, head) of a CPU session / a CUDA session.
std::vector<std::vector<int32_t>> kept_cpu(const session& s, int64_t L, int64_t H) {
  std::vector<std::vector<int32_t>> k;
  for (int64_t l = 0; l < L; ++l)
    for (int64_t g = 0; g < H; ++g) k.push_back(s.kv()->store().kept_positions(l, g));
  return k;
}
std::vector<std::vector<int32_t>> kept_cuda(const cuda_session& s, int64_t L, int64_t H) {
  std::vector<std::vector<int32_t>> k;
  for (int64_t l = 0; l < L; ++l)
    for (int64_t g = 0; g < H; ++g) k.push_back(s.sequence().kv()->store().kept_positions(l, g));
  return k;
}

}  // namespace

TEST(CudaForward, PoliciesMatchTheCpuSession) {
  REQUIRE_GPU();
  const auto dir = test::temp_dir("models");
  const model_case mc = model_cases()[0];  // llama GQA F16, head_dim 32
  const std::string path = (dir / "policies.gguf").string();
  write_random_model(mc.spec, path);
  auto m = load_model(path);
  const int64_t L = m->config.n_layers, H = m->config.n_kv_heads, V = m->config.n_vocab;
  cuda_engine_options eo;
  eo.max_chunk = 32, eo.max_batch = 2;
  cuda_engine e(*m, eo);
  struct pcase {
    std::string name;
    kv_policy_options o;
    bool exact;  // decisions do not depend on attention mass: kept sets must match every step
  };
  std::vector<pcase> cases;
  {
    kv_policy_options o;
    cases.push_back({"full", o, true});
    o.window = 48, o.sinks = 4;
    cases.push_back({"window", o, true});
    kv_policy_options h;
    h.heavy = 24, h.recent = 24;
    cases.push_back({"h2o", h, false});
    kv_policy_options c;
    // tau 0: every step is "confident" (budget n_high), so the budget never hangs on a
    // confidence that F16 activations move by 1e-3 across the threshold.
    c.n_high = 40, c.n_low = 72, c.protect = 16, c.int8 = true, c.int8_window = 32, c.tau = 0.f;
    cases.push_back({"confkv", c, false});
    cases.push_back({"confkv-l", c, false});
  }
  std::mt19937 rng(31);
  std::vector<int32_t> toks(130);
  for (auto& t : toks) t = int32_t(rng() % uint32_t(V));
  for (const pcase& pc : cases) {
    SCOPED_TRACE(pc.name);
    session_options so;
    so.n_ctx = 256, so.prefill_chunk = 32, so.kv_policy = pc.name, so.kv = pc.o;
    session cs(*m, so);
    cuda_session_options co;
    co.n_ctx = 256, co.prefill_chunk = 32, co.kv_policy = pc.name, co.kv = pc.o;
    cuda_session gs(e, co);
    const std::span<const int32_t> prompt(toks.data(), 80);
    cs.append(prompt);
    gs.append(prompt);
    int64_t steps = 0, same = 0;
    double overlap_sum = 0;
    for (int64_t i = 80; i < int64_t(toks.size()); ++i) {
      cs.append_decode(toks[size_t(i)]);
      gs.append_decode(toks[size_t(i)]);
      ++steps;
      const auto kc = kept_cpu(cs, L, H), kg = kept_cuda(gs, L, H);
      // Mean Jaccard overlap of the kept sets over (layer, head).
      double ov = 0;
      for (size_t j = 0; j < kc.size(); ++j) {
        std::vector<int32_t> both;
        std::set_intersection(kc[j].begin(), kc[j].end(), kg[j].begin(), kg[j].end(), std::back_inserter(both));
        const double uni = double(kc[j].size() + kg[j].size() - both.size());
        ov += uni > 0 ? double(both.size()) / uni : 1.0;
      }
      overlap_sum += ov / double(kc.size());
      EXPECT_EQ(gs.last_step()->kept, cs.kv()->last().kept) << "tokens per layer after position " << i;
      if (pc.exact) {
        EXPECT_TRUE(kc == kg) << "kept positions after position " << i;
      }
      if (kc != kg) continue;
      ++same;
      std::vector<float> want(cs.logits(), cs.logits() + V);
      expect_logits_close(gs.logits(), want.data(), V, "position " + std::to_string(i));
    }
    // Mass-ranked policies may break near-ties differently (F32 sums in another order, F16
    // activations), and an evicted token never returns: the sets stay close, not equal.
    EXPECT_GE(overlap_sum / double(steps), 0.9) << same << " of " << steps << " steps with identical kept sets";
  }
}

TEST(CudaForward, BatchedPolicyDecodeMatchesSingleSequences) {
  REQUIRE_GPU();
  const auto dir = test::temp_dir("models");
  const model_case mc = model_cases()[0];
  const std::string path = (dir / "batch-policy.gguf").string();
  write_random_model(mc.spec, path);
  auto m = load_model(path);
  const int64_t V = m->config.n_vocab;
  cuda_engine_options eo;
  eo.max_chunk = 32, eo.max_batch = 4;
  cuda_engine e(*m, eo);
  kv_policy_options o;
  o.window = 40, o.sinks = 4;
  std::mt19937 rng(8);
  std::vector<std::unique_ptr<cuda_sequence>> batch, single;
  std::vector<cuda_sequence*> ptrs;
  std::vector<std::vector<int32_t>> prompts;
  for (int b = 0; b < 3; ++b) {
    prompts.emplace_back(size_t(30 + 20 * b));
    for (auto& t : prompts.back()) t = int32_t(rng() % uint32_t(V));
    for (auto* set : {&batch, &single}) {
      set->push_back(std::make_unique<cuda_sequence>(e, 128, "window", o));
      for (size_t i = 0; i < prompts.back().size(); i += 32) {
        const int64_t n = std::min<int64_t>(32, int64_t(prompts.back().size() - i));
        e.forward(*set->back(), prompts.back().data() + i, n, false);
      }
    }
    ptrs.push_back(batch.back().get());
  }
  for (int step = 0; step < 20; ++step) {
    const std::vector<int32_t> next = {int32_t(step), int32_t(step + 7), int32_t(step + 100)};
    e.forward_batch(ptrs, next.data(), true);
    std::vector<std::vector<float>> got(3, std::vector<float>(static_cast<size_t>(V)));
    for (int b = 0; b < 3; ++b) e.logits(b, got[size_t(b)].data());
    for (int b = 0; b < 3; ++b) {
      e.forward(*single[size_t(b)], &next[size_t(b)], 1, true);
      std::vector<float> want(static_cast<size_t>(V));
      e.logits(0, want.data());
      expect_logits_close(got[size_t(b)], want.data(), V, "step " + std::to_string(step) + " row " + std::to_string(b));
      for (int64_t l = 0; l < m->config.n_layers; ++l)
        EXPECT_EQ(batch[size_t(b)]->kv()->store().kept_positions(l, 0), single[size_t(b)]->kv()->store().kept_positions(l, 0));
    }
  }
}

// FreeKV on the device: tests/test-cuda-freekv.cpp (GPU) and test-cuda-freekv-plan.cpp (CPU).
