// test-agent.cpp: agent/ without model files from ../shared:
//   - chat templates: exact text of each built-in format, prefix stability (what full mode
//     relies on), detection from a GGUF template's markers, names;
//   - the prompt: every action form of the grammar, the worked examples (whose replies
//     parse and whose ids are in their observations), the step message;
//   - observation truncation with a real tokenizer (a random model's SentencePiece vocab):
//     within budget, whole lines, marked;
//   - action extraction from typical replies, and what the env receives for a bad one;
//   - episodes against an in-process env server with a tiny random model (its replies are
//     garbage, so episodes end by the early-stop rules): clean termination, steps
//     recorded, env sessions closed, errors returned as status "error", a full context as
//     an early stop; the token accounting of the history modes (full mode prefills
//     exactly the new messages after step 1, last mode the whole prompt every step); and
//     KV policies ("full" vs "window") as the steps and the KV trace report them.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "agent-action.h"
#include "agent-loop.h"
#include "url-view.h"
#include "chat-template.h"
#include "client/env-client.h"
#include "kv-meter.h"
#include "eval/action-parse.h"
#include "gguf-reader.h"
#include "gguf-writer.h"
#include "model-random.h"
#include "model.h"
#include "obs-truncate.h"
#include "oracle-agent.h"
#include "prompt-examples.h"
#include "prompt.h"
#include "server/env-server.h"
#include "test-util.h"
#include "tokenizer.h"

namespace kvarena {
namespace {

// ---------------------------------------------------------------- chat templates

const std::vector<chat_message> k_conv = {
    {"system", "SYS"}, {"user", "U1"}, {"assistant", " A1"}, {"user", "U2"}};

TEST(ChatTemplate, RendersEachFormat) {
  EXPECT_EQ(chat_template::by_name("chatml").render(k_conv, true),
            "<|im_start|>system\nSYS<|im_end|>\n<|im_start|>user\nU1<|im_end|>\n"
            "<|im_start|>assistant\n A1<|im_end|>\n<|im_start|>user\nU2<|im_end|>\n"
            "<|im_start|>assistant\n");
  EXPECT_EQ(chat_template::by_name("llama3").render(k_conv, true),
            "<|start_header_id|>system<|end_header_id|>\n\nSYS<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nU1<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n A1<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nU2<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(chat_template::by_name("llama2").render(k_conv, true),
            "[INST] <<SYS>>\nSYS\n<</SYS>>\n\nU1 [/INST] A1 </s><s>[INST] U2 [/INST]");
  EXPECT_EQ(chat_template::by_name("plain").render(k_conv, true),
            "SYS\n\nUSER:\nU1\n\nASSISTANT:\n A1\n\nUSER:\nU2\n\nASSISTANT:\n");
  // Without a generation prompt, and Llama-2 without a system message.
  EXPECT_EQ(chat_template::by_name("chatml").render({{"user", "hi"}}, false), "<|im_start|>user\nhi<|im_end|>\n");
  EXPECT_EQ(chat_template::by_name("llama2").render({{"user", "hi"}, {"assistant", "yo"}, {"user", "x"}}, true),
            "[INST] hi [/INST] yo </s><s>[INST] x [/INST]");
  EXPECT_THROW(chat_template::by_name("chatml").render({{"tool", "x"}}, true), std::invalid_argument);
}

TEST(ChatTemplate, PrefixStableForFullHistory) {
  for (const char* name : {"chatml", "llama3", "llama2", "plain"}) {
    SCOPED_TRACE(name);
    const chat_template ct = chat_template::by_name(name);
    std::vector<chat_message> msgs = {{"system", "S"}, {"user", "obs 1"}};
    std::string incremental = ct.render(msgs, true);
    for (int step = 2; step <= 4; ++step) {
      const std::string reply = " reasoning ```click [" + std::to_string(step) + "]```";
      incremental += reply;  // what the model generated, already in the cache
      msgs.push_back({"assistant", reply});
      msgs.push_back({"user", "obs " + std::to_string(step)});
      incremental += ct.continue_after_reply(msgs, msgs.size() - 2, true);
      EXPECT_EQ(incremental, ct.render(msgs, true));
    }
    EXPECT_THROW(ct.continue_after_reply(msgs, msgs.size() - 1, true), std::invalid_argument);
  }
}

// A model's own template: test-chat-template.cpp.
TEST(ChatTemplate, BuiltInFormatsByName) {
  EXPECT_EQ(chat_template::by_name("qwen").format(), chat_format::chatml);
  for (const char* n : {"chatml", "llama3", "llama2", "plain"}) EXPECT_STREQ(chat_template::by_name(n).name(), n);
  try {
    chat_template::by_name("mistral");
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("chatml, llama3, llama2 or plain"), std::string::npos) << e.what();
  }
  EXPECT_EQ(chat_template::by_name("chatml").stop_strings(), std::vector<std::string>{"<|im_end|>"});
}

// ---------------------------------------------------------------- prompt

TEST(Prompt, SystemPromptHasEveryActionFormAndTheRules) {
  const std::string sys = system_prompt();
  std::istringstream in(action_grammar_help());
  std::string line;
  int forms = 0;
  while (std::getline(in, line)) {
    const std::string form = line.substr(0, line.find("   ("));
    EXPECT_NE(sys.find("```" + form + "```"), std::string::npos) << form;
    ++forms;
  }
  EXPECT_EQ(forms, 13);
  for (const char* s : {"Page Operation Actions:", "Tab Management Actions:", "URL Navigation Actions:",
                        "Completion Action:", "In summary, the next action I will perform is", "N/A",
                        "(1 or missing: press Enter after typing)"})
    EXPECT_NE(sys.find(s), std::string::npos) << s;
  EXPECT_EQ(sys.find("Other Actions"), std::string::npos);  // every verb has its VWA group
}

TEST(Prompt, WorkedExamplesParseAndComeFromTheThreeSites) {
  const auto& ex = worked_examples();
  ASSERT_EQ(ex.size(), 3u);
  std::vector<std::string> sites;
  for (const worked_example& e : ex) {
    SCOPED_TRACE(e.site);
    sites.push_back(e.site);
    action_parse_result r = parse_model_output(e.reply);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_NE(e.reply.find("Let's think step-by-step."), std::string::npos);
    EXPECT_NE(e.reply.find("In summary, the next action I will perform is ```"), std::string::npos);
    if (r.act.element_id >= 0) {  // the id it acts on is in its observation
      EXPECT_NE(e.observation.find("[" + std::to_string(r.act.element_id) + "]"), std::string::npos);
    }
    EXPECT_EQ(e.observation.rfind("Tab 0 (current): ", 0), 0u);
  }
  EXPECT_EQ(sites, (std::vector<std::string>{"shopping", "classifieds", "reddit"}));
  EXPECT_EQ(parse_model_output(ex[0].reply).act.answer, "$27.49");
}

TEST(Prompt, PrefixAndStepMessage) {
  const auto prefix = prompt_prefix(2);
  ASSERT_EQ(prefix.size(), 5u);
  EXPECT_EQ(prefix[0].role, "system");
  EXPECT_EQ(prefix[0].content, system_prompt());
  EXPECT_EQ(prefix[1].role, "user");
  EXPECT_NE(prefix[1].content.find(worked_examples()[0].objective), std::string::npos);
  EXPECT_EQ(prefix[2].role, "assistant");
  EXPECT_EQ(prefix[2].content, worked_examples()[0].reply);
  EXPECT_EQ(prompt_prefix(0).size(), 1u);
  EXPECT_EQ(prompt_prefix(3).size(), 7u);
  EXPECT_THROW(prompt_prefix(4), std::invalid_argument);
  EXPECT_THROW(prompt_prefix(-1), std::invalid_argument);
  EXPECT_EQ(step_message({"[1] RootWebArea 'x'", "http://h/p", "Find x", "None"}),
            "OBSERVATION:\n[1] RootWebArea 'x'\nURL: http://h/p\nOBJECTIVE: Find x\nPREVIOUS ACTION: None");
}

// ---------------------------------------------------------------- action extraction

TEST(AgentAction, TypicalReplies) {
  agent_action a = extract_agent_action(
      "Let's think step-by-step. The search box is [34]. In summary, the next action I will perform is "
      "```type [34] [red bike] [1]```");
  ASSERT_TRUE(a.ok()) << a.parsed.error;
  EXPECT_EQ(a.text, "type [34] [red bike] [1]");
  EXPECT_EQ(a.env_text, "type [34] [red bike] [1]");
  EXPECT_TRUE(parse_action(a.env_text).ok());

  a = extract_agent_action("I will click it.\n```\nclick [12]\n```\nThen more text ```stop [x]```");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.text, "click [12]");  // the first block wins

