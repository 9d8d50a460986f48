// cmd-bench-policy.cpp: the KV-policy benchmarks under `kvarena bench` (the logic is
// engine/bench/): `ppl`, `niah`, `memory`, `latency`, `confidence-kl` (their header comments
// there say what each measures: niah's --needles trials per cell, confidence-kl's
// --ablate-span and --kl-direction, ppl's kept tokens under --kv-budget). Each runs every
// policy of --policies (with the policy flags of policy-flags.h) and prints one JSON object
// on stdout: {"bench", "model", "config": {...}, "results": [{"policy", "spec", "options",
// <metrics with units in their names>}]}; with --db FILE it also appends one row per result
// to the bench_results table (results/bench-results-db.h). Progress goes to stderr.
// Registered under the `bench` command that cmd-bench.cpp creates (main() adds this after).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend-flag.h"
#include "sequence.h"
#include "bench-results-db.h"
#include "bench/bench-confidence-kl.h"
#include "bench/bench-latency.h"
#include "bench/bench-memory.h"
#include "bench/bench-niah.h"
#include "bench/bench-ppl.h"
#include "cli-commands.h"
#include "default-model.h"
#include "engine-error.h"
#include "gguf-reader.h"
#include "model.h"
#include "policy-flags.h"
#include "tokenizer.h"

