// fuzz-gguf-seeds.cpp: writes the seed corpus for fuzz-gguf into DIR: small valid models
// of each architecture and tensor type (with and without a tokenizer), a file with every
// metadata value type, and llama2.c checkpoints. Deterministic: same files every run.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include "gguf-writer.h"
#include "model-random.h"

using namespace kvarena;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  try {
    std::filesystem::create_directories(dir);
    auto spec = [](model_arch arch, ggml_type type, int64_t dim) {
      random_model_spec s;
      s.arch = arch;
      s.dim = dim;
      s.n_layers = 1;
      s.n_heads = 2;
      s.n_kv_heads = arch == model_arch::gpt2 ? 2 : 1;
      s.ffn_dim = dim;
      s.n_vocab = 8;
      s.n_ctx = 4;
      s.type = type;
      s.seed = 1;
      s.with_tokenizer = false;
      return s;
    };
    write_random_model(spec(model_arch::llama, ggml_type::f32, 8), (dir / "seed-llama-f32.gguf").string());
    write_random_model(spec(model_arch::llama, ggml_type::f16, 8), (dir / "seed-llama-f16.gguf").string());
    write_random_model(spec(model_arch::qwen2, ggml_type::q8_0, 32), (dir / "seed-qwen2-q8_0.gguf").string());
    write_random_model(spec(model_arch::gpt2, ggml_type::q4_0, 32), (dir / "seed-gpt2-q4_0.gguf").string());
    auto tied = spec(model_arch::gpt2, ggml_type::bf16, 8);
    tied.tie_output = true;
    write_random_model(tied, (dir / "seed-gpt2-bf16-tied.gguf").string());
    auto with_vocab = spec(model_arch::llama, ggml_type::f16, 8);
    with_vocab.n_vocab = 300;
    with_vocab.with_tokenizer = true;
    write_random_model(with_vocab, (dir / "seed-llama-vocab.gguf").string());

    gguf_writer w;  // every metadata value type, incl. a nested array
    w.set_u8("u8", 1);
    w.set_i8("i8", -1);
    w.set_u16("u16", 2);
    w.set_i16("i16", -2);
    w.set_u32("u32", 3);
    w.set_i32("i32", -3);
    w.set_u64("u64", 4);
    w.set_i64("i64", -4);
    w.set_f32("f32", 0.5f);
    w.set_f64("f64", 0.25);
    w.set_bool("bool", true);
    w.set_string("str", "s");
    w.set_string_array("strs", {"a", "b"});
    w.set_f32_array("f32s", {1, 2});
    w.set_i32_array("i32s", {1, 2});
    w.set_raw("nested", gguf_vtype::array, {9, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 7});
    w.add_tensor_f32("t", ggml_type::f32, {2, 1, 1, 1}, {1, 2});
    w.write((dir / "seed-values.gguf").string());

    auto ck = spec(model_arch::llama, ggml_type::f32, 8);
    write_llama2c_checkpoint(ck, (dir / "seed-llama2c-separate.bin").string());
    ck.tie_output = true;
    write_llama2c_checkpoint(ck, (dir / "seed-llama2c-shared.bin").string());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz-gguf-seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
