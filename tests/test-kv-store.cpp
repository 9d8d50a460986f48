// test-kv-store.cpp: kv_store (compaction, INT8 blocks, byte accounting), the reference
// attention over FP16+INT8 storage against a plain FP32 attention written here. The FreeKV
// host pool is tested in test-kv-host-pool.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <random>
#include <set>
#include <vector>

#include "ggml-types.h"
#include "kv/kv-attention-cpu.h"
#include "kv/kv-attention-ref.h"
#include "kv/kv-store.h"
#include "kv-span-fixture.h"

using namespace kvarena;

namespace {

kv_store_config cfg(int64_t layers, int64_t kv, int64_t d, bool int8 = false, int64_t w = 128) {
  kv_store_config c;
  c.n_layers = layers, c.n_kv_heads = kv, c.head_dim = d, c.int8 = int8, c.fp16_window = w;
  return c;
}

using kvarena::test::fp16_round;
using kvarena::test::random_rows;

}  // namespace

TEST(KvStore, CompactionKeepsTokensPositionsAndScores) {
  const int64_t d = 32, kv = 2, n = 10;
  kv_store s(cfg(1, kv, d));
  // Key channel c of token t, head g = t + 16g + c (small integers: exact in fp16); value = -key.
  std::vector<float> k(size_t(n * kv * d)), v(k.size());
  for (int64_t t = 0; t < n; ++t)
    for (int64_t g = 0; g < kv; ++g)
      for (int64_t c = 0; c < d; ++c) {
        k[(t * kv + g) * d + c] = float(t + 16 * g + c);
        v[(t * kv + g) * d + c] = -float(t + 16 * g + c);
      }
  s.append(0, 100, n, k.data(), v.data(), kv * d);  // positions 100..109
  kv_layer_meta m = s.layer_meta(0);
  for (int64_t g = 0; g < kv; ++g)
    for (int64_t i = 0; i < n; ++i) m.heads[g].score[i] = float(1000 * g + i);
  s.compact(0, {{0, 3, 9}, {1, 2}});
  ASSERT_EQ(s.n_kept(0, 0), 3);
  ASSERT_EQ(s.n_kept(0, 1), 2);
  const std::vector<std::vector<int>> want = {{0, 3, 9}, {1, 2}};
  m = s.layer_meta(0);
  std::vector<float> key(d), val(d);
  for (int64_t g = 0; g < kv; ++g) {
    kv_head_view hv = s.head_view(0, g);
    for (size_t j = 0; j < want[g].size(); ++j) {
      const int t = want[g][j];
      EXPECT_EQ(hv.pos[j], 100 + t);
      EXPECT_EQ(m.heads[g].score[j], float(1000 * g + t));
      kv_load_key(hv, int64_t(j), key.data());
      kv_load_value(hv, int64_t(j), val.data());
      for (int64_t c = 0; c < d; ++c) {
        EXPECT_EQ(key[c], float(t + 16 * g + c));
        EXPECT_EQ(val[c], -float(t + 16 * g + c));
      }
    }
  }
  EXPECT_EQ(s.seq_len(0), 110);
}

