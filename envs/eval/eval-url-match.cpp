// eval-url-match.cpp: see eval-url-match.h.
#include "eval/eval-url-match.h"

#include "eval/eval-text.h"

namespace kvarena {

std::string canonical_url(std::string_view url) {
  while (!url.empty() && (url.front() == ' ' || url.front() == '\t' || url.front() == '\n' || url.front() == '\r'))
    url.remove_prefix(1);
  while (!url.empty() && (url.back() == ' ' || url.back() == '\t' || url.back() == '\n' || url.back() == '\r'))
    url.remove_suffix(1);
  std::string out(url);
  size_t scheme = out.find("://");
  size_t host = scheme == std::string::npos ? 0 : scheme + 3;
  size_t host_end = out.find_first_of("/?#", host);
  if (host_end == std::string::npos) host_end = out.size();
  size_t at = out.rfind('@', host_end);  // user:pass@host
  if (at != std::string::npos && at >= host) host = at + 1;
  size_t name_end = out.find(':', host);
  if (name_end == std::string::npos || name_end > host_end) name_end = host_end;
  std::string name = out.substr(host, name_end - host);
  for (char& c : name)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  if (name == "localhost") out.replace(host, name_end - host, "127.0.0.1");
  if (!out.empty() && out.back() == '/') out.pop_back();
  return out;
}

double score_url_match(const task_eval& e, const std::string& page_url, std::string* detail) {
  const std::string rule = e.url_note.value_or("EXACT");
  if (rule != "EXACT" && rule != "GOLD in PRED") {
    *detail = "unknown url_note " + quote_for_detail(rule) + " (valid: EXACT, GOLD in PRED)";
    return 0;
  }
  if (!e.reference_url || e.reference_url->empty()) {
    *detail = "no reference_url to compare with";
    return 0;
  }
  const std::string pred = canonical_url(page_url);
  for (const std::string& alt : split_on(*e.reference_url, " |OR| ")) {
    const std::string ref = canonical_url(alt);
    if (ref.empty()) continue;
    bool ok = rule == "EXACT" ? pred == ref : pred.find(ref) != std::string::npos;
    if (ok) {
      *detail = "page URL " + quote_for_detail(pred, 200) + (rule == "EXACT" ? " equals " : " contains ") +
                quote_for_detail(ref, 200);
      return 1;
    }
  }
  *detail = "page URL " + quote_for_detail(pred, 200) + (rule == "EXACT" ? " equals none of " : " contains none of ") +
            quote_for_detail(*e.reference_url, 300) + " (" + rule + ")";
  return 0;
}

}  // namespace kvarena
