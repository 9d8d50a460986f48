// test-agent-model.cpp: the shipped agent model (models/kvarena-agent.gguf, trained by
// scripts/train/) against PyTorch: tests/fixtures/kvarena-agent-logits.json holds the
// logits PyTorch computes on the same file (scripts/train/make_fixture.py, which loads the
// GGUF's F16 weights back into the training code's model) for a compact-style prompt.
// Also: the file names its prompt style, chat format, observation budget and history mode,
// and its vocabulary is the trained byte-level BPE (a prompt round-trips).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "forward-fixture.h"
#include "gguf-reader.h"
#include "model.h"
#include "session.h"
#include "tokenizer.h"

namespace kvarena {
namespace {

const std::string k_model = std::string(KVARENA_SOURCE_DIR) + "/models/kvarena-agent.gguf";
const std::string k_fixture = std::string(KVARENA_SOURCE_DIR) + "/tests/fixtures/kvarena-agent-logits.json";

// Both read the same F16 weights and compute in F32 with a different operation order.
// Measured: see the output (about 1e-6 at logits of a few units).
constexpr double k_abs_tol = 2e-4;

nlohmann::json fixture() {
  std::ifstream f(k_fixture);
  return nlohmann::json::parse(f);
}

TEST(AgentModel, LogitsMatchPyTorch) {
  if (!std::filesystem::exists(k_model)) GTEST_SKIP() << k_model << " is not there (scripts/train/train.sh writes it)";
  const nlohmann::json fx = fixture();
  ASSERT_EQ(test::fnv1a64_file_hex(k_model), fx.at("model_fnv1a64").get<std::string>())
      << "the committed model is not the file the fixture was made from: rerun scripts/train/make_fixture.py";
  auto m = load_model(k_model);
  const auto tokens = fx.at("tokens").get<std::vector<int32_t>>();
  session_options so;
  so.n_threads = 2;
  const std::vector<float> ours = test::all_logits(*m, tokens, so);
  const int64_t V = m->config.n_vocab;
  double worst = 0, largest = 0;
  int argmax_disagree = 0;
  auto check_row = [&](int64_t pos, const std::vector<float>& ref) {
    ASSERT_EQ(static_cast<int64_t>(ref.size()), V);
    const float* row = ours.data() + pos * V;
    int64_t a = 0, b = 0;
    for (int64_t v = 0; v < V; ++v) {
      worst = std::max(worst, std::fabs(double(row[v]) - ref[size_t(v)]));
      largest = std::max(largest, std::fabs(double(ref[size_t(v)])));
      if (row[v] > row[a]) a = v;
      if (ref[size_t(v)] > ref[size_t(b)]) b = v;
    }
    argmax_disagree += a != b;
  };
  check_row(static_cast<int64_t>(tokens.size()) - 1, fx.at("logits_last").get<std::vector<float>>());
  for (const auto& [pos, ref] : fx.at("logits_at").items()) check_row(std::stoll(pos), ref.get<std::vector<float>>());
  std::printf("[kvarena-agent vs PyTorch] max |diff| %.3g (max |logit| %.3g) over %zu rows\n", worst, largest,
              fx.at("logits_at").size() + 1);
  EXPECT_LE(worst, k_abs_tol);
  EXPECT_EQ(argmax_disagree, 0);
}

TEST(AgentModel, NamesItsPromptStyleChatFormatObservationBudgetAndHistoryAndRoundTripsAPrompt) {
  if (!std::filesystem::exists(k_model)) GTEST_SKIP() << k_model << " is not there";
  auto m = load_model(k_model);
  ASSERT_TRUE(m->gguf);
  EXPECT_EQ(m->gguf->get_string("kvarena.prompt_style").value_or(""), "compact");
  EXPECT_NE(m->gguf->get_string("tokenizer.chat_template").value_or("").find("<|im_start|>"), std::string::npos);
  EXPECT_FALSE(m->gguf->get_string("kvarena.train.recipe").value_or("").empty());
  // The budget its data was cut to (models/README.md: 2048 from round 15 on), which
  // `kvarena run` uses by default.
  EXPECT_EQ(m->gguf->get_int("kvarena.max_obs_tokens").value_or(0), 2048);
  // The history mode its figures are measured in (models/README.md: last), `kvarena run`'s
  // default for it.
  EXPECT_EQ(m->gguf->get_string("kvarena.history").value_or(""), "last");
  const auto tok = tokenizer::from_gguf(*m->gguf);
  // Text round-trips (decode leaves control tokens out, as llama.cpp's does); the ChatML
  // markers are single control tokens.
  const std::string text =
      "OBSERVATION:\n[12] link 'Électronique'\nURL: http://localhost/\nOBJECTIVE: Open it.\n"
      "PREVIOUS ACTIONS: None\n```click [12]```";
  const std::vector<int32_t> ids = tok->encode(text, false, true);
  EXPECT_EQ(tok->decode(ids), text);
  EXPECT_LT(ids.size(), text.size() / 2) << "the domain tokenizer compresses";
  for (const char* marker : {"<|im_start|>", "<|im_end|>"}) {
    const std::vector<int32_t> m1 = tok->encode(marker, false, true);
    ASSERT_EQ(m1.size(), 1u) << marker;
    EXPECT_TRUE(tok->is_control(m1[0])) << marker;
  }
}

}  // namespace
}  // namespace kvarena
