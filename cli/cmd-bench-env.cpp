// cmd-bench-env.cpp: `kvarena bench env [--env-url URL] [--seconds 2] [--sessions 1,8,64]
// [--browser text|chromium]` (chromium: both backends at 1 and 8 sessions by default):
// reset and step latency of the env HTTP API and steps/s at several session counts
// (tasks/bench-env.h). One JSON object on stdout. Registered under the `bench` command
// that cmd-bench.cpp creates (main() adds this after it).
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "bench-env.h"
#include "browser/chromium/chromium-process.h"
#include "cli-commands.h"

namespace kvarena::cli {

void add_bench_env_command(CLI::App& app, command_fn& run) {
  CLI::App* bench = app.get_subcommand("bench");  // throws if cmd-bench.cpp did not add it
  auto* sub = bench->add_subcommand("env", "Env API reset/step latency and steps/s with 1, 8 and 64 sessions");
  auto o = std::make_shared<tasks::bench_env_options>();
  sub->add_option("--env-url", o->env_url, "An env server to measure (default: start one with in-process sites)");
  auto* sessions = sub->add_option("--sessions", o->sessions,
                                   "Concurrent session counts (default 1,8,64; with --browser chromium 1,8)")
                       ->delimiter(',');
  sub->add_option("--seconds", o->seconds, "Seconds per concurrency level")->check(CLI::PositiveNumber);
  sub->add_option("--resets", o->resets, "Samples for reset_ms_median")->check(CLI::PositiveNumber);
  sub->add_option("--steps", o->steps, "Samples for step_ms_median")->check(CLI::PositiveNumber);
  sub->add_option("--browser", o->browser,
                  "chromium: measure the chromium backend and the text backend side by side, in one JSON "
                  "{\"backends\": [text, chromium]}")
      ->check(CLI::IsMember({"text", "chromium"}));
  sub->callback([&run, o, sessions] {
    // 64 Chromium sessions need more memory and cores than a test machine has; the
    // side-by-side comparison is at 1 and 8 unless asked otherwise.
    if (o->browser == "chromium" && sessions->count() == 0) o->sessions = {1, 8};
    run = [o] {
      if (o->browser == "text") {
        std::printf("%s\n", tasks::bench_env_json(tasks::run_bench_env(*o)).c_str());
        return 0;
      }
      if (o->env_url.empty() && !chromium_available()) {
        std::fprintf(stderr, "kvarena bench env: --browser chromium needs /usr/bin/chromium, which is missing; "
                             "install Debian's chromium package (scripts/setup.sh)\n");
        return 2;
      }
      tasks::bench_env_options text = *o;
      text.browser = "text";
      std::vector<tasks::bench_env_result> results = {tasks::run_bench_env(text), tasks::run_bench_env(*o)};
      std::printf("%s\n", tasks::bench_env_json(results).c_str());
      return 0;
    };
  });
}

}  // namespace kvarena::cli
