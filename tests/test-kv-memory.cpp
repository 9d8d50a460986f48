// test-kv-memory.cpp: the logical KV bytes (engine/kv/kv-logical-bytes.h) a session reports,
// against values worked out by hand, and their independence from the prefill chunk.
// The model of issue 13's measurements: llama, dim 256, 2 layers, 4 KV heads of 64 (no
// GQA), a 3,000-token prompt and 16 decode steps (3,016 tokens). Per layer and KV head:
//   FP16 token (K + V)   2 * 64 * 2 = 256 bytes
//   INT8 token (K + V)   2 * 64     = 128 bytes
//   INT8 block scales    2 * 64 * 4 = 512 bytes per 32 tokens
//   score (h2o, confkv)               4 bytes per kept token
//   2 layers * 4 heads = 8 heads.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "engine-error.h"
#include "kv/kv-budget.h"
#include "kv/kv-logical-bytes.h"
#include "model-random.h"
#include "model.h"
#include "session.h"
#include "test-util.h"

namespace kvarena {
namespace {

constexpr int64_t k_prompt = 3000, k_gen = 16;

const model& issue_model() {
  static std::unique_ptr<model> m = [] {
    random_model_spec s;
    s.arch = model_arch::llama;
    s.dim = 256;
    s.n_layers = 2;
    s.n_heads = 4;
    s.n_kv_heads = 4;
    s.ffn_dim = 256;
    s.n_vocab = 512;
    s.n_ctx = 4096;
    s.seed = 13;
    s.with_tokenizer = false;
    const std::string path = (test::temp_dir("kv-memory") / "m.gguf").string();
    write_random_model(s, path);
    return load_model(path);
  }();
  return *m;
}

std::vector<int32_t> ids(int64_t n, uint64_t seed) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& v : t) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    v = int32_t(x % 512);
  }
  return t;
}

// The prompt in chunks of `chunk`, then k_gen teacher-forced decode steps; the peak and
// the final logical bytes.
struct measured {
  size_t peak = 0, final = 0;
};
measured run(const std::string& policy, const kv_policy_options& o, int64_t chunk) {
  session_options so;
  so.n_threads = 2;
  so.n_ctx = 4096;
  so.prefill_chunk = chunk;
  so.kv_policy = policy;
  so.kv = o;
  session s(issue_model(), so);
  s.append(ids(k_prompt, 1));
  for (int32_t t : ids(k_gen, 2)) s.append_decode(t);
  const memory_stats m = s.memory();
  std::printf("%s chunk %lld: logical peak %zu, now %zu; allocated peak %zu\n", policy.c_str(), (long long)chunk,
              m.kv_logical_peak_bytes, m.kv_logical_bytes, m.kv_peak_bytes);
  return {m.kv_logical_peak_bytes, m.kv_logical_bytes};
}

const int64_t k_chunks[] = {32, 128, 512};

TEST(KvLogicalBytes, WindowIs512TokensWhateverTheChunk) {
  kv_policy_options o;
  o.window = 512, o.sinks = 0;
  for (int64_t c : k_chunks) {
    const measured r = run("window", o, c);
    EXPECT_EQ(r.peak, 1048576u) << "8 heads * 512 tokens * 256 bytes, chunk " << c;
    EXPECT_EQ(r.final, 1048576u);
  }
}

TEST(KvLogicalBytes, FullIsEveryTokenWithoutGrowthSteps) {
  for (int64_t c : k_chunks) {
    const measured r = run("full", kv_policy_options{}, c);
    EXPECT_EQ(r.peak, 6176768u) << "8 heads * 3016 tokens * 256 bytes, chunk " << c;
  }
}

TEST(KvLogicalBytes, H2oCountsItsScoreColumn) {
  kv_policy_options o;
  o.heavy = 256, o.recent = 256;
  for (int64_t c : k_chunks) {
    const measured r = run("h2o", o, c);
    EXPECT_EQ(r.peak, 1064960u) << "8 heads * 512 tokens * (256 + 4) bytes, chunk " << c;
  }
}

TEST(KvLogicalBytes, ConfkvAtItsLooseBudget) {
  kv_policy_options o;
  o.tau = 1.f;  // no step is that confident: the budget is n_low throughout
  o.n_high = 256, o.n_low = 1024;
  for (int64_t c : k_chunks) {
    const measured r = run("confkv", o, c);
    EXPECT_EQ(r.peak, 2129920u) << "8 heads * 1024 tokens * (256 + 4) bytes, chunk " << c;
  }
}

