// forward-fixture.h: reads the golden-logit fixtures that scripts/make-fixtures.sh writes
// to tests/fixtures/ (llama.cpp's logits via tools/llamaref), regenerates their random
// models, and runs our forward pass over the fixture's tokens. Shared by test-forward and
// test-forward-shared.
//
// A fixture is forward-NAME.json (header) + forward-NAME.bin (float32 little-endian,
// (n_positions, n_cols) row-major: every vocab entry, or the header's vocab_sample).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine-error.h"
#include "model-random.h"
#include "model.h"
#include "session.h"
#include "test-util.h"

namespace kvarena::test {

struct forward_fixture {
  nlohmann::json header;
  std::vector<float> logits;  // (n_positions, n_cols)
  std::vector<int32_t> tokens;
  int64_t n_vocab = 0, n_positions = 0, n_cols = 0;
};

inline forward_fixture load_forward_fixture(const std::string& name) {
  forward_fixture f;
  const std::string hpath = fixture_path("forward-" + name + ".json");
  const std::string text = read_file(hpath);
  if (text.empty()) throw engine_error(hpath + ": missing (run scripts/make-fixtures.sh)");
  f.header = nlohmann::json::parse(text);
  f.tokens = f.header.at("tokens").get<std::vector<int32_t>>();
  f.n_vocab = f.header.at("n_vocab").get<int64_t>();
  f.n_positions = f.header.at("n_positions").get<int64_t>();
  f.n_cols = f.header.contains("vocab_sample") ? int64_t(f.header["vocab_sample"].size()) : f.n_vocab;
  const std::string bin = read_file(fixture_path(f.header.at("logits_file").get<std::string>()));
  if (bin.size() != size_t(f.n_positions * f.n_cols) * sizeof(float)) {
    throw engine_error(hpath + ": logits file has " + std::to_string(bin.size()) + " bytes, expected " +
                       std::to_string(f.n_positions * f.n_cols * 4));
  }
  f.logits.resize(size_t(f.n_positions * f.n_cols));
  std::memcpy(f.logits.data(), bin.data(), bin.size());  // little-endian hosts only
  return f;
}

// FNV-1a 64 of a file's bytes, as make-fixtures.sh records it (hex, 16 digits).
inline std::string fnv1a64_file_hex(const std::string& path) {
  const std::string data = read_file(path);
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : data) h = (h ^ c) * 0x100000001b3ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", (unsigned long long)h);
  return buf;
}

// The spec for `kvarena model random` arguments as the header records them
// (["--arch", "llama", "--dim", "128", ...]); unknown flags throw.
inline random_model_spec spec_from_args(const std::vector<std::string>& args) {
  random_model_spec s;
  s.arch = model_arch::llama;
  s.type = ggml_type::f16;  // the CLI's default
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--tied") {
      s.tie_output = true;
      continue;
    }
    if (i + 1 >= args.size()) throw engine_error("fixture generator args: " + a + " needs a value");
    const std::string& v = args[++i];
    if (a == "--arch") {
      s.arch = v == "qwen2" ? model_arch::qwen2 : v == "gpt2" ? model_arch::gpt2 : model_arch::llama;
    } else if (a == "--dim") {
      s.dim = std::stoll(v);
    } else if (a == "--layers") {
      s.n_layers = std::stoll(v);
    } else if (a == "--heads") {
      s.n_heads = std::stoll(v);
    } else if (a == "--kv-heads") {
      s.n_kv_heads = std::stoll(v);
    } else if (a == "--ffn") {
      s.ffn_dim = std::stoll(v);
    } else if (a == "--vocab") {
      s.n_vocab = std::stoll(v);
    } else if (a == "--ctx") {
      s.n_ctx = std::stoll(v);
    } else if (a == "--seed") {
      s.seed = std::stoull(v);
    } else if (a == "--type") {
      s.type = ggml_type_from_name(v).value();
    } else {
      throw engine_error("fixture generator args: unknown flag " + a);
    }
  }
  return s;
}

// Regenerates the fixture's random model into a temp dir and checks that it is the same
// file the fixture was made from (a generator change must regenerate the fixtures).
inline std::string regenerate_fixture_model(const forward_fixture& f, const std::string& name) {
  const auto args = f.header.at("generator_args").get<std::vector<std::string>>();
  const std::string path = (temp_dir("fixture-" + name) / (name + ".gguf")).string();
  write_random_model(spec_from_args(args), path);
  const std::string want_hash = f.header.at("model_fnv1a64").get<std::string>();
  const std::string got_hash = fnv1a64_file_hex(path);
  EXPECT_EQ(got_hash, want_hash)
      << name << ": the random-model generator no longer writes the file this fixture was made "
      << "from (size now " << read_file(path).size() << ", fixture " << f.header.at("model_bytes")
      << "); rerun scripts/make-fixtures.sh";
  return path;
}

// Logits of every position of `tokens`: (n, n_vocab).
inline std::vector<float> all_logits(const model& m, const std::vector<int32_t>& tokens,
                                     session_options so = {}) {
  so.all_logits = true;
  so.n_ctx = std::max<int64_t>(so.n_ctx, int64_t(tokens.size()));
  session s(m, so);
  s.append(tokens);
  return s.all_logits();
}

struct diff_stats {
  double max_abs_diff = 0;  // max |a - b|
  double max_abs_ref = 0;   // max |b|
  double rel() const { return max_abs_diff / std::max(1.0, max_abs_ref); }
};

inline diff_stats compare(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  diff_stats d;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    double e = std::fabs(double(a[i]) - double(b[i]));
    if (!(e <= INFINITY)) e = INFINITY;  // NaN counts as the worst difference
    d.max_abs_diff = std::max(d.max_abs_diff, e);
    d.max_abs_ref = std::max(d.max_abs_ref, double(std::fabs(b[i])));
  }
  return d;
}

}  // namespace kvarena::test
