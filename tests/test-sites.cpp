// test-sites.cpp: the local web sites (envs/sites/) over HTTP: the server
// on loopback (keep-alive, 4xx for bad requests, limits, timeouts), tenants (determinism,
// isolation, reset), and the classifieds site end to end through libcurl, with search
// results checked against SQL written here independently of the site's query code. The
// text helpers (URLs, HTML, router) are in test-sites-text.cpp.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <regex>
#include <thread>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include "common/text-encode.h"
#include "sites/html.h"
#include "sites/http-router.h"
#include "sites/http-server.h"
#include "sites/site-classifieds.h"
#include "sites/site-server.h"
#include "test-util.h"

using namespace kvarena::sites;
using json = nlohmann::json;

namespace {

// ---- clients -------------------------------------------------------------------------

struct reply {
  long status = 0;
  std::string body;
  std::string headers;  // raw header block(s)
  long new_connections = 0;
  std::string header(const std::string& name) const {  // first match, case-insensitive
    std::smatch m;
    std::regex re("(^|\\n)" + name + ":\\s*([^\\r\\n]*)", std::regex::icase);
    return std::regex_search(headers, m, re) ? m[2].str() : "";
  }
};

size_t append_cb(char* p, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(p, size * n);
  return size * n;
}

// One libcurl handle: keeps its connection alive and its cookies, like one browser.
class client {
 public:
  client() : h_(curl_easy_init()) { curl_easy_setopt(h_, CURLOPT_COOKIEFILE, ""); }
  ~client() { curl_easy_cleanup(h_); }
  reply get(const std::string& url) { return send("GET", url, nullptr); }
  reply post(const std::string& url, const std::vector<std::pair<std::string, std::string>>& form) {
    std::string body;
    for (const auto& [k, v] : form) {
      if (!body.empty()) body += '&';
      body += url_encode(k) + "=" + url_encode(v);
    }
    return send("POST", url, &body);
  }
  reply send(const std::string& method, const std::string& url, const std::string* body) {
    reply r;
    curl_easy_setopt(h_, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h_, CURLOPT_CUSTOMREQUEST, method == "GET" || method == "POST" ? nullptr : method.c_str());
    curl_easy_setopt(h_, CURLOPT_HTTPGET, 1L);
    if (body) {
      curl_easy_setopt(h_, CURLOPT_POSTFIELDS, body->c_str());
      curl_easy_setopt(h_, CURLOPT_POSTFIELDSIZE, long(body->size()));
    }
    curl_easy_setopt(h_, CURLOPT_NOBODY, method == "HEAD" ? 1L : 0L);
    curl_easy_setopt(h_, CURLOPT_WRITEFUNCTION, append_cb);
    curl_easy_setopt(h_, CURLOPT_WRITEDATA, &r.body);
    curl_easy_setopt(h_, CURLOPT_HEADERFUNCTION, append_cb);
    curl_easy_setopt(h_, CURLOPT_HEADERDATA, &r.headers);
    curl_easy_setopt(h_, CURLOPT_TIMEOUT, 20L);
    CURLcode rc = curl_easy_perform(h_);
    EXPECT_EQ(rc, CURLE_OK) << method << " " << url << ": " << curl_easy_strerror(rc);
    curl_easy_getinfo(h_, CURLINFO_RESPONSE_CODE, &r.status);
    curl_easy_getinfo(h_, CURLINFO_NUM_CONNECTS, &r.new_connections);
    return r;
  }

 private:
  CURL* h_;
};

// Raw bytes over a socket, for what curl refuses to send; returns what the server sent
// until it closed the connection (or the timeout passed).
std::string raw_exchange(uint16_t port, const std::string& request, int timeout_ms = 5000) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may close early (e.g. after a 413)
    sent += size_t(n);
  }
  std::string out;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  char buf[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, size_t(n));
  }
  close(fd);
  return out;
}

int status_of(const std::string& raw) {  // "HTTP/1.1 400 Bad Request" -> 400
  return raw.size() > 12 && raw.rfind("HTTP/1.1 ", 0) == 0 ? std::stoi(raw.substr(9, 3)) : 0;
}

