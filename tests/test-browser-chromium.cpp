// test-browser-chromium.cpp: the chromium backend (envs/browser/chromium/) on the loopback
// test site of the text-browser tests: the same interactive elements with the same names
// as the text backend, actions (links, forms, selects, tabs, history, scrolling), the
// evaluators' JavaScript, a page that never finishes loading, and no Chromium process left
// behind (destroyed, or its kvarena killed). Label `chromium`: every test skips with a
// reason when /usr/bin/chromium is absent.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "browser/chromium/chromium-browser.h"
#include "browser/chromium/chromium-cleanup.h"
#include "browser/chromium/chromium-process.h"
#include "browser/chromium/som-list.h"
#include "chromium-test-util.h"
#include "test-browser-server.h"

namespace kvarena::browser_test {
namespace {

using chromium_test::interactive_lines;

// Processes whose command line holds `needle` (a Chromium's --user-data-dir).
std::vector<int> processes_with(const std::string& needle) {
  std::vector<int> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline");
    std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmd.find(needle) != std::string::npos) out.push_back(std::stoi(name));
  }
  return out;
}

// Waits up to 10 s for the processes holding `needle` to go; true when none is left.
bool gone_within_10s(const std::string& needle) {
  for (int i = 0; i < 200; ++i) {
    if (processes_with(needle).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// A server that accepts connections and never answers: a page that never loads.
class silent_server {
 public:
  silent_server() : acceptor_(ioc_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread([this] {
      while (!stop_) {
        tcp::socket s(ioc_);
        boost::system::error_code ec;
        acceptor_.accept(s, ec);
        if (!ec && !stop_) held_.push_back(std::move(s));
      }
    });
  }
  ~silent_server() {
    stop_ = true;
    boost::system::error_code ec;
    tcp::socket wake(ioc_);
    wake.connect(acceptor_.local_endpoint(), ec);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/slow"; }

 private:
  boost::asio::io_context ioc_;
  tcp::acceptor acceptor_;
  unsigned short port_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<tcp::socket> held_;
  std::thread thread_;
};

class Chromium : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (chromium_available()) host_ = new chromium_host();
  }
  static void TearDownTestSuite() {
    delete host_;
    host_ = nullptr;
  }
  void SetUp() override {
    SKIP_WITHOUT_CHROMIUM();
    chromium_browser_options o;
    o.load_timeout = std::chrono::milliseconds(3000);
    b_ = std::make_unique<chromium_browser>(host_->acquire(), o);
  }
  std::string url(const std::string& p) { return server_.url(p); }
  std::string obs() { return b_->observe().text; }
  int64_t id(const std::string& needle) {
    std::string o = obs();
    int64_t i = id_of(o, needle);
    EXPECT_GE(i, 0) << "no line with " << needle << " in\n" << o;
    return i;
  }
  void open(const std::string& p) {
    browser_result r = b_->go_to(url(p));
    ASSERT_TRUE(r.ok()) << r.error;
  }
  std::string prop(const std::string& selector, const std::string& property = "textContent") {
    std::string err;
    return b_->query_selector_property(selector, property, &err).value_or("<" + err + ">");
  }

  static inline chromium_host* host_ = nullptr;
  test_server server_{site};
  std::unique_ptr<chromium_browser> b_;
};

// ---- the observation

TEST_F(Chromium, SameInteractiveElementsAndNamesAsTheTextBackend) {
  for (const char* path : {"/dir/index.html", "/form-get", "/login", "/dir/page2.html", "/long"}) {
    text_browser text;
    ASSERT_TRUE(text.go_to(url(path)).ok());
    open(path);
    std::string t = text.observe().text, c = obs();
    EXPECT_EQ(interactive_lines(t), interactive_lines(c)) << path << "\ntext:\n" << t << "\nchromium:\n" << c;
    EXPECT_EQ(t.substr(0, t.find('\n')), c.substr(0, c.find('\n'))) << "the tab header";
  }
}

TEST_F(Chromium, IdsAreStableWithinAPageAndElementsOutOfViewAreLeftOut) {
  open("/dir/index.html");
  std::string first = obs();
  int64_t link = id_of(first, "link 'Page two'");
  ASSERT_GE(link, 0) << first;
  EXPECT_EQ(id_of(obs(), "link 'Page two'"), link) << "the same id on the next observation";
  EXPECT_NE(first.find("[" + std::to_string(link) + "] link 'Page two'"), std::string::npos);
  EXPECT_EQ(first.find("InlineTextBox"), std::string::npos);

  chromium_browser_options small;
  small.viewport_height_px = 200;  // the /long page is 40 paragraphs: most are below
  chromium_browser b(host_->acquire(), small);
  ASSERT_TRUE(b.go_to(url("/long")).ok());
  std::string top = b.observe().text;
  EXPECT_NE(top.find("'Line 0'"), std::string::npos) << top;
  EXPECT_EQ(top.find("'Line 39'"), std::string::npos) << top;
  EXPECT_EQ(top.find("Bottom link"), std::string::npos) << top;
  browser_result r = b.scroll("down");
  EXPECT_TRUE(r.ok()) << r.error;
  std::string after = b.observe().text;
  EXPECT_EQ(after.find("'Line 0'"), std::string::npos) << after;
  for (int i = 0; i < 20 && after.find("Bottom link") == std::string::npos; ++i) {
    b.scroll("down");
    after = b.observe().text;
  }
  EXPECT_NE(after.find("Bottom link"), std::string::npos) << after;
  EXPECT_EQ(b.scroll("down").note, "already at the bottom of the page");
}

TEST_F(Chromium, AnIdScrolledAwayIsRefusedWithTheWayToScroll) {
  chromium_browser_options small;
  small.viewport_height_px = 200;
  chromium_browser b(host_->acquire(), small);
  ASSERT_TRUE(b.go_to(url("/long")).ok());
  std::string o = b.observe().text;  // the id is not known yet: find it after scrolling down
  for (int i = 0; i < 20 && id_of(o, "link 'Bottom link'") < 0; ++i) {
    b.scroll("down");
    o = b.observe().text;
  }
  int64_t bottom = id_of(o, "link 'Bottom link'");
  ASSERT_GE(bottom, 0) << o;
  for (int i = 0; i < 20; ++i) b.scroll("up");
  b.observe();
  browser_result r = b.click(bottom);
  EXPECT_NE(r.error.find("not in the current viewport; scroll down"), std::string::npos) << r.error;
  EXPECT_NE(b.click(999999).error.find("is not on the current page"), std::string::npos);
}

// ---- actions

TEST_F(Chromium, ClickFollowsLinksAndHistoryGoesBackAndForward) {
  open("/dir/index.html");
  ASSERT_TRUE(b_->click(id("link 'Page two'")).ok());
  EXPECT_EQ(b_->current_url(), url("/dir/page2.html"));
  EXPECT_NE(obs().find("heading 'Second page'"), std::string::npos);
  ASSERT_TRUE(b_->go_back().ok());
  EXPECT_EQ(b_->current_url(), url("/dir/index.html"));
  ASSERT_TRUE(b_->go_forward().ok());
  EXPECT_EQ(b_->current_url(), url("/dir/page2.html"));
  EXPECT_NE(b_->go_forward().error.find("cannot go forward"), std::string::npos);
}

TEST_F(Chromium, FormFieldsTypedChosenAndSubmitted) {
  open("/form-post");
  ASSERT_TRUE(b_->type(id("textbox 'Query'"), "hello world", false).ok());
  ASSERT_TRUE(b_->type(id("combobox 'Sort'"), "gam", false).ok());
  ASSERT_TRUE(b_->click(id("checkbox 'Remember me'")).ok());
  ASSERT_TRUE(b_->click(id("radio 'Choice two'")).ok());
  EXPECT_NE(b_->type(id("textbox 'Disabled field'"), "x", false).error.find("disabled"), std::string::npos);
  EXPECT_NE(b_->type(id("button 'Submit form'"), "x", false).error.find("not a textbox"), std::string::npos);
  std::string err = b_->type(id("combobox 'Sort'"), "zeta", false).error;
  EXPECT_NE(err.find("no option matches; its options are 'Alpha', 'Beta', 'Gamma'"), std::string::npos) << err;
  ASSERT_TRUE(b_->click(id("button 'Submit form'")).ok());
  EXPECT_EQ(b_->current_url(), url("/echo"));
  std::string body = prop("#body");
  EXPECT_NE(body.find("q=hello+world"), std::string::npos) << body;
  EXPECT_NE(body.find("s=c"), std::string::npos) << body;
  EXPECT_NE(body.find("c=yes"), std::string::npos) << body;
  EXPECT_NE(body.find("r=r2"), std::string::npos) << body;
  EXPECT_EQ(prop("#method"), "POST");
}

TEST_F(Chromium, TypeWithEnterSubmitsAndControlASelectsAllForReplacement) {
  open("/form-get");
  int64_t q = id("textbox 'Query'");
  ASSERT_TRUE(b_->type(q, "first", false).ok());
  ASSERT_TRUE(b_->press("Control+a").ok());
  ASSERT_TRUE(b_->type(q, "second", true).ok());
  EXPECT_EQ(b_->current_url().rfind(url("/echo?q=second"), 0), 0u) << b_->current_url();
}

TEST_F(Chromium, LoginCookiesStayInTheBrowserContext) {
  long status = 0;
  std::string final_url, err;
  ASSERT_TRUE(b_->post_form(url("/login"), "user=alice&pass=secret", &status, &final_url, &err)) << err;
  EXPECT_EQ(status, 200);
  EXPECT_EQ(final_url, url("/account"));
  open("/account");
  EXPECT_NE(obs().find("Welcome alice"), std::string::npos);
  chromium_browser other(host_->acquire());  // another context: another cookie jar
  ASSERT_TRUE(other.go_to(url("/account")).ok());
  EXPECT_EQ(other.current_url(), url("/login"));
}

TEST_F(Chromium, TabsOpenFocusAndClose) {
  open("/dir/index.html");
  ASSERT_TRUE(b_->click(id("link 'New tab link'")).ok());
  b_->observe();
  EXPECT_EQ(b_->tab_count(), 2);
  EXPECT_EQ(b_->current_tab(), 1);
  EXPECT_EQ(b_->current_url(), url("/echo?x=1"));
  ASSERT_TRUE(b_->tab_focus(0).ok());
  EXPECT_EQ(b_->current_url(), url("/dir/index.html"));
  EXPECT_NE(b_->tab_focus(5).error.find("tab 5 does not exist (2 tabs open"), std::string::npos);
  ASSERT_TRUE(b_->close_tab().ok());
  EXPECT_EQ(b_->tab_count(), 1);
  EXPECT_EQ(b_->close_tab().note, "closed the last tab; a new blank tab was opened");
  EXPECT_EQ(b_->current_url(), "about:blank");
}

TEST_F(Chromium, EvaluatorsReadThePageWithJavaScript) {
  open("/dir/index.html");
  EXPECT_EQ(prop("#sec"), "Section text");
  EXPECT_EQ(prop("h1", "innerText"), "Welcome");
  std::string err;
  EXPECT_FALSE(b_->query_selector_property("#nope", "textContent", &err));
  EXPECT_NE(err.find("no element matches the selector '#nope'"), std::string::npos) << err;
  EXPECT_FALSE(b_->query_selector_property("p[", "textContent", &err));
  EXPECT_NE(err.find("invalid CSS selector"), std::string::npos) << err;
  EXPECT_NE(b_->page_html().find("<h1>Welcome</h1>"), std::string::npos);
  EXPECT_EQ(b_->evaluate_js("document.querySelectorAll('a').length", &err).value_or(err), "7");
}

TEST_F(Chromium, ErrorsForBadUrlsAndHttpStatuses) {
  EXPECT_NE(b_->go_to("ftp://x/").error.find("only http://"), std::string::npos);
  browser_result r = b_->go_to(url("/missing"));
  EXPECT_TRUE(r.ok()) << r.error;
  EXPECT_NE(r.note.find("HTTP 404"), std::string::npos) << r.note;
  unsigned short closed_port;
  {
    boost::asio::io_context ioc;
    tcp::acceptor a(ioc, {boost::asio::ip::make_address("127.0.0.1"), 0});
    closed_port = a.local_endpoint().port();
  }
  std::string dead = "http://127.0.0.1:" + std::to_string(closed_port) + "/";
  r = b_->go_to(dead);
  EXPECT_EQ(r.error, "cannot open '" + dead + "': net::ERR_CONNECTION_REFUSED");
}

// ---- Set-of-Marks list (no Chromium needed)

TEST(SomList, VwaLinesWithTheIdsAndTheTextListedOnce) {
  std::string long_text(300, 'x');
  std::vector<som_item> items = {
      {12, true, "a", "  HP Inkjet\n Fax  "},
      {0, false, "#text", "HP Inkjet Fax"},  // the link's own label: listed already
      {0, false, "#text", "Price: $10"},
      {0, false, "#text", "Price: $10"},  // repeated
      {30, true, "input", ""},
      {0, false, "#text", "   "},
      {31, true, "button", long_text},
  };
  EXPECT_EQ(som_list_text(items),
            "[12] [A] [HP Inkjet Fax]\n[] [StaticText] [Price: $10]\n[30] [INPUT] []\n[31] [BUTTON] [" +
                std::string(200, 'x') + "]");
}

// ---- waiting after input

// A page whose button fetches from a slow URL and whose link leads to a slow page.
test_response slow_site(const test_request& r) {
  test_response out;
  if (r.path == "/js") {
    out.body = page("JS", "<button onclick=\"fetch('/data').then(r => r.text()).then(t => "
                          "document.getElementById('out').textContent = t)\">Fetch data</button>"
                          "<p id=\"out\">nothing yet</p><a href=\"/slowpage\">Slow page</a>"
                          "<a href=\"#here\">Same page</a><p id=\"here\">Anchor</p>");
  } else if (r.path == "/data") {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    out.body = "loaded data";
    out.content_type = "text/plain";
  } else if (r.path == "/slowpage") {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    out.body = page("Slow", "<p>Slow page body</p>");
  } else {
    out.status = 404;
  }
  return out;
}

TEST_F(Chromium, InputIsDoneWhenTheRequestsAndTheNavigationItStartedAre) {
  test_server slow{slow_site};
  ASSERT_TRUE(b_->go_to(slow.url("/js")).ok());
  browser_result r = b_->click(id("button 'Fetch data'"));  // a script's request, no navigation
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_NE(obs().find("loaded data"), std::string::npos) << "the click waited for the fetch and its update";
  r = b_->click(id("link 'Same page'"));  // a fragment: no load to wait for
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(b_->current_url(), slow.url("/js#here"));
  r = b_->click(id("link 'Slow page'"));  // a navigation: until the slow page has loaded
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(b_->current_url(), slow.url("/slowpage"));
  EXPECT_NE(obs().find("Slow page body"), std::string::npos);
}

// ---- faults

TEST_F(Chromium, APageThatNeverLoadsTimesOutWithAClearMessage) {
  silent_server slow;
  auto t0 = std::chrono::steady_clock::now();
  browser_result r = b_->go_to(slow.url());
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(r.error.find("did not finish loading within 3 s"), std::string::npos) << r.error;
  EXPECT_LT(s, 10);
  open("/dir/page2.html");  // the tab still works
  EXPECT_NE(obs().find("Second page"), std::string::npos);
}

TEST(ChromiumProcess, NoProcessIsLeftAfterDestruction) {
  SKIP_WITHOUT_CHROMIUM();
  std::string dir;
  {
    chromium_process p(chromium_options{});
    dir = p.user_data_dir();
    chromium_browser b(std::shared_ptr<chromium_process>(&p, [](chromium_process*) {}));
    ASSERT_TRUE(b.go_to("about:blank").ok());
    EXPECT_GE(processes_with(dir).size(), 2u) << "a browser and its helper processes";
  }
  EXPECT_TRUE(gone_within_10s(dir)) << processes_with(dir).size() << " processes left";
  EXPECT_FALSE(std::filesystem::exists(dir)) << "the temporary profile is removed";
}

TEST(ChromiumProcess, NoProcessIsLeftWhenKvarenaIsKilled) {
  SKIP_WITHOUT_CHROMIUM();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // stands for kvarena: starts Chromium, reports its profile, waits
    close(fds[0]);
    try {
      chromium_process p(chromium_options{});
      std::string dir = p.user_data_dir() + "\n";
      (void)!write(fds[1], dir.data(), dir.size());
      pause();
    } catch (...) {
    }
    _exit(1);
  }
  close(fds[1]);
  std::string dir;
  char c;
  while (read(fds[0], &c, 1) == 1 && c != '\n') dir += c;
  close(fds[0]);
  ASSERT_FALSE(dir.empty()) << "the child could not start Chromium";
  EXPECT_FALSE(processes_with(dir).empty());
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(gone_within_10s(dir)) << processes_with(dir).size() << " Chromium processes outlived kvarena";
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path());
}

