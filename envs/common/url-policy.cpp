// url-policy.cpp: see url-policy.h.
#include "common/url-policy.h"

#include "browser/common/url-util.h"

namespace kvarena {

std::string refused_url_reason(std::string_view url, bool allow_file_urls) {
  const std::string scheme = url_scheme(url);
  if (scheme == "http" || scheme == "https") return "";
  if (scheme == "file" && allow_file_urls) return "";
  std::string shown(url.substr(0, 200));
  if (url.size() > 200) shown += "...";
  if (allow_file_urls) return "cannot open '" + shown + "': only http://, https:// and file:// URLs are opened";
  return "cannot open '" + shown + "': only http:// and https:// URLs are opened" +
         (scheme == "file" || scheme.empty() ? "; file:// URLs and local paths need --allow-file-urls" : "");
}

const char* curl_protocols(bool allow_file_urls) { return allow_file_urls ? "http,https,file" : "http,https"; }

}  // namespace kvarena
