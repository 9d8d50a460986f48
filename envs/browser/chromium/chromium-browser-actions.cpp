// chromium-browser-actions.cpp: the chromium backend's page operations (click, type, hover,
// press, scroll, clear), the wait after input (settle) and scripts run as input. An [id] is
// resolved against the last observation; the refusals are the text backend's
// (text-browser-actions.cpp). Screenshots and Set-of-Marks: chromium-browser-som.cpp.
#include <algorithm>
#include <functional>
#include <set>

#include "chromium-browser-page.h"
#include "browser/common/str-util.h"
#include "browser/text/text-browser-page.h"

namespace kvarena {

using json = nlohmann::json;
using clk = std::chrono::steady_clock;

namespace {

std::string bracket(int64_t id) {
  std::string s(1, '[');
  return s.append(std::to_string(id)).append("]");
}

// What JavaScript says about the element behind an id (a text node stands for its parent).
const char* const k_describe_fn = R"(function() {
  const e = this.nodeType === 3 ? this.parentElement : this;
  const tag = e ? e.tagName.toLowerCase() : '';
  const textTypes = ['', 'text', 'search', 'email', 'password', 'tel', 'url', 'number', 'date',
                     'datetime-local', 'month', 'week', 'time'];
  const field = tag === 'textarea' || (tag === 'input' && textTypes.includes((e.getAttribute('type') || '').toLowerCase()))
                || (e && e.isContentEditable);
  return {tag, field, disabled: !!(e && e.disabled), readonly: !!(e && e.readOnly)};
})";

// Chooses the option of a <select> (this) whose label or value equals, starts with, or
// contains `want` (lowercase), as the text backend does; {chosen} or {options}.
const char* const k_choose_option_fn = R"(function(want) {
  const opts = Array.from(this.options).filter(o => !o.disabled);
  const norm = s => s.trim().toLowerCase();
  let chosen = null;
  for (let pass = 0; pass < 3 && !chosen && want; ++pass)
    for (const o of opts) {
      const l = norm(o.label || o.text);
      if (pass === 0 ? l === want || norm(o.value) === want : pass === 1 ? l.startsWith(want) : l.includes(want)) {
        chosen = o; break;
      }
    }
  if (!chosen) return {options: opts.slice(0, 20).map(o => o.label || o.text), more: opts.length > 20};
  chosen.selected = true;
  this.focus();
  this.dispatchEvent(new Event('input', {bubbles: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return {chosen: chosen.label || chosen.text};
})";

const char* const k_select_option_fn = R"(function() {
  const s = this.closest('select');
  if (!s) { this.click(); return 'clicked'; }
  if (this.disabled || s.disabled) return 'disabled';
  this.selected = true;
  s.focus();
  s.dispatchEvent(new Event('input', {bubbles: true}));
  s.dispatchEvent(new Event('change', {bubbles: true}));
  return 'selected';
})";

// Focuses a field; when it was not focused yet the caret goes to the end, so typed text
// appends (a select-all from press [Control+a] is kept).
const char* const k_focus_end_fn = R"(function() {
  const e = this.nodeType === 3 ? this.parentElement : this;
  if (document.activeElement === e) return;
  e.focus();
  try { const n = (e.value || '').length; e.setSelectionRange(n, n); } catch (x) {}
})";

const char* const k_clear_fn = R"(function() {
  const e = this.nodeType === 3 ? this.parentElement : this;
  e.focus();
  if ('value' in e) e.value = ''; else e.textContent = '';
  e.dispatchEvent(new Event('input', {bubbles: true}));
  e.dispatchEvent(new Event('change', {bubbles: true}));
})";

struct key_info {
  std::string key, code, text;
  int key_code = 0;
};

