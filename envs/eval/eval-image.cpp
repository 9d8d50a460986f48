// eval-image.cpp: see eval-image.h.
#include "eval/eval-image.h"

#include <fstream>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "browser/text/css-select.h"
#include "browser/text/html-document.h"
#include "browser/common/url-util.h"
#include "common/http-call.h"
#include "common/url-policy.h"
#include "eval/image-ssim.h"
#include "eval/judge-openai.h"

namespace kvarena {
namespace {

using json = nlohmann::json;

struct page_image {
  std::string bytes, mime;
  gray_image gray;
};

std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

// An image by http(s) URL; a local path or file:// URL only with allow_file_urls.
bool fetch_bytes(const std::string& where, bool allow_file_urls, std::string* bytes, std::string* err) {
  const std::string scheme = url_scheme(where);
  if (scheme == "http" || scheme == "https") {
    http_call_request req;
    req.url = where;
    http_call_response res = http_call(req);
    if (!res.ok || res.status != 200) {
      *err = where + ": " + (res.ok ? "HTTP " + std::to_string(res.status) : res.error);
      return false;
    }
    *bytes = std::move(res.body);
    return true;
  }
  if (!allow_file_urls || !(scheme.empty() || scheme == "file")) {
    *err = refused_url_reason(where, allow_file_urls);
    if (err->empty()) *err = "cannot open '" + where + "'";
    return false;
  }
  const std::string path = scheme == "file" ? percent_decode(parse_url(where).path, false) : where;
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    *err = "cannot read " + where;
    return false;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  *bytes = ss.str();
  return true;
}

// The src of every image the query's eval_image_class selects, made absolute.
std::vector<std::string> image_urls(page_probe& page, const std::string& cls, std::string* err) {
  html_document doc(page.page_html());
  std::vector<const GumboNode*> imgs;
  auto img_sel = css_selector_list::parse("img");
  if (cls.find_first_not_of(" \t") == std::string::npos) {
    for (const GumboNode* n : query_selector_all(doc.document(), *img_sel))
      if (!has_attr(n, "alt") || !attr_or(n, "alt").empty()) imgs.push_back(n);
  } else if (cls[0] == '.') {
    std::string why;
    auto sel = css_selector_list::parse(cls, &why);
    if (!sel) {
      *err = "eval_image_class '" + cls + "': " + why;
      return {};
    }
    for (const GumboNode* n : query_selector_all(doc.document(), *sel)) {
      if (tag_name(n) == "img") imgs.push_back(n);
      else
        for (const GumboNode* i : query_selector_all(n, *img_sel)) imgs.push_back(i);
    }
  } else {
    *err = "unknown eval_image_class '" + cls + "' (\"\" or a .class selector)";
    return {};
  }
  std::vector<std::string> out;
  const std::string here = page.current_url();
  for (const GumboNode* n : imgs) {
    const std::string src = attr_or(n, "src");
    if (!src.empty()) out.push_back(resolve_url(here, src).value_or(src));
  }
  return out;
}

std::string base64(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8 | (unsigned char)in[i + 2];
    out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], t[v & 63]};
  }
  if (i + 1 == in.size()) {
    unsigned v = (unsigned char)in[i] << 16;
    out += {t[v >> 18], t[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == in.size()) {
    unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8;
    out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], '='};
  }
  return out;
}

// One image and prompt through the VQA endpoint; the reply text ("" with *err on failure).
std::string ask_vqa(const image_eval_options& opt, const page_image& img, const std::string& prompt, std::string* err) {
  json content = json::array({{{"type", "text"}, {"text", prompt}},
                              {{"type", "image_url"},
                               {"image_url", {{"url", "data:" + img.mime + ";base64," + base64(img.bytes)}}}}});
  http_call_request req;
  req.method = "POST";
  req.url = chat_completions_url(opt.vqa_url);
  req.headers = {{"Content-Type", "application/json"}};
  req.body = json{{"model", opt.vqa_model},
                  {"messages", json::array({{{"role", "user"}, {"content", content}}})},
                  {"temperature", 0},
                  {"max_tokens", 32}}
                 .dump();
  http_call_response res = http_call(req);
  if (!res.ok || res.status != 200) {
    *err = "VQA endpoint " + req.url + ": " + (res.ok ? "HTTP " + std::to_string(res.status) : res.error);
    return "";
  }
  json j = json::parse(res.body, nullptr, false);
  try {
    return j.at("choices").at(0).at("message").at("content").get<std::string>();
  } catch (const std::exception&) {
    *err = "VQA endpoint " + req.url + " answered without choices[0].message.content";
    return "";
  }
}

}  // namespace

