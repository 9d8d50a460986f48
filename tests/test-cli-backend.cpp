// test-cli-backend.cpp: `--backend cpu|cuda` of `kvarena generate` and `kvarena bench
// latency`, through the built binary (KVARENA_BIN). Which outcome `--backend cuda` must
// have depends on the build (KVARENA_CUDA is defined for this test when the CUDA backend
// is built) and, in a CUDA build, on whether a device is present:
//   no CUDA build: exit 1 and the one-line "built without CUDA" message, before the model loads;
//   CUDA build, no device: exit 1 and a message naming the missing device;
//   CUDA build and a device: the generate JSON with "backend": "cuda" and the CPU's greedy text.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "test-util.h"

#ifdef KVARENA_CUDA
#include "cuda-check.h"
#endif

namespace {

using json = nlohmann::json;

struct run_result {
  int rc = -1;
  std::string out, err;
};

// Runs `kvarena ARGS` with stdout and stderr captured apart into files under dir.
run_result run(const std::filesystem::path& dir, const std::string& args) {
  static int n = 0;
  const std::string base = (dir / ("run" + std::to_string(n++))).string();
  const std::string cmd = std::string(KVARENA_BIN) + " " + args + " >" + base + ".out 2>" + base + ".err";
  run_result r;
  const int st = std::system(cmd.c_str());
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = kvarena::test::read_file(base + ".out");
  r.err = kvarena::test::read_file(base + ".err");
  return r;
}

bool cuda_built() {
#ifdef KVARENA_CUDA
  return true;
#else
  return false;
#endif
}

bool cuda_device() {
#ifdef KVARENA_CUDA
  return kvarena::cuda_device_count() > 0;
#else
  return false;
#endif
}

const char* k_no_cuda = "this kvarena was built without CUDA (configure with -DKVARENA_CUDA=ON)";

// A tiny random llama with a vocabulary (GGUF) written into dir.
std::string tiny_model(const std::filesystem::path& dir) {
  const std::string p = (dir / "tiny.gguf").string();
  const run_result r = run(dir, "model random --arch llama --dim 64 --layers 2 --heads 4 --kv-heads 2 --ffn 128 "
                                "--vocab 512 --ctx 512 --type f16 --seed 5 --output-scale 3 --out " + p);
  EXPECT_EQ(r.rc, 0) << r.err;
  return p;
}

size_t count_lines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace

TEST(CliBackend, CudaWithoutTheBuildOrDeviceFailsWithOneClearLine) {
  if (cuda_device()) GTEST_SKIP() << "a CUDA device is present: CliBackend.CudaGenerateMatchesCpuGreedy runs instead";
  const auto dir = kvarena::test::temp_dir("cli-backend");
  // A model path that does not exist: the backend check must come first.
  // Every command that runs the model takes --backend (sequence.h's make_sequence).
  for (const std::string& args : {std::string("generate --model /nonexistent.gguf --prompt hi --backend cuda"),
                                  std::string("bench latency --model /nonexistent.gguf --backend cuda"),
                                  std::string("bench memory --model /nonexistent.gguf --backend cuda"),
                                  std::string("bench niah --model /nonexistent.gguf --backend cuda"),
                                  std::string("bench ppl --model /nonexistent.gguf --text /x --backend cuda"),
                                  std::string("bench confidence-kl --model /nonexistent.gguf --backend cuda"),
                                  std::string("bench decode --model /nonexistent.gguf --backend cuda"),
                                  std::string("run --suite " KVARENA_SOURCE_DIR "/tasks/vwa-local --model "
                                              "/nonexistent.gguf --policies full --backend cuda --out /tmp/x.sqlite")}) {
    SCOPED_TRACE(args);
    const run_result r = run(dir, args);
    EXPECT_EQ(r.rc, 2);  // a backend that cannot run here (not a bad input)
    EXPECT_EQ(count_lines(r.err), 1u) << r.err;
    if (cuda_built()) {
      EXPECT_NE(r.err.find("no CUDA device"), std::string::npos) << r.err;
    } else {
      EXPECT_NE(r.err.find(k_no_cuda), std::string::npos) << r.err;
    }
    EXPECT_EQ(r.err.find("nonexistent"), std::string::npos) << "the model was opened first: " << r.err;
  }
}

TEST(CliBackend, CpuIsTheDefaultAndUnknownBackendsAreRejected) {
  const auto dir = kvarena::test::temp_dir("cli-backend");
  const std::string m = tiny_model(dir);
  const run_result def = run(dir, "generate --model " + m + " --prompt hello -n 4 --json");
  ASSERT_EQ(def.rc, 0) << def.err;
  const json j = json::parse(def.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << def.out;
  EXPECT_EQ(j["backend"], "cpu");
  const run_result cpu = run(dir, "generate --model " + m + " --prompt hello -n 4 --json --backend cpu");
  ASSERT_EQ(cpu.rc, 0) << cpu.err;
  EXPECT_EQ(json::parse(cpu.out)["tokens"], j["tokens"]);
  const run_result bad = run(dir, "generate --model " + m + " --prompt hello --backend tpu");
  EXPECT_NE(bad.rc, 0);
  EXPECT_NE(bad.err.find("--backend"), std::string::npos) << bad.err;
}

// A command line the parser rejects is a usage error: exit 2 (as for an option the policy does
// not take), not CLI11's internal 100+ codes; --help is not an error.
TEST(CliBackend, RejectedCommandLinesExitTwoAndHelpExitsZero) {
  const auto dir = kvarena::test::temp_dir("cli-backend");
  const run_result value = run(dir, "run --browser firefox");  // outside {text,chromium}
  EXPECT_EQ(value.rc, 2) << value.err;
  EXPECT_NE(value.err.find("firefox"), std::string::npos) << value.err;
  const run_result unknown = run(dir, "generate --no-such-option");
  EXPECT_EQ(unknown.rc, 2) << unknown.err;
  const run_result none = run(dir, "");  // a subcommand is required
  EXPECT_EQ(none.rc, 2) << none.err;
  const run_result help = run(dir, "run --help");
  EXPECT_EQ(help.rc, 0) << help.err;
  EXPECT_NE(help.out.find("--browser"), std::string::npos);
}

TEST(CliBackend, CudaGenerateMatchesCpuGreedy) {
  if (!cuda_device()) GTEST_SKIP() << "needs a CUDA build and a CUDA device";
  const auto dir = kvarena::test::temp_dir("cli-backend");
  const std::string m = tiny_model(dir);
  const run_result cpu = run(dir, "generate --model " + m + " --prompt hello -n 8 --json");
  const run_result gpu = run(dir, "generate --model " + m + " --prompt hello -n 8 --json --backend cuda");
  ASSERT_EQ(cpu.rc, 0) << cpu.err;
  ASSERT_EQ(gpu.rc, 0) << gpu.err;
  const json c = json::parse(cpu.out), g = json::parse(gpu.out);
  EXPECT_EQ(g["backend"], "cuda");
  EXPECT_EQ(g["n_gen"], c["n_gen"]);
  // Greedy on a random model: the first token's margin is large (output scale 3), F16 rounding may
  // flip a later near-tie, so only the first token is compared exactly.
  ASSERT_FALSE(g["tokens"].empty());
  EXPECT_EQ(g["tokens"][0], c["tokens"][0]);
  const run_result fk = run(dir, "generate --model " + m +
                            " --prompt hello -n 8 --json --backend cuda --policy freekv --budget 128 --sinks 32 "
                            "--window 32 --page 32");
  ASSERT_EQ(fk.rc, 0) << fk.err;
  EXPECT_EQ(json::parse(fk.out)["kv"]["policy"], "freekv");
}
