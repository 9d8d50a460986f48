// test-serve.cpp: `kvarena serve`'s request side without a model or a socket: request bodies
// (hand-written JSON, valid and malformed) -> serve_request or a 400 naming the field; a
// request's "kv" object -> the policy spec (options, budget, unknown options named); the
// streamed-text gate (stop strings and UTF-8 held back). The server end to end:
// tests/serve/ (the openai npm client against `kvarena serve`).
#include <gtest/gtest.h>

#include <string>

#include "serve-error.h"
#include "serve-kv.h"
#include "serve-request.h"
#include "serve-stream-text.h"

namespace kvarena::serve {
namespace {

// The 400 a body gets: its param and message.
serve_error chat_error(const std::string& body) {
  try {
    parse_chat_request(body);
  } catch (const serve_error& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << body;
  return serve_error(0, "");
}

TEST(ServeRequest, ChatFieldsAreRead) {
  const serve_request r = parse_chat_request(R"({
    "model": "m", "messages": [{"role": "developer", "content": "be brief"},
                               {"role": "user", "content": [{"type": "text", "text": "hel"}, {"type": "text", "text": "lo"}]},
                               {"role": "assistant", "content": null}],
    "temperature": 0.25, "top_p": 0.5, "max_tokens": 16, "stop": "END", "seed": 7, "stream": true,
    "stream_options": {"include_usage": true}, "top_k": 3, "ignore_eos": true, "n": 1, "logprobs": false,
    "frequency_penalty": 0, "user": "ignored",
    "kv": {"policy": "window", "window": 64, "kv_int8": true, "budget": "128t"}})");
  EXPECT_EQ(r.kind, request_kind::chat);
  EXPECT_EQ(r.model, "m");
  ASSERT_EQ(r.messages.size(), 3u);
  EXPECT_EQ(r.messages[0].role, "system");  // developer is read as system
  EXPECT_EQ(r.messages[1].content, "hello");
  EXPECT_EQ(r.messages[2].content, "");
  EXPECT_FLOAT_EQ(r.sampling.temperature, 0.25f);
  EXPECT_FLOAT_EQ(r.sampling.top_p, 0.5f);
  EXPECT_EQ(r.sampling.top_k, 3);
  EXPECT_EQ(r.sampling.seed, 7u);
  EXPECT_EQ(r.max_tokens, 16);
  EXPECT_EQ(r.stop, std::vector<std::string>{"END"});
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_TRUE(r.ignore_eos);
  ASSERT_TRUE(r.has_kv);
  ASSERT_EQ(r.kv.size(), 4u);
  auto field = [&](const std::string& k) -> const kv_field& {
    for (const kv_field& f : r.kv)
      if (f.key == k) return f;
    throw std::runtime_error("no kv field " + k);
  };
  EXPECT_EQ(std::get<std::string>(field("policy").value), "window");
  EXPECT_EQ(std::get<double>(field("window").value), 64.0);
  EXPECT_TRUE(field("window").integral);
  EXPECT_TRUE(std::get<bool>(field("kv_int8").value));
  EXPECT_EQ(std::get<std::string>(field("budget").value), "128t");
}

TEST(ServeRequest, OpenAIDefaults) {
  const serve_request r = parse_chat_request(R"({"messages": [{"role": "user", "content": "hi"}]})");
  EXPECT_FLOAT_EQ(r.sampling.temperature, 1.0f);  // OpenAI's default, not greedy
  EXPECT_FLOAT_EQ(r.sampling.top_p, 1.0f);
  EXPECT_FALSE(r.max_tokens.has_value());
  EXPECT_FALSE(r.stream);
  EXPECT_FALSE(r.has_kv);
  const serve_request s = parse_chat_request(R"({"messages": [{"role": "user", "content": "hi"}], "stop": ["a", "bc"],
                                                 "max_completion_tokens": 5, "temperature": null})");
  EXPECT_EQ(s.stop, (std::vector<std::string>{"a", "bc"}));
  EXPECT_EQ(s.max_tokens, 5);
  EXPECT_FLOAT_EQ(s.sampling.temperature, 1.0f);
}

TEST(ServeRequest, MalformedBodiesName400AndTheField) {
  const std::string msgs = R"("messages": [{"role": "user", "content": "hi"}])";
  struct bad_case {
    std::string body, param, says;
  };
  const bad_case cases[] = {
      {"{not json", "", "not valid JSON"},
      {"", "", "not valid JSON"},
      {"[1, 2]", "", "must be a JSON object"},
      {"{}", "messages", "missing"},
      {R"({"messages": "hi"})", "messages", "must be an array"},
      {R"({"messages": []})", "messages", "empty"},
      {R"({"messages": [3]})", "messages[0]", "must be an object"},
      {R"({"messages": [{"content": "x"}]})", "messages[0].role", "missing"},
      {R"({"messages": [{"role": "tool", "content": "x"}]})", "messages[0].role", "'tool' is not supported"},
      {R"({"messages": [{"role": 1, "content": "x"}]})", "messages[0].role", "must be a string"},
      {R"({"messages": [{"role": "user"}]})", "messages[0].content", "missing"},
      {R"({"messages": [{"role": "user", "content": 5}]})", "messages[0].content", "must be a string or an array"},
      {R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]})",
       "messages[0].content[0].type", "'image_url' is not supported"},
      {"{" + msgs + R"(, "temperature": "0.5"})", "temperature", "must be a number (got a string)"},
      {"{" + msgs + R"(, "temperature": 2.5})", "temperature", "must be in [0, 2]"},
      {"{" + msgs + R"(, "top_p": 0})", "top_p", "must be in (0, 1]"},
      {"{" + msgs + R"(, "max_tokens": 0})", "max_tokens", "must be in [1,"},
      {"{" + msgs + R"(, "max_tokens": 1.5})", "max_tokens", "must be an integer"},
      {"{" + msgs + R"(, "max_tokens": "9"})", "max_tokens", "must be a number"},
      {"{" + msgs + R"(, "stop": [1]})", "stop[0]", "must be a string"},
      {"{" + msgs + R"(, "stop": {"a": 1}})", "stop", "must be a string or an array"},
      {"{" + msgs + R"(, "stop": [""]})", "stop", "empty"},
      {"{" + msgs + R"(, "seed": "x"})", "seed", "must be a number"},
      {"{" + msgs + R"(, "stream": "yes"})", "stream", "must be true or false"},
      {"{" + msgs + R"(, "stream_options": {"include_usage": 1}})", "stream_options.include_usage", "true or false"},
      {"{" + msgs + R"(, "n": 2})", "n", "only n = 1"},
      {"{" + msgs + R"(, "logprobs": true})", "logprobs", "not supported"},
      {"{" + msgs + R"(, "presence_penalty": 0.5})", "presence_penalty", "not supported"},
      {"{" + msgs + R"(, "tools": [{"type": "function"}]})", "tools", "not supported"},
      {"{" + msgs + R"(, "kv": "window"})", "kv", "must be an object"},
      {"{" + msgs + R"(, "kv": {"policy": "window", "window": [64]}})", "kv.window", "must be a number, a string or a boolean"},
      {"{" + msgs + R"(, "model": 3})", "model", "must be a string"},
  };
  for (const bad_case& c : cases) {
    const serve_error e = chat_error(c.body);
    EXPECT_EQ(e.status(), 400) << c.body;
    EXPECT_EQ(e.param(), c.param) << c.body;
    EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << c.body << " -> " << e.what();
    EXPECT_EQ(e.type(), "invalid_request_error");
  }
}

