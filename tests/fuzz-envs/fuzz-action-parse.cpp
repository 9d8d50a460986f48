// fuzz-action-parse.cpp: libFuzzer target for the action grammar (envs/eval/action-parse.h),
// which reads untrusted model output. Checks, beyond "no crash, no sanitizer report":
//   - a successful parse round-trips: parse_action(to_string(a)) succeeds with the same
//     action (kind, id, text, flag, key, direction, tab, url, answer);
//   - a failed parse is kind none with a non-empty message, and messages are valid UTF-8
//     (they go into prompts and JSON);
//   - the early-stop rules accept any sequence of results.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "eval/action-parse.h"
#include "eval/early-stop.h"

using namespace kvarena;

namespace {

[[noreturn]] void fail(const char* what, const std::string& input) {
  std::fprintf(stderr, "fuzz-action-parse: %s (input %zu bytes)\n", what, input.size());
  std::abort();
}

bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return false;
    i += n;
  }
  return true;
}

bool same_fields(const action& a, const action& b) {
  return a.kind == b.kind && a.element_id == b.element_id && a.text == b.text &&
         a.press_enter == b.press_enter && a.key == b.key && a.direction == b.direction &&
         a.tab == b.tab && a.url == b.url && a.answer == b.answer;
}

void check(const action_parse_result& r, const std::string& input) {
  if (r.ok()) {
    if (r.act.kind == action_kind::none) fail("success with kind none", input);
    std::string canonical = to_string(r.act);
    action_parse_result again = parse_action(canonical);
    if (!again.ok()) fail("canonical text does not parse", input);
    if (!same_fields(r.act, again.act)) fail("round trip changed the action", input);
    if (!same_action(r.act, again.act)) fail("same_action is not reflexive across a round trip", input);
  } else {
    if (r.act.kind != action_kind::none) fail("failure with a kind", input);
    if (r.error.empty()) fail("failure without a message", input);
    if (!valid_utf8(r.error)) fail("message is not valid UTF-8", input);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  action_parse_result bare = parse_action(input);
  check(bare, input);
  action_parse_result reply = parse_model_output(input);
  check(reply, input);

  // The input split on '\n' as a sequence of steps.
  early_stop_config cfg;
  cfg.max_steps = 1000;
  early_stop_rules rules(cfg);
  size_t start = 0;
  for (int steps = 0; start <= input.size() && steps < 64; ++steps) {
    size_t nl = input.find('\n', start);
    std::string_view line = std::string_view(input).substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    rules.record(parse_action(line));
    early_stop_decision d = rules.check();
    if (d.stop == d.reason.empty()) fail("stop without a reason, or a reason without stop", input);
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return 0;
}
