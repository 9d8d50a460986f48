// test-task-verdict.cpp: `kvarena tasks validate`'s verdicts (tasks/task-verdict.h) on task
// objects in VisualWebArena's raw format: full, degraded (a func: helper kvarena lacks),
// cannot_run (a fuzzy_match without a judge, a JavaScript locator without Chromium, a site
// without its URL, eval_vqa without --vqa-url) and what makes each run, and with
// --require-oracle the project's own rules as refusals; then the command itself on a small
// raw file (summary, --json, exit status, the judge flag).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "task/task.h"
#include "task-verdict.h"
#include "test-util.h"

namespace kvarena::tasks {
namespace {

// A VWA-style task: classifieds, string_match exact, with `extra` fields spliced in and
// `eval` replaced when given.
std::string raw_task(int id, const std::string& extra = "", const std::string& eval = "") {
  return R"({"task_id": )" + std::to_string(id) + R"(, "sites": ["classifieds"], "require_login": true,
    "storage_state": "./.auth/classifieds_state.json", "start_url": "__CLASSIFIEDS__", "intent": "What is it?",
    "require_reset": false, "viewport_size": {"width": 1280, "height": 2048}, )" + extra + R"( "eval": )" +
         (eval.empty() ? R"({"eval_types": ["string_match"], "reference_answers": {"exact_match": "blue"},
    "reference_url": "", "program_html": [], "string_note": "", "reference_answer_raw_annotation": "blue"})"
                       : eval) +
         "}";
}

// What a VWA task runs against: its own site by URL (--site classifieds=URL), as VWA does.
verdict_options real_sites() {
  verdict_options o;
  o.site_urls = {"classifieds"};
  return o;
}

task_verdict verdict(const std::string& json, bool require_oracle = false) {
  task_suite s = parse_tasks(json, "t.raw.json[0]");
  EXPECT_TRUE(s.ok()) << (s.errors.empty() ? "" : s.errors[0]);
  if (s.tasks.empty()) return {verdict_kind::refused, {}};
  tasks::verdict_options vo = real_sites();
  vo.require_oracle = require_oracle;
  return verdict_for(s.tasks[0], s.origins[0], vo);
}

std::string texts(const task_verdict& v) {
  std::string s;
  for (const verdict_reason& r : v.reasons) s += std::string(verdict_name(r.kind)) + ": " + r.text + "\n";
  return s;
}

TEST(TaskVerdict, AStringMatchTaskOnItsRealSiteRunsFully) {
  const task_verdict v = verdict(raw_task(1));
  EXPECT_EQ(v.kind, verdict_kind::full) << texts(v);
  EXPECT_TRUE(v.reasons.empty());
}

task_verdict verdict_with(const std::string& json, const verdict_options& o) {
  task_suite s = parse_tasks(json, "t.raw.json[0]");
  EXPECT_TRUE(s.ok()) << (s.errors.empty() ? "" : s.errors[0]);
  if (s.tasks.empty()) return {verdict_kind::refused, {}};
  return verdict_for(s.tasks[0], s.origins[0], o);
}

TEST(TaskVerdict, AVwaTaskOnALocalSiteNeedsTheRealSite) {
  // VWA's task refers to VWA's classifieds content (its ids, answers): on kvarena's local
  // classifieds it would score 0 for every policy. cannot_run, naming the flag that runs it.
  const task_verdict v = verdict_with(raw_task(1), verdict_options{});
  EXPECT_EQ(v.kind, verdict_kind::cannot_run) << texts(v);
  ASSERT_EQ(v.reasons.size(), 1u) << texts(v);
  EXPECT_NE(v.reasons[0].text.find("needs_real_site 'classifieds'"), std::string::npos) << texts(v);
  EXPECT_NE(v.reasons[0].text.find("--site classifieds=URL"), std::string::npos) << texts(v);
  verdict_options anyway;
  anyway.local_sites_for_real_tasks = true;  // asked for: judged on the local site
  EXPECT_EQ(verdict_with(raw_task(1), anyway).kind, verdict_kind::full);
  // A task written for kvarena's sites (its extension present) is not another project's.
  EXPECT_EQ(verdict_with(raw_task(1, R"("kvarena": {"note": "ours"},)"), verdict_options{}).kind, verdict_kind::full);
}