  a = extract_agent_action("In summary ```text\nscroll down\n```");  // a language tag, VWA's bare scroll
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.text, "scroll [down]");

  a = extract_agent_action("Done. In summary, the next action I will perform is ```stop [N/A]```");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.parsed.act.kind, action_kind::stop);
  EXPECT_EQ(a.parsed.act.answer, "N/A");
}

TEST(AgentAction, FailuresFailOnTheServerToo) {
  // No block (a bare action must not act on the server), a bad verb, an unclosed block,
  // an empty block, a truncated reply.
  for (const char* reply : {"click [3]", "```Click [3]```", "In summary ```click [3]", "``````",
                            "Let's think step-by-step. The link", ""}) {
    SCOPED_TRACE(reply);
    agent_action a = extract_agent_action(reply);
    EXPECT_FALSE(a.ok());
    EXPECT_EQ(a.text, "none");
    EXPECT_EQ(a.parsed.act.kind, action_kind::none);
    EXPECT_FALSE(parse_action(a.env_text).ok()) << a.env_text;
  }
  EXPECT_NE(extract_agent_action("```Click [3]```").parsed.error.find("lowercase"), std::string::npos);
}

TEST(AgentAction, PreviousActionLine) {
  EXPECT_EQ(previous_action_text(nullptr, std::nullopt), "None");
  agent_action ok = extract_agent_action("```click [12]```");
  EXPECT_EQ(previous_action_text(&ok, std::nullopt), "click [12]");
  EXPECT_EQ(previous_action_text(&ok, std::string("no matching element [12]\nmore")),
            "click [12] (failed: no matching element [12])");
  agent_action bad = extract_agent_action("no backticks here");
  const std::string line = previous_action_text(&bad, std::string("ignored"));
  EXPECT_EQ(line.rfind("None (your previous reply was not in the correct format: no action found", 0), 0u) << line;
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(AgentAction, ANoteLineBeforeTheBlockIsCarriedIntoThePreviousActionLine) {
  const agent_action a = extract_agent_action("NOTE: $23.99\n```tab_focus [1]```");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.text, "tab_focus [1]");
  EXPECT_EQ(a.note, "$23.99");
  EXPECT_EQ(previous_action_text(&a, std::nullopt), "tab_focus [1] (NOTE: $23.99)");
  EXPECT_EQ(previous_action_text(&a, std::string("no tab 1")), "tab_focus [1] (NOTE: $23.99) (failed: no tab 1)");
  // On the block's line, spaces trimmed; leading blank lines allowed.
  EXPECT_EQ(extract_agent_action("\n NOTE:   4.5 out of 5  ```click [3]```").note, "4.5 out of 5");
  // Only a reply that begins with it: VWA's reasoning is no note, nor a note later on.
  EXPECT_EQ(extract_agent_action("Let's think. NOTE: $1\n```click [3]```").note, "");
  EXPECT_EQ(extract_agent_action("```click [3]```\nNOTE: $1").note, "");
  EXPECT_EQ(extract_agent_action("NOTE:\n```click [3]```").note, "");
  // Long notes are cut to 200 bytes, never inside a UTF-8 character ("é" is 2 bytes).
  std::string accents;
  for (int i = 0; i < 120; ++i) accents += "\xC3\xA9";
  // "a" then the pairs: byte 200 is the second byte of a pair, so the cut is at 199.
  const std::string cut = extract_agent_action("NOTE: a" + accents + "\n```click [3]```").note;
  EXPECT_EQ(cut.size(), 199u);
  EXPECT_EQ(cut, "a" + accents.substr(0, 198));
  // A note with an unparsable block: the line is the parse failure's (the note is not shown).
  const agent_action bad = extract_agent_action("NOTE: $5\n```fly [3]```");
  EXPECT_EQ(bad.note, "$5");
  EXPECT_EQ(previous_action_text(&bad, std::nullopt).rfind("None (", 0), 0u);
}

