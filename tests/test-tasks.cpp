// test-tasks.cpp: the committed task suites (tasks/vwa-local, tasks/long-horizon, tasks/vwa-visual), their
// generator, their checks, and the oracle that must solve every task through the real env
// HTTP API on loopback (the CI check that a task, its plan and the sites agree).
//   - the generator reproduces the committed files byte for byte (drift is caught; the
//     message says how to regenerate) and is deterministic;
//   - the suites validate and cover what the issue asks (sizes, sites, every eval type and
//     locator form, multi-site tasks, difficulty, memory facts >= 5 steps);
//   - the oracle solves 100% of both suites (sessions run concurrently; a failure names the
//     task, its file, the step and why);
//   - negative checks, so the oracle test can fail: an agent that stops at once scores 0 on
//     every task, a wrong answer scores 0, and a plan missing its final action scores 0.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

#include <unistd.h>

#include "bench-env.h"
#include "client/env-client.h"
#include "generator/generate.h"
#include "oracle-agent.h"
#include "oracle-plan.h"
#include "server/env-server.h"
#include "eval/vwa-helpers/site-eval-helpers.h"
#include "suite-check.h"
#include "test-browser-util.h"

namespace kvarena::tasks {
namespace {

namespace fs = std::filesystem;

const fs::path k_tasks_dir = fs::path(KVARENA_SOURCE_DIR) / "tasks";
constexpr int k_jobs = 16;

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The generator's output, computed once.
const generated_suites& generated() {
  static const generated_suites g = generate_suites(k_default_task_seed);
  return g;
}

// One env server with in-process sites for the whole file.
class env_fixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = start_local_env_server(k_jobs).release();
    env_client_options o;
    o.total_timeout_ms = 30000;
    client_ = new env_client(server_->base_url(), o);
  }
  static void TearDownTestSuite() {
    delete client_;
    client_ = nullptr;
    delete server_;
    server_ = nullptr;
  }
  static env_server* server_;
  static env_client* client_;
};
env_server* env_fixture::server_ = nullptr;
env_client* env_fixture::client_ = nullptr;

suite_check_result load(const std::string& suite) {
  return check_suite((k_tasks_dir / suite).string(), suite == "long-horizon");
}

task_extension extension_of(const task& t) {
  task_extension ext;
  std::string err;
  EXPECT_TRUE(parse_extension(t.kvarena, &ext, &err)) << err;
  return ext;
}

task with_plan(task t, const task_extension& ext) {
  t.kvarena = extension_to_json(ext);
  return t;
}

// ---- the plan format and observation lookup ----

TEST(OraclePlan, ExtensionRoundTrips) {
  task_extension ext;
  ext.template_name = "x.y";
  plan_step go;
  go.action = "goto";
  go.url = "__SHOPPING__/cart";
  plan_step ty;
  ty.action = "type";
  ty.target = {"textbox", "Title (required)", false, 0};
  ty.text = "a ] b";
  ty.enter = true;
  ty.expect = {"Saved"};
  plan_step cl;
  cl.action = "click";
  cl.target = {"link", "My Cart", true, 1};
  plan_step st;
  st.action = "stop";
  st.answer = "N/A";
  ext.plan = {go, ty, cl, st};
  ext.memory = {{"$1.00", 0, 3}};
  task_extension back;
  std::string err;
  ASSERT_TRUE(parse_extension(extension_to_json(ext), &back, &err)) << err;
  EXPECT_EQ(back, ext);
  EXPECT_EQ(step_action_text(ty, 12), "type [12] [a ] b] [1]");
  EXPECT_EQ(step_action_text(st, -1), "stop [N/A]");
}