double score_page_image_query(const task_eval& e, page_probe* page, const image_eval_options& opt, bool* unsupported,
                              std::string* detail) {
  *unsupported = false;
  auto it = e.extra.find("page_image_query");
  json queries = it == e.extra.end() ? json() : json::parse(it->second, nullptr, false);
  if (!queries.is_array()) {
    *unsupported = true;
    *detail = "page_image_query unsupported: eval.page_image_query is missing or not a list of queries";
    return 0;
  }
  for (const json& q : queries)
    if (q.contains("eval_vqa") && !q["eval_vqa"].empty() && opt.vqa_url.empty()) {
      *unsupported = true;
      *detail = "page_image_query eval_vqa unsupported: it needs a vision-language model: give --vqa-url URL";
      return 0;
    }
  if (!page) {
    *detail = "no page to evaluate (the session has no browser page)";
    return 0;
  }
  double score = 1;
  for (size_t qi = 0; qi < queries.size(); ++qi) {
    const json& q = queries[qi];
    const std::string tag = "query " + std::to_string(qi) + ": ";
    const std::string url = q.value("eval_image_url", "last");
    std::string err;
    if (url != "last" && !page->navigate(url, &err)) {
      *detail += tag + "cannot open " + url + ": " + err + "; ";
      return 0;
    }
    std::vector<page_image> images;
    for (const std::string& src : image_urls(*page, q.value("eval_image_class", ""), &err)) {
      page_image img;
      std::string why;
      if (!fetch_bytes(src, opt.allow_file_urls, &img.bytes, &why) || !decode_gray_image(img.bytes, &img.gray, &why)) continue;
      img.mime = img.bytes.rfind("\x89PNG", 0) == 0 ? "image/png" : "image/jpeg";
      images.push_back(std::move(img));
    }
    if (images.empty()) {
      *detail += tag + (err.empty() ? "no image on the page could be read" : err) + "; ";
      return 0;
    }
    for (const json& qa : q.value("eval_vqa", json::array())) {
      const std::string question = qa.value("question", ""), answer = lower(qa.value("answer", ""));
      bool any = false;
      for (const page_image& img : images) {
        std::string why;
        std::string reply = ask_vqa(opt, img, "Q: " + question + " A:", &why);
        if (!why.empty()) *detail += tag + why + "; ";
        if (lower(reply).find(answer) != std::string::npos) any = true;
      }
      if (!any) *detail += tag + "no image answered '" + answer + "' to '" + question + "'; ";
      score *= any ? 1 : 0;
    }
    if (q.contains("eval_fuzzy_image_match")) {
      const json threshold_json = q.value("ssim_threshold", json(0.8));
      if (!threshold_json.is_number() || threshold_json.get<double>() < -1 || threshold_json.get<double>() > 1) {
        *detail += tag + "ssim_threshold must be a number in -1..1 (SSIM's range), not " + threshold_json.dump() + "; ";
        return 0;
      }
      const double threshold = threshold_json.get<double>();
      const std::string refs = q["eval_fuzzy_image_match"].get<std::string>();
      bool found = false;
      double best = -1;
      for (size_t at = 0; at <= refs.size() && !found;) {
        size_t sep = refs.find(" |OR| ", at);
        const std::string ref = refs.substr(at, sep == std::string::npos ? std::string::npos : sep - at);
        at = sep == std::string::npos ? refs.size() + 1 : sep + 6;
        page_image want;
        std::string why;
        if (!fetch_bytes(ref, opt.allow_file_urls, &want.bytes, &why) || !decode_gray_image(want.bytes, &want.gray, &why)) {
          *detail += tag + "reference image " + why + "; ";
          continue;
        }
        for (const page_image& img : images) {
          const double s = image_ssim(img.gray, want.gray);
          best = std::max(best, s);
          if (s > threshold) found = true;
        }
      }
      if (!found) *detail += tag + "best SSIM " + std::to_string(best) + " <= " + std::to_string(threshold) + "; ";
      score *= found ? 1 : 0;
    }
  }
  return score;
}

}  // namespace kvarena