// No eviction (n_low above the sequence), so the split is fixed by the INT8 rule alone: a
// block of the 32 oldest FP16 tokens freezes whenever 128 + 32 are FP16. After n tokens
// 32k are INT8 with 128 <= n - 32k <= 159. The peak is at n = 3007, just before the
// freeze at 3008: 159 FP16, 2848 INT8 in 89 blocks, 3007 scores per head:
//   159*256 + 2848*128 + 89*512 + 3007*4 = 40704 + 364544 + 45568 + 12028 = 462844
// (the end, n = 3016: 136 FP16, 2880 INT8, 90 blocks = 461600; every prefill chunk ends
// lower). 8 heads: 3702752.
TEST(KvLogicalBytes, ConfkvInt8IsFp16WindowPlusInt8BlocksPlusScales) {
  kv_policy_options o;
  o.tau = 1.f;
  o.n_high = 4096, o.n_low = 4096;
  o.int8 = true, o.int8_window = 128;
  for (int64_t c : k_chunks) {
    const measured r = run("confkv", o, c);
    EXPECT_EQ(r.peak, 3702752u) << "chunk " << c;
    EXPECT_EQ(r.final, 8u * 461600u) << "chunk " << c;
  }
}

// With eviction at 1024 tokens INT8 takes the figure well under FP16's 1024 * 260 bytes
// per head. By hand: at least the 64 protected tokens are FP16 and at most 159; an INT8
// token costs 128 + 4 bytes and its block's scales 512 / 32 = 16 bytes more when the
// block is full, so with 159 FP16 and 865 INT8 tokens in 28 full blocks:
//   159*256 + 865*132 + 28*512 = 40704 + 114180 + 14336 = 169220 (64% of 266240).
// Eviction inside frozen blocks leaves their scales for fewer tokens (a block's scale
// row stays while one of its tokens does), so the figure sits a little above that
// (measured 67%); the claim tested is "INT8 saves at least a quarter". The least: 64
// FP16, 960 INT8 in 30 blocks: 16384 + 126720 + 15360 = 158464 (60%).
TEST(KvLogicalBytes, ConfkvInt8SavesAtLeastAQuarterOfTheFp16Figure) {
  kv_policy_options o;
  o.tau = 1.f;
  o.n_high = 256, o.n_low = 1024;
  o.int8 = true, o.int8_window = 128;
  const measured r = run("confkv", o, 128);
  EXPECT_GE(r.peak, 8u * 158464u);
  EXPECT_LT(double(r.peak), 0.75 * 2129920.0);
}

// The plain F32 cache (no policy): every token, 4-byte values.
TEST(KvLogicalBytes, PlainCacheCountsF32) {
  for (int64_t c : {int64_t(64), int64_t(512)}) {
    const measured r = run("", kv_policy_options{}, c);
    EXPECT_EQ(r.peak, 3016u * 8u * 512u) << "8 heads * 3016 tokens * 2 * 64 * 4 bytes";
  }
}

// The formula on counts the CUDA runtime also feeds (cuda-kv-runtime.cpp), by hand.
TEST(KvLogicalBytes, HeadFormulaByHand) {
  kv_logical_layout L;
  L.head_dim = 64, L.page = 32, L.state_bytes_per_token = 0;
  kv_head_counts c;
  c.fp16 = 10;  // 10 * 256
  c.int8 = 64;  // 64 * 128
  c.int8_blocks = 2;  // 2 * 512
  EXPECT_EQ(kv_logical_head_bytes(L, c), 2560u + 8192u + 1024u);
  c = {};
  c.pages = 3, c.digests = 7;  // 3 pages * 32 tokens * 256 + 7 digests * (2 * 64 * 2)
  EXPECT_EQ(kv_logical_head_bytes(L, c), 24576u + 1792u);
  L.state_bytes_per_token = 4;
  c = {};
  c.fp16 = 5, c.int8 = 3;
  EXPECT_EQ(kv_logical_head_bytes(L, c), 5u * 256u + 3u * 128u + 8u * 4u);
}

// ---- --kv-budget: equal memory ----

kv_policy_options issue_shape() {
  kv_policy_options o;
  o.n_layers = 2, o.n_heads = 4, o.n_kv_heads = 4, o.head_dim = 64;
  return o;
}

kv_policy_spec spec(const std::string& name, kv_policy_options o = {}) {
  kv_policy_spec p;
  p.text = p.name = name;
  p.options = o;
  return p;
}