std::optional<key_info> key_named(const std::string& lower) {
  static const std::map<std::string, key_info> named = {
      {"enter", {"Enter", "Enter", "\r", 13}},       {"tab", {"Tab", "Tab", "", 9}},
      {"backspace", {"Backspace", "Backspace", "", 8}}, {"delete", {"Delete", "Delete", "", 46}},
      {"escape", {"Escape", "Escape", "", 27}},      {"space", {" ", "Space", " ", 32}},
      {"arrowleft", {"ArrowLeft", "ArrowLeft", "", 37}}, {"arrowup", {"ArrowUp", "ArrowUp", "", 38}},
      {"arrowright", {"ArrowRight", "ArrowRight", "", 39}}, {"arrowdown", {"ArrowDown", "ArrowDown", "", 40}},
      {"home", {"Home", "Home", "", 36}},            {"end", {"End", "End", "", 35}},
      {"pageup", {"PageUp", "PageUp", "", 33}},      {"pagedown", {"PageDown", "PageDown", "", 34}},
  };
  if (auto it = named.find(lower); it != named.end()) return it->second;
  if (lower.size() == 1) {
    char c = lower[0];
    key_info k{std::string(1, c), "", std::string(1, c), 0};
    if (c >= 'a' && c <= 'z') k.code = std::string("Key") + static_cast<char>(c - 'a' + 'A'), k.key_code = c - 'a' + 'A';
    else if (c >= '0' && c <= '9') k.code = std::string("Digit") + c, k.key_code = c;
    return k;
  }
  return std::nullopt;
}

}  // namespace

// The operations below share these helpers through this friend.
struct chromium_browser_ops {
  chromium_browser& b;

  cdp_connection& cdp() { return *b.cdp_; }
  chromium_browser::tab& tab() { return b.current(); }
  json call(const std::string& method, json params = json::object()) {
    return cdp().call(method, std::move(params), tab().session_id, b.options_.command_timeout);
  }

  // The printed node behind `id` in the last observation, or the text backend's refusal.
  const chromium_node* resolve(int64_t id, std::string* error) {
    chromium_browser::snapshot& s = b.current_snapshot();
    auto it = s.nodes.find(id);
    if (it == s.nodes.end()) {
      *error = "no matching element: " + bracket(id) + " is not on the current page; ids are listed in the observation";
      return nullptr;
    }
    if (!it->second.in_view) {
      *error = "no matching element: " + bracket(id) + " is on this page but not in the current viewport; scroll " +
               (it->second.above_view ? "up" : "down") + " to bring it into view, or use an id from the observation";
      return nullptr;
    }
    return &it->second;
  }

  std::string object_id(int64_t backend_id) {
    json r = call("DOM.resolveNode", {{"backendNodeId", backend_id}});
    return r["object"].value("objectId", std::string());
  }

  json call_on(int64_t backend_id, const char* fn, json args = json::array()) {
    json a = json::array();
    for (json& v : args) a.push_back({{"value", std::move(v)}});
    json r = call("Runtime.callFunctionOn", {{"objectId", object_id(backend_id)},
                                             {"functionDeclaration", fn},
                                             {"arguments", a},
                                             {"returnByValue", true}});
    return r["result"].value("value", json());
  }

  // The centre of the node's first box in the viewport after scrolling it into view.
  std::optional<std::pair<double, double>> centre(int64_t backend_id) {
    try {
      call("DOM.scrollIntoViewIfNeeded", {{"backendNodeId", backend_id}});
    } catch (const cdp_error& e) {
      if (!e.dead() && !e.timed_out()) return std::nullopt;
      throw;
    }
    json q;
    try {
      q = call("DOM.getContentQuads", {{"backendNodeId", backend_id}});
    } catch (const cdp_error& e) {
      if (e.dead() || e.timed_out()) throw;
      return std::nullopt;
    }
    for (const json& quad : q["quads"]) {
      if (quad.size() < 8) continue;
      double x = 0, y = 0;
      for (int i = 0; i < 4; ++i) x += quad[2 * i].get<double>() / 4, y += quad[2 * i + 1].get<double>() / 4;
      return std::make_pair(x, y);
    }
    return std::nullopt;
  }

  void mouse(const char* type, double x, double y, int buttons = 0) {
    json p = {{"type", type}, {"x", x}, {"y", y}};
    if (std::string(type) != "mouseMoved") p["button"] = "left", p["clickCount"] = 1;
    else p["buttons"] = buttons;
    call("Input.dispatchMouseEvent", p);
  }

