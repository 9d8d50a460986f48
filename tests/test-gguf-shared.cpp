// test-gguf-shared.cpp: the reader on the real GGUF files in ../shared/models (written by
// llama.cpp's and ollama's tools, not by us): every file parses, and known facts about
// each (counts, shapes, types, keys) come out right. Label: model.
#include <gtest/gtest.h>

#include <filesystem>

#include "gguf-reader.h"
#include "model.h"
#include "test-util.h"

using namespace kvarena;

namespace {
std::string shared(const std::string& name) { return test::shared_models_dir() + "/" + name; }
}  // namespace

TEST(GgufShared, EveryFileParses) {
  KVARENA_REQUIRE_SHARED_MODELS();
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(test::shared_models_dir())) {
    if (e.path().extension() != ".gguf") continue;
    ++n;
    gguf_file f(e.path().string());
    EXPECT_EQ(f.version(), 3u) << e.path();
    EXPECT_TRUE(f.get_string("general.architecture").has_value()) << e.path();
    EXPECT_TRUE(f.get_string_array("tokenizer.ggml.tokens") != nullptr) << e.path();
    for (const auto& t : f.tensors()) {
      EXPECT_EQ(size_t(t.data - f.mapping()->data()) % f.alignment(), 0u) << t.name;
      EXPECT_LE(size_t(t.data - f.mapping()->data()) + t.nbytes, f.file_size()) << t.name;
    }
  }
  EXPECT_EQ(n, 5);
}

TEST(GgufShared, TinyRandomLlama) {
  KVARENA_REQUIRE_SHARED_MODELS();
  gguf_file f(shared("llama-2-tiny-random.gguf"));
  EXPECT_EQ(f.tensors().size(), 12u);
  EXPECT_EQ(f.metadata().size(), 18u);
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_int("llama.embedding_length"), 8);
  EXPECT_EQ(f.get_int("llama.block_count"), 1);
  EXPECT_EQ(f.get_int("llama.feed_forward_length"), 32);
  EXPECT_EQ(f.get_int("llama.attention.head_count"), 2);
  EXPECT_EQ(f.get_int("llama.rope.dimension_count"), 4);
  EXPECT_EQ(f.get_int("llama.context_length"), 4096);
  EXPECT_FLOAT_EQ(float(*f.get_float("llama.attention.layer_norm_rms_epsilon")), 1e-5f);
  EXPECT_EQ(f.find("llama.embedding_length")->type, gguf_vtype::u32);
  const tensor_view* e = f.find_tensor("token_embd.weight");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->type, ggml_type::f16);
  EXPECT_EQ(e->n_dims, 2);
  EXPECT_EQ(e->ne[0], 8);
  EXPECT_EQ(e->ne[1], 32000);
  EXPECT_EQ(e->nbytes, 8u * 32000 * 2);
  EXPECT_EQ(f.tensors()[0].name, "token_embd.weight");
  EXPECT_EQ(f.find_tensor("blk.0.ffn_down.weight")->ne[0], 32);
  EXPECT_EQ(f.find_tensor("blk.0.ffn_down.weight")->ne[1], 8);
  EXPECT_EQ(f.find_tensor("output_norm.weight")->type, ggml_type::f32);
  EXPECT_EQ(f.find_tensor("output_norm.weight")->n_dims, 1);
  const auto* tokens = f.get_string_array("tokenizer.ggml.tokens");
  ASSERT_NE(tokens, nullptr);
  EXPECT_EQ(tokens->size(), 32000u);
  EXPECT_EQ((*tokens)[1], "<s>");
  EXPECT_EQ(f.get_int("tokenizer.ggml.bos_token_id"), 1);

  // And the model loader takes it as a complete llama model.
  const auto m = load_model(shared("llama-2-tiny-random.gguf"));
  EXPECT_EQ(m->config.dim, 8);
  EXPECT_EQ(m->config.n_vocab, 32000);
  EXPECT_EQ(m->config.rope_dims, 4);
  EXPECT_NE(m->output.data, m->tok_embd.data);
}

TEST(GgufShared, VocabularyFiles) {
  KVARENA_REQUIRE_SHARED_MODELS();
  struct fact {
    const char* file;
    const char* model;
    const char* pre;  // "" when the key is absent
    size_t n_tokens, n_merges;
    int64_t bos, eos;
  };
  for (const fact& x : {fact{"ggml-vocab-gpt-2.gguf", "gpt2", "gpt-2", 50257, 50000, 50256, 50256},
                        fact{"ggml-vocab-llama-spm.gguf", "llama", "default", 32000, 0, 1, 2},
                        fact{"ggml-vocab-qwen2.gguf", "gpt2", "qwen2", 151936, 151387, 151643, 151643},
                        fact{"ggml-vocab-llama-bpe.gguf", "gpt2", "llama-bpe", 128256, 280147, 128000, 128001}}) {
    gguf_file f(shared(x.file));
    EXPECT_TRUE(f.tensors().empty()) << x.file;
    EXPECT_EQ(f.get_string("tokenizer.ggml.model"), x.model) << x.file;
    EXPECT_EQ(f.get_string("tokenizer.ggml.pre").value_or(""), x.pre) << x.file;
    const auto* tokens = f.get_string_array("tokenizer.ggml.tokens");
    ASSERT_NE(tokens, nullptr) << x.file;
    EXPECT_EQ(tokens->size(), x.n_tokens) << x.file;
    EXPECT_EQ(f.get_int_array("tokenizer.ggml.token_type")->size(), x.n_tokens) << x.file;
    const auto* merges = f.get_string_array("tokenizer.ggml.merges");
    EXPECT_EQ(merges ? merges->size() : 0u, x.n_merges) << x.file;
    EXPECT_EQ(f.get_int("tokenizer.ggml.bos_token_id"), x.bos) << x.file;
    EXPECT_EQ(f.get_int("tokenizer.ggml.eos_token_id"), x.eos) << x.file;
  }
  gguf_file gpt2(shared("ggml-vocab-gpt-2.gguf"));
  EXPECT_EQ((*gpt2.get_string_array("tokenizer.ggml.tokens"))[0], "!");
  EXPECT_EQ((*gpt2.get_string_array("tokenizer.ggml.merges"))[0], "\xc4\xa0 t");
  EXPECT_EQ(gpt2.get_int("gpt2.context_length"), 1024);
  gguf_file spm(shared("ggml-vocab-llama-spm.gguf"));
  EXPECT_EQ(spm.get_float_array("tokenizer.ggml.scores")->size(), 32000u);
  EXPECT_EQ(spm.get_bool("tokenizer.ggml.add_bos_token"), true);
  EXPECT_EQ((*spm.get_int_array("tokenizer.ggml.token_type"))[0], 2);
  gguf_file bpe(shared("ggml-vocab-llama-bpe.gguf"));
  EXPECT_FLOAT_EQ(float(*bpe.get_float("llama.rope.freq_base")), 500000.0f);
  gguf_file qwen(shared("ggml-vocab-qwen2.gguf"));
  EXPECT_TRUE(qwen.get_string("tokenizer.chat_template").has_value());
}
