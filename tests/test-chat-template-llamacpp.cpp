// test-chat-template-llamacpp: the real chat templates kept in llama.cpp's repository
// (models/templates/*.jinja, read at test time from the bare clone that
// ../shared/tools/llamaref/setup.sh makes; none is copied here), each rendered over the
// conversations of chat-template-cases.h by kvarena's renderer (agent/jinja) and by
// python3-jinja2 as transformers' apply_chat_template renders (scripts/chat-template-ref.py).
// Every template in k_claimed must give byte-identical text on every conversation (or fail
// on the same ones: the template's own raise_exception); the others are listed with the
// reason. Label `model`: skips when the clone or python3-jinja2 is absent.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "chat-template-cases.h"
#include "chat-template.h"
#include "jinja-eval.h"

namespace fs = std::filesystem;
using kvarena::test::chat_case;
using kvarena::test::chat_cases;
using json = nlohmann::json;

namespace {

// The templates kvarena claims to render as transformers does (README "Supported model files").
const std::set<std::string> k_claimed = {
    "Apertus-8B-Instruct",
    "Apriel-1.6-15b-Thinker-fixed",
    "Bielik-11B-v3.0-Instruct",
    "ByteDance-Seed-OSS",
    "Cohere2MoE",
    "CohereForAI-c4ai-command-r7b-12-2024-tool_use",
    "GLM-4.6",
    "GLM-4.7-Flash",
    "GigaChat3-10B-A1.8B",
    "GigaChat3.1-10B-A1.8B",
    "HuggingFaceTB-SmolLM3-3B",
    "Kimi-K2-Instruct",
    "Kimi-K2-Thinking",
    "Kimi-K3",
    "LFM2-8B-A1B",
    "LFM2.5-8B-A1B",
    "LFM2.5-Instruct",
    "MiMo-VL",
    "MiniMax-M1",
    "MiniMax-M2",
    "MiniMax-M3",
    "Mistral-Small-3.2-24B-Instruct-2506",
    "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
    "NVIDIA-Nemotron-Nano-v2",
    "Qwen-QwQ-32B",
    "Qwen-Qwen2.5-7B-Instruct",
    "Qwen-Qwen3-0.6B",
    "Qwen3-Coder",
    "Qwen3.5-4B",
    "Reka-Edge",
    "StepFun3.5-Flash",
    "deepseek-ai-DeepSeek-R1-Distill-Llama-8B",
    "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B",
    "deepseek-ai-DeepSeek-V3.1",
    "deepseek-ai-DeepSeek-V3.2",
    "deepseek-ai-DeepSeek-V4",
    "deepseek-ai-DeepSeek-V4-Flash-0731",
    "google-gemma-2-2b-it",
    "google-gemma-4-31B-it",
    "google-gemma-4-31B-it-interleaved",
    "ibm-granite-granite-3.3-2B-Instruct",
    "ibm-granite-granite-4.0",
    "ibm-granite-granite-4.1",
    "llama-cpp-deepseek-r1",
    "llama-cpp-rwkv-world",
    "meetkai-functionary-medium-v3.1",
    "meetkai-functionary-medium-v3.2",
    "meta-llama-Llama-3.1-8B-Instruct",
    "meta-llama-Llama-3.2-3B-Instruct",
    "meta-llama-Llama-3.3-70B-Instruct",
    "microsoft-Phi-3.5-mini-instruct",
    "mistralai-Ministral-3-14B-Reasoning-2512",
    "mistralai-Mistral-Nemo-Instruct-2407",
    "moonshotai-Kimi-K2",
    "muse-glimmer",
    "openai-gpt-oss-120b",
    "openbmb-MiniCPM5-1B",
    "poolside-Laguna-S-2.1",
    "poolside-Laguna-XS-2.1",
    "poolside-Laguna-XS.2",
    "tencent-Hy3",
    "unsloth-Apriel-1.5",
    "unsloth-mistral-Devstral-Small-2507",
    "upstage-Solar-Open-100B",
};

std::string run(const std::string& cmd, int* status = nullptr) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = pclose(p);
  if (status) *status = rc;
  return out;
}

std::string llamacpp_git_dir() {
  const char* env = std::getenv("LLAMAREF_CACHE");
  const char* home = std::getenv("HOME");
  const fs::path cache = env ? fs::path(env) : fs::path(home ? home : "/root") / ".cache" / "llamaref";
  std::error_code ec;
  if (!fs::is_directory(cache, ec)) return "";
  std::string best;
  for (const auto& e : fs::directory_iterator(cache, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("llama.cpp-", 0) == 0 && n.size() > 4 && n.substr(n.size() - 4) == ".git") best = std::max(best, e.path().string());
  }
  return best;
}

