// openai-chat.cpp: see openai-chat.h.
#include "common/openai-chat.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/http-call.h"

namespace kvarena {

namespace {

using clk = std::chrono::steady_clock;

bool retryable(const http_call_response& r) { return !r.ok || r.status == 429 || (r.status >= 500 && r.status <= 599); }

// The wait before try k+1 (k >= 1 tries done): Retry-After (whole seconds) when the answer
// gave one, else backoff * 2^(k-1); at most max_wait.
long wait_ms(const openai_chat_options& opt, const http_call_response& r, int k) {
  long ms = opt.backoff_ms;
  for (int i = 1; i < k && ms < opt.max_wait_ms; ++i) ms *= 2;
  if (!r.retry_after.empty() && std::all_of(r.retry_after.begin(), r.retry_after.end(), ::isdigit) &&
      r.retry_after.size() < 9)
    ms = std::atol(r.retry_after.c_str()) * 1000L;
  return std::clamp(ms, 0L, opt.max_wait_ms);
}

std::string answer_text(const std::string& url, const http_call_response& r) {
  if (!r.ok) return r.error;
  return url + " answered HTTP " + std::to_string(r.status) + ": " + r.body.substr(0, 300);
}

}  // namespace

std::string chat_completions_url(const std::string& url) {
  std::string u = url;
  while (!u.empty() && u.back() == '/') u.pop_back();
  const std::string tail = "/chat/completions";
  if (u.size() >= tail.size() && u.compare(u.size() - tail.size(), tail.size(), tail) == 0) return u;
  if (u.size() >= 3 && u.compare(u.size() - 3, 3, "/v1") == 0) return u + tail;
  return u + "/v1" + tail;
}

std::string format_retries(const std::vector<openai_chat_retry>& retries) {
  std::string out;
  for (const openai_chat_retry& r : retries) {
    if (!out.empty()) out += "; ";
    out += (r.status ? "HTTP " + std::to_string(r.status) : r.error) + " (waited " + std::to_string(r.waited_ms) + " ms)";
  }
  return out;
}

openai_chat_result openai_chat(const openai_chat_options& opt, const std::string& body_json) {
  using json = nlohmann::json;
  http_call_request call;
  call.method = "POST";
  call.url = opt.url;
  call.timeout_ms = opt.timeout_ms;
  call.headers = {{"Content-Type", "application/json"}};
  if (!opt.api_key.empty()) call.headers.push_back({"Authorization", "Bearer " + opt.api_key});
  call.body = body_json;
  call.max_body_bytes = 64u << 20;

  openai_chat_result out;
  const int tries = std::max(1, opt.tries);
  http_call_response res;
  for (int k = 1;; ++k) {
    const auto t0 = clk::now();
    res = http_call(call);
    out.latency_ms = std::chrono::duration<double, std::milli>(clk::now() - t0).count();
    out.tries = k;
    out.status = res.ok ? res.status : 0;
    if (!retryable(res) || k == tries) break;
    openai_chat_retry r{out.status, res.ok ? "HTTP " + std::to_string(res.status) : res.error, wait_ms(opt, res, k)};
    out.retries.push_back(r);
    if (opt.sleep) opt.sleep(r.waited_ms);
    else std::this_thread::sleep_for(std::chrono::milliseconds(r.waited_ms));
  }
  const std::string tried = out.tries > 1 ? " (after " + std::to_string(out.tries) + " tries: " +
                                                format_retries(out.retries) + ")"
                                          : "";
  if (!res.ok || res.status != 200) {
    out.error = answer_text(opt.url, res) + tried;
    return out;
  }
  const json j = json::parse(res.body, nullptr, false);
  const json* content = nullptr;
  const json* choice = nullptr;
  if (j.is_object() && j.contains("choices") && j["choices"].is_array() && !j["choices"].empty()) {
    choice = &j["choices"][0];
    if (choice->is_object() && choice->contains("message") && (*choice)["message"].is_object() &&
        (*choice)["message"].contains("content") && (*choice)["message"]["content"].is_string())
      content = &(*choice)["message"]["content"];
  }
  if (!content) {
    out.error = opt.url + " answered HTTP 200 without choices[0].message.content (not a chat completion): " +
                res.body.substr(0, 300) + tried;
    return out;
  }
  out.ok = true;
  out.content = content->get<std::string>();
  if (choice->contains("finish_reason") && (*choice)["finish_reason"].is_string())
    out.finish_reason = (*choice)["finish_reason"].get<std::string>();
  if (j.contains("usage") && j["usage"].is_object()) out.usage_json = j["usage"].dump();
  return out;
}

}  // namespace kvarena
