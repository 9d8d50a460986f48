// cuda-bench-main.cpp: kvarena-cuda-bench, the GPU benchmark scripts/gpu-check.sh runs
// (batches, which `kvarena bench latency --backend cuda` does not do). Prints one JSON object on stdout, logs on
// stderr, like every `kvarena bench`:
//   kvarena-cuda-bench latency --model M.gguf [--contexts 1024,8192] [--batches 1,8]
//       [--steps 32] [--chunk 512] [--policies full,window,h2o,confkv:kv-int8=1,confkv-l,freekv]
//     (per-policy options after ':' joined by '+', e.g. window:window=2048+sinks=4)
//     -> {"bench": "cuda-latency", "model", "device", "config", "results": [{"policy",
//         "context", "batch", "prefill_ms", "prefill_tok_s", "step_ms_median", "step_ms_p90",
//         "decode_tok_s", "kv_bytes", "weights_bytes", "peak_device_bytes",
//         "read_bandwidth_gbs"} | {"policy", "context", "batch", "error"}]}
//     full runs the plain FP16 cache: a batch's sequences share one prefill (its KV is
//     copied to the others: decode time does not depend on KV values); under the other
//     policies every sequence is prefilled (its policy state is its own). confkv's decode
//     steps read the logits back for the confidence. freekv prefills in chunks of a page
//     (its window grows by at most a page per forward call).
//     --dry-run 1: no device: checks the model and every policy spec, lists the runs and
//     prints each run's HBM roofline (bytes a decode step reads; tokens/s at 3.35 and 4.8 TB/s)
//   kvarena-cuda-bench roofline --dim D --layers L --heads H --kv-heads K --ffn F --vocab V
//       [--tied 0] [--contexts ..] [--batches ..]: the same roofline for a shape, no file
//   kvarena-cuda-bench random --out M.gguf --dim D --layers L --heads H --kv-heads K --ffn F
//       --vocab V [--type f16] [--seed 1]   (the same writer as `kvarena model random`,
//       weights only, no tokenizer)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cuda-check.h"
#include "cuda-forward.h"
#include "engine-error.h"
#include "ggml-types.h"
#include "kv/kv-confidence.h"
#include "kv/kv-policy.h"
#include "kv/kv-policy-registry.h"
#include "model-random.h"
#include "model.h"

using namespace kvarena;

namespace {

using clock_type = std::chrono::steady_clock;
double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

std::vector<int64_t> int_list(const std::string& s) {
  std::vector<int64_t> v;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) v.push_back(std::stoll(item));
  return v;
}
std::vector<std::string> str_list(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) v.push_back(item);
  return v;
}

std::string jstr(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o + "\"";
}
std::string jnum(double x) {
  char b[64];
  std::snprintf(b, sizeof b, "%.6g", x);
  return b;
}

// --name value pairs after the subcommand.
std::map<std::string, std::string> parse_flags(int argc, char** argv, int first) {
  std::map<std::string, std::string> f;
  for (int i = first; i < argc; ++i) {
    std::string k = argv[i];
    if (k.rfind("--", 0) != 0 || i + 1 >= argc) throw engine_error("bad argument '" + k + "' (expected --flag value)");
    f[k.substr(2)] = argv[++i];
  }
  return f;
}

std::string need(const std::map<std::string, std::string>& f, const std::string& k) {
  auto it = f.find(k);
  if (it == f.end()) throw engine_error("missing --" + k);
  return it->second;
}
std::string get(const std::map<std::string, std::string>& f, const std::string& k, const std::string& def) {
  auto it = f.find(k);
  return it == f.end() ? def : it->second;
}

// "name" or "name:key=value+key=value" (keys: the policy's options in the registry,
// kv-policy-registry.h, as the CPU bench's flags name them without dashes).
kv_policy_spec parse_policy(const std::string& spec) {
  kv_policy_spec p;
  p.text = spec;
  const size_t colon = spec.find(':');
  p.name = spec.substr(0, colon);
  const kv_policy_desc& d = kv_policy_described(p.name);  // throws: unknown policy, lists the valid
  if (colon == std::string::npos) return p;
  std::stringstream ss(spec.substr(colon + 1));
  for (std::string kv; std::getline(ss, kv, '+');) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos) throw engine_error("policy option '" + kv + "' is not key=value");
    const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
    const kv_option* o = d.option(k);
    if (!o) throw engine_error("unknown policy option '" + k + "' for " + p.name);
    set_kv_option_text(p, *o, "policy '" + spec + "'", v);
  }
  return p;
}