TEST(TaskVerdict, WhatEachPartNeedsAndWhatMakesItRun) {
  // fuzzy_match N/A: an LLM judge, as VWA; with one configured it runs fully.
  const std::string na = raw_task(2, "", R"({"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": "N/A"},
    "reference_url": "", "program_html": [], "string_note": "not possible"})");
  task_verdict v = verdict(na);
  EXPECT_EQ(v.kind, verdict_kind::cannot_run) << texts(v);
  EXPECT_NE(texts(v).find("needs an LLM judge, as VisualWebArena scores it: give --judge-url URL"), std::string::npos)
      << texts(v);
  verdict_options with_judge = real_sites();
  with_judge.judge = true;
  EXPECT_EQ(verdict_with(na, with_judge).kind, verdict_kind::full);
  // Every VWA helper exists; a lambda: locator needs Chromium.
  const std::string js = raw_task(3, "", R"J({"eval_types": ["program_html"], "reference_answers": null, "reference_url": "",
    "program_html": [{"url": "last", "locator": "func:reddit_get_latest_comment_content_by_username(__page__, 'u')",
                      "required_contents": {"must_include": ["x"]}},
                     {"url": "last", "locator": "lambda:(() => document.title)()",
                      "required_contents": {"exact_match": "y"}}]})J");
  v = verdict(js);
  EXPECT_EQ(v.kind, verdict_kind::cannot_run) << texts(v);
  ASSERT_EQ(v.reasons.size(), 1u) << texts(v);
  EXPECT_NE(v.reasons[0].text.find("needs --browser chromium"), std::string::npos) << texts(v);
  verdict_options chromium = real_sites();
  chromium.chromium = true;
  EXPECT_EQ(verdict_with(js, chromium).kind, verdict_kind::full);
  // An unknown helper is still named.
  v = verdict(raw_task(6, "", R"J({"eval_types": ["program_html"], "reference_answers": null, "reference_url": "",
    "program_html": [{"url": "func:no_such_helper()", "locator": "", "required_contents": {"must_include": ["x"]}}]})J"));
  EXPECT_EQ(v.kind, verdict_kind::degraded) << texts(v);
  EXPECT_NE(texts(v).find("func:no_such_helper: no such helper"), std::string::npos) << texts(v);
}

TEST(TaskVerdict, CannotRunSaysWhatItNeeds) {
  // A site kvarena has no stand-in for (VWA reddit tasks name wikipedia), page_image_query's
  // eval_vqa, and a fuzzy_match: each reason says what would make it run.
  std::string json = raw_task(4, "", R"({"eval_types": ["string_match", "page_image_query"],
    "reference_answers": {"fuzzy_match": "N/A"}, "reference_url": "", "program_html": [], "string_note": "no",
    "page_image_query": [{"eval_image_url": "x", "eval_vqa": [{"question": "q", "answer": "a"}]}]})");
  const std::string one = R"("sites": ["classifieds"])";
  json.replace(json.find(one), one.size(), R"("sites": ["classifieds", "wikipedia"])");
  const task_verdict v = verdict(json);
  EXPECT_EQ(v.kind, verdict_kind::cannot_run) << texts(v);
  ASSERT_EQ(v.reasons.size(), 3u) << texts(v);
  EXPECT_NE(v.reasons[0].text.find("site 'wikipedia'"), std::string::npos);
  EXPECT_NE(v.reasons[0].text.find("--site wikipedia=URL"), std::string::npos);
  EXPECT_NE(v.reasons[1].text.find("--vqa-url"), std::string::npos);
  EXPECT_NE(v.reasons[2].text.find("--judge-model"), std::string::npos);
  verdict_options all;
  all.judge = all.vqa = true;
  all.site_urls = {"classifieds", "wikipedia"};
  EXPECT_EQ(verdict_with(json, all).kind, verdict_kind::full) << texts(verdict_with(json, all));
  // A second tab on a site not in `sites` needs that site's URL too.
  std::string tabs = raw_task(7);
  const std::string start = R"("start_url": "__CLASSIFIEDS__")";
  tabs.replace(tabs.find(start), start.size(), R"("start_url": "__CLASSIFIEDS__ |AND| __WIKIPEDIA__/wiki/Bike")");
  EXPECT_NE(texts(verdict(tabs)).find("page on site 'wikipedia' (__WIKIPEDIA__)"), std::string::npos)
      << texts(verdict(tabs));
  EXPECT_EQ(verdict_with(tabs, all).kind, verdict_kind::full);
}