// A body nested a million levels deep is a 400 before the JSON parser sees it; 64 levels
// (the limit) still parse and then fail on their content, not on depth.
TEST(ServeRequest, DeeplyNestedBodyIs400BeforeParsing) {
  const std::string deep = "{\"messages\": " + std::string(1000000, '[') + std::string(1000000, ']') + "}";
  const serve_error e = chat_error(deep);
  EXPECT_EQ(e.status(), 400);
  EXPECT_NE(std::string(e.what()).find("nests deeper than 64 levels"), std::string::npos) << e.what();
  // Depth 64 exactly: the object plus 63 arrays; refused for its content instead.
  const std::string at_limit = "{\"messages\": " + std::string(63, '[') + std::string(63, ']') + "}";
  const serve_error f = chat_error(at_limit);
  EXPECT_EQ(f.status(), 400);
  EXPECT_EQ(std::string(f.what()).find("nests deeper"), std::string::npos) << f.what();
  EXPECT_EQ(f.param(), "messages[0]");
  // Brackets inside strings do not count.
  const std::string in_string = R"({"messages": [{"role": "user", "content": ")" + std::string(200, '[') + R"("}]})";
  EXPECT_NO_THROW(parse_chat_request(in_string));
}

TEST(ServeRequest, CompletionPrompts) {
  EXPECT_EQ(parse_completion_request(R"({"prompt": "abc"})").prompt, "abc");
  EXPECT_EQ(parse_completion_request(R"({"prompt": ["abc"]})").prompt, "abc");
  const serve_request t = parse_completion_request(R"({"prompt": [1, 2, 300]})");
  EXPECT_TRUE(t.prompt_is_tokens);
  EXPECT_EQ(t.prompt_tokens, (std::vector<int32_t>{1, 2, 300}));
  for (const char* body : {R"({})", R"({"prompt": 3})", R"({"prompt": []})", R"({"prompt": ["a", "b"]})",
                           R"({"prompt": [1, -1]})", R"({"prompt": [1, 2.5]})", R"({"prompt": "a", "suffix": "z"})"}) {
    try {
      parse_completion_request(body);
      ADD_FAILURE() << "accepted: " << body;
    } catch (const serve_error& e) {
      EXPECT_EQ(e.status(), 400);
      EXPECT_NE(e.param(), "") << body;
    }
  }
}