int run_random(const std::map<std::string, std::string>& f) {
  random_model_spec s;
  s.arch = model_arch::llama;
  s.dim = std::stoll(need(f, "dim"));
  s.n_layers = std::stoll(need(f, "layers"));
  s.n_heads = std::stoll(need(f, "heads"));
  s.n_kv_heads = std::stoll(get(f, "kv-heads", "0"));
  s.ffn_dim = std::stoll(need(f, "ffn"));
  s.n_vocab = std::stoll(need(f, "vocab"));
  s.n_ctx = std::stoll(get(f, "ctx", "131072"));
  s.seed = std::stoull(get(f, "seed", "1"));
  s.rope_freq_base = std::stof(get(f, "rope-base", "500000"));
  s.with_tokenizer = false;
  const auto t = ggml_type_from_name(get(f, "type", "f16"));
  if (!t) throw engine_error("unknown --type");
  s.type = *t;
  const auto t0 = clock_type::now();
  const random_model_summary r = write_random_model(s, need(f, "out"));
  std::printf("{\"path\": %s, \"n_params\": %lld, \"bytes\": %llu, \"seconds\": %s}\n", jstr(need(f, "out")).c_str(),
              (long long)r.n_params, (unsigned long long)r.file_bytes, jnum(ms_since(t0) / 1000).c_str());
  return 0;
}

// The HBM roofline of decode steps of shape c at each (context, batch): the bytes a step must
// read (the F16 weights except the token embedding table, which gives one row per token,
// unless tied to the output; plus each sequence's FP16 KV) and the tokens/s they allow at the
// H100's 3.35 TB/s and the H200's 4.8 TB/s. *n_el: the weights' elements on the device.
std::string roofline_json(const model_config& c, bool tied, const std::vector<int64_t>& contexts,
                          const std::vector<int64_t>& batches, double* n_el) {
  const int64_t D = c.dim, KV = c.kv_dim(), F = c.ffn_dim, V = c.n_vocab;
  *n_el = double(V * D) * (tied ? 1 : 2) + double(c.n_layers) * double(D * (D + 2 * KV) + D * D + 3 * F * D);
  const double step_weights = *n_el * 2 - (tied ? 0 : double(V * D) * 2);
  const double kv_token_bytes = double(2 * c.n_layers * KV * 2);
  std::string roof;
  for (int64_t ctx : contexts)
    for (int64_t B : batches) {
      const double bytes = step_weights + double(B) * kv_token_bytes * double(ctx);
      roof += (roof.empty() ? "" : ", ") + std::string("{\"context\": ") + std::to_string(ctx) +
              ", \"batch\": " + std::to_string(B) + ", \"bytes_per_step\": " + jnum(bytes) +
              ", \"roofline_tok_s_h100\": " + jnum(double(B) * 3.35e12 / bytes) +
              ", \"roofline_tok_s_h200\": " + jnum(double(B) * 4.8e12 / bytes) + "}";
    }
  return roof;
}

// kvarena-cuda-bench roofline --dim D --layers L --heads H --kv-heads K --ffn F --vocab V
//   [--tied 0] [--contexts 1024,8192] [--batches 1,8]: roofline_json of a llama shape, no file.
int run_roofline(const std::map<std::string, std::string>& f) {
  model_config c;
  c.dim = std::stoll(need(f, "dim"));
  c.n_layers = std::stoll(need(f, "layers"));
  c.n_heads = std::stoll(need(f, "heads"));
  c.n_kv_heads = std::stoll(get(f, "kv-heads", std::to_string(c.n_heads)));
  c.ffn_dim = std::stoll(need(f, "ffn"));
  c.n_vocab = std::stoll(need(f, "vocab"));
  if (c.n_heads < 1 || c.dim % c.n_heads != 0) throw engine_error("--dim must be a multiple of --heads");
  c.head_dim = c.dim / c.n_heads;
  double n_el = 0;
  const std::string roof = roofline_json(c, get(f, "tied", "0") == "1", int_list(get(f, "contexts", "1024,8192")),
                                         int_list(get(f, "batches", "1,8")), &n_el);
  std::printf("{\"weights_f16_bytes\": %s, \"kv_token_bytes\": %lld, \"roofline\": [%s]}\n", jnum(n_el * 2).c_str(),
              (long long)(2 * c.n_layers * c.kv_dim() * 2), roof.c_str());
  return 0;
}

