// agent-model-fixture.h: what the agent tests share: AgentModel, a gtest fixture holding a
// tiny random llama (64 dims, 2 layers, 1,024-token SentencePiece vocab, seed 5) and its
// tokenizer, made once per test suite; model_with(), a model whose GGUF holds only metadata.
#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "gguf-reader.h"
#include "gguf-writer.h"
#include "model-random.h"
#include "model.h"
#include "test-util.h"
#include "tiny-model-spec.h"
#include "tokenizer.h"

namespace kvarena {

class AgentModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const random_model_spec s = test::tiny_llama_spec(/*n_vocab=*/1024, /*n_ctx=*/8192, /*seed=*/5);
    const std::string path = (test::temp_dir("agent-model") / "m.gguf").string();
    write_random_model(s, path);
    model_ = load_model(path).release();
    tok_ = tokenizer::from_gguf(*model_->gguf).release();
  }
  static void TearDownTestSuite() {
    delete tok_;
    delete model_;
  }
  static inline model* model_ = nullptr;
  static inline tokenizer* tok_ = nullptr;
};

// A model whose GGUF holds only metadata (what `set` writes), for the defaults a trained model
// names: enough for the *_for_model functions, which read nothing else.
inline model model_with(const char* name, const std::function<void(gguf_writer&)>& set) {
  gguf_writer w;
  w.set_string("general.architecture", "llama");
  set(w);
  const std::string path = (test::temp_dir("model-keys") / name).string();
  w.write(path);
  model m;
  m.gguf = std::make_shared<const gguf_file>(path);
  return m;
}

}  // namespace kvarena
