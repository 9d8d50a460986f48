// agent-model-openai.cpp: see agent-model-openai.h.
#include "agent-model-openai.h"

#include <boost/beast/core/detail/base64.hpp>

#include <algorithm>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "agent-loop.h"
#include "common/openai-chat.h"

namespace kvarena {

namespace {

using json = nlohmann::json;

std::string base64_encode(std::string_view bytes) {
  std::string out(boost::beast::detail::base64::encoded_size(bytes.size()), '\0');
  out.resize(boost::beast::detail::base64::encode(out.data(), bytes.data(), bytes.size()));
  return out;
}

// The first of `names` that usage (or usage.kvarena) holds as a number.
const json* usage_number(const json& usage, std::initializer_list<const char*> names) {
  for (const json* o : {&usage, usage.contains("kvarena") ? &usage["kvarena"] : nullptr}) {
    if (!o || !o->is_object()) continue;
    for (const char* n : names)
      if (o->contains(n) && (*o)[n].is_number()) return &(*o)[n];
  }
  return nullptr;
}

class openai_episode final : public episode_model {
 public:
  openai_episode(const openai_agent_options& opt, const agent_config& cfg, const model_context& mc)
      : opt_(opt), cfg_(cfg), mc_(mc) {
    call_.url = opt_.url;
    call_.api_key = opt_.api_key;
    call_.timeout_ms = opt_.timeout_ms;
    call_.tries = opt_.tries;
    call_.backoff_ms = opt_.backoff_ms;
    call_.max_wait_ms = opt_.max_wait_ms;
    call_.sleep = opt_.sleep;
    // The chat format's stop strings only when a model named it (run --model); the
    // endpoint's own template ends its turns.
    if (mc_.llm) stop_ = mc_.chat.stop_strings();
    stop_.insert(stop_.end(), cfg_.stop.begin(), cfg_.stop.end());
  }

  std::optional<std::string> prompt(const model_prompt& p, episode_result&) override {
    body_ = request_body(p);
    return std::nullopt;
  }

  void reply(step_record& rec) override {
    const openai_chat_result res = openai_chat(call_, body_);
    calls_ += res.tries;
    retries_ += static_cast<int64_t>(res.retries.size());
    if (!res.ok) throw std::runtime_error("agent endpoint: " + res.error);
    rec.output = res.content;
    rec.gen_stop = res.finish_reason.empty() ? "stop" : res.finish_reason;
    rec.latency_ms = res.latency_ms;
    rec.model_retries = static_cast<int>(res.retries.size());
    rec.model_retry_log = format_retries(res.retries);
    rec.reported = {false, false, false, false, false, false};
    const json usage = res.usage_json.empty() ? json::object() : json::parse(res.usage_json, nullptr, false);
    if (usage.is_object()) read_usage(usage, rec);
    if (!rec.reported.tokens) tokens_all_ = false;
    if (rec.reported.kv_tokens) kv_tokens_any_ = true;
    if (rec.reported.kv_logical) {
      kv_logical_any_ = true;
      peak_logical_ = std::max(peak_logical_, rec.kv_logical_bytes);
    }
    if (rec.reported.kv_bytes) {
      kv_bytes_any_ = true;
      peak_kv_bytes_ = std::max(peak_kv_bytes_, rec.kv_bytes);
    }
  }

  void collect(episode_result& r) override {
    r.reported = {tokens_all_, false, kv_bytes_any_, false, kv_logical_any_, false};
    r.peak_kv_logical_bytes = peak_logical_;
    r.peak_kv_bytes = peak_kv_bytes_;
    r.model_calls = calls_;
    r.model_retries = retries_;
  }