// INT8 bound: with scale[c] = max_t |x[t][c]| / 127 and q = round(x/scale) (|q| <= 127 needs no
// clamp), |x - q*scale| <= scale[c]/2 for every token and channel of the block. The source
// x is the FP16 value the token held before its block was frozen.
TEST(KvStore, Int8RoundTripWithinHalfScalePerChannel) {
  const int64_t d = 64, kv = 2, n = 96;
  std::mt19937 rng(7);
  auto k = random_rows(rng, n, kv * d), v = random_rows(rng, n, kv * d);
  for (int64_t i = 0; i < int64_t(k.size()); ++i) k[i] *= float(1 + i % d);  // channel ranges differ
  kv_store s(cfg(1, kv, d, true, 0));  // fp16_window 0: every whole block goes INT8
  s.append(0, 0, n, k.data(), v.data(), kv * d);
  s.quantize_old(0);  // after the forward call (the runtime's apply): blocks are frozen
  std::vector<float> got(d);
  for (int64_t g = 0; g < kv; ++g) {
    kv_head_view hv = s.head_view(0, g);
    ASSERT_EQ(hv.n_int8, 96);
    ASSERT_EQ(hv.n_fp16, 0);
    for (int64_t t = 0; t < n; ++t) {
      const int64_t b = hv.block[t];
      EXPECT_EQ(b, t / 32);
      for (int kvi = 0; kvi < 2; ++kvi) {
        const std::vector<float>& src = kvi ? v : k;
        (kvi ? kv_load_value : kv_load_key)(hv, t, got.data());
        const float* sc = (kvi ? hv.v_scale : hv.k_scale) + b * d;
        for (int64_t c = 0; c < d; ++c) {
          float amax = 0;
          for (int64_t u = b * 32; u < b * 32 + 32; ++u)
            amax = std::max(amax, std::fabs(fp16_round(src[(u * kv + g) * d + c])));
          EXPECT_FLOAT_EQ(sc[c], amax / 127.f);
          const float x = fp16_round(src[(t * kv + g) * d + c]);
          EXPECT_LE(std::fabs(x - got[c]), sc[c] / 2 * (1 + 1e-5f)) << "t=" << t << " c=" << c;
        }
      }
    }
  }
}

// Frozen scales: later appends and compaction move INT8 bytes and scales untouched, so the
// dequantised value of a kept token never changes (nothing is re-quantised).
TEST(KvStore, Int8ScalesFrozenThroughAppendAndCompaction) {
  const int64_t d = 32, kv = 1;
  std::mt19937 rng(3);
  kv_store s(cfg(1, kv, d, true, 32));
  auto a = random_rows(rng, 96, d), b = random_rows(rng, 96, d);
  s.append(0, 0, 96, a.data(), b.data(), d);  // 96 tokens: 2 blocks INT8 (64 beyond window 32)
  EXPECT_EQ(s.head_view(0, 0).n_int8, 0);      // none while the chunk is in flight
  s.quantize_old(0);
  kv_head_view hv = s.head_view(0, 0);
  ASSERT_EQ(hv.n_int8, 64);
  std::vector<float> before(size_t(96 * d)), after(d);
  for (int64_t t = 0; t < 96; ++t) kv_load_key(hv, t, &before[t * d]);
  std::vector<float> scale0(hv.k_scale + d, hv.k_scale + 2 * d);  // block 1
  auto a2 = random_rows(rng, 40, d), b2 = random_rows(rng, 40, d);
  for (float& x : a2) x *= 50.f;  // much larger: a re-quantisation would show
  s.append(0, 96, 40, a2.data(), b2.data(), d);
  s.quantize_old(0);
  // Keep tokens 40, 41, 63 (block 1), 70, 95 (were FP16) and the new ones.
  std::vector<int32_t> keep = {40, 41, 63, 70, 95};
  for (int32_t t = 96; t < 136; ++t) keep.push_back(t);
  s.compact(0, {keep});
  hv = s.head_view(0, 0);
  EXPECT_EQ(hv.n(), int64_t(keep.size()));
  for (int c = 0; c < d; ++c) EXPECT_EQ(hv.k_scale[c], scale0[c]);  // block 1 is now block 0
  // 40, 41, 63 were INT8 already: bit-identical. 70 and 95 were FP16 and went INT8 when the
  // appends pushed block 64..95 out of the window: within half a scale of their FP16 value.
  ASSERT_EQ(hv.n_int8, 5);
  for (int64_t j = 0; j < 5; ++j) {
    kv_load_key(hv, j, after.data());
    const float* sc = hv.k_scale + int64_t(hv.block[j]) * d;
    for (int64_t c = 0; c < d; ++c) {
      if (j < 3) EXPECT_EQ(after[c], before[keep[j] * d + c]) << j;
      else EXPECT_LE(std::fabs(after[c] - before[keep[j] * d + c]), sc[c] / 2 * (1 + 1e-5f)) << j;
    }
  }
  EXPECT_EQ(hv.pos[3], 70);
}

