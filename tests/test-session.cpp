// test-session.cpp: the session API on small random models: append/logits/n_past, bad
// input (token id out of range, context overflow) as engine_error naming the values,
// reset, decode_next, memory accounting, and generate (stop strings, EOS, length, full
// context) with a fake tokenizer whose pieces make the expected text easy to state.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine-error.h"
#include "model-random.h"
#include "model.h"
#include "sampler.h"
#include "session.h"
#include "test-util.h"
#include "tiny-model-spec.h"
#include "tokenizer.h"

namespace kvarena {
namespace {

// Pieces are "[id]" so that texts and stop strings are easy to write down.
class bracket_tokenizer : public tokenizer {
 public:
  explicit bracket_tokenizer(int64_t n_vocab, int32_t eos = -1) : n_vocab_(n_vocab), eos_(eos) {}
  std::vector<int32_t> encode(std::string_view, bool, bool) const override { return {1, 2, 3}; }
  std::string token_to_piece(int32_t id) const override {
    std::string s(1, '[');
    s += std::to_string(id);
    s += ']';
    return s;
  }
  std::string decode(const std::vector<int32_t>& ids) const override {
    std::string s;
    for (int32_t id : ids) s += token_to_piece(id);
    return s;
  }
  int64_t n_vocab() const override { return n_vocab_; }
  int32_t bos_id() const override { return 1; }
  int32_t eos_id() const override { return eos_; }
  bool adds_bos() const override { return true; }
  bool is_control(int32_t id) const override { return id == eos_; }

 private:
  int64_t n_vocab_;
  int32_t eos_;
};

class Session : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const random_model_spec s = test::tiny_llama_spec(/*n_vocab=*/320, /*n_ctx=*/512, /*seed=*/17);
    const std::string path = (test::temp_dir("session") / "m.gguf").string();
    write_random_model(s, path);
    model_ = load_model(path).release();
  }
  static void TearDownTestSuite() { delete model_; }
  static model* model_;
};
model* Session::model_ = nullptr;

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const engine_error& e) {
    return e.what();
  }
  return "";
}

TEST_F(Session, AppendCountsAndLogitsFollow) {
  session s(*model_);
  EXPECT_EQ(s.n_past(), 0);
  EXPECT_EQ(s.n_ctx(), 512);  // 0 means the model's context length
  EXPECT_THROW(s.logits(), engine_error);
  s.append(std::vector<int32_t>{1, 2, 3});
  EXPECT_EQ(s.n_past(), 3);
  const std::vector<float> after3(s.logits(), s.logits() + s.n_vocab());
  s.append(std::vector<int32_t>{});
  EXPECT_EQ(s.n_past(), 3);
  s.append(std::vector<int32_t>{4});
  EXPECT_EQ(s.n_past(), 4);
  EXPECT_NE(std::vector<float>(s.logits(), s.logits() + s.n_vocab()), after3);
  s.reset();
  EXPECT_EQ(s.n_past(), 0);
  s.append(std::vector<int32_t>{1, 2, 3});
  EXPECT_EQ(std::vector<float>(s.logits(), s.logits() + s.n_vocab()), after3);
}

TEST_F(Session, TokenOutOfRangeNamesIdAndVocab) {
  session s(*model_);
  const std::string e = error_of([&] { s.append(std::vector<int32_t>{5, 320, 6}); });
  EXPECT_NE(e.find("320"), std::string::npos) << e;
  EXPECT_NE(e.find("n_vocab = 320"), std::string::npos) << e;
  EXPECT_EQ(s.n_past(), 0);  // nothing appended
  EXPECT_NE(error_of([&] { s.append(std::vector<int32_t>{-1}); }).find("-1"), std::string::npos);
}

