// vocab-vectors.h: llama.cpp's tokenizer test vectors (its test-tokenizer-0 format): a .inp
// file of strings separated by "\n__ggml_vocab_test__\n" (it ends with one separator too)
// and a .out file with one line of token ids per string. Read by test-tokenizer (the
// vocabularies in ../shared/models) and test-tokenizer-llamacpp (the llama.cpp clone's).
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "test-util.h"

namespace kvarena::test {

struct vector_case {
  std::string text;
  std::vector<int32_t> expected;
};

// The cases of one vocabulary; a count mismatch between the two files is a test failure.
inline std::vector<vector_case> read_vocab_vectors(const std::string& inp_path, const std::string& out_path) {
  const std::string inp = read_file(inp_path);
  const std::string out = read_file(out_path);
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> texts;
  for (size_t pos = 0; pos < inp.size();) {
    const size_t next = inp.find(sep, pos);
    if (next == std::string::npos) {
      texts.push_back(inp.substr(pos));
      break;
    }
    texts.push_back(inp.substr(pos, next - pos));
    pos = next + sep.size();
  }
  std::vector<vector_case> cases;
  std::istringstream lines(out);
  std::string line;
  for (size_t i = 0; std::getline(lines, line); ++i) {
    vector_case c;
    if (i < texts.size()) c.text = texts[i];
    std::istringstream nums(line);
    for (int32_t id; nums >> id;) c.expected.push_back(id);
    cases.push_back(std::move(c));
  }
  EXPECT_EQ(texts.size(), cases.size()) << inp_path << ": .inp and .out disagree on the count";
  return cases;
}

}  // namespace kvarena::test