TEST(AgentAction, ANoteByElementHoldsThatElementsNameOnThePageItAnswers) {
  const std::string page = "[1] RootWebArea 'Shop'\n\t[84] StaticText '$23.99'\n\t[86] StaticText ''";
  const agent_action a = extract_agent_action("NOTE [84]\n```tab_focus [1]```", page);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.note_element, 84);
  EXPECT_EQ(a.note, "$23.99");
  EXPECT_EQ(previous_action_text(&a, std::nullopt), "tab_focus [1] (NOTE: $23.99)");
  EXPECT_EQ(extract_agent_action(" NOTE [84]  ```click [3]```", page).note, "$23.99");
  // An id the page lacks, or an element with no text: no note, and the line says why.
  const agent_action missing = extract_agent_action("NOTE [85]\n```click [3]```", page);
  EXPECT_EQ(missing.note, "");
  EXPECT_EQ(previous_action_text(&missing, std::nullopt), "click [3] (NOTE [85] failed: no element [85] on the page)");
  const agent_action empty = extract_agent_action("NOTE [86]\n```click [3]```", page);
  EXPECT_EQ(previous_action_text(&empty, std::nullopt), "click [3] (NOTE [86] failed: element [86] has no text)");
  // Not the element form: junk after the id, no id, or no page to read it from.
  EXPECT_EQ(extract_agent_action("NOTE [84] and more\n```click [3]```", page).note_element, -1);
  EXPECT_EQ(extract_agent_action("NOTE []\n```click [3]```", page).note_element, -1);
  EXPECT_EQ(extract_agent_action("NOTE [84]\n```click [3]```").note, "");
}

TEST(AgentAction, AnAnswerByElementIsThatElementsNameAndTheEnvGetsTheName) {
  const std::string page = "[1] RootWebArea 'Shop'\n\t[84] StaticText '$31.99'\n\t[86] StaticText ''\n"
                           "\t[90] link 'It\\'s new'";
  agent_action a = extract_agent_action("```stop [[84]]```", page);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.answer_element, 84);
  EXPECT_EQ(a.parsed.act.answer, "$31.99");
  EXPECT_EQ(a.env_text, "stop [$31.99]");  // what the env parses is the resolved answer
  EXPECT_EQ(a.text, "stop [$31.99]");
  EXPECT_EQ(a.answer_error, "");
  EXPECT_EQ(extract_agent_action("```stop [[90]]```", page).parsed.act.answer, "It's new");  // repr quoting undone
  // An id the page lacks or an element with no text: the answer stays "[85]", and why is said.
  a = extract_agent_action("```stop [[85]]```", page);
  EXPECT_EQ(a.parsed.act.answer, "[85]");
  EXPECT_EQ(a.answer_error, "no element [85] on the page");
  EXPECT_EQ(extract_agent_action("```stop [[86]]```", page).answer_error, "element [86] has no text");
  // Not the element form: a plain answer, more than an id, or not a stop.
  EXPECT_EQ(extract_agent_action("```stop [84]```", page).parsed.act.answer, "84");
  EXPECT_EQ(extract_agent_action("```stop [[84] and [86]]```", page).answer_element, -1);
  EXPECT_EQ(extract_agent_action("```type [84] [[86]] [0]```", page).answer_element, -1);
}