// bos/eos as each family's tokenizer defines them (the text differs only in these tokens).
std::pair<std::string, std::string> special_tokens(const std::string& tmpl) {
  if (tmpl.find("<|begin_of_text|>") != std::string::npos || tmpl.find("<|eot_id|>") != std::string::npos)
    return {"<|begin_of_text|>", "<|eot_id|>"};
  if (tmpl.find("<start_of_turn>") != std::string::npos) return {"<bos>", "<eos>"};
  if (tmpl.find("<|im_start|>") != std::string::npos) return {"", "<|im_end|>"};
  if (tmpl.find("\xEF\xBD\x9C" "begin\xE2\x96\x81of\xE2\x96\x81sentence") != std::string::npos)
    return {"<\xEF\xBD\x9C" "begin\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>", "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>"};
  return {"<s>", "</s>"};
}

struct outcome {
  bool ok = false;
  std::string text;  // rendering, or the error
};

kvarena::jinja::value to_value(const chat_case& c) {
  using kvarena::jinja::value;
  kvarena::jinja::list msgs;
  for (const auto& [role, content] : c.messages) {
    value m = value::make_dict();
    m.d->set("role", value::str(role));
    m.d->set("content", value::str(content));
    msgs.push_back(m);
  }
  return value::make_list(std::move(msgs));
}

