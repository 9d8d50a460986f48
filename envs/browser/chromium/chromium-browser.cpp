// chromium-browser.cpp: the chromium backend's browser context, tabs, navigation, history,
// observation and the evaluators' JavaScript (see chromium-browser.h). The page operations
// are in chromium-browser-actions.cpp.
#include <algorithm>

#include "chromium-browser-page.h"
#include "chromium-process.h"
#include "common/url-policy.h"
#include "browser/common/url-util.h"

namespace kvarena {

using json = nlohmann::json;
using clk = std::chrono::steady_clock;

namespace {

std::string seconds_text(std::chrono::milliseconds ms) {
  double s = static_cast<double>(ms.count()) / 1000.0;
  std::string t = std::to_string(s);
  while (t.back() == '0') t.pop_back();
  if (t.back() == '.') t.pop_back();
  return t + " s";
}

}  // namespace

chromium_browser::chromium_browser(std::shared_ptr<chromium_process> process, chromium_browser_options options)
    : process_(std::move(process)), options_(options) {
  try {
    cdp_ = std::make_unique<cdp_connection>(process_->pipe());
    json r = cdp_->call("Target.createBrowserContext", {{"disposeOnDetach", true}}, "", options_.command_timeout);
    context_id_ = r.value("browserContextId", std::string());
    cdp_->call("Target.setDiscoverTargets", {{"discover", true}}, "", options_.command_timeout);
    tabs_.push_back(open_tab("about:blank"));
  } catch (const cdp_error& e) {
    throw std::runtime_error(std::string("cannot open a Chromium browser context: ") + e.what());
  }
}

chromium_browser::~chromium_browser() {
  if (cdp_ && !cdp_->dead() && !context_id_.empty()) {
    try {  // the pipe outlives this connection: the context goes only when disposed
      cdp_->call("Target.disposeBrowserContext", {{"browserContextId", context_id_}}, "", std::chrono::seconds(5));
    } catch (...) {
    }
  }
}

bool chromium_browser::dead() const { return !cdp_ || cdp_->dead() || !process_->alive(); }

browser_result chromium_browser::guarded(const char* what, const std::function<browser_result()>& fn) {
  auto gone = [this] {
    return browser_result{"the Chromium browser of this session is gone (" + cdp_->dead_reason() +
                              "); this session cannot continue: close it and create a new one",
                          ""};
  };
  if (cdp_ && cdp_->dead()) return gone();
  try {
    browser_result r = fn();
    if (!r.ok() && cdp_->dead()) return gone();  // a step that failed because Chromium went
    return r;
  } catch (const cdp_error& e) {
    if (e.dead())
      return {"the Chromium browser of this session is gone (" + std::string(e.what()) +
                  "); this session cannot continue: close it and create a new one",
              ""};
    if (e.timed_out()) return {std::string(what) + " failed: Chromium did not answer in time (" + e.what() + ")", ""};
    return {std::string(what) + " failed: " + e.what(), ""};
  } catch (const std::exception& e) {
    return {std::string(what) + " failed: " + e.what(), ""};
  }
}

std::unique_ptr<chromium_browser::tab> chromium_browser::open_tab(const std::string& url) {
  auto t = std::make_unique<tab>();
  json r = cdp_->call("Target.createTarget", {{"url", url}, {"browserContextId", context_id_}}, "",
                      options_.command_timeout);
  t->target_id = r.value("targetId", std::string());
  attach_tab(*t);
  return t;
}

// Attaches a DevTools session to the tab's target with the domains the backend listens to
// (Network: the requests an input starts, see settle) and the viewport.
void chromium_browser::attach_tab(tab& t) {
  json a = cdp_->call("Target.attachToTarget", {{"targetId", t.target_id}, {"flatten", true}}, "",
                      options_.command_timeout);
  t.session_id = a.value("sessionId", std::string());
  for (const char* domain : {"Page.enable", "DOM.enable", "Accessibility.enable", "Network.enable"})
    cdp_->call(domain, json::object(), t.session_id, options_.command_timeout);
  cdp_->call("Emulation.setDeviceMetricsOverride",
             {{"width", options_.viewport_width_px},
              {"height", options_.viewport_height_px},
              {"deviceScaleFactor", 1},
              {"mobile", false}},
             t.session_id, options_.command_timeout);
}

chromium_browser::tab& chromium_browser::current() { return *tabs_[current_]; }
const chromium_browser::tab& chromium_browser::current() const { return *tabs_[current_]; }

// Waits for the main frame of `t` to stop loading; on timeout stops it and says so.
browser_result chromium_browser::wait_for_load(tab& t, const std::string& what) {
  const auto deadline = clk::now() + options_.load_timeout;
  while (true) {
    std::optional<cdp_event> e = cdp_->wait_event("Page.frameStoppedLoading", t.session_id, deadline);
    if (!e) break;
    if (e->params.value("frameId", std::string()) == t.target_id) return {};
  }
  try {
    cdp_->call("Page.stopLoading", json::object(), t.session_id, std::chrono::seconds(5));
  } catch (const cdp_error& e) {
    if (e.dead()) throw;
  }
  return {what + " did not finish loading within " + seconds_text(options_.load_timeout) +
              "; loading was stopped and the tab shows whatever had arrived. The site may be down or slow: "
              "try again, or go elsewhere",
          ""};
}

browser_result chromium_browser::navigate_current(const std::string& url) {
  tab& t = current();
  t.snap.valid = false;
  cdp_->drain_events(clk::now());  // stale load events must not end the wait below
  json r;
  try {
    r = cdp_->call("Page.navigate", {{"url", url}}, t.session_id, options_.load_timeout);
  } catch (const cdp_error& e) {
    if (!e.timed_out()) throw;
    try {
      cdp_->call("Page.stopLoading", json::object(), t.session_id, std::chrono::seconds(5));
    } catch (const cdp_error& e2) {
      if (e2.dead()) throw;
    }
    return {"the page " + url + " did not finish loading within " + seconds_text(options_.load_timeout) +
                " (the server never answered); loading was stopped. The site may be down or slow: try again, "
                "or go elsewhere",
            ""};
  }
  if (std::string err = r.value("errorText", std::string()); !err.empty())
    return {"cannot open '" + url + "': " + err, ""};
  if (!r.contains("loaderId") || url == "about:blank") return {};  // same-document navigation
  browser_result res = wait_for_load(t, "the page " + url);
  if (!res.ok()) return res;
  std::string status_err;
  std::optional<std::string> status = evaluate_js(
      "(performance.getEntriesByType('navigation')[0] || {}).responseStatus || 0", &status_err);
  if (status && std::atoi(status->c_str()) >= 400)
    res.note = "the server answered HTTP " + *status + " for " + current_url();
  return res;
}

browser_result chromium_browser::go_to(const std::string& url) {
  return guarded("goto", [&]() -> browser_result {
    size_t b = url.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return {"goto needs a URL, e.g. goto [http://127.0.0.1:8080/]", ""};
    std::string target;
    if (url[b] == '/' && url.compare(b, 2, "//") != 0) {  // a path: relative to this page
      std::optional<std::string> r = resolve_url(current_url(), url);
      if (!r || url_scheme(current_url()).rfind("http", 0) != 0)
        return {"cannot go to '" + url + "': a path needs a current http page; use a full URL", ""};
      target = *r;
    } else {
      target = url_from_user_input(url);
    }
    if (target != "about:blank")
      if (std::string why = refused_url_reason(target, options_.allow_file_urls); !why.empty())
        return {why + " (and about:blank)", ""};
    return navigate_current(target);
  });
}

browser_result chromium_browser::go_back() {
  return guarded("go_back", [&]() -> browser_result {
    tab& t = current();
    json h = cdp_->call("Page.getNavigationHistory", json::object(), t.session_id, options_.command_timeout);
    int index = h.value("currentIndex", 0);
    if (index <= 0) return {"cannot go back: this tab has no earlier page", ""};
    t.snap.valid = false;
    cdp_->drain_events(clk::now());
    cdp_->call("Page.navigateToHistoryEntry", {{"entryId", h["entries"][index - 1]["id"]}}, t.session_id,
               options_.command_timeout);
    return wait_for_load(t, "the earlier page");
  });
}

browser_result chromium_browser::go_forward() {
  return guarded("go_forward", [&]() -> browser_result {
    tab& t = current();
    json h = cdp_->call("Page.getNavigationHistory", json::object(), t.session_id, options_.command_timeout);
    int index = h.value("currentIndex", 0);
    if (index + 1 >= static_cast<int>(h["entries"].size()))
      return {"cannot go forward: there is no later page in this tab (go_forward works after go_back)", ""};
    t.snap.valid = false;
    cdp_->drain_events(clk::now());
    cdp_->call("Page.navigateToHistoryEntry", {{"entryId", h["entries"][index + 1]["id"]}}, t.session_id,
               options_.command_timeout);
    return wait_for_load(t, "the later page");
  });
}

browser_result chromium_browser::new_tab() {
  return guarded("new_tab", [&]() -> browser_result {
    if (tab_count() >= k_max_tabs) return {too_many_tabs_error(), ""};
    tabs_.push_back(open_tab("about:blank"));
    current_ = tab_count() - 1;
    return {};
  });
}

browser_result chromium_browser::tab_focus(int index) {
  if (index < 0 || index >= tab_count())
    return {"tab " + std::to_string(index) + " does not exist (" + std::to_string(tab_count()) +
                (tab_count() == 1 ? " tab open: use tab_focus [0]"
                                  : " tabs open: use 0 to " + std::to_string(tab_count() - 1)) + ")",
            ""};
  current_ = index;
  return {};
}

browser_result chromium_browser::close_tab() {
  return guarded("close_tab", [&]() -> browser_result {
    cdp_->call("Target.closeTarget", {{"targetId", current().target_id}}, "", options_.command_timeout);
    tabs_.erase(tabs_.begin() + current_);
    if (tabs_.empty()) {  // as VWA: a fresh blank tab replaces the last one
      tabs_.push_back(open_tab("about:blank"));
      current_ = 0;
      return {"", "closed the last tab; a new blank tab was opened"};
    }
    current_ = tab_count() - 1;
    return {};
  });
}

// Tabs a page opened itself (target=_blank links, window.open) join the tab list, focused;
// past k_max_tabs they are closed again and the result says so.
bool chromium_browser::adopt_popups() {
  bool refused = false;
  for (cdp_event& e : cdp_->drain_events(clk::now())) {
    if (e.method != "Target.targetCreated") continue;
    const json& info = e.params["targetInfo"];
    if (info.value("type", std::string()) != "page" || info.value("browserContextId", std::string()) != context_id_)
      continue;
    std::string id = info.value("targetId", std::string());
    bool known = std::any_of(tabs_.begin(), tabs_.end(), [&](const auto& t) { return t->target_id == id; });
    if (known || !info.contains("openerId")) continue;
    if (tab_count() >= k_max_tabs) {
      cdp_->call("Target.closeTarget", {{"targetId", id}}, "", options_.command_timeout);
      refused = true;
      continue;
    }
    auto t = std::make_unique<tab>();
    t->target_id = id;
    attach_tab(*t);
    tabs_.push_back(std::move(t));
    current_ = tab_count() - 1;
    wait_for_load(current(), "the new tab");
  }
  return refused;
}

chromium_browser::snapshot& chromium_browser::current_snapshot() {
  tab& t = current();
  if (t.snap.valid) return t.snap;
  json ax = cdp_->call("Accessibility.getFullAXTree", json::object(), t.session_id, options_.command_timeout);
  json dom = cdp_->call("DOMSnapshot.captureSnapshot", {{"computedStyles", json::array()}}, t.session_id,
                        options_.command_timeout);
  snapshot s;
  s.tree = ax_tree_from_cdp(ax["nodes"]);
  s.boxes = layout_boxes_from_cdp(dom, &s.scroll_y);
  ax_rendering r = render_in_viewport(s.tree, s.boxes, s.scroll_y, options_.viewport_height_px, &s.nodes);
  s.text = std::move(r.text);
  s.ids_in_view.assign(r.ids_in_view.begin(), r.ids_in_view.end());
  s.valid = true;
  t.snap = std::move(s);
  return t.snap;
}

browser_observation chromium_browser::observe() {
  browser_observation obs;
  browser_result r = guarded("observe", [&]() -> browser_result {
    adopt_popups();
    std::string header;
    for (int i = 0; i < tab_count(); ++i) {
      json v = cdp_->call("Runtime.evaluate", {{"expression", "document.title"}, {"returnByValue", true}},
                          tabs_[i]->session_id, options_.command_timeout);
      std::string title = v["result"].value("value", std::string());
      obs.tabs.push_back(title);
      if (i) header += " | ";
      header += "Tab " + std::to_string(i) + (i == current_ ? " (current): " : ": ") + title;
    }
    obs.text = header + "\n\n" + current_snapshot().text;
    obs.url = current_url();
    return {};
  });
  if (!r.ok()) {
    obs.text = "Error: " + r.error;
    obs.tabs.clear();
  }
  return obs;
}

std::string chromium_browser::current_url() const {
  if (!cdp_ || cdp_->dead()) return "";
  try {
    json r = cdp_->call("Target.getTargetInfo", {{"targetId", current().target_id}}, "", options_.command_timeout);
    return r["targetInfo"].value("url", std::string());
  } catch (const std::exception&) {
    return "";
  }
}

std::optional<std::string> chromium_browser::evaluate_js(const std::string& expression, std::string* error) {
  auto fail = [&](std::string why) -> std::optional<std::string> {
    if (error) *error = std::move(why);
    return std::nullopt;
  };
  if (!cdp_ || cdp_->dead()) return fail("the Chromium browser of this session is gone");
  try {
    json r = cdp_->call("Runtime.evaluate",
                        {{"expression", expression}, {"returnByValue", true}, {"awaitPromise", true}},
                        current().session_id, options_.command_timeout);
    if (auto ex = r.find("exceptionDetails"); ex != r.end()) {
      std::string text = (*ex)["exception"].value("description", ex->value("text", std::string("exception")));
      return fail("JavaScript threw: " + text.substr(0, text.find('\n')));
    }
    const json& v = r["result"];
    if (!v.contains("value") || v["value"].is_null()) return std::string();
    if (v["value"].is_string()) return v["value"].get<std::string>();
    return v["value"].dump(-1, ' ', false, json::error_handler_t::replace);
  } catch (const cdp_error& e) {
    return fail(e.what());
  }
}

std::string chromium_browser::page_html() const {
  std::string err;
  auto self = const_cast<chromium_browser*>(this);  // evaluating reads the page only
  return self
      ->evaluate_js("(document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '') + "
                    "document.documentElement.outerHTML",
                    &err)
      .value_or("");
}

std::optional<std::string> chromium_browser::query_selector_property(const std::string& selector,
                                                                     const std::string& property,
                                                                     std::string* error) {
  if (property != "outerText" && property != "innerText" && property != "textContent" && property != "value") {
    if (error) *error = "unsupported property '" + property + "': use outerText, innerText, textContent or value";
    return std::nullopt;
  }
  std::string err;
  std::optional<std::string> v = evaluate_js(
      "(() => { let e; try { e = document.querySelector(" + js_string(selector) +
          "); } catch (x) { return {bad: String(x.message)}; } if (!e) return {missing: true}; const v = e[" +
          js_string(property) + "]; return {value: v == null ? '' : String(v)}; })()",
      &err);
  if (!v) {
    if (error) *error = err;
    return std::nullopt;
  }
  json r = json::parse(*v, nullptr, false);
  if (r.contains("bad")) {
    if (error) *error = "invalid CSS selector: " + r["bad"].get<std::string>();
    return std::nullopt;
  }
  if (r.contains("missing")) {
    if (error) *error = "no element matches the selector '" + selector + "' on " + current_url();
    return std::nullopt;
  }
  return r.value("value", std::string());
}

bool chromium_browser::post_form(const std::string& url, const std::string& body, long* status,
                                 std::string* final_url, std::string* error) {
  browser_result nav = go_to(url);  // a page of the origin, so the fetch is same-origin
  if (!nav.ok()) {
    *error = nav.error;
    return false;
  }
  std::optional<std::string> v = evaluate_js(
      "fetch(" + js_string(url) + ", {method: 'POST', credentials: 'include', headers: {'Content-Type': "
          "'application/x-www-form-urlencoded'}, body: " + js_string(body) +
          "}).then(r => ({status: r.status, url: r.url}))",
      error);
  if (!v) return false;
  json r = json::parse(*v, nullptr, false);
  *status = r.value("status", 0L);
  *final_url = r.value("url", std::string());
  return true;
}

}  // namespace kvarena