// FP32 attention written out here, over the original (unrounded) data.
static void attend_fp32(const std::vector<float>& k, const std::vector<float>& v, int64_t n,
                        int64_t kv, int64_t d, const std::vector<float>& q, int64_t n_heads,
                        float scale, std::vector<float>& out) {
  const int64_t group = n_heads / kv;
  out.assign(size_t(n_heads * d), 0.f);
  for (int64_t h = 0; h < n_heads; ++h) {
    const int64_t g = h / group;
    std::vector<double> p(static_cast<size_t>(n));
    double mx = -1e300, z = 0;
    for (int64_t t = 0; t < n; ++t) {
      double s = 0;
      for (int64_t c = 0; c < d; ++c) s += double(q[h * d + c]) * k[(t * kv + g) * d + c];
      p[t] = s * scale;
      mx = std::max(mx, p[t]);
    }
    for (int64_t t = 0; t < n; ++t) z += (p[t] = std::exp(p[t] - mx));
    for (int64_t t = 0; t < n; ++t)
      for (int64_t c = 0; c < d; ++c) out[h * d + c] += float(p[t] / z) * v[(t * kv + g) * d + c];
  }
}

// Bounds: FP16 storage (relative error 2^-11) stays within 2e-3 of FP32; with INT8 (error
// <= amax/254 ~ 0.004 per element for data in [-1,1]) logits move by at most
// scale * sum|q| * 0.004 ~ 0.05 and outputs (convex mixes of values) by < 0.03.
TEST(KvStore, ReferenceAttentionMatchesFp32) {
  const int64_t d = 32, kv = 2, n_heads = 4, n = 200;
  std::mt19937 rng(11);
  auto k = random_rows(rng, n, kv * d), v = random_rows(rng, n, kv * d);
  auto q = random_rows(rng, 1, n_heads * d);
  const float scale = 1.f / std::sqrt(float(d));
  std::vector<float> want, got(size_t(n_heads * d));
  attend_fp32(k, v, n, kv, d, q, n_heads, scale, want);
  const int32_t qpos = int32_t(n - 1);
  for (bool int8 : {false, true}) {
    kv_store s(cfg(1, kv, d, int8, 64));
    s.append(0, 0, n, k.data(), v.data(), kv * d);
    s.quantize_old(0);
    if (int8) {
      EXPECT_EQ(s.head_view(0, 0).n_int8, 128);
    }
    s.clear_mass(0);
    kv_attend_ref(s, 0, q.data(), n_heads * d, &qpos, 1, n_heads, scale, got.data(), n_heads * d, true);
    const float tol = int8 ? 0.03f : 2e-3f;
    for (int64_t i = 0; i < n_heads * d; ++i) EXPECT_NEAR(got[i], want[i], tol) << i;
    for (int64_t g = 0; g < kv; ++g) {  // each of the group's 2 query heads adds mass 1
      kv_head_view hv = s.head_view(0, g);
      double m = 0;
      for (int64_t t = 0; t < hv.n(); ++t) m += hv.mass[t];
      EXPECT_NEAR(m, 2.0, 1e-4);
    }
  }
}

// After compaction the view holds only the kept tokens, at their original positions:
// attention equals FP32 attention over that subset of the (fp16-rounded) source.
TEST(KvStore, ReferenceAttentionAfterCompactionSeesOnlyKeptTokens) {
  const int64_t d = 32, n = 40, n_heads = 2;
  std::mt19937 rng(17);
  auto k = random_rows(rng, n, d), v = random_rows(rng, n, d), q = random_rows(rng, 1, n_heads * d);
  for (float& x : k) x = fp16_round(x);
  for (float& x : v) x = fp16_round(x);
  kv_store s(cfg(1, 1, d));
  s.append(0, 0, n, k.data(), v.data(), d);
  std::vector<int32_t> keep = {0, 1, 7, 20, 21, 33, 39};
  s.compact(0, {keep});
  std::vector<float> ks, vs;
  for (int32_t t : keep) {
    ks.insert(ks.end(), k.begin() + t * d, k.begin() + (t + 1) * d);
    vs.insert(vs.end(), v.begin() + t * d, v.begin() + (t + 1) * d);
  }
  std::vector<float> want, got(size_t(n_heads * d));
  attend_fp32(ks, vs, int64_t(keep.size()), 1, d, q, n_heads, 0.3f, want);
  const int32_t qpos = 39;
  kv_attend_ref(s, 0, q.data(), n_heads * d, &qpos, 1, n_heads, 0.3f, got.data(), n_heads * d, false);
  for (int64_t i = 0; i < n_heads * d; ++i) EXPECT_NEAR(got[i], want[i], 1e-5f) << i;
}

