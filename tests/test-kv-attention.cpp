// test-kv-attention.cpp: the CPU attention over the KV store's memory (kv-attention-cpu.h).
// (1) Its plain-loop ref::kv_attend against kv_attend_ref, the independent position-based
// reference over a real kv_store (INT8 and FP16 segments, compacted). (2) The optimised
// kv_attend against ref::kv_attend over decode and prefill shapes, GQA groups, head dims,
// span layouts (empty spans, many 32-token pages, INT8 + FP16, heads of unequal length),
// with and without mass, on 1 and 3 threads, for every kernel variant the CPU runs.
// (3) Mass is probability: per query head and query it sums to 1.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cpu-kernels.h"
#include "ggml-types.h"
#include "kv/kv-attention-cpu.h"
#include "kv/kv-attention-ref.h"
#include "kv/kv-page-bounds.h"
#include "kv/kv-store.h"
#include "kv-span-fixture.h"
#include "thread-pool.h"

using namespace kvarena;
using namespace kvarena::test;

namespace {

// The spans of n_kv heads; with layout::ragged head g has N - 37 g tokens (at least 0).
struct heads_data {
  int64_t hd = 0;
  std::vector<std::vector<span_data>> heads;  // (n_kv, spans)

  std::vector<kv_attn_head> view(bool with_mass) {
    std::vector<kv_attn_head> out(heads.size());
    for (size_t g = 0; g < heads.size(); ++g)
      for (span_data& s : heads[g]) out[g].spans.push_back(s.span(with_mass));
    return out;
  }
  std::vector<float> masses() const {  // every mass value, head by head
    std::vector<float> m;
    for (const auto& h : heads)
      for (const span_data& s : h) m.insert(m.end(), s.mass.begin(), s.mass.end());
    return m;
  }
  void reset_mass(float x) {
    for (auto& h : heads)
      for (span_data& s : h) s.mass.assign(size_t(s.n), x);
  }
};

heads_data make_heads(std::mt19937& rng, layout l, int64_t n_kv, int64_t N, int64_t hd) {
  heads_data d;
  d.hd = hd;
  for (int64_t g = 0; g < n_kv; ++g) {
    const int64_t n = l == layout::ragged ? std::max<int64_t>(0, N - 37 * g) : N;
    d.heads.emplace_back();
    for (auto [len, int8] : span_lengths(rng, l, n)) d.heads.back().push_back(make_span(rng, len, hd, int8));
  }
  return d;
}

thread_pool& pool_of(int n) {
  static thread_pool p1(1), p3(3);
  return n == 1 ? p1 : p3;
}

// |got - want| <= rel * max(1, |want|).
void expect_close(const std::vector<float>& got, const std::vector<float>& want, float rel,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i) {
    const float tol = rel * std::max(1.0f, std::fabs(want[i]));
    if (!(std::fabs(got[i] - want[i]) <= tol)) {
      ADD_FAILURE() << what << " [" << i << "]: got " << got[i] << " want " << want[i];
      ++bad;
    }
  }
}

}  // namespace

// (1) ref::kv_attend over the store's two spans == kv_attend_ref over the store, by position:
// the queries are the last n_q kept tokens of every head (compaction keeps them).
TEST(KvAttention, RefMatchesStoreReference) {
  const int64_t d = 64, n_kv = 2, G = 4, n_heads = n_kv * G, n_tok = 300;
  std::mt19937 rng(21);
  for (int64_t n_q : {1, 4}) {
    SCOPED_TRACE("n_q=" + std::to_string(n_q));
    kv_store_config c;
    c.n_layers = 1, c.n_kv_heads = n_kv, c.head_dim = d, c.group = G, c.int8 = true, c.fp16_window = 48;
    kv_store s(c);
    auto k = uniform(rng, n_tok * n_kv * d, -2.f, 2.f), v = uniform(rng, n_tok * n_kv * d, -1.f, 1.f);
    s.append(0, 0, 200, k.data(), v.data(), n_kv * d);
    s.append(0, 200, n_tok - 200, k.data() + 200 * n_kv * d, v.data() + 200 * n_kv * d, n_kv * d);
    std::vector<std::vector<int32_t>> keep(static_cast<size_t>(n_kv));
    for (int64_t g = 0; g < n_kv; ++g)
      for (int32_t t = 0; t < n_tok; ++t)
        if (t >= n_tok - n_q || rng() % 5 < 3) keep[size_t(g)].push_back(t);
    s.compact(0, keep);
    s.quantize_old(0);
    for (int64_t g = 0; g < n_kv; ++g) {
      ASSERT_GT(s.head_view(0, g).n_int8, 0);
      ASSERT_GT(s.head_view(0, g).n_fp16, 0);
    }
    auto q = uniform(rng, n_q * n_heads * d, -1.f, 1.f);
    std::vector<int32_t> qpos;
    for (int64_t i = 0; i < n_q; ++i) qpos.push_back(int32_t(n_tok - n_q + i));
    const float scale = 1.0f / std::sqrt(float(d));
    std::vector<float> want(q.size()), got(q.size());

    s.clear_mass(0);
    kv_attend_ref(s, 0, q.data(), n_heads * d, qpos.data(), n_q, n_heads, scale, want.data(),
                  n_heads * d, true);
    std::vector<float> want_mass;
    for (int64_t g = 0; g < n_kv; ++g) {
      kv_head_view hv = s.head_view(0, g);
      want_mass.insert(want_mass.end(), hv.mass, hv.mass + hv.n());
    }
    s.clear_mass(0);
    std::vector<kv_attn_head> heads;
    for (int64_t g = 0; g < n_kv; ++g) heads.push_back(kv_attn_head_from_view(s.head_view(0, g), true));
    ref::kv_attend(heads, d, q.data(), n_heads * d, n_q, n_heads, scale, got.data(), n_heads * d);
    std::vector<float> got_mass;
    for (int64_t g = 0; g < n_kv; ++g) {
      kv_head_view hv = s.head_view(0, g);
      got_mass.insert(got_mass.end(), hv.mass, hv.mass + hv.n());
    }
    expect_close(got, want, 1e-5f, "out");
    expect_close(got_mass, want_mass, 1e-5f, "mass");
  }
}

