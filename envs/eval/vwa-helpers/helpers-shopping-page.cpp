// helpers-shopping-page.cpp: the shopping helpers that read the current page (a Magento
// order or product page, see site-helpers-vwa.h). Where VisualWebArena's JavaScript
// throws, the helper gives what VWA's catch gives (0 or "").
#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "browser/text/html-document.h"
#include "helper-dom.h"
#include "site-helpers-vwa.h"

namespace kvarena::sites {
namespace {

struct ordered_product {
  std::map<std::string, std::string> cells;    // td class token -> its text ("sku" -> "B0..")
  std::map<std::string, std::string> options;  // "Size" -> "12 Count"
};

std::string arg(const eval_helper_call& c, size_t i) { return i < c.args.size() ? c.args[i] : std::string(); }

std::string trim(std::string s) {
  const char* ws = " \t\n\r";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

std::string lower(std::string s) {
  for (char& ch : s)
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  return s;
}

std::vector<std::string> split(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  size_t at = 0;
  for (size_t f; (f = s.find(sep, at)) != std::string::npos; at = f + sep.size()) out.push_back(s.substr(at, f - at));
  out.push_back(s.substr(at));
  return out;
}

// Every product of an order page: one <tbody> of #my-orders-table each, its cells keyed
// by their second class ("col sku" -> "sku"), the name cell's <dl> read as option pairs.
// Throws when the page has no order table (VWA's JavaScript throws too).
std::vector<ordered_product> order_products(page_probe& page) {
  helper_dom dom(page);
  const GumboNode* table = dom.first("#my-orders-table");
  if (!table) throw std::runtime_error("no #my-orders-table on the page");
  std::vector<ordered_product> out;
  for (const GumboNode* body : dom.all("tbody", table)) {
    ordered_product p;
    for (const GumboNode* td : dom.all("td", body)) {
      const std::string key = class_token(td, 1);
      p.cells[key] = outer_text(td);
      if (key != "name") continue;
      if (const GumboNode* dl = dom.first("dl", td)) {
        std::vector<const GumboNode*> kids = element_children(dl);
        for (size_t i = 0; i + 1 < kids.size(); i += 2) p.options[outer_text(kids[i])] = outer_text(kids[i + 1]);
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::string cell(const ordered_product& p, const std::string& key) {
  auto it = p.cells.find(key);
  if (it == p.cells.end()) throw std::runtime_error("no '" + key + "' cell");
  return it->second;
}

std::optional<std::string> name_list(const eval_helper_call& c) {
  try {
    std::string out;
    for (const ordered_product& p : order_products(c.page)) out += (out.empty() ? "" : " |OR| ") + cell(p, "name");
    return out;
  } catch (const std::exception&) {
    return std::string();
  }
}

// "Ordered2" -> 2 (VWA: int(qty[7:])); 0 when the SKU is not on the page.
std::optional<std::string> quantity(const eval_helper_call& c) {
  try {
    const std::string want = arg(c, 1);
    std::vector<std::string> skus = want.find("|OR|") != std::string::npos ? split(want, " |OR| ") : std::vector{want};
    for (const ordered_product& p : order_products(c.page)) {
      if (std::find(skus.begin(), skus.end(), trim(cell(p, "sku"))) == skus.end()) continue;
      std::string qty = trim(cell(p, "qty"));
      // Magento: "Ordered2" (VWA: int(qty[7:])); the local shopping site: "2".
      std::string rest = trim(qty.rfind("Ordered", 0) == 0 ? qty.substr(7) : qty);
      auto n = js_parse_int(rest);
      if (!n || std::to_string(*n) != rest) return "0";  // int() would raise: VWA's catch gives 0
      return std::to_string(*n);
    }
  } catch (const std::exception&) {
  }
  return "0";
}

std::optional<std::string> option(const eval_helper_call& c) {
  try {
    for (const ordered_product& p : order_products(c.page))
      if (trim(cell(p, "sku")) == arg(c, 1)) {
        auto it = p.options.find(arg(c, 2));
        return it == p.options.end() ? "" : it->second;
      }
  } catch (const std::exception&) {
  }
  return "";
}

// Rows of the product details table whose label contains one of the terms.
std::optional<std::string> attributes(const eval_helper_call& c) {
  try {
    helper_dom dom(c.page);
    const GumboNode* body = dom.first("#productDetails_detailBullets_sections1 > tbody");
    if (!body) return "";
    std::vector<std::string> terms = split(lower(arg(c, 1)), " |or| ");
    std::string out;
    for (const GumboNode* row : element_children(body)) {
      std::vector<const GumboNode*> cells = element_children(row);
      if (cells.empty()) return "";  // x.children[0] undefined: VWA's catch
      const std::string label = lower(outer_text(cells[0]));
      if (!std::any_of(terms.begin(), terms.end(), [&](const std::string& t) { return label.find(t) != std::string::npos; }))
        continue;
      if (cells.size() < 2) return "";
      out += (out.empty() ? "" : ", ") + outer_text(cells[1]);
    }
    return out;
  } catch (const std::exception&) {
    return "";
  }
}

constexpr const char* k_price_selector =
    "#maincontent > div.columns > div > div.product-info-main > div.product-info-price > "
    "div.price-box.price-final_price > span > span";

std::optional<std::string> price(const eval_helper_call& c) {
  try {
    helper_dom dom(c.page);
    const GumboNode* n = dom.first(k_price_selector);
    if (!n) return "0";
    std::string t = outer_text(n);
    auto v = js_parse_float(t.size() > 0 ? t.substr(1) : t);  // "$24.50" -> 24.5
    return number_text(v && *v != 0 ? *v : 0);
  } catch (const std::exception&) {
    return "0";
  }
}

std::optional<std::string> num_reviews(const eval_helper_call& c) {
  try {
    helper_dom dom(c.page);
    const GumboNode* n = dom.first("#tab-label-reviews-title");
    if (!n) return "0";
    std::vector<std::string> words = split(outer_text(n), " ");  // "Reviews 12"
    auto v = words.size() > 1 ? js_parse_int(words[1]) : std::nullopt;
    return std::to_string(v && *v != 0 ? *v : 0);
  } catch (const std::exception&) {
    return "0";
  }
}

std::optional<std::string> rating_percent(const eval_helper_call& c) {
  try {
    helper_dom dom(c.page);
    const GumboNode* n = dom.first(".rating-result");
    if (!n) return "0";
    std::string title = attr_or(n, "title");
    if (size_t pct = title.find('%'); pct != std::string::npos) title.erase(pct, 1);  // JS replace: the first
    auto v = js_parse_float(title);
    return number_text(v && *v != 0 ? *v : 0);
  } catch (const std::exception&) {
    return "0";
  }
}

}  // namespace

// Every product of the order page as JSON, VWA's list of dicts ([] when none).
std::optional<std::string> all_products(const eval_helper_call& c) {
  nlohmann::json out = nlohmann::json::array();
  try {
    for (const ordered_product& p : order_products(c.page)) {
      nlohmann::json o(p.cells);
      if (!p.options.empty()) o["options"] = p.options;
      out.push_back(o);
    }
  } catch (const std::exception&) {
  }
  return out.dump();
}

void register_shopping_page_helpers(eval_helper_registry& r) {
  r.add("shopping_get_all_product_order", all_products);
  r.add("shopping_get_order_product_name_list", name_list);
  r.add("shopping_get_order_product_quantity", quantity);
  r.add("shopping_get_order_product_option", option);
  r.add("shopping_get_product_attributes", attributes);
  r.add("shopping_get_product_price", price);
  r.add("shopping_get_num_reviews", num_reviews);
  r.add("shopping_get_rating_as_percentage", rating_percent);
}

}  // namespace kvarena::sites
