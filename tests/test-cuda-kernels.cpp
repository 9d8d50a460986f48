// test-cuda-kernels.cpp: the CUDA kernels against their CPU references (engine/cuda/), label
// `gpu`; every test needs a device (GTEST_SKIP without one). Each kernel within a stated
// tolerance: RMSNorm/LayerNorm, RoPE, activations/bias/embedding/conversion, argmax, KV
// write/quantize/gather (INT8 bit-exact), page digests and scores, span attention (with mass,
// forced and natural split-K, 8K tokens) and prefill attention against ref::kv_attend, the
// cuBLAS F16 GEMM against ref::matmul; the quantized-weight matvec and F16 tiles (Q8_0, Q4_0,
// Q2_K..Q6_K) against the dequantised rows; and the device allocator's accounting. The CPU-side
// tests are in test-cuda.cpp; shared helpers in cuda-test-util.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cpu-kernels.h"
#include "cuda-check.h"
#include "cuda-gemm.h"
#include "cuda-kernels.h"
#include "cuda-memory.h"
#include "cuda-ref.h"
#include "cuda-quant-test-util.h"
#include "cuda-test-util.h"
#include "ggml-types.h"
#include "kv/kv-attention-cpu.h"
#include "kv/kv-host-pool.h"
#include "kv/kv-store.h"
#include "kv-span-fixture.h"
#include "sampler.h"

using namespace kvarena;
using namespace kvarena::test;

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
  // Llama 3's rope_freqs divisors (rope_dims/2 of them) and a linear scale, or neither.
  const std::vector<float> ff = uniform(rng, hd / 2, 1.f, 8.f);
  auto dff = g.up(ff);
  for (bool neox : {false, true})
    for (int64_t rope_dims : {int64_t(64), int64_t(32)})
      for (bool scaled : {false, true}) {
        const std::vector<float> x = uniform(rng, n * ld, -1.f, 1.f);
        const std::vector<int32_t> pos = {0, 1, 17, 4095, 131000};
        const float fs = scaled ? 0.125f : 1.f;
        auto dx = g.up(x);
        auto dp = g.up(pos);
        cu::rope(dx.data(), ld, n, heads, hd, rope_dims, dp.data(), 500000.f, fs, scaled ? dff.data() : nullptr, neox,
                 g.st);
        std::vector<float> want = x;
        cuda_ref::rope(want.data(), ld, n, heads, hd, rope_dims, pos.data(), 500000.f, fs,
                       scaled ? ff.data() : nullptr, neox);
        expect_close(g.down(dx, x.size()), want, 2e-6f, 2e-6f,
                     std::string(neox ? "neox" : "adjacent") + " rope_dims " + std::to_string(rope_dims) +
                         (scaled ? " scaled" : ""));
      }
}

