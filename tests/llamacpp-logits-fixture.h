// llamacpp-logits-fixture.h: what the tests that compare kvarena's logits with llama.cpp's
// share (test-kquant, test-qwen3): the committed fixtures (tests/fixtures/<stem>.json, its
// logits .bin of (n_positions, n_vocab) floats, and the GGUF they were made from, checked by
// hash), kvarena's logits of the same tokens by prefill or by decode, the largest and the
// root-mean-square difference, and a guard that restores the CPU kernel variant a test switches.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cpu-kernels.h"
#include "engine-error.h"
#include "model.h"
#include "session.h"
#include "test-util.h"

namespace kvarena::test {

// Restores the kernel variant picked at start when a test switches it.
struct kernel_variant_guard {
  std::string saved = cpu_kernel_variant();
  ~kernel_variant_guard() { set_cpu_kernel_variant(saved); }
};

struct llamacpp_logits {
  nlohmann::json header;      // the fixture's .json: tokens, n_positions, n_vocab, model_fnv1a64, ...
  std::vector<float> logits;  // (n_positions, n_vocab)
};

// tests/fixtures/<stem>.json and its logits; EXPECTs that model_file (in tests/fixtures) is
// the file the logits were made from. generator: the script that writes them (for the error).
inline llamacpp_logits load_llamacpp_logits(const std::string& stem, const std::string& model_file,
                                            const std::string& generator) {
  llamacpp_logits f;
  const std::string text = read_file(fixture_path(stem + ".json"));
  if (text.empty()) throw engine_error(stem + ".json missing (tests/fixtures/" + generator + ")");
  f.header = nlohmann::json::parse(text);
  const std::string bin = read_file(fixture_path(f.header.at("logits_file").get<std::string>()));
  const size_t n = f.header.at("n_positions").get<size_t>() * f.header.at("n_vocab").get<size_t>();
  if (bin.size() != n * 4) throw engine_error(stem + ".bin: wrong size");
  f.logits.resize(n);
  std::memcpy(f.logits.data(), bin.data(), bin.size());
  EXPECT_EQ(fnv1a64_file_hex(fixture_path(model_file)), f.header.at("model_fnv1a64").get<std::string>())
      << model_file << " is not the file the logits were made from";
  return f;
}

// kvarena's logits of positions [first, n) of `tokens`: prefill (one forward over all
// tokens: the GEMM path) or decode (one token per forward: the matrix-vector path).
inline std::vector<float> session_logits(const model& m, const std::vector<int32_t>& tokens, int64_t first,
                                         bool decode) {
  session_options so;
  so.all_logits = true;
  so.n_ctx = int64_t(tokens.size());
  if (decode) so.prefill_chunk = 1;
  session s(m, so);
  s.append(tokens);
  const std::vector<float>& all = s.all_logits();
  const int64_t V = m.config.n_vocab;
  return std::vector<float>(all.begin() + first * V, all.begin() + int64_t(tokens.size()) * V);
}

// max |a - b| (an inf or NaN difference counts as inf); EXPECTs equal sizes.
inline double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    const double e = std::fabs(double(a[i]) - double(b[i]));
    m = std::max(m, e <= INFINITY ? e : INFINITY);
  }
  return m;
}

// Root mean square of a - b over the common length.
inline double rms_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) s += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
  return std::sqrt(s / double(std::max<size_t>(1, a.size())));
}

}  // namespace kvarena::test
