// env-browsers.h: the browser backends an env session can ask for by name ("text",
// "chromium"), behind one small interface: the browser itself, logging in before the task,
// and the evaluators' probe. One env_browsers belongs to an env server; it owns the
// Chromium process that every chromium session shares (a browser context each), started
// on the first chromium session and restarted for new sessions after it died.
// Thread-safe.
#pragma once
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "browser/common/browser.h"
#include "browser/chromium/chromium-browser.h"
#include "browser/chromium/chromium-process.h"
#include "browser/text/text-browser.h"
#include "eval/page-probe.h"
#include "server/site-login.h"

namespace kvarena {

class session_browser {
 public:
  virtual ~session_browser() = default;
  virtual browser& get() = 0;
  // POSTs a login form from this browser (its cookie jar); false with *error when the
  // site cannot be reached. *status and *final_url describe the answer.
  virtual bool post_form(const std::string& url, const std::string& body, long* status, std::string* final_url,
                         std::string* error) = 0;
  // The evaluators' view of the page; `script_origins`: where the task's JavaScript
  // (prep actions, locators) may run (the origins of its sites; backends that run scripts).
  virtual std::unique_ptr<page_probe> probe(const std::set<std::string>& script_origins) = 0;
  // Logs in on a site given by URL through its own login form (site-login.h), so the
  // session cookie lands in this browser; false with *err saying what failed.
  virtual bool site_login(const std::string& base_url, const site_account& account, std::string* err) = 0;
  // Set-of-Marks of the current viewport: the PNG with the interactive elements marked
  // (som-draw.h) and VWA's list of them (som-list.h), made from one element list so the
  // numbers drawn are the ids listed. Only backends that render can; png "" with *error.
  struct som_view {
    std::string png;
    std::string text;
  };
  virtual som_view som(std::string* error) = 0;
  // The current viewport as a PNG, unmarked ("observation": "screenshot"); "" with *error
  // for backends that do not render.
  virtual std::string screenshot(std::string* error) = 0;
};

struct env_browsers_options {
  text_browser_options text;
  chromium_options chromium;
  chromium_browser_options chromium_browser;
};

class env_browsers {
 public:
  explicit env_browsers(env_browsers_options opt) : opt_(std::move(opt)), host_(opt_.chromium) {}

  // "text", and "chromium" when its executable is installed.
  std::vector<std::string> available() const;
  // A browser of backend `name` with a viewport `viewport_height_px` high (0: the default).
  // Throws env_api_error: 422 for an unknown name, 400 when chromium is asked for but not
  // installed, 502 when Chromium will not start.
  std::unique_ptr<session_browser> make(const std::string& name, int viewport_height_px);

  chromium_host& host() { return host_; }

 private:
  env_browsers_options opt_;
  chromium_host host_;
};

}  // namespace kvarena