  void key(const key_info& k, int modifiers, bool with_commands = false) {
    json down = {{"type", k.text.empty() || modifiers & ~8 ? "rawKeyDown" : "keyDown"},
                 {"key", k.key}, {"code", k.code}, {"windowsVirtualKeyCode", k.key_code},
                 {"modifiers", modifiers}};
    if (!k.text.empty() && !(modifiers & ~8)) down["text"] = k.text, down["unmodifiedText"] = k.text;
    if (with_commands) down["commands"] = json::array({"selectAll"});
    call("Input.dispatchKeyEvent", down);
    call("Input.dispatchKeyEvent", {{"type", "keyUp"}, {"key", k.key}, {"code", k.code},
                                    {"windowsVirtualKeyCode", k.key_code}, {"modifiers", modifiers}});
  }

  // After input: waits for what the input started, on the page's own signals. The main
  // frame asking for or starting a navigation (Page.frameRequestedNavigation, a form
  // submission's comes as a queued task after the input's acknowledgement;
  // frameStartedNavigating / frameStartedLoading) is followed until the frame stops loading
  // (wait_for_load: load_timeout). Otherwise the input is done once the page has been quiet
  // for `settle_time`: no navigation and no network request of its own in flight (requests
  // that never end are given up after network_idle_timeout). New tabs are adopted.
  browser_result settle() {
    chromium_browser::tab& t = tab();
    t.snap.valid = false;
    const std::string& sid = t.session_id;
    const std::string& frame = t.target_id;
    const auto quiet = b.options_.settle_time;
    const auto network_deadline = clk::now() + b.options_.network_idle_timeout;
    auto quiet_until = clk::now() + quiet;
    std::set<std::string> in_flight;  // Network requestIds started since the input
    bool navigating = false;
    auto relevant = [&](const cdp_event& e) {
      if (e.session_id != sid) return false;
      return e.method == "Page.frameRequestedNavigation" || e.method == "Page.frameStartedNavigating" ||
             e.method == "Page.frameStartedLoading" || e.method == "Network.requestWillBeSent" ||
             e.method == "Network.loadingFinished" || e.method == "Network.loadingFailed";
    };
    while (!navigating) {
      const auto until = in_flight.empty() ? std::min(quiet_until, network_deadline) : network_deadline;
      if (clk::now() >= until) break;
      std::optional<cdp_event> e = cdp().wait_event_if(relevant, until);
      if (!e) break;
      const json& p = e->params;
      if (e->method == "Network.requestWillBeSent") {
        if (p.value("type", std::string()) == "Document" && p.value("frameId", std::string()) == frame)
          navigating = true;
        else
          in_flight.insert(p.value("requestId", std::string()));
      } else if (e->method == "Network.loadingFinished" || e->method == "Network.loadingFailed") {
        in_flight.erase(p.value("requestId", std::string()));
      } else if (p.value("frameId", std::string()) == frame) {
        navigating = starts_main_frame_navigation(*e);
      }
      quiet_until = std::max(quiet_until, clk::now() + quiet);
    }
    browser_result r;
    if (navigating) r = b.wait_for_load(t, "the page");
    if (b.adopt_popups() && r.ok()) r.error = too_many_tabs_error();
    return r;
  }

  // Whether a main-frame Page event starts loading another document (not a fragment or
  // history.pushState change, not a link opening a new tab).
  bool starts_main_frame_navigation(const cdp_event& e) {
    const json& p = e.params;
    if (e.method == "Page.frameStartedLoading") return true;
    if (e.method == "Page.frameStartedNavigating") {
      std::string kind = p.value("navigationType", std::string());
      return kind != "sameDocument" && kind != "historySameDocument";
    }
    if (p.value("disposition", std::string()) != "currentTab") return false;  // frameRequestedNavigation
    std::string to = p.value("url", std::string()), here = b.current_url();
    return to.find('#') == std::string::npos || to.substr(0, to.find('#')) != here.substr(0, here.find('#'));
  }