// (2) The optimised kernel against ref::kv_attend.
TEST(KvAttention, OptimisedMatchesRef) {
  struct shape {
    int64_t n_q, n_kv, G, hd, N;
    layout lay;
    bool mass;
    float decay = 1.f;  // mass_decay: query i's mass weighted decay^(n_q - 1 - i) (confkv's EMA)
  };
  const std::vector<shape> shapes = {
      {1, 2, 4, 64, 1500, layout::pages, true},      // decode, GQA 4, FreeKV pages
      {1, 1, 8, 128, 3000, layout::int8_fp16, true},  // decode, one head cut into ranges
      {1, 4, 1, 64, 2000, layout::fp16, false},       // decode, no GQA (direct reads)
      {1, 3, 1, 48, 700, layout::ragged, true},       // head_dim 48, heads of unequal length
      {1, 2, 2, 8, 300, layout::int8_fp16, false},    // head_dim 8: generic path everywhere
      {3, 2, 4, 64, 900, layout::pages, true},        // a few queries, split mode
      {40, 2, 2, 64, 300, layout::int8_fp16, true},   // prefill chunk
      {70, 1, 8, 128, 200, layout::pages, true},      // prefill, several query blocks
      {20, 3, 1, 48, 60, layout::ragged, true},       // heads shorter than the chunk
      {512, 1, 2, 64, 600, layout::fp16, false},      // a full prefill chunk
      {3, 2, 4, 64, 900, layout::pages, true, 0.9f},       // weighted mass: split mode
      {12, 1, 8, 128, 3000, layout::int8_fp16, true, 0.9f},  // block mode, one query block
      {70, 1, 8, 128, 200, layout::pages, true, 0.9f},     // block mode, several query blocks
      {40, 2, 2, 64, 300, layout::int8_fp16, true, 0.5f},
  };
  const std::string variant0 = cpu_kernel_variant();
  std::mt19937 rng(5);
  for (const shape& sh : shapes) {
    const int64_t n_heads = sh.n_kv * sh.G, row = n_heads * sh.hd;
    const int64_t ldq = row + 3, ldo = row + 5;  // padded rows: padding stays untouched
    heads_data data = make_heads(rng, sh.lay, sh.n_kv, sh.N, sh.hd);
    const auto q = uniform(rng, sh.n_q * ldq, -1.f, 1.f);
    const float scale = 0.7f / std::sqrt(float(sh.hd));
    std::vector<float> want(size_t(sh.n_q * ldo), -7.f);
    ref::kv_attend(data.view(sh.mass), sh.hd, q.data(), ldq, sh.n_q, n_heads, scale, want.data(), ldo, sh.decay);
    const std::vector<float> want_mass = data.masses();
    for (const std::string& variant : cpu_kernel_variants_supported())
      for (int threads : {1, 3}) {
        const std::string what = "n_q=" + std::to_string(sh.n_q) + " n_kv=" + std::to_string(sh.n_kv) +
                                 " G=" + std::to_string(sh.G) + " hd=" + std::to_string(sh.hd) +
                                 " N=" + std::to_string(sh.N) + " " + layout_name(sh.lay) +
                                 (sh.mass ? " mass " : " ") + "decay=" + std::to_string(sh.decay) + " " + variant +
                                 " threads=" + std::to_string(threads);
        set_cpu_kernel_variant(variant);
        data.reset_mass(0.25f);
        kv_attend_scratch scratch;
        std::vector<float> got(size_t(sh.n_q * ldo), -7.f);
        kv_attend(pool_of(threads), data.view(sh.mass), sh.hd, q.data(), ldq, sh.n_q, n_heads, scale,
                  got.data(), ldo, scratch, sh.decay);
        expect_close(got, want, 1e-4f, what + " out");
        if (sh.mass) expect_close(data.masses(), want_mass, 1e-4f, what + " mass");
        // Warm scratch: the same call again needs no more memory.
        const size_t bytes = scratch.bytes();
        kv_attend(pool_of(threads), data.view(false), sh.hd, q.data(), ldq, sh.n_q, n_heads, scale,
                  got.data(), ldo, scratch);
        EXPECT_EQ(scratch.bytes(), bytes) << what;
        expect_close(got, want, 1e-4f, what + " out again");
      }
  }
  set_cpu_kernel_variant(variant0);
}