namespace kvarena::cli {

namespace {

using json = nlohmann::ordered_json;

struct policy_bench_args {
  std::string model;
  int threads = 2;
  uint64_t seed = 0;
  policy_flags policy;
  std::string db;
  std::string text;         // ppl: the text; niah: the haystack source; confidence-kl: the teacher-forced text
  int64_t max_tokens = 0;   // ppl: 0 = the whole text, up to the model's context
  bench_niah_config niah;
  bench_memory_config memory;
  bench_latency_config latency;
  bench_confidence_kl_config ckl;
  std::string ckl_span = "recent";             // confidence-kl --ablate-span
  std::string ckl_direction = "full-ablated";  // confidence-kl --kl-direction
  std::string backend = "cpu";  // cpu|cuda (make_sequence)
  int64_t chunk = 512;          // prefill chunk (tokens per forward call)
};

// What every policy bench does first: validate the policies (before loading), load the
// model and its tokenizer, re-check the policies against the model's shape.
struct loaded {
  std::vector<kv_policy_spec> policies;
  std::unique_ptr<model> m;
  std::unique_ptr<tokenizer> tok;
  bench_common common;
};

loaded load(const policy_bench_args& a) {
  loaded l;
  kvarena::check_backend(a.backend);  // backend_error (exit 2) before the model loads
  l.policies = parse_policy_specs(a.policy);
  // A --db file that cannot take rows fails now, before the runs.
  if (!a.db.empty()) results::append_bench_results(a.db, {});
  l.m = load_model(a.model);
  if (!l.m->gguf) throw engine_error(a.model + ": the policy benchmarks need a GGUF model (it carries the vocabulary)");
  l.tok = tokenizer::from_gguf(*l.m->gguf);
  check_policy_specs(l.policies, l.m->config);
  l.common.threads = a.threads;
  l.common.seed = a.seed;
  l.common.backend = a.backend;
  l.common.prefill_chunk = a.chunk;
  return l;
}

int64_t max_of(const std::vector<int64_t>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

// --kv-budget spent for sequences of up to seq_len tokens (policy-flags.h).
void apply_budget(const policy_bench_args& a, loaded& l, int64_t seq_len) {
  l.policies = apply_kv_budget_flag(a.policy, l.policies, l.m->config, seq_len);
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw engine_error(path + ": cannot open the text file (--text)");
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// Generated answers need not be valid UTF-8 (a piece can be part of a character).
std::string dump(const json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

json config_json(const policy_bench_args& a) {
  json j = {{"threads", a.threads}, {"seed", a.seed}, {"backend", a.backend}, {"prefill_chunk", a.chunk}};
  if (!a.policy.kv_budget.empty()) j["kv_budget"] = a.policy.kv_budget;
  return j;
}

// Prints the bench's JSON object and appends the rows to --db. results[i] belongs to
// specs[i]: {"policy", "spec", "options"} come first, then the metrics.
int emit(const policy_bench_args& a, const std::string& bench, const json& config,
         const std::vector<kv_policy_spec>& specs, const std::vector<json>& metrics) {
  json out = {{"bench", bench}, {"model", a.model}, {"config", config}, {"results", json::array()}};
  std::vector<results::bench_result_row> rows;
  for (size_t i = 0; i < specs.size(); ++i) {
    json r = {{"policy", specs[i].name}, {"spec", specs[i].text}, {"options", policy_options_json(specs[i])}};
    r.update(metrics[i]);
    out["results"].push_back(r);
    results::bench_result_row row;
    row.bench = bench;
    row.model = a.model;
    row.policy = specs[i].name;
    row.options_json = dump(r["options"]);
    row.config_json = dump(config);
    json m = metrics[i];
    m["spec"] = specs[i].text;  // the row's label in `kvarena report` (window@512t of a sweep)
    row.metrics_json = dump(m);
    rows.push_back(std::move(row));
  }
  std::printf("%s\n", dump(out).c_str());  // first: a --db failure below loses nothing
  std::fflush(stdout);
  if (!a.db.empty()) {
    results::append_bench_results(a.db, rows);
    std::fprintf(stderr, "bench %s: %zu rows appended to %s (table bench_results)\n", bench.c_str(), rows.size(),
                 a.db.c_str());
  }
  return 0;
}

int run_ppl(const policy_bench_args& a) {
  if (a.text.empty()) throw engine_error("bench ppl: --text FILE is required");
  loaded l = load(a);
  std::vector<int32_t> tokens = l.tok->encode(read_text(a.text), true);
  int64_t limit = a.max_tokens > 0 ? a.max_tokens : l.m->config.n_ctx;
  if (int64_t(tokens.size()) > limit) tokens.resize(size_t(limit));
  apply_budget(a, l, int64_t(tokens.size()));
  json config = config_json(a);
  config["text"] = a.text;
  config["max_tokens"] = a.max_tokens;
  config["n_text_tokens"] = tokens.size();
  std::vector<json> metrics;
  for (const kv_policy_spec& p : l.policies) {
    const bench_ppl_result r = run_bench_ppl(*l.m, tokens, p, l.common);
    metrics.push_back({{"ppl", r.ppl}, {"nll_mean", r.nll_mean}, {"n_tokens", r.n_tokens},
                       {"peak_kv_bytes", r.peak_kv_bytes}, {"peak_kv_host_bytes", r.peak_kv_host_bytes},
                       {"peak_kv_logical_bytes", r.peak_kv_logical_bytes}, {"peak_process_bytes", r.peak_process_bytes},
                       {"kept_tokens_max", r.kept_tokens_max}, {"kept_tokens_final", r.kept_tokens_final},
                       {"tok_s", r.tok_s}});
    std::fprintf(stderr, "bench ppl: %s: ppl %.4f, at most %lld tokens kept per layer and KV head, peak %zu logical "
                 "KV bytes\n", p.text.c_str(), r.ppl, (long long)r.kept_tokens_max, r.peak_kv_logical_bytes);
  }
  return emit(a, "ppl", config, l.policies, metrics);
}

int run_niah(const policy_bench_args& a) {
  loaded l = load(a);
  bench_niah_config cfg = a.niah;
  apply_budget(a, l, max_of(cfg.lengths) + cfg.max_answer_tokens);
  if (!a.text.empty()) cfg.haystack_text = read_text(a.text);
  const std::vector<int32_t> hay = niah_haystack(*l.tok, cfg, a.seed);
  json config = config_json(a);
  config["lengths"] = cfg.lengths;
  config["depths"] = cfg.depths;
  config["haystack"] = a.text.empty() ? "filler" : a.text;
  config["max_answer_tokens"] = cfg.max_answer_tokens;
  config["decode_distractor"] = cfg.decode_distractor;
  config["needles"] = cfg.needles;
  std::vector<json> metrics;
  for (const kv_policy_spec& p : l.policies) {
    const bench_niah_result r = run_bench_niah(*l.m, *l.tok, hay, p, l.common, cfg);
    json grid = json::array();
    for (const bench_niah_cell& c : r.grid)
      grid.push_back({{"length", c.length}, {"depth", c.depth}, {"trial", c.trial}, {"correct", c.correct},
                      {"code", c.code}, {"answer", c.answer}});
    int64_t n_correct = 0;
    for (const bench_niah_cell& c : r.grid) n_correct += c.correct;
    std::fprintf(stderr, "bench niah: %s: %lld/%zu correct (%zu cells x %lld needles)\n", p.text.c_str(),
                 (long long)n_correct, r.grid.size(), r.grid.size() / size_t(cfg.needles), (long long)cfg.needles);
    metrics.push_back({{"accuracy", r.accuracy}, {"n_correct", n_correct}, {"n_trials", r.grid.size()},
                       {"peak_kv_bytes", r.peak_kv_bytes},
                       {"peak_kv_host_bytes", r.peak_kv_host_bytes}, {"peak_kv_logical_bytes", r.peak_kv_logical_bytes},
                       {"peak_process_bytes", r.peak_process_bytes}, {"decode_steps", r.decode_steps},
                       {"confident_steps", r.confident_steps}, {"grid", grid}});
  }
  return emit(a, "niah", config, l.policies, metrics);
}

int run_memory(const policy_bench_args& a) {
  loaded l = load(a);
  const bench_memory_config& cfg = a.memory;
  apply_budget(a, l, cfg.n_prompt + cfg.n_gen);
  json config = config_json(a);
  config["n_prompt"] = cfg.n_prompt;
  config["n_gen"] = cfg.n_gen;
  config["trace_every"] = cfg.trace_every;
  std::vector<json> metrics;
  for (const kv_policy_spec& p : l.policies) {
    const bench_memory_result r = run_bench_memory(*l.m, *l.tok, p, l.common, cfg);
    json trace = json::array();
    for (const bench_memory_point& t : r.trace)
      trace.push_back({{"step", t.step}, {"seq_len", t.seq_len}, {"kv_bytes", t.kv_bytes},
                       {"kv_logical_bytes", t.kv_logical_bytes}, {"budget", t.budget},
                       {"confidence", t.confidence}});
    json m = {{"peak_kv_bytes", r.peak_kv_bytes}, {"peak_kv_host_bytes", r.peak_kv_host_bytes},
              {"peak_kv_logical_bytes", r.peak_kv_logical_bytes}, {"peak_process_bytes", r.peak_process_bytes},
              {"final_kv_bytes", r.final_kv_bytes}, {"kept_tokens_max", r.kept_tokens_max},
              {"confidence_mean", r.confidence_mean}};
    m["confident_fraction"] = r.confident_fraction ? json(*r.confident_fraction) : json(nullptr);
    m["trace"] = trace;
    metrics.push_back(m);
    std::fprintf(stderr, "bench memory: %s: peak %zu logical KV bytes (%zu allocated), process peak %zu bytes\n",
                 p.text.c_str(), r.peak_kv_logical_bytes, r.peak_kv_bytes, r.peak_process_bytes);
  }
  return emit(a, "memory", config, l.policies, metrics);
}

// Step latency ratios to `full` and `window` (when run) per context, on stderr.
void print_latency_table(const std::vector<kv_policy_spec>& specs, const std::vector<bench_latency_result>& rs) {
  std::fprintf(stderr, "%-8s %-36s %10s %8s %8s\n", "context", "policy", "step_ms", "x full", "x window");
  for (const bench_latency_result& r : rs) {
    double full = 0, window = 0;
    for (const bench_latency_result& o : rs) {
      if (o.context != r.context) continue;
      if (specs[o.policy].name == "full" && full == 0) full = o.step_ms_median;
      if (specs[o.policy].name == "window" && window == 0) window = o.step_ms_median;
    }
    char xf[16] = "-", xw[16] = "-";
    if (full > 0) std::snprintf(xf, sizeof xf, "%.2f", r.step_ms_median / full);
    if (window > 0) std::snprintf(xw, sizeof xw, "%.2f", r.step_ms_median / window);
    std::fprintf(stderr, "%-8lld %-36s %10.3f %8s %8s\n", (long long)r.context, specs[r.policy].text.c_str(),
                 r.step_ms_median, xf, xw);
  }
}

int run_latency(const policy_bench_args& a) {
  loaded l = load(a);
  const bench_latency_config& cfg = a.latency;
  apply_budget(a, l, max_of(cfg.contexts) + cfg.steps);
  json config = config_json(a);
  config["contexts"] = cfg.contexts;
  config["steps"] = cfg.steps;
  const std::vector<bench_latency_result> rs = run_bench_latency(*l.m, *l.tok, l.policies, l.common, cfg);
  print_latency_table(l.policies, rs);
  std::vector<kv_policy_spec> specs;
  std::vector<json> metrics;
  for (const bench_latency_result& r : rs) {
    specs.push_back(l.policies[r.policy]);
    metrics.push_back({{"context", r.context}, {"step_ms_median", r.step_ms_median}, {"step_ms_p10", r.step_ms_p10},
                       {"step_ms_p90", r.step_ms_p90}, {"prefill_ms", r.prefill_ms},
                       {"peak_kv_bytes", r.peak_kv_bytes}, {"kv_device_bytes", r.kv_device_bytes},
                       {"kv_host_bytes", r.kv_host_bytes},
                       {"recalled_bytes_per_step_mean", r.recalled_bytes_per_step_mean},
                       {"correction_rate", r.correction_rate}});
  }
  return emit(a, "latency", config, specs, metrics);
}

int run_confidence_kl(const policy_bench_args& a) {
  loaded l = load(a);
  bench_confidence_kl_config cfg = a.ckl;
  cfg.span = parse_ckl_span(a.ckl_span);
  cfg.direction = parse_ckl_direction(a.ckl_direction);
  apply_budget(a, l, cfg.n_prompt + cfg.n_gen);
  json config = config_json(a);
  if (!a.text.empty()) {
    std::vector<int32_t> t = l.tok->encode(read_text(a.text), true);
    if (int64_t(t.size()) > cfg.n_prompt + cfg.n_gen) t.resize(size_t(cfg.n_prompt + cfg.n_gen));
    cfg.text = std::move(t);
    config["text"] = a.text;
  }
  config["n_prompt"] = cfg.n_prompt;
  config["n_gen"] = cfg.n_gen;
  config["every"] = cfg.every;
  config["ablate"] = cfg.ablate;
  config["ablate_span"] = ckl_span_name(cfg.span);
  if (cfg.span == ckl_span::distant) config["ablate_span_start"] = confidence_kl_distant_start(cfg);
  config["kl_direction"] = ckl_direction_name(cfg.direction);
  std::vector<json> metrics;
  for (const kv_policy_spec& p : l.policies) {
    const bench_confidence_kl_result r = run_bench_confidence_kl(*l.m, *l.tok, p, l.common, cfg);
    json samples = json::array();
    for (const auto& s : r.samples)
      samples.push_back({{"pos", s.pos}, {"ablated_from", s.ablated_from}, {"ablated_to", s.ablated_to},
                         {"confidence", s.confidence}, {"kl", s.kl}});
    metrics.push_back({{"pearson_r", r.pearson_r}, {"spearman_r", r.spearman_r}, {"n_samples", r.n_samples}, {"kl_mean", r.kl_mean},
                       {"confidence_mean", r.confidence_mean}, {"samples", samples}});
  }
  return emit(a, "confidence-kl", config, l.policies, metrics);
}

// The subcommand with the flags every policy bench takes.
CLI::App* add_policy_bench(CLI::App* bench, const char* name, const char* what,
                           std::shared_ptr<policy_bench_args> a) {
  auto* sub = bench->add_subcommand(name, what);
  sub->add_option("--model,-m", a->model, "Model file (GGUF; default models/kvarena-agent.gguf)");
  sub->add_option("-t,--threads", a->threads, "Threads")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--seed", a->seed, "Seed of prompts, haystacks and needles")->capture_default_str();
  sub->add_option("--chunk", a->chunk, "Prefill chunk (tokens per forward call)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--db", a->db, "Also append one row per result to this SQLite file (table bench_results)");
  add_policy_flags(sub, a->policy, true);
  add_backend_flag(sub, a->backend);
  return sub;
}

}  // namespace

void add_bench_policy_command(CLI::App& app, command_fn& run) {
  CLI::App* bench = app.get_subcommand("bench");  // throws if cmd-bench.cpp did not add it

  auto pa = std::make_shared<policy_bench_args>();
  auto* ppl = add_policy_bench(bench, "ppl", "Streaming perplexity of a text under each KV policy", pa);
  ppl->add_option("--text", pa->text, "Text file to score")->required();
  ppl->add_option("--max-tokens", pa->max_tokens, "Most tokens scored (0 = the text, up to the model's context)")
      ->check(CLI::NonNegativeNumber);
  ppl->callback([&run, pa] { run = [pa] { pa->model = model_or_default(pa->model); return run_ppl(*pa); }; });

  auto na = std::make_shared<policy_bench_args>();
  auto* niah = add_policy_bench(bench, "niah", "Needle-in-a-haystack retrieval under each KV policy", na);
  niah->add_option("--lengths", na->niah.lengths, "Context lengths (tokens)")->delimiter(',')->capture_default_str();
  niah->add_option("--depths", na->niah.depths, "Needle depths (fractions of the haystack)")
      ->delimiter(',')->capture_default_str();
  niah->add_option("--text", na->text, "Haystack text file (default: seeded filler sentences)");
  niah->add_option("--decode-distractor", na->niah.decode_distractor,
                   "Run the prompt's last N tokens as teacher-forced decode steps (so confkv's gate runs)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  niah->add_option("--needles", na->niah.needles,
                   "Needles per (length, depth) cell: independent trials, each with its own code; accuracy counts "
                   "cells x needles")
      ->check(CLI::PositiveNumber)->capture_default_str();
  niah->callback([&run, na] { run = [na] { na->model = model_or_default(na->model); return run_niah(*na); }; });

  auto ma = std::make_shared<policy_bench_args>();
  auto* mem = add_policy_bench(bench, "memory", "KV memory over a long greedy generation under each KV policy", ma);
  mem->add_option("--n-prompt", ma->memory.n_prompt, "Prompt tokens (seeded random ids)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  mem->add_option("--n-gen", ma->memory.n_gen, "Generated tokens (EOS does not stop)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  mem->add_option("--trace-every", ma->memory.trace_every, "Trace point every N steps")
      ->check(CLI::PositiveNumber)->capture_default_str();
  mem->callback([&run, ma] { run = [ma] { ma->model = model_or_default(ma->model); return run_memory(*ma); }; });

  auto la = std::make_shared<policy_bench_args>();
  auto* lat = add_policy_bench(bench, "latency", "Decode step latency per KV policy, steps interleaved", la);
  lat->add_option("--contexts", la->latency.contexts, "Context lengths (tokens)")->delimiter(',')->capture_default_str();
  lat->add_option("--steps", la->latency.steps, "Decode steps per policy and context")
      ->check(CLI::PositiveNumber)->capture_default_str();
  lat->callback([&run, la] { run = [la] { la->model = model_or_default(la->model); return run_latency(*la); }; });

  auto ca = std::make_shared<policy_bench_args>();
  auto* ckl = add_policy_bench(bench, "confidence-kl",
                               "Pearson r and Spearman rho of step confidence vs the KL shift from ablating a "
                               "span of context", ca);
  ckl->add_option("--n-prompt", ca->ckl.n_prompt, "Prompt tokens (seeded random ids, or the --text's first)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  ckl->add_option("--n-gen", ca->ckl.n_gen, "Generated tokens")->check(CLI::PositiveNumber)->capture_default_str();
  ckl->add_option("--every", ca->ckl.every, "Sample every N steps")->check(CLI::PositiveNumber)->capture_default_str();
  ckl->add_option("--ablate", ca->ckl.ablate, "Tokens removed in the ablated run (the span's length)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  ckl->add_option("--ablate-span", ca->ckl_span,
                  "Which span is removed: recent = the --ablate tokens right before the current one (the CONF-KV "
                  "paper's test); distant = --ablate tokens starting at max(1, n_prompt/4), sampled only once the "
                  "span ends at least --ablate tokens before the current one")
      ->check(CLI::IsMember({"recent", "distant"}))->capture_default_str();
  ckl->add_option("--kl-direction", ca->ckl_direction,
                  "full-ablated = KL(P_full || P_ablated) (the paper's); ablated-full = KL(P_ablated || P_full)")
      ->check(CLI::IsMember({"full-ablated", "ablated-full"}))->capture_default_str();
  ckl->add_option("--text", ca->text, "Teacher-force this text's tokens (its first --n-prompt are the prompt) "
                                      "instead of generating from random ids")
      ->check(CLI::ExistingFile);
  ckl->callback([&run, ca] { run = [ca] { ca->model = model_or_default(ca->model); return run_confidence_kl(*ca); }; });
}

}  // namespace kvarena::cli