// qwen3's per-head q/k RMSNorm, in place over strided rows (q and k heads of the q/k/v rows).
TEST(CudaKernels, RmsnormHeadsMatchesRmsnormPerHead) {
  REQUIRE_GPU();
  gpu_ctx g;
  std::mt19937 rng(12);
  for (int64_t hd : {int64_t(64), int64_t(128), int64_t(72), int64_t(256)}) {
    const int64_t n = 7, heads = 6, ld = heads * hd + 40;
    const std::vector<float> x = uniform(rng, n * ld, -3.f, 3.f), w = uniform(rng, hd, 0.5f, 1.5f);
    auto dx = g.up(x);
    auto dw = g.up(w);
    cu::rmsnorm_heads(dx.data(), ld, n, heads, hd, dw.data(), 1e-6f, g.st);
    std::vector<float> want = x;
    cuda_ref::rmsnorm_heads(want.data(), ld, n, heads, hd, w.data(), 1e-6f);
    expect_close(g.down(dx, x.size()), want, 1e-5f, 1e-5f, "head_dim " + std::to_string(hd));
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
  // F32 -> F16 -> F32 with strides: saturating at +-65504 (the range spans +-70000, and
  // infinities), round to nearest even, exact on the way back. cuda_ref::f32_to_f16_sat
  std::vector<float> f = uniform(rng, n * ld, -70000.f, 70000.f);
  f[1] = INFINITY, f[2] = -INFINITY, f[3] = 65520.f;
  auto df = g.up(f);
  cuda_buffer<uint16_t> dh(g.alloc, size_t(n * w), "h");
  cu::f32_to_f16(df.data(), ld, dh.data(), w, n, w, g.st);
  const std::vector<uint16_t> h = g.down(dh, size_t(n * w));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < w; ++j)
      ASSERT_EQ(h[size_t(i * w + j)], cuda_ref::f32_to_f16_sat(f[size_t(i * ld + j)])) << i << "," << j;
  {  // NaN stays NaN
    auto dn = g.up(std::vector<float>{std::nanf("")});
    cuda_buffer<uint16_t> dnh(g.alloc, 1, "nan");
    cu::f32_to_f16(dn.data(), 1, dnh.data(), 1, 1, 1, g.st);
    EXPECT_TRUE(std::isnan(fp16_to_fp32(g.down(dnh, 1)[0])));
  }
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

// Weights kept quantized: cu::qmatvec (1..8 tokens, beta 0 and 1, rows not a multiple of
// the block's 4 warps) against the rows dequantised by dequantize_row_ref dotted (in double)
// with the same F16 activations; cu::dequant_rows_f16 bit for bit against those rows rounded
// to F16 (fp32_to_fp16).
TEST(CudaKernels, QuantizedMatvecAndTilesMatchTheDequantisedRows) {
  REQUIRE_GPU();
  gpu_ctx g;
  std::mt19937 rng(17);
  for (ggml_type t : {ggml_type::q8_0, ggml_type::q4_0, ggml_type::q2_k, ggml_type::q3_k, ggml_type::q4_k,
                      ggml_type::q5_k, ggml_type::q6_k}) {
    SCOPED_TRACE(ggml_traits(t).name);
    const int64_t rows = 301, cols = 768, ldx = cols + 8, ldy = rows + 3;
    const std::vector<uint8_t> w = scaled_random_blocks(t, rows, cols, 0.05f, rng);
    const size_t rb = ggml_row_bytes(t, cols);  // row bytes of the blocks
    std::vector<float> wf(static_cast<size_t>(rows * cols));  // (rows, cols) dequantised
    for (int64_t r = 0; r < rows; ++r) dequantize_row_ref(t, w.data() + size_t(r) * rb, &wf[size_t(r * cols)], cols);
    auto dw = g.up(w);
    for (int64_t n : {int64_t(1), int64_t(3), int64_t(8)})
      for (float beta : {0.f, 1.f}) {
        const std::vector<uint16_t> xh = to_f16(uniform(rng, n * ldx, -1.f, 1.f));
        const std::vector<float> y0 = uniform(rng, n * ldy, -1.f, 1.f);
        auto dx = g.up(xh);
        auto dy = g.up(y0);
        cu::qmatvec(t, dw.data(), rows, cols, dx.data(), ldx, n, dy.data(), ldy, beta, g.st);
        const std::vector<float> got = g.down(dy, y0.size());
        const double worst = qmatvec_worst_error(t, w, rows, cols, xh, ldx, n, y0, got, ldy, beta);
        EXPECT_LT(worst, 1e-5) << "n=" << n << " beta=" << beta;
        for (int64_t i = 0; i < n; ++i)  // columns past the rows untouched
          for (int64_t r = rows; r < ldy; ++r) EXPECT_EQ(got[size_t(i * ldy + r)], y0[size_t(i * ldy + r)]);
      }
    const int64_t r0 = 37, nr = 200;
    cuda_buffer<uint16_t> tile(g.alloc, size_t(nr * cols), "test");
    cu::dequant_rows_f16(t, dw.data(), r0, nr, cols, tile.data(), g.st);
    const std::vector<uint16_t> got = g.down(tile, size_t(nr * cols));
    int64_t mismatches = 0;
    for (int64_t e = 0; e < nr * cols; ++e) mismatches += got[size_t(e)] != fp32_to_fp16(wf[size_t(r0 * cols + e)]);
    EXPECT_EQ(mismatches, 0);
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

TEST(CudaMemory, UploadRingDeliversEveryUploadWhileTheHostReusesItsBuffer) {
  // The pinned ring (cuda_upload_ring): 3000 uploads from one host buffer refilled after
  // each call, through 4 segments of 1 KiB (so the ring laps and waits) and one request
  // larger than a segment (it grows); a slow-ish kernel queued now and then keeps the copies
  // behind the host. Every destination must hold what was uploaded to it.
  REQUIRE_GPU();
  gpu_ctx g;
  const int64_t n = 3000, row = 64;  // ints per upload
  cuda_buffer<int32_t> dst(g.alloc, size_t(n * row), "ring destination");
  cuda_buffer<int32_t> big(g.alloc, 4096, "ring destination (big)");
  cuda_buffer<float> busy(g.alloc, 1 << 22, "busy work");
  cuda_upload_ring ring(1024, 4);
  std::vector<int32_t> host(static_cast<size_t>(row));
  std::vector<int32_t> big_host(4096);
  std::iota(big_host.begin(), big_host.end(), 7);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < row; ++j) host[size_t(j)] = int32_t(i * 1000 + j);
    ring.upload(dst.data() + i * row, host.data(), size_t(row) * 4, g.alloc, g.st);
    if (i % 100 == 0) cu::gelu(busy.data(), 1 << 22, g.st);
    if (i == 1500) ring.upload(big.data(), big_host.data(), big_host.size() * 4, g.alloc, g.st);
  }
  const std::vector<int32_t> got = g.down(dst, size_t(n * row));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < row; ++j) ASSERT_EQ(got[size_t(i * row + j)], int32_t(i * 1000 + j)) << i << "," << j;
  EXPECT_EQ(g.down(big, big_host.size()), big_host);
  EXPECT_GT(ring.pinned_bytes(), 4096u * 4);  // grew past the request
  // gather_rows with no source list: a scatter (cuda_kv_store's new block ids).
  const std::vector<int32_t> vals = {5, 6, 7}, rows = {9, 0, 4};
  auto dv = g.up(vals), dr = g.up(rows);
  cuda_buffer<int32_t> out(g.alloc, 10, "scatter");
  CUDA_CHECK(cudaMemsetAsync(out.data(), 0, 40, g.st));
  cu::gather_rows(dv.data(), out.data(), 4, nullptr, dr.data(), 3, g.st);
  std::vector<int32_t> want(10, 0);
  cuda_ref::gather_rows(vals.data(), want.data(), 4, nullptr, rows.data(), 3);
  EXPECT_EQ(g.down(out, 10), want);
}