  // Resolves `id` of the last observation and runs `fn` on a copy of its node (the snapshot
  // may be replaced while fn runs), or returns the refusal; inside guarded (what: the action).
  browser_result with_node(const char* what, int64_t id,
                           const std::function<browser_result(const chromium_node&)>& fn) {
    return b.guarded(what, [&]() -> browser_result {
      std::string err;
      const chromium_node* found = resolve(id, &err);
      if (!found) return {err, ""};
      const chromium_node n = *found;
      return fn(n);
    });
  }

  browser_result click_at(int64_t id, const chromium_node& n) {
    if (n.role == "option") {
      std::string what = call_on(n.backend_id, k_select_option_fn).get<std::string>();
      tab().snap.valid = false;
      if (what == "disabled") return {"cannot select the option " + bracket(id) + ": it is disabled", ""};
      if (what == "selected") return {};
      return settle();
    }
    json d = call_on(n.backend_id, k_describe_fn);
    if (d.value("tag", std::string()) == "select") {
      call("DOM.focus", {{"backendNodeId", n.backend_id}});
      tab().snap.valid = false;
      return {"", "the options of " + bracket(id) + " are listed under it: click one, or type its text into " + bracket(id)};
    }
    auto c = centre(n.backend_id);
    if (!c) return {"cannot click " + bracket(id) + ": it has no box on the page (hidden or zero size)", ""};
    if (d.value("disabled", false)) return {"cannot click " + bracket(id) + ": it is disabled", ""};
    cdp().drain_events(clk::now());
    mouse("mouseMoved", c->first, c->second);
    mouse("mousePressed", c->first, c->second);
    mouse("mouseReleased", c->first, c->second);
    return settle();
  }
};

browser_result chromium_browser::click(int64_t id) {
  chromium_browser_ops ops{*this};
  return ops.with_node("click", id, [&](const chromium_node& n) { return ops.click_at(id, n); });
}

browser_result chromium_browser::hover(int64_t id) {
  chromium_browser_ops ops{*this};
  return ops.with_node("hover", id, [&](const chromium_node& n) -> browser_result {
    auto c = ops.centre(n.backend_id);
    if (!c) return {"cannot hover over " + bracket(id) + ": it has no box on the page (hidden or zero size)", ""};
    ops.mouse("mouseMoved", c->first, c->second);
    current().snap.valid = false;
    return {};
  });
}

browser_result chromium_browser::type(int64_t id, const std::string& text, bool press_enter) {
  chromium_browser_ops ops{*this};
  return ops.with_node("type", id, [&](const chromium_node& n) -> browser_result {
    json d = ops.call_on(n.backend_id, k_describe_fn);
    if (d.value("tag", std::string()) == "select") {
      if (d.value("disabled", false)) return {"cannot type into " + bracket(id) + ": the " + n.role + " is disabled", ""};
      json r = ops.call_on(n.backend_id, k_choose_option_fn, json::array({lower_trim(text)}));
      current().snap.valid = false;
      if (!r.contains("chosen")) {
        std::string list;
        for (const json& o : r["options"]) list += (list.empty() ? "" : ", ") + py_repr(o.get<std::string>());
        if (r.value("more", false)) list += ", ...";
        return {"cannot select '" + text + "' in " + bracket(id) + ": no option matches; its options are " +
                    (list.empty() ? "none" : list),
                ""};
      }
      return {};
    }
    if (!d.value("field", false))
      return {"cannot type into " + bracket(id) + ": it is " + role_phrase(n.role) +
                  ", not a textbox; type into a textbox, searchbox or combobox from the observation",
              ""};
    if (d.value("disabled", false)) return {"cannot type into " + bracket(id) + ": the " + n.role + " is disabled", ""};
    if (d.value("readonly", false)) return {"cannot type into " + bracket(id) + ": the " + n.role + " is read-only", ""};
    ops.call_on(n.backend_id, k_focus_end_fn);
    if (!text.empty()) ops.call("Input.insertText", {{"text", text}});
    current().snap.valid = false;
    if (!press_enter) return {};
    cdp_->drain_events(clk::now());
    ops.key(*key_named("enter"), 0);
    return ops.settle();
  });
}

