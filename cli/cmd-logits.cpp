// cmd-logits.cpp: `kvarena logits --model M --tokens 1,2,3 [--all] [-t N]`: runs the
// tokens through the model and prints the logits as one JSON object in the same shape as
// tools/llamaref's `logits` (so the two can be compared directly):
//   {"n_vocab":V,"n_tokens":n,"positions":[..],"logits":[[..],..]}   floats as %.9g, NaN/Inf -> null
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "cli-commands.h"
#include "engine-error.h"
#include "model.h"
#include "session.h"

namespace kvarena::cli {

namespace {

struct logits_args {
  std::string model;
  std::string tokens;
  bool all = false;
  int threads = 1;
  int64_t chunk = 512;
  bool reference = false;
};

std::vector<int32_t> parse_ids(const std::string& s) {
  std::vector<int32_t> ids;
  std::stringstream in(s);
  for (std::string t; std::getline(in, t, ',');) {
    if (t.empty()) continue;
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(t, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != t.size() || v < INT32_MIN || v > INT32_MAX) {
      throw engine_error("--tokens: '" + t + "' is not a token id (expected e.g. 1,306,4658)");
    }
    ids.push_back(int32_t(v));
  }
  if (ids.empty()) throw engine_error("--tokens: give at least one token id (e.g. 1,306,4658)");
  return ids;
}

void print_row(const float* l, int64_t n) {
  for (int64_t v = 0; v < n; ++v) {
    if (v) std::fputc(',', stdout);
    if (std::isfinite(l[v])) {
      std::printf("%.9g", double(l[v]));
    } else {
      std::fputs("null", stdout);
    }
  }
}

int run_logits(const logits_args& a) {
  const std::vector<int32_t> ids = parse_ids(a.tokens);
  auto m = load_model(a.model);
  session_options so;
  so.n_threads = a.threads;
  so.n_ctx = std::max<int64_t>(int64_t(ids.size()), 1);
  so.prefill_chunk = a.chunk;
  so.all_logits = a.all;
  so.reference = a.reference;
  session s(*m, so);
  s.append(ids);

  const int64_t n = int64_t(ids.size()), V = s.n_vocab();
  const int64_t first = a.all ? 0 : n - 1;
  std::printf("{\"n_vocab\":%lld,\"n_tokens\":%lld,\"positions\":[", (long long)V, (long long)n);
  for (int64_t i = first; i < n; ++i) std::printf(i > first ? ",%lld" : "%lld", (long long)i);
  std::printf("],\"logits\":[");
  for (int64_t i = first; i < n; ++i) {
    std::fputs(i > first ? ",[" : "[", stdout);
    print_row(a.all ? s.all_logits().data() + size_t(i) * size_t(V) : s.logits(), V);
    std::fputc(']', stdout);
  }
  std::printf("]}\n");
  return 0;
}

}  // namespace

void add_logits_command(CLI::App& app, command_fn& run) {
  auto* sub = app.add_subcommand("logits", "Print the logits of a token sequence as JSON (llamaref's format)");
  auto a = std::make_shared<logits_args>();
  sub->add_option("--model,-m", a->model, "Model file (GGUF or llama2.c .bin)")->required();
  sub->add_option("--tokens", a->tokens, "Token ids, comma separated (e.g. 1,306,4658)")->required();
  sub->add_flag("--all", a->all, "Logits of every position (default: the last only)");
  sub->add_option("-t,--threads", a->threads, "Threads")->check(CLI::PositiveNumber);
  sub->add_option("--chunk", a->chunk, "Prefill chunk (tokens per forward call)")->check(CLI::PositiveNumber);
  sub->add_flag("--reference", a->reference, "Use the plain-loop reference kernels (slow; for checks)");
  sub->callback([&run, a] { run = [a] { return run_logits(*a); }; });
}

}  // namespace kvarena::cli
