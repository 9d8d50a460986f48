// page-probe.h: what the evaluators need from a browser on the episode's final page, as
// one small interface (a browser backend implements it; tests implement fakes), and the
// registry of `func:` helpers that tasks call from program_html (`"url":
// "func:reddit_get_post_url('__last_url__')"`, `"locator": "func:get_query_text(__page__,
// '.x')"`). Sites register their helpers; the evaluator only looks them up by name.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace kvarena {

class page_probe {
 public:
  virtual ~page_probe() = default;

  // The URL of the current tab.
  virtual std::string current_url() = 0;

  // Opens `url` in the current tab; false with *err set (what failed) when it cannot.
  virtual bool navigate(const std::string& url, std::string* err) = 0;

  // The whole page's HTML (the "" locator, VWA's page.content()).
  virtual std::string page_html() = 0;

  // Evaluates a JS locator on the current page and returns its value as text:
  // "document.querySelector('S').outerText" (also .textContent, .innerText, .value, and
  // document.body.*; parse_locator() in eval-locator.h takes these apart for backends
  // without JavaScript), or any other JS expression a JS-capable backend can run.
  // nullopt when it throws or the backend cannot evaluate it; the evaluator then uses "".
  virtual std::optional<std::string> eval_locator(const std::string& locator) = 0;

  // Runs one of a target's prep_actions (JS such as "document.querySelector('#x').click()")
  // before its locator; false with *err set when it fails (failures are noted, not fatal).
  virtual bool run_prep_action(const std::string& js, std::string* err) = 0;
};

// A func: helper: the page, and the call's arguments as text (quotes removed; `__page__`
// is passed as the text "__page__", `__last_url__` already replaced by the current URL).
// Returns a URL (in a target's url) or the selected text (in a locator); nullopt means
// "the page is wrong" (VWA's None), which scores the program_html evaluator 0. A helper
// that throws is treated as nullopt in a url and as "" in a locator.
using eval_helper_fn =
    std::function<std::optional<std::string>(page_probe& page, const std::vector<std::string>& args)>;

// What a helper may use besides its arguments: the page, and the episode's site map
// (site name -> base URL, "shopping" -> "http://h:7770"), for helpers that VWA calls
// without arguments and that read a site's own API (shopping_get_latest_order_url()).
struct eval_helper_call {
  page_probe& page;
  const std::vector<std::string>& args;
  const std::map<std::string, std::string>& sites;
  // The base URL of `site` without a trailing '/'; throws std::invalid_argument naming
  // the --site flag when the episode has none.
  std::string site_url(const std::string& site) const;
};
using eval_site_helper_fn = std::function<std::optional<std::string>(const eval_helper_call& call)>;

class eval_helper_registry {
 public:
  void add(const std::string& name, eval_site_helper_fn fn) { fns_[name] = std::move(fn); }
  void add(const std::string& name, eval_helper_fn fn) {
    fns_[name] = [fn = std::move(fn)](const eval_helper_call& c) { return fn(c.page, c.args); };
  }
  // Lambdas of either form.
  template <class F>
  void add(const std::string& name, F fn) {
    if constexpr (std::is_invocable_v<F&, const eval_helper_call&>) add(name, eval_site_helper_fn(std::move(fn)));
    else add(name, eval_helper_fn(std::move(fn)));
  }
  const eval_site_helper_fn* find(std::string_view name) const {
    auto it = fns_.find(name);
    return it == fns_.end() ? nullptr : &it->second;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [name, fn] : fns_) out.push_back(name);
    return out;
  }

 private:
  std::map<std::string, eval_site_helper_fn, std::less<>> fns_;
};

inline std::string eval_helper_call::site_url(const std::string& site) const {
  auto it = sites.find(site);
  std::string url = it == sites.end() ? std::string() : it->second;
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url.empty())
    throw std::invalid_argument("no URL for site '" + site + "' (give it with --site " + site + "=URL)");
  return url;
}

}  // namespace kvarena