TEST(TaskVerdict, RequireOracleRefusesWhatTheProjectsSuitesMayNotLack) {
  const task_verdict v = verdict(raw_task(5), true);
  EXPECT_EQ(v.kind, verdict_kind::refused) << texts(v);
  EXPECT_NE(texts(v).find("kvarena: missing (every task needs the kvarena extension with an oracle plan)"),
            std::string::npos)
      << texts(v);
}

// The command: one raw file with a full, a degraded and an unloadable task.
TEST(TaskVerdict, ValidateCommandSummaryJsonAndExitStatus) {
  const auto dir = test::temp_dir("validate");
  const std::string ok_file = (dir / "ok.raw.json").string(), bad_file = (dir / "bad.raw.json").string();
  std::ofstream(ok_file) << "[" + raw_task(1) + "," +
                                raw_task(2, R"("overall_difficulty": "hrad",)",
                                         R"({"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": "N/A"},
    "reference_url": "", "program_html": [], "string_note": "no such item"})") +
                                "]";
  std::ofstream(bad_file) << "[" + raw_task(1) + R"(, {"task_id": 9, "sites": ["classifieds"]}])";
  auto run = [&](const std::string& args, std::string* out) {
    const std::string o = (dir / "out.txt").string();
    const int st = std::system((std::string(KVARENA_BIN) + " tasks validate " + args + " >" + o + " 2>/dev/null").c_str());
    *out = test::read_file(o);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  };
  std::string out;
  // On the local classifieds: both are another project's tasks on a site whose content is not theirs.
  EXPECT_EQ(run(ok_file, &out), 0);
  EXPECT_NE(out.find("2 tasks: 0 run fully, 0 degraded, 2 cannot run, 0 refused (1 warnings)"), std::string::npos)
      << out;
  EXPECT_NE(out.find("needs_real_site 'classifieds'"), std::string::npos) << out;
  EXPECT_EQ(run("--local-sites-for-real-tasks " + ok_file, &out), 0);
  EXPECT_NE(out.find("2 tasks: 1 run fully, 0 degraded, 1 cannot run, 0 refused (1 warnings)"), std::string::npos)
      << out;
  const std::string site = "--site classifieds=http://127.0.0.1:9 ";  // VWA's own classifieds, by URL
  EXPECT_EQ(run(site + ok_file, &out), 0);
  EXPECT_NE(out.find("2 tasks: 1 run fully, 0 degraded, 1 cannot run, 0 refused (1 warnings)"), std::string::npos)
      << out;
  EXPECT_EQ(run(site + "--judge-url http://127.0.0.1:9/v1 " + ok_file, &out), 0);  // a judge makes it run
  EXPECT_NE(out.find("2 tasks: 2 run fully, 0 degraded, 0 cannot run, 0 refused (1 warnings)"), std::string::npos)
      << out;
  EXPECT_EQ(run(site + "--json " + ok_file, &out), 0);
  EXPECT_NE(out.find(R"("task_id":1,"verdict":"full","reasons":[])"), std::string::npos) << out;
  EXPECT_NE(out.find(R"("task_id":2,"verdict":"cannot_run")"), std::string::npos) << out;
  EXPECT_EQ(run("--site nowhere=http://x " + ok_file, &out), 2);  // a usage error names the valid sites
  EXPECT_EQ(run(site + bad_file, &out), 1);
  EXPECT_NE(out.find("2 tasks: 1 run fully, 0 degraded, 0 cannot run, 1 refused"), std::string::npos) << out;
  EXPECT_EQ(run("--require-oracle " + ok_file, &out), 1);  // no oracle plans
}

// `kvarena tasks evaluators`: every eval type and the helpers the sites register.
TEST(TaskVerdict, EvaluatorsCommandListsTypesAndHelpers) {
  const auto dir = test::temp_dir("evaluators");
  const std::string o = (dir / "out.txt").string();
  ASSERT_EQ(std::system((std::string(KVARENA_BIN) + " tasks evaluators >" + o).c_str()), 0);
  const std::string out = test::read_file(o);
  for (const char* want : {"string_match", "url_match", "program_html", "page_image_query", "fuzzy_match",
                           "reddit_get_post_url", "shopping_get_latest_order_url"})
    EXPECT_NE(out.find(want), std::string::npos) << want << "\n" << out;
}

}  // namespace
}  // namespace kvarena::tasks