TEST(KvStore, ReferenceAttentionIsCausalByPosition) {
  const int64_t d = 32, n = 5;
  std::mt19937 rng(5);
  auto k = random_rows(rng, n, d), v = random_rows(rng, n, d), q = random_rows(rng, 1, d);
  kv_store s(cfg(1, 1, d));
  s.append(0, 0, n, k.data(), v.data(), d);
  s.clear_mass(0);
  const int32_t qpos = 0;  // sees only token 0: output is its value
  std::vector<float> out(d);
  kv_attend_ref(s, 0, q.data(), d, &qpos, 1, 1, 0.2f, out.data(), d, true);
  for (int64_t c = 0; c < d; ++c) EXPECT_NEAR(out[c], fp16_round(v[c]), 1e-6f);
  EXPECT_FLOAT_EQ(s.head_view(0, 0).mass[0], 1.f);
  EXPECT_FLOAT_EQ(s.head_view(0, 0).mass[1], 0.f);
}

TEST(KvStore, ByteAccountingMatchesBuffers) {
  const int64_t d = 32, kv = 2, L = 3;
  {
    kv_store_config c = cfg(L, kv, d);
    c.layer_capacity.assign(size_t(L), 64);
    kv_store s(c);
    std::mt19937 rng(1);
    auto k = random_rows(rng, 64, kv * d);
    for (int64_t l = 0; l < L; ++l) s.append(l, 0, 64, k.data(), k.data(), kv * d);
    // 64 FP16 tokens per head: k, v (2*d fp16), position, score, mass.
    EXPECT_EQ(s.fp16_token_bytes(), size_t(2 * d * 2 + 4 + 4 + 4));
    EXPECT_EQ(s.device_bytes(), size_t(L * kv * 64) * s.fp16_token_bytes());
    EXPECT_EQ(s.peak_device_bytes(), s.device_bytes());
    for (int64_t l = 0; l < L; ++l) s.compact(l, {{1, 2, 3}, {4}});
    // Shrunk to one block of 32 tokens per head; the peak remembers 64.
    EXPECT_EQ(s.device_bytes(), size_t(L * kv * 32) * s.fp16_token_bytes());
    EXPECT_EQ(s.peak_device_bytes(), size_t(L * kv * 64) * s.fp16_token_bytes());
    EXPECT_EQ(s.device_bytes(), s.recount_device_bytes());
  }
  {  // random appends / compactions with INT8: the counter always equals the buffers
    kv_store s(cfg(2, kv, d, true, 16));
    std::mt19937 rng(2);
    int64_t pos = 0;
    size_t peak = 0;
    for (int step = 0; step < 60; ++step) {
      const int64_t n = 1 + rng() % 20;
      auto k = random_rows(rng, n, kv * d);
      for (int64_t l = 0; l < 2; ++l) {
        s.append(l, pos, n, k.data(), k.data(), kv * d);
        std::vector<std::vector<int32_t>> keep(static_cast<size_t>(kv));
        for (int64_t g = 0; g < kv; ++g)
          for (int32_t i = 0; i < s.n_kept(l, g); ++i)
            if (rng() % 4 != 0) keep[g].push_back(i);
        s.compact(l, keep);
        peak = std::max(peak, s.recount_device_bytes());
        ASSERT_EQ(s.device_bytes(), s.recount_device_bytes());
      }
      pos += n;
    }
    EXPECT_GE(s.peak_device_bytes(), peak);
  }
}

// ---- the FP16 ring against a plain model of the store ---------------------------------