 private:
  std::string request_body(const model_prompt& p) const {
    json messages = json::array();
    for (const chat_message& m : *p.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
    if (opt_.images != "none" && !p.screenshot_png.empty() && !messages.empty()) {
      json& last = messages.back();
      const std::string text = last["content"].get<std::string>();
      last["content"] = json::array(
          {{{"type", "text"}, {"text", text}},
           {{"type", "image_url"},
            {"image_url", {{"url", "data:image/png;base64," + base64_encode(p.screenshot_png)}}}}});
    }
    json body = {{"model", opt_.model.empty() ? "default" : opt_.model},
                 {"messages", messages},
                 {"temperature", mc_.sampling.temperature},
                 {"top_p", mc_.sampling.top_p},
                 {"max_tokens", cfg_.max_new_tokens},
                 {"seed", mc_.sampling.seed}};
    if (mc_.sampling.top_k > 0) body["top_k"] = mc_.sampling.top_k;  // vLLM, llama.cpp, kvarena serve
    if (!stop_.empty()) body["stop"] = stop_;
    if (!mc_.endpoint_kv_json.empty()) body["kv"] = json::parse(mc_.endpoint_kv_json);  // kvarena serve's policy
    return body.dump(-1, ' ', false, json::error_handler_t::replace);
  }

  static void read_usage(const json& usage, step_record& rec) {
    const json* pt = usage_number(usage, {"prompt_tokens"});
    const json* ct = usage_number(usage, {"completion_tokens"});
    if (pt && ct) {
      rec.prompt_tokens = pt->get<int64_t>();
      rec.generated_tokens = ct->get<int64_t>();
      rec.reported.tokens = true;
    }
    if (const json* v = usage_number(usage, {"peak_kv_logical_bytes", "kv_peak_logical_bytes", "kv_logical_peak_bytes"})) {
      rec.kv_logical_bytes = v->get<size_t>();
      rec.reported.kv_logical = true;
    }
    if (const json* v = usage_number(usage, {"peak_kv_bytes", "kv_peak_bytes"})) {  // allocated
      rec.kv_bytes = v->get<size_t>();
      rec.reported.kv_bytes = true;
    }
    if (const json* v = usage_number(usage, {"kept_tokens", "kv_kept_tokens", "kv_tokens"})) {
      rec.kv_tokens = v->get<int64_t>();
      rec.reported.kv_tokens = true;
    }
    if (const json* v = usage_number(usage, {"prompt_ms", "prefill_ms"})) rec.prefill_ms = v->get<double>();
    if (const json* v = usage_number(usage, {"decode_ms"})) rec.decode_ms = v->get<double>();
  }

  const openai_agent_options& opt_;
  const agent_config& cfg_;
  const model_context& mc_;
  openai_chat_options call_;
  std::vector<std::string> stop_;
  std::string body_;  // the request of the prompt taken last
  int64_t calls_ = 0, retries_ = 0;
  bool tokens_all_ = true, kv_tokens_any_ = false, kv_logical_any_ = false, kv_bytes_any_ = false;
  size_t peak_logical_ = 0, peak_kv_bytes_ = 0;
};

class openai_agent_model final : public agent_model {
 public:
  explicit openai_agent_model(openai_agent_options opt) : opt_(std::move(opt)) {}
  std::unique_ptr<episode_model> start_episode(const agent_config& cfg, const model_context& mc) const override {
    return std::make_unique<openai_episode>(opt_, cfg, mc);
  }

 private:
  openai_agent_options opt_;
};

}  // namespace

std::shared_ptr<const agent_model> make_openai_agent_model(openai_agent_options opt) {
  if (opt.url.rfind("http://", 0) != 0 && opt.url.rfind("https://", 0) != 0)
    throw std::invalid_argument("--agent-url '" + opt.url +
                                "': expected the http(s) URL of an OpenAI-compatible server, e.g. "
                                "http://127.0.0.1:8080/v1");
  if (opt.images != "som" && opt.images != "screenshot" && opt.images != "none")
    throw std::invalid_argument("--agent-images " + opt.images + ": use som, screenshot or none");
  opt.url = chat_completions_url(opt.url);
  return std::make_shared<openai_agent_model>(std::move(opt));
}

}  // namespace kvarena