// --- the "kv" object ------------------------------------------------------------------

model_config shape() {
  model_config c;
  c.n_layers = 2, c.n_heads = 4, c.n_kv_heads = 2, c.head_dim = 64, c.dim = 256, c.n_ctx = 4096;
  return c;
}

kv_policy_spec kv(const std::string& body, const kv_policy_spec& def = {}) {
  const serve_request r =
      parse_chat_request(R"({"messages": [{"role": "user", "content": "x"}], "kv": )" + body + "}");
  return kv_spec_for_request(r.kv, r.has_kv, def, shape(), 4096);
}

serve_error kv_error(const std::string& body, const kv_policy_spec& def = {}) {
  try {
    kv(body, def);
  } catch (const serve_error& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << body;
  return serve_error(0, "");
}

TEST(ServeKv, OptionsByRegistryName) {
  const kv_policy_spec w = kv(R"({"policy": "window", "window": 64, "sinks": 4})");
  EXPECT_EQ(w.name, "window");
  EXPECT_EQ(w.options.window, 64);
  EXPECT_EQ(w.options.sinks, 4);
  EXPECT_EQ(w.text, "window:window=64:sinks=4");
  const kv_policy_spec c = kv(R"({"policy": "confkv", "n_high": 32, "n-low": 96, "protect": 16, "tau": 0.5, "kv_int8": true})");
  EXPECT_EQ(c.options.n_high, 32);  // n_high and n-high both name the option n-high
  EXPECT_EQ(c.options.n_low, 96);
  EXPECT_EQ(c.options.protect, 16);
  EXPECT_FLOAT_EQ(c.options.tau, 0.5f);
  EXPECT_TRUE(c.options.int8);
  const kv_policy_spec f = kv(R"({"policy": "freekv", "budget": 2016, "sinks": 64, "window": 64})");  // a number: freekv's own option
  EXPECT_EQ(f.options.budget, 2016);
  EXPECT_EQ(kv(R"({"policy": "none"})").name, "");
  const kv_policy_spec plain_default = kv("null");  // no kv object: the server's default
  EXPECT_EQ(plain_default.name, "");
}

TEST(ServeKv, BudgetStringSpendsLikeKvBudget) {
  // window spends a budget as sinks + window (kv-policy-window.cpp): 128 tokens, 0 sinks.
  const kv_policy_spec w = kv(R"({"policy": "window", "budget": "128t"})");
  EXPECT_EQ(w.options.window, 128);
  const kv_policy_spec s = kv(R"({"policy": "window", "sinks": 8, "budget": "128t"})");
  EXPECT_EQ(s.options.window + s.options.sinks, 128);
  EXPECT_EQ(s.options.sinks, 8);
  const serve_error e = kv_error(R"({"policy": "window", "budget": "12 apples"})");
  EXPECT_EQ(e.param(), "kv.budget");
}

TEST(ServeKv, WithoutPolicyTheServerDefaultIsTheBase) {
  kv_policy_spec def;
  def.name = "window";
  def.options.window = 300;
  const kv_policy_spec k = kv(R"({"sinks": 2})", def);
  EXPECT_EQ(k.name, "window");
  EXPECT_EQ(k.options.window, 300);
  EXPECT_EQ(k.options.sinks, 2);
  EXPECT_EQ(kv_error(R"({"window": 64})").param(), "kv.window");  // default: the plain cache
}

TEST(ServeKv, MistakesName400AndTheOptions) {
  const serve_error u = kv_error(R"({"policy": "window", "foo": 1, "window": 64, "heavy": 2})");
  EXPECT_EQ(u.status(), 400);
  EXPECT_EQ(u.param(), "kv.foo");
  const std::string m = u.what();
  EXPECT_NE(m.find("'foo'"), std::string::npos) << m;
  EXPECT_NE(m.find("'heavy'"), std::string::npos) << m;  // every unknown one
  EXPECT_NE(m.find("its options: window, sinks"), std::string::npos) << m;
  EXPECT_EQ(kv_error(R"({"policy": "lru"})").param(), "kv.policy");
  EXPECT_NE(std::string(kv_error(R"({"policy": "lru"})").what()).find("full, window"), std::string::npos);
  EXPECT_EQ(kv_error(R"({"policy": 3})").param(), "kv.policy");
  EXPECT_EQ(kv_error(R"({"policy": "window", "window": "64"})").param(), "kv.window");
  EXPECT_EQ(kv_error(R"({"policy": "window", "window": 1.5})").param(), "kv.window");
  EXPECT_EQ(kv_error(R"({"policy": "window", "window": true})").param(), "kv.window");
  EXPECT_EQ(kv_error(R"({"policy": "confkv", "kv-int8": 2})").param(), "kv.kv-int8");
  const serve_error range = kv_error(R"({"policy": "window", "window": 0})");  // make_kv_policy's range check
  EXPECT_EQ(range.param(), "kv");
  EXPECT_NE(std::string(range.what()).find("window"), std::string::npos);
  EXPECT_EQ(kv_error(R"({"policy": "confkv", "tau": 1.5})").param(), "kv");
  EXPECT_EQ(kv_error(R"({"policy": "none", "window": 3})").param(), "kv.window");
}

// --- streamed text ----------------------------------------------------------------------

TEST(ServeStreamText, HoldsBackAPossibleStopString) {
  stream_text_gate g({"END", "X"});
  EXPECT_EQ(g.next("ab"), "ab");  // no stop string starts in "ab"
  EXPECT_EQ(g.next("abcE"), "c");  // "E" may start END
  EXPECT_EQ(g.next("abcEN"), "");
  EXPECT_EQ(g.rest("abc"), "");  // generate() cut "END": nothing of it was sent
  stream_text_gate h({"<|im_end|>"});
  EXPECT_EQ(h.next("hello <|im"), "hello ");
  EXPECT_EQ(h.next("hello <|imx"), "<|imx");  // it was not the stop string after all
  EXPECT_EQ(h.rest("hello <|imx world"), " world");
  stream_text_gate none({});
  EXPECT_EQ(none.next("abc"), "abc");
}

TEST(ServeStreamText, WholeUtf8CharactersOnly) {
  stream_text_gate g({});
  EXPECT_EQ(g.next("h\xC3"), "h");           // é's first byte waits
  EXPECT_EQ(g.next("h\xC3\xA9"), "\xC3\xA9");
  EXPECT_EQ(g.next("h\xC3\xA9\xE2\x82"), "");  // two bytes of €
  EXPECT_EQ(g.next("h\xC3\xA9\xE2\x82\xAC!"), "\xE2\x82\xAC!");
  EXPECT_EQ(utf8_complete_prefix("a\xF0\x9F\x98", 4), 1u);
  EXPECT_EQ(utf8_complete_prefix("a\xF0\x9F\x98\x80", 5), 5u);
  EXPECT_EQ(utf8_complete_prefix("ab", 1), 1u);
}

}  // namespace
}  // namespace kvarena::serve