namespace {

// What one head of the store must hold: per kept token its position and the key/value it
// dequantises to (the input rounded through FP16, or the INT8 value of its frozen block).
struct model_token {
  int32_t pos;
  bool int8;
  std::vector<float> k, v;  // (head_dim,)
};

// INT8 of one block as the header specifies it (scale = amax / 127, q = round(x / scale)),
// written out here: x (32 tokens' rows) becomes q * scale.
void model_freeze(std::vector<std::vector<float>*>& rows, int64_t d) {
  for (int64_t c = 0; c < d; ++c) {
    float amax = 0.f;
    for (auto* r : rows) amax = std::max(amax, std::fabs((*r)[size_t(c)]));
    const float s = amax / 127.f;
    for (auto* r : rows) {
      float& x = (*r)[size_t(c)];
      x = s > 0.f ? float(int8_t(std::clamp(std::nearbyint(x / s), -127.f, 127.f))) * s : 0.f;
    }
  }
}

struct store_model {
  int64_t d = 0, window = 0;
  bool int8 = false;
  std::vector<std::vector<model_token>> heads;  // (n_kv,) kept tokens in order

  void quantize_old() {
    if (!int8) return;
    for (auto& h : heads)
      for (;;) {
        int64_t n8 = 0;
        while (n8 < int64_t(h.size()) && h[size_t(n8)].int8) ++n8;
        if (int64_t(h.size()) - n8 < window + kv_int8_block) break;
        for (int kv = 0; kv < 2; ++kv) {
          std::vector<std::vector<float>*> rows;
          for (int64_t t = n8; t < n8 + kv_int8_block; ++t) rows.push_back(kv ? &h[size_t(t)].v : &h[size_t(t)].k);
          model_freeze(rows, d);
        }
        for (int64_t t = n8; t < n8 + kv_int8_block; ++t) h[size_t(t)].int8 = true;
      }
  }
  void append(int64_t pos0, int64_t n, const std::vector<float>& k, const std::vector<float>& v) {
    const int64_t kv = int64_t(heads.size());
    for (int64_t g = 0; g < kv; ++g)
      for (int64_t t = 0; t < n; ++t) {
        model_token m{int32_t(pos0 + t), false, std::vector<float>(size_t(d)), std::vector<float>(size_t(d))};
        for (int64_t c = 0; c < d; ++c) {
          m.k[size_t(c)] = fp16_round(k[size_t((t * kv + g) * d + c)]);
          m.v[size_t(c)] = fp16_round(v[size_t((t * kv + g) * d + c)]);
        }
        heads[size_t(g)].push_back(std::move(m));
      }
  }
  void compact(const std::vector<std::vector<int32_t>>& keep) {
    for (size_t g = 0; g < heads.size(); ++g) {
      std::vector<model_token> kept;
      for (int32_t i : keep[g]) kept.push_back(heads[g][size_t(i)]);
      heads[g] = std::move(kept);
    }
  }
};

// Every head of layer 0 of s equals the model: positions, segment sizes, dequantised keys and
// values (exactly), and the attention spans of the view cover the same tokens and mass slots.
void expect_store_matches(kv_store& s, const store_model& m, const std::string& what, int64_t* wrapped) {
  const int64_t d = m.d;
  std::vector<float> key(static_cast<size_t>(d)), val(key.size());
  for (size_t g = 0; g < m.heads.size(); ++g) {
    const std::vector<model_token>& want = m.heads[g];
    const kv_head_view hv = s.head_view(0, int64_t(g));
    ASSERT_EQ(hv.n(), int64_t(want.size())) << what << " head " << g;
    int64_t n8 = 0;
    while (n8 < int64_t(want.size()) && want[size_t(n8)].int8) ++n8;
    ASSERT_EQ(hv.n_int8, n8) << what << " head " << g;
    if (hv.n_fp16b > 0) ++*wrapped;
    for (int64_t t = 0; t < hv.n(); ++t) {
      const model_token& w = want[size_t(t)];
      ASSERT_EQ(hv.pos[t], w.pos) << what << " head " << g << " t " << t;
      kv_load_key(hv, t, key.data());
      kv_load_value(hv, t, val.data());
      for (int64_t c = 0; c < d; ++c) {
        ASSERT_EQ(key[size_t(c)], w.k[size_t(c)]) << what << " head " << g << " t " << t << " c " << c;
        ASSERT_EQ(val[size_t(c)], w.v[size_t(c)]) << what << " head " << g << " t " << t << " c " << c;
      }
    }
    // The kernel's spans: the same tokens in the same order, mass at the same slots.
    const kv_attn_head ah = kv_attn_head_from_view(hv, true);
    ASSERT_EQ(ah.n_tokens(), hv.n()) << what;
    int64_t t = 0;
    for (const kv_span& sp : ah.spans)
      for (int64_t j = 0; j < sp.n; ++j, ++t) {
        ASSERT_EQ(sp.mass + j, hv.mass + t) << what << " head " << g << " t " << t;
        const model_token& w = want[size_t(t)];
        for (int64_t c = 0; c < d; ++c) {
          const float kx = sp.kq ? float(sp.kq[j * d + c]) * sp.k_scale[int64_t(sp.block[j]) * d + c]
                                 : fp16_to_fp32(sp.k16[j * d + c]);
          const float vx = sp.kq ? float(sp.vq[j * d + c]) * sp.v_scale[int64_t(sp.block[j]) * d + c]
                                 : fp16_to_fp32(sp.v16[j * d + c]);
          ASSERT_EQ(kx, w.k[size_t(c)]) << what << " span token " << t;
          ASSERT_EQ(vx, w.v[size_t(c)]) << what << " span token " << t;
        }
      }
  }
  ASSERT_EQ(s.device_bytes(), s.recount_device_bytes()) << what;
}

}  // namespace

