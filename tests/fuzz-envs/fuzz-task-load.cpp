// fuzz-task-load.cpp: libFuzzer target for the task loader (envs/task/task.h), which reads
// task JSON from files and from env API requests, and for the evaluators run on whatever
// loaded. Checks, beyond "no crash, no sanitizer report":
//   - every task that loads writes back to JSON that loads again, equal (round trip);
//   - placeholder substitution and evaluation (deterministic judge, a fake page whose
//     HTML, URL and locator values come from the input) never throw, and give a score in
//     [0, 1] with success only at 1.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "eval/evaluator.h"
#include "task/task.h"

using namespace kvarena;

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz-task-load: %s\n", what);
  std::abort();
}

// A page made of the fuzz input: any locator evaluates to a slice of it.
class input_page : public page_probe {
 public:
  explicit input_page(const std::string& text) : text_(text), url_(text.substr(0, 64)) {}
  std::string current_url() override { return url_; }
  bool navigate(const std::string& url, std::string* err) override {
    if (url.size() % 3 == 0) {
      *err = "refused";
      return false;
    }
    url_ = url;
    return true;
  }
  std::string page_html() override { return text_; }
  std::optional<std::string> eval_locator(const std::string& locator) override {
    if (locator.size() % 2) return std::nullopt;
    return text_.substr(0, locator.size());
  }
  bool run_prep_action(const std::string& js, std::string* err) override { return js.size() % 2 == 0; }

 private:
  std::string text_;
  std::string url_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  task_suite suite = parse_tasks(input, "fuzz.json");
  if (suite.tasks.size() != suite.origins.size()) fail("tasks and origins differ in number");

  eval_helper_registry helpers;
  helpers.add("echo", [](page_probe& p, const std::vector<std::string>& args) -> std::optional<std::string> {
    if (args.empty()) return std::nullopt;
    if (args[0] == "throw") throw std::runtime_error("helper threw");
    return args[0] + p.current_url();
  });

  for (task& t : suite.tasks) {
    std::string written = task_to_json(t);
    task_suite back = parse_tasks(written, "written.json");
    if (!back.ok() || back.tasks.size() != 1) fail("a loaded task does not load again after writing");
    if (!(back.tasks[0] == t)) fail("round trip changed the task");
    if (task_to_json(back.tasks[0]) != written) fail("writing is not stable");

    task inst = t;
    substitute_placeholders(inst, {{"shopping", "http://127.0.0.1:7770/"}, {"reddit", "http://localhost:9999"},
                                   {"classifieds", "http://127.0.0.1:9980"}, {"homepage", "http://h\"q\\"}});
    (void)parse_tasks(task_to_json(inst), "instantiated.json");

    input_page page(input);
    eval_inputs in;
    in.answer = input.substr(input.size() / 2);
    in.page = &page;
    in.helpers = &helpers;
    eval_result r = evaluate_task(inst, in);
    if (!(r.score >= 0 && r.score <= 1)) fail("score out of [0, 1]");
    if (r.success != (r.score == 1 && r.status == eval_status::scored)) fail("success disagrees with score");
    if (r.evaluators.size() != inst.eval.eval_types.size()) fail("one result per eval type");
  }
  return 0;
}
