// model-random.h: random-weight models of any shape (llama, qwen2, qwen3, phi3 with its fused
// attn_qkv and gate|up ffn_up, gpt2), written as GGUF files that both
// kvarena and llama.cpp load (tests, benchmarks, fixtures without downloading weights),
// and as llama.cpp-free llama2.c checkpoints with the same weights.
//
// Weights are bit-identical on every machine: an integer PRNG (splitmix64) per tensor,
// seeded from the spec's seed and the tensor's name, mapped to uniform floats with integer
// operations and one exact multiply (no libm), then converted with quantize_row_ref.
// Scales keep activations O(1) through many layers and give logits a spread of a few
// units; norm weights are 1 + noise and biases are nonzero, so an engine that skips any
// of them disagrees with the reference.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ggml-types.h"
#include "model.h"

namespace kvarena {

struct random_model_spec {
  model_arch arch = model_arch::llama;
  int64_t dim = 0;
  int64_t n_layers = 0;
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;  // 0: same as n_heads (gpt2 always uses n_heads)
  int64_t ffn_dim = 0;
  int64_t n_vocab = 0;     // >= 300 with a tokenizer (the synthetic vocabularies need room)
  int64_t n_ctx = 2048;
  ggml_type type = ggml_type::f32;  // 2-D matrices (incl. embeddings); norms/biases F32
  uint64_t seed = 0;
  float rope_freq_base = 10000.0f;
  float norm_eps = 1e-5f;
  bool tie_output = false;  // no output.weight: logits use token_embd
  // Multiplies the output projection's stddev (output.weight, or token_embd when tied), so
  // logits scale by it: 1 gives near-uniform next-token distributions (confidence ~0.26
  // on a 32K vocabulary), 2-4 a realistic spread of confident and unsure steps.
  float output_scale = 1.0f;
  // qwen2 only: scales the query/key bias std (0.05). Large values make every query share a
  // fixed direction, so adjacent decode steps' queries are similar (cosine ~0.85-0.95, as
  // FreeKV reports for trained models) and attention depends on relative position, where
  // random weights alone give near-independent queries: FreeKV's worst case.
  float qk_bias_scale = 1.0f;
  // llama/qwen2/qwen3: head width (attention.key_length/value_length) when nonzero; queries
  // are then n_heads * head_dim wide whatever dim is. 0: dim / n_heads (no key written).
  int64_t head_dim = 0;
  // llama/qwen2/qwen3 RoPE scaling: rope.scaling.type linear with this factor when nonzero;
  // rope_freqs writes Llama 3's rope_freqs.weight (rope_dims/2 divisors, uniform in ~[0.8, 4.2]).
  float rope_scale_linear = 0.0f;
  bool rope_freqs = false;
  bool with_tokenizer = true;  // false: weights and hyperparameters only (any n_vocab >= 1)
  // More metadata written as is (application keys such as kvarena.max_obs_tokens, kvarena.history).
  std::vector<std::pair<std::string, uint32_t>> extra_u32;
  std::vector<std::pair<std::string, std::string>> extra_strings;
};

// Throws engine_error describing the first problem (dims not divisible, odd head_dim,
// block-quantised type with dims not a multiple of 32, vocab too small, ...).
void validate_random_model_spec(const random_model_spec& spec);
// The hyperparameters a loader should read back from the written file.
model_config random_model_config(const random_model_spec& spec);

// One tensor of the model: GGUF name, ggml shape, stored type and how it is initialised.
struct random_tensor_plan {
  std::string name;
  std::vector<int64_t> ne;  // ne[0] contiguous: a (out, in) matrix is {in, out}
  ggml_type type;
  float mean;  // values are uniform with this mean and standard deviation
  float stddev;
};
std::vector<random_tensor_plan> random_model_tensors(const random_model_spec& spec);

// The F32 values of one planned tensor (before conversion to its stored type); the same
// for every machine, process and call. Throws engine_error for an unknown name.
std::vector<float> random_tensor_values(const random_model_spec& spec, const std::string& name);

struct random_model_summary {
  int64_t n_params = 0;
  uint64_t file_bytes = 0;
  size_t n_tensors = 0;
};
// Writes the GGUF file (weights, hyperparameters, a synthetic tokenizer).
random_model_summary write_random_model(const random_model_spec& spec, const std::string& path);

// A llama2.c checkpoint (.bin, legacy format) with the same weights as the F32 GGUF of the
// same spec: spec.arch must be llama; tie_output selects the shared classifier (positive
// vocab_size) or a separate one (negative vocab_size, output matrix at the end).
void write_llama2c_checkpoint(const random_model_spec& spec, const std::string& path);
// Same, from a model_config (the shape fields are used; rope/eps are llama2.c's fixed ones).
void write_llama2c_checkpoint(const model_config& config, uint64_t seed, const std::string& path,
                              bool shared_classifier = true);

// Synthetic tokenizers written into random models (also usable on their own in tests).
struct synthetic_vocab {
  std::string model;  // tokenizer.ggml.model: "llama" (SentencePiece) or "gpt2" (byte BPE)
  std::string pre;    // tokenizer.ggml.pre (BPE only): "gpt-2" or "qwen2"
  std::vector<std::string> tokens;
  std::vector<float> scores;        // SentencePiece only
  std::vector<int32_t> token_types; // 1 normal, 2 unknown, 3 control, 6 byte
  std::vector<std::string> merges;  // BPE only: "left right", rank = index
  int32_t bos_id = -1, eos_id = -1, unk_id = -1;
  bool add_bos = false;
};
// <unk> <s> </s>, <0x00>..<0xFF>, "▁", printable ASCII, common English pieces ("▁the",
// "ing", ...) reachable by pairwise merges, then generated letter pieces up to n_vocab.
synthetic_vocab make_spm_vocab(int64_t n_vocab);
// The 256 byte symbols in GPT-2 order, merged tokens with their merges (every merge's
// parts are tokens), and <|endoftext|> as the last token (BOS = EOS = n_vocab - 1).
synthetic_vocab make_bpe_vocab(int64_t n_vocab, const std::string& pre = "gpt-2");

}  // namespace kvarena