std::vector<outcome> render_kvarena(const std::string& tmpl, const std::vector<chat_case>& cases) {
  using kvarena::jinja::value;
  std::vector<outcome> out;
  try {
    const kvarena::jinja::template_ t(tmpl);
    const auto [bos, eos] = special_tokens(tmpl);
    for (const chat_case& c : cases) {
      try {
        out.push_back({true, t.render({{"messages", to_value(c)}, {"add_generation_prompt", value::boolean(c.add_generation_prompt)},
                                       {"bos_token", value::str(bos)}, {"eos_token", value::str(eos)},
                                       {"tools", value::none()}, {"documents", value::none()}})});
      } catch (const kvarena::jinja::error& e) {
        out.push_back({false, e.what()});
      }
    }
  } catch (const kvarena::jinja::error& e) {
    out.assign(cases.size(), {false, e.what()});
  }
  return out;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

TEST(ChatTemplateLlamacpp, ClaimedTemplatesRenderByteIdenticalToJinja2) {
  const std::string git = llamacpp_git_dir();
  if (git.empty()) GTEST_SKIP() << "no llama.cpp clone: run bash ../shared/tools/llamaref/setup.sh";
  // Debian's python3 (its python3-jinja2 is the reference) where there is one.
  const std::string py = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  int rc = 0;
  run(py + " -c 'import jinja2' 2>/dev/null", &rc);
  if (rc != 0) GTEST_SKIP() << "python3-jinja2 is not installed (scripts/setup.sh tests)";

  std::map<std::string, std::string> templates;
  std::istringstream names(run("git --git-dir='" + git + "' ls-tree --name-only HEAD models/templates/"));
  for (std::string path; std::getline(names, path);) {
    if (path.size() < 6 || path.substr(path.size() - 6) != ".jinja") continue;
    const std::string name = fs::path(path).stem().string();
    templates[name] = run("git --git-dir='" + git + "' show 'HEAD:" + path + "'");
  }
  ASSERT_GE(templates.size(), 20u) << "too few templates found in " << git;

  const std::vector<chat_case> cases = chat_cases();
  json in;
  in["templates"] = json::object();
  for (const auto& [n, t] : templates) in["templates"][n] = t;
  in["cases"] = json::array();
  for (const chat_case& c : cases) {
    json msgs = json::array();
    for (const auto& [role, content] : c.messages) msgs.push_back({{"role", role}, {"content", content}});
    in["cases"].push_back({{"messages", msgs}, {"add_generation_prompt", c.add_generation_prompt}});
  }
  const fs::path dir = fs::temp_directory_path() / ("kvarena-chat-ref-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // bos/eos per template: one python run per distinct pair would be slower; the script
  // takes them per case, so each template's cases are written with its own tokens.
  json per_template = json::object();
  for (const auto& [n, t] : templates) {
    const auto [bos, eos] = special_tokens(t);
    json cs = in["cases"];
    for (json& c : cs) { c["bos_token"] = bos; c["eos_token"] = eos; }
    per_template[n] = cs;
  }
  in["cases_by_template"] = per_template;
  { std::ofstream(dir / "in.json") << in.dump(); }
  run(py + " '" KVARENA_SOURCE_DIR "/scripts/chat-template-ref.py' '" + (dir / "in.json").string() + "' '" +
          (dir / "out.json").string() + "' 2>&1",
      &rc);
  ASSERT_EQ(rc, 0) << "scripts/chat-template-ref.py failed";
  json ref;
  { std::ifstream(dir / "out.json") >> ref; }
  fs::remove_all(dir);

  int identical = 0, compared = 0, both_raise = 0;
  std::vector<std::string> supported, unsupported;
  for (const auto& [n, t] : templates) {
    const std::vector<outcome> ours = render_kvarena(t, cases);
    const json& theirs = ref.at(n);
    bool all_same = true, any_text = false;
    std::string reason;
    for (size_t k = 0; k < cases.size(); ++k) {
      const bool ref_ok = theirs[k].at("ok").get<bool>();
      const std::string ref_text = ref_ok ? theirs[k].at("text").get<std::string>() : theirs[k].at("error").get<std::string>();
      const bool same = ours[k].ok == ref_ok && (!ref_ok || ours[k].text == ref_text);
      any_text = any_text || (ref_ok && same);
      if (same) continue;
      all_same = false;
      if (reason.empty()) {
        if (!ref_ok) reason = "python3-jinja2 itself fails: " + first_line(ref_text);
        else if (!ours[k].ok) reason = first_line(ours[k].text);
        else reason = "text differs from jinja2 (conversation " + std::to_string(k) + ")";
      }
    }
    if (all_same && !any_text) {
      all_same = false;
      reason = "every conversation raises (" + first_line(theirs[0].value("error", "")) + ")";
    }
    if (all_same) {
      supported.push_back(n);
    } else {
      unsupported.push_back(n + ": " + reason);
    }
    if (k_claimed.count(n)) {
      for (size_t k = 0; k < cases.size(); ++k) {
        const bool ref_ok = theirs[k].at("ok").get<bool>();
        ++compared;
        if (ours[k].ok == ref_ok && (!ref_ok || ours[k].text == theirs[k].at("text").get<std::string>())) {
          ++identical;
          both_raise += !ref_ok;
        } else {
          ADD_FAILURE() << n << " conversation " << k << ": kvarena "
                        << (ours[k].ok ? "renders:\n" : "fails: ") << ours[k].text << "\njinja2 "
                        << (ref_ok ? "renders:\n" + theirs[k].at("text").get<std::string>()
                                   : "fails: " + theirs[k].at("error").get<std::string>());
        }
      }
      EXPECT_TRUE(any_text) << n << " is claimed but renders nothing in jinja2";
    }
  }
  for (const std::string& c : k_claimed) EXPECT_TRUE(templates.count(c)) << "claimed template " << c << " not in the clone";
  std::printf("claimed templates: %zu x %zu conversations = %d compared, %d byte-identical (%d raise in both)\n",
              k_claimed.size(), cases.size(), compared, identical, both_raise);
  std::printf("all templates in the clone: %zu; identical on every conversation: %zu\n", templates.size(), supported.size());
  for (const std::string& s : supported)
    if (!k_claimed.count(s)) std::printf("  identical but not claimed: %s\n", s.c_str());
  // What the agent derives from each claimed template (chat_template, with the family's
  // bos/eos): its label and whether it kept the prefix on the probe conversation.
  int stable = 0;
  for (const std::string& n : k_claimed) {
    if (!templates.count(n)) continue;
    const auto [bos, eos] = special_tokens(templates[n]);
    std::string what;
    try {
      const kvarena::chat_template ct = kvarena::chat_template::from_jinja(templates[n], bos, eos);
      stable += ct.prefix_stable();
      what = std::string(ct.name()) + (ct.prefix_stable() ? ", prefix-stable" : ", NOT prefix-stable") +
             ", stop " + (ct.stop_strings().empty() ? std::string("(none)") : "'" + ct.stop_strings()[0] + "'");
    } catch (const std::exception& e) {
      what = std::string("cannot run the agent's conversation: ") + first_line(e.what());
    }
    std::printf("  %-48s %s\n", n.c_str(), what.c_str());
  }
  std::printf("claimed templates prefix-stable on the probe: %d of %zu\n", stable, k_claimed.size());
  std::printf("not supported (%zu):\n", unsupported.size());
  for (const std::string& u : unsupported) std::printf("  %s\n", u.c_str());
}
