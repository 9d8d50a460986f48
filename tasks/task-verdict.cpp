// task-verdict.cpp: see task-verdict.h.
#include "task-verdict.h"

#include <algorithm>
#include <string_view>

#include "eval/eval-locator.h"
#include "eval/eval-text.h"
#include "sites/site-eval-helpers.h"
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

}  // namespace

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
    if (!local_site(s))
      c.add(verdict_kind::cannot_run, "site '" + s + "': not one of kvarena's sites (classifieds, shopping, reddit); "
                                      "runs with the real site's URL (kvarena env-server --sites-url " + s + "=URL)");
  const task_eval& e = t.eval;
  const eval_helper_registry& helpers = sites::site_eval_helpers();
  for (const std::string& type : e.eval_types) {
    if (type == "page_image_query")
      c.add(verdict_kind::cannot_run, "page_image_query: needs a vision-language model or image matching "
                                      "(eval_vqa / eval_fuzzy_image_match); kvarena scores it as unsupported");
  }
  if (e.reference_answers && e.reference_answers->fuzzy_match) {
    if (e.reference_answers->fuzzy_match->is_na())
      c.add(verdict_kind::degraded, "string_match fuzzy_match N/A: VWA asks an LLM judge whether the answer says the "
                                    "task cannot be done; kvarena's deterministic judge decides until a judge is "
                                    "configured");
    else
      c.add(verdict_kind::degraded, "string_match fuzzy_match: VWA asks an LLM judge; kvarena's deterministic judge "
                                    "decides (token match) until a judge is configured");
  }
  if (e.program_html)
    for (const program_html_target& tg : *e.program_html) {
      for (const std::string* text : {&tg.url, &tg.locator}) {
        const std::string h = helper_of(*text);
        if (!h.empty() && !helpers.find(h))
          c.add(verdict_kind::degraded, "func:" + h + ": no such helper in kvarena; the target scores 0 (VWA: None)");
      }
      const parsed_locator pl = parse_locator(tg.locator);
      if (pl.kind == locator_kind::javascript || pl.kind == locator_kind::lambda_js)
        c.add(verdict_kind::degraded, "program_html locator " + quote_for_detail(tg.locator, 60) +
                                          ": JavaScript, which the text browser does not run (scored as empty text)");
      if (tg.prep_actions && !tg.prep_actions->empty())
        c.add(verdict_kind::degraded, "program_html prep_actions: JavaScript, which the text browser does not run");
    }
  return c.v;
}

}  // namespace kvarena::tasks
