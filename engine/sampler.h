// sampler.h: picks the next token from logits: greedy (argmax), or temperature with
// optional top-k and top-p (nucleus) filtering, drawn from a seeded PRNG so the same seed
// and logits give the same tokens on every machine. Order as in HF transformers:
// temperature, then top-k, then top-p, then one draw. Buffers are reused between calls.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

namespace kvarena {

struct sampler_options {
  float temperature = 0.0f;  // <= 0: greedy
  float top_p = 1.0f;        // (0, 1]: keep the smallest most-likely set with mass >= top_p
  int32_t top_k = 0;         // > 0: keep the k most likely tokens; 0: all
  uint64_t seed = 0;
};

struct token_prob {
  int32_t id;
  float p;
};

// Index of the largest value (the first one on ties).
int32_t argmax(const float* x, int64_t n);

class sampler {
 public:
  // Throws engine_error for options out of range (names the option and the range).
  explicit sampler(const sampler_options& opt = {});

  int32_t sample(const float* logits, int64_t n_vocab);

  // The tokens a non-greedy draw chooses from, most likely first, probabilities
  // renormalised to sum to 1 (exposed for tests and diagnostics).
  const std::vector<token_prob>& candidates(const float* logits, int64_t n_vocab);

  const sampler_options& options() const { return opt_; }
  bool greedy() const { return opt_.temperature <= 0.0f; }

 private:
  double uniform();  // [0, 1)

  sampler_options opt_;
  std::mt19937_64 rng_;
  std::vector<token_prob> cand_;  // (n_vocab,) reused
};

}  // namespace kvarena
