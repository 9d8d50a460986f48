// eval-flags.cpp: see eval-flags.h.
#include "eval-flags.h"

#include <algorithm>
#include <stdexcept>

#include "cli-commands.h"
#include "eval/judge-openai.h"
#include "judge-engine.h"

namespace kvarena::cli {

const std::vector<std::string>& known_site_names() {
  static const std::vector<std::string> names = {"classifieds", "shopping", "shopping_admin", "reddit",
                                                 "gitlab",      "wikipedia", "map",           "homepage"};
  return names;
}

void add_eval_flags(CLI::App* app, eval_flags& f, const std::string& group) {
  app->add_option("--judge-url", f.judge_url,
                  "fuzzy_match judge: an OpenAI-compatible chat endpoint (http://h:8000/v1/chat/completions; "
                  "OPENAI_API_KEY is sent when set)")
      ->group(group);
  app->add_option("--judge-name", f.judge_name, "The model name sent to --judge-url")->capture_default_str()->group(group);
  app->add_option("--judge-model", f.judge_model, "fuzzy_match judge: a GGUF instruct model on the embedded engine")
      ->group(group);
  app->add_option("--vqa-url", f.vqa_url,
                  "page_image_query eval_vqa: an OpenAI-compatible vision chat endpoint")
      ->group(group);
  app->add_option("--site", f.sites,
                  "NAME=URL: a site's base URL (repeatable; classifieds, shopping, shopping_admin, reddit, gitlab, "
                  "wikipedia, map, homepage)")
      ->group(group);
  app->add_flag("--allow-file-urls", f.allow_file_urls,
                "Let tasks and pages open file:// URLs and local paths (pages, links, forms, program_html "
                "targets, images); without it only http:// and https:// URLs are opened")
      ->group(group);
}

std::shared_ptr<fuzzy_judge> make_judge(const eval_flags& f) {
  if (!f.judge_url.empty() && !f.judge_model.empty())
    throw usage_error("--judge-url and --judge-model: give one judge");
  if (!f.judge_url.empty()) {
    openai_judge_options o;
    o.url = f.judge_url;
    o.model = f.judge_name;
    return std::make_shared<openai_judge>(o);
  }
  if (!f.judge_model.empty()) {
    engine_judge_options o;
    o.model_path = f.judge_model;
    return std::make_shared<engine_judge>(o);
  }
  return nullptr;
}

std::map<std::string, std::string> parse_site_flags(const std::vector<std::string>& specs) {
  std::map<std::string, std::string> out;
  const auto& names = known_site_names();
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    std::string name = spec.substr(0, eq), url = eq == std::string::npos ? "" : spec.substr(eq + 1);
    std::string valid;
    for (const std::string& n : names) valid += (valid.empty() ? "" : ", ") + n;
    if (eq == std::string::npos || url.empty())
      throw usage_error("--site '" + spec + "': expected NAME=URL, e.g. --site shopping=http://127.0.0.1:7770");
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw usage_error("--site '" + spec + "': unknown site '" + name + "' (valid: " + valid + ")");
    if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
      throw usage_error("--site '" + spec + "': '" + url + "' is not an http(s) URL");
    while (url.size() > 1 && url.back() == '/') url.pop_back();
    out[name] = url;
  }
  return out;
}

}  // namespace kvarena::cli
