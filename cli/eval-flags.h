// eval-flags.h: the evaluation options `run`, `env-server` and `tasks validate` share:
//   --judge-url URL        fuzzy_match / llm_ua_match asked of an OpenAI-compatible
//                          chat endpoint (envs/eval/judge-openai.h)
//   --judge-name NAME      the model name sent to it (default VWA's gpt-4-1106-preview)
//   --judge-model FILE     ... or of a GGUF instruct model on the embedded engine
//                          (agent/judge-engine.h)
//   --vqa-url URL          page_image_query's eval_vqa through an OpenAI-compatible
//                          vision endpoint
//   --site NAME=URL        a site's base URL (repeatable), for every site VWA and WebArena
//                          name: classifieds, shopping, shopping_admin, reddit, gitlab,
//                          wikipedia, map, homepage
//   --allow-file-urls      pages, links, forms, program_html targets and images may be
//                          file:// URLs (and local paths); without it only http(s) is
//                          opened (envs/common/url-policy.h)
// Bad values are usage errors that name the flag and the valid forms.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "eval/eval-judge.h"

namespace kvarena::cli {

struct eval_flags {
  std::string judge_url;
  std::string judge_name = "gpt-4-1106-preview";
  std::string judge_model;
  std::string vqa_url;
  std::vector<std::string> sites;  // NAME=URL, as given
  bool allow_file_urls = false;

  bool has_judge() const { return !judge_url.empty() || !judge_model.empty(); }
};

void add_eval_flags(CLI::App* app, eval_flags& f, const std::string& group = "Evaluation");

// The judge the flags name, or null. --judge-url and --judge-model together: a usage error.
std::shared_ptr<fuzzy_judge> make_judge(const eval_flags& f);

// --site NAME=URL... as a map; std::invalid_argument on an unknown name or a non-http URL.
std::map<std::string, std::string> parse_site_flags(const std::vector<std::string>& specs);

// The site names --site accepts.
const std::vector<std::string>& known_site_names();

}  // namespace kvarena::cli