TEST(AgentAction, ActionByElementPointsAtTheElementNamedExactlyTheAnswer) {
  const std::string page = "[1] RootWebArea 'Shop'\n\t[80] StaticText 'Price: $31.99'\n\t[84] StaticText '$31.99'\n"
                           "\t[85] StaticText '$31.99'\n\t[88] link '9'\n\t[90] StaticText 'Rating: 3.7 out of 5'";
  EXPECT_EQ(action_by_element("stop [$31.99]", page), "stop [[84]]");  // exact name, first such
  // A name merely containing the answer, a bare number (a count is worked out), another
  // action, or no page: the action as it is.
  EXPECT_EQ(action_by_element("stop [3.7]", page), "stop [3.7]");
  EXPECT_EQ(action_by_element("stop [9]", page), "stop [9]");
  EXPECT_EQ(action_by_element("stop [Price]", page), "stop [Price]");
  EXPECT_EQ(action_by_element("click [84]", page), "click [84]");
  EXPECT_EQ(action_by_element("stop [$31.99]", ""), "stop [$31.99]");
  // The pointer resolves back to the answer on the same page.
  EXPECT_EQ(extract_agent_action("```" + action_by_element("stop [$31.99]", page) + "```", page).parsed.act.answer,
            "$31.99");
}

// ---------------------------------------------------------------- KV meter

TEST(KvMeter, TraceStaysSmallAndKeepsEveryPrefillChunk) {
  kv_meter m(/*trace_every=*/2, /*max_points=*/16);
  m.begin_step(0);
  kv_step_stats s;
  s.kept = {10, 30};
  for (int i = 1; i <= 1000; ++i) {
    s.step = i;
    s.decode = i % 100 != 1;  // a prefill chunk every 100 calls
    s.n_tokens = s.decode ? 1 : 64;
    s.seq_len += s.n_tokens;
    s.kv_device_bytes = static_cast<size_t>(i == 500 ? 999999 : 1000 + i);
    m.on_forward(s);
  }
  EXPECT_LE(m.trace().size(), 16u);
  EXPECT_GE(m.trace().size(), 8u);
  for (size_t i = 1; i < m.trace().size(); ++i)
    EXPECT_GT(m.trace()[i].forward_call, m.trace()[i - 1].forward_call);
  EXPECT_EQ(m.trace()[0].kv_tokens, 30);  // max over layers
  EXPECT_EQ(m.peak_kv_bytes(), 999999u);  // peaks see every call, sampled or not
}

// ---------------------------------------------------------------- with a random model

class AgentModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    random_model_spec s;
    s.arch = model_arch::llama;
    s.dim = 64;
    s.n_layers = 2;
    s.n_heads = 4;
    s.n_kv_heads = 2;
    s.ffn_dim = 128;
    s.n_vocab = 1024;
    s.n_ctx = 8192;
    s.seed = 5;
    const std::string path = (test::temp_dir("agent-model") / "m.gguf").string();
    write_random_model(s, path);
    model_ = load_model(path).release();
    tok_ = tokenizer::from_gguf(*model_->gguf).release();
  }
  static void TearDownTestSuite() {
    delete tok_;
    delete model_;
  }
  static model* model_;
  static tokenizer* tok_;
};
model* AgentModel::model_ = nullptr;
tokenizer* AgentModel::tok_ = nullptr;

std::string numbered_lines(int n) {
  std::string s;
  for (int i = 0; i < n; ++i)
    s += "\t[" + std::to_string(i + 2) + "] link 'Item number " + std::to_string(i) + "'\n";
  return s;
}

TEST_F(AgentModel, TruncatesObservationToTokenBudgetAtLineBoundary) {
  const std::string text = "Tab 0 (current): Page\n\n[1] RootWebArea 'Page' focused: True\n" + numbered_lines(200);
  const int64_t all = static_cast<int64_t>(tok_->encode(text, false).size());
  ASSERT_GT(all, 400);

  truncated_observation t = truncate_to_tokens(*tok_, text, 200);
  EXPECT_TRUE(t.truncated);
  EXPECT_EQ(t.n_tokens_in, all);
  EXPECT_LE(t.n_tokens, 200);
  EXPECT_GT(t.n_tokens, 150);  // not much less than the budget
  const std::string marker = "\n" + truncation_marker(200);
  ASSERT_GT(t.text.size(), marker.size());
  ASSERT_EQ(t.text.substr(t.text.size() - marker.size()), marker);
  const std::string kept = t.text.substr(0, t.text.size() - marker.size());
  EXPECT_EQ(text.rfind(kept, 0), 0u);        // a prefix of the input
  EXPECT_EQ(text[kept.size()], '\n');        // ending at a line end
  EXPECT_EQ(static_cast<int64_t>(tok_->encode(kept, false).size()), t.n_tokens);

  for (int64_t budget : {all, all + 10, int64_t(0), int64_t(-1)}) {
    truncated_observation u = truncate_to_tokens(*tok_, text, budget);
    EXPECT_FALSE(u.truncated);
    EXPECT_EQ(u.text, text);
  }
  // One long line of multi-byte characters: cut inside it, at a character boundary.
  std::string line;
  for (int i = 0; i < 300; ++i) line += "\xC3\xA9t\xC3\xA9 ";
  truncated_observation v = truncate_to_tokens(*tok_, line, 50);
  EXPECT_TRUE(v.truncated);
  EXPECT_LE(v.n_tokens, 50);
  const std::string head = v.text.substr(0, v.text.find('\n'));
  EXPECT_FALSE(head.empty());
  EXPECT_EQ(line.rfind(head, 0), 0u);
  EXPECT_NE(static_cast<unsigned char>(line[head.size()]) & 0xC0, 0x80);
}