TEST(KvBudget, ParsesTokensAndBytes) {
  EXPECT_EQ(parse_kv_budget("512t").tokens, 512);
  EXPECT_EQ(parse_kv_budget("8MiB").bytes, 8u << 20);
  EXPECT_EQ(parse_kv_budget("64KiB").bytes, 65536u);
  EXPECT_EQ(parse_kv_budget("1048576").bytes, 1048576u);
  EXPECT_EQ(parse_kv_budget("2MB").bytes, 2000000u);
  const std::vector<kv_budget> sweep = parse_kv_budgets("256t,512t,1024t");
  ASSERT_EQ(sweep.size(), 3u);
  EXPECT_EQ(sweep[2].tokens, 1024);
  for (const char* bad : {"", "t", "0t", "512x", "-5t", "1.5MiB", "256t,,512t"})
    EXPECT_THROW(parse_kv_budgets(bad), engine_error) << bad;
}

// 512 tokens per layer and KV head, spent by hand:
//   window: sinks 0 + window 512; h2o: heavy 256 + recent 256; confkv: n_low 512, n_high
//   512 / 4 = 128; freekv over 3016 tokens: ceil(3016 / 32) = 95 digests (one FP16 token's
//   bytes each) leave 417, whole pages 416 kept after a step, B = 416 + one page of new
//   tokens = 448, sinks = window = 416 / 4 = 104 -> 96.
TEST(KvBudget, TokensAreSpentAsEachPolicySpendsThem) {
  const kv_budget b = parse_kv_budget("512t");
  const int64_t n = k_prompt + k_gen;
  EXPECT_EQ(apply_kv_budget(spec("window"), b, issue_shape(), n).options.window, 512);
  const kv_policy_options h = apply_kv_budget(spec("h2o"), b, issue_shape(), n).options;
  EXPECT_EQ(h.heavy, 256);
  EXPECT_EQ(h.recent, 256);
  const kv_policy_options c = apply_kv_budget(spec("confkv"), b, issue_shape(), n).options;
  EXPECT_EQ(c.n_low, 512);
  EXPECT_EQ(c.n_high, 128);
  const kv_policy_options f = apply_kv_budget(spec("freekv"), b, issue_shape(), n).options;
  EXPECT_EQ(f.budget, 448);
  EXPECT_EQ(f.sinks, 96);
  EXPECT_EQ(f.window, 96);
  EXPECT_EQ(apply_kv_budget(spec("full"), b, issue_shape(), n).options.window, kv_policy_options{}.window);
  EXPECT_THROW(apply_kv_budget(spec("freekv"), parse_kv_budget("150t"), issue_shape(), n), engine_error)
      << "150 - 95 = 55 tokens: under 2 pages";
}

// Measured through sessions: equal logical peaks within one page of tokens (32 * 256 bytes
// * 8 heads = 65536) of the 512-token window's 1048576; the score column of h2o and confkv
// adds 8 * 512 * 4 = 16384.
TEST(KvBudget, EqualTokenBudgetsGiveEqualLogicalPeaks) {
  const kv_budget b = parse_kv_budget("512t");
  for (const char* name : {"window", "h2o", "confkv", "confkv-l", "freekv"}) {
    const kv_policy_spec p = apply_kv_budget(spec(name), b, issue_shape(), k_prompt + k_gen);
    const measured r = run(name, p.options, 128);
    EXPECT_LE(r.peak, 1048576u + 16384u) << name;
    EXPECT_GE(r.peak, 1048576u - 65536u) << name;
  }
}

// 1 MiB = 1048576 bytes = 131072 per head. window: 256 bytes a token -> 512 tokens. h2o:
// 260 a token with its score -> 504 (504 * 260 = 131040; 505 * 260 = 131300). confkv with
// INT8 (window 128): t tokens cost per head at most min(t, 159) * 260 (FP16 + score) +
// (t - 159) * 132 (INT8 + score) + ceil((t - 159) / 32) * 512 (scales); t = 765: 41340 +
// 606 * 132 + 19 * 512 = 41340 + 79992 + 9728 = 131060 fits, t = 766: 41340 + 80124 + 9728
// = 131192 does not.
TEST(KvBudget, BytesBuyMoreTokensInInt8) {
  const kv_budget b = parse_kv_budget("1MiB");
  const int64_t n = k_prompt + k_gen;
  EXPECT_EQ(apply_kv_budget(spec("window"), b, issue_shape(), n).options.window, 512);
  EXPECT_EQ(apply_kv_budget(spec("h2o"), b, issue_shape(), n).options.heavy, 252);
  kv_policy_options int8;
  int8.int8 = true;
  int8.int8_window = 128;
  EXPECT_EQ(apply_kv_budget(spec("confkv", int8), b, issue_shape(), n).options.n_low, 765);
  EXPECT_EQ(kv_logical_peak_bound("confkv", [] {
              kv_policy_options o = issue_shape();
              o.int8 = true, o.int8_window = 128, o.n_low = 765, o.n_high = 191, o.tau = 0.6f;
              return o;
            }(), n),
            8u * 131060u);
}

}  // namespace
}  // namespace kvarena
