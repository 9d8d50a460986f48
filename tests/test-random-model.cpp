// test-random-model.cpp: random-weight models (engine/model/model-random.h): every
// architecture and type loads; bytes identical everywhere (FNV-1a of the file); the planned
// statistics; stored tensors are the converted values; bad specs refused; synthetic
// vocabularies well formed. (The GGUF format itself: test-gguf.cpp.)
#include <gtest/gtest.h>

#include "gguf-test-util.h"

// ---------------------------------------------------------------- random models

TEST(RandomModel, LoadsForEveryArchAndType) {
  const auto dir = test::temp_dir("random-all");
  for (model_arch arch : {model_arch::llama, model_arch::qwen2, model_arch::gpt2}) {
    for (ggml_type type : {ggml_type::f32, ggml_type::f16, ggml_type::bf16, ggml_type::q8_0, ggml_type::q4_0}) {
      for (bool tie : {false, true}) {
        auto spec = tiny_spec(arch, type);
        spec.tie_output = tie;
        const std::string what = std::string(model_arch_name(arch)) + "/" + ggml_traits(type).name + (tie ? "/tied" : "");
        const std::string path = (dir / "m.gguf").string();
        const auto sum = write_random_model(spec, path);
        EXPECT_EQ(sum.file_bytes, std::filesystem::file_size(path)) << what;
        gguf_file f(path);
        const auto plans = random_model_tensors(spec);
        ASSERT_EQ(f.tensors().size(), plans.size()) << what;
        int64_t n_params = 0;
        for (const auto& p : plans) {
          const tensor_view* t = f.find_tensor(p.name);
          ASSERT_NE(t, nullptr) << what << " " << p.name;
          EXPECT_EQ(t->type, p.ne.size() == 2 ? type : ggml_type::f32) << what << " " << p.name;
          n_params += t->n_elements();
        }
        EXPECT_EQ(sum.n_params, n_params) << what;
        EXPECT_EQ(f.get_string("general.architecture"), model_arch_name(arch));
        EXPECT_EQ(f.get_string("tokenizer.ggml.model"), arch == model_arch::llama ? "llama" : "gpt2");
        EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens")->size(), size_t(spec.n_vocab));

        const auto m = load_model(path);
        auto fields = [](const model_config& c) {
          return std::make_tuple(c.arch, c.n_vocab, c.dim, c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim,
                                 c.ffn_dim, c.n_ctx, c.rope_dims, c.rope_neox, c.rope_freq_base, c.norm_eps);
        };
        EXPECT_EQ(fields(m->config), fields(random_model_config(spec))) << what;
        EXPECT_EQ(m->output.data == m->tok_embd.data, tie) << what;
        EXPECT_EQ(bool(m->layers[0].bq), arch == model_arch::qwen2) << what;
      }
    }
  }
}

TEST(RandomModel, BitIdenticalEverywhere) {
  const auto dir = test::temp_dir("random-determinism");
  auto spec = tiny_spec(model_arch::llama, ggml_type::f16);
  spec.seed = 42;
  const std::string a = (dir / "a.gguf").string(), b = (dir / "b.gguf").string();
  write_random_model(spec, a);
  write_random_model(spec, b);
  const bytes ba = read_bytes(a);
  EXPECT_EQ(ba, read_bytes(b));
  // Golden hashes: any change to the PRNG, the scales, the vocabulary or the writer's
  // layout changes them (update them only for an intended format change).
  EXPECT_EQ(fnv1a(ba), 0xd1d3c13fc2eb61e1ull) << std::hex << fnv1a(ba);
  spec.arch = model_arch::gpt2;
  spec.n_kv_heads = 4;
  spec.type = ggml_type::q8_0;
  write_random_model(spec, a);
  EXPECT_EQ(fnv1a(read_bytes(a)), 0x2256479a3ab675ceull) << std::hex << fnv1a(read_bytes(a));
  spec.seed = 43;
  write_random_model(spec, b);
  EXPECT_NE(read_bytes(a), read_bytes(b));
}

