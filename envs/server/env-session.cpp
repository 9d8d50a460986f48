// env-session.cpp: one env session (see env-session.h).
#include "server/env-session.h"

#include <boost/beast/core/detail/base64.hpp>

#include "browser/common/browser-act.h"
#include "browser/common/url-util.h"
#include "eval/action-parse.h"
#include "eval/eval-image.h"
#include "server/site-login.h"
#include "sites/http-message.h"
#include "sites/site-auth.h"
#include "eval/vwa-helpers/site-eval-helpers.h"

namespace kvarena {

namespace {

std::string base64_encode(const std::string& bytes) {
  std::string out(boost::beast::detail::base64::encoded_size(bytes.size()), '\0');
  out.resize(boost::beast::detail::base64::encode(out.data(), bytes.data(), bytes.size()));
  return out;
}

}  // namespace

std::string truncate_observation(std::string text, int64_t max_tokens) {
  if (max_tokens <= 0) return text;
  if (max_tokens >= static_cast<int64_t>(text.size()) / k_obs_chars_per_token + 1) return text;  // no overflow
  const int64_t max_bytes = max_tokens * k_obs_chars_per_token;
  if (static_cast<int64_t>(text.size()) <= max_bytes) return text;
  size_t cut = static_cast<size_t>(max_bytes);
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // UTF-8 continuation
  text.resize(cut);
  return text;
}

env_session::env_session(std::string id, task t, env_sites::lease lease, env_session_options opt,
                         std::unique_ptr<session_browser> browser)
    : id_(std::move(id)),
      task_(std::move(t)),
      lease_(std::move(lease)),
      opt_(std::move(opt)),
      browser_(std::move(browser)),
      rules_(opt_.early_stop) {}

void env_session::start(const std::vector<env_login>& logins) {
  for (const env_login& login : logins) {
    if (login.site_form) {  // a site given by URL: its own login form (site-login.h)
      auto account = vwa_account(login.site);
      if (!account) continue;
      std::string err;
      if (!browser_->site_login(login.base_url, *account, &err))
        throw env_api_error(502, "cannot log in on site '" + login.site + "' at " + login.base_url + ": " + err);
      continue;
    }
    const std::string body = "username=" + sites::url_encode(login.username, true) + "&password=" +
                             sites::url_encode(sites::kSeededPassword, true) + "&next=%2F";
    long status = 0;
    std::string final_url, error;
    if (!browser_->post_form(login.base_url + "/login", body, &status, &final_url, &error))
      throw env_api_error(502, "cannot reach site '" + login.site + "' at " + login.base_url +
                                   " to log in as " + login.username + ": " + error);
    if (status != 200 || final_url.find("/login") != std::string::npos)
      throw env_api_error(502, "site '" + login.site + "' at " + login.base_url + " refused the login of " +
                                   login.username + " (HTTP " + std::to_string(status) +
                                   "); is it a kvarena site with the seeded users?");
  }
  std::vector<std::string> urls = start_urls(task_);
  for (size_t i = 0; i < urls.size(); ++i) {
    if (i > 0) browser_->get().new_tab();
    browser_result r = browser_->get().go_to(urls[i]);
    if (!r.ok() && is_too_many_bytes_error(r.error))  // the task asks too much, the site is fine
      throw env_api_error(422, "the task's start_url pages do not fit in a session: " + r.error);
    if (!r.ok())
      throw env_api_error(502, "cannot open the task's start_url " +
                                   (urls.size() > 1 ? "(tab " + std::to_string(i) + ") " : std::string()) + urls[i] +
                                   ": " + r.error);
  }
  if (urls.size() > 1) browser_->get().tab_focus(0);  // VWA focuses the first tab
  touch();
}

env_observation env_session::observe() {
  browser_observation o = browser_->get().observe();
  env_observation out;
  out.url = std::move(o.url);
  out.tabs = std::move(o.tabs);
  if (opt_.som && o.text.rfind("Error: ", 0) != 0) {  // an error observation stays as it is
    // VWA's Set-of-Marks observation: the tab header, then the marked elements' list
    // instead of the tree (same ids), and the marked screenshot.
    std::string error;
    session_browser::som_view v = browser_->som(&error);
    if (v.png.empty()) {
      o.text += "\n\n(no Set-of-Marks screenshot: " + error + ")";
    } else {
      out.screenshot_png_base64 = base64_encode(v.png);
      o.text = o.text.substr(0, o.text.find("\n\n")) + "\n\n" + v.text;
    }
  }
  if (opt_.screenshot && o.text.rfind("Error: ", 0) != 0) {  // the tree and the page as it looks
    std::string error;
    const std::string png = browser_->screenshot(&error);
    if (png.empty()) o.text += "\n\n(no screenshot: " + error + ")";
    else out.screenshot_png_base64 = base64_encode(png);
  }
  out.text = opt_.max_obs_tokens ? truncate_observation(std::move(o.text), *opt_.max_obs_tokens) : std::move(o.text);
  return out;
}

void env_session::finish(std::string answer, std::string reason) {
  done_ = true;
  answer_ = std::move(answer);
  reason_ = std::move(reason);
}

env_step_result env_session::step(const std::string& action_text) {
  touch();
  if (done_)
    throw env_api_error(409, "the episode of session " + id_ + " is over (" + reason_.value_or("done") +
                                 "); score it with POST /v1/sessions/" + id_ + "/evaluate, then DELETE it");
  env_step_result r;
  action_parse_result parsed = parse_action(action_text);
  if (!parsed.ok()) {
    r.action_error = parsed.error;
  } else if (parsed.act.kind == action_kind::stop) {
    finish(parsed.act.answer, "stop");
  } else {
    browser_result br = apply_action(browser_->get(), parsed.act);
    if (!br.ok()) r.action_error = br.error;
  }
  rules_.record(parsed);
  if (!done_) {
    early_stop_decision d = rules_.check();
    if (d.stop) finish(early_stop_answer(d.reason), d.reason);
  }
  r.observation = observe();
  r.done = done_;
  if (done_) {
    r.answer = answer_;
    r.reason = reason_;
  }
  touch();
  return r;
}

eval_result env_session::evaluate(const std::optional<std::string>& answer) {
  touch();
  std::set<std::string> script_origins;  // the task's scripts run on its sites only
  for (const std::string& site : task_.sites) {
    auto url = lease_.urls.find(site);
    if (url == lease_.urls.end()) continue;
    if (std::string origin = url_origin(url->second); !origin.empty()) script_origins.insert(origin);
  }
  std::unique_ptr<page_probe> probe = browser_->probe(script_origins);
  eval_inputs in;
  in.answer = answer ? *answer : answer_.value_or("");
  in.page = probe.get();
  in.helpers = &sites::site_eval_helpers();  // func: helpers of the local sites
  in.sites = lease_.urls;
  in.judge = opt_.judge.get();
  image_eval_options io;
  io.vqa_url = opt_.vqa_url;
  io.allow_file_urls = opt_.allow_file_urls;
  in.images = page_image_scorer(io);
  in.require_llm_judge = task_.kvarena.empty();  // VWA's and WA's tasks: never the deterministic judge
  eval_result r = evaluate_task(task_, in);
  touch();
  return r;
}

env_session_info env_session::info() const {
  env_session_info i;
  i.session_id = id_;
  i.task_id = task_.task_id;
  i.tenant = lease_.tenant;
  i.sites = lease_.urls;
  i.steps = rules_.steps();
  i.done = done_;
  i.answer = answer_;
  i.reason = reason_;
  return i;
}

}  // namespace kvarena