// A model whose GGUF holds only metadata (what `set` writes), for the defaults a trained model
// names: enough for the *_for_model functions, which read nothing else.
model model_with(const char* name, const std::function<void(gguf_writer&)>& set) {
  gguf_writer w;
  w.set_string("general.architecture", "llama");
  set(w);
  const std::string path = (test::temp_dir("model-keys") / name).string();
  w.write(path);
  model m;
  m.gguf = std::make_shared<const gguf_file>(path);
  return m;
}

// The observation budget: --max-obs-tokens when given, else the number the model's GGUF names
// (a trained model's pages were cut to it), else 1024.
TEST(ObservationBudget, FlagThenTheModelsKeyThen1024) {
  const model named = model_with("named.gguf", [](gguf_writer& w) { w.set_u32("kvarena.max_obs_tokens", 2048); });
  const model unnamed = model_with("unnamed.gguf", [](gguf_writer&) {});
  const model zero = model_with("zero.gguf", [](gguf_writer& w) { w.set_u32("kvarena.max_obs_tokens", 0); });
  EXPECT_EQ(max_obs_tokens_for_model(named, std::nullopt), 2048);
  EXPECT_EQ(max_obs_tokens_for_model(unnamed, std::nullopt), 1024);
  EXPECT_EQ(max_obs_tokens_for_model(model{}, std::nullopt), 1024);  // no GGUF (a llama2.c file)
  EXPECT_EQ(max_obs_tokens_for_model(named, 300), 300);              // the flag wins
  EXPECT_EQ(max_obs_tokens_for_model(named, 0), 0);                  // 0: no limit
  EXPECT_THROW(max_obs_tokens_for_model(named, -1), std::invalid_argument);
  try {
    max_obs_tokens_for_model(zero, std::nullopt);
    ADD_FAILURE() << "a model naming budget 0 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("kvarena.max_obs_tokens is 0"), std::string::npos) << e.what();
  }
  EXPECT_EQ(max_obs_tokens_for_model(zero, 512), 512);  // the flag overrides a bad key
}