// Ids of listings in a results list, in page order.
std::vector<int64_t> result_ids(const std::string& page) {
  std::vector<int64_t> ids;
  size_t begin = page.find("<ol class=\"results\">");
  if (begin == std::string::npos) return ids;
  std::string list = page.substr(begin, page.find("</ol>", begin) - begin);
  std::regex re("/item/([0-9]+)\"");
  for (std::sregex_iterator it(list.begin(), list.end(), re), end; it != end; ++it) ids.push_back(std::stoll((*it)[1]));
  return ids;
}

// ---- the shared server -----------------------------------------------------------------

class SitesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    sites_options opt;
    opt.seed = 7;
    opt.http.threads = 4;
    server_ = new sites_server(opt);
    server_->start();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static site_store& store() { return server_->store(); }
  // A fresh tenant's classifieds base URL.
  static std::string fresh_classifieds(std::string* tenant_out = nullptr) {
    std::string t = store().create_tenant();
    if (tenant_out) *tenant_out = t;
    return server_->site_base_url(t, "classifieds");
  }
  static int64_t count(const std::string& tenant, const std::string& sql, std::vector<sql_value> params = {}) {
    return store().query(tenant, "classifieds", sql, params)[0].begin()->get<int64_t>();
  }
  static void login(client& c, const std::string& base, const std::string& user = "blake.sullivan") {
    auto r = c.post(base + "/login", {{"username", user}, {"password", "password"}, {"next", "/"}});
    ASSERT_EQ(r.status, 303) << r.body;
  }
  static inline sites_server* server_ = nullptr;
};

}  // namespace

// ---- HTTP server ----------------------------------------------------------------------

TEST(SitesServer, TimeoutsLimitsAndHandlerErrors) {
  http_server_options opt;
  opt.io_timeout = std::chrono::milliseconds(300);
  opt.body_limit_bytes = 1024;
  http_server s(opt, [](const http_request& req) {
    if (req.path == "/throw") throw std::runtime_error("boom");
    return http_response::text("echo " + req.form.get("v"));
  });
  s.start();
  ASSERT_NE(s.port(), 0);
  EXPECT_EQ(s.base_url(), "http://127.0.0.1:" + std::to_string(s.port()));

  // A slow client that never finishes its headers is disconnected after the deadline.
  auto t0 = std::chrono::steady_clock::now();
  std::string got = raw_exchange(s.port(), "GET / HTTP/1.1\r\nHost: x\r\n", 5000);
  double waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(got, "");
  EXPECT_LT(waited_s, 4.0);

  std::string big(2000, 'x');
  std::string r413 = raw_exchange(s.port(), "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: " +
                                                std::to_string(big.size()) + "\r\n\r\n" + big);
  EXPECT_EQ(status_of(r413), 413) << r413;
  EXPECT_EQ(status_of(raw_exchange(s.port(), "GET /throw HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")), 500);
  std::string cont = raw_exchange(s.port(), "POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Type: "
                                             "application/x-www-form-urlencoded\r\nContent-Length: 3\r\nConnection: close\r\n\r\nv=1");
  EXPECT_EQ(cont.rfind("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK", 0), 0u) << cont;
  EXPECT_NE(cont.find("echo 1"), std::string::npos);
  std::string huge_header = "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n";
  EXPECT_EQ(status_of(raw_exchange(s.port(), huge_header)), 431);
  s.stop();
  EXPECT_FALSE(s.running());
}

TEST_F(SitesTest, KeepAliveHeadAnd4xx) {
  std::string base = server_->base_url();
  client c;
  auto first = c.get(base + "/main/classifieds/");
  EXPECT_EQ(first.status, 200);
  auto second = c.get(base + "/main/classifieds/search?q=bike");
  EXPECT_EQ(second.status, 200);
  EXPECT_EQ(second.new_connections, 0) << "the connection was not kept alive";

  auto head = c.send("HEAD", base + "/main/classifieds/", nullptr);
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.body, "");
  EXPECT_NE(head.header("Content-Length"), "0");

  EXPECT_EQ(c.get(base + "/nobody/classifieds/").status, 404);
  EXPECT_EQ(c.get(base + "/main/nosuchsite/").status, 404);
  auto missing = c.get(base + "/main/classifieds/no/such/page");
  EXPECT_EQ(missing.status, 404);
  EXPECT_NE(missing.body.find("Go to the home page"), std::string::npos);  // in the site's frame
  auto put = c.send("PUT", base + "/main/classifieds/post", nullptr);
  EXPECT_EQ(put.status, 405);
  EXPECT_EQ(put.header("Allow"), "GET, POST");
  EXPECT_EQ(c.get(base + "/main/classifieds/item/99999").status, 404);
  EXPECT_EQ(c.get(base + "/main/classifieds/item/abc").status, 404);
}