// (3) Every query head's probabilities sum to 1, so a decode step adds G to each head's mass
// and a chunk of n_q queries (all seeing tokens) adds n_q * G; weighted by decay d per row
// from the last (mass_decay), G * (1 + d + ... + d^(n_q-1)): for d = 0.5 and n_q = 2,
// G * 1.5; n_q = 33, G * (1 - 0.5^33) / 0.5 = G * 1.9999999998.
TEST(KvAttention, MassSumsToQueryHeads) {
  std::mt19937 rng(9);
  const int64_t n_kv = 3, G = 4, hd = 64, n_heads = n_kv * G;
  const std::string variant0 = cpu_kernel_variant();
  for (const std::string& variant : cpu_kernel_variants_supported())
    for (int64_t n_q : {1, 2, 33})
    for (float decay : {1.0f, 0.5f}) {
      set_cpu_kernel_variant(variant);
      heads_data data = make_heads(rng, layout::pages, n_kv, 2500, hd);
      data.reset_mass(0.0f);
      const auto q = uniform(rng, n_q * n_heads * hd, -1.f, 1.f);
      std::vector<float> out(q.size());
      kv_attend_scratch scratch;
      kv_attend(pool_of(3), data.view(true), hd, q.data(), n_heads * hd, n_q, n_heads, 0.125f,
                out.data(), n_heads * hd, scratch, decay);
      // Hand values: 1, 2, 33 rows at d = 1; 1, 1.5, 1.9999999998 at d = 0.5.
      const double rows = decay == 1.0f ? double(n_q) : n_q == 1 ? 1.0 : n_q == 2 ? 1.5 : 1.9999999998;
      for (int64_t g = 0; g < n_kv; ++g) {
        double sum = 0;
        for (const span_data& s : data.heads[size_t(g)])
          for (float m : s.mass) sum += m;
        EXPECT_NEAR(sum, rows * G, 1e-4 * rows * G) << variant << " n_q=" << n_q << " decay=" << decay << " head " << g;
      }
    }
  set_cpu_kernel_variant(variant0);
}

// FreeKV's page bounds (kv-page-bounds.h): every variant against the double-precision loops,
// over head sizes with and without a 16-channel tail, 1..5 query heads per KV head (the
// AVX-512 path takes heads four at a time) and page counts not a multiple of 4. The bound
// must also really bound: for keys drawn inside [min, max], q.k <= bound.
TEST(KvPageBounds, EveryVariantMatchesRefAndBoundsTheKeys) {
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::uniform_real_distribution<float> u01(0.f, 1.f);
  const std::string variant0 = cpu_kernel_variant();
  for (int64_t hd : {8, 48, 64, 128})
    for (int64_t G : {1, 3, 5})
      for (int64_t n : {1, 7, 33}) {
        std::vector<float> q(size_t(G * hd));
        for (float& x : q) x = nd(rng);
        std::vector<uint16_t> dig(size_t(n * 2 * hd));  // (n, 2, hd): minima then maxima
        for (int64_t j = 0; j < n; ++j)
          for (int64_t c = 0; c < hd; ++c) {
            const float a = nd(rng), b = nd(rng);
            dig[size_t(j * 2 * hd + c)] = fp32_to_fp16(std::min(a, b));
            dig[size_t(j * 2 * hd + hd + c)] = fp32_to_fp16(std::max(a, b));
          }
        const float scale = 1.f / std::sqrt(float(hd));
        std::vector<float> want(size_t(G * n)), got(size_t(G * n));
        ref::kv_page_bounds(q.data(), G, dig.data(), n, hd, scale, want.data(), n);
        for (int64_t h = 0; h < G; ++h)
          for (int64_t j = 0; j < n; ++j) {  // a key inside the page's box never beats the bound
            double dot = 0;
            for (int64_t c = 0; c < hd; ++c) {
              const float lo = fp16_to_fp32(dig[size_t(j * 2 * hd + c)]);
              const float hi = fp16_to_fp32(dig[size_t(j * 2 * hd + hd + c)]);
              dot += double(q[size_t(h * hd + c)]) * (lo + u01(rng) * (hi - lo));
            }
            EXPECT_LE(dot * scale, want[size_t(h * n + j)] + 1e-5);
          }
        for (const std::string& variant : cpu_kernel_variants_supported()) {
          set_cpu_kernel_variant(variant);
          kv_page_bounds(q.data(), G, dig.data(), n, hd, scale, got.data(), n);
          for (size_t i = 0; i < got.size(); ++i)
            ASSERT_NEAR(got[i], want[i], 1e-5f * (1.f + std::fabs(want[i])))
                << variant << " hd=" << hd << " G=" << G << " n=" << n << " i=" << i;
        }
      }
  set_cpu_kernel_variant(variant0);
}
