// eval-program-html.cpp: see eval-program-html.h.
#include "eval/eval-program-html.h"

#include <exception>

#include "eval/eval-locator.h"
#include "eval/eval-text.h"

namespace kvarena {
namespace {

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

std::string trim_spaces(const std::string& s) {
  const char* ws = " \t\n\r";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

std::string known_helpers(const eval_helper_registry* helpers) {
  std::string out;
  if (helpers)
    for (const std::string& n : helpers->names()) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none registered" : "registered: " + out;
}

// Calls a func: helper. Returns false with *why set when it is unknown or gives None;
// *threw tells a throwing helper apart (a locator then yields "").
bool call_helper(const func_call& call, page_probe& page, const eval_helper_registry* helpers,
                 const std::map<std::string, std::string>& sites, std::string* out, std::string* why, bool* threw) {
  *threw = false;
  const eval_site_helper_fn* fn = helpers ? helpers->find(call.name) : nullptr;
  if (!fn) {
    *why = "unknown func: helper '" + call.name + "' (" + known_helpers(helpers) + ")";
    return false;
  }
  std::vector<std::string> args = call.args;
  for (std::string& a : args)
    if (a.find("__last_url__") != std::string::npos) a = replace_all(a, "__last_url__", page.current_url());
  std::optional<std::string> r;
  try {
    r = (*fn)(eval_helper_call{page, args, sites});
  } catch (const std::exception& e) {
    *threw = true;
    *why = "func: helper '" + call.name + "' failed: " + message_snippet(e.what(), 200);
    return false;
  } catch (...) {
    *threw = true;
    *why = "func: helper '" + call.name + "' failed";
    return false;
  }
  if (!r) {
    *why = "func: helper '" + call.name + "' found nothing (the page is wrong)";
    return false;
  }
  *out = std::move(*r);
  return true;
}

// The locator's value; nullopt when it throws or fails (a refusal's message is noted).
std::optional<std::string> eval_js(page_probe& page, const std::string& locator, size_t index, judge_context& jc) {
  try {
    return page.eval_locator(locator);
  } catch (const std::exception& e) {
    if (jc.notes)
      jc.notes->push_back("program_html target " + std::to_string(index) + ": locator " + quote_for_detail(locator) +
                          " not run: " + message_snippet(e.what(), 300));
    return std::nullopt;
  } catch (...) {
    return std::nullopt;
  }
}

// One target; returns its score and appends to *detail.
double score_target(const program_html_target& t, size_t index, page_probe& page,
                    const eval_helper_registry* helpers, const std::map<std::string, std::string>& sites,
                    judge_context& jc, std::string* detail) {
  std::string d = "target " + std::to_string(index) + ": ";
  auto finish = [&](double s, const std::string& what) {
    *detail += (detail->empty() ? "" : " | ") + d + what;
    return s;
  };

  // 1. the page
  std::string url = trim_spaces(t.url);
  if (url.rfind("func:", 0) == 0) {
    func_call call;
    std::string err, why;
    bool threw = false;
    if (!parse_func_call(url.substr(5), &call, &err)) return finish(0, "url: " + err);
    std::string computed;
    if (!call_helper(call, page, helpers, sites, &computed, &why, &threw)) return finish(0, "url: " + why);
    url = computed;
  }
  if (url != "last") {
    std::string err;
    bool opened = false;
    try {
      opened = page.navigate(url, &err);
    } catch (const std::exception& e) {
      err = e.what();
    } catch (...) {
      err = "unknown error";
    }
    if (!opened) return finish(0, "cannot open " + quote_for_detail(url, 200) + ": " + message_snippet(err, 200));
  }

  // 2. prep actions
  if (t.prep_actions) {
    for (const std::string& js : *t.prep_actions) {
      std::string err;
      bool ok = false;
      try {
        ok = page.run_prep_action(js, &err);
      } catch (...) {
        ok = false;
      }
      if (!ok && jc.notes)
        jc.notes->push_back("program_html target " + std::to_string(index) + ": prep action " +
                            quote_for_detail(js) + " failed" + (err.empty() ? "" : ": " + message_snippet(err, 200)));
    }
  }

  // 3. the locator
  parsed_locator loc = parse_locator(t.locator);
  std::string selected;
  switch (loc.kind) {
    case locator_kind::whole_page:
      try {
        selected = page.page_html();
      } catch (...) {
        selected = "";
      }
      break;
    case locator_kind::query_selector:
    case locator_kind::javascript:
      selected = eval_js(page, t.locator, index, jc).value_or("");
      break;
    case locator_kind::lambda_js: {
      auto r = eval_js(page, t.locator, index, jc);
      if (!r || r->empty()) return finish(0, "lambda locator found nothing (the page is wrong)");
      selected = *r;
      break;
    }
    case locator_kind::func_helper: {
      std::string why;
      bool threw = false;
      if (!call_helper(loc.call, page, helpers, sites, &selected, &why, &threw)) {
        if (!threw) return finish(0, "locator: " + why);
        if (jc.notes) jc.notes->push_back("program_html target " + std::to_string(index) + ": " + why + " (used \"\")");
        selected = "";
      }
      break;
    }
    case locator_kind::invalid:
      return finish(0, "locator: " + loc.error);
  }

  // 4. one key of required_contents
  std::string check;
  double s = score_required_contents(t.required_contents, selected, jc, &check);
  return finish(s, check);
}

}  // namespace

double score_program_html(const std::vector<program_html_target>& targets, page_probe* page,
                          const eval_helper_registry* helpers, judge_context& jc,
                          std::string* detail, const std::map<std::string, std::string>& sites) {
  if (!page) {
    *detail = "no page to evaluate (the session has no browser page)";
    return 0;
  }
  if (targets.empty()) {
    *detail = "no program_html targets";
    return 0;
  }
  double score = 1;
  for (size_t i = 0; i < targets.size(); ++i) score *= score_target(targets[i], i, *page, helpers, sites, jc, detail);
  return score;
}

}  // namespace kvarena
