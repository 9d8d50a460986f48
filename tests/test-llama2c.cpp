// test-llama2c.cpp: the llama2.c checkpoint loader. The layout is proven by writing a
// checkpoint and an F32 GGUF from the same random weights and loading both: every tensor
// must be byte-identical. Damaged headers and every truncation must throw engine_error
// naming the file. Needs no shared files.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "engine-error.h"
#include "model-random.h"
#include "model.h"
#include "test-util.h"

using namespace kvarena;

namespace {

random_model_spec spec_for(bool tied, int64_t kv_heads) {
  random_model_spec s;
  s.arch = model_arch::llama;
  s.dim = 48;
  s.n_layers = 3;
  s.n_heads = 6;
  s.n_kv_heads = kv_heads;
  s.ffn_dim = 80;
  s.n_vocab = 300;
  s.n_ctx = 32;
  s.type = ggml_type::f32;
  s.seed = 11;
  s.tie_output = tied;
  return s;
}

// Every weight view of a model, paired with a label, in a fixed order.
std::vector<std::pair<std::string, const tensor_view*>> all_views(const model& m) {
  std::vector<std::pair<std::string, const tensor_view*>> v = {
      {"tok_embd", &m.tok_embd}, {"output_norm", &m.output_norm}, {"output", &m.output}};
  for (size_t l = 0; l < m.layers.size(); ++l) {
    const auto& L = m.layers[l];
    const std::string p = "layer " + std::to_string(l) + " ";
    for (auto [n, t] : std::vector<std::pair<const char*, const tensor_view*>>{
             {"attn_norm", &L.attn_norm}, {"wq", &L.wq}, {"wk", &L.wk}, {"wv", &L.wv}, {"wo", &L.wo},
             {"ffn_norm", &L.ffn_norm}, {"w_gate", &L.w_gate}, {"w_up", &L.w_up}, {"w_down", &L.w_down}}) {
      v.emplace_back(p + n, t);
    }
  }
  return v;
}

std::string load_error(const std::string& path) {
  try {
    load_model_llama2c(path);
  } catch (const engine_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << "message does not name the file: " << msg;
    return msg;
  }
  ADD_FAILURE() << "no error for " << path;
  return "";
}
#define EXPECT_CONTAINS(msg, part) EXPECT_NE((msg).find(part), std::string::npos) << (msg)

std::vector<char> read_all(const std::string& path) {
  const std::string s = test::read_file(path);
  return std::vector<char>(s.begin(), s.end());
}
void write_all(const std::string& path, const std::vector<char>& b) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(b.data(), std::streamsize(b.size()));
}

}  // namespace

TEST(Llama2c, SameWeightsAsTheEquivalentGguf) {
  const auto dir = test::temp_dir("llama2c-same");
  for (bool tied : {true, false}) {
    for (int64_t kvh : {6, 2}) {
      const auto spec = spec_for(tied, kvh);
      const std::string what = std::string(tied ? "shared" : "separate") + " classifier, kv heads " + std::to_string(kvh);
      const std::string bin = (dir / "m.bin").string(), gguf = (dir / "m.gguf").string();
      write_llama2c_checkpoint(spec, bin);
      write_random_model(spec, gguf);
      const auto a = load_model_llama2c(bin);
      const auto b = load_model(gguf);
      const auto want = random_model_config(spec);
      EXPECT_EQ(a->path, bin);
      EXPECT_EQ(a->config.arch, model_arch::llama) << what;
      EXPECT_EQ(a->config.dim, want.dim) << what;
      EXPECT_EQ(a->config.ffn_dim, want.ffn_dim) << what;
      EXPECT_EQ(a->config.n_layers, want.n_layers) << what;
      EXPECT_EQ(a->config.n_heads, want.n_heads) << what;
      EXPECT_EQ(a->config.n_kv_heads, want.n_kv_heads) << what;
      EXPECT_EQ(a->config.head_dim, want.head_dim) << what;
      EXPECT_EQ(a->config.n_vocab, want.n_vocab) << what;
      EXPECT_EQ(a->config.n_ctx, want.n_ctx) << what;
      EXPECT_EQ(a->config.rope_dims, want.head_dim) << what;
      EXPECT_FALSE(a->config.rope_neox) << what;
      EXPECT_EQ(a->config.rope_freq_base, 10000.0f) << what;
      EXPECT_EQ(a->config.norm_eps, 1e-5f) << what;
      EXPECT_EQ(a->output.data == a->tok_embd.data, tied) << what;
      ASSERT_TRUE(a->storage) << "the mapping must outlive the views";
      ASSERT_EQ(a->layers.size(), b->layers.size());
      const auto va = all_views(*a), vb = all_views(*b);
      for (size_t i = 0; i < va.size(); ++i) {
        const tensor_view& x = *va[i].second;
        const tensor_view& y = *vb[i].second;
        ASSERT_TRUE(x) << what << ": " << va[i].first;
        EXPECT_EQ(x.type, ggml_type::f32);
        EXPECT_EQ(x.name, y.name) << what;
        for (int d = 0; d < 4; ++d) EXPECT_EQ(x.ne[d], y.ne[d]) << what << ": " << va[i].first;
        ASSERT_EQ(x.nbytes, y.nbytes) << what << ": " << va[i].first;
        EXPECT_EQ(std::memcmp(x.data, y.data, x.nbytes), 0) << what << ": " << va[i].first;
      }
      EXPECT_EQ(a->weight_bytes(), b->weight_bytes()) << what;
      // load_model picks the llama2.c loader by the missing GGUF magic.
      EXPECT_EQ(load_model(bin)->config.n_vocab, spec.n_vocab);
    }
  }
}

