// cmd-serve.cpp: `kvarena serve --model M.gguf [--host 127.0.0.1] [--port 8080]
// [--backend cpu|cuda] [--parallel N] [--queue N] [--token T] [--timeout-s S] [-t N]
// [--ctx N] [--policy P [policy flags] [--kv-budget B]]`: an OpenAI-compatible endpoint
// (serve/README.md) until Ctrl-C / SIGTERM. The policy flags are `run`'s and set the
// default KV policy of requests without a "kv" object. Prints its base URL on stdout.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include <pthread.h>

#include "backend-flag.h"
#include "cli-commands.h"
#include "default-model.h"
#include "engine-error.h"
#include "gguf-reader.h"
#include "model.h"
#include "policy-flags.h"
#include "sequence.h"
#include "serve-server.h"
#include "tokenizer.h"

namespace kvarena::cli {

namespace {

struct serve_args {
  std::string model;
  std::string model_id;
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string backend = "cpu";
  int parallel = 1;
  int queue = 16;
  std::string token;  // --token, else KVARENA_SERVE_TOKEN
  double timeout_s = 600;
  int threads = 2;
  int64_t n_ctx = 0;
  policy_flags policy;
};

int run_serve(const serve_args& a) {
  std::string token = a.token;
  if (token.empty())
    if (const char* t = std::getenv("KVARENA_SERVE_TOKEN")) token = t;
  if (std::string why = serve::serve_bind_refusal(a.host, token); !why.empty()) throw usage_error(why);
  check_backend(a.backend);                                        // before the model loads
  std::vector<kv_policy_spec> policy = parse_policy_specs(a.policy);  // before the model loads
  auto m = load_model(a.model);
  if (!m->gguf) throw engine_error(a.model + ": not a GGUF file, so it has no vocabulary (serve needs a GGUF model)");
  auto tok = tokenizer::from_gguf(*m->gguf);
  check_policy_specs(policy, m->config);
  const int64_t n_ctx = a.n_ctx > 0 ? a.n_ctx : m->config.n_ctx;
  if (!a.policy.kv_budget.empty()) {
    if (a.policy.kv_budget.find(',') != std::string::npos)
      throw usage_error("--kv-budget " + a.policy.kv_budget + ": serve's default is one policy: give one budget");
    policy = apply_kv_budget_flag(a.policy, policy, m->config, n_ctx);
  }

  // Block the stop signals before any thread starts (they inherit the mask): sigwait below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  serve::serve_options opt;
  opt.host = a.host;
  opt.port = static_cast<uint16_t>(a.port);
  opt.model_id = a.model_id.empty() ? std::filesystem::path(a.model).stem().string() : a.model_id;
  opt.token = token;
  opt.engine.backend = a.backend;
  opt.engine.parallel = a.parallel;
  opt.engine.queue = a.queue;
  opt.engine.threads = a.threads;
  opt.engine.n_ctx = n_ctx;
  if (!policy.empty()) opt.default_kv = policy[0];
  opt.timeout = std::chrono::milliseconds(static_cast<long long>(a.timeout_s * 1000));
  serve::serve_server server(*m, *tok, opt);
  server.start();

  std::printf("%s\n", server.base_url().c_str());
  std::fflush(stdout);
  std::fprintf(stderr,
               "kvarena serve: %s on %s/v1 (backend %s, %d at once, %d waiting at most, default KV policy %s).\n"
               "Check it with: curl %s/health. Ctrl-C to stop.\n",
               server.options().model_id.c_str(), server.base_url().c_str(), a.backend.c_str(), a.parallel, a.queue,
               server.options().default_kv.text.c_str(), server.base_url().c_str());
  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::fprintf(stderr, "kvarena serve: stopping (%s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
  server.stop();
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& app, command_fn& run) {
  auto* sub = app.add_subcommand(
      "serve", "Serve a model over an OpenAI-compatible HTTP API, the KV policy chosen per request (\"kv\": {...})");
  auto a = std::make_shared<serve_args>();
  sub->add_option("--model,-m", a->model, "Model file (GGUF; default models/kvarena-agent.gguf)");
  sub->add_option("--model-id", a->model_id, "The model's name in /v1/models and answers (default: the file's name)");
  sub->add_option("--host", a->host, "Address to bind (an address other than loopback needs --token)")
      ->capture_default_str();
  sub->add_option("--port,-p", a->port, "TCP port (0 = pick a free one)")->check(CLI::Range(0, 65535))->capture_default_str();
  sub->add_option("--parallel,--np", a->parallel,
                  "Requests decoding at once (on the GPU their decode steps run as one batch; on the CPU they share "
                  "--threads)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  sub->add_option("--queue", a->queue, "Requests waiting for a slot at most; one more is answered 503")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  sub->add_option("--token", a->token,
                  "Requests must carry \"Authorization: Bearer TOKEN\" (else 401; /health excepted); default: "
                  "$KVARENA_SERVE_TOKEN, none when unset (then only a loopback --host is allowed)");
  sub->add_option("--timeout-s", a->timeout_s,
                  "A request's deadline in seconds from its arrival: waiting past it -> 504, generating past it -> the "
                  "text so far (finish_reason length, stop_reason deadline)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("-t,--threads", a->threads, "Engine threads in all")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--ctx", a->n_ctx, "Context per request in tokens (0 = the model's)")->check(CLI::NonNegativeNumber);
  add_policy_flags(sub, a->policy, false);
  add_backend_flag(sub, a->backend);
  sub->callback([&run, a] { run = [a] { a->model = model_or_default(a->model); return run_serve(*a); }; });
}

}  // namespace kvarena::cli
