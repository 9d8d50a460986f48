// tiny-model-spec.h: the tiny random llama most engine and agent tests run on (64 dims, 2
// layers, 4 query heads over 2 KV heads, F32 weights); each suite picks its vocabulary
// size, context and seed, and changes the rest where it tests something else.
#pragma once
#include <cstdint>

#include "model-random.h"

namespace kvarena::test {

inline random_model_spec tiny_llama_spec(int64_t n_vocab, int64_t n_ctx, uint64_t seed, int64_t ffn_dim = 128) {
  random_model_spec s;
  s.arch = model_arch::llama;
  s.dim = 64;
  s.n_layers = 2;
  s.n_heads = 4;
  s.n_kv_heads = 2;
  s.ffn_dim = ffn_dim;
  s.n_vocab = n_vocab;
  s.n_ctx = n_ctx;
  s.type = ggml_type::f32;
  s.seed = seed;
  return s;
}

}  // namespace kvarena::test