TEST(ChromiumProcess, ProfilesOfKvarenasThatDiedAreRemovedAtStart) {
  SKIP_WITHOUT_CHROMIUM();
  pid_t dead = fork();  // a pid that existed and is gone: a kvarena killed with SIGKILL
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  const std::string stale = chromium_temp_prefix(dead) + "test01", mine = chromium_temp_prefix(getpid()) + "test02";
  for (const std::string& d : {stale, mine}) {
    std::filesystem::create_directories(d + "/profile/Default");
    std::ofstream(d + "/profile/Default/Cookies") << "x";
  }
  { chromium_process p(chromium_options{}); }
  EXPECT_FALSE(std::filesystem::exists(stale)) << "the dead kvarena's profile is removed";
  EXPECT_TRUE(std::filesystem::exists(mine)) << "a live kvarena's profile is kept";
  std::filesystem::remove_all(mine);
}

TEST(ChromiumProcess, CleanupNowKillsAndRemovesEveryRunningChromium) {
  SKIP_WITHOUT_CHROMIUM();
  chromium_process p(chromium_options{});  // stands for kvarena's Chromium when a signal comes
  const std::string dir = p.user_data_dir();
  ASSERT_FALSE(processes_with(dir).empty());
  chromium_cleanup_now();  // what the SIGTERM handler runs
  EXPECT_TRUE(gone_within_10s(dir)) << processes_with(dir).size() << " processes left";
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(dir).parent_path()));
}