// Randomised: appends of 1..40 tokens, compactions with random keep sets, sinks + window,
// prefix drops, one hole anywhere (both sides of the ring move), INT8 blocking and the
// shrinking large drops trigger; after every operation the store equals the model.
TEST(KvStore, Fp16RingMatchesModelThroughRandomOperations) {
  struct shape { int64_t d; bool int8; int64_t window; };
  for (const shape sh : {shape{32, false, 0}, shape{8, false, 0}, shape{32, true, 16}, shape{64, true, 40},
                         shape{32, true, 0}}) {
    const int64_t kv = 2, d = sh.d;
    kv_store s(cfg(1, kv, d, sh.int8, sh.window));
    store_model m{d, sh.window, sh.int8, std::vector<std::vector<model_token>>(size_t(kv))};
    std::mt19937 rng(uint32_t(100 + d + sh.window));
    int64_t pos = 0, wrapped = 0;
    for (int round = 0; round < 400; ++round) {
      const std::string what = "d=" + std::to_string(d) + (sh.int8 ? " int8" : "") + " round " + std::to_string(round);
      const int op = int(rng() % 8);
      if (op < 3 || s.n_kept(0, 0) == 0) {  // append
        const int64_t n = 1 + int64_t(rng() % 40);
        pos += int64_t(rng() % 3);  // positions may skip (as after a dropped chunk)
        auto k = random_rows(rng, n, kv * d), v = random_rows(rng, n, kv * d);
        s.append(0, pos, n, k.data(), v.data(), kv * d);
        m.append(pos, n, k, v);
        pos += n;
      } else if (op == 7) {
        s.quantize_old(0);
        m.quantize_old();
      } else {
        std::vector<std::vector<int32_t>> keep(static_cast<size_t>(kv));
        for (int64_t g = 0; g < kv; ++g) {
          const int32_t n = int32_t(s.n_kept(0, g));
          auto& ks = keep[size_t(g)];
          auto range = [&](int32_t a, int32_t b) { for (int32_t i = a; i < b; ++i) ks.push_back(i); };
          auto below = [&](int32_t x) { return int32_t(rng() % uint32_t(x + 1)); };  // 0..x
          if (op == 3) {  // random subset, from sparse (shrinks) to dense
            const uint32_t p = 1 + rng() % 10;
            for (int32_t i = 0; i < n; ++i)
              if (rng() % 10 < p) ks.push_back(i);
          } else if (op == 4) {  // sinks + the last W
            const int32_t sinks = std::min(n, below(6)), w = below(n - sinks);
            range(0, sinks);
            range(n - w, n);
          } else if (op == 5) {  // drop a prefix
            range(below(n), n);
          } else {  // one hole [a, b) anywhere
            const int32_t a = below(n), b = a + below(n - a);
            range(0, a);
            range(b, n);
          }
        }
        s.compact(0, keep);
        m.compact(keep);
      }
      expect_store_matches(s, m, what, &wrapped);
      if (HasFatalFailure()) return;
      if (s.n_kept(0, 0) > 600) {  // keep the test fast: drop a prefix
        std::vector<std::vector<int32_t>> keep(static_cast<size_t>(kv));
        for (int64_t g = 0; g < kv; ++g)
          for (int32_t i = int32_t(s.n_kept(0, g)) - 200; i < int32_t(s.n_kept(0, g)); ++i) keep[size_t(g)].push_back(i);
        s.compact(0, keep);
        m.compact(keep);
      }
    }
    EXPECT_GT(wrapped, 0) << "d=" << d << ": the ring never wrapped, the two-part view went untested";
  }
}

