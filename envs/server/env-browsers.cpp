// env-browsers.cpp: the text and chromium backends behind session_browser (see
// env-browsers.h).
#include "server/env-browsers.h"

#include "browser/chromium/chromium-browser-probe.h"
#include "browser/chromium/som-draw.h"
#include "browser/chromium/som-list.h"
#include "browser/text/text-browser-probe.h"
#include "server/env-api.h"

namespace kvarena {
namespace {

class text_session_browser final : public session_browser {
 public:
  explicit text_session_browser(text_browser_options o) : b_(std::move(o)) {}
  browser& get() override { return b_; }
  bool post_form(const std::string& url, const std::string& body, long* status, std::string* final_url,
                 std::string* error) override {
    http_request req;
    req.method = "POST";
    req.url = url;
    req.body = body;
    http_response res = b_.http().fetch(req);
    if (!res.ok) {
      *error = res.error;
      return false;
    }
    *status = res.status;
    *final_url = res.final_url;
    return true;
  }
  std::unique_ptr<page_probe> probe(const std::set<std::string>&) override {  // runs no script
    return std::make_unique<text_browser_probe>(b_);
  }
  bool site_login(const std::string& base_url, const site_account& account, std::string* err) override {
    return form_login(b_.http(), base_url, account, err);
  }
  som_view som(std::string* error) override {
    *error = "the text browser renders nothing, so it has no screenshot; create the session with \"browser\": "
             "\"chromium\" for Set-of-Marks";
    return {};
  }
  std::string screenshot(std::string* error) override {
    *error = "the text browser renders nothing, so it has no screenshot; create the session with \"browser\": "
             "\"chromium\"";
    return {};
  }

 private:
  text_browser b_;
};

class chromium_session_browser final : public session_browser {
 public:
  chromium_session_browser(std::shared_ptr<chromium_process> p, chromium_browser_options o) : b_(std::move(p), o) {}
  browser& get() override { return b_; }
  bool post_form(const std::string& url, const std::string& body, long* status, std::string* final_url,
                 std::string* error) override {
    return b_.post_form(url, body, status, final_url, error);
  }
  std::unique_ptr<page_probe> probe(const std::set<std::string>& script_origins) override {
    return std::make_unique<chromium_browser_probe>(b_, script_origins);
  }
  bool site_login(const std::string& base_url, const site_account& account, std::string* err) override {
    return form_login_in_page(b_, base_url, account, err);
  }
  std::string screenshot(std::string* error) override { return b_.screenshot_png(error); }
  som_view som(std::string* error) override {
    std::string png = b_.screenshot_png(error);
    if (png.empty()) return {};
    std::vector<som_mark> marks;
    std::vector<som_item> items;
    for (const chromium_browser::element_box& e : b_.som_elements(error)) {
      if (e.interactive) marks.push_back({e.id, e.x, e.y, e.width, e.height});
      items.push_back({e.id, e.interactive, e.tag, e.name});
    }
    som_view v;
    v.png = draw_som_marks(png, marks, error);
    if (!v.png.empty()) v.text = som_list_text(items);
    return v;
  }

 private:
  chromium_browser b_;
};

}  // namespace

std::vector<std::string> env_browsers::available() const {
  std::vector<std::string> out = {"text"};
  if (chromium_available(opt_.chromium.executable)) out.push_back("chromium");
  return out;
}

std::unique_ptr<session_browser> env_browsers::make(const std::string& name, int viewport_height_px) {
  if (name == "text") {
    text_browser_options o = opt_.text;
    if (viewport_height_px > 0) o.viewport_height_px = viewport_height_px;
    return std::make_unique<text_session_browser>(o);
  }
  if (name != "chromium")
    throw env_api_error(422, "browser '" + name + "' is unknown: use \"text\" or \"chromium\"");
  if (!chromium_available(opt_.chromium.executable))
    throw env_api_error(400, "browser 'chromium' is not available: " + opt_.chromium.executable +
                                 " is missing; install Debian's chromium package (scripts/setup.sh) or use "
                                 "\"browser\": \"text\"");
  chromium_browser_options o = opt_.chromium_browser;
  if (viewport_height_px > 0) o.viewport_height_px = viewport_height_px;
  try {
    return std::make_unique<chromium_session_browser>(host_.acquire(), o);
  } catch (const env_api_error&) {
    throw;
  } catch (const std::exception& e) {
    // The process may have died between acquire() and the connection: one more try.
    try {
      return std::make_unique<chromium_session_browser>(host_.acquire(), o);
    } catch (const std::exception&) {
      throw env_api_error(502, std::string("cannot start a Chromium browser: ") + e.what());
    }
  }
}

}  // namespace kvarena