TEST(Llama2c, ConfigOverloadWritesTheSameFile) {
  const auto dir = test::temp_dir("llama2c-config");
  const auto spec = spec_for(false, 2);
  const std::string a = (dir / "a.bin").string(), b = (dir / "b.bin").string();
  write_llama2c_checkpoint(spec, a);
  write_llama2c_checkpoint(random_model_config(spec), spec.seed, b, /*shared_classifier=*/false);
  EXPECT_EQ(read_all(a), read_all(b));
}

TEST(Llama2c, BadHeaders) {
  const auto dir = test::temp_dir("llama2c-bad");
  const std::string good_path = (dir / "good.bin").string();
  write_llama2c_checkpoint(spec_for(false, 2), good_path);
  const auto good = read_all(good_path);
  const std::string bad = (dir / "bad.bin").string();
  auto with_header = [&](int field, int32_t value) {
    auto b = good;
    std::memcpy(b.data() + 4 * field, &value, 4);
    write_all(bad, b);
    return load_error(bad);
  };
  EXPECT_CONTAINS(with_header(0, 0), "dim = 0");
  EXPECT_CONTAINS(with_header(0, -48), "dim = -48");
  EXPECT_CONTAINS(with_header(1, 0), "hidden_dim = 0");
  EXPECT_CONTAINS(with_header(2, -1), "n_layers = -1");
  EXPECT_CONTAINS(with_header(3, 0), "n_heads = 0");
  EXPECT_CONTAINS(with_header(3, 5), "not a multiple of n_heads 5");
  EXPECT_CONTAINS(with_header(3, 16), "head size 3 must be even");
  EXPECT_CONTAINS(with_header(4, 4), "not a multiple of n_kv_heads 4");
  EXPECT_CONTAINS(with_header(4, 12), "not a multiple of n_kv_heads 12");
  EXPECT_CONTAINS(with_header(5, 0), "vocab_size = 0");
  EXPECT_CONTAINS(with_header(6, -5), "seq_len = -5");
  EXPECT_CONTAINS(with_header(5, 300), "size mismatch");       // sign flipped: no classifier expected
  EXPECT_CONTAINS(with_header(2, 1 << 30), "size mismatch");   // huge: no overflow, no allocation
  EXPECT_CONTAINS(with_header(0, INT32_MAX), "not a multiple");
  EXPECT_CONTAINS(with_header(0, 0x616b3432), "export format version");
  auto b = good;
  b.push_back(0);
  write_all(bad, b);
  EXPECT_CONTAINS(load_error(bad), "trailing data");
  write_all(bad, {});
  EXPECT_CONTAINS(load_error(bad), "smaller than its 28-byte header");
  EXPECT_CONTAINS(load_error((dir / "missing.bin").string()), "cannot open");
}

TEST(Llama2c, TruncatedAtEveryOffset) {
  auto spec = spec_for(false, 1);
  spec.dim = 16;
  spec.n_heads = 2;
  spec.n_layers = 1;
  spec.ffn_dim = 24;
  spec.n_vocab = 40;
  spec.n_ctx = 8;
  const auto dir = test::temp_dir("llama2c-truncate");
  const std::string full = (dir / "full.bin").string();
  write_llama2c_checkpoint(spec, full);
  const auto content = read_all(full);
  const int fd = ::memfd_create("cut.bin", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, content.data(), content.size()), ssize_t(content.size()));
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  ASSERT_NO_THROW(load_model_llama2c(path));
  for (size_t n = content.size(); n-- > 0;) {
    ASSERT_EQ(::ftruncate(fd, off_t(n)), 0);
    load_error(path);
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "at truncation length " << n;
      break;
    }
  }
  ::close(fd);
}
