// url-policy.h: which URLs kvarena opens. Tasks, pages and request bodies come from
// elsewhere (task files from the internet, agents driving the env API), so every place
// that opens a URL (a page, a link, a form submission, a program_html target, an image
// the evaluator downloads) asks this one helper first: http:// and https:// only, plus
// file:// (and local paths) when the user gave --allow-file-urls. about:blank is the
// browsers' own business and is not decided here.
#pragma once
#include <string>
#include <string_view>

namespace kvarena {

// "" when `url` may be opened; else the error to show: what was refused and what is
// allowed ("cannot open 'file:///etc/passwd': only http:// and https:// URLs are opened;
// file:// URLs need --allow-file-urls").
std::string refused_url_reason(std::string_view url, bool allow_file_urls);

inline bool url_allowed(std::string_view url, bool allow_file_urls) {
  return refused_url_reason(url, allow_file_urls).empty();
}

// libcurl's CURLOPT_PROTOCOLS_STR for the same rule: "http,https" or "http,https,file".
const char* curl_protocols(bool allow_file_urls);

}  // namespace kvarena
