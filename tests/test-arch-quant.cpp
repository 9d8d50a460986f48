// test-arch-quant.cpp: quantized files of the architectures of test-arch (qwen3, gemma3,
// gemma2, phi3, Mistral-style llama, and qwen2), the types users download (Q8_0, Q4_K_M,
// Q5_K_M, Q6_K), checked against llama.cpp itself. tests/fixtures/make_arch_fixture.py
// --type T writes each case in its K-quant shape (every matrix row 256 or 512 wide) as F32
// with llama.cpp's gguf-py, quantizes it with llama.cpp's own quantizer (`llamaref
// quantize`) and records llama.cpp's logits (`llamaref logits --all`) at every position of
// 64 tokens and the tensor types as gguf-py reads them. Label `model`: skips when llamaref
// or gguf-py (python3-numpy) is unavailable.
//
// One test per architecture x type, `ArchQuant/ArchQuantLogits.MatchLlamaCpp/<arch>_<type>`
// (one fixture per test process, so one test each keeps ctest's time down):
//  - Types: the file holds the types asked for (no fallback to Q5_0 / Q8_0 / F16: a shape
//    the quantizer cannot block fails here), kvarena loads each matrix as that type, and
//    `kvarena model check` counts the same types and says "supported".
//  - Logits: every CPU kernel variant, prefill in one chunk and in chunks of 7, and
//    token-by-token decode, at every position vs llama.cpp (max and rms bounds per type and
//    family, below); the F32 file it was quantized from must be off by more than the rms
//    bound (the bound sees quantization).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "arch-fixture.h"
#include "cpu-kernels.h"
#include "forward-fixture.h"  // fnv1a64_file_hex, used by llamacpp-logits-fixture.h
#include "ggml-types.h"
#include "llamacpp-logits-fixture.h"
#include "model.h"
#include "test-util.h"