// Sliding window with sinks: each decode step appends one token and evicts the one after
// the sinks. The FP16 payload must not move (dense storage moved the whole window every
// step); only the sinks cross the hole. With INT8, freezing a block moves nothing either.
TEST(KvStore, WindowEvictionAndInt8BlockingMoveOnlyTheSinks) {
  const int64_t d = 32, kv = 2, sinks = 4, W = 256, steps = 300;
  std::mt19937 rng(21);
  {
    kv_store s(cfg(1, kv, d));
    store_model m{d, 0, false, std::vector<std::vector<model_token>>(size_t(kv))};
    auto k = random_rows(rng, sinks + W, kv * d), v = random_rows(rng, sinks + W, kv * d);
    s.append(0, 0, sinks + W, k.data(), v.data(), kv * d);
    m.append(0, sinks + W, k, v);
    int64_t wrapped = 0;
    for (int64_t step = 0; step < steps; ++step) {
      auto k1 = random_rows(rng, 1, kv * d), v1 = random_rows(rng, 1, kv * d);
      const int64_t pos = sinks + W + step;
      s.append(0, pos, 1, k1.data(), v1.data(), kv * d);
      m.append(pos, 1, k1, v1);
      std::vector<int32_t> keep;
      for (int32_t i = 0; i < sinks; ++i) keep.push_back(i);
      for (int32_t i = sinks + 1; i < sinks + W + 1; ++i) keep.push_back(i);
      const std::vector<std::vector<int32_t>> keeps(size_t(kv), keep);
      s.compact(0, keeps);
      m.compact(keeps);
      expect_store_matches(s, m, "window step " + std::to_string(step), &wrapped);
      if (HasFatalFailure()) return;
    }
    EXPECT_GT(wrapped, 0);
    EXPECT_EQ(s.fp16_tokens_moved(), steps * kv * sinks);  // dense: steps * kv * W
  }
  {
    kv_store s(cfg(1, kv, d, true, 64));
    store_model m{d, 64, true, std::vector<std::vector<model_token>>(size_t(kv))};
    int64_t wrapped = 0;
    for (int64_t pos = 0; pos < 500; ++pos) {
      auto k1 = random_rows(rng, 1, kv * d), v1 = random_rows(rng, 1, kv * d);
      s.append(0, pos, 1, k1.data(), v1.data(), kv * d);
      m.append(pos, 1, k1, v1);
      s.quantize_old(0);  // after each one-token forward call
      m.quantize_old();
    }
    expect_store_matches(s, m, "int8 blocking", &wrapped);
    EXPECT_EQ(s.head_view(0, 0).n_int8, 416);  // 13 blocks left the window of 64 (+31)
    EXPECT_EQ(s.fp16_tokens_moved(), 0);       // dense: 64..95 tokens per block frozen
  }
}