// --dry-run 1: everything latency checks before it needs the device, on the CPU: the model
// loads and the CUDA forward supports it, every policy spec parses and its policy builds
// for this model's shape (make_kv_policy's checks), the runs' list; and the HBM roofline of
// a decode step (bytes it must read: the weights except the token embedding table, which
// only gives one row per token, plus each sequence's FP16 KV) at the H100's 3.35 TB/s and
// the H200's 4.8 TB/s. Exit 0 with one JSON object, or 1 with the first problem.
int dry_run_latency(const std::string& path, const std::vector<int64_t>& contexts, const std::vector<int64_t>& batches,
                    const std::vector<std::string>& policies, int64_t steps, int64_t chunk) {
  if (contexts.empty() || batches.empty() || policies.empty()) throw engine_error("empty --contexts, --batches or --policies");
  for (int64_t b : batches)
    if (b < 1 || b > 65535) throw engine_error("--batches: " + std::to_string(b) + " is not in 1..65535");
  const auto m = load_model(path);
  const model_config& c = m->config;
  check_cuda_model_config(c);
  for (int64_t ctx : contexts)
    if (ctx < 1 || (m->pos_embd && ctx + steps + 4 > c.n_ctx))
      throw engine_error("--contexts: " + std::to_string(ctx) + " does not fit the model");
  std::string pol;
  for (const std::string& policy : policies) {
    const kv_policy_spec ps = resolve_kv_spec(parse_policy(policy));
    if (ps.name != "full") {
      const kv_runtime_config rc = cuda_kv_config(c, ps.name, ps.options, chunk);
      (void)make_kv_policy(rc.policy, rc.options);  // validates the options for this shape
    }
    std::string opts;
    for (const kv_option_value& o : kv_effective_options(ps))
      opts += (opts.empty() ? "" : ", ") + jstr(o.key) + ": " + jnum(o.value);
    pol += (pol.empty() ? "" : ", ") + std::string("{\"policy\": ") + jstr(policy) + ", \"options\": {" + opts + "}}";
  }
  const bool tied = m->output.data == m->tok_embd.data;
  const size_t kv_token_bytes = size_t(2 * c.n_layers * c.kv_dim() * 2);
  double n_el = 0;
  const std::string roof = roofline_json(c, tied, contexts, batches, &n_el);
  std::printf("{\"bench\": \"cuda-latency\", \"dry_run\": true, \"model\": %s, \"config\": {\"dim\": %lld, "
              "\"layers\": %lld, \"heads\": %lld, \"kv_heads\": %lld, \"ffn\": %lld, \"vocab\": %lld, "
              "\"weights_f16_bytes\": %s, \"kv_token_bytes\": %zu, \"steps\": %lld, \"chunk\": %lld}, "
              "\"runs\": %zu, \"policies\": [%s], \"roofline\": [%s]}\n",
              jstr(path).c_str(), (long long)c.dim, (long long)c.n_layers, (long long)c.n_heads,
              (long long)c.n_kv_heads, (long long)c.ffn_dim, (long long)c.n_vocab, jnum(n_el * 2).c_str(),
              kv_token_bytes, (long long)steps, (long long)chunk, policies.size() * contexts.size() * batches.size(),
              pol.c_str(), roof.c_str());
  return 0;
}