// Inodes of the sockets in LISTEN state in /proc/net/tcp and /proc/net/tcp6 (what
// `ss -ltn` lists), with their local address:port as /proc writes it.
std::map<std::string, std::string> listening_tcp_inodes() {
  std::map<std::string, std::string> out;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream f(line);
      std::string slot, local, remote, state, queues, timer, retr, uid, timeout, inode;
      f >> slot >> local >> remote >> state >> queues >> timer >> retr >> uid >> timeout >> inode;
      if (state == "0A") out[inode] = local;  // TCP_LISTEN
    }
  }
  return out;
}

// Socket inodes open in process `pid` ("socket:[123]" links in /proc/<pid>/fd); nullopt
// when its descriptors cannot be read.
std::optional<std::set<std::string>> socket_inodes_of(int pid) {
  std::error_code ec;
  std::filesystem::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", ec);
  if (ec) return std::nullopt;
  std::set<std::string> out;
  for (const auto& fd : it) {
    std::string target = std::filesystem::read_symlink(fd.path(), ec).string();
    if (!ec && target.rfind("socket:[", 0) == 0) out.insert(target.substr(8, target.size() - 9));
  }
  return out;
}

// What `ss -ltnp` would show: no TCP port owned by any process of a running Chromium
// session: DevTools goes over --remote-debugging-pipe, and the listening sockets of the
// kvarena that started it (the env API, the sites: here the test server, open before
// Chromium starts) are not inherited.
TEST(ChromiumProcess, ListensOnNoTcpPort) {
  SKIP_WITHOUT_CHROMIUM();
  test_server server(site);
  chromium_process p(chromium_options{});
  chromium_browser b(std::shared_ptr<chromium_process>(&p, [](chromium_process*) {}));
  ASSERT_TRUE(b.go_to(server.url("/dir/index.html")).ok());  // renderers up, a page loaded
  EXPECT_NE(b.observe().text.find("Page two"), std::string::npos);
  std::vector<int> pids = processes_with(p.user_data_dir());
  ASSERT_FALSE(pids.empty());
  ASSERT_TRUE(socket_inodes_of(p.pid()).has_value()) << "cannot read /proc/" << p.pid() << "/fd";
  const std::map<std::string, std::string> listening = listening_tcp_inodes();
  for (int pid : pids) {
    std::optional<std::set<std::string>> sockets = socket_inodes_of(pid);
    if (!sockets) continue;  // exited meanwhile
    for (const std::string& inode : *sockets) {
      auto hit = listening.find(inode);
      EXPECT_TRUE(hit == listening.end()) << "Chromium process " << pid << " listens on TCP "
                                          << (hit == listening.end() ? "" : hit->second) << " (hex address:port)";
    }
  }
  std::ifstream cmd("/proc/" + std::to_string(p.pid()) + "/cmdline");
  std::string args((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
  EXPECT_EQ(args.find("--remote-debugging-port"), std::string::npos);
  EXPECT_NE(args.find("--remote-debugging-pipe"), std::string::npos);
}

// Many sessions share one Chromium over one pipe: each gets its own replies and its own
// tabs' events, from several threads at once.
TEST(ChromiumProcess, SessionsOnOnePipeFromManyThreads) {
  SKIP_WITHOUT_CHROMIUM();
  auto p = std::make_shared<chromium_process>(chromium_options{});
  test_server server(site);
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      chromium_browser b(p);
      for (int round = 0; round < 3; ++round) {
        const char* path = (i + round) % 2 ? "/dir/index.html" : "/dir/page2.html";
        if (!b.go_to(server.url(path)).ok()) return;
        if (b.current_url() != server.url(path)) return;
        const std::string o = b.observe().text;
        if (o.find((i + round) % 2 ? "Page two" : "Second page") == std::string::npos) return;
      }
      ++good;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(good.load(), 4);
}

// Chromium killed: the sessions on its pipe say so, and no call hangs.
TEST(ChromiumProcess, AKilledChromiumEndsItsPipeSessionsWithAClearError) {
  SKIP_WITHOUT_CHROMIUM();
  auto p = std::make_shared<chromium_process>(chromium_options{});
  chromium_browser b(p);
  ASSERT_TRUE(b.go_to("about:blank").ok());
  p->kill_now();
  const auto start = std::chrono::steady_clock::now();
  browser_result r = b.go_to("about:blank");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_NE(r.error.find("is gone"), std::string::npos) << r.error;
  EXPECT_TRUE(b.dead());
}

TEST(ChromiumProcess, MissingExecutableGivesAClearError) {
  chromium_options o;
  o.executable = "/nonexistent/chromium";
  try {
    chromium_process p(o);
    FAIL() << "started a missing executable";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("install Debian's chromium package"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvarena::browser_test
