// env-create.cpp: the stages of POST /v1/sessions (see env-create.h).
#include "server/env-create.h"

#include <cstdint>
#include <utility>

#include "browser/common/url-util.h"
#include "common/url-policy.h"
#include "server/site-login.h"

namespace kvarena {
namespace {

bool is_http_url(const std::string& s) { return s.rfind("http://", 0) == 0 || s.rfind("https://", 0) == 0; }

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

}  // namespace

task parse_create_task(const env_create_request& cr) {
  if (cr.browser != "text" && cr.browser != "chromium")
    throw env_api_error(422, "browser '" + cr.browser + "' is unknown: use \"text\" or \"chromium\"");
  task_suite suite = parse_tasks(cr.task_json, "task");
  if (!suite.ok())
    throw env_api_error(422,
                        "invalid task: " + suite.errors.front() +
                            (suite.errors.size() > 1 ? " (and " + std::to_string(suite.errors.size() - 1) +
                                                           " more problems, listed in details)"
                                                     : ""),
                        suite.errors);
  return std::move(suite.tasks.at(0));
}

std::set<std::string> apply_site_urls(const std::map<std::string, std::string>& server_site_urls,
                                      const std::map<std::string, std::string>& request_sites,
                                      std::map<std::string, std::string>& urls) {
  std::set<std::string> elsewhere;
  for (const auto& [name, url] : server_site_urls) elsewhere.insert(name);
  for (const auto& [name, url] : request_sites) {
    elsewhere.insert(name);
    if (!is_http_url(url)) throw env_api_error(422, "sites." + name + ": '" + url + "' is not an http:// URL");
    urls[name] = url;
  }
  return elsewhere;
}

void fill_site_placeholders(task& t, const std::map<std::string, std::string>& urls, const env_sites& sites) {
  std::vector<std::string> left = substitute_placeholders(t, urls);
  if (!left.empty())
    throw env_api_error(422, "the task uses " + join(left, ", ") +
                                 ", but this env server has no URL for it (it serves " + join(sites.site_names(), ", ") +
                                 "); pass the site's base URL in the request, e.g. \"sites\": {\"shopping\": "
                                 "\"http://127.0.0.1:7770\"}");
}

void check_start_urls(const task& t, bool allow_file_urls) {
  if (start_urls(t).size() > static_cast<size_t>(k_max_tabs))
    throw env_api_error(422, "the task's start_url opens " + std::to_string(start_urls(t).size()) +
                                 " tabs (URLs joined by ' |AND| '); a session may have at most " +
                                 std::to_string(k_max_tabs));
  for (const std::string& url : start_urls(t)) {
    const std::string target = url_from_user_input(url);  // as the browsers' goto reads it
    if (target == "about:blank") continue;
    if (std::string why = refused_url_reason(target, allow_file_urls); !why.empty())
      throw env_api_error(422, "the task's start_url is refused: " + why);
  }
}

std::vector<env_login> plan_logins(const task& t, const env_sites::lease& lease, const std::set<std::string>& elsewhere,
                                   const env_sites& sites) {
  std::vector<env_login> logins;
  if (!t.require_login) return logins;
  for (const std::string& site : t.sites) {
    auto url = lease.urls.find(site);
    if (url == lease.urls.end())
      throw env_api_error(422, "the task requires login on '" + site +
                                   "', which this env server does not serve (it serves " +
                                   join(sites.site_names(), ", ") + ")");
    if (elsewhere.count(site)) {
      auto account = vwa_account(site);
      logins.push_back({site, url->second, account ? account->username : "", true});
    } else {
      logins.push_back({site, url->second, sites.default_user(site, lease.tenant)});
    }
  }
  return logins;
}

env_session_options session_options_for(const env_create_request& cr, const env_server_options& opt) {
  env_session_options so;
  so.judge = opt.judge;
  so.vqa_url = opt.vqa_url;
  so.allow_file_urls = opt.allow_file_urls;
  so.max_obs_tokens = cr.max_obs_tokens;
  so.som = cr.observation == "som";
  so.screenshot = cr.observation == "screenshot";
  if ((so.som || so.screenshot) && cr.browser != "chromium")
    throw env_api_error(422, "\"observation\": \"" + cr.observation +
                                 "\" needs a screenshot: use it with \"browser\": \"chromium\"");
  so.early_stop = cr.early_stop.value_or(early_stop_config{});
  return so;
}

int viewport_height_of(const task& t) {
  if (!t.viewport_size) return 0;
  const std::pair<const char*, std::pair<int64_t, int64_t>> sides[] = {
      {"width", {t.viewport_size->width, k_max_viewport_width_px}},
      {"height", {t.viewport_size->height, k_max_viewport_height_px}}};
  for (const auto& [side, v] : sides)
    if (v.first < 1 || v.first > v.second)
      throw env_api_error(422, std::string("field \"task.viewport_size.") + side + "\" must be an integer in 1.." +
                                   std::to_string(v.second) + ", not " + std::to_string(v.first));
  return static_cast<int>(t.viewport_size->height);
}

}  // namespace kvarena