TEST(RandomModel, ValuesHaveThePlannedStatistics) {
  const auto spec = tiny_spec(model_arch::qwen2);
  for (const auto& p : random_model_tensors(spec)) {
    const auto v = random_tensor_values(spec, p.name);
    double sum = 0, sq = 0;
    float lo = v[0], hi = v[0];
    for (float x : v) {
      sum += x;
      sq += double(x) * x;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    const double n = double(v.size()), mean = sum / n, sd = std::sqrt(sq / n - mean * mean);
    const double half = p.stddev * std::sqrt(3.0);
    EXPECT_GE(lo, p.mean - half * 1.0001) << p.name;
    EXPECT_LE(hi, p.mean + half * 1.0001) << p.name;
    EXPECT_NEAR(mean, p.mean, 4 * p.stddev / std::sqrt(n) + 1e-7) << p.name;
    EXPECT_NEAR(sd, p.stddev, p.stddev * (n > 1000 ? 0.05 : 0.35)) << p.name;
    EXPECT_GT(sd, 0) << p.name;  // every tensor (norms, biases) differs from a constant
  }
  EXPECT_THROW(random_tensor_values(spec, "no.such.tensor"), engine_error);
}

TEST(RandomModel, StoredTensorsAreTheConvertedValues) {
  const auto dir = test::temp_dir("random-values");
  for (ggml_type type : {ggml_type::f32, ggml_type::f16, ggml_type::q4_0}) {
    const auto spec = tiny_spec(model_arch::llama, type);
    const std::string path = (dir / "m.gguf").string();
    write_random_model(spec, path);
    gguf_file f(path);
    for (const char* name : {"blk.1.attn_k.weight", "output_norm.weight", "token_embd.weight"}) {
      const auto v = random_tensor_values(spec, name);
      const tensor_view* t = f.find_tensor(name);
      ASSERT_NE(t, nullptr);
      bytes want(t->nbytes);
      for (int64_t r = 0; r < t->rows(); ++r) {
        quantize_row_ref(t->type, v.data() + r * t->ne[0], want.data() + size_t(r) * t->row_bytes(), t->ne[0]);
      }
      EXPECT_EQ(std::memcmp(want.data(), t->data, t->nbytes), 0) << name << " " << ggml_traits(type).name;
    }
  }
}

TEST(RandomModel, RejectsBadSpecs) {
  const auto dir = test::temp_dir("random-bad");
  const std::string path = (dir / "x.gguf").string();
  auto err = [&](const std::function<void(random_model_spec&)>& change) {
    auto s = tiny_spec();
    change(s);
    try {
      write_random_model(s, path);
    } catch (const engine_error& e) {
      return std::string(e.what());
    }
    ADD_FAILURE() << "accepted";
    return std::string();
  };
  EXPECT_CONTAINS(err([](auto& s) { s.dim = 66; }), "not a multiple of n_heads");
  EXPECT_CONTAINS(err([](auto& s) { s.n_kv_heads = 3; }), "not a multiple of n_kv_heads");
  EXPECT_CONTAINS(err([](auto& s) { s.n_kv_heads = 8; }), "not a multiple of n_kv_heads");
  EXPECT_CONTAINS(err([](auto& s) { s.dim = 60; s.n_heads = 4; s.n_kv_heads = 4; s.dim = 4 * 15; }), "must be even");
  EXPECT_CONTAINS(err([](auto& s) { s.type = ggml_type::q8_0; s.ffn_dim = 100; }), "multiples of 32");
  EXPECT_CONTAINS(err([](auto& s) { s.type = ggml_type::q4_0; s.dim = 48; s.n_heads = 4; }), "multiples of 32");
  EXPECT_CONTAINS(err([](auto& s) { s.n_vocab = 100; }), "n_vocab");
  EXPECT_CONTAINS(err([](auto& s) { s.n_layers = 0; }), "n_layers");
  EXPECT_CONTAINS(err([](auto& s) { s.dim = -1; }), "dim");
  EXPECT_CONTAINS(err([](auto& s) { s.rope_freq_base = 0; }), "rope_freq_base");
  EXPECT_CONTAINS(err([](auto& s) { s.qk_bias_scale = 4; }), "needs --arch qwen2");
  EXPECT_CONTAINS(err([](auto& s) { s.head_dim = 7; }), "must be even");
  EXPECT_CONTAINS(err([](auto& s) { s.arch = model_arch::gpt2; s.n_kv_heads = 4; s.rope_freqs = true; }),
                  "need a RoPE architecture");
  EXPECT_CONTAINS(err([](auto& s) { s.type = ggml_type::q8_0; s.head_dim = 12; s.dim = 64; s.ffn_dim = 96; }),
                  "n_heads * head_dim");
  EXPECT_FALSE(std::filesystem::exists(path));
}

// qwen3 with a head width other than dim / n_heads, linear RoPE scaling and Llama 3's
// rope_freqs.weight: the loader reads back the planned shapes, the q/k norms, the scale and
// the factors (the CUDA forward tests use these files against the CPU forward).
TEST(RandomModel, Qwen3HeadWidthAndRopeScalingReadBack) {
  const auto dir = test::temp_dir("random-qwen3");
  auto spec = tiny_spec(model_arch::qwen3);
  spec.head_dim = 24, spec.rope_scale_linear = 4.f, spec.rope_freqs = true;
  const std::string path = (dir / "q3.gguf").string();
  write_random_model(spec, path);
  const auto m = load_model(path);
  const model_config& c = m->config;
  EXPECT_EQ(c.arch, model_arch::qwen3);
  EXPECT_EQ(c.head_dim, 24);
  EXPECT_EQ(c.q_dim(), 4 * 24);
  EXPECT_EQ(c.kv_dim(), 2 * 24);
  EXPECT_TRUE(c.rope_neox);
  EXPECT_EQ(c.rope_freq_scale, 0.25f);
  ASSERT_EQ(c.rope_freq_factors.size(), 12u);
  EXPECT_EQ(c.rope_freq_factors, random_model_config(spec).rope_freq_factors);
  for (float f : c.rope_freq_factors) EXPECT_TRUE(f > 0.5f && f < 4.5f) << f;
  ASSERT_TRUE(m->layers[0].q_norm);
  EXPECT_EQ(m->layers[0].q_norm.ne[0], 24);
  EXPECT_EQ(m->layers[1].k_norm.ne[0], 24);
  EXPECT_EQ(m->layers[0].wq.rows(), 4 * 24);
  EXPECT_EQ(m->layers[0].wo.ne[0], 4 * 24);
  EXPECT_FALSE(m->layers[0].bq);
}

// phi3: fused attn_qkv {dim, q_dim + 2 kv_dim} and ffn_up {dim, 2 ffn} (no ffn_gate), read back
// by the loader as q/k/v and gate/up row views of the fused tensors; NEOX RoPE.
TEST(RandomModel, Phi3FusedTensorsReadBackAsViews) {
  const auto dir = test::temp_dir("random-phi3");
  const auto spec = tiny_spec(model_arch::phi3, ggml_type::q8_0);
  const std::string path = (dir / "phi3.gguf").string();
  write_random_model(spec, path);
  gguf_file f(path);
  EXPECT_NE(f.find_tensor("blk.0.attn_qkv.weight"), nullptr);
  EXPECT_EQ(f.find_tensor("blk.0.ffn_gate.weight"), nullptr);
  EXPECT_EQ(f.find_tensor("blk.1.ffn_up.weight")->ne[1], 2 * 96);
  const auto m = load_model(path);
  EXPECT_EQ(m->config.arch, model_arch::phi3);
  EXPECT_TRUE(m->config.rope_neox);
  const layer_weights& L = m->layers[1];
  EXPECT_EQ(L.wq.rows(), 64);
  EXPECT_EQ(L.wk.rows(), 32);
  EXPECT_EQ(L.wk.data, L.wq.data + 64 * L.wq.row_bytes());  // views into the fused tensor
  EXPECT_EQ(L.w_up.data, L.w_gate.data + 96 * L.w_gate.row_bytes());
  EXPECT_EQ(L.w_up.type, ggml_type::q8_0);
}

// qk_bias_scale scales exactly the query/key biases of qwen2 and nothing else.
TEST(RandomModel, QkBiasScaleScalesOnlyTheQueryKeyBiases) {
  auto a = tiny_spec(model_arch::qwen2), b = a;
  b.qk_bias_scale = 40.f;
  const auto pa = random_model_tensors(a), pb = random_model_tensors(b);
  ASSERT_EQ(pa.size(), pb.size());
  int scaled = 0;
  for (size_t i = 0; i < pa.size(); ++i) {
    const bool qk = pa[i].name.find("attn_q.bias") != std::string::npos ||
                    pa[i].name.find("attn_k.bias") != std::string::npos;
    EXPECT_FLOAT_EQ(pb[i].stddev, qk ? 40.f * pa[i].stddev : pa[i].stddev) << pa[i].name;
    scaled += qk;
  }
  EXPECT_EQ(scaled, 2 * a.n_layers);
}

TEST(RandomModel, WithoutTokenizerAnyVocabSize) {
  const auto dir = test::temp_dir("random-no-tok");
  auto spec = tiny_spec(model_arch::gpt2);
  spec.n_vocab = 10;
  spec.with_tokenizer = false;
  const std::string path = (dir / "m.gguf").string();
  write_random_model(spec, path);
  gguf_file f(path);
  EXPECT_EQ(f.find("tokenizer.ggml.model"), nullptr);
  EXPECT_EQ(load_model(path)->config.n_vocab, 10);
}

TEST(SyntheticVocab, SentencePieceIsWellFormed) {
  for (int64_t n : {300, 1000, 32000}) {
    const auto v = make_spm_vocab(n);
    ASSERT_EQ(int64_t(v.tokens.size()), n);
    ASSERT_EQ(v.scores.size(), v.tokens.size());
    ASSERT_EQ(v.token_types.size(), v.tokens.size());
    EXPECT_EQ(v.tokens[0], "<unk>");
    EXPECT_EQ(v.tokens[1], "<s>");
    EXPECT_EQ(v.tokens[2], "</s>");
    EXPECT_EQ(v.token_types[0], 2);
    EXPECT_EQ(v.token_types[1], 3);
    EXPECT_EQ(v.tokens[3 + 0x0a], "<0x0A>");
    EXPECT_EQ(v.tokens[3 + 0xff], "<0xFF>");
    for (int b = 0; b < 256; ++b) EXPECT_EQ(v.token_types[size_t(3 + b)], 6);
    EXPECT_EQ(v.tokens[259], "\xe2\x96\x81");
    EXPECT_EQ(std::set<std::string>(v.tokens.begin(), v.tokens.end()).size(), v.tokens.size());
    // Every multi-char normal piece is reachable: the piece minus its last char exists.
    const std::set<std::string> all(v.tokens.begin(), v.tokens.end());
    for (size_t i = 260; i < v.tokens.size(); ++i) {
      const std::string& t = v.tokens[i];
      if (t.size() > 1 && t != "\xe2\x96\x81") {
        EXPECT_TRUE(all.count(t.substr(0, t.size() - 1))) << t;
      }
      EXPECT_LT(v.scores[i], v.scores[i - 1]) << i;  // earlier pieces merge first
    }
    if (n >= 1000) {
      EXPECT_TRUE(all.count("\xe2\x96\x81the") && all.count("ing"));
    }
  }
}

TEST(SyntheticVocab, BytePairIsWellFormed) {
  for (int64_t n : {300, 5000, 50257}) {
    const auto v = make_bpe_vocab(n);
    ASSERT_EQ(int64_t(v.tokens.size()), n);
    EXPECT_EQ(v.tokens.back(), "<|endoftext|>");
    EXPECT_EQ(v.token_types.back(), 3);
    EXPECT_EQ(v.eos_id, n - 1);
    EXPECT_EQ(v.tokens[0], "!");
    EXPECT_EQ(v.tokens[32], "A");
    EXPECT_EQ(v.tokens[188], "\xc4\x80");  // byte 0 -> U+0100
    EXPECT_EQ(v.tokens[188 + 32], "\xc4\xa0");  // byte 32 (space) -> U+0120 'Ġ'
    EXPECT_EQ(int64_t(v.merges.size()), n - 257);
    const std::set<std::string> all(v.tokens.begin(), v.tokens.end());
    EXPECT_EQ(all.size(), v.tokens.size());
    for (size_t i = 0; i < v.merges.size(); ++i) {
      const std::string& m = v.merges[i];
      const size_t sp = m.find(' ');
      ASSERT_NE(sp, std::string::npos) << m;
      EXPECT_TRUE(all.count(m.substr(0, sp))) << m;
      EXPECT_TRUE(all.count(m.substr(sp + 1))) << m;
      EXPECT_EQ(v.tokens[256 + i], m.substr(0, sp) + m.substr(sp + 1)) << m;  // merge i makes token 256+i
    }
  }
}