// The history mode: --history when given, else the mode the model's GGUF names (the one a
// trained model was measured in), else full.
TEST(HistoryMode, FlagThenTheModelsKeyThenFull) {
  const model last = model_with("last.gguf", [](gguf_writer& w) { w.set_string("kvarena.history", "last"); });
  const model full = model_with("full.gguf", [](gguf_writer& w) { w.set_string("kvarena.history", "full"); });
  const model unnamed = model_with("none.gguf", [](gguf_writer&) {});
  const model odd = model_with("odd.gguf", [](gguf_writer& w) { w.set_string("kvarena.history", "both"); });
  EXPECT_EQ(history_for_model(last, std::nullopt), history_mode::last);
  EXPECT_EQ(history_for_model(full, std::nullopt), history_mode::full);
  EXPECT_EQ(history_for_model(unnamed, std::nullopt), history_mode::full);
  EXPECT_EQ(history_for_model(model{}, std::nullopt), history_mode::full);  // no GGUF
  EXPECT_EQ(history_for_model(last, history_mode::full), history_mode::full);  // the flag wins
  EXPECT_EQ(history_for_model(unnamed, history_mode::last), history_mode::last);
  try {
    history_for_model(odd, std::nullopt);
    ADD_FAILURE() << "a model naming history 'both' was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("kvarena.history is 'both'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(history_for_model(odd, history_mode::last), history_mode::last);  // the flag overrides a bad key
}

TEST_F(AgentModel, ChatTemplateOfARandomModelIsPlain) {
  EXPECT_EQ(gguf_chat_template(*model_), "");
  EXPECT_EQ(chat_template::for_model(*model_).format(), chat_format::plain);
  EXPECT_EQ(chat_template::for_model(*model_, "llama3").format(), chat_format::llama3);
}

// Episodes against an in-process env server.
class AgentEpisode : public AgentModel {
 protected:
  static void SetUpTestSuite() {
    AgentModel::SetUpTestSuite();
    server_ = tasks::start_local_env_server(2).release();
    env_client_options o;
    o.total_timeout_ms = 30000;
    client_ = new env_client(server_->base_url(), o);
    task_suite suite = load_tasks(std::string(KVARENA_SOURCE_DIR) + "/tasks/vwa-local/30.json");
    ASSERT_TRUE(suite.ok() && suite.tasks.size() == 1);
    task_ = new task(suite.tasks[0]);
  }
  static void TearDownTestSuite() {
    delete task_;
    delete client_;
    delete server_;
    AgentModel::TearDownTestSuite();
  }

  static model_context context(const char* chat = "auto") {
    model_context mc;
    mc.llm = model_;
    mc.tok = tok_;
    mc.chat = chat_template::for_model(*model_, chat);
    mc.session.n_threads = 2;
    mc.sampling.seed = 1;
    return mc;
  }
  static agent_config config(history_mode h) {
    agent_config c;
    c.history = h;
    c.early_stop.max_steps = 3;
    c.max_new_tokens = 16;
    c.max_obs_tokens = 256;
    c.n_examples = 1;
    return c;
  }
  // The first observation of the task, as a fresh session shows it (the same page the
  // agent sees at every step, since its garbage replies never act).
  static std::string first_observation() {
    env_created c = client_->create_session(*task_);
    client_->close(c.session_id);
    return c.observation.text;
  }

  static env_server* server_;
  static env_client* client_;
  static task* task_;
};
env_server* AgentEpisode::server_ = nullptr;
env_client* AgentEpisode::client_ = nullptr;
task* AgentEpisode::task_ = nullptr;

TEST_F(AgentEpisode, GarbageRepliesEndCleanlyByTheEarlyStopRules) {
  for (history_mode h : {history_mode::last, history_mode::full}) {
    SCOPED_TRACE(history_mode_name(h));
    episode_result r = run_episode(*client_, *task_, config(h), context());
    ASSERT_EQ(r.status, "done") << r.error;
    EXPECT_EQ(r.steps, 3);
    EXPECT_EQ(r.end_reason, "Reach max steps 3");
    EXPECT_EQ(r.answer, "Early stop: Reach max steps 3");
    EXPECT_FALSE(r.success);
    EXPECT_EQ(r.score, 0);
    EXPECT_EQ(r.history_mode, history_mode_name(h));
    EXPECT_EQ(r.chat_template, "plain");
    ASSERT_EQ(r.step_records.size(), 3u);
    for (const step_record& s : r.step_records) {
      EXPECT_FALSE(s.parsed);
      EXPECT_EQ(s.action, "none");
      ASSERT_TRUE(s.action_error.has_value());
      EXPECT_GT(s.generated_tokens, 0);
      EXPECT_LE(s.generated_tokens, 16);
      EXPECT_GT(s.prompt_tokens, 0);
      EXPECT_GT(s.kv_tokens, 0);
      EXPECT_GT(s.kv_bytes, 0u);
      EXPECT_NE(s.url.find("/shopping"), std::string::npos);
      EXPECT_TRUE(s.obs_truncated);
      EXPECT_LE(s.obs_tokens, 256);
    }
    EXPECT_NE(r.final_url.find("/shopping"), std::string::npos);
    EXPECT_GT(r.peak_kv_bytes, 0u);
    EXPECT_GE(r.peak_device_bytes, r.peak_kv_bytes);
    EXPECT_GT(r.wall_ms, 0);
    ASSERT_FALSE(r.kv_trace.empty());
    for (size_t i = 1; i < r.kv_trace.size(); ++i) {
      EXPECT_GT(r.kv_trace[i].forward_call, r.kv_trace[i - 1].forward_call);
      EXPECT_GT(r.kv_trace[i].token_index, r.kv_trace[i - 1].token_index);
    }
    EXPECT_EQ(r.kv_trace.back().step, 2);
    EXPECT_EQ(server_->session_count(), 0u);  // the env session was closed
  }
  // The parse-failure rule, before max_steps.
  agent_config c = config(history_mode::last);
  c.early_stop.max_steps = 5;
  c.early_stop.parse_failures = 2;
  episode_result r = run_episode(*client_, *task_, c, context());
  ASSERT_EQ(r.status, "done") << r.error;
  EXPECT_EQ(r.steps, 2);
  EXPECT_EQ(r.end_reason, "Failed to parse actions for 2 times");
}

TEST_F(AgentEpisode, FullModePrefillsOnlyTheNewMessages) {
  const model_context mc = context("chatml");
  const std::string obs = first_observation();
  episode_result last = run_episode(*client_, *task_, config(history_mode::last), mc);
  episode_result full = run_episode(*client_, *task_, config(history_mode::full), mc);
  ASSERT_EQ(last.status, "done") << last.error;
  ASSERT_EQ(full.status, "done") << full.error;
  ASSERT_EQ(last.step_records.size(), 3u);
  ASSERT_EQ(full.step_records.size(), 3u);

  // The user message of step k, rebuilt from what the records say the agent saw.
  const truncated_observation shown = truncate_to_tokens(*tok_, obs, 256);
  auto user_message = [&](const episode_result& r, size_t k) {
    std::string prev = "None";
    agent_action a;
    if (k > 0) {
      a = extract_agent_action(r.step_records[k - 1].output);
      prev = previous_action_text(&a, std::nullopt);
    }
    return step_message({shown.text, r.step_records[k].url, task_->intent, prev});
  };
  auto whole_prompt_tokens = [&](const episode_result& r, size_t k) {
    std::vector<chat_message> msgs = prompt_prefix(1);
    msgs.push_back({"user", user_message(r, k)});
    return static_cast<int64_t>(tok_->encode(mc.chat.render(msgs, true), true, true).size());
  };

  std::printf("step  last: prompt gen seq_len   full: prompt gen seq_len\n");
  for (size_t k = 0; k < 3; ++k) {
    const step_record& l = last.step_records[k];
    const step_record& f = full.step_records[k];
    std::printf("%4zu  %12lld %3lld %7lld   %12lld %3lld %7lld\n", k + 1, (long long)l.prompt_tokens,
                (long long)l.generated_tokens, (long long)l.seq_len, (long long)f.prompt_tokens,
                (long long)f.generated_tokens, (long long)f.seq_len);
    // Last mode: every step re-prefills the whole prompt, the sequence holds only this step.
    EXPECT_EQ(l.prompt_tokens, whole_prompt_tokens(last, k)) << "step " << k + 1;
    EXPECT_EQ(l.seq_len, l.prompt_tokens + l.generated_tokens);
    if (k == 0) {
      EXPECT_EQ(f.prompt_tokens, whole_prompt_tokens(full, 0));
      EXPECT_EQ(f.seq_len, f.prompt_tokens + f.generated_tokens);
      continue;
    }
    // Full mode: only what follows the previous reply: its end, the new message, the header.
    const std::vector<chat_message> tail = {{"assistant", full.step_records[k - 1].output},
                                            {"user", user_message(full, k)}};
    const int64_t expect_new =
        static_cast<int64_t>(tok_->encode(mc.chat.continue_after_reply(tail, 0, true), false, true).size());
    EXPECT_EQ(f.prompt_tokens, expect_new) << "step " << k + 1;
    EXPECT_LT(f.prompt_tokens * 2, full.step_records[0].prompt_tokens);
    EXPECT_EQ(f.seq_len, full.step_records[k - 1].seq_len + f.prompt_tokens + f.generated_tokens);
    EXPECT_GT(f.kv_tokens, full.step_records[k - 1].kv_tokens);  // the cache grows over the horizon
  }
  EXPECT_LT(full.prompt_tokens, last.prompt_tokens);
}

TEST_F(AgentEpisode, FullContextEndsTheEpisodeEarly) {
  // Room for the first step but not the second.
  agent_config c = config(history_mode::full);
  model_context mc = context();
  episode_result probe = run_episode(*client_, *task_, c, mc);
  ASSERT_EQ(probe.status, "done") << probe.error;
  mc.session.n_ctx = probe.step_records[0].seq_len + 16 + 20;
  episode_result r = run_episode(*client_, *task_, c, mc);
  ASSERT_EQ(r.status, "done") << r.error;
  EXPECT_EQ(r.steps, 1);
  EXPECT_EQ(r.end_reason.rfind("Context full: ", 0), 0u) << r.end_reason;
  EXPECT_EQ(r.answer, "Early stop: " + r.end_reason);
  EXPECT_EQ(server_->session_count(), 0u);
}

TEST_F(AgentEpisode, FirstPromptOverTheContextIsAnError) {
  // Not even the first prompt fits: nothing can run, so the episode is an error naming the
  // sizes and what to change, not a "done" episode of zero steps (in both history modes).
  for (history_mode h : {history_mode::full, history_mode::last}) {
    SCOPED_TRACE(history_mode_name(h));
    agent_config c = config(h);
    model_context mc = context();
    mc.session.n_ctx = 64;
    const episode_result r = run_episode(*client_, *task_, c, mc);
    EXPECT_EQ(r.status, "error");
    EXPECT_EQ(r.steps, 0);
    EXPECT_TRUE(r.step_records.empty());
    EXPECT_EQ(r.error.rfind("step 1 prompt: the first prompt (", 0), 0u) << r.error;
    EXPECT_NE(r.error.find(" + max_new_tokens " + std::to_string(c.max_new_tokens) + " does not fit n_ctx 64: raise "
                           "--ctx (the model's context length is " + std::to_string(mc.llm->config.n_ctx) +
                           ") or lower --max-obs-tokens (now " +
                           std::to_string(c.max_obs_tokens) + ") or --max-new-tokens"),
              std::string::npos)
        << r.error;
    EXPECT_FALSE(r.success);
    EXPECT_EQ(server_->session_count(), 0u);  // the env session is closed all the same
  }
}

TEST_F(AgentEpisode, KvPolicyBoundsTheCacheAndStepsReportIt) {
  // Full mode under the engine's policies: "full" keeps every token, "window" at most its
  // window; the steps carry the kept tokens, the budget and the decode confidence.
  model_context mc = context();
  mc.session.kv_policy = "full";
  episode_result all = run_episode(*client_, *task_, config(history_mode::full), mc);
  mc.session.kv_policy = "window";
  mc.session.kv.window = 512;
  episode_result win = run_episode(*client_, *task_, config(history_mode::full), mc);
  ASSERT_EQ(all.status, "done") << all.error;
  ASSERT_EQ(win.status, "done") << win.error;
  EXPECT_EQ(win.kv_policy, "window");
  ASSERT_EQ(all.step_records.size(), 3u);
  ASSERT_EQ(win.step_records.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    const step_record& a = all.step_records[k];
    const step_record& w = win.step_records[k];
    EXPECT_EQ(a.kv_tokens, a.seq_len);
    EXPECT_LE(w.kv_tokens, 512);
    EXPECT_GT(w.seq_len, 2000);
    EXPECT_EQ(w.budget, 512);
    EXPECT_GE(w.confidence, 0.f);
    EXPECT_LE(w.confidence, 1.f);
    EXPECT_LT(w.kv_bytes, a.kv_bytes);
  }
  EXPECT_LT(win.peak_kv_bytes * 3, all.peak_kv_bytes);
  // The trace: every prefill chunk, some decode steps with their confidence.
  int prefill = 0, decode = 0;
  for (const kv_trace_point& p : win.kv_trace) {
    prefill += p.decode ? 0 : 1;
    decode += p.decode && p.confidence >= 0 ? 1 : 0;
    EXPECT_LE(p.kv_tokens, 512);
  }
  EXPECT_GE(prefill, 3);
  EXPECT_GE(decode, 3);
  EXPECT_EQ(server_->session_count(), 0u);
}

TEST_F(AgentEpisode, FailuresComeBackAsErrorsWithTheirPhase) {
  // The env is unreachable.
  env_client_options o;
  o.tries = 1;
  o.connect_timeout_ms = 500;
  env_client dead("http://127.0.0.1:9", o);
  episode_result r = run_episode(dead, *task_, config(history_mode::full), context());
  EXPECT_EQ(r.status, "error");
  EXPECT_EQ(r.error.rfind("create env session: ", 0), 0u) << r.error;
  EXPECT_EQ(r.steps, 0);

  // The model side is missing: the env session is still closed.
  model_context mc = context();
  mc.tok = nullptr;
  r = run_episode(*client_, *task_, config(history_mode::full), mc);
  EXPECT_EQ(r.status, "error");
  EXPECT_NE(r.error.find("start model session"), std::string::npos) << r.error;
  EXPECT_EQ(server_->session_count(), 0u);

  // Bad session options: the engine's message comes through.
  mc = context();
  mc.session.n_threads = 0;
  r = run_episode(*client_, *task_, config(history_mode::full), mc);
  EXPECT_EQ(r.status, "error");
  EXPECT_NE(r.error.find("n_threads"), std::string::npos) << r.error;
  EXPECT_EQ(server_->session_count(), 0u);

  EXPECT_EQ(parse_history_mode("last"), history_mode::last);
  EXPECT_THROW(parse_history_mode("both"), std::invalid_argument);
}

// A session whose Chromium died mid-episode (scripts/chaos.sh, chromium-kill): the env
// answers each step 200 with "the Chromium browser of this session is gone ...; this
// session cannot continue" (or, for an action that never reached the browser, only the
// observation "Error: ..."). The episode is an error row that --resume runs again, not a
// done row of failed steps scored 0 against the policy.
TEST_F(AgentEpisode, ABrowserGoneMidEpisodeIsAnErrorNotAFailedEpisode) {
  const std::string gone =
      "the Chromium browser of this session is gone (connection closed: end of stream); this session cannot "
      "continue: close it and create a new one";
  for (const bool as_action_error : {true, false}) {
    SCOPED_TRACE(as_action_error ? "action error" : "observation only");
    std::atomic<int> steps{0}, evaluations{0};
    sites::http_server fake(sites::http_server_options{"127.0.0.1", 0, 2}, [&](const sites::http_request& q) {
      if (q.method == "POST" && q.path == "/v1/sessions") {
        env_created c;
        c.session_id = "s1";
        c.observation.text = "Tab 0 (current): Shop\n\n[1] link 'Home'";
        c.observation.url = "http://127.0.0.1:1/t-1/shopping/";
        c.observation.tabs = {"Shop"};
        return sites::http_response::json(to_json_text(c), 201);
      }
      if (q.method == "POST" && q.path == "/v1/sessions/s1/step") {
        ++steps;
        env_step_result r;
        r.observation.text = "Error: " + gone;
        if (as_action_error) r.action_error = gone;
        return sites::http_response::json(to_json_text(r));
      }
      if (q.method == "POST" && q.path == "/v1/sessions/s1/evaluate") {
        ++evaluations;
        return sites::http_response::json(to_json_text(eval_result{}));
      }
      if (q.method == "DELETE") return sites::http_response::json(to_json_text(env_deleted{"s1"}));
      return sites::http_response::json_error(404, "no such path");
    });
    fake.start();
    env_client_options o;
    o.tries = 1;
    env_client client(fake.base_url(), o);
    episode_result r = run_episode(client, *task_, config(history_mode::full), context());
    EXPECT_EQ(r.status, "error");
    EXPECT_EQ(r.error.rfind("step 1 env: ", 0), 0u) << r.error;
    EXPECT_NE(r.error.find("browser of this session is gone"), std::string::npos) << r.error;
    EXPECT_EQ(r.steps, 1);
    EXPECT_EQ(steps.load(), 1);        // no further steps against a dead browser
    EXPECT_EQ(evaluations.load(), 0);  // and no score
  }
}

}  // namespace
}  // namespace kvarena

namespace kvarena {
namespace {
// The env's per-session prefix is shown as one fixed origin and mapped back in actions.
TEST(UrlView, ShowsOneOriginAndMapsActionsBack) {
  const url_view v("http://127.0.0.1:36763/t-63bfbdd1/classifieds/item/4");
  EXPECT_EQ(v.prefix(), "http://127.0.0.1:36763/t-63bfbdd1/");
  EXPECT_EQ(v.show("Tab 0: http://127.0.0.1:36763/t-63bfbdd1/shopping/cart"), "Tab 0: http://localhost/shopping/cart");
  EXPECT_EQ(v.real("goto [http://localhost/forum/f/3]"), "goto [http://127.0.0.1:36763/t-63bfbdd1/forum/f/3]");
  const url_view plain("http://example.test:8080/classifieds");
  EXPECT_EQ(plain.show("http://example.test:8080/classifieds"), "http://localhost/classifieds");
  const url_view none("about:blank");
  EXPECT_EQ(none.show("about:blank"), "about:blank");
  EXPECT_EQ(none.real("goto [http://localhost/x]"), "goto [http://localhost/x]");
}
}  // namespace
}  // namespace kvarena
