// arch-fixture.h: the random-weight files of tests/fixtures/make_arch_fixture.py (written at
// test time by llama.cpp's gguf-py, quantized by llama.cpp's own quantizer where a type is
// asked) with llama.cpp's logits at every position of 64 tokens; shared by test-arch (F32)
// and test-arch-quant (Q8_0, Q4_K_M, Q5_K_M, Q6_K). A fixture that cannot be made (no
// llamaref, no gguf-py: the script exits 77) skips the test with the script's message.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "model.h"
#include "session.h"
#include "test-util.h"

namespace kvarena::test {

struct arch_fixture {
  std::string error;            // why there is none (the test skips with it)
  std::string model;            // the GGUF
  std::string base_model;       // quantized fixtures: the F32 file it was quantized from
  std::vector<int32_t> tokens;  // (64,)
  std::vector<float> logits;    // (64, n_vocab) llama.cpp's
  std::map<std::string, std::string> tensor_types;  // quantized: name -> type, as gguf-py reads the file
};

// Runs `cmd`: (exit status, stdout + stderr).
inline std::pair<int, std::string> run_command(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return {-1, ""};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

// The fixtures a process made, by stem; their directories (up to ~15 MB each with the F32
// source of a quantized file) are removed when the process ends.
struct arch_fixture_cache {
  std::map<std::string, arch_fixture> fixtures;
  std::vector<std::string> dirs;
  ~arch_fixture_cache() {
    for (const std::string& d : dirs) {
      std::error_code ec;
      std::filesystem::remove_all(d, ec);
    }
  }
};

// The fixture of case `arch` (make_arch_fixture.py --arch) in `type` ("F32", or a
// llamaref quantize type: "Q4_K_M"), written once per process.
inline const arch_fixture& arch_fixture_of(const std::string& arch, const std::string& type = "F32") {
  static arch_fixture_cache cache_;
  auto& cache = cache_.fixtures;
  std::string stem = arch;
  if (type != "F32") {
    std::string t = type;
    for (char& ch : t) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    stem += "-" + t;
  }
  if (auto it = cache.find(stem); it != cache.end()) return it->second;
  arch_fixture& f = cache[stem];
  const std::string dir = (std::filesystem::path(KVARENA_BINARY_DIR) / "test-tmp" / "arch-fixtures" /
                           (stem + "-" + std::to_string(::getpid())))
                              .string();
  std::filesystem::remove_all(dir);
  cache_.dirs.push_back(dir);
  const std::string py = std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  const auto [rc, out] = run_command(py + " '" + fixture_path("make_arch_fixture.py") + "' --arch " + arch +
                                     (type == "F32" ? "" : " --type " + type) + " --out '" + dir + "'");
  if (rc != 0) {
    f.error = "make_arch_fixture.py --arch " + arch + " --type " + type + " exit " + std::to_string(rc) + ": " + out;
    return f;
  }
  const auto header = nlohmann::json::parse(read_file(dir + "/" + stem + ".json"));
  f.model = dir + "/" + stem + ".gguf";
  if (header.contains("base_model_file")) f.base_model = dir + "/" + header.at("base_model_file").get<std::string>();
  if (header.contains("tensor_types")) f.tensor_types = header.at("tensor_types").get<std::map<std::string, std::string>>();
  f.tokens = header.at("tokens").get<std::vector<int32_t>>();
  const std::string bin = read_file(dir + "/" + stem + ".bin");
  f.logits.resize(bin.size() / 4);
  std::memcpy(f.logits.data(), bin.data(), f.logits.size() * 4);
  EXPECT_EQ(f.logits.size(), size_t(64) * header.at("n_vocab").get<size_t>());
  return f;
}

#define REQUIRE_ARCH_FIXTURE(f)                                                       \
  do {                                                                                \
    if (!(f).error.empty()) {                                                         \
      if ((f).error.find("exit 77") != std::string::npos) GTEST_SKIP() << (f).error; \
      FAIL() << (f).error;                                                            \
    }                                                                                 \
  } while (0)

// kvarena's logits at every position: prefill in chunks of `chunk` (1 = decode); GELU
// through ggml's F16 table, as llama.cpp's CPU backend computes it.
inline std::vector<float> arch_logits(const model& m, const std::vector<int32_t>& tokens, int64_t chunk,
                                      bool reference = false) {
  session_options so;
  so.all_logits = true;
  so.n_ctx = int64_t(tokens.size());
  so.prefill_chunk = chunk;
  so.reference = reference;
  so.gelu_f16_table = true;
  session s(m, so);
  s.append(tokens);
  return s.all_logits();
}

inline double max_abs(const std::vector<float>& a) {
  double m = 0;
  for (float x : a) m = std::max(m, double(std::fabs(x)));
  return m;
}

}  // namespace kvarena::test