TEST(OraclePlan, RejectsMalformedPlans) {
  task_extension ext;
  std::string err;
  EXPECT_FALSE(parse_extension("", &ext, &err));
  EXPECT_FALSE(parse_extension(R"({"oracle": []})", &ext, &err));
  EXPECT_FALSE(parse_extension(R"({"oracle": [{"action": "fly"}]})", &ext, &err));
  EXPECT_NE(err.find("unknown action"), std::string::npos) << err;
  EXPECT_FALSE(parse_extension(R"({"oracle": [{"action": "click", "name": "x"}, {"action": "stop", "answer": ""}]})",
                               &ext, &err));
  EXPECT_NE(err.find("role"), std::string::npos) << err;
  EXPECT_FALSE(parse_extension(R"({"oracle": [{"action": "goto", "url": "http://x"}]})", &ext, &err));
  EXPECT_NE(err.find("last step must be stop"), std::string::npos) << err;
}

TEST(OraclePlan, FindsElementsByRoleAndName) {
  const std::string obs =
      "Tab 0 (current): Home\n\n[1] RootWebArea 'Home' focused: True\n\t[12] link 'Cars'\n"
      "\t\t[13] link \"Men's Clothing\"\n\t[14] link 'Cars'\n\t[20] button 'Add \\'x\\' to cart'\n"
      "\t[21] link 'My Cart (3)'\n\t[22] StaticText 'tab\\there'\n";
  auto els = parse_observation(obs);
  ASSERT_EQ(els.size(), 7u);
  EXPECT_EQ(els[2].name, "Men's Clothing");
  EXPECT_EQ(els[4].name, "Add 'x' to cart");
  EXPECT_EQ(els[6].name, "tab\there");
  std::string why;
  EXPECT_EQ(find_element(els, {"link", "Cars", false, 0}, &why), 12);
  EXPECT_EQ(find_element(els, {"link", "Cars", false, 1}, &why), 14);
  EXPECT_EQ(find_element(els, {"link", "My Cart", true, 0}, &why), 21);
  EXPECT_EQ(find_element(els, {"button", "Add 'x' to cart", false, 0}, &why), 20);
  EXPECT_FALSE(find_element(els, {"link", "My Cart", false, 0}, &why));
  EXPECT_NE(why.find("'My Cart (3)'"), std::string::npos) << why;  // names the candidates
}

// A listing description with both quote kinds, as the classifieds site has one: the text
// browser prints it as Python's repr does (VWA's observation format), with the single
// quotes escaped, so it is not in the observation verbatim; the oracle's "expect" finds it
// by the element's unescaped name (issue 41).
TEST(OraclePlan, ShowsTextsWithBothQuoteKinds) {
  const std::string description = "Fits riders 5'6\" to 6'0\".";
  const std::string obs = browser_test::tree_of(
      browser_test::page("Bike", "<p>" + description + "</p><p>Men's bike</p><p>A \"light\" frame</p>"), true);
  EXPECT_NE(obs.find("StaticText 'Fits riders 5\\'6\" to 6\\'0\".'"), std::string::npos) << obs;
  EXPECT_EQ(obs.find(description), std::string::npos) << "repr escapes the single quotes, as Python";
  EXPECT_TRUE(observation_shows(obs, description)) << obs;
  EXPECT_TRUE(observation_shows(obs, "5'6\" to 6'0"));
  EXPECT_TRUE(observation_shows(obs, "Men's bike"));
  EXPECT_TRUE(observation_shows(obs, "A \"light\" frame"));
  EXPECT_FALSE(observation_shows(obs, "5'7\""));
}

// ---- the func: helpers of the sites (envs/eval/vwa-helpers/site-eval-helpers.h) ----

// Pages by URL; no JavaScript.
class fake_page : public page_probe {
 public:
  std::map<std::string, std::string> pages;
  std::string url;
  std::string current_url() override { return url; }
  bool navigate(const std::string& u, std::string* err) override {
    if (!pages.count(u)) {
      *err = "HTTP 404";
      return false;
    }
    url = u;
    return true;
  }
  std::string page_html() override { return pages[url]; }
  std::optional<std::string> eval_locator(const std::string&) override { return std::nullopt; }
  bool run_prep_action(const std::string&, std::string*) override { return false; }
};

std::optional<std::string> call(const char* helper, page_probe& page, std::vector<std::string> args) {
  const eval_site_helper_fn* fn = sites::site_eval_helpers().find(helper);
  if (!fn) throw std::runtime_error(std::string("no helper ") + helper);
  static const std::map<std::string, std::string> no_sites;
  return (*fn)(eval_helper_call{page, args, no_sites});
}

TEST(SiteEvalHelpers, LatestListingAndOrderComeFromTheAccountPages) {
  fake_page page;
  const std::string base = "http://127.0.0.1:9/t-1/classifieds";
  page.pages[base + "/my/listings"] =
      "<header><a href=\"/t-1/classifieds/item/3\">nav</a></header><main><a href=\"/t-1/classifieds/post\">Post</a>"
      "<table><tr><td><a href=\"/t-1/classifieds/item/241\">New</a></td><td><a "
      "href=\"/t-1/classifieds/item/241/edit\">Edit</a></td></tr><tr><td><a "
      "href=\"/t-1/classifieds/item/8\">Old</a></td></tr></table></main>";
  EXPECT_EQ(call("classifieds_get_latest_listing_url", page, {base}), base + "/item/241");
  page.pages[base + "/my/listings"] = "<main><p>No listings.</p></main>";
  EXPECT_EQ(call("classifieds_get_latest_listing_url", page, {base + "/"}), std::nullopt);
  EXPECT_THROW(call("classifieds_get_latest_listing_url", page, {"http://127.0.0.1:9/elsewhere"}), std::runtime_error);

  const std::string shop = "http://127.0.0.1:9/t-1/shopping";
  page.pages[shop + "/orders"] = "<main><a href=\"/t-1/shopping/orders/000000191\">View Order</a></main>";
  EXPECT_EQ(call("shopping_get_latest_order_url", page, {shop}), shop + "/orders/000000191");
}

TEST(SiteEvalHelpers, RedditPostUrl) {
  fake_page page;
  const std::string base = "http://127.0.0.1:9/t-1/reddit";
  EXPECT_EQ(call("reddit_get_post_url", page, {base + "/f/books/12/a-slug?sort=top"}), base + "/f/books/12/a-slug");
  page.pages[base + "/comment/7"] = "<main><p>Comment on <a href=\"/t-1/reddit/f/books/12/a-slug\">A</a></p></main>";
  EXPECT_EQ(call("reddit_get_post_url", page, {base + "/comment/7"}), base + "/f/books/12/a-slug");
  EXPECT_EQ(call("reddit_get_post_url", page, {base + "/forums"}), std::nullopt);
}

TEST(SiteEvalHelpers, ResolvesHrefs) {
  EXPECT_EQ(sites::resolve_site_href("http://h:1/t/shop", "/t/shop/cart"), "http://h:1/t/shop/cart");
  EXPECT_EQ(sites::resolve_site_href("http://h:1/t/shop/", "cart"), "http://h:1/t/shop/cart");
  EXPECT_EQ(sites::resolve_site_href("http://h:1/t/shop", "https://x.org/a"), "https://x.org/a");
}

// ---- generator and committed files ----

TEST(TaskGenerator, CommittedSuitesMatchTheGenerator) {
  std::set<std::string> expected;
  std::vector<std::string> differ;
  for (const auto& [rel, text] : suite_files(generated())) {
    expected.insert(rel);
    if (read_file(k_tasks_dir / rel) != text) differ.push_back(rel);
  }
  for (const char* suite : {"vwa-local", "long-horizon", "vwa-visual"})
    for (const auto& e : fs::directory_iterator(k_tasks_dir / suite))
      if (e.path().extension() == ".json" && !expected.count(std::string(suite) + "/" + e.path().filename().string()))
        differ.push_back(std::string(suite) + "/" + e.path().filename().string() + " (not made by the generator)");
  std::string list;
  for (size_t i = 0; i < differ.size() && i < 20; ++i) list += "\n  tasks/" + differ[i];
  EXPECT_TRUE(differ.empty()) << differ.size()
                              << " task file(s) differ from the generator's output (site data or templates "
                                 "changed?); regenerate with `kvarena tasks generate --out tasks` and review the diff:"
                              << list;
}

TEST(TaskGenerator, IsDeterministic) {
  auto again = suite_files(generate_suites(k_default_task_seed));
  EXPECT_EQ(again, suite_files(generated()));
}

// The forum shows a score of one as "1 point" (and -1 as "-1 point"); on site seeds 152
// and 161 a task's score is one, and the generator once expected "1 points" there, so the
// oracle failed those tasks (long-horizon 22 of seed 152, vwa-local 80 of seed 161).
TEST(TaskGenerator, AScoreOfOneIsOnePoint) {
  const std::regex one_point(R"((^|[^0-9])-?1 point([^s]|$))"), one_points(R"((^|[^0-9])-?1 points)");
  for (uint64_t seed : {152, 161}) {
    int with_one = 0;
    for (const auto& [rel, text] : suite_files(generate_suites(seed))) {
      EXPECT_FALSE(std::regex_search(text, one_points)) << "seed " << seed << " " << rel;
      with_one += std::regex_search(text, one_point);
    }
    EXPECT_GE(with_one, 1) << "seed " << seed << ": no task with a score of one (the check would be empty)";
  }
}

TEST(TaskGenerator, WritesWhatItGenerates) {
  fs::path dir = fs::temp_directory_path() / ("kvarena-tasks-" + std::to_string(::getpid()));
  std::string err;
  ASSERT_TRUE(write_suites(generated(), dir.string(), &err)) << err;
  for (const auto& [rel, text] : suite_files(generated())) EXPECT_EQ(read_file(dir / rel), text) << rel;
  // What was written loads back to the same tasks, and writes back to the same text.
  for (const char* suite : {"vwa-local", "long-horizon", "vwa-visual"}) {
    auto r = check_suite((dir / suite).string(), std::string(suite) == "long-horizon");
    EXPECT_TRUE(r.ok()) << (r.errors.empty() ? "" : r.errors.front());
    const auto& want = generated().suites.at(suite);
    ASSERT_EQ(r.tasks.size(), want.size()) << suite;
    for (size_t i = 0; i < r.tasks.size(); ++i)
      EXPECT_TRUE(task_file_text(r.tasks[i]) == task_file_text(want[i]))
          << suite << " task " << r.tasks[i].task_id << " changes when loaded and written back";
  }
  fs::remove_all(dir);
}

// ---- validation and coverage ----

TEST(TaskSuites, Validate) {
  for (const char* suite : {"vwa-local", "long-horizon", "vwa-visual"}) {
    auto r = load(suite);
    std::string errs;
    for (size_t i = 0; i < r.errors.size() && i < 10; ++i) errs += "\n  " + r.errors[i];
    EXPECT_TRUE(r.ok()) << suite << ": " << r.errors.size() << " problem(s):" << errs;
  }
}

TEST(TaskSuites, SuitesHaveTheirSizeEverySiteAndEvaluatorFormAndLongHorizonFactsUsedFarLater) {
  auto local = load("vwa-local");
  auto longh = load("long-horizon");
  EXPECT_GE(local.tasks.size(), 90u);
  EXPECT_GE(longh.tasks.size(), 30u);

  std::set<std::string> sites, kinds, locators, page_urls, url_notes;
  int multi_site = 0;
  for (const task& t : local.tasks) {
    for (const auto& s : t.sites) sites.insert(s);
    if (t.sites.size() > 1) ++multi_site;
    EXPECT_TRUE(t.reasoning_difficulty && t.visual_difficulty && t.overall_difficulty) << t.task_id;
    for (const auto& e : t.eval.eval_types) kinds.insert(e);
    if (const auto& a = t.eval.reference_answers) {
      if (a->exact_match) kinds.insert("exact_match");
      if (a->must_include) kinds.insert("must_include");
      if (a->required_values) kinds.insert("required_values");
      if (a->fuzzy_match) kinds.insert(a->fuzzy_match->is_na() ? "N/A" : "fuzzy_match");
    }
    if (t.eval.url_note) url_notes.insert(*t.eval.url_note);
    if (t.eval.program_html)
      for (const auto& p : *t.eval.program_html) {
        locators.insert(p.locator.empty() ? "whole page" : p.locator.rfind("func:", 0) == 0 ? "func" : "querySelector");
        if (p.locator.find(".value") != std::string::npos) locators.insert("value");
        page_urls.insert(p.url == "last" ? "last" : p.url.rfind("func:", 0) == 0 ? "func" : "url");
      }
  }
  for (const char* s : {"classifieds", "shopping", "reddit"}) EXPECT_TRUE(sites.count(s)) << s;
  for (const char* k : {"string_match", "url_match", "program_html", "exact_match", "must_include", "required_values",
                        "fuzzy_match", "N/A"})
    EXPECT_TRUE(kinds.count(k)) << k;
  for (const char* n : {"EXACT", "GOLD in PRED"}) EXPECT_TRUE(url_notes.count(n)) << n;
  for (const char* l : {"whole page", "querySelector", "value", "func"}) EXPECT_TRUE(locators.count(l)) << l;
  for (const char* u : {"last", "func", "url"}) EXPECT_TRUE(page_urls.count(u)) << u;
  EXPECT_GE(multi_site, 4);

  for (const task& t : longh.tasks) {
    task_extension ext = extension_of(t);
    ASSERT_FALSE(ext.memory.empty()) << t.task_id;
    for (const memory_fact& f : ext.memory) EXPECT_GE(f.used_step - f.seen_step, k_min_memory_distance) << t.task_id;
  }
}

TEST(TaskSuites, ValidationCatchesBrokenExtensions) {
  task t = generated().suites.at("vwa-local").front();
  task_extension ext = extension_of(t);
  ext.plan.front().url = "__REDDIT__/x";
  ext.plan.front().action = "goto";
  auto errs = check_task_extension(with_plan(t, ext), "t.json", false);
  ASSERT_FALSE(errs.empty());
  EXPECT_NE(errs.front().find("__REDDIT__"), std::string::npos) << errs.front();
  ext = extension_of(t);
  ext.memory = {{"fact", 0, 2}};
  errs = check_task_extension(with_plan(t, ext), "t.json", true);
  EXPECT_FALSE(errs.empty());
  t.kvarena.clear();
  EXPECT_FALSE(check_task_extension(t, "t.json", false).empty());
}

// ---- the oracle through the env HTTP API ----

class Oracle : public env_fixture {};

void expect_all_solved(const std::string& suite, const suite_check_result& loaded, env_client& client) {
  oracle_run_options opt;
  opt.jobs = k_jobs;
  auto r = run_oracle_suite(client, loaded.tasks, loaded.origins, opt);
  for (const auto& t : r.results)
    if (!t.solved) ADD_FAILURE() << suite << " task " << t.task_id << " (" << t.origin << ") not solved: " << t.reason;
  std::fprintf(stderr, "[oracle] %s: %zu/%zu solved in %.2f s\n", suite.c_str(), r.solved, r.results.size(), r.wall_s);
  EXPECT_TRUE(r.all_solved());
}

TEST_F(Oracle, SolvesVwaLocal) {
  auto loaded = load("vwa-local");
  ASSERT_FALSE(loaded.tasks.empty());
  expect_all_solved("vwa-local", loaded, *client_);
}

TEST_F(Oracle, SolvesVwaVisual) {
  auto loaded = load("vwa-visual");
  ASSERT_FALSE(loaded.tasks.empty());
  expect_all_solved("vwa-visual", loaded, *client_);
}

TEST_F(Oracle, SolvesLongHorizon) {
  auto loaded = load("long-horizon");
  ASSERT_FALSE(loaded.tasks.empty());
  expect_all_solved("long-horizon", loaded, *client_);
}

// An agent that stops at once must score 0 on every task: no task is solved by the start
// state, so the oracle test above can fail.
TEST_F(Oracle, DoingNothingScoresZeroEverywhere) {
  for (const char* suite : {"vwa-local", "long-horizon", "vwa-visual"}) {
    auto loaded = load(suite);
    std::vector<task> idle;
    for (const task& t : loaded.tasks) {
      task_extension ext = extension_of(t);
      plan_step stop;
      stop.action = "stop";
      ext.plan = {stop};
      ext.memory.clear();
      idle.push_back(with_plan(t, ext));
    }
    oracle_run_options opt;
    opt.jobs = k_jobs;
    auto r = run_oracle_suite(*client_, idle, loaded.origins, opt);
    for (const auto& res : r.results)
      EXPECT_TRUE(!res.solved && res.score == 0) << suite << " task " << res.task_id << " scores " << res.score
                                                 << " without any action";
  }
}

// A wrong final answer, or a plan without its final action, scores 0.
TEST_F(Oracle, PerturbedPlansScoreZero) {
  auto loaded = load("vwa-local");
  std::vector<task> bad;
  std::vector<std::string> what;
  for (const task& t : loaded.tasks) {
    task_extension ext = extension_of(t);
    bool answers = t.eval.reference_answers.has_value();
    if (answers) {
      ext.plan.back().answer = "I could not find it, sorry";  // not N/A either
      what.push_back("a wrong answer");
    } else if (ext.plan.size() >= 2) {
      ext.plan.erase(ext.plan.end() - 2);  // the submit / vote / last navigation
      what.push_back("the last action dropped");
    } else {
      continue;
    }
    bad.push_back(with_plan(t, ext));
  }
  oracle_run_options opt;
  opt.jobs = k_jobs;
  auto r = run_oracle_suite(*client_, bad, {}, opt);
  for (size_t i = 0; i < r.results.size(); ++i)
    EXPECT_FALSE(r.results[i].solved) << "task " << r.results[i].task_id << " is still solved with " << what[i];
}

TEST_F(Oracle, ReportsTheFailingStep) {
  task t = generated().suites.at("vwa-local").front();
  task_extension ext = extension_of(t);
  ext.plan.front().action = "click";
  ext.plan.front().target = {"link", "No such link anywhere", false, 0};
  auto r = run_oracle_task(*client_, with_plan(t, ext), "x.json");
  EXPECT_FALSE(r.solved);
  EXPECT_NE(r.reason.find("step 0"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("No such link anywhere"), std::string::npos) << r.reason;
}

// ---- bench env (small: the contract keys and no errors) ----

TEST_F(Oracle, BenchEnvReportsTheContractKeys) {
  bench_env_options o;
  o.env_url = server_->base_url();
  o.sessions = {1, 4};
  o.seconds = 0.3;
  o.resets = 5;
  o.steps = 10;
  auto r = run_bench_env(o);
  std::string j = bench_env_json(r);
  for (const char* key : {"\"backend\"", "\"reset_ms_median\"", "\"step_ms_median\"", "\"concurrency\"",
                          "\"sessions\"", "\"steps_per_s\"", "\"errors\""})
    EXPECT_NE(j.find(key), std::string::npos) << key << " in " << j;
  ASSERT_EQ(r.levels.size(), 2u);
  for (const auto& l : r.levels) {
    EXPECT_EQ(l.errors, 0) << l.first_error;
    EXPECT_GT(l.steps_per_s, 0);
  }
  EXPECT_GT(r.reset_ms_median, 0);
}

}  // namespace
}  // namespace kvarena::tasks
