// site-login.cpp: see site-login.h.
#include "server/site-login.h"

#include <nlohmann/json.hpp>

#include "browser/text/css-select.h"
#include "browser/text/html-document.h"
#include "browser/common/url-util.h"
#include "sites/http-message.h"

namespace kvarena {
namespace {

std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

const GumboNode* find_login_form(const html_document& doc) {
  auto forms = css_selector_list::parse("form");
  auto password = css_selector_list::parse("input[type=password i]");
  for (const GumboNode* f : query_selector_all(doc.document(), *forms))
    if (query_selector(f, *password)) return f;
  return nullptr;
}

}  // namespace

std::optional<site_account> vwa_account(const std::string& site) {
  if (site == "shopping") return site_account{"/customer/account/login/", "emma.lopez@gmail.com", "Password.123"};
  if (site == "reddit") return site_account{"/login", "MarvelsGrantMan136", "test1234"};
  if (site == "classifieds") return site_account{"/index.php?page=login", "blake.sullivan@gmail.com", "Password.123"};
  if (site == "shopping_admin") return site_account{"/", "admin", "admin1234"};
  if (site == "gitlab") return site_account{"/users/sign_in", "byteblaze", "hello1234"};
  return std::nullopt;
}

bool form_login(http_client& http, const std::string& base_url, const site_account& account, std::string* err) {
  std::string base = base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  http_request get;
  get.url = base + account.login_path;
  http_response page = http.fetch(get);
  if (!page.ok || page.status >= 400) {
    *err = "cannot open the login page " + get.url + ": " + (page.ok ? "HTTP " + std::to_string(page.status) : page.error);
    return false;
  }
  html_document doc(page.body);
  const GumboNode* form = find_login_form(doc);
  if (!form) {
    *err = get.url + " has no form with a password field (is it the site's login page?)";
    return false;
  }
  std::string body;
  bool user_set = false;
  auto add = [&](const std::string& k, const std::string& v) {
    body += (body.empty() ? "" : "&") + sites::url_encode(k, true) + "=" + sites::url_encode(v, true);
  };
  auto inputs = css_selector_list::parse("input");
  for (const GumboNode* in : query_selector_all(form, *inputs)) {
    const std::string name = attr_or(in, "name"), type = lower(attr_or(in, "type", "text"));
    if (name.empty() || type == "submit" || type == "button" || type == "image" || type == "reset") continue;
    if (type == "checkbox" || type == "radio") {
      if (has_attr(in, "checked")) add(name, attr_or(in, "value", "on"));
    } else if (type == "password") {
      add(name, account.password);
    } else if (!user_set && (type == "text" || type == "email")) {
      add(name, account.username);
      user_set = true;
    } else {
      add(name, attr_or(in, "value"));
    }
  }
  http_request post;
  post.method = "POST";
  const std::string here = page.final_url.empty() ? get.url : page.final_url;
  post.url = resolve_url(here, attr_or(form, "action")).value_or(here);
  post.body = body;
  post.referer = page.final_url;
  http_response res = http.fetch(post);
  if (!res.ok || res.status >= 400) {
    *err = "the login form at " + get.url + " failed: " + (res.ok ? "HTTP " + std::to_string(res.status) : res.error);
    return false;
  }
  html_document after(res.body);
  if (find_login_form(after)) {
    *err = "the site at " + base + " showed its login form again after signing in as " + account.username +
           " (wrong account for this site?)";
    return false;
  }
  return true;
}

namespace {

// A JavaScript string literal (JSON quoting is valid JavaScript).
std::string js_string(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Fills the login form of the page; "ok", or "no-form" when no form has a password field.
std::string fill_login_form_js(const site_account& a) {
  return "(() => {\n"
         "  const form = Array.from(document.forms).find(f => f.querySelector('input[type=password i]'));\n"
         "  if (!form) return 'no-form';\n"
         "  const set = (e, v) => { e.focus(); e.value = v; e.dispatchEvent(new Event('input', {bubbles: true}));\n"
         "                          e.dispatchEvent(new Event('change', {bubbles: true})); };\n"
         "  const user = Array.from(form.querySelectorAll('input')).find(e => {\n"
         "    const t = (e.getAttribute('type') || 'text').toLowerCase(); return t === 'text' || t === 'email'; });\n"
         "  if (user) set(user, " + js_string(a.username) + ");\n"
         "  set(form.querySelector('input[type=password i]'), " + js_string(a.password) + ");\n"
         "  return 'ok';\n"
         "})()";
}

const char* const k_submit_login_form_js =
    "(() => { const form = Array.from(document.forms).find(f => f.querySelector('input[type=password i]'));\n"
    "  const button = form.querySelector('button[type=submit i], input[type=submit i], button:not([type])');\n"
    "  if (form.requestSubmit) form.requestSubmit(button || undefined); else form.submit(); })()";

const char* const k_has_login_form_js =
    "Array.from(document.forms).some(f => f.querySelector('input[type=password i]')) ? 'yes' : 'no'";

}  // namespace

bool form_login_in_page(chromium_browser& b, const std::string& base_url, const site_account& account,
                        std::string* err) {
  std::string base = base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  const std::string url = base + account.login_path;
  browser_result opened = b.go_to(url);
  if (!opened.ok()) {
    *err = "cannot open the login page " + url + ": " + opened.error;
    return false;
  }
  if (opened.note.find("HTTP ") != std::string::npos) {
    *err = "cannot open the login page " + url + ": " + opened.note;
    return false;
  }
  std::string js_err;
  std::optional<std::string> filled = b.evaluate_js(fill_login_form_js(account), &js_err);
  if (!filled) {
    *err = "cannot fill the login form at " + url + ": " + js_err;
    return false;
  }
  if (*filled != "ok") {
    *err = url + " has no form with a password field (is it the site's login page?)";
    return false;
  }
  browser_result sent = b.run_js_as_input(k_submit_login_form_js);
  if (!sent.ok()) {
    *err = "the login form at " + url + " failed: " + sent.error;
    return false;
  }
  std::optional<std::string> again = b.evaluate_js(k_has_login_form_js, &js_err);
  if (!again || *again == "yes") {
    *err = "the site at " + base + " showed its login form again after signing in as " + account.username +
           " (wrong account for this site?)";
    return false;
  }
  return true;
}

}  // namespace kvarena
