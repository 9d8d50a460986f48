// chromium-browser-som.cpp: the chromium backend's screenshot (Page.captureScreenshot) and
// what Set-of-Marks shows of the current observation (see chromium-browser.h); drawing the
// marks is som-draw.h's, the list som-list.h's.
#include <boost/beast/core/detail/base64.hpp>

#include <initializer_list>

#include "chromium-browser-page.h"

namespace kvarena {

using json = nlohmann::json;

std::string chromium_browser::screenshot_png(std::string* error) {
  std::string png;
  browser_result r = guarded("screenshot", [&]() -> browser_result {
    json s = cdp_->call("Page.captureScreenshot", {{"format", "png"}}, current().session_id, options_.command_timeout);
    std::string b64 = s.value("data", std::string());
    png.resize(boost::beast::detail::base64::decoded_size(b64.size()));
    auto [written, read] = boost::beast::detail::base64::decode(png.data(), b64.data(), b64.size());
    png.resize(written);
    return {};
  });
  if (!r.ok() && error) *error = r.error;
  return png;
}

std::vector<chromium_browser::element_box> chromium_browser::som_elements(std::string* error) {
  static const std::initializer_list<const char*> k_interactive = {
      "link", "button", "textbox", "searchbox", "combobox", "listbox", "checkbox", "radio", "option",
      "menuitem", "tab", "switch", "slider", "spinbutton", "DisclosureTriangle"};
  std::vector<element_box> out;
  browser_result r = guarded("som_elements", [&]() -> browser_result {
    snapshot& s = current_snapshot();
    for (int64_t id : s.ids_in_view) {
      const chromium_node& n = s.nodes.at(id);
      bool interactive = false;
      for (const char* role : k_interactive) interactive = interactive || n.role == role;
      auto box = s.boxes.find(n.backend_id);
      if (box == s.boxes.end() || (!interactive && n.role != "StaticText")) continue;
      const layout_box& b = box->second;
      out.push_back({id, n.role, n.name, b.tag, b.x, b.y - s.scroll_y, b.width, b.height, interactive});
    }
    return {};
  });
  if (!r.ok() && error) *error = r.error;
  return out;
}

}  // namespace kvarena
