// bench-env.h: `kvarena bench env`: how fast the env HTTP API resets and steps, with the
// text (or chromium) backend and in-process sites (a tenant per session), over loopback HTTP with the
// libcurl client, as an agent sees it.
//   reset_ms_median  POST /v1/sessions of a logged-in classifieds task (tenant copy, login,
//                    start page, observation), one session at a time
//   step_ms_median   POST /v1/sessions/{id}/step, one session at a time; the steps alternate
//                    between clicking "All listings" and "Home" (a page fetch, parse and
//                    observation each)
//   concurrency      for each session count: that many threads, each looping create, a few
//                    steps, delete for `seconds`; steps per second over all threads, and the
//                    errors (exceptions, non-2xx, action errors) counted
// JSON (DESIGN.md, Contracts): {"backend", "reset_ms_median", "step_ms_median",
// "concurrency": [{"sessions", "steps_per_s", "errors"}], ...}.
#pragma once
#include <string>
#include <vector>

namespace kvarena::tasks {

struct bench_env_options {
  std::string env_url;                  // "" = start an env server with in-process sites
  std::string browser = "text";         // the sessions' backend: "text" or "chromium"
  std::vector<int> sessions = {1, 8, 64};
  double seconds = 2.0;                 // per concurrency level
  int resets = 50;                      // samples for reset_ms_median
  int steps = 200;                      // samples for step_ms_median
  int steps_per_session = 10;           // in the concurrency loops
};

struct bench_env_level {
  int sessions = 0;
  double steps_per_s = 0;
  double resets_per_s = 0;
  long long steps = 0;
  long long errors = 0;
  std::string first_error;  // the first error's message, "" when none
};

struct bench_env_result {
  std::string backend = "text";
  double reset_ms_median = 0, reset_ms_p90 = 0;
  double step_ms_median = 0, step_ms_p90 = 0;
  std::vector<bench_env_level> levels;
};

bench_env_result run_bench_env(const bench_env_options& opt);
std::string bench_env_json(const bench_env_result& r);
// Several backends side by side: {"backends": [<bench_env_json of each>]}.
std::string bench_env_json(const std::vector<bench_env_result>& results);

}  // namespace kvarena::tasks