namespace kvarena {
namespace {

using test::max_abs_diff;
using test::rms_diff;

struct type_case {
  std::string type;               // llamaref quantize name
  std::set<std::string> allowed;  // the types of the file's matrices, each used (1D tensors stay F32)
};
const type_case k_types[] = {
    {"Q8_0", {"Q8_0"}},
    {"Q4_K_M", {"Q4_K", "Q6_K"}},  // Q6_K: output / tied embedding, attn_v (attn_qkv) and ffn_down of some layers
    {"Q5_K_M", {"Q5_K", "Q6_K"}},
    {"Q6_K", {"Q6_K"}},
};
const char* const k_archs[] = {"qwen3-wide-head", "gemma3", "gemma2", "phi3", "mistral", "qwen2"};

// Tolerances (max |ours - llama.cpp| over 64 positions x 64 vocab entries, and the rms of the
// same; the logits are O(1): max |logit| 1.3-1.5). Both engines dequantise these blocks
// bit-identically and round each matmul's activations the same way (Q8_0 per 32 with
// 127 / amax, Q8_K per 256: test-kquant), so the products are exact integers and what
// differs is the order of float sums elsewhere (attention, norms, block scales), ~1e-7
// here as on F32 files. But where such an ulp moves an activation across a rounding
// boundary, that element moves by a whole quantisation step (amax / 127 of its block) on
// one side only, and on these small files (dim 256, 64 logits) one such flip moves the
// logits of its position by 1e-3..1e-2, and of every later position when it is in a K/V
// input. That is float rounding too: our own kernel variants and chunkings (the same
// algorithm, other summation orders) differ from each other by as much (the test prints
// it; measured on a zen4 CPU, llama.cpp's CPU variant zen4):
//   qwen3, phi3, mistral, qwen2: vs llama.cpp max 3.6e-7..1.7e-2, rms <= 3.9e-3
//   gemma2, gemma3:              max 3.6e-7..3.5e-2, rms <= 8.0e-3 (5 and 4 layers, and
//                                ggml's F16 GELU table: one more kind of flip, see test-arch)
// positions that no flip reaches agree to < 1e-4 (the test lists the others). The bounds
// leave ~1.7x room for flips elsewhere on another CPU and are below what quantization
// itself does: the F32 source file vs llama.cpp's quantized logits, rms >= 6.5e-3 (Q8_0,
// non-gemma) and >= 1.0e-2 (Q8_0, gemma); K-quants >= 1.95e-2 (max >= 6e-2); a wrong scale
// or nibble: >= 0.05 (test-kquant). Q8_0's margin is thin (its own error on these files is
// the size of a few flips): a 1% error in one variant's Q8_0 activation scale gives rms
// 6.9e-3..8.8e-3 here and fails every Q8_0 case (checked by breaking it).
struct bounds {
  double tol, rms_tol;
};
bounds bounds_of(const std::string& arch, const std::string& type) {
  const bool gemma = arch.rfind("gemma", 0) == 0;
  if (!gemma) return {3e-2, 5e-3};
  return type == "Q8_0" ? bounds{6e-2, 8e-3} : bounds{6e-2, 1.2e-2};
}

struct quant_case {
  std::string arch;
  type_case t;
};

void PrintTo(const quant_case& c, std::ostream* os) { *os << c.arch << " " << c.t.type; }

std::vector<quant_case> quant_cases() {
  std::vector<quant_case> v;
  for (const char* a : k_archs)
    for (const type_case& t : k_types) v.push_back({a, t});
  return v;
}

bool is_vector_tensor(const std::string& name) {  // norms and biases: never quantized
  return name.find("norm.weight") != std::string::npos ||
         (name.size() > 5 && name.rfind(".bias") == name.size() - 5);
}

std::string lower(std::string s) {
  for (char& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// Every matrix view kvarena bound, by the file's tensor name (fused phi3 views carry the
// fused tensor's name or none: those are checked through the others).
std::vector<const tensor_view*> matrix_views(const model& m) {
  std::vector<const tensor_view*> v{&m.tok_embd, &m.output};
  for (const layer_weights& L : m.layers)
    for (const tensor_view* t : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down}) v.push_back(t);
  return v;
}

// The positions (of 64) where a and b, (64, n_vocab), differ by more than 1e-4: "26 48 63".
std::string positions_off(const std::vector<float>& a, const std::vector<float>& b) {
  std::string out;
  const size_t V = a.size() / 64;
  for (size_t p = 0; p < 64; ++p) {
    bool off = false;  // a NaN is off too
    for (size_t i = 0; i < V && !off; ++i) off = !(std::fabs(a[p * V + i] - b[p * V + i]) <= 1e-4f);
    if (!off) continue;
    if (!out.empty()) out += ' ';
    out += std::to_string(p);
  }
  return out.empty() ? "none" : out;
}

class ArchQuantLogits : public ::testing::TestWithParam<quant_case> {};

// The file's types (as gguf-py reads them), kvarena's and `kvarena model check`'s.
void check_types(const quant_case& c, const test::arch_fixture& f) {
  ASSERT_FALSE(f.tensor_types.empty());
  std::map<std::string, int> count;  // type (lower case, as model check prints) -> tensors
  std::set<std::string> seen;
  for (const auto& [name, type] : f.tensor_types) {
    ++count[lower(type)];
    if (is_vector_tensor(name)) {
      EXPECT_EQ(type, "F32") << name;
    } else {
      EXPECT_TRUE(c.t.allowed.count(type)) << name << " is " << type << " in a " << c.t.type << " file";
      seen.insert(type);
    }
  }
  ASSERT_EQ(seen, c.t.allowed) << "each type of " << c.t.type << " is used (a fallback type fails here)";
  // kvarena reads each matrix as the file's type.
  const auto m = load_model(f.model);
  int checked = 0;
  for (const tensor_view* t : matrix_views(*m)) {
    if (!t->data || t->name.empty()) continue;
    const auto it = f.tensor_types.find(t->name);
    if (it == f.tensor_types.end()) continue;  // a row view of a fused tensor
    EXPECT_EQ(lower(it->second), ggml_traits(t->type).name) << t->name;
    ++checked;
  }
  EXPECT_GE(checked, 2 + 2 * int(m->layers.size())) << "matrices found by name";
  // `kvarena model check` counts the same types.
  const auto [rc, out] = test::run_command(std::string(KVARENA_BIN) + " model check '" + f.model + "'");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("\nsupported\n"), std::string::npos) << out;
  const size_t at = out.find("tensor types:");
  ASSERT_NE(at, std::string::npos) << out;
  std::istringstream line(out.substr(at + 13, out.find('\n', at) - at - 13));
  std::map<std::string, int> printed;
  for (std::string name, n; line >> name >> n;) {
    if (!n.empty() && n.back() == ',') n.pop_back();
    printed[name] = std::stoi(n.substr(1));  // "x7"
  }
  EXPECT_EQ(printed, count) << out;
}

TEST_P(ArchQuantLogits, MatchLlamaCpp) {
  const quant_case& c = GetParam();
  const std::string tag = c.arch + " " + c.t.type;
  const test::arch_fixture& f = test::arch_fixture_of(c.arch, c.t.type);
  REQUIRE_ARCH_FIXTURE(f);
  check_types(c, f);
  if (HasFatalFailure()) return;
  const bounds bd = bounds_of(c.arch, c.t.type);
  const auto m = load_model(f.model);
  std::printf("[%s] max |logit| (llama.cpp) %.3g\n", tag.c_str(), test::max_abs(f.logits));
  test::kernel_variant_guard guard;
  std::vector<float> first;  // the first run: our runs' spread is measured from it
  double spread = 0, spread_rms = 0;
  for (const std::string& v : cpu_kernel_variants_supported()) {
    set_cpu_kernel_variant(v);
    for (int64_t chunk : {int64_t(64), int64_t(7), int64_t(1)}) {
      const std::vector<float> got = test::arch_logits(*m, f.tokens, chunk);
      const double d = max_abs_diff(got, f.logits), r = rms_diff(got, f.logits);
      std::printf("[%s] %-8s chunk %2lld vs llama.cpp: max |diff| %.3g, rms %.3g; positions off by > 1e-4: %s\n",
                  tag.c_str(), v.c_str(), static_cast<long long>(chunk), d, r, positions_off(got, f.logits).c_str());
      EXPECT_LE(d, bd.tol) << v << " chunk " << chunk;
      EXPECT_LE(r, bd.rms_tol) << v << " chunk " << chunk;
      if (first.empty()) first = got;
      spread = std::max(spread, max_abs_diff(got, first));
      spread_rms = std::max(spread_rms, rms_diff(got, first));
    }
  }
  // What float summation order alone does here: our own variants and chunkings (one
  // algorithm) differ from each other by as much as they differ from llama.cpp.
  std::printf("[%s] our runs vs our first run: max |diff| %.3g, rms %.3g\n", tag.c_str(), spread, spread_rms);
  // The F32 file it was quantized from is off by more than the rms bound: the bounds see
  // the quantization.
  const auto base = load_model(f.base_model);
  const std::vector<float> got32 = test::arch_logits(*base, f.tokens, 64);
  const double d32 = max_abs_diff(got32, f.logits), r32 = rms_diff(got32, f.logits);
  std::printf("[%s] the F32 source file vs llama.cpp's %s logits: max |diff| %.3g, rms %.3g\n", tag.c_str(),
              c.t.type.c_str(), d32, r32);
  EXPECT_GT(r32, bd.rms_tol);
}

INSTANTIATE_TEST_SUITE_P(ArchQuant, ArchQuantLogits, ::testing::ValuesIn(quant_cases()), [](const auto& info) {
  std::string n = info.param.arch + "_" + lower(info.param.t.type);
  for (char& ch : n)
    if (ch == '-') ch = '_';
  return n;
});

}  // namespace
}  // namespace kvarena