TEST_F(Session, ContextOverflowIsAnError) {
  session_options o;
  o.n_ctx = 10;
  session s(*model_, o);
  s.append(std::vector<int32_t>(8, 7));
  const std::string e = error_of([&] { s.append(std::vector<int32_t>(3, 7)); });
  EXPECT_NE(e.find("context overflow"), std::string::npos) << e;
  EXPECT_NE(e.find("n_ctx = 10"), std::string::npos) << e;
  EXPECT_EQ(s.n_past(), 8);
  s.append(std::vector<int32_t>(2, 7));  // exactly full is fine
  EXPECT_EQ(s.n_past(), 10);
}

TEST_F(Session, BadOptionsAreErrors) {
  session_options o;
  o.n_threads = 0;
  EXPECT_THROW(session(*model_, o), engine_error);
  o.n_threads = 1;
  o.prefill_chunk = 0;
  EXPECT_THROW(session(*model_, o), engine_error);
}

TEST_F(Session, DecodeNextAppendsTheSampledToken) {
  session a(*model_), b(*model_);
  a.append(std::vector<int32_t>{1, 5, 9});
  b.append(std::vector<int32_t>{1, 5, 9});
  sampler greedy;
  for (int i = 0; i < 5; ++i) {
    const int32_t want = argmax(a.logits(), a.n_vocab());
    const int32_t got = a.decode_next(greedy);
    EXPECT_EQ(got, want);
    b.append(std::vector<int32_t>{got});
    EXPECT_EQ(std::vector<float>(a.logits(), a.logits() + a.n_vocab()),
              std::vector<float>(b.logits(), b.logits() + b.n_vocab()));
  }
  EXPECT_EQ(a.n_past(), 8);
}

TEST_F(Session, MemoryIsAccounted) {
  session_options o;
  o.prefill_chunk = 64;
  session s(*model_, o);
  const memory_stats m0 = s.memory();
  EXPECT_EQ(m0.weights_bytes, model_->weight_bytes());
  EXPECT_GT(m0.scratch_bytes, 0u);
  EXPECT_EQ(m0.kv_bytes, 0u);
  s.append(std::vector<int32_t>(10, 3));
  const memory_stats m1 = s.memory();
  // The plain cache is `full` over an F32 kv_store. Per token, layer and KV head it holds
  // K and V (2 x 16 dims x 4 bytes) + position, score, mass (3 x 4 bytes) = 140 bytes; 2
  // layers x 2 KV heads = 560 bytes per token. Room for 32 tokens at first (blocks of 32).
  EXPECT_EQ(m1.kv_bytes, 32u * 560u);
  // Logical bytes count only the live tokens' F32 K and V: 10 x 4 x 128.
  EXPECT_EQ(m1.kv_logical_bytes, 10u * 4u * 128u);
  EXPECT_EQ(m1.scratch_bytes, m0.scratch_bytes);
  s.append(std::vector<int32_t>(300, 3));  // chunks of 64: grows by a quarter, blocks of 32
  const memory_stats m2 = s.memory();
  // 74 -> 96, 138 -> 160, 202 -> 224, 266 -> 288 (a quarter over 224 is 280), 310 -> 384 (360).
  EXPECT_EQ(m2.kv_bytes, 384u * 560u);
  EXPECT_EQ(m2.kv_logical_bytes, 310u * 4u * 128u);
  EXPECT_GE(m2.kv_peak_bytes, m2.kv_bytes);
  EXPECT_EQ(m2.peak_total_bytes, m2.weights_bytes + m2.kv_peak_bytes + m2.scratch_bytes);
  sampler g;
  for (int i = 0; i < 5; ++i) s.decode_next(g);
  EXPECT_EQ(s.memory().scratch_bytes, m2.scratch_bytes);  // decode allocates no scratch
  s.reset();  // a new sequence: its cache and its peaks start again
  EXPECT_EQ(s.memory().kv_bytes, 0u);
  EXPECT_EQ(s.memory().kv_peak_bytes, 0u);
  EXPECT_EQ(s.memory().kv_logical_peak_bytes, 0u);
}

