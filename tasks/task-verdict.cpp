// task-verdict.cpp: see task-verdict.h.
#include "task-verdict.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <string_view>

#include "eval/eval-locator.h"
#include "eval/evaluator.h"
#include "eval/eval-text.h"
#include "eval/vwa-helpers/site-eval-helpers.h"
#include "suite-check.h"

namespace kvarena::tasks {

namespace {

bool local_site(const std::string& s) {
  return std::any_of(std::begin(k_local_sites), std::end(k_local_sites), [&](const char* k) { return s == k; });
}

// The func: helper a target's url or locator calls ("" when none).
std::string helper_of(const std::string& text) {
  constexpr std::string_view prefix = "func:";
  if (text.compare(0, prefix.size(), prefix) != 0) return "";
  func_call call;
  std::string err;
  return parse_func_call(std::string_view(text).substr(prefix.size()), &call, &err) ? call.name : "";
}

struct collector {
  task_verdict v;
  void add(verdict_kind k, std::string why) {
    v.kind = std::max(v.kind, k);
    for (const verdict_reason& r : v.reasons)
      if (r.text == why) return;
    v.reasons.push_back({k, std::move(why)});
  }
};

// page_image_query: eval_fuzzy_image_match is scored here (SSIM); eval_vqa needs a VQA
// endpoint. Queries are raw JSON in eval.extra.
void add_image_query_reasons(const task_eval& e, const verdict_options& o, collector& c) {
  auto it = e.extra.find("page_image_query");
  const std::string raw = it == e.extra.end() ? "" : it->second;
  static const std::regex k_vqa(R"re("eval_vqa"\s*:\s*\[\s*\{)re");  // a non-empty list
  if (std::regex_search(raw, k_vqa) && !o.vqa)
    c.add(verdict_kind::cannot_run, "page_image_query eval_vqa: needs a vision-language model: give --vqa-url URL "
                                    "(an OpenAI-compatible vision endpoint)");
}

}  // namespace

std::vector<std::string> sites_needing_real_site(const task& t, const std::set<std::string>& site_urls) {
  std::vector<std::string> out;
  if (!t.kvarena.empty()) return out;  // kvarena's own tasks are written for its sites
  for (const std::string& s : t.sites)
    if (local_site(s) && !site_urls.count(s)) out.push_back(s);
  return out;
}

const char* verdict_name(verdict_kind k) {
  switch (k) {
    case verdict_kind::full: return "full";
    case verdict_kind::degraded: return "degraded";
    case verdict_kind::cannot_run: return "cannot_run";
    case verdict_kind::refused: return "refused";
  }
  return "?";
}

task_verdict verdict_for(const task& t, const std::string& origin, const verdict_options& o) {
  collector c;
  if (o.require_oracle) {  // the project's own checks: plans, local sites, own placeholders
    for (const std::string& e : check_task_extension(t, origin, o.require_memory))
      c.add(verdict_kind::refused, e.rfind(origin + ": ", 0) == 0 ? e.substr(origin.size() + 2) : e);
    if (c.v.kind == verdict_kind::refused) return c.v;
  }
  for (const std::string& s : t.sites)
    if (!local_site(s) && !o.site_urls.count(s))
      c.add(verdict_kind::cannot_run, "site '" + s + "': not one of kvarena's sites (classifieds, shopping, reddit); "
                                      "runs with the real site's URL (--site " + s + "=URL)");
  if (!o.local_sites_for_real_tasks)
    for (const std::string& s : sites_needing_real_site(t, o.site_urls))
      c.add(verdict_kind::cannot_run, "needs_real_site '" + s + "': a VisualWebArena/WebArena task refers to that "
                                      "project's own site content (its ids, URLs and answers), which kvarena's local '" +
                                      s + "' does not hold: run it against the real site (--site " + s +
                                      "=URL), or --local-sites-for-real-tasks to run it here anyway");
  // Tabs and pages of sites not in `sites` (VWA opens them without logging in).
  std::vector<std::string> texts = {t.start_url, t.eval.reference_url.value_or("")};
  if (t.eval.program_html)
    for (const program_html_target& tg : *t.eval.program_html) texts.push_back(tg.url);
  for (const std::string& text : texts)
    for (const std::string& ph : find_placeholders(text)) {
      std::string site = ph.size() > 4 ? ph.substr(2, ph.size() - 4) : ph;
      for (char& ch : site) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (site == "homepage" || local_site(site) || o.site_urls.count(site) ||
          std::find(t.sites.begin(), t.sites.end(), site) != t.sites.end())
        continue;
      c.add(verdict_kind::cannot_run, "page on site '" + site + "' (" + ph + "): not served locally; runs with "
                                      "the real site's URL (--site " + site + "=URL)");
    }
  const task_eval& e = t.eval;
  const eval_helper_registry& helpers = sites::site_eval_helpers();
  for (const std::string& type : e.eval_types)
    if (type == "page_image_query") add_image_query_reasons(e, o, c);
  if (uses_fuzzy_judge(t) && !o.judge) c.add(verdict_kind::cannot_run, k_needs_judge);
  if (e.program_html)
    for (const program_html_target& tg : *e.program_html) {
      for (const std::string* text : {&tg.url, &tg.locator}) {
        const std::string h = helper_of(*text);
        if (!h.empty() && !helpers.find(h))
          c.add(verdict_kind::degraded, "func:" + h + ": no such helper in kvarena; the target scores 0 (VWA: None)");
      }
      const parsed_locator pl = parse_locator(tg.locator);
      if (!o.chromium && (pl.kind == locator_kind::javascript || pl.kind == locator_kind::lambda_js))
        c.add(verdict_kind::cannot_run, "program_html locator " + quote_for_detail(tg.locator, 60) +
                                            ": JavaScript, which the text browser does not run: needs --browser chromium");
      if (!o.chromium && tg.prep_actions && !tg.prep_actions->empty())
        c.add(verdict_kind::cannot_run, "program_html prep_actions: JavaScript, which the text browser does not run: "
                                        "needs --browser chromium");
    }
  return c.v;
}

}  // namespace kvarena::tasks
