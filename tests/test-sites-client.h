// test-sites-client.h: what the site tests (test-sites-shopping, test-sites-forum) share:
// a libcurl client that keeps its cookies and connection like one browser, a server
// fixture on loopback (port 0) with a fresh tenant per test, and small page scrapers.
#pragma once
#include <curl/curl.h>

#include <cstdint>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "sites/site-server.h"
#include "test-util.h"

namespace kvarena::test {

struct reply {
  long status = 0;
  std::string body;
  std::string headers;                                 // raw header block(s)
  std::string header(const std::string& name) const {  // first match, case-insensitive
    std::smatch m;
    std::regex re("(^|\\n)" + name + ":\\s*([^\\r\\n]*)", std::regex::icase);
    return std::regex_search(headers, m, re) ? m[2].str() : "";
  }
  bool has(const std::string& s) const { return body.find(s) != std::string::npos; }
};

inline size_t curl_append(char* p, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(p, size * n);
  return size * n;
}

// Does not follow redirects, so tests see each 303 and its Location.
class site_client {
 public:
  site_client() : h_(curl_easy_init()) { curl_easy_setopt(h_, CURLOPT_COOKIEFILE, ""); }
  ~site_client() { curl_easy_cleanup(h_); }
  site_client(const site_client&) = delete;
  site_client& operator=(const site_client&) = delete;

  reply get(const std::string& url) { return send(url, nullptr); }
  reply post(const std::string& url, const std::vector<std::pair<std::string, std::string>>& form) {
    std::string body;
    for (const auto& [k, v] : form) {
      if (!body.empty()) body += '&';
      body += kvarena::sites::url_encode(k) + "=" + kvarena::sites::url_encode(v);
    }
    return send(url, &body);
  }

 private:
  reply send(const std::string& url, const std::string* body) {
    reply r;
    curl_easy_setopt(h_, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h_, CURLOPT_HTTPGET, 1L);
    if (body) {
      curl_easy_setopt(h_, CURLOPT_POSTFIELDS, body->c_str());
      curl_easy_setopt(h_, CURLOPT_POSTFIELDSIZE, long(body->size()));
    }
    curl_easy_setopt(h_, CURLOPT_WRITEFUNCTION, curl_append);
    curl_easy_setopt(h_, CURLOPT_WRITEDATA, &r.body);
    curl_easy_setopt(h_, CURLOPT_HEADERFUNCTION, curl_append);
    curl_easy_setopt(h_, CURLOPT_HEADERDATA, &r.headers);
    curl_easy_setopt(h_, CURLOPT_TIMEOUT, 20L);
    CURLcode rc = curl_easy_perform(h_);
    EXPECT_EQ(rc, CURLE_OK) << url << ": " << curl_easy_strerror(rc);
    curl_easy_getinfo(h_, CURLINFO_RESPONSE_CODE, &r.status);
    return r;
  }
  CURL* h_;
};

// One sites_server (seed 7) for a whole test suite; each test takes a fresh tenant.
class site_fixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    kvarena::sites::sites_options opt;
    opt.seed = 7;
    opt.http.threads = 4;
    server_ = new kvarena::sites::sites_server(opt);
    server_->start();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static kvarena::sites::site_store& store() { return server_->store(); }
  // A fresh tenant; returns the base URL of `site` in it.
  static std::string fresh(const std::string& site, std::string* tenant_out = nullptr) {
    std::string t = store().create_tenant();
    if (tenant_out) *tenant_out = t;
    return server_->site_base_url(t, site);
  }
  static void login(site_client& c, const std::string& base, const std::string& user) {
    auto r = c.post(base + "/login", {{"username", user}, {"password", "password"}, {"next", "/"}});
    ASSERT_EQ(r.status, 303) << "login as " << user << ": " << r.body.substr(0, 400);
  }
  // The absolute URL of the page's "Next page" link, or "" on the last page.
  static std::string next_page_url(const std::string& body) {
    static const std::regex next_re("<a href=\"([^\"]+)\">Next page</a>");
    std::smatch m;
    if (!std::regex_search(body, m, next_re)) return "";
    return server_->base_url() + std::regex_replace(m[1].str(), std::regex("&amp;"), "&");
  }
  static inline kvarena::sites::sites_server* server_ = nullptr;
};

// Numbers captured by `link_re` (one group) inside the first <tag class="cls"> ... </tag>.
inline std::vector<int64_t> ids_in(const std::string& page, const std::string& open_tag, const std::string& close_tag,
                                   const std::string& link_re) {
  std::vector<int64_t> ids;
  size_t begin = page.find(open_tag);
  if (begin == std::string::npos) return ids;
  size_t end = page.find(close_tag, begin);
  std::string part = page.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  std::regex re(link_re);
  for (std::sregex_iterator it(part.begin(), part.end(), re), e; it != e; ++it) ids.push_back(std::stoll((*it)[1]));
  return ids;
}

// Every input/select/textarea with an id has a <label for=id>; returns the ids that lack one.
inline std::vector<std::string> unlabelled_controls(const std::string& page) {
  std::vector<std::string> missing;
  std::regex control("<(input|select|textarea) [^>]*id=\"([^\"]+)\"");
  for (std::sregex_iterator it(page.begin(), page.end(), control), e; it != e; ++it)
    if (page.find("<label for=\"" + (*it)[2].str() + "\">") == std::string::npos) missing.push_back((*it)[2]);
  return missing;
}

}  // namespace kvarena::test
