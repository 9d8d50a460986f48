// cmd-env-server.cpp: `kvarena env-server [--port 8090] [--host 127.0.0.1] [--token T]
// [--sites-url URL] [--site NAME=URL]... [--judge-url URL | --judge-model FILE]
// [--allow-file-urls]` (eval-flags.h):
// serves the env HTTP API (envs/server/env-server.h) until Ctrl-C / SIGTERM. Prints its
// base URL on stdout (port 0 picks a free port and the line shows it); hints on stderr.
// Without --sites-url the sites run in-process and every session gets its own tenant;
// with it, sessions share the external sites' state (envs/server/env-sites.h).
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <pthread.h>

#include "cli-commands.h"
#include "eval-flags.h"
#include "server/env-server.h"

namespace kvarena::cli {

namespace {

struct env_server_args {
  std::string host = "127.0.0.1";
  int port = 8090;
  std::string sites_url;
  uint64_t seed = 1;
  int threads = 8;
  int max_sessions = 256;
  int max_connections = 512;
  double idle_timeout_s = 1800;
  std::string token;  // --token, else KVARENA_ENV_TOKEN
  eval_flags eval;
};

int run_env_server(const env_server_args& a) {
  std::string token = a.token;
  if (token.empty())
    if (const char* t = std::getenv("KVARENA_ENV_TOKEN")) token = t;
  if (std::string why = bind_refusal(a.host, token); !why.empty()) throw usage_error(why);
  // Block the stop signals before any server thread starts (they inherit the mask), so
  // only sigwait() below sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  env_server_options opt;
  opt.http.host = a.host;
  opt.http.port = static_cast<uint16_t>(a.port);
  opt.http.threads = a.threads;
  opt.http.max_connections = static_cast<size_t>(a.max_connections);
  opt.sites.external_url = a.sites_url;
  opt.sites.seed = a.seed;
  opt.sites.site_urls = parse_site_flags(a.eval.sites);
  opt.vqa_url = a.eval.vqa_url;
  opt.allow_file_urls = a.eval.allow_file_urls;
  opt.token = token;
  opt.judge = make_judge(a.eval);  // loads a --judge-model before the server starts
  opt.max_sessions = static_cast<size_t>(a.max_sessions);
  opt.idle_timeout = std::chrono::milliseconds(static_cast<long long>(a.idle_timeout_s * 1000));
  env_server server(opt);
  server.start();

  std::printf("%s\n", server.base_url().c_str());
  std::fflush(stdout);
  std::string sites = a.sites_url.empty()
                          ? "in-process sites, a tenant per session, seed " + std::to_string(a.seed)
                          : "external sites at " + a.sites_url + ", shared by every session: no isolation, no reset";
  std::fprintf(stderr,
               "kvarena env-server: serving the env API on %s (%s).\n"
               "Check it with: curl %s/v1/health. Ctrl-C to stop.\n",
               server.base_url().c_str(), sites.c_str(), server.base_url().c_str());
  std::fprintf(stderr, "kvarena env-server: fuzzy_match judge: %s\n",
               opt.judge ? opt.judge->name().c_str()
                         : "none (VisualWebArena/WebArena tasks that need one are scored unsupported; "
                           "kvarena's suites use the deterministic judge)");

  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::fprintf(stderr, "kvarena env-server: stopping (%s); closing %zu session(s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM",
               server.session_count());
  server.stop();
  return 0;
}

}  // namespace

void add_env_server_command(CLI::App& app, command_fn& run) {
  auto* sub = app.add_subcommand("env-server", "Serve the env HTTP API (sessions on the local sites) for agents");
  auto a = std::make_shared<env_server_args>();
  sub->add_option("--port,-p", a->port, "TCP port (0 = pick a free one)")->check(CLI::Range(0, 65535));
  sub->add_option("--host", a->host, "Address to bind (0.0.0.0 = every interface; an address other than loopback needs "
                                     "--token)");
  sub->add_option("--token", a->token,
                  "Requests must carry \"Authorization: Bearer TOKEN\" (else 401); default: $KVARENA_ENV_TOKEN, none "
                  "when unset (then only a loopback --host is allowed)");
  sub->add_option("--sites-url", a->sites_url,
                  "Use sites that run elsewhere instead of in-process ones: a `kvarena sites` URL "
                  "(http://127.0.0.1:8080) or name=URL pairs (classifieds=http://h:9980,shopping=http://h:7770); "
                  "sessions then share the sites' state");
  sub->add_option("--site-seed,--seed", a->seed, "Content seed of the in-process sites (the committed suites use 1)");
  sub->add_option("-t,--threads", a->threads, "Request threads (a step blocks one while its page loads)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--max-sessions", a->max_sessions, "Sessions open at once at most")->check(CLI::PositiveNumber);
  sub->add_option("--max-connections", a->max_connections,
                  "Connections open at once at most; one more is answered 503 and closed")
      ->check(CLI::Range(1, 1000000));
  sub->add_option("--idle-timeout", a->idle_timeout_s, "Seconds after which an untouched session is closed (0 = never)")
      ->check(CLI::NonNegativeNumber);
  add_eval_flags(sub, a->eval);
  sub->callback([&run, a] { run = [a] { return run_env_server(*a); }; });
}

}  // namespace kvarena::cli