int run_latency(const std::map<std::string, std::string>& f) {
  const std::string path = need(f, "model");
  const std::vector<int64_t> contexts = int_list(get(f, "contexts", "1024,8192"));
  const std::vector<int64_t> batches = int_list(get(f, "batches", "1,8"));
  const std::vector<std::string> policies = str_list(get(f, "policies", "full"));
  const int64_t steps = std::stoll(get(f, "steps", "32"));
  const int64_t chunk = std::stoll(get(f, "chunk", "512"));
  if (steps < 1 || chunk < 1) throw engine_error("--steps and --chunk must be >= 1");
  if (get(f, "dry-run", "0") == "1") return dry_run_latency(path, contexts, batches, policies, steps, chunk);

  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  auto t_load = clock_type::now();
  auto m = load_model(path);
  const double load_ms = ms_since(t_load);
  cuda_engine_options eo;
  eo.max_chunk = chunk;
  eo.max_batch = *std::max_element(batches.begin(), batches.end());
  t_load = clock_type::now();
  cuda_engine e(*m, eo);
  const double upload_ms = ms_since(t_load);
  std::fprintf(stderr, "[cuda-bench] %s: loaded in %.0f ms, uploaded %.2f GB in %.0f ms\n", path.c_str(), load_ms,
               double(e.weight_bytes()) / 1e9, upload_ms);
  const model_config& c = e.config();
  const int64_t V = c.n_vocab;
  const size_t kv_token_bytes = size_t(2 * c.n_layers * c.kv_dim() * 2);

  std::vector<std::string> results;
  for (const std::string& policy : policies)
    for (int64_t ctx : contexts)
      for (int64_t B : batches) {
        std::string r = "{\"policy\": " + jstr(policy) + ", \"context\": " + std::to_string(ctx) +
                        ", \"batch\": " + std::to_string(B);
        try {
          const kv_policy_spec ps = parse_policy(policy);
          const std::string& pname = ps.name;
          const bool plain = pname == "full";  // the plain FP16 cache (no policy bookkeeping)
          std::mt19937 rng(uint32_t(ctx * 31 + B));
          std::vector<int32_t> prompt(static_cast<size_t>(ctx));
          for (auto& t : prompt) t = int32_t(rng() % uint32_t(V));
          std::vector<std::unique_ptr<cuda_sequence>> seqs;
          std::vector<cuda_sequence*> ptrs;
          for (int64_t b = 0; b < B; ++b) {
            seqs.push_back(plain ? std::make_unique<cuda_sequence>(e, ctx + steps + 4)
                                 : std::make_unique<cuda_sequence>(e, ctx + steps + 4, pname, ps.options, ps.overlap));
            ptrs.push_back(seqs.back().get());
          }
          // Prefill: one sequence (its KV copied to the others) for the plain cache; every
          // sequence for a policy (its state cannot be copied). Timed: the first one.
          double prefill_ms = 0;
          for (int64_t b = 0; b < (plain ? 1 : B); ++b) {
            e.synchronize();
            const auto t0 = clock_type::now();
            const int64_t ch = std::min(chunk, seqs[size_t(b)]->max_chunk());
            for (int64_t i = 0; i < ctx; i += ch) {
              const int64_t n = std::min(ch, ctx - i);
              step_signals sig;
              sig.decode = false;
              e.forward(*seqs[size_t(b)], prompt.data() + i, n, i + n == ctx, &sig);
            }
            e.synchronize();
            if (b == 0) prefill_ms = ms_since(t0);
          }
          if (plain)
            for (int64_t b = 1; b < B; ++b) seqs[size_t(b)]->copy_from(*seqs[0]);
          const bool conf = !plain && seqs[0]->kv()->needs().logits_confidence;
          std::vector<int32_t> next(static_cast<size_t>(B), e.argmax(1)[0]);
          std::vector<float> lg(static_cast<size_t>(V));
          std::vector<step_signals> sigs(static_cast<size_t>(B));
          std::vector<double> step_ms;
          for (int64_t s = 0; s < steps + 2; ++s) {  // two warm-up steps
            const auto ts = clock_type::now();
            for (int64_t b = 0; b < B; ++b) {
              sigs[size_t(b)].decode = true;
              if (conf && s > 0) {  // confkv gates on the confidence of the logits (read back)
                e.logits(b, lg.data());
                sigs[size_t(b)].confidence = confidence_from_logits(lg.data(), V);
              }
            }
            if (B == 1) {
              e.forward(*seqs[0], next.data(), 1, true, &sigs[0]);
            } else {
              e.forward_batch(ptrs, next.data(), true, &sigs);
            }
            next = e.argmax(B);  // synchronises
            if (s >= 2) step_ms.push_back(ms_since(ts));
          }
          std::sort(step_ms.begin(), step_ms.end());
          const double med = step_ms[step_ms.size() / 2], p90 = step_ms[std::min(step_ms.size() - 1, step_ms.size() * 9 / 10)];
          e.allocator().snapshot();
          size_t kv_bytes = 0, kv_peak = 0;
          double kept = double(ctx + steps);
          for (auto& sq : seqs) kv_bytes += sq->kv_bytes(), kv_peak += sq->kv_peak_bytes();
          if (!plain) {
            const std::vector<int64_t>& k = seqs[0]->kv()->last().kept;
            kept = 0;
            for (int64_t x : k) kept += double(x);
            kept /= double(std::max<size_t>(1, k.size()));
          }
          // Bytes a decode step must read: the weights once, each sequence's kept KV (FP16).
          const double read = double(e.weight_bytes()) + double(B) * double(kv_token_bytes) * kept;
          r += ", \"prefill_ms\": " + jnum(prefill_ms) + ", \"prefill_tok_s\": " + jnum(double(ctx) / prefill_ms * 1e3) +
               ", \"step_ms_median\": " + jnum(med) + ", \"step_ms_p90\": " + jnum(p90) +
               ", \"decode_tok_s\": " + jnum(double(B) / med * 1e3) + ", \"kept_tokens_per_head\": " + jnum(kept) +
               ", \"kv_bytes\": " + std::to_string(kv_bytes) + ", \"peak_kv_bytes\": " + std::to_string(kv_peak) +
               ", \"weights_bytes\": " + std::to_string(e.weight_bytes()) +
               ", \"peak_device_bytes\": " + std::to_string(e.allocator().peak_device_bytes()) +
               ", \"read_bandwidth_gbs\": " + jnum(read / (med * 1e-3) / 1e9) + "}";
          std::fprintf(stderr, "[cuda-bench] %s ctx %lld batch %lld: prefill %.1f ms, step %.3f ms\n", policy.c_str(),
                       (long long)ctx, (long long)B, prefill_ms, med);
        } catch (const engine_error& ex) {
          r += ", \"error\": " + jstr(ex.what()) + "}";
          std::fprintf(stderr, "[cuda-bench] %s ctx %lld batch %lld: %s\n", policy.c_str(), (long long)ctx,
                       (long long)B, ex.what());
        }
        std::fprintf(stderr, "[cuda-bench] result %s\n", r.c_str());  // partial results survive a timeout
        results.push_back(r);
      }

  std::string out = "{\"bench\": \"cuda-latency\", \"model\": " + jstr(path) + ", \"device\": " + jstr(prop.name) +
                    ", \"config\": {\"steps\": " + std::to_string(steps) + ", \"chunk\": " + std::to_string(chunk) +
                    ", \"weights_f16\": true, \"load_ms\": " + jnum(load_ms) + ", \"upload_ms\": " + jnum(upload_ms) +
                    "}, \"results\": [";
  for (size_t i = 0; i < results.size(); ++i) out += (i ? ", " : "") + results[i];
  std::printf("%s]}\n", out.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string cmd = argc > 1 ? argv[1] : "";
    if (cmd == "latency") return run_latency(parse_flags(argc, argv, 2));
    if (cmd == "random") return run_random(parse_flags(argc, argv, 2));
    if (cmd == "roofline") return run_roofline(parse_flags(argc, argv, 2));
    std::fprintf(stderr, "usage: kvarena-cuda-bench latency --model M [--contexts 1024,8192] [--batches 1,8] "
                         "[--steps 32] [--chunk 512] [--policies full]\n"
                         "       kvarena-cuda-bench random --out M --dim D --layers L --heads H --kv-heads K "
                         "--ffn F --vocab V [--type f16]\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvarena-cuda-bench: %s\n", e.what());
    return 1;
  }
}