TEST_F(SitesTest, MalformedAndTraversalRequestsGet4xx) {
  uint16_t port = server_->port();
  for (const char* target : {"/../../etc/passwd", "/main/classifieds/%2e%2e/%2e%2e/etc/passwd", "/%2E%2E/%2E%2E/etc/passwd",
                             "/main/classifieds/..%2f..%2fetc%2fpasswd", "/main/classifieds/%00", "*",
                             "http://127.0.0.1/main/classifieds/"}) {
    std::string raw = raw_exchange(port, std::string("GET ") + target + " HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(status_of(raw), 400) << target << "\n" << raw.substr(0, 200);
    EXPECT_EQ(raw.find("root:"), std::string::npos);
  }
  for (const char* garbage : {"GARBAGE\r\n\r\n", "GET / HTTP/9.x\r\n\r\n", "GET  HTTP/1.1\r\n\r\n",
                              "GET / HTTP/1.1\r\nBad Header Line\r\n\r\n", "\x01\x02\x03\r\n\r\n"}) {
    int status = status_of(raw_exchange(port, garbage));
    EXPECT_TRUE(status >= 400 && status < 500) << garbage << " -> " << status;
  }
  std::string big(2 << 20, 'x');
  std::string r = raw_exchange(port, "POST /main/classifieds/login HTTP/1.1\r\nHost: x\r\nContent-Type: "
                                     "application/x-www-form-urlencoded\r\nContent-Length: " +
                                         std::to_string(big.size()) + "\r\n\r\n" + big);
  EXPECT_EQ(status_of(r), 413);
  client c;  // still serving
  EXPECT_EQ(c.get(server_->base_url() + "/main/classifieds/").status, 200);
}

// ---- tenants --------------------------------------------------------------------------

TEST_F(SitesTest, SameSeedSameContentOtherSeedOtherContent) {
  site_store a(builtin_sites(), 7), b(builtin_sites(), 7), c(builtin_sites(), 8);
  EXPECT_EQ(a.snapshot_hash("classifieds"), b.snapshot_hash("classifieds"));
  EXPECT_EQ(a.snapshot_hash("classifieds"), store().snapshot_hash("classifieds"));
  EXPECT_NE(a.snapshot_hash("classifieds"), c.snapshot_hash("classifieds"));
  EXPECT_EQ(a.content_hash("main", "classifieds"), a.snapshot_hash("classifieds"));
  std::printf("classifieds snapshot: %zu bytes, hash %s (seed 7)\n", a.snapshot_bytes("classifieds"),
              a.snapshot_hash("classifieds").c_str());
  // Seeded content the tasks rely on.
  EXPECT_GE(a.query("main", "classifieds", "SELECT COUNT(*) AS n FROM listings")[0]["n"].get<int>(), 200);
  EXPECT_EQ(a.query("main", "classifieds", "SELECT username FROM users WHERE id = 1")[0]["username"], "blake.sullivan");
  EXPECT_EQ(a.query("main", "classifieds",
                    "SELECT COUNT(*) AS n FROM categories t WHERE parent_id IS NULL AND NOT EXISTS (SELECT 1 FROM "
                    "listings l JOIN categories c ON c.id = l.category_id WHERE c.parent_id = t.id)")[0]["n"],
            0);
  EXPECT_THROW(a.query("main", "classifieds", "DELETE FROM listings"), std::invalid_argument);
}

TEST_F(SitesTest, TenantsAreIsolatedUnderConcurrentWrites) {
  std::string main_hash = store().content_hash("main", "classifieds");
  std::string ta, tb;
  std::string base_a = fresh_classifieds(&ta), base_b = fresh_classifieds(&tb);
  auto writer = [](std::string base, std::string tag) {
    client c;
    login(c, base);
    for (int i = 0; i < 6; ++i) {
      auto r = c.post(base + "/post", {{"title", tag + " listing " + std::to_string(i)},
                                       {"description", "A test listing written by tenant " + tag + "."},
                                       {"price", "12.50"},
                                       {"category", "bicycles"},
                                       {"condition", "used"},
                                       {"location", "Boston, MA"}});
      EXPECT_EQ(r.status, 303) << r.body;
    }
  };
  std::thread a(writer, base_a, "alpha"), b(writer, base_b, "beta");
  a.join();
  b.join();
  EXPECT_EQ(count(ta, "SELECT COUNT(*) FROM listings WHERE title LIKE 'alpha%'"), 6);
  EXPECT_EQ(count(ta, "SELECT COUNT(*) FROM listings WHERE title LIKE 'beta%'"), 0);
  EXPECT_EQ(count(tb, "SELECT COUNT(*) FROM listings WHERE title LIKE 'beta%'"), 6);
  EXPECT_EQ(count(tb, "SELECT COUNT(*) FROM listings WHERE title LIKE 'alpha%'"), 0);
  EXPECT_EQ(store().content_hash("main", "classifieds"), main_hash);
  // A tenant's login cookie means nothing to another tenant.
  client c;
  login(c, base_a);
  EXPECT_EQ(c.get(base_a + "/my/listings").status, 200);
  EXPECT_EQ(c.get(base_b + "/my/listings").status, 303);
}

TEST_F(SitesTest, ResetRestoresTheSeedStateQuickly) {
  std::string t;
  std::string base = fresh_classifieds(&t);
  client c;
  login(c, base);
  c.post(base + "/item/8/contact", {{"message", "hello"}});
  c.post(base + "/item/8/delete", {});
  ASSERT_NE(store().content_hash(t, "classifieds"), store().snapshot_hash("classifieds"));
  std::vector<double> ms;
  for (int i = 0; i < 20; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    store().reset_tenant(t);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("reset_tenant: median %.3f ms, max %.3f ms (%zu-byte classifieds snapshot)\n", ms[ms.size() / 2],
              ms.back(), store().snapshot_bytes("classifieds"));
  EXPECT_EQ(store().content_hash(t, "classifieds"), store().snapshot_hash("classifieds"));
  EXPECT_EQ(c.get(base + "/my/listings").status, 303) << "reset must log everyone out";
  auto t0 = std::chrono::steady_clock::now();
  std::string t2 = store().create_tenant();
  std::printf("create_tenant: %.3f ms\n",
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  EXPECT_TRUE(store().delete_tenant(t2));
  EXPECT_FALSE(store().has_tenant(t2));
  EXPECT_THROW(store().delete_tenant("main"), std::invalid_argument);
  EXPECT_THROW(store().create_tenant("Bad Id!"), std::invalid_argument);
}

TEST_F(SitesTest, AdminApiManagesTenants) {
  client c;
  std::string admin = server_->base_url() + "/_admin/tenants";
  auto created = c.post(admin + "?id=admin-test", {});
  ASSERT_EQ(created.status, 201) << created.body;
  json j = json::parse(created.body);
  EXPECT_EQ(j["tenant"], "admin-test");
  EXPECT_EQ(j["sites"]["classifieds"], server_->base_url() + "/admin-test/classifieds");
  EXPECT_EQ(c.post(admin + "?id=admin-test", {}).status, 400);  // taken
  auto cookie = json::parse(c.post(admin + "/admin-test/login?site=classifieds&user=blake.sullivan", {}).body);
  EXPECT_EQ(cookie["cookie"]["name"], "classifieds_session");
  EXPECT_EQ(cookie["cookie"]["path"], "/admin-test/classifieds");
  auto hashes = json::parse(c.get(admin + "/admin-test/hash").body);
  EXPECT_EQ(hashes["hashes"]["classifieds"], store().snapshot_hash("classifieds"));
  auto reset = c.post(admin + "/admin-test/reset", {});
  EXPECT_EQ(reset.status, 200);
  EXPECT_TRUE(json::parse(reset.body).contains("reset_ms"));
  EXPECT_EQ(c.send("DELETE", admin + "/admin-test", nullptr).status, 200);
  auto gone = c.get(admin + "/admin-test/hash");
  EXPECT_EQ(gone.status, 404);
  EXPECT_EQ(json::parse(gone.body)["error"]["code"], 404);
}

// ---- classifieds ----------------------------------------------------------------------

TEST_F(SitesTest, SearchFiltersAndSortingMatchSql) {
  std::string t;
  std::string base = fresh_classifieds(&t);
  struct search_case {
    std::string query;  // URL query
    std::string where;  // the same filter in SQL, written independently
    std::string order;
  };
  const std::string newest = "posted_at DESC, id DESC";
  const std::string in_vehicles =
      "category_id IN (SELECT id FROM categories WHERE slug = 'vehicles' OR parent_id = "
      "(SELECT id FROM categories WHERE slug = 'vehicles'))";
  std::vector<search_case> cases = {
      {"", "1", newest},
      {"q=bike", "(title LIKE '%bike%' OR description LIKE '%bike%')", newest},
      {"q=Honda+civic&sort=price_asc", "(title LIKE '%honda%' OR description LIKE '%honda%') AND "
                                       "(title LIKE '%civic%' OR description LIKE '%civic%')",
       "price_cents ASC, " + newest},
      {"category=vehicles&sort=price_desc", in_vehicles, "price_cents DESC, " + newest},
      {"category=cars&min_price=5000&max_price=15000&sort=price_asc",
       "category_id = (SELECT id FROM categories WHERE slug = 'cars') AND price_cents BETWEEN 500000 AND 1500000",
       "price_cents ASC, " + newest},
      {"condition=like-new&location=Pittsburgh%2C+PA", "condition = 'like-new' AND location = 'Pittsburgh, PA'", newest},
      {"max_price=99.50", "price_cents <= 9950", newest},
  };
  client c;
  for (const auto& sc : cases) {
    std::vector<int64_t> expected;
    for (const auto& row : store().query(t, "classifieds", "SELECT id FROM listings WHERE " + sc.where + " ORDER BY " + sc.order))
      expected.push_back(row["id"].get<int64_t>());
    ASSERT_FALSE(expected.empty()) << sc.query;
    std::vector<int64_t> got;
    for (int page = 1; page <= 20; ++page) {
      std::string query = sc.query;
      if (page > 1) query += (query.empty() ? "page=" : "&page=") + std::to_string(page);
      auto r = c.get(base + "/search" + (query.empty() ? "" : "?" + query));
      ASSERT_EQ(r.status, 200) << query << " " << r.header("Location");
      if (page == 1) {
        std::string summary = " of " + std::to_string(expected.size()) + (expected.size() == 1 ? " listing" : " listings");
        EXPECT_NE(r.body.find(summary), std::string::npos) << sc.query;
      }
      auto ids = result_ids(r.body);
      got.insert(got.end(), ids.begin(), ids.end());
      if (r.body.find(">Next page<") == std::string::npos) break;
    }
    EXPECT_EQ(got, expected) << sc.query;
  }
  // The category page lists the same as the category filter.
  auto cat = c.get(base + "/category/vehicles?sort=price_desc");
  ASSERT_EQ(cat.status, 200);
  std::vector<int64_t> first_page;
  for (const auto& row : store().query(t, "classifieds", "SELECT id FROM listings WHERE " + in_vehicles +
                                                             " ORDER BY price_cents DESC, " + newest + " LIMIT 20"))
    first_page.push_back(row["id"].get<int64_t>());
  EXPECT_EQ(result_ids(cat.body), first_page);
  // Other spellings of the same search redirect to the one canonical URL.
  std::string path = site_base_path(t, "classifieds");
  for (const auto& [messy, canonical] : std::vector<std::pair<std::string, std::string>>{
           {"/search?q=&category=&min_price=&max_price=99.5&condition=&location=&sort=newest", "/search?max_price=99.50"},
           {"/search?sort=price_asc&q=blue%20bike&page=1", "/search?q=blue+bike&sort=price_asc"},
           {"/search?", "/search"},
           {"/category/cars?category=bicycles&page=2", "/category/cars?page=2"}}) {
    auto r = c.get(base + messy);
    EXPECT_EQ(r.status, 302) << messy;
    EXPECT_EQ(r.header("Location"), path + canonical) << messy;
  }
  // Bad filter values are reported, not fatal.
  auto bad = c.get(base + "/search?min_price=cheap&category=nope&sort=random");
  EXPECT_EQ(bad.status, 200);
  EXPECT_NE(bad.body.find("Minimum price must be an amount in dollars"), std::string::npos);
  EXPECT_NE(bad.body.find("There is no category &#39;nope&#39;"), std::string::npos);
}

TEST_F(SitesTest, PostEditDeleteWithLogin) {
  std::string t;
  std::string base = fresh_classifieds(&t);
  std::string path = site_base_path(t, "classifieds");
  client c;
  auto anon = c.get(base + "/post");
  EXPECT_EQ(anon.status, 303);
  EXPECT_EQ(anon.header("Location"), path + "/login?next=%2Fpost");
  auto wrong = c.post(base + "/login", {{"username", "blake.sullivan"}, {"password", "nope"}});
  EXPECT_EQ(wrong.status, 422);
  EXPECT_NE(wrong.body.find("Wrong username or password."), std::string::npos);
  auto ok = c.post(base + "/login", {{"username", "blake.sullivan@example.com"}, {"password", "password"}, {"next", "/post"}});
  EXPECT_EQ(ok.status, 303);
  EXPECT_EQ(ok.header("Location"), path + "/post");
  EXPECT_NE(ok.header("Set-Cookie").find("Path=" + path), std::string::npos);

  auto form = c.get(base + "/post");
  ASSERT_EQ(form.status, 200);
  std::regex input_id("<(input|select|textarea) [^>]*id=\"([^\"]+)\"");
  for (std::sregex_iterator it(form.body.begin(), form.body.end(), input_id), end; it != end; ++it)
    EXPECT_NE(form.body.find("<label for=\"" + (*it)[2].str() + "\">"), std::string::npos) << (*it)[2];

  auto invalid = c.post(base + "/post", {{"title", "Hi"}, {"description", "short"}, {"price", "ten"}, {"category", "vehicles"}});
  EXPECT_EQ(invalid.status, 422);
  for (const char* msg : {"Title must be 5 to 100 characters long (it has 2).", "Price must be an amount in dollars",
                          "Choose a subcategory (such as Cars), not a whole section.", "Choose the item&#39;s condition.",
                          "Choose a location from the list."})
    EXPECT_NE(invalid.body.find(msg), std::string::npos) << msg;
  EXPECT_NE(invalid.body.find("value=\"Hi\""), std::string::npos) << "the form keeps what was typed";

  const std::string evil = "<script>alert('x')</script> & \"bike\"";
  auto posted = c.post(base + "/post", {{"title", evil},
                                        {"description", "Barely ridden, <b>great</b> bike for commuting."},
                                        {"price", "$1,234.50"},
                                        {"category", "bicycles"},
                                        {"condition", "like-new"},
                                        {"location", "Denver, CO"},
                                        {"image_alt", "Photo of a red bike"}});
  ASSERT_EQ(posted.status, 303) << posted.body;
  std::string item = posted.header("Location");
  int64_t id = std::stoll(item.substr(item.rfind('/') + 1));
  EXPECT_EQ(id, 241);
  auto page = c.get(server_->base_url() + item);
  ASSERT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("Your listing was posted."), std::string::npos);
  EXPECT_NE(page.body.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;bike&quot;"), std::string::npos);
  EXPECT_EQ(page.body.find("<script>"), std::string::npos);
  EXPECT_EQ(page.body.find("<b>great"), std::string::npos);
  EXPECT_NE(page.body.find("$1,234.50"), std::string::npos);
  EXPECT_NE(page.body.find("alt=\"Photo of a red bike\""), std::string::npos);
  auto row = store().query(t, "classifieds", "SELECT * FROM listings WHERE id = ?1", {id})[0];
  EXPECT_EQ(row["title"], evil);
  EXPECT_EQ(row["price_cents"], 123450);
  EXPECT_EQ(row["seller_id"], 1);
  EXPECT_EQ(c.get(server_->base_url() + item).body.find("Your listing was posted."), std::string::npos) << "flash shows once";

  auto edited = c.post(base + "/item/241/edit", {{"title", "Commuter bike"},
                                                 {"description", "Barely ridden, great bike for commuting."},
                                                 {"price", "900"},
                                                 {"category", "bicycles"},
                                                 {"condition", "used"},
                                                 {"location", "Denver, CO"}});
  EXPECT_EQ(edited.status, 303);
  auto row2 = store().query(t, "classifieds", "SELECT title, price_cents, image_alt FROM listings WHERE id = 241")[0];
  EXPECT_EQ(row2["title"], "Commuter bike");
  EXPECT_EQ(row2["price_cents"], 90000);
  EXPECT_TRUE(row2["image_alt"].is_null());

  client other;
  login(other, base, store().query(t, "classifieds", "SELECT username FROM users WHERE id = 2")[0]["username"].get<std::string>());
  EXPECT_EQ(other.get(base + "/item/241/edit").status, 403);
  EXPECT_EQ(other.post(base + "/item/241/delete", {}).status, 403);

  EXPECT_EQ(c.get(base + "/item/241/delete").status, 200);
  auto deleted = c.post(base + "/item/241/delete", {});
  EXPECT_EQ(deleted.status, 303);
  EXPECT_EQ(deleted.header("Location"), path + "/my/listings");
  EXPECT_EQ(count(t, "SELECT COUNT(*) FROM listings WHERE id = 241"), 0);
  EXPECT_EQ(c.get(base + "/item/241").status, 404);
  EXPECT_EQ(c.post(base + "/logout", {}).status, 303);
  EXPECT_EQ(c.get(base + "/my/listings").status, 303);
}

TEST_F(SitesTest, ContactSellerStoresAMessage) {
  std::string t;
  std::string base = fresh_classifieds(&t);
  auto target = store().query(t, "classifieds",
                              "SELECT l.id, u.username FROM listings l JOIN users u ON u.id = l.seller_id "
                              "WHERE l.seller_id <> 1 ORDER BY l.id LIMIT 1")[0];
  int64_t id = target["id"];
  std::string item = base + "/item/" + std::to_string(id);
  client c;
  EXPECT_NE(c.get(item).body.find("Log in to contact the seller"), std::string::npos);
  EXPECT_EQ(c.post(item + "/contact", {{"message", "hi"}}).status, 303);  // to the login page
  login(c, base);
  EXPECT_NE(c.get(item).body.find("<label for=\"contact-message\">"), std::string::npos);
  EXPECT_EQ(c.post(item + "/contact", {{"message", "   "}}).status, 422);
  auto sent = c.post(item + "/contact", {{"message", "Is this still available? <3"}});
  ASSERT_EQ(sent.status, 303);
  EXPECT_EQ(count(t, "SELECT COUNT(*) FROM messages WHERE listing_id = ?1 AND sender_id = 1 AND body = ?2",
                  {id, std::string("Is this still available? <3")}),
            1);
  EXPECT_NE(c.get(item).body.find("Your message was sent to"), std::string::npos);
  EXPECT_NE(c.get(base + "/my/messages").body.find("Is this still available? &lt;3"), std::string::npos);
  client seller;
  login(seller, base, target["username"].get<std::string>());
  EXPECT_NE(seller.get(base + "/my/messages").body.find("Is this still available? &lt;3"), std::string::npos);
  EXPECT_EQ(seller.post(item + "/contact", {{"message", "to myself"}}).status, 422);  // own listing
}

TEST_F(SitesTest, PagesRenderWithSemanticMarkup) {
  std::string base = fresh_classifieds();
  client c;
  login(c, base);
  for (const char* p : {"/", "/category/vehicles", "/category/cars", "/search?q=bike", "/user/blake.sullivan",
                        "/my/listings", "/my/messages", "/post", "/item/8", "/item/8/edit", "/login"}) {
    auto r = c.get(base + p);
    EXPECT_EQ(r.status, 200) << p;
    for (const char* tag : {"<nav aria-label=\"Main\">", "<main>", "<h1>", "<form role=\"search\"", "<footer>"})
      EXPECT_NE(r.body.find(tag), std::string::npos) << p << " lacks " << tag;
    EXPECT_EQ(r.body.find("<script"), std::string::npos) << p;
  }
  auto home = c.get(base + "/");
  EXPECT_NE(home.body.find("Signed in as Blake Sullivan"), std::string::npos);
  EXPECT_NE(home.body.find("/category/vehicles\">Vehicles</a>"), std::string::npos);
  auto item = c.get(base + "/item/8");
  EXPECT_NE(item.body.find(">Edit listing</a>"), std::string::npos) << "listing 8 belongs to user 1";
}