// Greedy continuation of {1, 2, 3} without any stop: the reference for the tests below.
std::vector<int32_t> greedy_tokens(const model& m, int n) {
  session s(m);
  bracket_tokenizer tok(m.config.n_vocab);
  sampler g;
  generate_options o;
  o.max_tokens = n;
  const auto r = s.generate(tok, std::vector<int32_t>{1, 2, 3}, o, g);
  EXPECT_EQ(r.stop_reason, "length");
  EXPECT_EQ(int(r.tokens.size()), n);
  EXPECT_EQ(s.n_past(), 3 + n);
  return r.tokens;
}

TEST_F(Session, GenerateStopsAtStopStringAndCutsIt) {
  const auto t = greedy_tokens(*model_, 8);
  bracket_tokenizer tok(model_->config.n_vocab);
  // A stop string that straddles the pieces of tokens 2 and 3: "]" + "[t3".
  const std::string stop = "][" + std::to_string(t[3]);
  session s(*model_);
  sampler g;
  generate_options o;
  o.max_tokens = 8;
  o.stop = {"never-there", stop};
  const auto r = s.generate(tok, std::vector<int32_t>{1, 2, 3}, o, g);
  EXPECT_EQ(r.stop_reason, "stop");
  EXPECT_EQ(r.text, tok.decode({t[0], t[1]}) + "[" + std::to_string(t[2]));
  EXPECT_EQ(r.tokens, std::vector<int32_t>(t.begin(), t.begin() + 4));
  EXPECT_EQ(r.n_prompt, 3);
}

TEST_F(Session, GenerateStopsAtEos) {
  const auto t = greedy_tokens(*model_, 6);
  // Make the third greedy token the EOS (if it also appears earlier, the first one wins).
  size_t first = 0;
  while (t[first] != t[2]) ++first;
  bracket_tokenizer tok(model_->config.n_vocab, t[2]);
  session s(*model_);
  sampler g;
  generate_options o;
  o.max_tokens = 6;
  const auto r = s.generate(tok, std::vector<int32_t>{1, 2, 3}, o, g);
  EXPECT_EQ(r.stop_reason, "eos");
  EXPECT_EQ(r.tokens, std::vector<int32_t>(t.begin(), t.begin() + long(first)));
  EXPECT_EQ(s.n_past(), 3 + int64_t(first));  // EOS is not appended
}

TEST_F(Session, GenerateStopsWhenTheContextIsFull) {
  session_options so;
  so.n_ctx = 6;
  session s(*model_, so);
  bracket_tokenizer tok(model_->config.n_vocab);
  sampler g;
  generate_options o;
  o.max_tokens = 10;
  const auto r = s.generate(tok, std::vector<int32_t>{1, 2, 3}, o, g);
  EXPECT_EQ(r.stop_reason, "context");
  EXPECT_EQ(r.tokens.size(), 3u);
  EXPECT_EQ(s.n_past(), 6);
}

TEST_F(Session, SeededSamplingIsReproducible) {
  bracket_tokenizer tok(model_->config.n_vocab);
  generate_options o;
  o.max_tokens = 12;
  std::vector<std::vector<int32_t>> runs;
  for (uint64_t seed : {4ull, 4ull, 5ull}) {
    session s(*model_);
    sampler smp({1.5f, 0.95f, 0, seed});
    runs.push_back(s.generate(tok, std::vector<int32_t>{1, 2, 3}, o, smp).tokens);
  }
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_NE(runs[0], runs[2]);
}

TEST_F(Session, AllLogitsKeepsEveryPosition) {
  session_options o;
  o.all_logits = true;
  o.prefill_chunk = 4;
  session s(*model_, o);
  s.append(std::vector<int32_t>{1, 2, 3, 4, 5, 6});
  s.append(std::vector<int32_t>{7});
  const int64_t V = s.n_vocab();
  ASSERT_EQ(s.all_logits().size(), size_t(7 * V));
  session last(*model_);
  last.append(std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7});
  for (int64_t v = 0; v < V; ++v) EXPECT_NEAR(s.all_logits()[size_t(6 * V + v)], last.logits()[v], 1e-5);
  EXPECT_EQ(s.logits(), s.all_logits().data() + 6 * V);
}

}  // namespace
}  // namespace kvarena
