// test-cli-chromium.cpp: the kvarena binary with --browser chromium: killed, SIGTERM (and
// SIGINT) in the middle of `kvarena tasks oracle --browser chromium` leave no Chromium
// process and no /tmp/kvarena-chromium-<pid>-* profile (envs/browser/chromium/chromium-cleanup.h);
// `kvarena bench env --browser chromium` measures both backends at 1 and 8 sessions in one
// JSON; `kvarena run --observation som` stores every step's Set-of-Marks screenshot as a PNG
// beside the results file (step_screenshots rows) and `report --html` shows them.
// Label `chromium`: skips without /usr/bin/chromium.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "browser/chromium/chromium-cleanup.h"
#include "chromium-test-util.h"
#include "results-db.h"

namespace kvarena {
namespace {

namespace fs = std::filesystem;

// The Chromium profile directories of kvarena process `pid`.
std::vector<std::string> profiles_of(pid_t pid) {
  std::vector<std::string> out;
  const std::string prefix = chromium_temp_prefix(pid);
  for (const fs::directory_entry& e : fs::directory_iterator("/tmp"))
    if (e.path().string().rfind(prefix, 0) == 0) out.push_back(e.path().string());
  return out;
}

// Processes whose command line holds `needle`.
int processes_with(const std::string& needle) {
  int n = 0;
  for (const fs::directory_entry& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmd;
    try {
      std::ifstream in(e.path() / "cmdline");
      cmd.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    } catch (const std::exception&) {
      continue;  // it exited while being read (libstdc++ throws on ESRCH): not running
    }
    n += cmd.find(needle) != std::string::npos;
  }
  return n;
}

// Starts the oracle on the local suite with chromium; returns its pid once its Chromium is
// up (its profile exists and a Chromium runs on it), -1 when that never happened.
pid_t start_oracle_with_chromium(std::string* profile) {
  pid_t child = fork();
  if (child == 0) {
    int null_fd = open("/dev/null", O_WRONLY);
    dup2(null_fd, 1), dup2(null_fd, 2);
    execl(KVARENA_BIN, KVARENA_BIN, "tasks", "oracle", "--suite", KVARENA_SOURCE_DIR "/tasks/vwa-local",
          "--browser", "chromium", static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 1200; ++i) {  // up to a minute on a loaded machine
    std::vector<std::string> p = profiles_of(child);
    if (!p.empty() && processes_with(p[0]) > 0) {
      *profile = p[0];
      return child;
    }
    if (waitpid(child, nullptr, WNOHANG) == child) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  return -1;
}

// Waits up to 10 s for no process to hold `needle`.
bool no_process_within_10s(const std::string& needle) {
  for (int i = 0; i < 200; ++i) {
    if (processes_with(needle) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

class KvarenaKilled : public ::testing::TestWithParam<int> {};

TEST_P(KvarenaKilled, LeavesNoChromiumAndNoProfile) {
  SKIP_WITHOUT_CHROMIUM();
  const int sig = GetParam();
  std::string profile;
  pid_t kvarena = start_oracle_with_chromium(&profile);
  ASSERT_GT(kvarena, 0) << "kvarena tasks oracle --browser chromium did not start a Chromium";
  ASSERT_EQ(kill(kvarena, sig), 0);
  int status = 0;
  ASSERT_EQ(waitpid(kvarena, &status, 0), kvarena);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << "status " << status << ": it dies of the signal";
  EXPECT_TRUE(no_process_within_10s(profile)) << processes_with(profile) << " Chromium processes outlived kvarena";
  EXPECT_FALSE(fs::exists(profile)) << profile << " was left behind";
  EXPECT_TRUE(profiles_of(kvarena).empty());
}

INSTANTIATE_TEST_SUITE_P(Signals, KvarenaKilled, ::testing::Values(SIGTERM, SIGINT),
                         [](const auto& info) { return info.param == SIGTERM ? "SIGTERM" : "SIGINT"; });

// ---- kvarena bench env --browser chromium: both backends at 1 and 8 sessions, one JSON

TEST(KvarenaBenchEnv, ChromiumBesideTextAtOneAndEightSessionsInOneJson) {
  SKIP_WITHOUT_CHROMIUM();
  char tmpl[] = "/tmp/kvarena-test-bench-XXXXXX";
  ASSERT_TRUE(mkdtemp(tmpl));
  const fs::path out = fs::path(tmpl) / "bench.json";
  const std::string cmd = std::string(KVARENA_BIN) + " bench env --browser chromium --seconds 0.1 --resets 2 --steps 2 >" +
                          out.string() + " 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream in(out);
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_EQ(j["backends"].size(), 2u) << j.dump();
  for (size_t b = 0; b < 2; ++b) {
    const nlohmann::json& r = j["backends"][b];
    EXPECT_EQ(r["backend"], b == 0 ? "text" : "chromium");
    EXPECT_GT(r["reset_ms_median"].get<double>(), 0) << r.dump();
    EXPECT_GT(r["step_ms_median"].get<double>(), 0) << r.dump();
    ASSERT_EQ(r["concurrency"].size(), 2u) << r.dump();
    for (size_t i = 0; i < 2; ++i) {
      const nlohmann::json& level = r["concurrency"][i];
      EXPECT_EQ(level["sessions"], i == 0 ? 1 : 8) << r.dump();
      EXPECT_GT(level["steps_per_s"].get<double>(), 0) << r.dump();
      EXPECT_EQ(level["errors"], 0) << r.dump();
    }
  }
  fs::remove_all(tmpl);
}

// ---- kvarena run --observation som: screenshots beside the results, shown by report --html

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(KvarenaRunSom, EveryStepsScreenshotIsAFileBesideTheResultsAndTheViewerShowsIt) {
  SKIP_WITHOUT_CHROMIUM();
  char tmpl[] = "/tmp/kvarena-test-som-XXXXXX";
  ASSERT_TRUE(mkdtemp(tmpl));
  const fs::path dir = tmpl;
  const std::string db = (dir / "som.sqlite").string();
  const std::string run = std::string(KVARENA_BIN) + " run --suite " KVARENA_SOURCE_DIR
                          "/tasks/vwa-local --limit 1 --policies full --browser chromium --observation som "
                          "--max-steps 2 --max-new-tokens 16 --examples 0 --threads 1 --out " + db + " >" +
                          (dir / "run.log").string() + " 2>&1";
  ASSERT_EQ(std::system(run.c_str()), 0) << read_all(dir / "run.log");

  results::results_reader rd(db);
  const int64_t run_id = rd.runs().at(0).run_id;
  const results::task_result item = rd.task_results(run_id).at(0);
  const std::vector<results::step_row> steps = rd.steps(run_id, item.item);
  ASSERT_FALSE(steps.empty());
  for (const results::step_row& s : steps) {
    ASSERT_FALSE(s.screenshot_path.empty()) << "step " << s.step << " has no screenshot row";
    const std::string png = read_all(dir / s.screenshot_path);
    EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << dir / s.screenshot_path;
    EXPECT_GT(png.size(), 1000u);
    EXPECT_EQ(s.observation.find("\x89PNG"), std::string::npos) << "no image bytes in the steps table";
    EXPECT_EQ(s.observation.rfind("Tab 0", 0), 0u) << s.observation;
    EXPECT_NE(s.observation.find("] [A] ["), std::string::npos) << "VWA's Set-of-Marks list:\n" << s.observation;
  }
  EXPECT_EQ(rd.db().query_int("SELECT COUNT(*) FROM step_screenshots"), static_cast<int64_t>(steps.size()));

  const fs::path page = dir / "report" / "index.html";
  const std::string report = std::string(KVARENA_BIN) + " report " + db + " --html " + page.string() + " >" +
                             (dir / "report.log").string() + " 2>&1";
  ASSERT_EQ(std::system(report.c_str()), 0) << read_all(dir / "report.log");
  const fs::path items = dir / "report" / "index-items";
  std::vector<fs::path> pages;
  for (const fs::directory_entry& e : fs::directory_iterator(items)) pages.push_back(e.path());
  ASSERT_EQ(pages.size(), 1u);
  const std::string html = read_all(pages[0]);
  size_t images = 0;
  for (size_t at = html.find("<img src=\""); at != std::string::npos; at = html.find("<img src=\"", at + 1)) {
    const size_t from = at + 10, to = html.find('"', from);
    const fs::path src = items / html.substr(from, to - from);
    EXPECT_TRUE(fs::exists(src)) << "the page shows " << src << ", which is not there";
    ++images;
  }
  EXPECT_EQ(images, steps.size()) << "one screenshot per step on the item's page";
  EXPECT_NE(html.find("parsed action: <code>"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kvarena