browser_result chromium_browser::clear(int64_t id) {
  chromium_browser_ops ops{*this};
  return ops.with_node("clear", id, [&](const chromium_node& n) -> browser_result {
    json d = ops.call_on(n.backend_id, k_describe_fn);
    if (d.value("tag", std::string()) == "select")
      return {"cannot clear " + bracket(id) + ": it is " + role_phrase(n.role) + "; click one of its options instead", ""};
    if (!d.value("field", false))
      return {"cannot clear " + bracket(id) + ": it is " + role_phrase(n.role) + ", not a textbox", ""};
    if (d.value("disabled", false) || d.value("readonly", false))
      return {"cannot clear " + bracket(id) + ": the " + n.role + " is " +
                  (d.value("disabled", false) ? "disabled" : "read-only"),
              ""};
    ops.call_on(n.backend_id, k_clear_fn);
    current().snap.valid = false;
    return {};
  });
}

browser_result chromium_browser::press(const std::string& key_combination) {
  std::string combo = lower_trim(key_combination);
  if (combo.empty()) return {"press needs a key, e.g. press [Enter] or press [Control+a]", ""};
  std::vector<std::string> keys = key_combination_parts(combo);  // "control+a" -> control, a
  int modifiers = 0;
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    const std::string& m = keys[i];
    if (m == "alt") modifiers |= 1;
    else if (m == "control" || m == "ctrl") modifiers |= 2;
    else if (m == "meta" || m == "cmd" || m == "command") modifiers |= 4;
    else if (m == "shift") modifiers |= 8;
    else return {"cannot press '" + key_combination + "': '" + m + "' is not a modifier (Control, Alt, Shift, Meta)", ""};
  }
  const std::string& last = keys.back();
  if (keys.size() == 1 && (last == "pagedown" || last == "pageup")) return scroll(last == "pagedown" ? "down" : "up");
  if (modifiers == 1 && (last == "arrowleft" || last == "arrowright")) return last == "arrowleft" ? go_back() : go_forward();
  std::optional<key_info> k = key_named(last);
  if (!k) return {"cannot press '" + key_combination + "': unknown key '" + keys.back() + "'", ""};
  return guarded("press", [&]() -> browser_result {
    chromium_browser_ops ops{*this};
    cdp_->drain_events(clk::now());
    bool select_all = last == "a" && (modifiers & (2 | 4));
    ops.key(*k, modifiers, select_all);
    return ops.settle();
  });
}

browser_result chromium_browser::scroll(const std::string& direction) {
  std::string d = lower_trim(direction);
  if (d != "up" && d != "down")
    return {"cannot scroll '" + direction + "': the direction is up or down, e.g. scroll [down]", ""};
  return guarded("scroll", [&]() -> browser_result {
    std::string err;
    std::optional<std::string> moved = evaluate_js(
        std::string("(() => { const e = document.scrollingElement || document.body; const before = e.scrollTop; "
                    "e.scrollTop = before ") +
            (d == "down" ? "+" : "-") + " window.innerHeight; return e.scrollTop - before; })()",
        &err);
    if (!moved) return {"scroll failed: " + err, ""};
    current().snap.valid = false;
    if (std::atof(moved->c_str()) == 0)
      return {"", d == "down" ? "already at the bottom of the page" : "already at the top of the page"};
    return {};
  });
}

browser_result chromium_browser::run_js_as_input(const std::string& expression) {
  return guarded("script", [&]() -> browser_result {
    chromium_browser_ops ops{*this};
    cdp_->drain_events(clk::now());
    json r = ops.call("Runtime.evaluate", {{"expression", expression}, {"returnByValue", true}});
    if (auto ex = r.find("exceptionDetails"); ex != r.end()) {
      std::string text = (*ex)["exception"].value("description", ex->value("text", std::string("exception")));
      return {"the script threw: " + text.substr(0, text.find('\n')), ""};
    }
    return ops.settle();
  });
}

}  // namespace kvarena
