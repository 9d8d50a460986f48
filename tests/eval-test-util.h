// eval-test-util.h: what the evaluator tests share (test-eval.cpp, test-eval-html.cpp): a
// fake page that records what the evaluator did with it, scripted fuzzy judges, and small
// task builders. Everything is in an anonymous namespace: each test file has its own copy.
#pragma once
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "eval/early-stop.h"
#include "eval/eval-judge.h"
#include "eval/eval-locator.h"
#include "eval/eval-text.h"
#include "eval/eval-url-match.h"
#include "eval/evaluator.h"
#include "task/task.h"

using namespace kvarena;

namespace {

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A page that records what the evaluator did with it.
class fake_page : public page_probe {
 public:
  std::string url = "http://127.0.0.1:7770/";
  std::string html = "<html><body>whole page</body></html>";
  std::map<std::string, std::string> values;  // locator -> its value
  std::set<std::string> throwing;             // locators whose evaluation throws
  std::set<std::string> unreachable;          // URLs that do not open
  std::set<std::string> failing_prep;         // prep actions that fail
  std::vector<std::string> log;

  std::string current_url() override { return url; }
  bool navigate(const std::string& to, std::string* err) override {
    log.push_back("goto " + to);
    if (unreachable.count(to)) {
      *err = "connection refused";
      return false;
    }
    url = to;
    return true;
  }
  std::string page_html() override {
    log.push_back("html");
    return html;
  }
  std::optional<std::string> eval_locator(const std::string& locator) override {
    log.push_back("locate " + locator);
    if (throwing.count(locator)) throw std::runtime_error("TypeError: null has no outerText");
    auto it = values.find(locator);
    if (it == values.end()) return std::nullopt;
    return it->second;
  }
  bool run_prep_action(const std::string& js, std::string* err) override {
    log.push_back("prep " + js);
    if (failing_prep.count(js)) {
      *err = "element not found";
      return false;
    }
    return true;
  }
};

// A judge that answers with a fixed reply, or throws, or reports an error.
class scripted_judge : public fuzzy_judge {
 public:
  std::string reply = "correct";
  std::string error;
  bool throws = false;
  int calls = 0;
  judge_request last;
  judge_result judge(const judge_request& req) override {
    ++calls;
    last = req;
    if (throws) throw std::runtime_error("model crashed");
    return {reply, error};
  }
  std::string name() override { return "scripted"; }
};

inline task string_task(reference_answer_set refs, const std::string& note = "") {
  task t;
  t.task_id = 1;
  t.sites = {"shopping"};
  t.start_url = "http://127.0.0.1:7770";
  t.intent = "How much does the red bike cost?";
  t.eval.eval_types = {"string_match"};
  t.eval.reference_answers = std::move(refs);
  if (!note.empty()) t.eval.string_note = note;
  return t;
}

inline eval_result score_answer(const task& t, const std::string& answer, fuzzy_judge* judge = nullptr) {
  eval_inputs in;
  in.answer = answer;
  in.judge = judge;
  return evaluate_task(t, in);
}

inline double must_include(std::vector<std::string> items, const std::string& answer) {
  reference_answer_set r;
  r.must_include = std::move(items);
  return score_answer(string_task(r), answer).score;
}

inline double required(std::vector<std::string> conditions, const std::string& answer) {
  reference_answer_set r;
  r.required_values = std::move(conditions);
  return score_answer(string_task(r), answer).score;
}

inline task url_task(const std::string& reference, std::optional<std::string> note) {
  task t;
  t.task_id = 2;
  t.sites = {"reddit"};
  t.start_url = "http://127.0.0.1:9999";
  t.intent = "Open the post";
  t.eval.eval_types = {"url_match"};
  t.eval.reference_url = reference;
  t.eval.url_note = std::move(note);
  return t;
}

inline double url_score(const std::string& reference, std::optional<std::string> note, const std::string& page_url) {
  fake_page page;
  page.url = page_url;
  eval_inputs in;
  in.page = &page;
  return evaluate_task(url_task(reference, std::move(note)), in).score;
}

inline program_html_target target(const std::string& url, const std::string& locator,
                           reference_answer_set rc) {
  program_html_target p;
  p.url = url;
  p.locator = locator;
  p.required_contents = std::move(rc);
  return p;
}

inline reference_answer_set includes(std::vector<std::string> items) {
  reference_answer_set r;
  r.must_include = std::move(items);
  return r;
}

inline task html_task(std::vector<program_html_target> targets) {
  task t;
  t.task_id = 3;
  t.sites = {"classifieds"};
  t.start_url = "http://127.0.0.1:9980";
  t.intent = "Post a comment";
  t.eval.eval_types = {"program_html"};
  t.eval.program_html = std::move(targets);
  return t;
}

inline eval_result run_html(const task& t, fake_page& page, const eval_helper_registry* helpers = nullptr,
                     fuzzy_judge* judge = nullptr) {
  eval_inputs in;
  in.page = &page;
  in.helpers = helpers;
  in.judge = judge;
  return evaluate_task(t, in);
}

}  // namespace
